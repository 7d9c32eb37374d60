"""A scripted model for pipeline tests: recorded answers per signature, never the network.

DSPy 3.4's ``dspy.LM(model, engine=obj)`` sends every call to ``obj.complete(request)`` with a
``dspy.lm15.Request`` (system prompt + messages) and expects a ``dspy.lm15.Response``. The
ChatAdapter's system prompt lists the signature's output fields ("Your output fields are:
1. `claims` ..."), which is how :class:`ScriptedEngine` tells which signature is asking; it
answers with the next scripted reply for that signature, as ``[[ ## field ## ]]`` blocks
closed by ``[[ ## completed ## ]]``. Replies may be raw text (to send broken output), a
callable of the request, or an exception to raise.

The misbehaviour builders at the bottom are the lies a model tells: each returns one claim as
the model would write it.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import dspy
from dspy.lm15 import Message, Request, Response, TextPart, Usage
from pydantic import BaseModel

from kgmem.pipeline import ModelSpec
from kgmem.pipeline.signatures import (
    AssembleTerms,
    AuthorPage,
    ClassifyTerm,
    ExtractClaims,
    ResolveTieBreak,
)

Reply = str | Callable[[Request], str] | BaseException
SIGNATURES: tuple[type[dspy.Signature], ...] = (
    ExtractClaims,
    ClassifyTerm,
    ResolveTieBreak,
    AssembleTerms,
    AuthorPage,
)
_OUTPUTS = re.compile(r"Your output fields are:\n(.*?)\n(?:All interactions|$)", re.S)


class ScriptExhausted(AssertionError):
    """A test asked the model more often than it scripted."""


def reply(**fields: Any) -> str:
    """A well-formed ChatAdapter answer: each field as text (str) or JSON, then completed."""
    blocks = [f"[[ ## {name} ## ]]\n{_text(value)}" for name, value in fields.items()]
    return "\n\n".join([*blocks, "[[ ## completed ## ]]"])


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(value, default=_jsonable)


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"cannot script {type(value).__name__}")


def prompt_of(request: Request) -> str:
    """Everything the model was shown: the system prompt and each message's text."""
    system = request.system if isinstance(request.system, str) else ""
    return "\n".join([system, *(m.text or "" for m in request.messages)])


class ScriptedEngine:
    """Answers each signature from its own queue; records every request it is sent."""

    def __init__(self, script: Mapping[type[dspy.Signature], Iterable[Reply]] | None = None):
        self._queues = {sig: deque(replies) for sig, replies in (script or {}).items()}
        self.requests: list[tuple[type[dspy.Signature], Request]] = []

    def add(self, signature: type[dspy.Signature], *replies: Reply) -> ScriptedEngine:
        self._queues.setdefault(signature, deque()).extend(replies)
        return self

    def calls(self, signature: type[dspy.Signature]) -> list[Request]:
        return [request for sig, request in self.requests if sig is signature]

    def complete(self, request: Request) -> Response:
        signature = self._signature(request)
        self.requests.append((signature, request))
        queue = self._queues.get(signature)
        if not queue:
            raise ScriptExhausted(f"no scripted reply left for {signature.__name__}")
        item = queue.popleft()
        if isinstance(item, BaseException):
            raise item
        text = item(request) if callable(item) else item
        return Response(
            id="scripted",
            model="scripted",
            message=Message.assistant(TextPart(text)),
            finish_reason="stop",
            usage=Usage(),
        )

    def stream(self, request: Request) -> Iterator[Any]:
        raise NotImplementedError("the scripted engine does not stream")

    def close(self) -> None:
        return None

    def _signature(self, request: Request) -> type[dspy.Signature]:
        system = request.system if isinstance(request.system, str) else ""
        found = _OUTPUTS.search(system)
        names = tuple(re.findall(r"^\d+\. `(\w+)`", found.group(1), re.M)) if found else ()
        for signature in (*self._queues, *SIGNATURES):
            if tuple(signature.output_fields) == names:
                return signature
        raise AssertionError(f"the scripted engine cannot tell the signature (outputs {names})")


def scripted_lm(engine: ScriptedEngine) -> dspy.LM:
    """A ``dspy.LM`` on ``engine``, built the way kgmem builds every LM (no cache, no retry)."""
    return ModelSpec("openai/scripted", engine=engine, num_retries=0).build()


# -- what a model may answer to ExtractClaims ---------------------------------------------


def claim(
    subject: str,
    predicate: str,
    *evidence: dict[str, str],
    object: str | None = None,
    value: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """One claim as the model writes it (JSON-ready)."""
    out: dict[str, Any] = {"subject": subject, "predicate": predicate, "object": object}
    out |= {"value": value, "negated": False, "kind": "semantic", "occurred_at": None}
    out |= {"statement": "", "evidence": list(evidence), "confidence": 0.9}
    return out | fields


def quote(source: str, text: str, support: str = "explicit") -> dict[str, str]:
    return {"source": source, "quote": text, "support": support}


def claims_reply(*claims: dict[str, Any]) -> str:
    return reply(claims=list(claims))


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
