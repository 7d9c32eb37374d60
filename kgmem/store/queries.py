"""The query registry: every SPARQL query and update lives in ``queries/**/*.rq``.

A query is loaded by its path without the suffix (``queries/store/graph_counts.rq`` is
``store/graph_counts``). All of them are parsed when the registry loads, so a broken file
fails start-up with its file, line and column. Parameters are bound as RDF terms, never
formatted into the text: backends with native substitution use it, the others get the
term substituted token by token (:func:`substitute`), which only ever replaces a variable
token with a serialized term.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import pyoxigraph as ox
from rdflib import BNode, Literal, URIRef

from kgmem.errors import BindingError, QueryKindMismatch, QuerySyntaxError, UnknownQuery
from kgmem.vocab import PREFIXES, prefix_declaration

__all__ = [
    "Query",
    "QueryKind",
    "QueryRegistry",
    "default_queries_dir",
    "iri_problem",
    "parse_query",
    "substitute",
    "term_to_sparql",
]

_QUERY_KEYWORDS = {
    "SELECT": "select",
    "ASK": "ask",
    "CONSTRUCT": "construct",
    "DESCRIBE": "describe",
}
# One alternative per lexical token class that can contain a '?' or '$' that is not a
# variable, so variables are only ever found outside strings, IRIs and comments.
_TOKENS = re.compile(
    r"(?P<comment>#[^\n]*)"
    r'|(?P<string>"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^\'\\]|\\.|\'(?!\'\'))*\'\'\''
    r'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\')'
    r'|(?P<iri><[^<>"{}|^`\\\s]*>)'
    r"|(?P<var>[?$][A-Za-z0-9_\u00B7\u00C0-\uFFFF]+)"
    r"|(?P<word>[A-Za-z_][\w\-.]*:[\w\-.]*|:[\w\-.]*|[A-Za-z]+)"
    r"|(?P<brace>[{}])",
    re.DOTALL,
)
_SYNTAX_POSITION = re.compile(r"error at (\d+):(\d+): (.*)", re.DOTALL)


class QueryKind(StrEnum):
    SELECT = "select"
    ASK = "ask"
    CONSTRUCT = "construct"
    DESCRIBE = "describe"
    UPDATE = "update"


@dataclass(frozen=True)
class Query:
    """One named query: its text (with the standard prologue) and the variables it uses."""

    name: str
    text: str
    kind: QueryKind
    variables: frozenset[str]
    path: str = "<inline>"

    def expect(self, *kinds: QueryKind) -> None:
        if self.kind not in kinds:
            raise QueryKindMismatch(self.name, "/".join(kinds), self.kind)

    def check_bindings(self, bindings: Mapping[str, object]) -> None:
        for variable in bindings:
            if variable not in self.variables:
                raise BindingError(self.name, variable, "the query has no such variable")


def default_queries_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "queries"


def _prologue() -> str:
    return "".join(prefix_declaration(p, iri) for p, iri in PREFIXES.items())


def _tokens(text: str) -> Iterator[re.Match[str]]:
    return _TOKENS.finditer(text)


def _kind_of(text: str) -> QueryKind:
    for match in _tokens(text):
        word = match.group("word")
        if word and ":" in word:
            continue
        if word and word.upper() in _QUERY_KEYWORDS:
            return QueryKind(_QUERY_KEYWORDS[word.upper()])
        if word and word.upper() not in {"PREFIX", "BASE"}:
            return QueryKind.UPDATE
    return QueryKind.UPDATE


def parse_query(name: str, body: str, path: str) -> Query:
    """Parse ``body`` (without prologue) into a :class:`Query`, or raise QuerySyntaxError."""
    prologue = _prologue()
    text = prologue + body
    kind = _kind_of(body)
    probe = ox.Store()  # an empty in-memory store: parsing, with nothing to read or write
    try:
        if kind is QueryKind.UPDATE:
            probe.update(text)
        else:
            probe.query(text)
    except SyntaxError as exc:
        line, column, reason = _position(str(exc))
        raise QuerySyntaxError(path, max(line - prologue.count("\n"), 1), column, reason) from exc
    variables = frozenset(m.group("var")[1:] for m in _tokens(body) if m.group("var"))
    return Query(name=name, text=text, kind=kind, variables=variables, path=path)


def _position(message: str) -> tuple[int, int, str]:
    match = _SYNTAX_POSITION.search(message)
    if not match:
        return 1, 1, message
    return int(match.group(1)), int(match.group(2)), match.group(3)


class QueryRegistry:
    """All named queries of a directory, parsed once."""

    def __init__(self, queries: Mapping[str, Query]) -> None:
        self._queries = dict(queries)

    @classmethod
    def load(cls, directory: Path | None = None) -> QueryRegistry:
        root = directory or default_queries_dir()
        queries: dict[str, Query] = {}
        for path in sorted(root.rglob("*.rq")):
            name = path.relative_to(root).with_suffix("").as_posix()
            try:
                body = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise QuerySyntaxError(str(path), 1, 1, f"cannot be read: {exc}") from exc
            queries[name] = parse_query(name, body, str(path))
        return cls(queries)

    def __getitem__(self, name: str) -> Query:
        try:
            return self._queries[name]
        except KeyError:
            raise UnknownQuery(name) from None

    def __contains__(self, name: object) -> bool:
        return name in self._queries

    def __len__(self) -> int:
        return len(self._queries)

    def names(self) -> list[str]:
        return sorted(self._queries)


def iri_problem(text: str) -> str | None:
    """Why ``text`` is no absolute IRI a query can hold (None: it is one), so a caller's
    term is refused with a reason before it is bound (binding it would fail mid-read)."""
    try:
        ox.NamedNode(text)
    except ValueError as exc:
        return str(exc)
    return None


def term_to_sparql(term: URIRef | BNode | Literal, *, allow_blank: bool = False) -> str:
    """Serialize one term as a SPARQL/N-Triples token (escaped by the RDF library).

    Blank nodes are allowed only in ``INSERT DATA`` blocks: anywhere else in a query a
    blank node is a variable.
    """
    if isinstance(term, URIRef):
        return str(ox.NamedNode(str(term)))
    if isinstance(term, BNode):
        if allow_blank:
            return str(ox.BlankNode(str(term)))
        raise ValueError("blank nodes cannot be substituted into query text")
    if term.language:
        return str(ox.Literal(str(term), language=term.language))
    if term.datatype:
        return str(ox.Literal(str(term), datatype=ox.NamedNode(str(term.datatype))))
    return str(ox.Literal(str(term)))


def substitute(
    query: Query,
    bindings: Mapping[str, URIRef | BNode | Literal],
    values: Mapping[str, Sequence[URIRef | Literal]] | None = None,
) -> str:
    """The query text with each bound variable written in as its term, and each variable
    of ``values`` bound to a list of terms by a ``VALUES`` block opening the WHERE group
    (so a batch of keys is one query whose pattern starts from those keys; an empty list
    matches nothing).

    Oxigraph's own substitution filters solutions after evaluating the pattern, so a bound
    subject still scans the graph; written in as a constant it is an index lookup. In a
    SELECT projection a bound variable becomes ``(<term> AS ?var)`` so the column stays;
    after the WHERE group (ORDER BY, GROUP BY) variables are left alone. Nothing else in
    the text changes: strings, IRIs and comments are never touched.
    """
    query.check_bindings(bindings)
    rendered: dict[str, str] = {}
    for variable, term in bindings.items():
        try:
            rendered[variable] = term_to_sparql(term)
        except ValueError as exc:
            raise BindingError(query.name, variable, str(exc)) from exc
    block = _values_block(query, values or {})
    text = query.text
    out: list[str] = []
    last = 0
    edits = [
        (start, end, variable, projected)
        for start, end, variable, projected in _slots(text, query.kind)
        if variable in rendered
    ]
    if block:
        opening = _where_opening(text, query.kind)
        edits.append((opening, opening, "", False))
        edits.sort()
    for start, end, variable, projected in edits:
        if not variable:
            out += [text[last:start], block]
            last = end
            continue
        value = rendered[variable]
        out += [text[last:start], f"({value} AS ?{variable})" if projected else value]
        last = end
    out.append(text[last:])
    return "".join(out)


def _values_block(query: Query, values: Mapping[str, Sequence[URIRef | Literal]]) -> str:
    """`` VALUES ?a { t1 t2 } `` for each listed variable (checked like a binding)."""
    query.check_bindings(values)
    if values and query.kind is not QueryKind.SELECT:
        raise BindingError(query.name, next(iter(values)), "lists bind only SELECT queries")
    blocks: list[str] = []
    for variable, terms in values.items():
        try:
            rendered = " ".join(term_to_sparql(t) for t in terms)
        except ValueError as exc:
            raise BindingError(query.name, variable, str(exc)) from exc
        blocks.append(f" VALUES ?{variable} {{ {rendered} }} ")
    return "".join(blocks)


@functools.lru_cache(maxsize=1024)
def _where_opening(text: str, kind: QueryKind) -> int:
    """Just after the brace that opens the WHERE group of a SELECT."""
    for match in _TOKENS.finditer(text):
        if match.group("brace") == "{":
            return match.end()
    raise ValueError("a SELECT without a WHERE group")


@functools.lru_cache(maxsize=1024)
def _slots(text: str, kind: QueryKind) -> tuple[tuple[int, int, str, bool], ...]:
    """Where in ``text`` a variable may be written in: (start, end, name, in projection).

    Scanned once per query text: variables after the WHERE group (ORDER BY, GROUP BY) are
    not slots, and a slot in a SELECT projection keeps its column with ``AS``."""
    slots: list[tuple[int, int, str, bool]] = []
    region, depth = "prologue", 0
    where_seen = kind is not QueryKind.CONSTRUCT  # a CONSTRUCT template comes first
    for match in _TOKENS.finditer(text):
        word, var, brace = match.group("word"), match.group("var"), match.group("brace")
        if word and depth == 0 and word.upper() == "WHERE":
            where_seen = True
        if word and region == "prologue" and word.upper() in _QUERY_KEYWORDS:
            region = "projection" if word.upper() == "SELECT" else "body"
        elif word and region == "projection" and word.upper() in ("WHERE", "FROM"):
            region = "body"
        elif brace:
            region = "body" if region in ("projection", "prologue") else region
            depth += 1 if brace == "{" else -1
            closes_where = depth == 0 and brace == "}" and where_seen
            if closes_where and kind is not QueryKind.UPDATE:
                region = "modifiers"
        if var and region != "modifiers":
            slots.append((match.start(), match.end(), var[1:], region == "projection"))
    return tuple(slots)
