"""The write gate at scale: time ``WriteGate.draft`` of a 25-draft batch over N active memories.

    .venv/bin/python benchmarks/batch_draft.py [--memories 10000,100000] [--batches 20]
                                                [--profile FILE] [--profile-drain FILE]
                                                [--floor] [--home DIR]

For each N, an on-disk store (as the server runs it, built by ``build_services``) is filled
with N active memories by bulk-loading their quads: each memory has one claim on resolved
entities (``record_quads`` + ``fact_quads``, exactly what the gate writes), one user-message
source it quotes, and the entities it relates (~N/10 people, N/50 organisations, 50 places).
No two memories state the same fact (the gate keeps one memory per fact: a restatement is
discarded or merged). One in ten memories is about the user themself, so the (self,
predicate) claim lists grow with N. With pages on (the default), every entity's page is
then written as the change feed writes it after a commit (``write_pages``: 244 s at 100k; at
1M it takes hours, so a 1M store is built and measured with ``KGMEM_VAULT=off``). No
decisions are generated (the gate never reads them).

Each timed batch is 25 realistic drafts quoting 25 user messages ingested just before (not
timed): 15 new facts (creates; half about "I"), 5 restatements of stored memories (discards)
and 5 restatements with a new claim (merges). Prints a table of p50/p95 per size, with the
median CPU time of the gate's own thread (on a shared or busy machine the wall time also
counts waiting for a core; the CPU time does not), the ratio of the largest to the smallest,
the outcome mix, and last ``batch_draft_p50_ms=<p50 at the largest size>``. ``--profile FILE``
writes cProfile stats of the timed batches at the largest size (read them with
``python -m pstats FILE``); ``--profile-drain FILE`` the same of the change feed's drains
after them (the projection and the index catching up). ``search p50`` is a search for a name
the batch just wrote, right after it: what an agent waits for to read its own write (the
lexical index catches up first; the graph projection follows in the drain, ``drain p50``).
``--floor`` records the storage operations of the last timed batch at each size and replays
them natively on the same store (see ``storage_floor.py``): what the on-disk store alone
costs that batch, under any code. ``KGMEM_VAULT=off`` in the environment measures without
pages following the writes (they are on by default, as the server runs). ``--home DIR``
builds the store there and keeps it (one size): a later run measures it again without the
build (an hour or more at a million), with batches it has not drafted before (``kept.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rdflib import Literal, URIRef

from kgmem.api.services import Services, build_services
from kgmem.config import load_settings
from kgmem.memory.changes import fact_quads
from kgmem.memory.entities import name_key, self_entity, self_quads
from kgmem.memory.model import Authority, MemoryKind, MemoryStatus, SourceType, SupportKind
from kgmem.memory.records import ClaimRecord, EvidenceRecord, MemoryRecord, record_quads
from kgmem.memory.source_inputs import MessageIn
from kgmem.memory.source_rdf import message_facts, to_quads
from kgmem.memory.sources import source_iri
from kgmem.store import NodeKind, Quad, RdfFormat, UserGraphs, node_iri
from kgmem.store.queries import term_to_sparql
from kgmem.vocab import KGM, RDF, SDO

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kept import keep, kept
from storage_floor import Floor, replay
from storage_floor import record as record_storage

USER, ACCOUNT = "alice", "Alice"
GRAPHS = UserGraphs(USER)
BATCH = 25
START = datetime(2024, 1, 1, tzinfo=UTC)
FIRST = ("Dana", "Ravi", "Mona", "Yuki", "Omar", "Lena", "Ivan", "Sara", "Tomas", "Nia")
LAST = ("Kowalski", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Silva", "Novak", "Haddad")


@dataclass(frozen=True)
class Relation:
    predicate: URIRef
    curie: str
    verb: str
    range: str  # "person", "org" or "place"


RELATIONS = (
    Relation(SDO.knows, "schema:knows", "know", "person"),
    Relation(SDO.colleague, "schema:colleague", "work with", "person"),
    Relation(SDO.worksFor, "schema:worksFor", "work for", "org"),
    Relation(SDO.memberOf, "schema:memberOf", "am a member of", "org"),
    Relation(SDO.alumniOf, "schema:alumniOf", "studied at", "org"),
    Relation(SDO.homeLocation, "schema:homeLocation", "live in", "place"),
)
TYPES = {"person": SDO.Person, "org": SDO.Organization, "place": SDO.Place}
CURIES = {"person": "schema:Person", "org": "schema:Organization", "place": "schema:Place"}


class World:
    """Names and ids of the generated entities, and the fact each memory states."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.counts = {"person": max(n // 10, 100), "org": max(n // 50, 20), "place": 50}

    def name(self, kind: str, k: int) -> str:
        if kind == "person":
            return f"{FIRST[k % 10]} {LAST[(k // 10) % 8]} {k}"
        return f"Org {k}" if kind == "org" else f"Town {k}"

    def entity(self, kind: str, k: int) -> URIRef:
        return node_iri(USER, NodeKind.ENTITY, f"{kind}-{k}")

    def fact(self, i: int) -> tuple[int | None, Relation, int]:
        """Memory ``i`` states: subject person (None: the user), relation, object index.

        Each memory states a fact no other memory states, as a store the gate wrote holds
        it (a restatement is discarded or merged into the memory that has it): the user's
        facts go through each relation's objects in turn (past the 50 places, someone else
        the user knows), a person's through the relations with the round ``i // people``."""
        people = self.counts["person"]
        if i % 10 == 0:
            m = i // 10
            relation, q = RELATIONS[m % len(RELATIONS)], m // len(RELATIONS)
            if q >= self.counts[relation.range]:
                return None, RELATIONS[0], people - 1 - q
            return None, relation, q
        subject, rounds = i % people, i // people
        relation = RELATIONS[(subject + rounds) % len(RELATIONS)]
        count = self.counts[relation.range]
        obj = (subject * 7 + 3 + rounds // len(RELATIONS)) % count
        if relation.range == "person" and obj == subject:  # nobody knows themself
            obj = (obj + count // 2) % count
        return subject, relation, obj

    def sentence(self, i: int) -> str:
        subject, relation, obj = self.fact(i)
        who = "I" if subject is None else self.name("person", subject)
        verb = relation.verb if subject is None else _third_person(relation.verb)
        return f"{who} {verb} {self.name(relation.range, obj)}"


def _third_person(verb: str) -> str:
    first, _, rest = verb.partition(" ")
    third = {"am": "is", "live": "lives", "know": "knows", "work": "works", "studied": "studied"}
    return f"{third.get(first, first + 's')} {rest}".strip()


# -- building the store -------------------------------------------------------------------


def entity_quads(world: World) -> Iterator[Quad]:
    yield from self_quads(USER, ACCOUNT)
    kg = GRAPHS.kg
    for kind, count in world.counts.items():
        for k in range(count):
            iri, name = world.entity(kind, k), world.name(kind, k)
            yield Quad(iri, RDF.type, KGM.Entity, kg)
            yield Quad(iri, RDF.type, TYPES[kind], kg)
            yield Quad(iri, KGM.name, Literal(name), kg)
            yield Quad(iri, KGM.nameKey, Literal(name_key(name)), kg)


def memory_quads(world: World, i: int) -> tuple[list[Quad], list[Quad]]:
    """(kg quads, source quads) of memory ``i``."""
    subject, relation, obj = world.fact(i)
    text = world.sentence(i) + "."
    at = START + timedelta(minutes=i)
    msg = MessageIn(chat=f"history-{i // 50}", turn=i % 50, role="user", text=text, timestamp=at)
    source = source_iri(USER, msg)
    sources = to_quads(source, GRAPHS.sources, message_facts(msg, at))
    local = f"{i:08d}"
    claim = ClaimRecord(
        node_iri(USER, NodeKind.CLAIM, local),
        self_entity(USER) if subject is None else world.entity("person", subject),
        relation.predicate,
        world.entity(relation.range, obj),
    )
    evidence = EvidenceRecord(
        node_iri(USER, NodeKind.EVIDENCE, local),
        source,
        SourceType.USER_MESSAGE,
        SupportKind.EXPLICIT,
        Authority.USER,
        quote=text[:-1],
        span=(0, len(text) - 1),
    )
    record = MemoryRecord(
        iri=node_iri(USER, NodeKind.MEMORY, local),
        kind=MemoryKind.SEMANTIC,
        status=MemoryStatus.ACTIVE,
        title=text[:-1],
        confidence=0.9,
        recorded_at=at,
        about=tuple(dict.fromkeys((claim.subject, claim.object or claim.subject))),
        claims=(claim,),
        evidence=(evidence,),
    )
    return record_quads(record, GRAPHS.kg) + fact_quads([claim], GRAPHS.kg), sources


def ntriples(quads: list[Quad]) -> bytes:
    lines = (
        f"{term_to_sparql(q.subject)} {term_to_sparql(q.predicate)} {term_to_sparql(q.object)} ."
        for q in quads
    )
    return "\n".join(lines).encode()


def build(services: Services, world: World) -> float:
    started = time.perf_counter()
    services.store.load(
        ntriples(list(entity_quads(world))), RdfFormat.NTRIPLES, GRAPHS.kg, replace=False, bulk=True
    )
    chunk = 20000
    for start in range(0, world.n, chunk):
        kg: list[Quad] = []
        sources: list[Quad] = []
        for i in range(start, min(start + chunk, world.n)):
            memory, source = memory_quads(world, i)
            kg += memory
            sources += source
        services.store.load(ntriples(kg), RdfFormat.NTRIPLES, GRAPHS.kg, replace=False, bulk=True)
        services.store.load(
            ntriples(sources), RdfFormat.NTRIPLES, GRAPHS.sources, replace=False, bulk=True
        )
    return time.perf_counter() - started


def write_pages(services: Services, world: World, chunk: int = 500) -> tuple[int, float]:
    """Write every entity's page as the change feed's page follower writes it after the
    gate's commits (each chunk's commit drained: the projection, the index and the vault
    follow): a bulk load bypasses the feed, and a store the gate wrote has its pages.
    Returns (pages written, seconds)."""
    started, written = time.perf_counter(), 0
    entities = [self_entity(USER)] + [
        world.entity(kind, k) for kind, count in world.counts.items() for k in range(count)
    ]
    for start in range(0, len(entities), chunk):
        done = services.pages.write(USER, entities[start : start + chunk])
        if done.refused:
            raise AssertionError(f"pages refused: {done.refused}")
        written += len(done.written)
        services.feed.drain(USER)
    return written, time.perf_counter() - started


# -- the drafts ---------------------------------------------------------------------------


def _draft(claims: list[tuple[str, Relation, str]], quotes: list[str], src: str) -> dict[str, Any]:
    entities: dict[str, dict[str, Any]] = {}
    for subject, relation, obj in claims:
        entities[obj] = {"name": obj, "types": [CURIES[relation.range]]}
        if subject != "I":
            entities[subject] = {"name": subject, "types": ["schema:Person"]}
    return {
        "kind": "semantic",
        "title": quotes[0][:200],
        "confidence": 0.9,
        "claims": [{"subject": s, "predicate": r.curie, "object": o} for s, r, o in claims],
        "entities": list(entities.values()),
        "evidence": [{"source": src, "quote": q} for q in quotes],
    }


def batch(world: World, services: Services, b: int) -> list[dict[str, Any]]:
    """Ingest 25 user messages, then return 25 drafts quoting them."""
    plans: list[tuple[str, list[tuple[str, Relation, str]], list[str]]] = []
    for j in range(BATCH):
        plans.append(_plan(world, b, j))
    msgs = [
        MessageIn(chat=f"bench-{world.n}-{b}", turn=j, role="user", text=text)
        for j, (text, _, _) in enumerate(plans)
    ]
    services.sources.ingest_messages(USER, msgs)
    return [
        _draft(claims, quotes, str(source_iri(USER, msg)))
        for msg, (_, claims, quotes) in zip(msgs, plans, strict=True)
    ]


def _known(world: World, i: int) -> tuple[str, Relation, str]:
    subject, relation, obj = world.fact(i)
    who = "I" if subject is None else world.name("person", subject)
    return who, relation, world.name(relation.range, obj)


def _plan(world: World, b: int, j: int) -> tuple[str, list[tuple[str, Relation, str]], list[str]]:
    """(message text, claims, quotes) of draft ``j`` in batch ``b``."""
    stored = (b * 7919 + j * 104729) % world.n  # a stored memory to restate
    if j < 15:  # a new fact: half about the user, some on known entities
        relation = RELATIONS[j % len(RELATIONS)]
        person = world.name("person", (stored + j) % world.counts["person"])
        subject = "I" if j % 2 == 0 else person
        kind = relation.range
        known = world.name(kind, (stored * 3) % world.counts[kind])
        obj = f"New {kind} {b}-{j}" if j % 3 else known
        verb = relation.verb if subject == "I" else _third_person(relation.verb)
        quote = f"{subject} {verb} {obj}"
        return f"By the way, {quote}.", [(subject, relation, obj)], [quote]
    quote = world.sentence(stored)
    if j < 20:  # the same fact again: discard
        return f"As I said, {quote}.", [_known(world, stored)], [quote]
    extra = f"I know New person {b}-{j}"  # the same fact plus a new one: merge
    claims = [_known(world, stored), ("I", RELATIONS[0], f"New person {b}-{j}")]
    return f"{quote}, and {extra}.", claims, [quote, extra]


# -- timing -------------------------------------------------------------------------------


def run(
    n: int,
    batches: int,
    profile: cProfile.Profile | None,
    drain_profile: cProfile.Profile | None = None,
    floor: bool = False,
    home: Path | None = None,
) -> tuple[list[float], list[float], list[float], list[float], Counter[str], Floor | None]:
    """Time ``batches`` batches (after two warm-up ones) over a store of ``n`` memories: built
    in a temporary directory, or kept in ``home`` (built there once; see ``kept.py``)."""
    with contextlib.ExitStack() as stack:
        where = home or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        where.mkdir(parents=True, exist_ok=True)
        world, built = World(n), {"memories": n}
        record = kept(where, built) if home is not None else None  # before a store is made
        vault = {k: v for k, v in os.environ.items() if k == "KGMEM_VAULT"}  # on by default
        settings = load_settings(env={"KGMEM_HOME": str(where), **vault})
        services = build_services(settings)
        stack.callback(gc.unfreeze)
        stack.callback(services.close)
        if record is None:
            seconds = build(services, world)
            print(f"  built {n} memories ({services.store.count()} quads) in {seconds:.1f} s")
            # a bulk load bypasses the change feed: project it as a restart would, so a
            # drain refreshes a projection and an index that hold the N memories
            started = time.perf_counter()
            services.projection.rebuild(USER)
            services.lexical.rebuild(USER)
            print(f"  projection and index rebuilt in {time.perf_counter() - started:.1f} s")
            if services.vault is not None:  # pages follow the writes (KGMEM_VAULT)
                pages, seconds = write_pages(services, world)
                print(f"  {pages} entity pages written in {seconds:.1f} s")
        first = int(record["batches"]) if record is not None else 0
        if home is not None:  # the next run's batches are new ones, even if this one stops
            keep(where, built, batches=first + batches + 2)
        gc.collect()  # as the server does once start-up built everything (kgmem.api.app)
        gc.freeze()
        if drain_profile is not None:  # drain in this thread, where the profiler looks
            services.feed.stop()
        outcomes: Counter[str] = Counter()
        samples, drains, cpus, searches = [], [], [], []
        recorder = record_storage(services.store) if floor else None
        for b in range(first, first + batches + 2):
            timed = b >= first + 2  # two warm-up batches
            drafts = batch(world, services, b)
            written = _plan(world, b, 1)[1][0][2]  # a new entity the batch creates
            services.feed.drain(USER)  # the messages' own drain does not run in the timing
            if profile is not None and timed:
                profile.enable()
            if recorder is not None:
                recorder.on = b == first + batches + 1
            started, cpu = time.perf_counter(), time.thread_time()
            result = services.gate.draft(USER, drafts, account_name=ACCOUNT)
            elapsed = (time.perf_counter() - started) * 1000
            spent = (time.thread_time() - cpu) * 1000
            if profile is not None:
                profile.disable()
            if recorder is not None:
                recorder.on = False
            started = time.perf_counter()  # an agent reads its own write at once
            hits = services.search.memory_search(USER, written)
            searched = (time.perf_counter() - started) * 1000
            if not any(written in h.title for h in hits):
                raise AssertionError(f"batch {b}: a search right after it missed {written}")
            if drain_profile is not None and timed:
                drain_profile.enable()
            started = time.perf_counter()  # the projection and index catch up, apart
            services.feed.drain(USER)
            drained = (time.perf_counter() - started) * 1000
            if drain_profile is not None:
                drain_profile.disable()
            if timed:
                samples.append(elapsed)
                cpus.append(spent)
                drains.append(drained)
                searches.append(searched)
                outcomes.update(i.outcome.value for i in result.items)
        found = replay(recorder) if recorder is not None else None
        return samples, cpus, searches, drains, outcomes, found


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20, method="inclusive")[18]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", default="10000,100000")
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--profile-drain", type=Path)
    parser.add_argument("--floor", action="store_true")
    parser.add_argument(
        "--home", type=Path, help="build here and keep it (one size; reused when built)"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.memories.split(",")]
    if args.home is not None and len(sizes) > 1:
        parser.error("--home keeps one size's store")
    rows = []
    for n in sizes:
        print(f"N={n}")
        last = n == sizes[-1]
        profile = cProfile.Profile() if args.profile and last else None
        drain_profile = cProfile.Profile() if args.profile_drain and last else None
        samples, cpus, searches, drains, outcomes, floor = run(
            n, args.batches, profile, drain_profile, args.floor, args.home
        )
        rows.append(
            (
                n,
                statistics.median(samples),
                p95(samples),
                statistics.median(cpus),
                statistics.median(searches),
                statistics.median(drains),
            )
        )
        print(f"  outcomes over {len(samples)} batches: {dict(sorted(outcomes.items()))}")
        if floor is not None:
            print("  storage floor of the last batch, replayed natively:")
            print("\n".join(floor.lines()))
        if profile is not None:
            profile.dump_stats(args.profile)
        if drain_profile is not None:
            drain_profile.dump_stats(args.profile_drain)
    head = ("p50 ms", "p95 ms", "ms/draft", "cpu p50", "search p50", "drain p50")
    print(f"\n{'memories':>10}  " + "  ".join(f"{h:>9}" for h in head))
    for n, median, high, cpu, search, drain in rows:
        cells = (median, high, median / BATCH, cpu, search, drain)
        print(f"{n:>10}  " + "  ".join(f"{c:>9.1f}" for c in cells))
    print(f"ratio p50 {sizes[-1]} / {sizes[0]}: {rows[-1][1] / rows[0][1]:.2f}x")
    print(f"batch_draft_p50_ms={rows[-1][1]:.1f}")


if __name__ == "__main__":
    main()
