"""What a store holds, for ``kgmem status`` and ``/health?detail=1``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgmem.store.base import TripleStore
from kgmem.store.queries import QueryRegistry

__all__ = ["StoreFacts", "collect_facts"]


@dataclass(frozen=True)
class StoreFacts:
    backend: str
    location: str
    size_bytes: int | None
    graphs: tuple[tuple[str, int], ...]

    @property
    def triples(self) -> int:
        return sum(n for _, n in self.graphs)

    def as_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "location": self.location,
            "size_bytes": self.size_bytes,
            "triples": self.triples,
            "graphs": dict(self.graphs),
        }


def collect_facts(store: TripleStore, queries: QueryRegistry) -> StoreFacts:
    rows = store.select(queries["store/graph_counts"])
    graphs = tuple((str(r["graph"]), int(r["triples"])) for r in rows)
    return StoreFacts(type(store).__name__, store.location, store.size_on_disk(), graphs)
