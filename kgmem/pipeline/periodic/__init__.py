"""Periodic consolidation: repeated episodes become a routine, references a semantic fact.

Run for one user by :meth:`~kgmem.pipeline.Consolidation.periodic` (the scheduler's
``periodic`` job runs it for every user). Only *active* memories are inputs; pending,
quarantined, archived or expired ones never are. Everything is deterministic (the rules are
in :mod:`~kgmem.pipeline.periodic.procedures` and :mod:`~kgmem.pipeline.periodic.references`)
and every write goes through the write gate (:mod:`~kgmem.pipeline.periodic.gate`): grounded,
pre-passed, validated, recorded in the decisions feed, revertible.

Idempotent: an input already feeding a derived memory is not used again for the same
subject. A new episode of a routine's subject refreshes that routine (MERGE: its evidence and
``derivedFrom`` edge join, the steps become what all runs share) while the routine is active;
a new reference of a fact's entity folds into that fact through the gate's pre-pass. A routine
or fact waiting for review or put aside by a person (archived, rejected, quarantined) is left
as it is, and a derivation whose decision a person reverted is not made again from the same
inputs. A run with nothing new reads a few index rows and writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rdflib import URIRef

from kgmem.errors import GraphNameError
from kgmem.memory.decider import Outcome
from kgmem.memory.entities import self_entity
from kgmem.memory.model import MemoryKind, MemoryStatus
from kgmem.memory.records import MemoryRecord, read_memory
from kgmem.pipeline.periodic.gate import Derivation, DerivationWriter, Written
from kgmem.pipeline.periodic.procedures import (
    MIN_EPISODES,
    MIN_STEPS,
    EpisodeSteps,
    GroupKey,
    common_steps,
    episode_steps,
    order_groups,
    routine_draft,
    trigger_phrase,
)
from kgmem.pipeline.periodic.references import (
    MIN_REFERENCES,
    ClusterClaim,
    FactNames,
    cluster_claims,
    fact_draft,
)
from kgmem.pipeline.ports import PassPorts
from kgmem.store import NodeKind, QueryRegistry, TripleStore, UserGraphs, from_nquads, parse_node
from kgmem.vocab import KGM

__all__ = ["Periodic", "PeriodicReport"]


@dataclass(frozen=True)
class PeriodicReport:
    """What one periodic run for ``uid`` created and updated, and what the gate refused."""

    uid: str
    procedures_created: tuple[URIRef, ...] = ()
    procedures_updated: tuple[URIRef, ...] = ()
    facts_created: tuple[URIRef, ...] = ()
    facts_updated: tuple[URIRef, ...] = ()
    decisions: tuple[URIRef, ...] = ()
    refused: tuple[str, ...] = ()

    @property
    def created(self) -> tuple[URIRef, ...]:
        return self.procedures_created + self.facts_created

    @property
    def updated(self) -> tuple[URIRef, ...]:
        return self.procedures_updated + self.facts_updated

    @property
    def changed(self) -> int:
        """How many memories the run created or updated."""
        return len(self.created) + len(self.updated)


@dataclass(frozen=True)
class _Derived:
    """A memory derived earlier: its kind, status, inputs and what it is about."""

    memory: URIRef
    kind: MemoryKind
    status: MemoryStatus
    inputs: frozenset[URIRef] = frozenset()
    about: frozenset[URIRef] = frozenset()


@dataclass
class _Outcomes:
    """What a run's writes came to, gathered as they happen."""

    created: list[URIRef] = field(default_factory=list)
    updated: list[URIRef] = field(default_factory=list)
    decisions: list[URIRef] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def add(self, what: str, written: Written) -> bool:
        result = written.result
        if result.outcome is Outcome.REFUSED or result.memory is None:
            self.refused.append(f"{what}: " + ("; ".join(result.reasons) or "refused"))
            return False
        (self.created if written.created else self.updated).append(result.memory)
        if result.decision is not None:
            self.decisions.append(result.decision)
        return True


class Periodic:
    """Periodic consolidation for one store; :meth:`run` does one user."""

    def __init__(self, store: TripleStore, queries: QueryRegistry, ports: PassPorts) -> None:
        self._store, self._queries = store, queries
        self._writer = DerivationWriter(store, queries, ports)
        self._seen: dict[URIRef, EpisodeSteps | None] = {}

    def run(self, uid: str) -> PeriodicReport:
        """Promote ``uid``'s repeated episodes and cluster their references, once."""
        reverted = self._reverted(uid)
        routines, facts = _Outcomes(), _Outcomes()
        self._procedures(uid, self._derivations(uid), reverted, routines)
        self._facts(uid, self._derivations(uid), reverted, facts)
        return PeriodicReport(
            uid,
            tuple(routines.created),
            tuple(routines.updated),
            tuple(facts.created),
            tuple(facts.updated),
            tuple(routines.decisions + facts.decisions),
            tuple(routines.refused + facts.refused),
        )

    # -- episodes -> procedure ---------------------------------------------------------

    def _procedures(
        self,
        uid: str,
        derived: Sequence[_Derived],
        reverted: Sequence[frozenset[URIRef]],
        out: _Outcomes,
    ) -> None:
        groups = self._groups(uid, MemoryKind.EPISODIC)
        routines = [d for d in derived if d.kind is MemoryKind.PROCEDURAL]
        used: set[URIRef] = set().union(*(d.inputs for d in routines))
        for key in order_groups(groups):
            members = groups[key]
            owner = _owner(routines, members)
            fresh = sorted(members - used)
            if not fresh or (owner is None and len(fresh) < MIN_EPISODES):
                continue
            if owner is not None and owner.status is not MemoryStatus.ACTIVE:
                continue  # it waits for review, or a person put it aside: leave it be
            views = self._episodes(uid, fresh)
            current = None if owner is None else self._steps(uid, owner.memory)
            if current is not None and not _qualifies(views, current):
                owner, current = None, None  # not that routine: perhaps one of their own
            if not _qualifies(views, current) or _was_reverted({v.iri for v in views}, reverted):
                continue
            views = self._episodes(uid, [v.iri for v in views], reread=True)
            if owner is None:
                written = self._new_routine(uid, key, views)
            else:
                written = self._refreshed_routine(uid, owner, current or (), views)
            if written is not None and out.add(f"routine of {self._label(uid, key)}", written):
                used |= {v.iri for v in views}

    def _new_routine(
        self, uid: str, key: GroupKey, views: Sequence[EpisodeSteps]
    ) -> Written | None:
        steps = common_steps(v.steps for v in views)
        if len(views) < MIN_EPISODES or len(steps) < MIN_STEPS:
            return None
        label = self._label(uid, key)
        phrase = trigger_phrase([v.head for v in views])
        triggers = tuple({t.casefold(): t for t in (phrase, label) if t}.values())
        draft = routine_draft(f"Routine: {phrase or label}", steps, views, len(views), triggers)
        reason = (
            f"periodic consolidation: {len(views)} episodes about {label} share "
            f"{len(steps)} steps in order; promoted to a routine"
        )
        inputs = tuple(v.iri for v in views)
        return self._writer.write(uid, draft, Derivation(inputs, reason, (key.entity,)))

    def _refreshed_routine(
        self, uid: str, owner: _Derived, current: Sequence[str], views: Sequence[EpisodeSteps]
    ) -> Written | None:
        steps = common_steps([current, *(v.steps for v in views)])
        if len(steps) < MIN_STEPS:
            return None  # the new episodes do not follow the routine
        seen = len(owner.inputs | {v.iri for v in views})
        draft = routine_draft("routine refresh", steps, views, seen)
        reason = f"periodic consolidation: {len(views)} new episode(s) follow the routine"
        if steps != current:
            reason += f"; its steps are now {len(steps)} (were {len(current)})"
        derivation = Derivation(tuple(v.iri for v in views), reason)
        return self._writer.write(uid, draft, derivation, refresh=owner.memory)

    def _episodes(
        self, uid: str, iris: Iterable[URIRef], *, reread: bool = False
    ) -> list[EpisodeSteps]:
        """The steps of active episodes, oldest first. What an episode lists never changes
        (a merge adds claims and evidence, not text), so it is read once per process and the
        episodes of groups that do not qualify cost nothing on later runs; ``reread`` reads
        them afresh (current evidence and confidence) for a write."""
        iris = list(iris)
        todo = iris if reread else [i for i in iris if i not in self._seen]
        read = {r.iri: episode_steps(r) for r in self._active(uid, todo)}
        self._seen.update(read)
        found = (read.get(i) if reread else self._seen.get(i) for i in iris)
        return sorted((v for v in found if v is not None), key=lambda v: v.order)

    def _steps(self, uid: str, memory: URIRef) -> tuple[str, ...]:
        rows = self._store.select(
            self._queries["pipeline/memory_steps"],
            {"graph": UserGraphs(uid).kg, "memory": memory},
        )
        return tuple(str(r["instruction"]) for r in rows)

    # -- references -> semantic fact ---------------------------------------------------

    def _facts(
        self,
        uid: str,
        derived: Sequence[_Derived],
        reverted: Sequence[frozenset[URIRef]],
        out: _Outcomes,
    ) -> None:
        clusters: dict[URIRef, set[URIRef]] = {}
        for key, members in self._groups(uid, MemoryKind.REFERENCE).items():
            if key.predicate is not None:  # the subject of a claim
                clusters.setdefault(key.entity, set()).update(members)
        about: dict[URIRef, list[_Derived]] = {}
        for d in derived:
            for entity in d.about:
                about.setdefault(entity, []).append(d)
        for entity in sorted(clusters, key=lambda e: (-len(clusters[e]), str(e))):
            members = clusters[entity]
            earlier = [d for d in about.get(entity, ()) if d.inputs & members]
            known: set[URIRef] = set().union(*(d.inputs for d in earlier))
            if len(members) < MIN_REFERENCES or not members - known:
                continue
            if any(d.status is not MemoryStatus.ACTIVE for d in earlier):
                continue  # it waits for review, or a person put it aside: leave it be
            records = self._active(uid, sorted(members))
            claims = cluster_claims(entity, records)
            inputs = {r for c in claims for r in c.references}
            if not inputs - known or _was_reverted(inputs - known, reverted):
                continue
            written = self._fact(uid, entity, claims, [r for r in records if r.iri in inputs])
            if written is not None:
                out.add(f"fact about {self._name(uid, entity) or entity}", written)

    def _fact(
        self,
        uid: str,
        entity: URIRef,
        found: Sequence[ClusterClaim],
        inputs: Sequence[MemoryRecord],
    ) -> Written | None:
        names = FactNames(
            self_entity(uid), lambda e: self._name(uid, e), lambda e: self._aliases(uid, e)
        )
        claims = [c for c in (names.claim(f.claim) for f in found) if c is not None]
        subject = self._name(uid, entity)
        if not claims or subject is None:
            return None
        reason = (
            f"periodic consolidation: {len(inputs)} references about {subject} "
            f"together state {len(claims)} claim(s) about it"
        )
        derivation = Derivation(tuple(r.iri for r in inputs), reason, bindings=names.bindings())
        return self._writer.write(uid, fact_draft(subject, claims, inputs, names), derivation)

    # -- reading the store ---------------------------------------------------------------

    def _active(self, uid: str, iris: Iterable[URIRef]) -> list[MemoryRecord]:
        kg = UserGraphs(uid).kg
        records = (read_memory(self._store, iri, [kg]) for iri in iris)
        return [r for r in records if r is not None and r.status is MemoryStatus.ACTIVE]

    def _groups(self, uid: str, kind: MemoryKind) -> dict[GroupKey, set[URIRef]]:
        """Active memories of ``kind`` by the entities they are about (the user themself
        aside: nearly every first-person memory is about them) and by claim pattern."""
        me = self_entity(uid)
        rows = self._store.select(
            self._queries["pipeline/periodic_inputs"],
            {"graph": UserGraphs(uid).kg, "kind": kind.iri, "status": MemoryStatus.ACTIVE.iri},
        )
        groups: dict[GroupKey, set[URIRef]] = {}
        for row in rows:
            memory, entity, predicate = row["memory"], row["entity"], row.get("predicate")
            if not isinstance(memory, URIRef) or not isinstance(entity, URIRef):
                continue
            if isinstance(predicate, URIRef):
                key = GroupKey(entity, predicate)
            elif entity != me:
                key = GroupKey(entity)
            else:
                continue
            groups.setdefault(key, set()).add(memory)
        return groups

    def _derivations(self, uid: str) -> list[_Derived]:
        """Every memory of ``uid`` derived from others, whatever its status or graph."""
        graphs = UserGraphs(uid)
        found: dict[URIRef, _Derived] = {}
        for graph in (graphs.kg, graphs.quarantine):
            for row in self._store.select(self._queries["pipeline/derivations"], {"graph": graph}):
                memory, source, about = row["memory"], row["input"], row.get("about")
                assert isinstance(memory, URIRef) and isinstance(source, URIRef)
                if not _is_memory(source):  # a draft's link to a source: no derivation here
                    continue
                old = found.get(memory) or _Derived(
                    memory, MemoryKind(_local(row["kind"])), MemoryStatus(_local(row["status"]))
                )
                found[memory] = _Derived(
                    memory,
                    old.kind,
                    old.status,
                    old.inputs | {source},
                    old.about | ({about} if isinstance(about, URIRef) else set()),
                )
        return [found[m] for m in sorted(found)]

    def _reverted(self, uid: str) -> list[frozenset[URIRef]]:
        """The inputs of every derivation whose decision a person reverted."""
        rows = self._store.select(
            self._queries["pipeline/reverted_derivations"], {"graph": UserGraphs(uid).ops}
        )
        return [
            frozenset(
                q.object
                for q in from_nquads(str(row["added"]))
                if q.predicate == KGM.derivedFrom and isinstance(q.object, URIRef)
            )
            for row in rows
        ]

    def _name(self, uid: str, entity: URIRef) -> str | None:
        for quad in self._store.quads(UserGraphs(uid).kg, entity, KGM.name):
            return str(quad.object)
        return uid if entity == self_entity(uid) else None

    def _aliases(self, uid: str, entity: URIRef) -> tuple[str, ...]:
        quads = self._store.quads(UserGraphs(uid).kg, entity, KGM.alias)
        return tuple(sorted(str(q.object) for q in quads))

    def _label(self, uid: str, key: GroupKey) -> str:
        name = self._name(uid, key.entity) or str(key.entity)
        return name if key.predicate is None else f"{name} {_local(key.predicate)}"


def _owner(routines: Sequence[_Derived], members: set[URIRef]) -> _Derived | None:
    """The routine derived earlier from most of ``members``, if any."""
    best = max(routines, key=lambda d: (len(d.inputs & members), str(d.memory)), default=None)
    return best if best is not None and best.inputs & members else None


def _qualifies(views: Sequence[EpisodeSteps], current: Sequence[str] | None) -> bool:
    """Enough episodes for a new routine (``current`` None) sharing enough steps, or new
    episodes that follow the ``current`` routine's steps closely enough."""
    if current is None:
        steps = common_steps(v.steps for v in views)
        return len(views) >= MIN_EPISODES and len(steps) >= MIN_STEPS
    return bool(views) and len(common_steps([current, *(v.steps for v in views)])) >= MIN_STEPS


def _was_reverted(inputs: set[URIRef], reverted: Sequence[frozenset[URIRef]]) -> bool:
    return bool(inputs) and any(inputs <= r for r in reverted)


def _local(term: object) -> str:
    return str(term).rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _is_memory(node: URIRef) -> bool:
    try:
        return parse_node(str(node))[1] is NodeKind.MEMORY
    except GraphNameError:
        return False
