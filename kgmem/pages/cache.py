"""What a page follower keeps between refreshes, so a hub entity's page costs what changed,
not every memory about it.

A page shows the newest memories and claims of its entity (``PAGE_MEMORIES``,
``PAGE_FACTS``), but the queries that rank them sort *every* memory about the entity before
their LIMIT: for the user themself (about tens of thousands of memories) a page read took
seconds, after every batch. :class:`PageCache` keeps, per (user, query, entity), a *window*:
the rows of the newest groups (a memory, or a claim) that a full read returned, and the rank
of the last one kept (the *cut*; every group ranked before it is in the window, no later
one is). A committed change reaches the follower as the nodes it touched (:meth:`touch`);
the next read of a window re-reads only the memories among them, and those whose claims
name a touched entity (a renamed object), each through the query with ``?memory`` bound
(an index lookup; a VALUES list of them was evaluated against every memory about the
entity), and puts back the groups that still qualify and rank before the cut. Only when
removals leave fewer groups than a page shows (and there are more beyond the cut), or too
much changed at once, is the window read whole again; a full read keeps half a page more
than it shows, so that is rare. The evidence shown for each memory is kept here too, until
the memory changes.

Every commit to a user's graphs is an outbox entry the follower is given, so a window is
never behind once its entry is drained; a read between a commit and its drain may miss that
commit, as a full read just before the commit would have, and the drain brings it level.
Windows are bounded by the rows they hold (least recently read go first).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from rdflib import Literal, URIRef

from kgmem.errors import GraphNameError
from kgmem.store import NodeKind, QueryRegistry, Row, Term, TripleStore, parse_node

__all__ = ["EvidenceCache", "PageCache", "Ranked"]

#: What a memory's evidence shows on a page: its first quote, where it was said and the
#: wikilink to that note (or None: no quote).
EvidenceCache = MutableMapping[URIRef, tuple[str, str, str] | None]

_ROWS = 60_000  # rows all windows may hold together (~1 KB a row)
_EVIDENCE = 200_000  # memories whose page evidence is kept
_PENDING = 2_000  # touched nodes a window re-reads; more, and it is read whole again

Rank = tuple[int, str]  # newest first (-microseconds), then the group's IRI, as ORDER BY sorts
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True)
class Ranked:
    """A page query ranked ``ORDER BY DESC(?recordedAt) ?<group>`` with ``LIMIT rows``:
    ``group`` is the variable whose value is one item (a memory or a claim; an item may
    take several rows), ``show`` how many items a page shows."""

    name: str
    group: str
    show: int
    rows: int  # the query's LIMIT: a full read that returns this many may have been cut


@dataclass
class _Window:
    groups: dict[URIRef, list[Row]]  # item -> its rows, in rank order
    ranks: dict[URIRef, Rank]
    cut: Rank | None  # rank of the last item a cut full read kept; None: nothing was left out
    pending: set[URIRef] = field(default_factory=set)  # nodes touched since the last read
    counted: int = 0  # its size when last put in the cache

    @property
    def size(self) -> int:
        return sum(len(rows) for rows in self.groups.values())

    def drop_memories(self, memories: set[URIRef]) -> None:
        for item in [i for i, rows in self.groups.items() if _owner(rows[0]) in memories]:
            del self.groups[item], self.ranks[item]

    def naming(self, nodes: set[URIRef]) -> set[URIRef]:
        """The memories of items whose rows name one of ``nodes`` as their object."""
        return {
            _owner(rows[0])
            for rows in self.groups.values()
            if any(row.get("object") in nodes for row in rows)
        }

    def put(self, rows: Iterable[Row], group: str) -> None:
        """Add the items of ``rows`` that rank before the cut (all, when nothing was cut)."""
        for item, found in _grouped(rows, group).items():
            rank = _rank(found[0], group)
            if self.cut is None or rank <= self.cut:
                self.groups[item], self.ranks[item] = found, rank

    def first(self, count: int) -> list[Row]:
        order = sorted(self.groups, key=self.ranks.__getitem__)[:count]
        return [row for item in order for row in self.groups[item]]


class PageCache:
    """Windows of the ranked page queries and the evidence of the memories pages show."""

    def __init__(self, rows: int = _ROWS) -> None:
        self._limit = rows
        self._windows: OrderedDict[tuple[str, str, URIRef], _Window] = OrderedDict()
        self._rows = 0  # held by all windows
        self.evidence: EvidenceCache = {}

    @property
    def rows(self) -> int:
        """The rows all windows hold."""
        return self._rows

    @property
    def windows(self) -> int:
        return len(self._windows)

    def touch(self, uid: str, nodes: Iterable[URIRef]) -> None:
        """``nodes`` of ``uid`` changed in a commit: what the windows and the evidence hold
        of them is read again when next asked for."""
        touched = {URIRef(str(n).split("#", 1)[0]) for n in nodes}
        if len(self.evidence) > _EVIDENCE:
            self.evidence.clear()
        for node in touched:  # a memory written again may quote something else first now
            self.evidence.pop(node, None)
        for key in [k for k in self._windows if k[0] == uid]:
            window = self._windows[key]
            window.pending |= touched
            if len(window.pending) > _PENDING:
                self._drop(key)

    def forget(self, uid: str | None = None) -> None:
        """Let go of every window (of ``uid``, or of every user)."""
        for key in [k for k in self._windows if uid is None or k[0] == uid]:
            self._drop(key)

    def newest(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        ranked: Ranked,
        uid: str,
        entity: URIRef,
        bindings: Mapping[str, Term],
    ) -> tuple[list[Row], bool]:
        """The rows of ``ranked``'s first ``show`` items for ``entity`` (rank order), and
        whether there are more."""
        key = (uid, ranked.name, entity)
        window = self._drop(key)
        if window is not None and window.pending:
            self._catch_up(store, queries, ranked, window, bindings)
        if window is None or (window.cut is not None and len(window.groups) <= ranked.show):
            window = self._read(store, queries, ranked, bindings)
        _trim(window, ranked.show + ranked.show // 2)
        window.counted = window.size
        self._windows[key] = window  # most recently read last
        self._rows += window.counted
        while self._rows > self._limit and len(self._windows) > 1:
            self._drop(next(iter(self._windows)))
        more = window.cut is not None or len(window.groups) > ranked.show
        return window.first(ranked.show), more

    def _read(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        ranked: Ranked,
        bindings: Mapping[str, Term],
    ) -> _Window:
        rows = store.select(queries[ranked.name], bindings)
        groups = _grouped(rows, ranked.group)
        cut: Rank | None = None
        if len(rows) >= ranked.rows and groups:  # cut by the LIMIT: its last item may be partial
            groups.popitem()
            if groups:
                cut = _rank(next(reversed(groups.values()))[0], ranked.group)
        ranks = {item: _rank(found[0], ranked.group) for item, found in groups.items()}
        return _Window(groups, ranks, cut)

    def _catch_up(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        ranked: Ranked,
        window: _Window,
        bindings: Mapping[str, Term],
    ) -> None:
        memories = {n for n in window.pending if _is_memory(n)} | window.naming(window.pending)
        window.pending = set()
        if not memories:
            return
        window.drop_memories(memories)
        query = queries[ranked.name]
        for memory in sorted(memories, key=str):  # a bound memory is an index lookup
            window.put(store.select(query, {**bindings, "memory": memory}), ranked.group)

    def _drop(self, key: tuple[str, str, URIRef]) -> _Window | None:
        window = self._windows.pop(key, None)
        if window is not None:
            self._rows -= window.counted
        return window


def _trim(window: _Window, keep: int) -> None:
    """Keep the first ``keep`` items (a window grows as changes are put back)."""
    if len(window.groups) > keep:
        order = sorted(window.groups, key=window.ranks.__getitem__)
        for item in order[keep:]:
            del window.groups[item], window.ranks[item]
        window.cut = window.ranks[order[keep - 1]]


def _grouped(rows: Sequence[Row] | Iterable[Row], group: str) -> dict[URIRef, list[Row]]:
    found: dict[URIRef, list[Row]] = {}
    for row in rows:
        found.setdefault(URIRef(row[group]), []).append(row)
    return found


def _owner(row: Row) -> URIRef:
    return URIRef(row["memory"])


def _rank(row: Row, group: str) -> Rank:
    recorded = row.get("recordedAt")
    when = recorded.toPython() if isinstance(recorded, Literal) else None
    if not isinstance(when, datetime):
        return (0, str(row[group]))
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (-((when - _EPOCH) // _MICROSECOND), str(row[group]))


def _is_memory(node: URIRef) -> bool:
    try:
        return parse_node(node)[1] is NodeKind.MEMORY
    except GraphNameError:
        return False
