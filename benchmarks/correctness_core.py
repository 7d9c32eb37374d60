"""The unreliable-author suite's case format, runner, baselines and table.

Not a benchmark itself: ``benchmarks/correctness.py`` builds the cases and prints the table,
``tests/test_correctness_slice.py`` runs a synthetic slice. Nothing here reads
``../shared/bench``.

Case format ``kgmem-correctness/1``: one JSON object per line, with the keys

- ``format``: ``"kgmem-correctness/1"``;
- ``id``: unique; ``mode``: ``true``, ``invention``, ``mislabel``, ``restatement`` or
  ``contradiction``; ``sub``: the sub-case (free text, one row of the table);
- ``declare`` (optional): properties added to the case user's schema delta first, each
  ``{"name", "label", "domain", "range", "functional"}`` (domain/range as ``schema:X`` CURIEs);
  a draft names one as ``delta:<name>``;
- ``sources``: messages ingested first-hand, in order, each ``{"key", "role", "text"}`` plus
  optional ``speaker``, ``chat``, ``tool_name``, ``tool_outcome``, ``timestamp`` (ISO 8601,
  when it was said; default: the run's now); a draft cites one as ``"$<key>"`` in
  ``evidence[].source``, or as ``chat:<chat>#<n>``, ``n`` its position in ``sources`` (its
  turn);
- ``setup``: what is already known, in order, each ``{"draft": <draft>, "pin": bool}``; a
  setup draft that is refused makes the case *broken* (counted apart, never scored);
- ``proposal``: the draft under test (the gate's draft payload: kind, title, claims,
  entities, evidence, ...);
- ``expect``: what kgmem must do with it:
  ``keep`` (active), ``refuse`` (refused),
  ``catch`` (refused, or pending with a vocabulary proposal: non-empty ``needs_terms``;
  for an improvised predicate also *aligned*, below),
  ``fold`` (discarded or merged into the last setup memory), ``separate`` (active, a new
  memory whose claim subjects are not the last setup memory's),
  ``quarantine`` (quarantined, contradicting the last setup memory, which stays active),
  ``supersede`` (active, superseding the last setup memory, which is kept as superseded),
  ``contest`` (any of quarantine, supersede, or pending with the last setup memory weakened:
  never both silently active).

An improvised predicate (a claim predicate the case user's effective ontology does not
declare) is caught when nothing undeclared reaches memory: the proposal is refused, held
pending with a vocabulary proposal, or stored as a memory that needs no term and whose
claims use only properties the user had before (the ontologies' and those the case
declares; never the improvised one, never a term a pass declared for it) - kgmem's classify
stage aligned the predicate with the declared term its label or alternate label names
(``kgm:employedBy`` is ``schema:worksFor``: one concept, one name). The last is outcome
``aligned`` (:func:`aligned`), its own column of the table; only a proposal with an
improvised predicate can be judged so, whatever its sub-case.

Each case runs as its own user in one store, so cases never see each other.

Paths: ``run_case`` decides the proposal with the foreground gate (path ``draft``);
``correctness_pass.py`` renders it as the memory model's answer and runs a consolidation pass
(path ``consolidation``). Both judge with :func:`judge`, and every :class:`Verdict` names its
path, so the table and the scores are per path.

Baselines, computed from the same cases: *accept-all* stores every proposal; *exact dedupe*
drops a proposal whose content (kind, title, body, claims, entities: everything but the
evidence) equals a setup draft's, and stores it otherwise. A baseline is right when it stores
a ``keep``/``separate`` proposal, drops a ``fold`` one, and drops (never stores) every other.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from rdflib import URIRef

from kgmem.api.services import Services
from kgmem.memory.gate import ItemResult, Outcome
from kgmem.memory.model import MemoryStatus
from kgmem.memory.planning import expand_term
from kgmem.memory.source_inputs import MessageIn
from kgmem.ontology import (
    DeclareProperty,
    DeltaPatch,
    Provenance,
    TermKind,
    delta_term,
    is_delta_term,
)
from kgmem.vocab import SDO

FORMAT = "kgmem-correctness/1"
MODES = ("true", "invention", "mislabel", "restatement", "contradiction")
EXPECTS = ("keep", "refuse", "catch", "fold", "separate", "quarantine", "supersede", "contest")
#: the gate's outcomes; ``aligned``: an improvised predicate stored as a declared term (see
#: the module docstring); ``failed``: a consolidation pass that parked or was abandoned
ALIGNED = "aligned"
OUTCOMES = (*(o.value for o in Outcome), ALIGNED, "failed")
PATHS = ("draft", "consolidation")


def case(
    id: str,
    mode: str,
    sub: str,
    sources: list[dict[str, Any]],
    proposal: dict[str, Any],
    expect: str,
    setup: Sequence[dict[str, Any]] = (),
    pin: bool = False,
    declare: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """One case in the line format (``pin``: pin the last setup memory)."""
    steps = [{"draft": d, "pin": pin and i == len(setup) - 1} for i, d in enumerate(setup)]
    out = {"format": FORMAT, "id": id, "mode": mode, "sub": sub}
    if declare:
        out["declare"] = list(declare)
    out |= {"sources": sources, "setup": steps, "proposal": proposal, "expect": expect}
    check(out)
    return out


def check(c: dict[str, Any]) -> None:
    """Raise ``ValueError`` naming the field when ``c`` is not a valid case."""
    if c.get("format") != FORMAT:
        raise ValueError(f"{c.get('id')}: format must be {FORMAT!r}")
    if c.get("mode") not in MODES:
        raise ValueError(f"{c.get('id')}: mode must be one of {MODES}")
    if c.get("expect") not in EXPECTS:
        raise ValueError(f"{c.get('id')}: expect must be one of {EXPECTS}")
    if c["expect"] in {"fold", "separate", "quarantine", "supersede", "contest"} and not c.get(
        "setup"
    ):
        raise ValueError(f"{c['id']}: expect {c['expect']!r} needs a setup draft")
    keys = [s["key"] for s in c.get("sources", [])]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{c['id']}: source keys must be unique")


def read_cases(path: Path) -> list[dict[str, Any]]:
    cases = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                c = json.loads(line)
                check(c)
            except (ValueError, KeyError) as exc:
                raise ValueError(f"{path}:{n}: {exc}") from exc
            cases.append(c)
    return cases


def write_cases(path: Path, cases: Iterable[dict[str, Any]]) -> int:
    lines = [json.dumps(c, ensure_ascii=False, default=str) for c in cases]
    path.write_text("".join(line + "\n" for line in lines))
    return len(lines)


# -- running one case through the real write path -------------------------------------


@dataclass(frozen=True)
class Verdict:
    id: str
    mode: str
    sub: str
    expect: str
    outcome: str  # kgmem's outcome for the proposal, or "broken"
    kgmem: bool
    accept_all: bool
    dedupe: bool
    why: str = ""  # kgmem's reasons, when it was wrong
    path: str = "draft"  # how the proposal reached kgmem: one of PATHS


def _resolve(value: Any, keys: dict[str, str], uid: str) -> Any:
    if isinstance(value, dict):
        return {k: _resolve(v, keys, uid) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, keys, uid) for v in value]
    if isinstance(value, str) and value.startswith("$") and value[1:] in keys:
        return keys[value[1:]]
    if isinstance(value, str) and value.startswith("delta:"):
        return str(delta_term(uid, value[len("delta:") :]))
    return value


def _declare(
    services: Services, uid: str, declare: Sequence[dict[str, Any]], now: datetime
) -> None:
    if not declare:
        return
    terms = tuple(
        DeclareProperty(
            d["name"],
            d.get("label", d["name"]),
            URIRef(SDO[d["domain"].removeprefix("schema:")]),
            URIRef(SDO[d["range"].removeprefix("schema:")]),
            functional=bool(d.get("functional", False)),
        )
        for d in declare
    )
    services.ontology.apply_delta(uid, DeltaPatch(terms, Provenance(f"user:{uid}", now)))


def _ingest(services: Services, uid: str, sources: Sequence[dict[str, Any]]) -> dict[str, str]:
    msgs = [
        MessageIn(
            chat=s.get("chat", "c1"),
            turn=n,
            role=s["role"],
            text=s["text"],
            speaker=s.get("speaker"),
            tool_name=s.get("tool_name"),
            tool_outcome=s.get("tool_outcome"),
            timestamp=s.get("timestamp"),
        )
        for n, s in enumerate(sources)
    ]
    if not msgs:
        return {}
    ingested = services.sources.ingest_messages(uid, msgs)
    return {s["key"]: str(r.iri) for s, r in zip(sources, ingested, strict=True)}


def prepare(
    services: Services, uid: str, c: dict[str, Any], now: datetime
) -> tuple[dict[str, str], URIRef | None] | str:
    """The case's world for user ``uid``: its declared terms, its sources ingested first-hand
    and its setup drafted through the gate. Returns the source IRIs by key and the last setup
    memory, or why the setup was refused (the case is then broken)."""
    _declare(services, uid, c.get("declare", ()), now)
    keys = _ingest(services, uid, c["sources"])
    last: URIRef | None = None
    for step in c["setup"]:
        [item] = services.gate.draft(uid, [_resolve(step["draft"], keys, uid)]).items
        if item.outcome is Outcome.REFUSED or item.memory is None:
            return "setup refused: " + "; ".join(item.reasons)
        last = item.memory
        if step.get("pin"):
            services.lifecycle.pin(uid, last)
    return keys, last


def verdict(
    c: dict[str, Any], outcome: str, ok: bool, why: str = "", path: str = "draft"
) -> Verdict:
    """The verdict on ``c`` given kgmem's outcome, with both baselines judged from the case."""
    if outcome == "broken":
        return Verdict(
            c["id"], c["mode"], c["sub"], c["expect"], outcome, False, False, False, why, path
        )
    stored_all, stored_dedupe = True, not _duplicate(c)
    return Verdict(
        c["id"],
        c["mode"],
        c["sub"],
        c["expect"],
        outcome,
        ok,
        _baseline_right(c["expect"], stored_all),
        _baseline_right(c["expect"], stored_dedupe),
        "" if ok else why or outcome,
        path,
    )


def run_case(services: Services, uid: str, c: dict[str, Any], now: datetime) -> Verdict:
    """Run ``c`` as user ``uid`` (new, empty) through the foreground gate and judge kgmem
    and the baselines."""
    prepared = prepare(services, uid, c, now)
    if isinstance(prepared, str):
        return verdict(c, "broken", False, prepared)
    keys, last = prepared
    [item] = services.gate.draft(uid, [_resolve(c["proposal"], keys, uid)]).items
    ok = judge(services, uid, c["expect"], item, last)
    if not ok and c["expect"] == "catch" and aligned(services, uid, c, item):
        return verdict(c, ALIGNED, True)
    return verdict(c, item.outcome.value, ok, "; ".join(item.reasons))


def _predicates(c: dict[str, Any], uid: str) -> set[URIRef]:
    proposal = _resolve(c["proposal"], {}, uid)
    return {expand_term(claim["predicate"]) for claim in proposal.get("claims", [])}


def aligned(services: Services, uid: str, c: dict[str, Any], item: ItemResult) -> bool:
    """Whether ``c``'s proposal has an improvised predicate and ``item`` stored it only as
    declared terms: a memory that needs no term and whose claims use only properties the
    user had before the proposal (never the improvised one; see the module docstring)."""
    had = _had(services, uid, c)
    improvised = {p for p in _predicates(c, uid) if not had(p)}
    stored = {Outcome.ACTIVE, Outcome.PENDING, Outcome.DISCARDED, Outcome.MERGED}
    if not improvised or item.outcome not in stored or item.memory is None:
        return False
    record = services.lifecycle.get(uid, item.memory)
    used = {claim.predicate for claim in record.claims}
    return bool(used) and all(map(had, used)) and not record.needs_terms


def _had(services: Services, uid: str, c: dict[str, Any]) -> Callable[[URIRef], bool]:
    """Whether a term is a property the case user had before the proposal: one the
    effective ontology declares, and of the user's own only those the case declared (a term
    a consolidation pass declared for the proposal is new vocabulary, not an alignment)."""
    effective = services.ontology.effective(uid)
    own = {delta_term(uid, d["name"]) for d in c.get("declare", ())}

    def had(term: URIRef) -> bool:
        declared = effective.info(term).kind is TermKind.PROPERTY
        return declared and (term in own or not is_delta_term(uid, term))

    return had


def _status(services: Services, uid: str, memory: URIRef | None) -> MemoryStatus | None:
    return None if memory is None else services.lifecycle.get(uid, memory).status


def _subjects(services: Services, uid: str, memory: URIRef | None) -> set[URIRef]:
    if memory is None:
        return set()
    return {c.subject for c in services.lifecycle.get(uid, memory).claims}


def judge(services: Services, uid: str, expect: str, item: ItemResult, last: URIRef | None) -> bool:
    """Whether kgmem's ``item`` is what ``expect`` asks, ``last`` being the last setup memory."""
    o = item.outcome
    if expect == "keep":
        return o is Outcome.ACTIVE
    if expect == "refuse":
        return o is Outcome.REFUSED
    if expect == "catch":
        return o is Outcome.REFUSED or (o is Outcome.PENDING and bool(item.needs_terms))
    if expect == "fold":
        return o in {Outcome.DISCARDED, Outcome.MERGED} and item.memory == last
    if expect == "separate":
        return (
            o is Outcome.ACTIVE
            and item.memory != last
            and not _subjects(services, uid, item.memory) & _subjects(services, uid, last)
        )
    quarantined = (
        o is Outcome.QUARANTINED
        and last in item.contradicts
        and _status(services, uid, last) is MemoryStatus.ACTIVE
    )
    superseded = (
        o is Outcome.ACTIVE
        and last in item.superseded
        and _status(services, uid, last) is MemoryStatus.SUPERSEDED
    )
    if expect == "quarantine":
        return quarantined
    if expect == "supersede":
        return superseded
    weakened = o is Outcome.PENDING and last in item.weakened
    return quarantined or superseded or weakened  # contest


def _content(draft: dict[str, Any]) -> str:
    keep = {k: v for k, v in draft.items() if k not in {"evidence", "confidence"}}
    return json.dumps(keep, sort_keys=True, default=str)


def _duplicate(c: dict[str, Any]) -> bool:
    seen = {_content(step["draft"]) for step in c["setup"]}
    return _content(c["proposal"]) in seen


def _baseline_right(expect: str, stored: bool) -> bool:
    if expect in {"keep", "separate"}:
        return stored
    return not stored


# -- scores and the table ---------------------------------------------------------------


@dataclass
class Row:
    n: int = 0
    broken: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    kgmem: int = 0
    accept_all: int = 0
    dedupe: int = 0


def rows(verdicts: Sequence[Verdict]) -> dict[tuple[str, str, str, str], Row]:
    """One row per mode, sub-case, expectation and path, in the order first seen."""
    out: dict[tuple[str, str, str, str], Row] = defaultdict(Row)
    for v in verdicts:
        row = out[(v.mode, v.sub, v.expect, v.path)]
        if v.outcome == "broken":
            row.broken += 1
            continue
        row.n += 1
        row.outcomes[v.outcome] += 1
        row.kgmem += v.kgmem
        row.accept_all += v.accept_all
        row.dedupe += v.dedupe
    return out


def _rate(k: int, n: int) -> str:
    return f"{k / n:.3f}" if n else "  -  "


_SHORT_PATH = {"draft": "draft", "consolidation": "consol"}


def table(verdicts: Sequence[Verdict]) -> list[str]:
    """The confusion table: per mode, sub-case and path, kgmem's outcomes and each system's
    rate of right answers (a sub-case's paths on adjacent lines)."""
    short = {o: o[:5] for o in OUTCOMES}
    head = f"{'mode':<13} {'sub-case':<24} {'expect':<10} {'path':<6} {'n':>4} {'brk':>3} "
    head += " ".join(f"{short[o]:>5}" for o in OUTCOMES)
    head += f" | {'kgmem':>6} {'acc-all':>7} {'dedupe':>6}"
    lines = [head, "-" * len(head)]
    found = rows(verdicts)
    first: dict[tuple[str, str, str], int] = {}
    for mode, sub, expect, _ in found:
        first.setdefault((mode, sub, expect), len(first))
    mode_at = {m: i for i, m in enumerate(MODES)}
    path_at = {p: i for i, p in enumerate(PATHS)}

    def order(key: tuple[str, str, str, str]) -> tuple[int, int, int]:
        mode, sub, expect, path = key
        return mode_at[mode], first[(mode, sub, expect)], path_at.get(path, len(PATHS))

    for key in sorted(found, key=order):
        (mode, sub, expect, path), r = key, found[key]
        line = f"{mode:<13} {sub:<24} {expect:<10} {_SHORT_PATH.get(path, path):<6} "
        line += f"{r.n:>4} {r.broken:>3} "
        line += " ".join(f"{r.outcomes[o]:>5}" for o in OUTCOMES)
        line += (
            f" | {_rate(r.kgmem, r.n):>6} {_rate(r.accept_all, r.n):>7} {_rate(r.dedupe, r.n):>6}"
        )
        lines.append(line)
    return lines


def score(verdicts: Sequence[Verdict], system: str, mode: str, expects: set[str]) -> float:
    scored = [
        v for v in verdicts if v.mode == mode and v.expect in expects and v.outcome != "broken"
    ]
    if not scored:
        return float("nan")
    return sum(bool(getattr(v, system)) for v in scored) / len(scored)


SUMMARY = (
    ("true_kept", "true", {"keep"}),
    ("invention_caught", "invention", {"refuse"}),
    ("mislabel_caught", "mislabel", {"catch"}),
    ("restatement_folded", "restatement", {"fold"}),
    ("contradiction_handled", "contradiction", {"quarantine", "supersede", "contest"}),
)


def summary(
    verdicts: Sequence[Verdict], system: str = "kgmem", path: str | None = None
) -> dict[str, float]:
    """Each mode's rate of right answers (and ``false_merges``), over one path or all."""
    if path is not None:
        verdicts = [v for v in verdicts if v.path == path]
    out = {name: score(verdicts, system, mode, ex) for name, mode, ex in SUMMARY}
    separate = score(verdicts, system, "restatement", {"separate"})
    out["false_merges"] = 1.0 - separate if separate == separate else float("nan")
    return out


def worst(per_path: Sequence[dict[str, float]]) -> dict[str, float]:
    """Over paths: each mode's lowest rate, and the highest ``false_merges`` (a path that
    did not score a mode, nan, is left out; nan when none did)."""
    out: dict[str, float] = {}
    for name in per_path[0] if per_path else ():
        values = [s[name] for s in per_path if s[name] == s[name]]
        pick = max if name == "false_merges" else min
        out[name] = pick(values) if values else float("nan")
    return out


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", text)[:60]
