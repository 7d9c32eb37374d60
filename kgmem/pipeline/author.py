"""Author (stage 9): one Markdown page per entity a pass changed.

The commit stage names the changed entities (``{"entities": [...], "memories": [...]}``).
For each that still exists, :func:`read_page_input` gathers what the page may say: names,
types, the claims of its *active* memories and the active memories about it (nothing pending,
quarantined, archived, superseded or forgotten ever reaches a page). :func:`render_page`
turns that into a stable page, byte for byte the same for the same input. With a model
(``AuthorPage``), the model writes the body instead; its answer must cite only the memory
ids it was given, at least once, and add no front matter or top heading of its own, else
the deterministic page is used and the reason kept in the stage output. A model that cannot
be reached (:class:`~kgmem.errors.ModelCallError`) fails the stage, which the runner retries.

Pages live in the user's kg graph: ``<page> a kgm:Page ; kgm:pageOf <entity> ; kgm:path
"entities/<slug>.md" ; kgm:currentRevision <page#rN>``, each revision with its Markdown,
content hash and time. The front matter carries a digest of the page's input, so a rerun
over unchanged facts writes nothing (and asks no model); older revisions are kept. All pages
of a run are written in one transaction with an outbox entry, so the vault hears of them.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from hashlib import sha256
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError
from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.errors import GraphNameError, ModelOutputError, StageFailed
from kgmem.memory.ids import NodeKind, parse_node, stable_node
from kgmem.memory.model import MemoryKind, MemoryStatus
from kgmem.ontology import EffectiveOntology
from kgmem.pipeline.lm import ModelGroup
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.proposals import PageFact, PageMemory
from kgmem.pipeline.stages import PassContext, PassState, StageName
from kgmem.store import Changeset, Quad, QueryRegistry, Row, TripleStore, UserGraphs
from kgmem.vocab import KGM, RDF

if TYPE_CHECKING:
    import dspy

__all__ = ["AuthorStage", "FactLine", "MemoryLine", "PageInput", "read_page_input", "render_page"]

RENDERER_VERSION = "1"  # part of the digest: a new page format re-renders every page once
_STAGE = StageName.AUTHOR.value
_EARLIEST = datetime.min.replace(tzinfo=UTC)
_CITATION = re.compile(r"\[\s*(m:[^\]]*)\]")
_DIGEST = re.compile(r'^digest: "(sha256:[0-9a-f]{64})"$', re.M)
_ESCAPE = re.compile(r"([\\`*_\[\]<>])")
_EMPTY = "_Nothing recorded yet._"


# -- what a page says ---------------------------------------------------------------------


@dataclass(frozen=True)
class FactLine:
    """One claim of the entity's active memories, with every memory that asserts it."""

    predicate: str  # the property's label
    value: str  # the object's name, or the literal value
    memories: tuple[str, ...]  # citation ids
    negated: bool = False


@dataclass(frozen=True)
class MemoryLine:
    """One active memory about the entity."""

    memory: str  # citation id, e.g. "m:3f2a9c01"
    kind: MemoryKind
    title: str
    excerpt: str = ""
    steps: tuple[str, ...] = ()
    occurred_at: datetime | None = None

    def __post_init__(self) -> None:
        if self.occurred_at is not None and self.occurred_at.tzinfo is None:
            object.__setattr__(self, "occurred_at", self.occurred_at.replace(tzinfo=UTC))


@dataclass(frozen=True)
class PageInput:
    """Everything an entity page may say; kept in a canonical order, so equal inputs are equal."""

    entity: URIRef
    name: str
    aliases: tuple[str, ...] = ()
    types: tuple[str, ...] = ()  # labels
    facts: tuple[FactLine, ...] = ()
    memories: tuple[MemoryLine, ...] = ()
    citations: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        def memory_order(m: MemoryLine) -> tuple[str, datetime, str, str]:
            return (m.kind.value, m.occurred_at or _EARLIEST, m.title.casefold(), m.memory)

        put = object.__setattr__
        put(self, "aliases", tuple(sorted(set(self.aliases))))
        put(self, "types", tuple(sorted(set(self.types))))
        put(
            self,
            "facts",
            tuple(sorted(self.facts, key=lambda f: (f.predicate, f.value, f.negated))),
        )
        put(self, "memories", tuple(sorted(self.memories, key=memory_order)))
        cited = {m.memory for m in self.memories} | {c for f in self.facts for c in f.memories}
        put(self, "citations", tuple(sorted(cited)))

    @property
    def digest(self) -> str:
        """``sha256:<hex>`` of the renderer version and this input."""
        data = json.dumps([RENDERER_VERSION, asdict(self)], sort_keys=True, default=str)
        return "sha256:" + sha256(data.encode()).hexdigest()


def read_page_input(
    store: TripleStore,
    queries: QueryRegistry,
    uid: str,
    entity: URIRef,
    effective: EffectiveOntology,
) -> PageInput | None:
    """What ``entity``'s page may say, from the user's kg graph; None if it no longer exists
    (or was merged into another entity)."""
    graph = UserGraphs(uid).kg
    about = {"graph": graph, "entity": entity, "status": MemoryStatus.ACTIVE.iri}
    triples = store.select(queries["memory/entity_facts"], {"graph": graph, "entity": entity})
    values: dict[URIRef, list[object]] = defaultdict(list)
    for row in triples:
        values[URIRef(row["p"])].append(row["o"])
    if KGM.Entity not in values[RDF.type] or values[KGM.mergedInto]:
        return None
    memories = store.select(queries["pages/memories_about"], about)
    claims = store.select(queries["pages/entity_claims"], about)
    cite = _citations([URIRef(r["memory"]) for r in (*memories, *claims)])
    types = [t for t in values[RDF.type] if isinstance(t, URIRef) and t not in _RECORD_TYPES]
    return PageInput(
        entity=entity,
        name=_name(values[KGM.name]) or str(entity).rsplit("/", 1)[-1],
        aliases=tuple(str(a) for a in values[KGM.alias]),
        types=tuple(effective.vocabulary.label(t) for t in types),
        facts=_facts(claims, cite, effective),
        memories=_memories(
            memories, _steps(store.select(queries["pages/memory_steps"], about)), cite
        ),
    )


_RECORD_TYPES = frozenset({KGM.Entity, KGM.Shell})


def _name(names: Sequence[object]) -> str | None:
    """The preferred name: untagged or English first, then in order of the text."""
    found = [n for n in names if isinstance(n, Literal)]
    found.sort(key=lambda n: (n.language not in (None, "en"), str(n)))
    return str(found[0]) if found else None


def _citations(memories: Iterable[URIRef]) -> dict[URIRef, str]:
    """``m:`` + the shortest id prefix (8 hex digits or more) unique on this page."""
    locals_ = {m: _local_id(m) for m in memories}
    for length in range(8, 65):
        ids = {m: "m:" + local[:length] for m, local in locals_.items()}
        if len(set(ids.values())) == len(ids):
            return ids
    return {m: "m:" + local for m, local in locals_.items()}


def _local_id(memory: URIRef) -> str:
    try:
        return parse_node(memory)[2]
    except GraphNameError:
        return sha256(str(memory).encode()).hexdigest()


def _facts(
    rows: Iterable[Row], cite: Mapping[URIRef, str], effective: EffectiveOntology
) -> tuple[FactLine, ...]:
    claims: dict[URIRef, Row] = {}
    names: dict[URIRef, list[object]] = defaultdict(list)
    for row in rows:  # an object with two names (languages) gives a row per name
        claims[URIRef(row["claim"])] = row
        names[URIRef(row["claim"])].append(row.get("objectName"))
    found: dict[tuple[str, str, bool], set[str]] = defaultdict(set)
    for claim, row in claims.items():
        value = _name(names[claim]) or row.get("value") or row.get("object")
        negated = isinstance(n := row.get("negated"), Literal) and n.toPython() is True
        label = effective.vocabulary.label(URIRef(row["predicate"]))
        found[(label, str(value), negated)].add(cite[URIRef(row["memory"])])
    return tuple(FactLine(p, v, tuple(sorted(m)), n) for (p, v, n), m in found.items())


def _steps(rows: Iterable[Row]) -> dict[URIRef, tuple[str, ...]]:
    by_memory: dict[URIRef, list[tuple[int, str]]] = defaultdict(list)
    for row in rows:
        position = row["position"]
        number = position.toPython() if isinstance(position, Literal) else 0
        by_memory[URIRef(row["memory"])].append((int(number), str(row["instruction"])))
    return {m: tuple(text for _, text in sorted(steps)) for m, steps in by_memory.items()}


def _memories(
    rows: Iterable[Row], steps: Mapping[URIRef, tuple[str, ...]], cite: Mapping[URIRef, str]
) -> tuple[MemoryLine, ...]:
    lines: dict[URIRef, MemoryLine] = {}
    for row in rows:
        memory = URIRef(row["memory"])
        occurred = row.get("occurredAt")
        when = occurred.toPython() if isinstance(occurred, Literal) else None
        lines[memory] = MemoryLine(
            memory=cite[memory],
            kind=MemoryKind(str(row["kind"]).rsplit("#", 1)[-1]),
            title=str(row["title"]),
            excerpt=str(row.get("excerpt") or ""),
            steps=steps.get(memory, ()),
            occurred_at=when if isinstance(when, datetime) else None,
        )
    return tuple(lines.values())


# -- the deterministic renderer -----------------------------------------------------------


def render_page(page: PageInput, updated: datetime) -> str:
    """The page of ``page`` as Markdown: front matter, title, summary, Facts, How-tos and
    preferences, History; every line cites its memories. Pure: same arguments, same bytes."""
    return _page(page, updated, _body(page))


def _page(page: PageInput, updated: datetime, body: str) -> str:
    """Front matter and top heading (kgmem's, whoever wrote the body) around ``body``."""
    when = updated.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    front = [
        "---",
        f"title: {_yaml(page.name)}",
        f"types: [{', '.join(_yaml(t) for t in page.types)}]",
        f"entity: {_yaml(str(page.entity))}",
        f"aliases: [{', '.join(_yaml(a) for a in page.aliases)}]",
        f"updated: {when}",
        f"digest: {_yaml(page.digest)}",
        "---",
        "",
        f"# {_inline(page.name)}",
        "",
    ]
    return "\n".join(front) + "\n" + body.strip() + "\n"


def _yaml(text: str) -> str:
    """A YAML double-quoted scalar (JSON's escapes are YAML's; YAML 1.1 line breaks too)."""
    quoted = json.dumps(text, ensure_ascii=False)
    return quoted.replace("\u0085", "\\N").replace("\u2028", "\\L").replace("\u2029", "\\P")


def _inline(text: str) -> str:
    """Stored text as one Markdown line that cannot open a link or fake a citation."""
    return _ESCAPE.sub(r"\\\1", " ".join(text.split()))


def _body(page: PageInput) -> str:
    facts = _fact_lines(page)
    howtos = [_howto(m) for m in page.memories if m.kind is MemoryKind.PROCEDURAL]
    events = [_event(m) for m in page.memories if m.kind is MemoryKind.EPISODIC]
    sections = [
        _summary(page, len(facts), len(howtos), len(events)),
        _section("Facts", facts),
        _section("How-tos and preferences", howtos),
        _section("History", events),
    ]
    return "\n\n".join(sections)


def _fact_lines(page: PageInput) -> list[str]:
    lines = []
    for fact in page.facts:
        predicate = ("not " if fact.negated else "") + fact.predicate
        lines.append(f"- **{_inline(predicate)}**: {_inline(fact.value)} {_cite(fact.memories)}")
    claimed = {c for f in page.facts for c in f.memories}
    for m in page.memories:  # semantic and reference memories no fact line already cites
        if m.kind in (MemoryKind.SEMANTIC, MemoryKind.REFERENCE) and m.memory not in claimed:
            lines.append(f"- {_text(m)} {_cite([m.memory])}")
    return lines


def _howto(memory: MemoryLine) -> str:
    steps = [f"   {n}. {_inline(step)}" for n, step in enumerate(memory.steps, 1)]
    return "\n".join([f"- {_text(memory)} {_cite([memory.memory])}", *steps])


def _event(memory: MemoryLine) -> str:
    when = memory.occurred_at.astimezone(UTC).date().isoformat() if memory.occurred_at else "?"
    return f"- {when}: {_text(memory)} {_cite([memory.memory])}"


def _text(memory: MemoryLine) -> str:
    excerpt = " ".join(memory.excerpt.split())
    if excerpt and excerpt != " ".join(memory.title.split()):
        return f"{_inline(memory.title)} ({_inline(excerpt)})"
    return _inline(memory.title)


def _cite(ids: Iterable[str]) -> str:
    return " ".join(f"[{i}]" for i in ids)


def _section(title: str, lines: Sequence[str]) -> str:
    return f"## {title}\n\n" + ("\n".join(lines) if lines else _EMPTY)


def _summary(page: PageInput, facts: int, howtos: int, events: int) -> str:
    what = ", ".join(page.types) or "entity"
    line = f"**{_inline(page.name)}** ({_inline(what)})"
    if page.aliases:
        line += ", also known as " + ", ".join(_inline(a) for a in page.aliases)
    counts = [
        _count(facts, "fact", "facts"),
        _count(howtos, "how-to or preference", "how-tos and preferences"),
        _count(events, "event", "events"),
    ]
    return f"{line}. On record: {', '.join(counts)}."


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


# -- the model ----------------------------------------------------------------------------


def _model_body(lm: dspy.LM, page: PageInput) -> tuple[str | None, str]:
    """The model's body, or None and why it was refused."""
    from kgmem.pipeline.programs import run_signature
    from kgmem.pipeline.signatures import AuthorPage

    facts = [
        PageFact(predicate=("not " if f.negated else "") + f.predicate, value=f.value, memory=m)
        for f in page.facts
        for m in f.memories
    ]
    memories = [
        PageMemory(id=m.memory, kind=m.kind.value, title=m.title, body=_about(m))
        for m in page.memories
    ]
    try:
        answer = run_signature(
            AuthorPage,
            lm,
            _STAGE,
            entity=page.name,
            types=list(page.types),
            facts=facts,
            memories=memories,
        )
    except ModelOutputError as exc:
        return None, str(exc)
    body = str(answer.markdown).strip()
    reason = _refusal(body, set(page.citations))
    return (None, reason) if reason else (body, "")


def _about(memory: MemoryLine) -> str:
    lines = [f"occurred at {memory.occurred_at.isoformat()}"] if memory.occurred_at else []
    lines += [memory.excerpt] if memory.excerpt else []
    lines += [f"{n}. {step}" for n, step in enumerate(memory.steps, 1)]
    return "\n".join(lines)


def _refusal(body: str, allowed: set[str]) -> str:
    """Why a model page is refused ("" if it is not)."""
    if not body:
        return "model page refused: it is empty"
    if body.startswith(("---", "# ")):
        return "model page refused: it adds its own front matter or top-level heading"
    cited = [c for group in _CITATION.findall(body) for c in re.split(r"[\s,;]+", group) if c]
    unknown = sorted({c for c in cited if c not in allowed})
    if unknown:
        return f"model page refused: it cites unknown memory id(s) {', '.join(unknown)}"
    if not cited:
        return "model page refused: it cites no memory"
    return ""


# -- storage ------------------------------------------------------------------------------


def _page_iri(uid: str, entity: URIRef) -> URIRef:
    """The stable page node of ``entity``."""
    return stable_node(uid, NodeKind.PAGE, str(entity))


@dataclass(frozen=True)
class _Stored:
    page: URIRef
    path: str
    title: str | None
    markdown: str | None
    latest: int  # the highest revision number stored

    @property
    def digest(self) -> str | None:
        front = (self.markdown or "").split("\n---\n", 1)[0]
        found = _DIGEST.search(front)
        return found.group(1) if found else None


def _stored(
    store: TripleStore, queries: QueryRegistry, graph: URIRef, entity: URIRef
) -> _Stored | None:
    rows = store.select(queries["pages/entity_page"], {"graph": graph, "entity": entity})
    if not rows:
        return None
    row, page = rows[0], URIRef(rows[0]["page"])
    revisions = store.select(queries["pages/revisions"], {"graph": graph, "page": page})
    numbers = [n.toPython() for r in revisions if isinstance(n := r["number"], Literal)]
    title, markdown = row.get("title"), row.get("markdown")
    return _Stored(
        page,
        str(row["path"]),
        None if title is None else str(title),
        None if markdown is None else str(markdown),
        max((n for n in numbers if isinstance(n, int)), default=0),
    )


def _slug(name: str) -> str:
    """A file name from an entity name: ``"Café Müller & Co."`` → ``café-müller-co``."""
    text = unicodedata.normalize("NFKC", name).casefold()
    return re.sub(r"[\W_]+", "-", text).strip("-")[:80].strip("-") or "entity"


def _free_path(
    store: TripleStore,
    queries: QueryRegistry,
    graph: URIRef,
    page: URIRef,
    name: str,
    reserved: set[str],
) -> str:
    """``entities/<slug>.md``, or ``<slug>-2`` and so on when another page has it."""
    slug, n = _slug(name), 1
    while True:
        path = f"entities/{slug}.md" if n == 1 else f"entities/{slug}-{n}.md"
        rows = store.select(queries["pages/page_at_path"], {"graph": graph, "path": Literal(path)})
        if path not in reserved and all(URIRef(r["page"]) == page for r in rows):
            reserved.add(path)
            return path
        n += 1


@dataclass(frozen=True)
class _Draft:
    page: PageInput
    markdown: str


def _revision_quads(
    ctx: PassContext, stored: _Stored | None, draft: _Draft, now: datetime, reserved: set[str]
) -> tuple[URIRef, list[Quad], list[Quad]]:
    """The page node (new or existing) and the quads that give it ``draft`` as a new revision."""
    graph, entity, name = ctx.graphs.kg, draft.page.entity, draft.page.name
    page = stored.page if stored else _page_iri(ctx.uid, entity)
    number = (stored.latest if stored else 0) + 1
    revision = URIRef(f"{page}#r{number}")
    content = "sha256:" + sha256(draft.markdown.encode()).hexdigest()
    add = [
        Quad(revision, RDF.type, KGM.PageRevision, graph),
        Quad(revision, KGM.revisionOf, page, graph),
        Quad(revision, KGM.revision, Literal(number, datatype=XSD.integer), graph),
        Quad(revision, KGM.markdown, Literal(draft.markdown), graph),
        Quad(revision, KGM.contentHash, Literal(content), graph),
        Quad(revision, KGM.createdAt, Literal(now, datatype=XSD.dateTime), graph),
        Quad(revision, KGM.inPass, ctx.pass_iri, graph),
        Quad(page, KGM.currentRevision, revision, graph),
    ]
    remove = list(ctx.store.quads(graph, page, KGM.currentRevision))
    if stored is None:
        path = _free_path(ctx.store, ctx.queries, graph, page, name, reserved)
        add += [
            Quad(page, RDF.type, KGM.Page, graph),
            Quad(page, KGM.pageOf, entity, graph),
            Quad(page, KGM.path, Literal(path), graph),
        ]
    if stored is None or stored.title != name:
        remove += list(ctx.store.quads(graph, page, KGM.title))
        add.append(Quad(page, KGM.title, Literal(name), graph))
    return page, add, remove


def _outbox(ctx: PassContext, changes: Changeset, now: datetime) -> Changeset:
    """The author stage's own outbox entry for ``changes`` (the commit's entry is the
    commit's): what the vault and the index must refresh. A rerun folds into it."""
    ops, entry = ctx.graphs.ops, URIRef(f"{ctx.pass_iri}#outbox-{_STAGE}")
    old = list(ctx.store.quads(ops, entry))
    quads = (*changes.add, *changes.remove)
    nodes = {q.subject for q in quads if isinstance(q.subject, URIRef)}
    graphs = {q.graph for q in quads}
    for q in old:
        if q.predicate in (KGM.changedNode, KGM.changedGraph) and isinstance(q.object, URIRef):
            (nodes if q.predicate == KGM.changedNode else graphs).add(q.object)
    counts = {KGM.addedCount: len(changes.add), KGM.removedCount: len(changes.remove)}
    for q in old:
        if q.predicate in counts and isinstance(q.object, Literal):
            counts[q.predicate] += int(q.object.toPython())
    add = [
        Quad(entry, RDF.type, KGM.OutboxEntry, ops),
        Quad(entry, KGM.outboxOf, ctx.pass_iri, ops),
        Quad(entry, KGM.createdAt, Literal(now, datatype=XSD.dateTime), ops),
        *(Quad(entry, p, Literal(n, datatype=XSD.integer), ops) for p, n in counts.items()),
        *(Quad(entry, KGM.changedGraph, g, ops) for g in sorted(graphs)),
        *(Quad(entry, KGM.changedNode, n, ops) for n in sorted(nodes, key=str)),
    ]
    return Changeset.of((*changes.add, *add), (*changes.remove, *old))


# -- the stage ----------------------------------------------------------------------------


class _Committed(BaseModel):
    """What the commit stage hands on (other keys are the commit stage's own business)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    entities: tuple[str, ...] = ()
    memories: tuple[str, ...] = ()


def _changed_entities(state: PassState) -> list[URIRef]:
    raw = state.output(StageName.COMMIT)
    if not raw:
        return []
    try:
        committed = _Committed.model_validate(raw)
    except ValidationError as exc:
        reason = f"the commit output is not {{entities, memories}}: {exc.errors()[0]['msg']}"
        raise StageFailed(_STAGE, reason) from exc
    return sorted({URIRef(e) for e in committed.entities})


@dataclass
class _Run:
    """What one run found and wrote (the stage output), as of ``now``."""

    now: datetime
    drafts: list[_Draft] = field(default_factory=list)
    pages: list[URIRef] = field(default_factory=list)
    unchanged: list[URIRef] = field(default_factory=list)
    skipped: list[URIRef] = field(default_factory=list)
    fallbacks: list[dict[str, JsonValue]] = field(default_factory=list)

    def output(self) -> JsonValue:
        return {
            "pages": [str(p) for p in self.pages],
            "unchanged": [str(p) for p in self.unchanged],
            "skipped": [str(e) for e in self.skipped],
            "fallbacks": list(self.fallbacks),
        }


class AuthorStage:
    """Stage 9: pages for the entities the commit changed (see the module docstring).

    ``group`` is the model group that writes pages: ``primary`` (see :mod:`kgmem.pipeline.lm`);
    without a model there, every page is rendered deterministically.
    """

    def __init__(self, ports: PassPorts, group: ModelGroup = ModelGroup.PRIMARY) -> None:
        self._ports, self._group = ports, group

    @property
    def name(self) -> StageName:
        return StageName.AUTHOR

    def run(self, ctx: PassContext, state: PassState) -> PassState:
        run = _Run(ctx.clock.now())
        effective = self._ports.ontology.effective(ctx.uid)
        lm: dspy.LM | None = None
        asked = False
        for entity in _changed_entities(state):
            page = read_page_input(ctx.store, ctx.queries, ctx.uid, entity, effective)
            if page is None:
                run.skipped.append(entity)
                continue
            stored = _stored(ctx.store, ctx.queries, ctx.graphs.kg, entity)
            if stored is not None and stored.digest == page.digest:
                run.unchanged.append(stored.page)
                continue
            if not asked:  # build the LM once, and only when a page needs writing
                lm, asked = self._ports.models.lm(self._group), True
            run.drafts.append(self._author(ctx, lm, page, run))
        if run.drafts:
            self._write(ctx, run)
        return state.with_output(StageName.AUTHOR, run.output())

    def _author(self, ctx: PassContext, lm: dspy.LM | None, page: PageInput, run: _Run) -> _Draft:
        if lm is not None:
            body, reason = _model_body(lm, page)
            if body is not None:
                return _Draft(page, _page(page, run.now, body))
            run.fallbacks.append({"entity": str(page.entity), "reason": reason})
        return _Draft(page, render_page(page, run.now))

    def _write(self, ctx: PassContext, run: _Run) -> None:
        """Every new revision of the run, validated, in one transaction with its outbox."""
        graph, reserved = ctx.graphs.kg, set[str]()
        with ctx.store.transaction() as tx:
            add: list[Quad] = []
            remove: list[Quad] = []
            for draft in run.drafts:
                stored = _stored(ctx.store, ctx.queries, graph, draft.page.entity)
                if stored is not None and stored.digest == draft.page.digest:
                    run.unchanged.append(stored.page)  # written meanwhile by another pass
                    continue
                page, more, less = _revision_quads(ctx, stored, draft, run.now, reserved)
                run.pages.append(page)
                add += more
                remove += less
            if not run.pages:
                return
            changes = _outbox(ctx, Changeset.of(add, remove), run.now)
            report = self._ports.validation.validate(ctx.uid, changes)
            if not report.conforms:
                found = "; ".join(v.message for v in report.violations[:3])
                raise StageFailed(_STAGE, f"the pages do not conform: {found}")
            tx.add(*changes.add)
            tx.remove(*changes.remove)
