"""Run one DSPy signature against one LM, strictly, inside an error boundary naming the stage.

DSPy's ``ChatAdapter`` is lenient: it repairs broken JSON (``json_repair``), falls back to
Python literals, and on a parse failure asks the model again in JSON mode. kgmem treats
model output as a proposal, so :class:`StrictChatAdapter` parses each structured field with
``json.loads`` and pydantic, and :func:`run_signature` makes one call: malformed output is a
:class:`~kgmem.errors.ModelOutputError`, a failed call a :class:`~kgmem.errors.ModelCallError`;
retrying is the stage runner's decision, not a hidden second call here.

The LM is chosen per call with ``dspy.context(lm=..., adapter=...)``, never ``dspy.configure``,
so two passes on two threads with two models never see each other's LM.
"""

from __future__ import annotations

import enum
import json
import re
from typing import Any, Literal, get_origin

import dspy
from dspy.adapters.utils import parse_value
from dspy.utils.exceptions import AdapterParseError, LMError
from pydantic import TypeAdapter

from kgmem.errors import ModelCallError, ModelOutputError

__all__ = ["StrictChatAdapter", "run_signature"]

_HEADER = re.compile(r"\[\[ ## (\w+) ## \]\]")
_FENCE = re.compile(r"\A```(?:json)?\s*\n(.*)\n```\Z", re.S)


def _sections(completion: str) -> dict[str, str]:
    """Each ``[[ ## name ## ]]`` section's text; the first of a repeated header wins."""
    found: dict[str, str] = {}
    name: str | None = None
    lines: list[str] = []

    def close() -> None:
        if name is not None and name not in found:
            found[name] = "\n".join(lines).strip()

    for line in completion.splitlines():
        match = _HEADER.match(line.strip())
        if match is None:
            lines.append(line)
            continue
        close()
        name = match.group(1)
        rest = line.strip()[match.end() :].strip()
        lines = [rest] if rest else []
    close()
    return found


def _is_textual(annotation: Any) -> bool:
    if annotation is str or get_origin(annotation) is Literal:
        return True
    return isinstance(annotation, type) and issubclass(annotation, enum.Enum)


def _strict_value(raw: str, annotation: Any) -> Any:
    """A structured field must be real JSON of the declared type; text fields stay text."""
    if _is_textual(annotation):
        return parse_value(raw, annotation)
    fenced = _FENCE.match(raw.strip())
    value = json.loads(fenced.group(1) if fenced else raw)
    return TypeAdapter(annotation).validate_python(value)


class StrictChatAdapter(dspy.ChatAdapter):
    """``ChatAdapter`` prompts, strict parsing, no JSON-mode fallback call."""

    def __init__(self) -> None:
        super().__init__(use_json_adapter_fallback=False)

    def parse(self, signature: Any, completion: str) -> dict[str, Any]:
        sections = _sections(completion)
        fields: dict[str, Any] = {}
        for name, info in signature.output_fields.items():
            if name not in sections:
                continue
            try:
                fields[name] = _strict_value(sections[name], info.annotation)
            except ValueError as exc:  # JSONDecodeError and ValidationError are ValueErrors
                raise AdapterParseError(
                    adapter_name="StrictChatAdapter",
                    signature=signature,
                    lm_response=completion,
                    message=f"field {name}: {_first_line(exc)}",
                ) from exc
        if fields.keys() != signature.output_fields.keys():
            missing = sorted(set(signature.output_fields) - set(fields))
            raise AdapterParseError(
                adapter_name="StrictChatAdapter",
                signature=signature,
                lm_response=completion,
                message=f"missing output field(s): {', '.join(missing)}",
                parsed_result=fields,
            )
        return fields


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _reason(exc: AdapterParseError) -> str:
    """The first line: the adapter's own message comes first, the echoed response after."""
    return _first_line(exc)[:500]


def run_signature(signature: Any, lm: dspy.LM, stage: str, **inputs: Any) -> dspy.Prediction:
    """One ``dspy.Predict(signature)`` call on ``lm``, parsed strictly; errors name ``stage``."""
    try:
        with dspy.context(lm=lm, adapter=StrictChatAdapter()):
            return dspy.Predict(signature)(**inputs)
    except AdapterParseError as exc:
        raise ModelOutputError(stage, _reason(exc)) from exc
    except LMError as exc:
        raise ModelCallError(stage, _first_line(exc)) from exc
