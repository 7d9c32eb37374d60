"""Copy-on-write containers: a small layer of one's own entries over a shared base.

Every user's vocabulary is the catalogue's (tens of thousands of classes, read once per
process) plus the user's schema delta (tens of terms). Copying the catalogue for each user
cost ~22 MB and 0.17 s per user; a layer costs what the delta holds. The base is never
written through a layer: a value read from it for writing (``layer[key]``) is copied into
the layer first, as a ``defaultdict`` would create it; ``get`` and iteration only read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, MutableSet
from collections.abc import Set as AbstractSet
from typing import TypeVar

__all__ = ["LayeredMap", "LayeredSet"]

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


class LayeredMap(MutableMapping[K, V]):
    """``own`` entries over a read-only ``base``.

    ``copy`` makes a writable copy of a base value (None: values are immutable and are
    handed out as they are); ``default`` makes the value of a missing key, as
    ``defaultdict`` does (None: a missing key raises ``KeyError``).
    """

    def __init__(
        self,
        base: Mapping[K, V],
        copy: Callable[[V], V] | None = None,
        default: Callable[[], V] | None = None,
    ) -> None:
        self.base = base
        self.own: dict[K, V] = {}
        self._copy = copy
        self._default = default
        self._added = 0  # own keys the base does not have

    def __getitem__(self, key: K) -> V:
        """The value to change: a base value is copied into the layer first."""
        if key in self.own:
            return self.own[key]
        if key in self.base:
            value = self.base[key]
            if self._copy is None:
                return value
            self.own[key] = value = self._copy(value)
            return value
        if self._default is None:
            raise KeyError(key)
        self[key] = value = self._default()
        return value

    def get(self, key: K, default: T | None = None) -> V | T | None:  # type: ignore[override]
        """The value to read, from the layer or the base (never copied)."""
        if key in self.own:
            return self.own[key]
        return self.base.get(key, default)

    def __setitem__(self, key: K, value: V) -> None:
        if key not in self.own and key not in self.base:
            self._added += 1
        self.own[key] = value

    def __delitem__(self, key: K) -> None:
        if key in self.base:
            raise TypeError(f"{key!r} is in the shared base and cannot be removed")
        del self.own[key]
        self._added -= 1

    def __contains__(self, key: object) -> bool:
        return key in self.own or key in self.base

    def __iter__(self) -> Iterator[K]:
        yield from self.base
        yield from (k for k in self.own if k not in self.base)

    def __len__(self) -> int:
        return len(self.base) + self._added

    def items(self) -> Iterator[tuple[K, V]]:  # type: ignore[override]
        """Every entry, the layer's value where it has one."""
        for key, value in self.base.items():
            yield key, self.own.get(key, value)
        yield from ((k, v) for k, v in self.own.items() if k not in self.base)

    def values(self) -> Iterator[V]:  # type: ignore[override]
        return (value for _, value in self.items())

    def layered_copy(self) -> LayeredMap[K, V]:
        """Another layer over the same base, with copies of this layer's own values."""
        clone: LayeredMap[K, V] = LayeredMap(self.base, self._copy, self._default)
        copy = self._copy or (lambda v: v)
        clone.own = {k: copy(v) for k, v in self.own.items()}
        clone._added = self._added
        return clone


class LayeredSet(MutableSet[T]):
    """Members of its own over a read-only base set."""

    def __init__(self, base: AbstractSet[T], own: Iterable[T] = ()) -> None:
        self.base = base
        self.own: set[T] = {m for m in own if m not in base}

    def __contains__(self, member: object) -> bool:
        return member in self.base or member in self.own

    def __iter__(self) -> Iterator[T]:
        yield from self.base
        yield from self.own

    def __len__(self) -> int:
        return len(self.base) + len(self.own)

    def add(self, member: T) -> None:
        if member not in self.base:
            self.own.add(member)

    def discard(self, member: T) -> None:
        if member in self.base:
            raise TypeError(f"{member!r} is in the shared base and cannot be removed")
        self.own.discard(member)

    def update(self, members: Iterable[T]) -> None:
        for member in members:
            self.add(member)
