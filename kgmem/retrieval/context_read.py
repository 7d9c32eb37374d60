"""Reading the prompt context's profile and playbook index from one user's graphs.

Every read is a named query of ``queries/retrieval/`` run on the caller's kg graph, or (for
property labels) on a dataset of the catalogue and the caller's schema delta only, so another
user's graphs are never read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime

from rdflib import URIRef

from kgmem.memory.entities import self_entity
from kgmem.retrieval.context_model import PlaybookEntry, ProfileFact
from kgmem.store import (
    Dataset,
    QueryRegistry,
    Row,
    TripleStore,
    UserGraphs,
    flag,
    instant,
    integer,
)
from kgmem.vocab import KGM, RDF, RDFS

__all__ = ["ContextReader", "playbook_order"]

_EPOCH = datetime.min.replace(tzinfo=UTC)
_CATALOGUE = "urn:kgmem:catalogue:"
_WORD_BREAK = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[_\-]+")


def _latest(*times: datetime | None) -> datetime | None:
    return max((t for t in times if t is not None), default=None)


def _text(row: Row, name: str) -> str:
    return str(row[name]) if name in row else ""


def local_words(term: str) -> str:
    """A property with no label, by its local name.

    >>> local_words("https://schema.org/jobTitle")
    'job title'
    """
    local = re.split(r"[#/]", term.rstrip("#/"))[-1]
    return " ".join(_WORD_BREAK.sub(" ", local).lower().split()) or term


def playbook_order(entry: PlaybookEntry) -> tuple[int, float, str]:
    """Most used first, then most recently used (or written), then by id."""
    when = entry.last_used or _EPOCH
    return (-entry.use_count, -(when - _EPOCH).total_seconds(), entry.id)


class ContextReader:
    """The profile facts and playbook entries of one user, read from the store."""

    def __init__(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        files: Callable[[str, str], str] | None = None,
    ) -> None:
        """``files(uid, path)``: a stored page path as its file's absolute path."""
        self._store, self._files = store, files
        self._claims = queries["retrieval/context_self_claims"]
        self._labels = queries["retrieval/context_labels"]
        self._playbooks = queries["retrieval/context_playbooks"]
        self._procedures = queries["retrieval/context_procedures"]

    # -- profile ---------------------------------------------------------------------------

    def own_name(self, uid: str) -> str | None:
        """The name of the user's own entity (the account name it was made with), if any."""
        graph, me = UserGraphs(uid).kg, self_entity(uid)
        names = sorted(str(q.object) for q in self._store.quads(graph, me, KGM.name))
        return names[0] if names else None

    def goes_by(self, uid: str) -> tuple[str, ...]:
        """The other names the user's own entity answers to: a name they introduced
        themselves by, a nickname ("call me Anita"), longest first."""
        graph, me = UserGraphs(uid).kg, self_entity(uid)
        names = {str(q.object) for q in self._store.quads(graph, me, KGM.alias)}
        return tuple(sorted(names, key=lambda n: (-len(n), n)))

    def profile_facts(self, uid: str) -> list[ProfileFact]:
        """What the user's active memories claim about the user's own entity, one fact per
        (property, object, negation), newest first; none while the entity does not exist."""
        graphs, me = UserGraphs(uid), self_entity(uid)
        if next(iter(self._store.quads(graphs.kg, me, RDF.type, KGM.Entity)), None) is None:
            return []
        rows = self._store.select(self._claims, {"graph": graphs.kg, "entity": me})
        if not rows:
            return []
        readable = Dataset(named=(*self._catalogue(), graphs.schema))
        labels: dict[URIRef, str] = {}
        facts: dict[tuple[str, str, bool], ProfileFact] = {}
        for row in rows:
            predicate, obj, value = row["predicate"], row.get("object"), row.get("value")
            if not isinstance(predicate, URIRef) or (obj is None and value is None):
                continue
            if predicate not in labels:
                labels[predicate] = self._label(predicate, graphs.schema, readable)
            if isinstance(obj, URIRef):
                shown = _text(row, "objectName") or local_words(str(obj))
            else:
                shown = str(value if value is not None else obj)
            negated = row.get("negated")
            fact = ProfileFact(
                predicate=str(predicate),
                label=labels[predicate],
                value=shown,
                negated=flag(negated),
                object=str(obj) if isinstance(obj, URIRef) else None,
                memory=str(row["memory"]),
            )
            facts.setdefault((fact.predicate, fact.object or fact.value, fact.negated), fact)
        return list(facts.values())

    def _catalogue(self) -> list[URIRef]:
        return [g for g in self._store.graphs() if str(g).startswith(_CATALOGUE)]

    def _label(self, term: URIRef, schema: URIRef, readable: Dataset) -> str:
        """The user's own label (schema delta) first, then the catalogue's; ``rdfs:label``
        before ``skos:prefLabel``; else words from the local name."""
        rows = self._store.select(self._labels, {"term": term}, dataset=readable)
        ranked = sorted(
            (row["labelGraph"] != schema, row["predicate"] != RDFS.label, str(row["label"]))
            for row in rows
        )
        return ranked[0][2] if ranked else local_words(str(term))

    # -- playbook index --------------------------------------------------------------------

    def playbooks(self, uid: str) -> list[PlaybookEntry]:
        """Every playbook page of the user and every active procedure with no page yet, in
        :func:`playbook_order`."""
        graph = UserGraphs(uid).kg
        pages: dict[str, PlaybookEntry] = {}
        for row in self._store.select(self._playbooks, {"graph": graph}):
            path = str(row["path"])
            if self._files is not None:
                path = self._files(uid, path)
            entry = PlaybookEntry(
                id=str(row["page"]),
                kind="playbook",
                title=_text(row, "title") or path.rsplit("/", 1)[-1],
                description=_text(row, "excerpt"),
                path=path,
                use_count=integer(row.get("useCount")) or 0,
                last_used=instant(row.get("updatedAt")),
            )
            # a stray second value (two paths, two revisions) must not depend on row order
            known = pages.get(entry.id)
            if known is None or _tiebreak(entry) < _tiebreak(known):
                pages[entry.id] = entry
        procedures = [
            PlaybookEntry(
                id=str(row["memory"]),
                kind="procedure",
                title=str(row["title"]),
                description=_text(row, "excerpt"),
                path=None,
                use_count=integer(row.get("useCount")) or 0,
                last_used=_latest(instant(row.get("lastUsedAt")), instant(row["recordedAt"])),
            )
            for row in self._store.select(self._procedures, {"graph": graph})
        ]
        return sorted([*pages.values(), *procedures], key=playbook_order)


def _tiebreak(entry: PlaybookEntry) -> tuple[tuple[int, float, str], str, str, str]:
    return (playbook_order(entry), entry.path or "", entry.title, entry.description)
