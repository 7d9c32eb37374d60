"""A recorded model for tests, benchmarks and offline demos: answers per signature from a
script, never the network.

DSPy 3.4's ``dspy.LM(model, engine=obj)`` sends every call to ``obj.complete(request)`` with a
``dspy.lm15.Request`` (system prompt + messages) and expects a ``dspy.lm15.Response``. The
ChatAdapter's system prompt lists the signature's output fields ("Your output fields are:
1. `claims` ..."), which is how :class:`ScriptedEngine` tells which signature is asking; it
answers with the next scripted reply for that signature, as ``[[ ## field ## ]]`` blocks
closed by ``[[ ## completed ## ]]``. Replies may be raw text (to send broken output), a
callable of the request, or an exception to raise. A signature with no scripted reply left
falls back to its *standing* reply (:meth:`ScriptedEngine.stand`), if it has one.

:func:`neutral_replies` are standing replies that decide nothing a deterministic stage would
not: extract nothing, choose a term only when its label or name is the surface itself, never
merge on a tie, defer every undeclared term, and leave pages to the deterministic renderer.
:func:`claim`, :func:`procedure`, :func:`quote` and :func:`claims_reply` write an
``ExtractClaims`` answer.

Not imported by :mod:`kgmem.pipeline` (it loads DSPy): import ``kgmem.pipeline.scripted``.
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

from kgmem.ontology.search import normalize
from kgmem.pipeline.lm import ModelSpec
from kgmem.pipeline.proposals import NEW_ENTITY, NO_TERM
from kgmem.pipeline.signatures import (
    AssembleTerms,
    AuthorPage,
    ClassifyTerm,
    ExtractClaims,
    ResolveTieBreak,
)
from kgmem.pipeline.terms_match import term_words

__all__ = [
    "SIGNATURES",
    "Reply",
    "ScriptExhausted",
    "ScriptedEngine",
    "claim",
    "claims_reply",
    "inputs_of",
    "neutral_replies",
    "procedure",
    "prompt_of",
    "quote",
    "reply",
    "scripted_lm",
]

Reply = str | Callable[[Request], str] | BaseException
SIGNATURES: tuple[type[dspy.Signature], ...] = (
    ExtractClaims,
    ClassifyTerm,
    ResolveTieBreak,
    AssembleTerms,
    AuthorPage,
)
_OUTPUTS = re.compile(r"Your output fields are:\n(.*?)\n(?:All interactions|$)", re.S)
_FIELD = re.compile(r"^\[\[ ## (\w+) ## \]\]\n?", re.M)
_RESPOND = "\n\nRespond with the corresponding output fields"


class ScriptExhausted(AssertionError):
    """The model was asked more often than its script answers: a mistake in the script (the
    caller's), not a model failure, so an ``AssertionError`` rather than a ``KgmemError``."""


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


def inputs_of(request: Request) -> dict[str, str]:
    """The input fields of the request's last message, by name, as the text it was shown
    (structured inputs are JSON)."""
    text = str(request.messages[-1].text or "") if request.messages else ""
    text = text.split(_RESPOND, 1)[0]
    marks = list(_FIELD.finditer(text))
    return {
        m.group(1): text[m.end() : marks[i + 1].start() if i + 1 < len(marks) else None].strip()
        for i, m in enumerate(marks)
    }


class ScriptedEngine:
    """Answers each signature from its own queue, then from its standing reply; records
    every request it is sent."""

    def __init__(
        self,
        script: Mapping[type[dspy.Signature], Iterable[Reply]] | None = None,
        *,
        standing: Mapping[type[dspy.Signature], Reply] | None = None,
    ) -> None:
        self._queues = {sig: deque(replies) for sig, replies in (script or {}).items()}
        self._standing: dict[type[dspy.Signature], Reply] = dict(standing or {})
        self.requests: list[tuple[type[dspy.Signature], Request]] = []

    def add(self, signature: type[dspy.Signature], *replies: Reply) -> ScriptedEngine:
        self._queues.setdefault(signature, deque()).extend(replies)
        return self

    def stand(self, signature: type[dspy.Signature], answer: Reply) -> ScriptedEngine:
        """Answer ``signature`` with ``answer`` whenever its queue is empty."""
        self._standing[signature] = answer
        return self

    def calls(self, signature: type[dspy.Signature]) -> list[Request]:
        return [request for sig, request in self.requests if sig is signature]

    def complete(self, request: Request) -> Response:
        signature = self._signature(request)
        self.requests.append((signature, request))
        queue = self._queues.get(signature)
        if queue:
            item = queue.popleft()
        elif signature in self._standing:
            item = self._standing[signature]
        else:
            raise ScriptExhausted(f"no scripted reply left for {signature.__name__}")
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
        for signature in (*self._queues, *self._standing, *SIGNATURES):
            if tuple(signature.output_fields) == names:
                return signature
        raise ScriptExhausted(f"the scripted engine cannot tell the signature (outputs {names})")


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


def procedure(
    title: str,
    steps: Iterable[str],
    *evidence: dict[str, str],
    triggers: Iterable[str] = (),
    **fields: Any,
) -> dict[str, Any]:
    """One procedure as the model writes it (JSON-ready)."""
    out: dict[str, Any] = {"title": title, "steps": list(steps), "triggers": list(triggers)}
    out |= {"about": [], "evidence": list(evidence), "confidence": 0.9}
    return out | fields


def quote(source: str, text: str, support: str = "explicit") -> dict[str, str]:
    return {"source": source, "quote": text, "support": support}


def claims_reply(*claims: dict[str, Any], procedures: Iterable[dict[str, Any]] = ()) -> str:
    """An ``ExtractClaims`` answer: these claims and ``procedures`` (none by default)."""
    return reply(claims=list(claims), procedures=list(procedures))


# -- neutral standing replies ---------------------------------------------------------------


def _choose_term(request: Request) -> str:
    """The one offered term whose label or local name is the surface (in words), else none."""
    shown = inputs_of(request)
    surface = _words(shown.get("surface", ""))
    offered = json.loads(shown.get("candidates") or "[]")
    same = [
        c["term"]
        for c in offered
        if surface and surface in (_words(c.get("label", "")), _words(c["term"]))
    ]
    if len(same) == 1:
        return reply(choice={"term": same[0], "reason": "its label is the surface"})
    return reply(choice={"term": NO_TERM, "reason": "no candidate is named as the surface"})


def _words(text: str) -> str:
    return " ".join(normalize(term_words(text)))


def _defer_all(request: Request) -> str:
    terms = json.loads(inputs_of(request).get("terms") or "[]")
    decisions = [
        {"surface": t["surface"], "action": "defer", "reason": "a recorded model decides nothing"}
        for t in terms
    ]
    return reply(patch={"decisions": decisions})


def neutral_replies() -> dict[type[dspy.Signature], Reply]:
    """Standing replies that add no judgement of their own: no claims; a term only when it
    is named exactly as the surface; a tie is a new entity; every undeclared term deferred;
    an empty page body (the author stage then uses its deterministic renderer)."""
    return {
        ExtractClaims: claims_reply(),
        ClassifyTerm: _choose_term,
        ResolveTieBreak: reply(decision={"candidate": NEW_ENTITY, "reason": "a tie"}),
        AssembleTerms: _defer_all,
        AuthorPage: reply(markdown=""),
    }
