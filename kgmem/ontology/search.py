"""Term search across the catalogue: labels, alternate labels, and local-name words.

KBpedia's reference concepts carry no labels in the mirrored release, so every term is also
indexed by the words of its local name (``rc:ChemicalElement`` → "chemical element").
Ranking: an exact label beats a label that starts with the query, which beats word overlap
weighted by field (label > alternate label > local name) and by rarity (IDF).

The index is an SQLite database: a command that only searches terms opens the file
(``$KGMEM_HOME/index/catalogue.sqlite3``) and reads the postings of the query's words, rather
than reading the whole catalogue from the store (seconds). The same file keeps the
catalogue's :class:`Vocabulary` (:mod:`kgmem.ontology.vocabulary.codec`) for commands that need
all of it. It is made for one catalogue version and ignored for any other.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rdflib import URIRef

from kgmem.ontology.vocabulary import TermKind, Vocabulary, local_name_words
from kgmem.ontology.vocabulary.codec import FORMAT, decode_vocabulary, encode_vocabulary

__all__ = ["TermHit", "TermIndex", "normalize"]

_WORD = re.compile(r"[a-z0-9]+")
_FIELD_WEIGHT = {"label": 3.0, "alt": 2.0, "name": 1.5}


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def normalize(text: str) -> list[str]:
    """Lower-cased, light-stemmed words; camelCase is split first.

    >>> normalize("ChemicalElements of Cities")
    ['chemical', 'element', 'of', 'city']
    """
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    return [_stem(w) for w in _WORD.findall(spaced.lower())]


@dataclass(frozen=True)
class TermHit:
    term: URIRef
    label: str
    kind: TermKind
    ontology: URIRef | None
    score: float
    matched: str  # which text matched best: the label, an alternate label or the local name


_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE terms (id INTEGER PRIMARY KEY, iri TEXT NOT NULL, label TEXT NOT NULL,
    kind TEXT NOT NULL, origin TEXT, texts TEXT NOT NULL);
CREATE TABLE postings (word TEXT NOT NULL, term INTEGER NOT NULL, weight REAL NOT NULL,
    source TEXT NOT NULL, PRIMARY KEY (word, term)) WITHOUT ROWID;
CREATE TABLE words (word TEXT PRIMARY KEY, idf REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE exact (phrase TEXT NOT NULL, seq INTEGER NOT NULL, term INTEGER NOT NULL,
    text TEXT NOT NULL, PRIMARY KEY (phrase, seq)) WITHOUT ROWID;
"""
# what a kept index must have been made by: this layout and this vocabulary format
_LAYOUT = f"terms/1+{FORMAT}"


class TermIndex:
    """An inverted index over one :class:`Vocabulary`'s classes and properties, in SQLite.

    Made by :meth:`build` (in memory, or in a file for :meth:`open` to read later); safe to
    share between threads.
    """

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._lock = threading.Lock()

    # -- making and opening ------------------------------------------------------------

    @classmethod
    def build(cls, vocab: Vocabulary, path: Path | None = None, version: str = "") -> TermIndex:
        """Index ``vocab``; with ``path``, into that file (replaced whole, never half made),
        keeping ``vocab`` itself beside the index for :meth:`vocabulary`."""
        if path is None:
            db = sqlite3.connect(":memory:", check_same_thread=False)
            _fill(db, vocab, version, keep_vocabulary=False)
            return cls(db)
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        scratch.unlink(missing_ok=True)
        db = sqlite3.connect(scratch)
        try:
            db.execute("PRAGMA journal_mode=OFF")
            db.execute("PRAGMA synchronous=OFF")
            _fill(db, vocab, version, keep_vocabulary=True)
        finally:
            db.close()
        scratch.replace(path)
        return cls(_read_only(path))

    @classmethod
    def open(cls, path: Path, version: str) -> TermIndex | None:
        """The index kept in ``path`` if it was made for ``version``; None otherwise (no
        file, another version, another layout or a file SQLite cannot read)."""
        if not path.is_file():
            return None
        try:
            db = _read_only(path)
            rows = db.execute("SELECT key, value FROM meta WHERE key IN ('layout', 'version')")
            meta = dict(rows.fetchall())
        except sqlite3.Error:
            return None
        if meta.get("layout") != _LAYOUT or meta.get("version") != version:
            db.close()
            return None
        return cls(db)

    def vocabulary(self) -> Vocabulary | None:
        """The vocabulary this index was made from, if it was kept (a file) and is intact."""
        try:
            with self._lock:
                row = self._db.execute("SELECT value FROM meta WHERE key = 'vocabulary'").fetchone()
                digest = self._db.execute(
                    "SELECT value FROM meta WHERE key = 'vocabulary_sha256'"
                ).fetchone()
        except sqlite3.Error:
            return None
        if row is None or digest is None or hashlib.sha256(row[0]).hexdigest() != digest[0]:
            return None
        try:
            return decode_vocabulary(row[0])
        except (ValueError, KeyError, TypeError, IndexError):
            return None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- answers -----------------------------------------------------------------------

    def exact(self, text: str) -> list[URIRef]:
        """Terms whose label, alternate label or local name is ``text`` (normalized)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT t.iri FROM exact e JOIN terms t ON t.id = e.term"
                " WHERE e.phrase = ? ORDER BY e.seq",
                (" ".join(normalize(text)),),
            ).fetchall()
        return list(dict.fromkeys(URIRef(iri) for (iri,) in rows))

    def search(self, text: str, limit: int = 10, kind: TermKind | None = None) -> list[TermHit]:
        """The best ``limit`` terms for ``text``, best first."""
        words = normalize(text)
        if not words or limit <= 0:
            return []
        phrase = " ".join(words)
        scores: dict[int, float] = defaultdict(float)
        matched: dict[int, str] = {}
        with self._lock:
            for word in dict.fromkeys(words):
                idf = self._db.execute("SELECT idf FROM words WHERE word = ?", (word,)).fetchone()
                if idf is None:
                    continue
                for term, weight, source in self._db.execute(
                    "SELECT term, weight, source FROM postings WHERE word = ?", (word,)
                ):
                    scores[term] += weight * idf[0]
                    matched.setdefault(term, source)
            for term, source in self._db.execute(
                "SELECT term, text FROM exact WHERE phrase = ? ORDER BY seq", (phrase,)
            ):
                scores[term] += 100.0
                matched[term] = source
            rows = list(self._terms(list(scores)))
        hits = []
        for term, iri, label, term_kind, origin, texts in rows:
            if kind is not None and term_kind != kind.value:
                continue
            score = scores[term]
            if any(t.startswith(phrase) for t in texts.split("\n")):
                score += 10.0
            score /= 1 + 0.1 * len(normalize(label))
            hits.append(
                TermHit(
                    URIRef(iri),
                    label,
                    TermKind(term_kind),
                    None if origin is None else URIRef(origin),
                    round(score, 4),
                    matched[term],
                )
            )
        hits.sort(key=lambda h: (-h.score, len(h.label), str(h.term)))
        return hits[:limit]

    def _terms(self, ids: list[int]) -> Iterator[tuple[int, str, str, str, str | None, str]]:
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            yield from self._db.execute(
                f"SELECT id, iri, label, kind, origin, texts FROM terms WHERE id IN ({marks})",
                chunk,
            )


def _read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)


def _fill(
    db: sqlite3.Connection, vocab: Vocabulary, version: str, *, keep_vocabulary: bool
) -> None:
    db.executescript(_SCHEMA)
    postings: dict[str, dict[int, tuple[float, str]]] = defaultdict(dict)
    exact: dict[str, list[tuple[int, str]]] = defaultdict(list)
    term_rows = []
    terms = sorted(set(vocab.classes) | set(vocab.properties), key=str)
    for number, term in enumerate(terms):
        labels = vocab.labels.get(term, ())
        name = local_name_words(term)
        texts = [("label", t) for t in labels]
        texts += [("alt", t) for t in vocab.alt_labels.get(term, ())]
        texts.append(("name", name))
        normalized = []
        for field_name, text in texts:
            words = normalize(text)
            if not words:
                continue
            normalized.append(" ".join(words))
            exact[normalized[-1]].append((number, text))
            weight = _FIELD_WEIGHT[field_name]
            for word in words:
                current = postings[word].get(number)
                if current is None or current[0] < weight:
                    postings[word][number] = (weight, text)
        kind = vocab.kind_of(term)
        origin = vocab.origin.get(term)
        term_rows.append(
            (
                number,
                str(term),
                labels[0] if labels else name,  # vocab.label(term), with the name made once
                (kind or TermKind.CLASS).value,
                None if origin is None else str(origin),
                "\n".join(normalized),
            )
        )
    db.executemany("INSERT INTO terms VALUES (?, ?, ?, ?, ?, ?)", term_rows)
    db.executemany(
        "INSERT INTO postings VALUES (?, ?, ?, ?)",
        (
            (w, t, weight, text)
            for w, found in postings.items()
            for t, (weight, text) in found.items()
        ),
    )
    db.executemany(
        "INSERT INTO words VALUES (?, ?)",
        ((w, math.log(1 + len(terms) / len(found))) for w, found in postings.items()),
    )
    db.executemany(
        "INSERT INTO exact VALUES (?, ?, ?, ?)",
        ((p, seq, t, text) for p, found in exact.items() for seq, (t, text) in enumerate(found)),
    )
    meta: dict[str, str | bytes] = {"layout": _LAYOUT, "version": version}
    if keep_vocabulary:
        blob = encode_vocabulary(vocab)
        meta |= {"vocabulary": blob, "vocabulary_sha256": hashlib.sha256(blob).hexdigest()}
    db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
    db.commit()
