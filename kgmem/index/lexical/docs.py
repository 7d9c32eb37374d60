"""What the lexical index indexes: words of a text (tokens, stems, stopwords) and the
documents it builds from store rows (memories, pages, external and short notes), with what
retrieval filters and ranks on."""

from __future__ import annotations

import functools
import re
import sys
import threading
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

import snowballstemmer  # type: ignore[import-untyped]

from kgmem.store import Row, flag, instant, integer, number

__all__ = [
    "FIELD_WEIGHTS",
    "STOPWORDS",
    "LexicalDoc",
    "analyze",
    "camel_words",
    "memory_doc",
    "note_doc",
    "pack",
    "page_doc",
    "revision_key",
    "short_note_doc",
    "stem",
    "words",
]

_STOPWORD_TEXT = """\
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its
itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
s t d ll m re ve
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
# every other field weighs 1; a trigger says what task a procedure is for, as a title does
FIELD_WEIGHTS = {"title": 2, "tag": 2, "entity": 2, "path": 2, "trigger": 2}
_SNOWBALL = snowballstemmer.stemmer("english")
# the stemmer keeps the word it is stemming in itself: two threads stemming at once (a
# search's query and a refresh's documents) broke words, or raised IndexError
_STEMMING = threading.Lock()
# A time the text itself states: relative ("last Friday", "two weeks ago") or absolute ("may"
# is left out: it is far more often a verb).
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTHS = "january|february|march|april|june|july|august|september|october|november|december"
_TIME_MENTION = re.compile(
    rf"\b(yesterday|today|tonight|tomorrow|recently|ago|(last|next|this) (night|morning|week|"
    rf"weekend|month|year|summer|winter|spring|fall|autumn|{_DAYS})|{_DAYS}|{_MONTHS}|"
    r"(19|20)\d\d)\b",
    re.IGNORECASE,
)


def words(text: str) -> list[str]:
    """Lower-cased, accent-free words (letters and digits of any script).

    >>> words("Café-Müller's 2nd_floor")
    ['cafe', 'muller', 's', '2nd', 'floor']
    """
    folded = text.casefold()
    if not folded.isascii():
        decomposed = unicodedata.normalize("NFKD", folded)
        folded = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _WORD.findall(folded)


@functools.lru_cache(maxsize=1 << 17)
def stem(word: str) -> str:
    """The English Snowball (Porter 2) stem of a lower-cased word; cached, as a user's
    vocabulary is small and the stemmer is pure Python.

    >>> [stem(w) for w in ("meetings", "running", "collaborate", "collaboration", "moved")]
    ['meet', 'run', 'collabor', 'collabor', 'move']
    """
    with _STEMMING:
        return str(_SNOWBALL.stemWord(word))


def analyze(text: str) -> list[str]:
    """The index terms of ``text``: its words without stopwords, stemmed."""
    return [stem(w) for w in words(text) if w not in STOPWORDS]


@dataclass(frozen=True, slots=True, weakref_slot=True)
class LexicalDoc:
    """One searchable node with what filters and ranking need. Times are UTC-aware.

    A user holds one per memory, page and note, hundreds of thousands of them: slots, not a
    dict per instance; its fields' texts packed in one string (:func:`pack`), not a tuple of
    pairs (at 100k documents the pairs alone held ~110 MB); and the strings many documents
    share (graphs, kinds, statuses, the entities and chats they are about, tags) interned,
    so each is held once. A saved shard holds it as bytes, made an object while a search
    reads it and kept only among the last read (:mod:`kgmem.index.lexical.held`)."""

    id: str
    kind: str  # "memory" | "page" | "note"
    title: str
    graph: str
    packed: str  # its (field, text) pairs: pack() / fields
    excerpt: str = ""
    path: str | None = None
    memory_kind: str | None = None  # semantic | procedural | episodic | reference
    status: str | None = None  # a memory's status; pages and notes have none
    tags: tuple[str, ...] = ()
    about: tuple[str, ...] = ()  # entity IRIs (a page: the entity it describes)
    confidence: float | None = None
    strength: float | None = None
    pinned: bool = False
    use_count: int = 0
    recorded_at: datetime | None = None  # pages: current revision; notes: timestamp
    last_used_at: datetime | None = None
    occurred_at: datetime | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    chats: tuple[str, ...] = ()  # the chats of the messages it quotes
    names: frozenset[str] = frozenset()  # index terms of the names of what it is about
    states_time: bool = False  # its own text says when ("yesterday", "last May", "2023")
    asks: bool = False  # its own text is a question ("Did you make it?")

    @property
    def fields(self) -> tuple[tuple[str, str], ...]:
        """(field, text) pairs, in order."""
        if not self.packed:
            return ()
        pairs = (item.partition(_NAME_END) for item in self.packed.split(_FIELD_END))
        return tuple((name, text) for name, _, text in pairs)

    @property
    def moment(self) -> datetime | None:
        """When it happened, else (with no validity period) when it was recorded."""
        if self.occurred_at or self.valid_from or self.valid_until:
            return self.occurred_at
        return self.recorded_at

    def overlaps(self, start: datetime | None, end: datetime | None) -> bool:
        """Whether its moment, else its validity period, meets [start, end) (None: open)."""
        at = self.moment
        if at is not None:
            return (start is None or at >= start) and (end is None or at < end)
        return (end is None or self.valid_from is None or self.valid_from < end) and (
            start is None or self.valid_until is None or self.valid_until > start
        )

    def terms(self, weights: Mapping[str, int] = FIELD_WEIGHTS) -> dict[str, int]:
        """Weighted term frequencies over every field (a field of weight 0 is left out)."""
        counts: dict[str, int] = defaultdict(int)
        for name, text in self.fields:
            weight = weights.get(name, 1)
            if not weight:
                continue
            for term in analyze(text):
                counts[term] += weight
        return counts


_NAME_END, _FIELD_END = "\x1e", "\x1f"  # separators a text never holds (see pack)


def pack(fields: Iterable[tuple[str, str]]) -> str:
    """(field, text) pairs as one string (a separator inside a text becomes a space: it is
    no word, so the terms are the same)."""
    return _FIELD_END.join(
        f"{name}{_NAME_END}{text.replace(_NAME_END, ' ').replace(_FIELD_END, ' ')}"
        for name, text in fields
    )


def _text(row: Row, name: str) -> str:
    return str(row.get(name) or "")


def _shared(value: object) -> str:
    return sys.intern(str(value))


@functools.lru_cache(maxsize=1 << 16)
def _name_terms(names: str) -> frozenset[str]:
    """The index terms of these entity names: one set for every document of the same
    entities (they are many)."""
    return frozenset(analyze(names))


def _all_shared(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(sys.intern(v) for v in sorted(set(values)))


def revision_key(row: Row) -> tuple[int, str]:
    when = instant(row.get("timestamp"))
    return (integer(row.get("revision")) or 0, when.isoformat() if when else "")


def _path_words(path: str) -> str:
    return path.removesuffix(".md").replace("/", " ").replace("-", " ")


def _first_line(text: str) -> str:
    """The first line of prose (else the first heading), at most 200 characters."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    prose = [line for line in lines if not line.startswith("#")]
    return (prose or lines or [""])[0].lstrip("#").strip()[:200]


def memory_doc(row: Row, pieces: Mapping[str, list[str]]) -> LexicalDoc:
    fields = [(name, _text(row, name)) for name in ("title", "excerpt", "body")]
    for name in (
        "tag",
        "trigger",
        "step",
        "entity",
        "claim",
        "predicate",
        "quote",
        "context",
        "reply",
    ):
        text = "\n".join(sorted(set(pieces.get(name, ()))))  # rows come in any order
        fields.append(("claim" if name == "predicate" else name, text))
    quotes = "\n".join(sorted(pieces.get("quote", ())))
    own = " ".join(text for name, text in fields if name in ("title", "body", "quote"))
    return LexicalDoc(
        id=str(row["memory"]),
        kind="memory",
        title=_text(row, "title"),
        graph=_shared(row["graph"]),
        packed=pack((name, text) for name, text in fields if text),
        excerpt=_text(row, "excerpt") or _first_line(_text(row, "body") or quotes),
        memory_kind=_shared(str(row["kind"]).rsplit("#", 1)[-1]),
        status=_shared(str(row["status"]).rsplit("#", 1)[-1]),
        tags=tuple(sys.intern(t) for t in sorted(pieces.get("tag", ()))),
        about=_all_shared(pieces.get("about", ())),
        confidence=number(row.get("confidence")),
        strength=number(row.get("strength")),
        pinned=flag(row.get("pinned")),
        use_count=integer(row.get("useCount")) or 0,
        recorded_at=instant(row.get("recordedAt")),
        last_used_at=instant(row.get("lastUsedAt")),
        occurred_at=instant(row.get("occurredAt")),
        valid_from=instant(row.get("validFrom")),
        valid_until=instant(row.get("validUntil")),
        chats=_all_shared(pieces.get("chat", ())),
        names=_name_terms(" ".join(pieces.get("entity", ()))),
        states_time=_TIME_MENTION.search(own) is not None,
        asks=(_text(row, "body") or quotes).rstrip().endswith("?"),
    )


def page_doc(row: Row) -> LexicalDoc:
    path, markdown = str(row["path"]), _FRONT_MATTER.sub("", _text(row, "markdown"))
    title = _text(row, "title") or path.rsplit("/", 1)[-1].removesuffix(".md")
    fields = (("title", title), ("excerpt", _text(row, "excerpt")), ("path", _path_words(path)))
    return LexicalDoc(
        id=str(row["page"]),
        kind="page",
        title=title,
        graph=_shared(row["graph"]),
        packed=pack((n, t) for n, t in (*fields, ("markdown", markdown)) if t),
        excerpt=_text(row, "excerpt") or _first_line(markdown),
        path=path,
        about=(str(row["entity"]),) if "entity" in row else (),
        use_count=integer(row.get("useCount")) or 0,
        recorded_at=instant(row.get("createdAt")),
    )


def note_doc(row: Row) -> LexicalDoc:
    """An external note's latest revision as a document."""
    path, text = str(row["path"]), str(row["text"])
    return LexicalDoc(
        id=str(row["note"]),
        kind="note",
        title=path.rsplit("/", 1)[-1].removesuffix(".md"),
        graph=_shared(row["graph"]),
        packed=pack((("path", _path_words(path)), ("text", text))),
        excerpt=_first_line(text),
        path=path,
        recorded_at=instant(row.get("timestamp")),
    )


def short_note_doc(row: Row) -> LexicalDoc:
    """A short note (memory_remember) as a document: a note, searchable by its text (its
    chat is left out: a chat's score sums the memories that quote it)."""
    text = str(row["text"])
    first = _first_line(text)
    return LexicalDoc(
        id=str(row["note"]),
        kind="note",
        title=first[:80],
        graph=_shared(row["graph"]),
        packed=pack((("text", text),)),
        excerpt=first,
        recorded_at=instant(row.get("timestamp")),
    )


def camel_words(local: str) -> str:
    """A term's local name as words: ``worksFor`` -> ``works For``."""
    return _CAMEL.sub(" ", local).replace("_", " ").replace("-", " ")
