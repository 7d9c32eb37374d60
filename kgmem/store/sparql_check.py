"""What a caller's SPARQL text may do, decided on its parse tree, never on its text.

:func:`check_query` expands SPARQL's codepoint escapes (``\\u0041``, ``\\U00000041``) once,
the way the grammar says they are processed before parsing, and refuses a text that still
holds one after that (``\\u005Cu0041`` would otherwise mean one thing here and another to a
parser that expands twice). It then parses the expanded text with rdflib's SPARQL grammar and
walks the whole tree: a ``SERVICE`` anywhere (a nested group, a subquery, ``FILTER EXISTS``,
a variable endpoint) is refused, and so is an update or a text the grammar does not accept.
The store is then handed the *expanded* text, so the query it runs is the one checked here.

The ``FROM`` / ``FROM NAMED`` graphs come from the same tree, prefixed names and relative
IRIs resolved, so an escaped graph name is the graph it spells.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

from pyparsing import ParseException, ParseResults
from rdflib import URIRef
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.parser import parseQuery, parseUpdate
from rdflib.plugins.sparql.parserutils import CompValue

from kgmem.errors import QueryRefused

__all__ = ["CheckedQuery", "check_query", "expand_escapes"]

# rdflib's grammar is one pyparsing object whose parse actions keep state: two threads
# parsing at once fail inside pyparsing (seen: ``Param.postParse2() missing ... tokenList``).
_PARSING = threading.Lock()
_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


@dataclass(frozen=True)
class CheckedQuery:
    """A query that may run: its expanded text and the graphs its ``FROM`` clauses name."""

    text: str
    default: tuple[URIRef, ...] = ()
    named: tuple[URIRef, ...] = ()


def expand_escapes(text: str) -> str:
    r"""``text`` with its codepoint escapes replaced, once; a text still holding one is refused.

    >>> expand_escapes(r"<urn:kgmem:user:\u0061lice:kg>")
    '<urn:kgmem:user:alice:kg>'
    """

    def one(match: re.Match[str]) -> str:
        point = int(match.group(1) or match.group(2), 16)
        if point > 0x10FFFF or 0xD800 <= point <= 0xDFFF:
            raise QueryRefused(f"{match.group()} is not a character")
        return chr(point)

    expanded = _ESCAPE.sub(one, text)
    if _ESCAPE.search(expanded):
        raise QueryRefused("an escape sequence spells another escape sequence")
    return expanded


def check_query(text: str, prefixes: Mapping[str, str]) -> CheckedQuery:
    """Parse ``text`` and say whether it may run on the read-only, offline endpoint.

    A query is checked once: the dataset is read from it before it runs, and the store
    checks what it is handed, so the answer for a text is remembered (a refusal is not).

    >>> check_query("SELECT * WHERE { ?s ?p ?o }", {}).text
    'SELECT * WHERE { ?s ?p ?o }'
    >>> check_query("SELECT * WHERE { { SERVICE <http://x> { ?s ?p ?o } } }", {})
    Traceback (most recent call last):
    kgmem.errors.QueryRefused: query refused: SERVICE is not allowed: ...
    """
    return _checked(text, tuple(sorted(prefixes.items())))


@lru_cache(maxsize=256)
def _checked(text: str, prefixes: tuple[tuple[str, str], ...]) -> CheckedQuery:
    expanded = expand_escapes(text)
    with _PARSING:
        return _parsed(expanded, prefixes)


def _parsed(expanded: str, prefixes: tuple[tuple[str, str], ...]) -> CheckedQuery:
    try:
        tree = parseQuery(expanded)
    except RecursionError:  # rdflib's grammar recurses per nesting level (SERVICE doubly)
        raise QueryRefused("not a SPARQL query kgmem can check: it is nested too deeply") from None
    except ParseException as exc:
        if _is_update(expanded):
            raise QueryRefused(
                "an update is not allowed: this endpoint is read-only and offline"
            ) from None
        raise QueryRefused(f"not a SPARQL query kgmem can check: {exc.msg} at {exc.loc}") from None
    for node in _nodes(tree):
        if isinstance(node, CompValue) and node.name == "ServiceGraphPattern":
            raise QueryRefused("SERVICE is not allowed: this endpoint never reaches the network")
    try:
        query = translateQuery(tree, initNs=dict(prefixes))
    except Exception as exc:  # rdflib raises bare Exceptions for unknown prefixes and the like
        raise QueryRefused(f"not a SPARQL query kgmem can check: {exc}") from None
    default: list[URIRef] = []
    named: list[URIRef] = []
    for clause in query.algebra.get("datasetClause") or ():
        if "default" in clause:
            default.append(URIRef(str(clause["default"])))
        if "named" in clause:
            named.append(URIRef(str(clause["named"])))
    return CheckedQuery(expanded, tuple(default), tuple(named))


def _is_update(text: str) -> bool:
    try:
        parseUpdate(text)
    except (ParseException, RecursionError):
        return False
    return True


def _nodes(root: object) -> Iterator[object]:
    """Every node of a parse tree, iteratively (a deeply nested query must not overflow)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, CompValue):
            stack.extend(node.values())
        elif isinstance(node, ParseResults | list | tuple):
            stack.extend(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
