"""Typed forms of ``strawberry.field(description=...)`` and ``strawberry.mutation(...)``.

Called with keyword arguments only, strawberry's decorators are typed ``Any`` and would
make every resolver untyped to mypy; these keep the resolver's own signature checked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import strawberry

__all__ = ["field", "mutation"]

F = TypeVar("F", bound=Callable[..., Any])


def field(description: str) -> Callable[[F], F]:
    """A resolver with a description."""
    return cast(Callable[[F], F], strawberry.field(description=description))


def mutation(description: str) -> Callable[[F], F]:
    """A mutation with a description."""
    return cast(Callable[[F], F], strawberry.mutation(description=description))
