"""Author (stage 9): one Markdown page per entity a pass changed.

The commit stage names the changed entities (``{"entities": [...], "memories": [...]}``).
For each that still exists, :func:`~kgmem.pages.content.read_page_input` gathers
what the page may say (only what *active* memories say) and
:func:`~kgmem.pages.render.render_page` turns that into a stable page, byte for byte
the same for the same input. With a model (``AuthorPage``), the model writes the body
instead; its answer must cite only the memory ids it was given, at least once, and add no
front matter or top heading of its own, else the deterministic page is used and the reason
kept in the stage output. A model that cannot be reached
(:class:`~kgmem.errors.ModelCallError`) fails the stage, which the runner retries.

Pages are stored as revisions (:mod:`kgmem.pages.revisions`). The front matter
carries a digest of the page's input, so a rerun over unchanged facts writes nothing (and
asks no model). All pages of a run are written in one transaction with an outbox entry, so
the vault hears of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError
from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.errors import ModelOutputError, StageFailed
from kgmem.pages import (
    FactLine,
    MemoryLine,
    PageDraft,
    PageInput,
    frame_page,
    page_writer,
    prepare_pages,
    read_page_input,
    render_page,
    revision_quads,
    stored_page,
)
from kgmem.pipeline.lm import ModelGroup
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.proposals import PageFact, PageMemory
from kgmem.pipeline.stages import PassContext, PassState, StageName
from kgmem.store import Changeset, Quad
from kgmem.vocab import KGM, RDF

if TYPE_CHECKING:
    import dspy

__all__ = ["AuthorStage", "FactLine", "MemoryLine", "PageInput", "read_page_input", "render_page"]

_STAGE = StageName.AUTHOR.value
_CITATION = re.compile(r"\[\s*(m:[^\]]*)\]")


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


# -- the stage ----------------------------------------------------------------------------


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
    drafts: list[PageDraft] = field(default_factory=list)
    pages: list[URIRef] = field(default_factory=list)
    unchanged: list[URIRef] = field(default_factory=list)
    skipped: list[URIRef] = field(default_factory=list)
    fallbacks: list[dict[str, JsonValue]] = field(default_factory=list)
    reserved: dict[str, URIRef] = field(default_factory=dict)  # paths of new pages

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
        lm: dspy.LM | None = None
        asked = False
        prepared = prepare_pages(
            ctx.store, ctx.queries, self._ports.ontology, ctx.uid, _changed_entities(state)
        )
        run.skipped += prepared.gone
        run.reserved = prepared.reserved
        for page in prepared.inputs:
            entity = page.entity
            stored = stored_page(ctx.store, ctx.queries, ctx.graphs.kg, entity)
            current = stored is not None and stored.digest == page.digest
            if current and stored is not None and stored.writer == "model":
                run.unchanged.append(stored.page)
                continue
            if not asked:  # build the LM once, and only when a page may need writing
                lm, asked = self._ports.models.lm(self._group), True
            if current and stored is not None and lm is None:
                # the page follower rendered this input already; a model would rewrite it
                run.unchanged.append(stored.page)
                continue
            run.drafts.append(self._author(ctx, lm, page, run))
        if run.drafts:
            self._write(ctx, run)
        return state.with_output(StageName.AUTHOR, run.output())

    def _author(
        self, ctx: PassContext, lm: dspy.LM | None, page: PageInput, run: _Run
    ) -> PageDraft:
        if lm is not None:
            body, reason = _model_body(lm, page)
            if body is not None:
                return PageDraft(page, frame_page(page, run.now, body, writer="model"))
            run.fallbacks.append({"entity": str(page.entity), "reason": reason})
        return PageDraft(page, render_page(page, run.now))

    def _write(self, ctx: PassContext, run: _Run) -> None:
        """Every new revision of the run, validated, in one transaction with its outbox."""
        graph, reserved = ctx.graphs.kg, run.reserved
        with ctx.store.transaction() as tx:
            add: list[Quad] = []
            remove: list[Quad] = []
            for draft in run.drafts:
                stored = stored_page(ctx.store, ctx.queries, graph, draft.page.subject)
                if (
                    stored is not None
                    and stored.digest == draft.page.digest
                    and (stored.writer == "model" or page_writer(draft.markdown) == "kgmem")
                ):
                    run.unchanged.append(stored.page)  # written meanwhile by another pass
                    continue
                page, more, less = revision_quads(
                    ctx.store, ctx.queries, ctx.uid, stored, draft, run.now, reserved, ctx.pass_iri
                )
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
