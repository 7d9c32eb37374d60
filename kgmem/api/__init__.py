"""The API layer: the Starlette application and its surfaces.

Its names are loaded on first use, so a CLI command that needs only the services (through
``kgmem.api.services``) does not import the web surfaces (MCP, GraphQL, admin) as well.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kgmem.api.app import create_app
    from kgmem.api.jobs import Jobs, users_of
    from kgmem.api.services import Services, build_services

__all__ = ["Jobs", "Services", "build_services", "create_app", "users_of"]

_HOME = {
    "create_app": "kgmem.api.app",
    "Jobs": "kgmem.api.jobs",
    "users_of": "kgmem.api.jobs",
    "Services": "kgmem.api.services",
    "build_services": "kgmem.api.services",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
