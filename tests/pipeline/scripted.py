"""The scripted model of the pipeline tests: the recorded engine of
:mod:`kgmem.pipeline.scripted` (shared with the benchmarks), and the lies a model tells.

Each misbehaviour builder below returns one claim (or answer) as the model would write it.
"""

from __future__ import annotations

from typing import Any

from kgmem.pipeline.scripted import (
    SIGNATURES,
    Reply,
    ScriptedEngine,
    ScriptExhausted,
    claim,
    claims_reply,
    inputs_of,
    neutral_replies,
    procedure,
    prompt_of,
    quote,
    reply,
    scripted_lm,
)

__all__ = [
    "BROKEN_JSON",
    "NO_FIELDS",
    "SIGNATURES",
    "Reply",
    "ScriptExhausted",
    "ScriptedEngine",
    "changed_value",
    "claim",
    "claims_reply",
    "contradiction",
    "inputs_of",
    "invented_quote",
    "missing_field",
    "neutral_replies",
    "paraphrase",
    "procedure",
    "prompt_of",
    "quote",
    "recall_echo",
    "reply",
    "scripted_lm",
    "two_names",
    "undeclared_type",
    "wrong_types",
]

# -- lies and malformed answers to ExtractClaims ------------------------------------------

BROKEN_JSON = (
    '[[ ## claims ## ]]\n[{"subject": "user", "predicate": "worksFor", "object": "Acme", '
    '"evidence": [}\n\n[[ ## completed ## ]]'
)
NO_FIELDS = "Sure! The user works at Acme."


def wrong_types() -> str:
    bad = claim("user", "worksFor", object="Acme") | {"confidence": "very", "evidence": "S1"}
    return claims_reply(bad)


def missing_field() -> str:
    bad = claim("user", "worksFor", quote("S1", "I work at Acme"), object="Acme")
    del bad["kind"]
    return claims_reply(bad)


def invented_quote(source: str) -> dict[str, Any]:
    return claim("user", "worksFor", quote(source, "I have worked at Initech"), object="Initech")


def paraphrase(source: str, said: str) -> dict[str, Any]:
    """A quote in other words than the source's (``said`` is the reworded text)."""
    return claim("user", "worksFor", quote(source, said), object="Acme")


def changed_value(source: str, exact: str, value: str) -> dict[str, Any]:
    """A real quote, a different value than it states."""
    return claim("user", "schema:birthDate", quote(source, exact), value=value)


def undeclared_type(source: str, exact: str, type_name: str) -> dict[str, Any]:
    return claim("user", "rdf:type", quote(source, exact), object=type_name)


def two_names(source: str, first: str, second: str, exact: str) -> list[dict[str, Any]]:
    """The same person under two names, as two subjects."""
    return [
        claim(first, "schema:jobTitle", quote(source, exact), value="dentist"),
        claim(second, "schema:jobTitle", quote(source, exact), value="dentist"),
    ]


def contradiction(source: str, exact: str, value: str) -> dict[str, Any]:
    """A claim that contradicts a pinned fact (the reconcile stage's to catch)."""
    return claim("user", "schema:homeLocation", quote(source, exact), value=value)


def recall_echo(recall_source: str, exact: str) -> dict[str, Any]:
    """A memory_search result cited as evidence for what it remembered."""
    return claim("user", "worksFor", quote(recall_source, exact), object="Acme")
