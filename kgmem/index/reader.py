"""Reading the projection's rows from the store, for a whole user or for a few nodes.

Every read is a named query of ``queries/index/``. A query run without its node variable
bound reads the whole user (a rebuild); bound, it reads one node and the edges at it (a
refresh). Both paths build rows with the same code, so a refreshed projection and a
rebuilt one are row for row the same.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from rdflib import Literal, URIRef

from kgmem.index.node_rows import (
    PAGE_CLASSES,
    SOURCE_TYPES,
    Values,
    entity_row,
    fold,
    memory_row,
    page_row,
    source_row,
    text_of,
)
from kgmem.index.rows import (
    TABLES,
    AboutRow,
    EntityRow,
    EvidenceRow,
    MemoryRow,
    PageOfRow,
    PageRow,
    RelatesRow,
    SharesRow,
    SourceRow,
    UserRows,
)
from kgmem.progress import Progress, Steps
from kgmem.store import (
    Bindings,
    Damage,
    Dataset,
    GraphKind,
    QueryRegistry,
    Row,
    TripleStore,
    Unreadable,
    UserGraphs,
    select_keyed,
    users_with,
)
from kgmem.vocab import KGM, RDF, claim_key

__all__ = ["NodeSet", "StoreReader"]

log = logging.getLogger("kgmem.index")

# Namespace attribute lookups are slow in rdflib and these run once per row.
_TYPE, _ENTITY = URIRef(RDF.type), URIRef(KGM.Entity)
_R = TypeVar("_R")


@dataclass(frozen=True)
class NodeSet:
    """Nodes of one user by what they are projected as."""

    entities: frozenset[URIRef] = field(default_factory=frozenset)
    memories: frozenset[URIRef] = field(default_factory=frozenset)
    pages: frozenset[URIRef] = field(default_factory=frozenset)
    sources: frozenset[URIRef] = field(default_factory=frozenset)

    def __or__(self, other: NodeSet) -> NodeSet:
        return NodeSet(
            self.entities | other.entities,
            self.memories | other.memories,
            self.pages | other.pages,
            self.sources | other.sources,
        )

    def __bool__(self) -> bool:
        return bool(self.entities or self.memories or self.pages or self.sources)


def _iri(row: Row, name: str) -> str:
    return str(row[name])


# Queries Oxigraph evaluates with a VALUES block by scanning (measured at 10k memories, 31
# entities: facts 4.7 s / 7.7 s by subject / object against 60 / 40 ms one key at a time,
# page_of by page 164 ms against 3 ms); their keys are bound one query each.
_PER_KEY = frozenset({"facts_at", "page_of"})


class StoreReader:
    """The projection's rows of one user, read from the store with ``queries/index/``."""

    def __init__(self, store: TripleStore, queries: QueryRegistry) -> None:
        self._store, self._queries = store, queries
        self.damage = Damage(log)  # what the reads met that they could not read

    def unreadable(self, uid: str) -> list[Unreadable]:
        """The unreadable values and records of ``uid`` the reads so far met (a rebuild or
        a check reads them all)."""
        return self.damage.under(UserGraphs(uid).node_base)

    def built(
        self, values: dict[URIRef, Values], build: Callable[[URIRef, Values], _R]
    ) -> list[_R]:
        """Each node's row. A value that cannot be read reads as absent and a node whose
        row cannot be built is left out, both logged with the node's IRI: one bad record
        never stops a rebuild, a refresh or start-up (and both sides of a check agree)."""
        out = []
        for iri, v in values.items():
            self.damage.check(iri, v.items())
            try:
                out.append(build(iri, v))
            except Exception as exc:
                self.damage.guard(iri, exc)
        return out

    def users(self) -> set[str]:
        """Every user with a kg, quarantine or sources graph."""
        kinds = (GraphKind.KG, GraphKind.QUARANTINE, GraphKind.SOURCES)
        return set(users_with(self._store.graphs(), *kinds))

    def _select(self, name: str, bindings: Bindings, dataset: Dataset | None = None) -> list[Row]:
        return self._store.select(self._queries[f"index/{name}"], bindings, dataset=dataset)

    def stream(self, name: str, bindings: Bindings) -> Iterator[Row]:
        """The rows of ``index/<name>`` made as they are read (see :mod:`kgmem.index.slices`)."""
        return self._store.stream(self._queries[f"index/{name}"], bindings)

    def stream_text(self, name: str, bindings: Bindings) -> Iterator[tuple[str | None, ...]]:
        return self._store.stream_text(self._queries[f"index/{name}"], bindings)

    def _at(self, name: str, var: str, iris: Iterable[URIRef], fixed: Bindings) -> list[Row]:
        """Rows of ``name`` at the nodes ``iris`` (bound to ``var``): a query per chunk of
        keys, not per key; ordered by node so a node's rows stay together."""
        query = self._queries[f"index/{name}"]
        keys = sorted(set(iris))
        rows = select_keyed(self._store, query, fixed, var, keys, per_key=name in _PER_KEY)
        return sorted(rows, key=lambda r: str(r[var]))

    def _nodes(
        self, name: str, var: str, graph: URIRef, iris: Iterable[URIRef] | None
    ) -> Iterator[Row]:
        if iris is None:
            yield from self._select(name, {"graph": graph})
            return
        yield from self._at(name, var, iris, {"graph": graph})

    # -- node rows ---------------------------------------------------------------------

    def entities(self, uid: str, iris: Iterable[URIRef] | None = None) -> list[EntityRow]:
        values = fold(self._nodes("entities", "entity", UserGraphs(uid).kg, iris), "entity")
        return self.built(values, entity_row)

    def memories(self, uid: str, iris: Iterable[URIRef] | None = None) -> list[MemoryRow]:
        """Memories of the kg graph, then those only the quarantine graph holds."""
        graphs = UserGraphs(uid)
        wanted = None if iris is None else set(iris)
        kg = fold(self._nodes("memories", "memory", graphs.kg, wanted), "memory")
        rows = self.built(kg, partial(memory_row, quarantined=False))
        rest = None if wanted is None else wanted - kg.keys()
        if rest is None or rest:
            held = fold(self._nodes("memories", "memory", graphs.quarantine, rest), "memory")
            held = {iri: v for iri, v in held.items() if iri not in kg}
            rows += self.built(held, partial(memory_row, quarantined=True))
        return rows

    def pages(self, uid: str, iris: Iterable[URIRef] | None = None) -> list[PageRow]:
        values = fold(self._nodes("pages", "page", UserGraphs(uid).kg, iris), "page")
        return self.built(values, page_row)

    def sources(self, uid: str, iris: Iterable[URIRef] | None = None) -> list[SourceRow]:
        values = fold(self._nodes("sources", "source", UserGraphs(uid).sources, iris), "source")
        return self.built(values, source_row)

    # -- edge rows ---------------------------------------------------------------------

    def _edges(
        self, name: str, bound: Mapping[str, Iterable[URIRef]] | None, **fixed: URIRef
    ) -> list[Row]:
        """Rows of edge query ``name``: all of them, or those at any node of ``bound``."""
        if bound is None:
            return self._select(name, fixed)
        rows: list[Row] = []
        for var, iris in bound.items():
            rows += self._at(name, var, iris, fixed)
        return rows

    def about(self, uid: str, at: Mapping[str, Iterable[URIRef]] | None = None) -> set[AboutRow]:
        g = UserGraphs(uid)
        rows = [
            r
            for graph in (g.kg, g.quarantine)
            for r in self._edges("about", at, graph=graph, kg=g.kg)
        ]
        return {AboutRow(_iri(r, "memory"), _iri(r, "entity")) for r in rows}

    def evidence(
        self, uid: str, at: Mapping[str, Iterable[URIRef]] | None = None
    ) -> set[EvidenceRow]:
        g = UserGraphs(uid)
        rows = [
            r
            for graph in (g.kg, g.quarantine)
            for r in self._edges("evidence", at, graph=graph, sources=g.sources)
        ]
        return {EvidenceRow(_iri(r, "memory"), _iri(r, "source")) for r in rows}

    def page_of(self, uid: str, at: Mapping[str, Iterable[URIRef]] | None = None) -> set[PageOfRow]:
        rows = self._edges("page_of", at, graph=UserGraphs(uid).kg)
        return {PageOfRow(_iri(r, "page"), _iri(r, "entity")) for r in rows}

    def relates(self, uid: str, entities: Iterable[URIRef] | None = None) -> set[RelatesRow]:
        """Asserted facts (at ``entities``, or all) and the reverse facts they imply."""
        at = None if entities is None else {"subject": list(entities), "object": list(entities)}
        kg = UserGraphs(uid).kg
        return self._relates(uid, self._edges("facts" if at is None else "facts_at", at, graph=kg))

    def between(self, uid: str, pairs: Iterable[tuple[URIRef, URIRef]]) -> UserRows:
        """The facts (both ways, and those they imply) and shared-memory counts between each
        of ``pairs`` of entities: what a change linking them alters, whatever else is at
        either end. The same rows as index/facts and index/shares_of give for the pair, read
        from the pair's own triples and its facts' claim keys."""
        kg, rows, shares = UserGraphs(uid).kg, list[Row](), set[SharesRow]()
        entity: dict[URIRef, bool] = {}
        for a, b in sorted(set(pairs)):
            for end in (a, b):
                if end not in entity:
                    entity[end] = any(True for _ in self._store.quads(kg, end, _TYPE, _ENTITY))
            if not (entity[a] and entity[b]):
                continue
            for subject, obj in ((a, b), (b, a)):
                for quad in self._store.quads(kg, subject, None, obj):
                    if quad.predicate != _TYPE:
                        rows += self._fact(kg, subject, quad.predicate, obj)
            for row in self._select("shares_pair", {"graph": kg, "entity": a, "other": b}):
                if count := int(str(row["count"])):
                    low, high = sorted((str(a), str(b)))
                    shares.add(SharesRow(low, high, count))
        return UserRows.of(relates=self._relates(uid, rows), shares=shares)

    def _fact(self, kg: URIRef, subject: URIRef, predicate: URIRef, obj: URIRef) -> list[Row]:
        """One fact as index/facts rows: once per active memory asserting it, else once."""
        fact: Row = {"subject": subject, "predicate": predicate, "object": obj}
        key = Literal(claim_key(subject, predicate, obj))
        found = self._select("fact_memories", {"graph": kg, "key": key})
        return [{**fact, "memory": r["memory"]} for r in found] or [fact]

    def asserted(self, uid: str, row: RelatesRow) -> bool:
        """Whether index/facts reads ``row`` (its ``inferred`` aside) from the store: its
        triple is in the kg graph, with ``row.memory`` among the memories asserting it."""
        kg, ends = UserGraphs(uid).kg, (URIRef(row.source), URIRef(row.target))
        if not all(any(True for _ in self._store.quads(kg, e, _TYPE, _ENTITY)) for e in ends):
            return False
        fact = (ends[0], URIRef(row.predicate), ends[1])
        if fact[1] == _TYPE or not any(True for _ in self._store.quads(kg, *fact)):
            return False
        return row.memory in {text_of(r.get("memory")) for r in self._fact(kg, *fact)}

    def _relates(self, uid: str, rows: Iterable[Row]) -> set[RelatesRow]:
        asserted = {
            RelatesRow(
                _iri(r, "subject"),
                _iri(r, "object"),
                _iri(r, "predicate"),
                text_of(r.get("memory")),
                False,
            )
            for r in rows
        }
        inverses = self.inverses(uid)
        inferred = {
            RelatesRow(row.target, row.source, inverse, row.memory, False)
            for row in asserted
            for inverse in inverses.get(row.predicate, ())
        }
        return asserted | {
            RelatesRow(r.source, r.target, r.predicate, r.memory, True) for r in inferred - asserted
        }

    def shares(self, uid: str, entities: Iterable[URIRef] | None = None) -> set[SharesRow]:
        graph = UserGraphs(uid).kg
        if entities is None:
            pairs = [
                (r["entity"], r["other"], r["count"])
                for r in self._select("shares", {"graph": graph})
            ]
        else:
            pairs = [
                (entity, r["other"], r["count"])
                for entity in sorted(set(entities))
                for r in self._select("shares_of", {"graph": graph, "entity": entity})
            ]
        found = set()
        for a, b, count in pairs:
            low, high = sorted((str(a), str(b)))
            found.add(SharesRow(low, high, int(str(count))))
        return found

    def inverses(self, uid: str) -> dict[str, set[str]]:
        """Property → the properties its facts imply in reverse, from the catalogue and the
        user's schema delta (never another user's)."""
        graphs = [g for g in self._store.graphs() if str(g).startswith("urn:kgmem:catalogue:")]
        dataset = Dataset(default=(*graphs, UserGraphs(uid).schema))
        found: dict[str, set[str]] = defaultdict(set)
        for row in self._select("inverses", {}, dataset):
            found[str(row["property"])].add(str(row["inverse"]))
        return found

    # -- whole users and node sets -----------------------------------------------------

    def user(self, uid: str, progress: Progress | None = None) -> UserRows:
        """Every row of ``uid``; ``progress`` hears ``("read Memory", 1, 9)`` and so on as
        each table's read begins."""
        run = Steps(progress, len(TABLES)).run
        return UserRows.of(
            entities=run("read Entity", partial(self.entities, uid)),
            memories=run("read Memory", partial(self.memories, uid)),
            pages=run("read Page", partial(self.pages, uid)),
            sources=run("read Source", partial(self.sources, uid)),
            relates=run("read RELATES", partial(self.relates, uid)),
            about=run("read ABOUT", partial(self.about, uid)),
            evidence=run("read EVIDENCE", partial(self.evidence, uid)),
            page_of=run("read PAGE_OF", partial(self.page_of, uid)),
            shares=run("read SHARES_MEMORY", partial(self.shares, uid)),
        )

    def around(self, uid: str, nodes: NodeSet) -> UserRows:
        """The rows of ``nodes`` that the store still holds, and every edge at any of them."""
        return UserRows.of(
            entities=self.entities(uid, nodes.entities),
            memories=self.memories(uid, nodes.memories),
            pages=self.pages(uid, nodes.pages),
            sources=self.sources(uid, nodes.sources),
            relates=self.relates(uid, nodes.entities),
            about=self.about(uid, {"memory": nodes.memories, "entity": nodes.entities}),
            evidence=self.evidence(uid, {"memory": nodes.memories, "source": nodes.sources}),
            page_of=self.page_of(uid, {"page": nodes.pages, "entity": nodes.entities}),
            shares=self.shares(uid, nodes.entities),
        )

    def classify(self, uid: str, nodes: Iterable[URIRef]) -> NodeSet:
        """What each of ``nodes`` is in the user's graphs, with the memories of the claims
        and evidence among them."""
        g = UserGraphs(uid)
        dataset = Dataset(named=(g.kg, g.quarantine, g.sources))
        kinds: dict[str, set[URIRef]] = defaultdict(set)
        for node in nodes:
            for row in self._select("node_kinds", {"node": node}, dataset):
                kinds[_kind(row, g)].add(node)
                if isinstance(parent := row.get("memory"), URIRef):
                    kinds["memory"].add(parent)
        return NodeSet(
            frozenset(kinds["entity"]),
            frozenset(kinds["memory"]),
            frozenset(kinds["page"]),
            frozenset(kinds["source"]),
        )

    def memory_entities(self, uid: str, memories: Iterable[URIRef]) -> set[URIRef]:
        return set().union(*self.memory_entity_sets(uid, memories).values())

    def memory_entity_sets(self, uid: str, memories: Iterable[URIRef]) -> dict[URIRef, set[URIRef]]:
        """Each memory's entities: what it is about and its claims' subjects and objects."""
        g = UserGraphs(uid)
        return {
            memory: {
                row["entity"]
                for graph in (g.kg, g.quarantine)
                for row in self._select("memory_entities", {"graph": graph, "memory": memory})
                if isinstance(row["entity"], URIRef)
            }
            for memory in sorted(set(memories))
        }


def _kind(row: Row, graphs: UserGraphs) -> str:
    cls, graph = row["class"], row["graph"]
    if graph == graphs.sources:
        return "source" if cls in SOURCE_TYPES else ""
    if cls == KGM.Entity and graph == graphs.kg:
        return "entity"
    if cls == KGM.Memory:
        return "memory"
    return "page" if cls in PAGE_CLASSES and graph == graphs.kg else ""
