"""The API layer: the Starlette application and its surfaces."""

from kgmem.api.app import create_app
from kgmem.api.jobs import Jobs, users_of
from kgmem.api.services import Services, build_services

__all__ = ["Jobs", "Services", "build_services", "create_app", "users_of"]
