"""memory_search and the graph projection at scale: latency over N active memories.

    .venv/bin/python benchmarks/search_latency.py [--memories 10000,100000] [--queries 300]
                                                   [--entities 200] [--profile FILE]
                                                   [--embeddings DIR]

For each N, an on-disk store (as the server runs it, built by ``build_services``) is filled
with N active memories by bulk-loading their quads, the way ``batch_draft.py`` does (its
entities, ``entity_quads`` and ``ntriples`` are reused, with more varied names). The memories
are spread over two years (2024-2025; the clock stands on 2026-01-05) and read like a real
user's: 55% semantic (facts about people, employers, homes, schools, with a claim, and
preferences with a value claim), 25% episodic (events with ``occurred_at``, about the people
and places present), 10% procedural (how-tos) and 10% reference (account numbers,
passwords, booking codes). Each has a title, often a body of everyday filler sentences
(which puts very common words in many documents), tags, the entities it is about (picked
with a skew, so a few people and places are hubs), and evidence quoting a user message of a
40-memory chat whose assistant replies sit between the quotes (the index's context and
reply fields). About 1% are pinned, 5% cited (with a last use), 9% carry a validity period.

Then the Kuzu projection is rebuilt for the user (``projection.rebuild``; start-up
reconciled an empty store) and the lexical index built (``lexical.rebuild``), both timed.
Then timed:

- ``services.search.memory_search(uid, query, k=8)`` over ``--queries`` varied queries
  (1-8 words): plain (words of stored titles, names, questions), with a time cue ("last
  May", "in March 2025", "3 months ago"), with a filter (kinds, tags or entity), and of
  very common words; after 20 untimed warm-up queries;
- ``projection.neighbourhood(uid, entity, hops=2)`` for ``--entities`` entities: the most
  linked (hubs, the user among them) and entities with 1-3 memories (leaves).

Prints, per size, the build times, p50/p95/p99/max per query category and for the
neighbourhood walks, and the process RSS (peak from ``getrusage``, current from
``/proc/self/status``) after building; then a summary over sizes, and last
``search_p95_ms=<memory_search p95 at the largest size>``. ``--embeddings DIR`` (a static
model, see ``kgmem index distill``; needs kgmem[embeddings]) measures search with the dense
extra: every document gets a vector and each query embeds. ``--profile FILE`` runs the
queries once more at the largest size under cProfile, writes the stats to FILE (read them
with ``python -m pstats FILE``) and prints the top functions.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import random
import resource
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from batch_draft import GRAPHS, RELATIONS, USER, Relation, World, entity_quads, ntriples
from rdflib import Literal, URIRef

from kgmem.api.services import Services, build_services
from kgmem.clock import FixedClock
from kgmem.config import load_settings
from kgmem.memory.changes import fact_quads
from kgmem.memory.entities import self_entity
from kgmem.memory.model import Authority, MemoryKind, MemoryStatus, SourceType, SupportKind
from kgmem.memory.records import ClaimRecord, EvidenceRecord, MemoryRecord, record_quads
from kgmem.memory.source_inputs import MessageIn
from kgmem.memory.source_rdf import message_facts, to_quads
from kgmem.memory.sources import source_iri
from kgmem.store import USER_NODE_BASE, NodeKind, Quad, RdfFormat, UserGraphs, node_iri
from kgmem.vocab import SDO

START = datetime(2024, 1, 1, tzinfo=UTC)
SPAN_DAYS = 730  # the memories' recorded times cover 2024 and 2025
NOW = datetime(2026, 1, 5, 12, tzinfo=UTC)
CHAT = 40  # memories per chat
K = 8
WARM_UP = 20


def _names(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# -- the cast -------------------------------------------------------------------------------

FIRST = _names(
    "Ana Ben Chloe Dana Elif Farid Greta Hugo Ines Jonas Kira Liam Mona Nadia Omar Priya Quinn "
    "Ravi Sara Tomas Uma Viktor Wen Ximena Yuki Zane Amara Bruno Carmen Diego Emma Felix Gita "
    "Hana Ivan Jade Kofi Lena Marco Nia Oscar Paula Rosa Sven Tariq Ulla Vera Wanda Yara Zoe "
    "Aiko Basil Clara Dmitri Esme Finn Gus Helga Imran Juno Kai Lars Maya"
)
LAST = _names(
    "Kowalski Okafor Lindqvist Moreau Tanaka Silva Novak Haddad Schmidt Rossi Dubois Garcia "
    "Nakamura Petrov Jensen Costa Yilmaz Mensah Ibrahim Fischer Laurent Santos Kim Park Chen "
    "Olsen Weber Romero Varga Horvat Kaur Singh Nguyen Tran Ali Hassan Berg Ahmed Reyes Ortiz "
    "Brown Walsh Murphy Byrne Kelly Dunn Price Hughes Baker Ward Cole Grant Fox Lane Marsh Moss "
    "Nash Pike Reid Shaw Stone Webb Young Zimmer"
)
ORG_HEAD = _names(
    "Northwind Bluefin Acme Helios Juniper Quarry Redwood Saffron Tidewater Umbra Vertex Willow "
    "Brightline Copperleaf Driftwood Evergreen Foxglove Granite Harbor Ironbark Kestrel Lumen "
    "Meridian Nimbus Orchard Pinnacle Riverbend Silverline Thistle Upland Vantage Westbrook "
    "Yellowstone Zephyr Alder Beacon Cobalt Dunmore Ember Fennel"
)
ORG_TAIL = _names(
    "Labs Bank Studio Partners Clinic Bakery Foundation Analytics Logistics Media Dental Energy "
    "Insurance Robotics Press Capital Academy Architects Brewing Health Systems Works Kitchen "
    "Collective Ventures"
)
ORG_SUFFIX = ("Group", "International", "Holdings", "Europe", "North", "South", "Digital")
PLACES = _names(
    "Lisbon Porto Madrid Barcelona Paris Lyon Berlin Hamburg Munich Vienna Prague Warsaw Krakow "
    "Budapest Rome Milan Naples Zurich Geneva Amsterdam Rotterdam Brussels Antwerp Copenhagen "
    "Oslo Stockholm Helsinki Dublin Cork London Manchester Edinburgh Glasgow Bristol Leeds "
    "Seville Valencia Bilbao Athens Istanbul Tallinn Riga Vilnius Ljubljana Zagreb Sofia Bucharest "
    "Marseille Nice Toulouse"
)


class Cast(World):
    """``batch_draft.World`` (entity counts and ids) with names that read like names: people
    repeat first and last names (4096 combinations), organisations are two words (with a
    third past the first thousand), places are cities."""

    def name(self, kind: str, k: int) -> str:
        if kind == "person":
            return f"{FIRST[k % len(FIRST)]} {LAST[(k // len(FIRST)) % len(LAST)]}"
        if kind == "org":
            base = f"{ORG_HEAD[k % len(ORG_HEAD)]} {ORG_TAIL[(k // len(ORG_HEAD)) % len(ORG_TAIL)]}"
            combos = len(ORG_HEAD) * len(ORG_TAIL)
            return base if k < combos else f"{base} {ORG_SUFFIX[(k // combos) % len(ORG_SUFFIX)]}"
        return PLACES[k % len(PLACES)]


# -- the words ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Topic:
    tag: str
    weight: float
    things: tuple[str, ...]


def _topic(tag: str, weight: float, things: str) -> Topic:
    return Topic(tag, weight, tuple(t.strip() for t in things.split(",")))


TOPICS = (
    _topic(
        "work",
        0.20,
        "quarterly report, budget review, roadmap, standup, client presentation, performance "
        "review, hiring plan, onboarding doc, sprint retro, product launch, invoice, contract "
        "renewal, offsite, design review, deadline, team lunch, promotion",
    ),
    _topic(
        "food",
        0.12,
        "sourdough, ramen, oat milk, espresso, curry, tapas, sushi, lasagna, farmers market, "
        "dinner reservation, birthday cake, olive oil, pho, vegan burger, kimchi, cheesecake",
    ),
    _topic(
        "travel",
        0.10,
        "flight, train ticket, hotel booking, passport, visa, rental car, airport lounge, "
        "itinerary, hiking trail, museum pass, ferry, travel insurance, boarding pass, hostel, "
        "road trip, city break",
    ),
    _topic(
        "health",
        0.09,
        "dentist appointment, blood test, physio session, allergy, vitamin D, running shoes, "
        "knee injury, yoga class, sleep schedule, flu shot, prescription, eye exam, back pain, "
        "therapy session, step count",
    ),
    _topic(
        "family",
        0.09,
        "birthday party, school play, wedding anniversary, family dinner, parents visit, "
        "christmas gifts, summer camp, piano recital, babysitter, grandma's recipe, family "
        "photo, graduation, bedtime story, soccer practice, holiday plans",
    ),
    _topic(
        "home",
        0.08,
        "kitchen renovation, leaky faucet, rent payment, lease, heating bill, new couch, balcony "
        "plants, washing machine, landlord, moving boxes, smoke detector, bookshelf, garden, "
        "internet router, spare key",
    ),
    _topic(
        "finance",
        0.07,
        "tax return, savings account, mortgage, credit card, pension, index fund, expense "
        "report, insurance premium, electricity bill, budget spreadsheet, salary, refund, bank "
        "transfer, donation, subscription",
    ),
    _topic(
        "hobbies",
        0.07,
        "guitar lessons, book club, chess tournament, pottery class, photography, board games, "
        "marathon training, climbing gym, sketchbook, vinyl records, crossword, podcast, "
        "knitting, birdwatching, film festival",
    ),
    _topic(
        "tech",
        0.06,
        "laptop, phone upgrade, password manager, backup drive, home server, python script, "
        "smart speaker, headphones, mechanical keyboard, cloud storage, vpn, printer, email "
        "filter, software update, monitor",
    ),
    _topic(
        "pets",
        0.04,
        "vet appointment, dog food, cat litter, flea treatment, dog walker, puppy training, pet "
        "insurance, aquarium, leash, grooming, kennel, chew toy, microchip, vaccination",
    ),
    _topic(
        "learning",
        0.04,
        "spanish course, online course, exam, thesis, lecture notes, flashcards, japanese "
        "lessons, statistics textbook, workshop, certificate, study group, essay, coding "
        "bootcamp, language exchange",
    ),
    _topic(
        "events",
        0.04,
        "concert, conference talk, wedding, farewell party, theatre tickets, football match, art "
        "exhibition, meetup, festival, book launch, housewarming, charity run, comedy show, "
        "opera, street fair",
    ),
)
TOPIC_WEIGHTS = [t.weight for t in TOPICS]
ADJECTIVES = _names(
    "great awful expensive cheap quick long fun stressful relaxing boring amazing noisy quiet "
    "crowded late early lovely tricky"
)
MEALS = ("breakfast", "lunch", "dinner", "coffee", "brunch", "drinks")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
FILLER = (
    "It was a really good day overall.",
    "I think it went well, but we need to follow up next week.",
    "Need to remember this for next time.",
    "Not sure yet, will decide later.",
    "This matters a lot to me right now.",
    "We should talk about it again soon.",
    "Honestly it took much longer than planned.",
    "Good to know for the future.",
    "Felt a bit tired after that.",
    "Make sure to mention it when it comes up again.",
    "That was last Friday.",
    "It happened yesterday evening.",
    "Planning to revisit it next month.",
    "Pretty happy with how it turned out.",
    "The whole thing cost more than I expected.",
    "Really need a better plan for this.",
    "Time to sort it out properly.",
    "Everyone seemed happy with it.",
)
REPLIES = (
    "Got it, I'll remember that.",
    "Okay, noted.",
    "Thanks for telling me. Anything else about the {thing}?",
    "Sounds {adj}! How did {person} take it?",
    "Noted. Do you want a reminder before {weekday}?",
    "Good to know. I'll keep the {thing} in mind.",
    "Understood, I've saved it.",
    "That sounds {adj}. Tell me more whenever you like.",
)
LEADS = ("", "", "By the way, ", "Oh and ", "Just so you know, ", "Quick note: ", "FYI ")
TAILS = ("", "", "", " Anyway.", " Just saying.", " Thought you should know.", " More later.")
EPISODES = (
    "Had {meal} with {person} in {place} and talked about the {thing}",
    "Went to the {thing} with {person}; it was {adj}",
    "Met {person} from {org} to discuss the {thing}",
    "Finally sorted out the {thing} in {place}",
    "Spent the afternoon on the {thing} with {person} and {person2}",
    "Called {person} about the {thing}; they suggested {brand}",
    "The {thing} got moved to {weekday} because {person} is away",
    "Bought a new {thing} from {brand} in {place}",
    "{person} and I finished the {thing} on {weekday}, which was {adj}",
    "Missed the {thing} in {place} because the train was late",
)
PREFERENCES = (
    "I prefer {thing} over {thing2}",
    "My favourite place for {thing} is {brand} in {place}",
    "I am allergic to {thing}",
    "I usually do the {thing} on {weekday}s",
    "I want to spend less on the {thing}",
    "I really dislike {adj} {thing}",
    "I am trying to get better at {thing}",
)
HOWTOS = (
    "To handle the {thing}: first check {brand}, then email {person}",
    "How I do the {thing}: book it {num} days ahead, bring the {thing2}, pay by card",
    "Rule: always confirm the {thing} with {person} before {weekday}",
    "Steps for the {thing}: log in to {brand}, download the form, send it to {org}",
)
REFERENCES = (
    "{org} customer number for the {thing} is {code}",
    "Wifi password at the {place} flat is {brand}{num}",
    "{person}'s phone number is +{num} {code}",
    "Booking reference for the {thing}: {code}",
    "Locker code at {org} is {num}",
    "The {brand} serial number of the {thing} is {code}",
)
THIRD = {
    "know": "knows",
    "work with": "works with",
    "work for": "works for",
    "am a member of": "is a member of",
    "studied at": "studied at",
    "live in": "lives in",
}
_SYLLABLES = _names("ka lo mi ren tor vas quin bel dru zen pha sol mar tic nov lu gri ost wey cha")
BRANDS = tuple(
    (a + b + c).capitalize()
    for a in _SYLLABLES
    for b in _SYLLABLES
    for c in ("", *_SYLLABLES[:12])
    if a != b
)  # 4940 made-up names: the vocabulary's long tail


def skewed(rng: random.Random, count: int, power: float = 2.5) -> int:
    """0..count-1, some far more often than others (a few hubs, a long tail); the frequent
    ones are scattered (rank x a prime, mod count) so hubs do not share a name part."""
    rank = min(int(count * rng.random() ** power), count - 1)
    return rank * 7919 % count


def code(rng: random.Random) -> str:
    letters = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(2))
    return f"{letters}-{rng.randrange(1000, 99999)}"


# -- the memories ---------------------------------------------------------------------------


@dataclass
class Plan:
    """What memory ``i`` says and is about, before it becomes quads."""

    i: int
    kind: MemoryKind
    topic: Topic
    quote: str
    message: str
    reply: str
    body: str
    at: datetime
    tags: tuple[str, ...]
    about: list[URIRef] = field(default_factory=list)
    claim: tuple[URIRef, URIRef, URIRef | Literal] | None = None
    occurred: datetime | None = None
    valid_from: datetime | None = None
    pinned: bool = False
    uses: int = 0
    used_at: datetime | None = None
    strength: float = 1.0
    confidence: float = 0.9


def plan(world: Cast, i: int) -> Plan:
    """Memory ``i`` of ``world`` (the same every time)."""
    rng = random.Random(i * 7919 + world.n)
    topic = rng.choices(TOPICS, TOPIC_WEIGHTS)[0]
    at = START + timedelta(days=SPAN_DAYS * i / world.n, minutes=rng.randrange(600))
    people = [skewed(rng, world.counts["person"]) for _ in range(2)]
    place, org = skewed(rng, world.counts["place"], 1.5), skewed(rng, world.counts["org"])
    slots = {
        "person": world.name("person", people[0]),
        "person2": world.name("person", people[1]),
        "place": world.name("place", place),
        "org": world.name("org", org),
        "thing": rng.choice(topic.things),
        "thing2": rng.choice(topic.things),
        "adj": rng.choice(ADJECTIVES),
        "meal": rng.choice(MEALS),
        "weekday": rng.choice(WEEKDAYS),
        "brand": BRANDS[skewed(rng, len(BRANDS), 2.0)],
        "code": code(rng),
        "num": str(rng.randrange(2, 400)),
    }
    entities = {
        "person": world.entity("person", people[0]),
        "person2": world.entity("person", people[1]),
        "place": world.entity("place", place),
        "org": world.entity("org", org),
    }
    roll = i % 20
    me = self_entity(USER)
    claim: tuple[URIRef, URIRef, URIRef | Literal] | None = None
    occurred = valid_from = None
    if roll < 6:  # a relation between two entities
        kind, relation = MemoryKind.SEMANTIC, RELATIONS[rng.randrange(len(RELATIONS))]
        subject = None if rng.random() < 0.3 else people[0]
        obj = skewed(rng, world.counts[relation.range])
        quote = _relation_text(world, subject, relation, obj)
        subject_iri = me if subject is None else world.entity("person", subject)
        claim = (subject_iri, relation.predicate, world.entity(relation.range, obj))
        about = [subject_iri, world.entity(relation.range, obj)]
        tags = {"person": ("people",), "org": ("work",), "place": ("home",)}[relation.range]
        if rng.random() < 0.3:
            valid_from = at - timedelta(days=rng.randrange(1, 400))
    else:
        template = rng.choice(
            PREFERENCES
            if roll < 11
            else EPISODES
            if roll < 16
            else HOWTOS
            if roll < 18
            else REFERENCES
        )
        kind = (
            MemoryKind.SEMANTIC
            if roll < 11
            else MemoryKind.EPISODIC
            if roll < 16
            else MemoryKind.PROCEDURAL
            if roll < 18
            else MemoryKind.REFERENCE
        )
        quote = template.format(**slots)
        quote = quote[0].upper() + quote[1:]
        about = [entities[s] for s in entities if "{" + s + "}" in template]
        if roll < 11:
            about.insert(0, me)
            claim = (me, SDO.knowsAbout, Literal(slots["thing"]))
        elif roll < 16:
            occurred = at - timedelta(days=rng.randrange(4), hours=rng.randrange(12))
            if rng.random() < 0.3:
                about.insert(0, me)
        tags = (topic.tag, "howto") if roll in (16, 17) else (topic.tag,)
    if rng.random() < 0.1:
        tags = (*tags, slots["brand"].lower())  # a project or product tag
    body = " ".join(rng.sample(FILLER, rng.choice((0, 0, 1, 1, 2, 3))))
    lead, tail = rng.choice(LEADS), rng.choice(TAILS)
    reply = rng.choice(REPLIES).format(**slots)
    pinned = rng.random() < (0.05 if kind is MemoryKind.REFERENCE else 0.01)
    uses = int(20 * rng.random() ** 3) + 1 if rng.random() < 0.05 else 0
    used_at = at + (NOW - at) * rng.random() if uses else None
    return Plan(
        i=i,
        kind=kind,
        topic=topic,
        quote=quote,
        message=f"{lead}{quote}.{tail}",
        reply=reply,
        body=body,
        at=at,
        tags=tags,
        about=list(dict.fromkeys(about)),
        claim=claim,
        occurred=occurred,
        valid_from=valid_from,
        pinned=pinned,
        uses=uses,
        used_at=used_at,
        strength=round(rng.uniform(0.6, 1.5), 3),
        confidence=round(rng.uniform(0.6, 0.98), 3),
    )


def _relation_text(world: Cast, subject: int | None, relation: Relation, obj: int) -> str:
    target = world.name(relation.range, obj)
    if subject is None:
        return f"I {relation.verb} {target}"
    return f"{world.name('person', subject)} {THIRD[relation.verb]} {target}"


def memory_quads(p: Plan) -> tuple[list[Quad], list[Quad]]:
    """(kg quads, source quads) of a planned memory: the memory, its claim and evidence, the
    fact its claim asserts, and the user message it quotes with the assistant's reply."""
    chat, turn = f"chat-{p.i // CHAT}", 2 * (p.i % CHAT)
    msg = MessageIn(chat=chat, turn=turn, role="user", text=p.message, timestamp=p.at)
    answered = p.at + timedelta(seconds=30)
    reply = MessageIn(chat=chat, turn=turn + 1, role="assistant", text=p.reply, timestamp=answered)
    source = source_iri(USER, msg)
    sources = to_quads(source, GRAPHS.sources, message_facts(msg, p.at))
    sources += to_quads(source_iri(USER, reply), GRAPHS.sources, message_facts(reply, answered))
    local = f"{p.i:08d}"
    claims: tuple[ClaimRecord, ...] = ()
    if p.claim is not None:
        subject, predicate, value = p.claim
        iri = node_iri(USER, NodeKind.CLAIM, local)
        claims = (
            ClaimRecord(iri, subject, predicate, object=value)
            if isinstance(value, URIRef)
            else ClaimRecord(iri, subject, predicate, value=value),
        )
    start = p.message.index(p.quote)
    evidence = EvidenceRecord(
        node_iri(USER, NodeKind.EVIDENCE, local),
        source,
        SourceType.USER_MESSAGE,
        SupportKind.EXPLICIT,
        Authority.USER,
        quote=p.quote,
        span=(start, start + len(p.quote)),
    )
    record = MemoryRecord(
        iri=node_iri(USER, NodeKind.MEMORY, local),
        kind=p.kind,
        status=MemoryStatus.ACTIVE,
        title=p.quote,
        confidence=p.confidence,
        recorded_at=p.at,
        body=p.body,
        tags=p.tags,
        strength=p.strength,
        pinned=p.pinned,
        about=tuple(p.about),
        claims=claims,
        evidence=(evidence,),
        occurred_at=p.occurred,
        valid_from=p.valid_from,
        last_used_at=p.used_at,
        use_count=p.uses,
    )
    return record_quads(record, GRAPHS.kg) + fact_quads(claims, GRAPHS.kg), sources


def build(services: Services, world: Cast, uid: str = USER) -> tuple[float, Counter[URIRef]]:
    """Bulk-load the entities and N memories as ``uid``'s (the quads the gate would write
    for them); seconds taken, and memories per entity (IRIs of ``USER``'s)."""
    started = time.perf_counter()
    graphs = UserGraphs(uid)

    def load(quads: list[Quad], graph: URIRef) -> None:
        data = ntriples(quads)
        if uid != USER:  # the same memories, another user's: their nodes are under their base
            data = data.replace(
                f"{USER_NODE_BASE}{USER}/".encode(), f"{USER_NODE_BASE}{uid}/".encode()
            )
        services.store.load(data, RdfFormat.NTRIPLES, graph, replace=False, bulk=True)

    load(list(entity_quads(world)), graphs.kg)
    linked: Counter[URIRef] = Counter()
    chunk = 20000
    for first in range(0, world.n, chunk):
        kg: list[Quad] = []
        sources: list[Quad] = []
        for i in range(first, min(first + chunk, world.n)):
            p = plan(world, i)
            linked.update(p.about)
            memory, source = memory_quads(p)
            kg += memory
            sources += source
        load(kg, graphs.kg)
        load(sources, graphs.sources)
    return time.perf_counter() - started, linked


# -- the queries ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    category: str
    text: str
    options: dict[str, Any] = field(default_factory=dict)


CATEGORIES = ("plain", "time cue", "filter", "common words")
TIME_CUES = (
    "last May",
    "in March 2025",
    "in 2024",
    "last week",
    "last month",
    "3 months ago",
    "two weeks ago",
    "in June 2024",
    "yesterday",
    "last summer",
    "2025-05-14",
    "in October",
    "last year",
    "during 2025",
    "in January 2025",
)
COMMON = (
    "really good",
    "next week",
    "need to remember",
    "good time",
    "think it went well",
    "we need to talk about it again next week really",
    "plan",
    "time",
    "really need a better plan",
    "happy",
    "good day overall",
    "took longer than planned",
    "next time",
    "thing cost more",
    "remember this",
)


def _title_words(world: Cast, rng: random.Random) -> str:
    """1-8 consecutive words of a stored memory's title: what a user half remembers."""
    found = plan(world, rng.randrange(world.n)).quote.replace(";", "").replace(":", "").split()
    size = rng.randint(1, min(8, len(found)))
    first = rng.randrange(len(found) - size + 1)
    return " ".join(found[first : first + size])


def queries(world: Cast, count: int) -> list[Query]:
    """``count`` queries, the categories interleaved: 40% plain, 20% each of the rest."""
    rng = random.Random(2026)

    def person() -> str:
        return world.name("person", skewed(rng, world.counts["person"]))

    def place() -> str:
        return world.name("place", skewed(rng, world.counts["place"], 1.5))

    def org() -> str:
        return world.name("org", skewed(rng, world.counts["org"]))

    def thing() -> str:
        return rng.choice(rng.choices(TOPICS, TOPIC_WEIGHTS)[0].things)

    plain: list[Callable[[], str]] = [
        lambda: _title_words(world, rng),
        lambda: _title_words(world, rng),
        lambda: _title_words(world, rng),
        lambda: f"where does {person()} live",
        lambda: f"who works for {org()}",
        lambda: f"what is the wifi password at {place()}",
        lambda: f"when did I meet {person()}",
        lambda: BRANDS[skewed(rng, len(BRANDS), 2.0)],
        person,
        thing,
        lambda: f"{thing()} {place()}",
        lambda: f"how do I do the {thing()}",
        lambda: f"what do I prefer for {thing()}",
        lambda: f"{person()} {thing()} {rng.choice(ADJECTIVES)}",
    ]
    timed: list[Callable[[], str]] = [
        lambda: f"{thing()} {rng.choice(TIME_CUES)}",
        lambda: f"what happened {rng.choice(TIME_CUES)}",
        lambda: f"{rng.choice(MEALS)} with {person()} {rng.choice(TIME_CUES)}",
        lambda: f"trip to {place()} {rng.choice(TIME_CUES)}",
        lambda: f"what did I decide about the {thing()} {rng.choice(TIME_CUES)}",
    ]
    out: list[Query] = []
    for n in range(count):
        slot = n % 5
        if slot in (0, 1):
            out.append(Query("plain", rng.choice(plain)()))
        elif slot == 2:
            out.append(Query("time cue", rng.choice(timed)()))
        elif slot == 3:
            out.append(_filtered(world, rng, thing(), person))
        else:
            out.append(Query("common words", rng.choice(COMMON)))
    return out


def _filtered(world: Cast, rng: random.Random, thing: str, person: Callable[[], str]) -> Query:
    which = rng.randrange(4)
    if which == 0:
        kind = rng.choice(("episodic", "procedural", "reference", "semantic"))
        return Query("filter", thing, {"kinds": [kind]})
    if which == 1:
        topic = rng.choice(TOPICS)
        return Query("filter", rng.choice(topic.things), {"tags": [topic.tag]})
    if which == 2:  # by name: a hub place, or a person (names repeat: several entities)
        name = (
            world.name("place", skewed(rng, world.counts["place"]))
            if rng.random() < 0.5
            else person()
        )
        return Query("filter", thing, {"entity": name})
    iri = world.entity("person", rng.randrange(world.counts["person"]))  # by IRI, any person
    return Query(
        "filter", rng.choice(("meeting", thing, "dinner", "phone number")), {"entity": str(iri)}
    )


# -- timing ---------------------------------------------------------------------------------


def percentiles(samples: Sequence[float]) -> tuple[float, float, float, float]:
    """p50, p95, p99 and max of ``samples`` (ms)."""
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49], cuts[94], cuts[98], max(samples)


def rss_mb() -> tuple[float, float]:
    """(current RSS, peak RSS) of this process in MB."""
    status = Path("/proc/self/status").read_text()
    current = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
    return current / 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass
class Result:
    n: int
    quads: int = 0
    docs: int = 0
    load_s: float = 0.0
    projection_s: float = 0.0
    lexical_s: float = 0.0
    projected: dict[str, int] = field(default_factory=dict)
    search: dict[str, list[float]] = field(default_factory=dict)
    hits: int = 0
    walks: dict[str, list[float]] = field(default_factory=dict)
    neighbours: int = 0
    rss_built: tuple[float, float] = (0.0, 0.0)
    rss_after: tuple[float, float] = (0.0, 0.0)


def run_queries(services: Services, batch: Sequence[Query]) -> tuple[dict[str, list[float]], int]:
    times: dict[str, list[float]] = {c: [] for c in CATEGORIES}
    hits = 0
    for q in batch:
        started = time.perf_counter()
        found = services.search.memory_search(USER, q.text, k=K, **q.options)
        times[q.category].append((time.perf_counter() - started) * 1000)
        hits += len(found)
    return times, hits


def walk_targets(world: Cast, linked: Counter[URIRef], count: int) -> list[tuple[str, URIRef]]:
    """("hub", entity) for the most linked fifth of ``count``, ("leaf", entity) for the rest:
    entities with 1-3 memories about them."""
    hubs = [e for e, _ in linked.most_common(max(count // 5, 1))]
    rng = random.Random(7)
    leaves = sorted((e for e, c in linked.items() if c <= 3), key=str)
    picked = rng.sample(leaves, min(count - len(hubs), len(leaves)))
    return [("hubs", e) for e in hubs] + [("leaves", e) for e in picked]


def run(
    n: int, count: int, walks: int, profile: Path | None, embeddings: Path | None = None
) -> Result:
    result = Result(n)
    world = Cast(n)
    with tempfile.TemporaryDirectory(prefix="kgmem-search-") as tmp:
        env = {"KGMEM_HOME": tmp}
        if embeddings is not None:  # the embedding extra: every document also gets a vector
            env["KGMEM_EMBEDDING_MODEL"] = str(embeddings.resolve())
        settings = load_settings(env=env)
        services = build_services(settings, clock=FixedClock(NOW))
        try:
            result.load_s, linked = build(services, world)
            result.quads = services.store.count()
            print(f"  loaded {n} memories ({result.quads} quads) in {result.load_s:.1f} s")
            started = time.perf_counter()
            result.projected = services.projection.rebuild(USER).counts
            result.projection_s = time.perf_counter() - started
            print(f"  projection.rebuild {result.projection_s:.1f} s: {result.projected}")
            started = time.perf_counter()
            result.docs = services.lexical.rebuild(USER)
            result.lexical_s = time.perf_counter() - started
            print(f"  lexical.rebuild {result.lexical_s:.1f} s: {result.docs} documents")
            gc.collect()  # as the server does once start-up built everything (kgmem.api.app)
            gc.freeze()
            result.rss_built = rss_mb()
            batch = queries(world, count + WARM_UP)
            run_queries(services, batch[:WARM_UP])
            result.search, result.hits = run_queries(services, batch[WARM_UP:])
            result.walks = {"hubs": [], "leaves": []}
            for group, entity in walk_targets(world, linked, walks):
                started = time.perf_counter()
                found = services.projection.neighbourhood(USER, entity, hops=2)
                result.walks[group].append((time.perf_counter() - started) * 1000)
                result.neighbours += len(found)
            result.rss_after = rss_mb()
            if profile is not None:
                profiler = cProfile.Profile()
                profiler.enable()
                run_queries(services, batch[WARM_UP:])
                profiler.disable()
                profiler.dump_stats(profile)
                print_profile(profiler)
        finally:
            services.close()
            gc.unfreeze()
    return result


def print_profile(profiler: cProfile.Profile) -> None:
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(15)
    stats.sort_stats("cumulative").print_stats(25)
    print("  profile of one more pass over the queries:")
    for line in out.getvalue().splitlines():
        if line.strip() and not line.startswith(("   Ordered", "   List reduced")):
            print(f"    {line}")


def report(r: Result) -> None:
    print(f"\nN={r.n}: {r.quads} quads, {r.docs} documents")
    print(f"  {'build':<28} {'seconds':>9}")
    for label, seconds in (
        ("generate + bulk load", r.load_s),
        ("projection.rebuild", r.projection_s),
        ("lexical.rebuild", r.lexical_s),
    ):
        print(f"  {label:<28} {seconds:>9.1f}")
    print(f"  {'latency':<28} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    every = [t for c in CATEGORIES for t in r.search[c]]
    rows = [(f"memory_search k={K} (all)", every)]
    rows += [(f"  {c}", r.search[c]) for c in CATEGORIES]
    walks = [t for ts in r.walks.values() for t in ts]
    rows += [("neighbourhood hops=2 (all)", walks)]
    rows += [(f"  {g}", ts) for g, ts in r.walks.items()]
    for label, samples in rows:
        if len(samples) >= 2:
            p50, p95, p99, top = percentiles(samples)
            print(
                f"  {label:<28} {len(samples):>5} {p50:>8.2f} {p95:>8.2f} {p99:>8.2f} {top:>8.2f}"
            )
    print(
        f"  hits per search {r.hits / max(len(every), 1):.1f}, neighbours per walk "
        f"{r.neighbours / max(len(walks), 1):.1f}"
    )
    print(
        f"  RSS after build: current {r.rss_built[0]:.0f} MB, peak {r.rss_built[1]:.0f} MB; "
        f"after the queries: current {r.rss_after[0]:.0f} MB, peak {r.rss_after[1]:.0f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--entities", type=int, default=200)
    parser.add_argument("--profile", type=Path)
    parser.add_argument(
        "--embeddings", type=Path, help="a static model's directory: search with dense vectors"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.memories.split(",")]
    results = []
    for n in sizes:
        print(f"N={n}", flush=True)
        profile = args.profile if n == sizes[-1] else None
        results.append(run(n, args.queries, args.entities, profile, args.embeddings))
        report(results[-1])
    print(
        f"\n{'memories':>10} {'search p50':>10} {'p95':>7} {'p99':>7} {'walk p50':>9} "
        f"{'p95':>7} {'p99':>7} {'lexical s':>9} {'kuzu s':>7} {'RSS MB':>7}"
    )
    for r in results:
        search = percentiles([t for ts in r.search.values() for t in ts])
        walk = percentiles([t for ts in r.walks.values() for t in ts])
        print(
            f"{r.n:>10} {search[0]:>10.2f} {search[1]:>7.2f} {search[2]:>7.2f} {walk[0]:>9.2f} "
            f"{walk[1]:>7.2f} {walk[2]:>7.2f} {r.lexical_s:>9.1f} {r.projection_s:>7.1f} "
            f"{r.rss_after[0]:>7.0f}"
        )
    last = percentiles([t for ts in results[-1].search.values() for t in ts])
    print(f"search_p95_ms={last[1]:.2f}")


if __name__ == "__main__":
    main()
