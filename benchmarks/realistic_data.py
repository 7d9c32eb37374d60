"""The realistic suite's conversations: reading, checking and compiling them into cases.

The format (``kgmem-realistic/1``) is documented in ``benchmarks/realistic.py``. A
conversation compiles into cases that ``correctness_core.prepare`` and the consolidation path
of ``correctness_pass.py`` run as they are: ``sources`` (the conversation's messages, keys
``t0``, ``t1``, ..., one chat, the message's position its turn), ``setup`` and ``proposal``
(the named drafts resolved), plus the realistic keys (``conversation``, ``phenomenon``,
``variant``, ``also``, ``reading``). Reads no ``../shared``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

FORMAT = "kgmem-realistic/1"
PHENOMENA = {
    "a": "the speaker",
    "b": "pronouns and descriptions",
    "c": "fragment quotes",
    "d": "partial names and nicknames",
    "e": "confirmation and denial",
    "f": "same referent, conflicting type",
    "g": "change",
    "h": "restatement",
    "i": "procedures",
    "j": "decisions",
}
VARIANTS = ("true", "lie", "ambiguous")
#: mode -> what its score is called, and the expectations a case of that mode may have
MODES = {
    "true": ("true_kept", ("keep", "separate")),
    "invention": ("invention_caught", ("refuse",)),
    "mislabel": ("mislabel_caught", ("catch",)),
    "restatement": ("restatement_folded", ("fold",)),
    "change": ("change_closed", ("close", "stand")),
    "ambiguous": ("ambiguity_held", ("hold",)),
    "misattribution": ("misattribution_caught", ("refuse",)),
}
#: what each variant may be scored as
VARIANT_MODES = {
    "true": ("true", "restatement", "change"),
    "lie": ("invention", "mislabel", "restatement", "change", "misattribution"),
    "ambiguous": ("ambiguous",),
}
ALSO = ("confirmed", "steps", "in_feed", "adjudicated")
CHECKS = {
    "one_entity": ("names",),
    "alias": ("names",),
    "apart": ("names",),
    "count": ("name", "count"),
    "active": ("draft",),
    "closed": ("draft",),
    "current": ("query", "finds"),
    "steps": ("task", "draft"),
    "profile": ("name",),
}
_CONVERSATION_KEYS = {"format", "id", "kind", "about", "chat", "started", "messages", "drafts"}
_CONVERSATION_KEYS |= {"cases", "feed", "checks"}
_CASE_KEYS = {"id", "phenomenon", "variant", "mode", "expect", "setup", "proposal", "also"}
_CASE_KEYS |= {"reading"}
_STEP = timedelta(minutes=1)


class FormatError(ValueError):
    """A conversation file that is not ``kgmem-realistic/1``; the message names the field."""


def _fail(where: str, why: str) -> FormatError:
    return FormatError(f"{where}: {why}")


def read_conversation(path: Path) -> dict[str, Any]:
    """One conversation file, checked (:func:`check`)."""
    try:
        conv = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise _fail(str(path), f"not JSON: {exc}") from exc
    check(conv, str(path))
    return conv


def read_conversations(path: Path) -> list[dict[str, Any]]:
    """Every ``*.json`` conversation under ``path`` (a directory) in name order, or the one
    file ``path``; conversation and case ids must be unique across them."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    convs = [read_conversation(f) for f in files]
    ids = [c["id"] for c in convs]
    cases = [k["id"] for c in convs for k in c["cases"]]
    for name, seen in (("conversation", ids), ("case", cases)):
        dup = sorted({i for i in seen if seen.count(i) > 1})
        if dup:
            raise _fail(str(path), f"{name} ids used twice: {', '.join(dup)}")
    return convs


def check(conv: dict[str, Any], where: str = "conversation") -> None:
    """Raise :class:`FormatError` naming the field when ``conv`` is not a valid conversation."""
    if conv.get("format") != FORMAT:
        raise _fail(where, f"format must be {FORMAT!r}")
    unknown = set(conv) - _CONVERSATION_KEYS
    if unknown:
        raise _fail(where, f"unknown keys {sorted(unknown)}")
    for key in ("id", "kind", "chat"):
        if not isinstance(conv.get(key), str) or not conv[key]:
            raise _fail(where, f"{key} must be a non-empty string")
    where = f"{where} ({conv['id']})"
    messages = conv.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _fail(where, "messages must be a non-empty list")
    for n, m in enumerate(messages):
        if m.get("role") not in ("user", "assistant") or not str(m.get("text", "")).strip():
            raise _fail(f"{where} messages[{n}]", "needs role user|assistant and a text")
    drafts = conv.get("drafts", {})
    for name, draft in drafts.items():
        _check_draft(draft, len(messages), conv["chat"], f"{where} drafts.{name}")
    for n, c in enumerate(conv.get("cases", [])):
        _check_case(c, drafts, len(messages), conv["chat"], f"{where} cases[{n}]")
    for name in conv.get("feed", []):
        if name not in drafts:
            raise _fail(f"{where} feed", f"no draft named {name!r}")
    for n, chk in enumerate(conv.get("checks", [])):
        _check_check(chk, conv.get("feed", []), f"{where} checks[{n}]")


def _check_draft(draft: Any, turns: int, chat: str, where: str) -> None:
    if not isinstance(draft, dict) or not draft.get("kind") or not draft.get("title"):
        raise _fail(where, "a draft needs kind and title")
    for n, ev in enumerate(draft.get("evidence", [])):
        turn = cited_turn(ev.get("source", ""), chat)
        if turn is None or not 0 <= turn < turns:
            raise _fail(f"{where}.evidence[{n}]", f"source must be chat:{chat}#<turn>")


def _check_case(c: dict[str, Any], drafts: dict[str, Any], turns: int, chat: str, at: str) -> None:
    where = f"{at} ({c.get('id')})"
    unknown = set(c) - _CASE_KEYS
    if unknown:
        raise _fail(where, f"unknown keys {sorted(unknown)}")
    if c.get("phenomenon") not in PHENOMENA:
        raise _fail(where, f"phenomenon must be one of {sorted(PHENOMENA)}")
    if c.get("variant") not in VARIANTS:
        raise _fail(where, f"variant must be one of {VARIANTS}")
    if c.get("mode") not in VARIANT_MODES[c["variant"]]:
        raise _fail(where, f"a {c['variant']} case's mode is one of {VARIANT_MODES[c['variant']]}")
    if c.get("expect") not in MODES[c["mode"]][1]:
        raise _fail(where, f"a {c['mode']} case expects one of {MODES[c['mode']][1]}")
    if c["expect"] in {"fold", "separate", "close", "stand"} and not c.get("setup"):
        raise _fail(where, f"expect {c['expect']!r} needs a setup draft")
    for name in c.get("setup", []):
        if name not in drafts:
            raise _fail(where, f"setup: no draft named {name!r}")
    proposal = c.get("proposal")
    if isinstance(proposal, str):
        if proposal not in drafts:
            raise _fail(where, f"proposal: no draft named {proposal!r}")
    else:
        _check_draft(proposal, turns, chat, f"{where}.proposal")
    bad = set(c.get("also", [])) - set(ALSO)
    if bad:
        raise _fail(where, f"also: unknown checks {sorted(bad)}")
    if not str(c.get("reading", "")).strip():
        raise _fail(where, "reading: say what a careful human reads in the conversation")


def _check_check(chk: dict[str, Any], feed: Sequence[str], where: str) -> None:
    kind = chk.get("check")
    if kind not in CHECKS:
        raise _fail(where, f"check must be one of {sorted(CHECKS)}")
    for key in CHECKS[kind]:
        if not chk.get(key):
            raise _fail(where, f"a {kind} check needs {key}")
    if "draft" in chk and chk["draft"] not in feed:
        raise _fail(where, f"draft {chk['draft']!r} is not in the feed")


def cited_turn(source: str, chat: str) -> int | None:
    """The turn ``chat:<chat>#<turn>`` names in ``chat``, else None."""
    prefix = f"chat:{chat}#"
    rest = source[len(prefix) :] if source.startswith(prefix) else ""
    return int(rest) if rest.isdigit() else None


def sources(conv: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation's messages as a case's first-hand sources: key ``t<turn>``, one chat,
    each at its ``at`` or a minute after the message before it (none: the run's now)."""
    out: list[dict[str, Any]] = []
    when: datetime | None = _time(conv.get("started"))
    for n, m in enumerate(conv["messages"]):
        when = _time(m.get("at")) or (when + _STEP if when is not None else None)
        source = {"key": f"t{n}", "role": m["role"], "text": m["text"], "chat": conv["chat"]}
        if m.get("speaker"):
            source["speaker"] = m["speaker"]
        if when is not None:
            source["timestamp"] = when.isoformat()
        out.append(source)
    return out


def _time(text: str | None) -> datetime | None:
    return None if not text else datetime.fromisoformat(text.replace("Z", "+00:00"))


def draft_of(conv: dict[str, Any], ref: str | dict[str, Any]) -> dict[str, Any]:
    """A case's draft: a named one of the conversation's, or the draft itself."""
    return dict(conv["drafts"][ref]) if isinstance(ref, str) else dict(ref)


def compile_cases(conv: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation's cases, each with everything a run needs (see the module docstring)."""
    srcs = sources(conv)
    out = []
    for c in conv["cases"]:
        out.append(
            {
                "format": FORMAT,
                "id": c["id"],
                "conversation": conv["id"],
                "kind": conv["kind"],
                "phenomenon": c["phenomenon"],
                "variant": c["variant"],
                "mode": c["mode"],
                "sub": f"{c['phenomenon']}/{c['variant']}",
                "expect": c["expect"],
                "also": list(c.get("also", [])),
                "reading": c["reading"],
                "sources": srcs,
                "setup": [{"draft": draft_of(conv, s), "pin": False} for s in c.get("setup", [])],
                "proposal": draft_of(conv, c["proposal"]),
            }
        )
    return out


def quotes(draft: dict[str, Any]) -> Iterable[tuple[str, str]]:
    """Each evidence item's (source, quote) of ``draft``."""
    for ev in draft.get("evidence", []):
        yield ev.get("source", ""), ev.get("quote") or ""


def unquoted(conv: dict[str, Any]) -> list[str]:
    """Where a draft a careful model wrote cites a quote its turn does not hold verbatim: the
    named drafts and every case that is not a lie (a lie may alter its quote)."""
    texts = {f"chat:{conv['chat']}#{n}": m["text"] for n, m in enumerate(conv["messages"])}
    named = [(f"drafts.{k}", d) for k, d in conv["drafts"].items()]
    own = [(c["id"], c["proposal"]) for c in conv["cases"] if c["variant"] != "lie"]
    bad = []
    for where, draft in named + [(w, d) for w, d in own if isinstance(d, dict)]:
        for source, quote in quotes(draft):
            if not quote or quote.strip() not in texts.get(source, ""):
                bad.append(f"{conv['id']} {where}: {quote!r} is not in {source}")
    return bad
