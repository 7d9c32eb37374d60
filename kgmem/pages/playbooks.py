"""Playbook pages: every active procedure as a page of its own, in ``Memory/playbooks/``.

A procedural memory (a how-to the user follows, a routine a consolidation pass found in
episodes) is what an agent most often needs whole: its name, when it applies, its steps in
order, and where each was said. :func:`read_playbook_input` reads that from the store (None
unless the memory is an active procedure), :func:`render_playbook` writes it without a model:
front matter, the description citing the memory, "When to use" (its triggers), "Steps"
(numbered), "About" (links to the pages of the entities it is about) and "Evidence" (each
quote as a footnote naming its source: a note's path, a chat's turn). The page is a
``kgm:Playbook`` of the memory (``kgm:pageOf``), listed by the prompt context's playbook
index with the file's absolute path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from functools import cached_property
from hashlib import sha256
from typing import ClassVar

from rdflib import Literal, URIRef

from kgmem.memory import MemoryKind, MemoryStatus, read_memory
from kgmem.pages.render import inline, wikilink, yaml_scalar
from kgmem.pages.revisions import page_iri, vault_link
from kgmem.store import TripleStore, UserGraphs
from kgmem.vocab import KGM

__all__ = [
    "PLAYBOOK_DIR",
    "EvidenceLine",
    "PlaybookInput",
    "read_playbook_input",
    "render_playbook",
]

PLAYBOOK_DIR = "playbooks"
PLAYBOOK_VERSION = "1"  # part of the digest: a new format re-renders every playbook once
_EMPTY = "_None recorded._"


@dataclass(frozen=True)
class EvidenceLine:
    """One quote a playbook rests on, and where it was said."""

    quote: str
    source: str  # "Memory/notes/deploy.md", "chat c1, turn 3", or the source's id


@dataclass(frozen=True)
class PlaybookInput:
    """Everything a playbook page says; equal inputs are equal, with one digest."""

    memory: URIRef
    name: str
    description: str
    citation: str  # "m:3f2a9c01"
    triggers: tuple[str, ...] = ()
    steps: tuple[str, ...] = ()
    about: tuple[tuple[str, str], ...] = ()  # (entity name, its page's vault link or "")
    evidence: tuple[EvidenceLine, ...] = ()

    folder: ClassVar[str] = PLAYBOOK_DIR
    classes: ClassVar[tuple[URIRef, ...]] = (KGM.Page, KGM.Playbook)

    @property
    def subject(self) -> URIRef:
        """What the page is of: the procedure."""
        return self.memory

    @cached_property  # an input is frozen: its digest, read several times a page, once
    def digest(self) -> str:
        data = json.dumps([PLAYBOOK_VERSION, asdict(self)], sort_keys=True, default=str)
        return "sha256:" + sha256(data.encode()).hexdigest()


def read_playbook_input(
    store: TripleStore, uid: str, memory: URIRef, links: Mapping[str, str] | None = None
) -> PlaybookInput | None:
    """What ``memory``'s playbook says; None unless it is an active procedure. ``links``:
    entity IRI -> vault link of pages written in the same commit (else the stored path)."""
    graphs = UserGraphs(uid)
    record = read_memory(store, memory, [graphs.kg])
    if (
        record is None
        or record.kind is not MemoryKind.PROCEDURAL
        or record.status is not MemoryStatus.ACTIVE
    ):
        return None
    about = []
    for entity in record.about:
        names = sorted(str(q.object) for q in store.quads(graphs.kg, entity, KGM.name))
        link = (links or {}).get(str(entity), "")
        for quad in store.quads(graphs.kg, page_iri(uid, entity), KGM.path) if not link else ():
            link = vault_link(str(quad.object))
        if names:
            about.append((names[0], link))
    evidence = tuple(
        sorted(
            {
                EvidenceLine(e.quote, _source(store, graphs, e.source))
                for e in record.evidence
                if e.quote
            },
            key=lambda e: (e.source, e.quote),
        )
    )
    return PlaybookInput(
        memory=memory,
        name=record.title,
        description=record.excerpt or record.body.split("\n", 1)[0],
        citation="m:" + str(memory).rsplit("/", 1)[-1][:8],
        triggers=tuple(sorted(set(record.triggers))),
        steps=record.steps,
        about=tuple(sorted(set(about))),
        evidence=evidence,
    )


def _source(store: TripleStore, graphs: UserGraphs, source: URIRef) -> str:
    """Where a quote was said, as a person finds it again."""
    for quad in store.quads(graphs.sources, source, KGM.notePath):
        return str(quad.object)
    chat = [str(q.object) for q in store.quads(graphs.sources, source, KGM.chat)]
    turn = [q.object for q in store.quads(graphs.sources, source, KGM.turn)]
    if chat and turn and isinstance(turn[0], Literal):
        return f"chat {chat[0]}, turn {turn[0]}"
    return str(source).rsplit("/", 1)[-1]


def render_playbook(page: PlaybookInput, updated: datetime) -> str:
    """The playbook as Markdown. Pure: same arguments, same bytes."""
    when = updated.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    front = [
        "---",
        f"title: {yaml_scalar(page.name)}",
        "type: playbook",
        f"memory: {yaml_scalar(str(page.memory))}",
        f"updated: {when}",
        f"digest: {yaml_scalar(page.digest)}",
        "writer: kgmem",
        "---",
        "",
        f"# {inline(page.name)}",
        "",
        (inline(page.description) + " " if page.description else "") + f"[{page.citation}]",
    ]
    notes = [f"[^{n}]" for n in range(1, len(page.evidence) + 1)]
    sections = [
        _section("When to use", [f"- {inline(t)}" for t in page.triggers]),
        _section("Steps", [f"{n}. {inline(s)}" for n, s in enumerate(page.steps, 1)]),
        _section(
            "About",
            [f"- {wikilink(link, name) if link else inline(name)}" for name, link in page.about],
        ),
        _section(
            "Evidence",
            [f"- Said in {inline(e.source)} {notes[i]}" for i, e in enumerate(page.evidence)],
        ),
    ]
    footnotes = [
        f'[^{n}]: "{inline(e.quote)}" ({inline(e.source)})' for n, e in enumerate(page.evidence, 1)
    ]
    body = "\n\n".join(sections) + ("\n\n" + "\n".join(footnotes) if footnotes else "")
    return "\n".join(front) + "\n\n" + body + "\n"


def _section(title: str, lines: Sequence[str]) -> str:
    return f"## {title}\n\n" + ("\n".join(lines) if lines else _EMPTY)
