"""The API layer: the Starlette application and its surfaces."""

from kgmem.api.app import create_app
from kgmem.api.services import Services, build_services

__all__ = ["Services", "build_services", "create_app"]
