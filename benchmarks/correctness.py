"""The unreliable-author suite: does kgmem refuse what a lying or careless model proposes?

    .venv/bin/python benchmarks/correctness.py [--locomo ../shared/bench/locomo/locomo10.json]
        [--dialogre ../shared/bench/dialogre/en/dev.json] [--limit N] [--cases FILE.jsonl]
        [--dump FILE.jsonl] [--failures K] [--paths draft,consolidation]
        [--consolidation-limit K]

Builds labelled cases and runs each, as its own user on an on-disk store built like the
server's (one store per path), through two real paths:

- ``draft``, the foreground write path: sources are ingested first-hand with
  ``services.sources.ingest_messages``, then ``services.gate.draft`` decides the proposal (a
  structured draft with claims, entities and evidence). No language model is in the path.
- ``consolidation``, the background path (``correctness_pass.py``): the same sources and
  setup, then a real consolidation pass over the conversation (extract -> ground -> classify
  -> resolve -> assemble -> reconcile -> validate -> commit -> author) whose memory model is
  recorded: ``ExtractClaims`` answers the proposal rendered as model output (the same
  claims, quotes, entity names, aliases and types: a type as an ``rdf:type`` claim on the
  same quotes), every other signature answers neutrally. Every mode runs on it. It runs on
  a deterministic subset: at most ``--consolidation-limit`` cases per sub-case (default 100;
  0 for all), the first in a shuffle seeded with the sub-case's name, which the output says.

Cases (the format is documented in ``correctness_core.py``; ``--dump`` writes the built-in
ones in it, ``--cases`` runs a file of them instead):

- LoCoMo (``observation`` facts with their gold ``dia_id``): *true* - the fact as a claim
  about its speaker (``schema:description``; the value is the longest phrase the fact shares
  with its gold turn, the quote the turn's sentence holding it, which must speak in the first
  person; a fact is skipped, with every case built from it, when the turn negates its phrase -
  a negation cue of kgmem's right before the phrase or one word before it, in its clause: "I
  don't have pets", "I'm not gonna let" (a cue further off is left to kgmem: "can't wait
  to") - or the quote is a question (opens with an auxiliary or a wh-word and ends with
  "?"), since neither states the fact; the counts are printed);
  *invention* - a quote from another conversation, a quote altered to state another fact's
  value, a verbatim quote with another fact's value, a verbatim quote with a changed number,
  the turn as a recall-tool (memory_search) result, the observation itself as agent prose;
  *mislabel* - an improvised predicate, the speaker typed as an organization after being
  established as a person; *restatement* - the claim reworded, repeated in a later turn, and
  sent again unchanged.
- DialogRE (``per:alternate_names`` between two real names): *restatement* - a claim about a
  person under a gold alias the person was recorded with.
- A synthetic world (people, employers): every mode, including domain/range violations,
  two people who share a first name (must stay apart), a lower-authority value against a
  user fact, a value against a pinned fact, a newer authoritative value, an explicit
  negation, and one date written two ways.

Prints the confusion table (kgmem's outcomes per mode, sub-case and path, and the rate of
right answers for kgmem and the accept-all and exact-dedupe baselines; a baseline sees only
the proposal, so it scores the same on both paths but for the subset), then per path the
baselines' scores and kgmem's ``<path>_false_merges=``, ``<path>_true_kept=`` ..., then over
the paths run (each mode's lowest rate, the highest false-merge rate) ``false_merges=``,
``true_kept=``, ``invention_caught=``, ``mislabel_caught=``, ``restatement_folded=``,
``contradiction_handled=`` and last ``correctness_min=``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# before DSPy (and litellm) load: nothing may reach the network
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from correctness_core import (
    PATHS,
    Verdict,
    case,
    read_cases,
    run_case,
    summary,
    table,
    worst,
    write_cases,
)
from correctness_pass import CaseModel, consolidation, run_pass_case
from correctness_world import synthetic_cases
from recall_support import open_services

from kgmem.memory.surface import analyse

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
CONSOLIDATION_LIMIT = 100  # cases per sub-case on the consolidation path, by default
_STOP = frozenset(
    re.findall(
        r"\S+",
        "a an the and or but to of in on at for with from by my me i i'm i've it its is was were "
        "be been am are this that so very really just too also her his she he they them their we "
        "our you your about as up out",
    )
)
_WORD = re.compile(r"[A-Za-z0-9']+")
_FIRST_PERSON = re.compile(r"\b(I|I'm|I've|I'll|I'd|my|me)\b")
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_ASKING = frozenset(
    {"can", "could", "did", "do", "does", "have", "has", "is", "are", "was", "were", "will",
     "would", "should", "shall", "may", "might", "must", "mind", "what", "how", "why", "where",
     "when", "who", "which"}
)  # fmt: skip
_NEGATION_REACH = 2  # a cue right before a phrase, or one word before it, negates it
_PREDICATES = ("kgm:attended", "kgm:feelsAbout", "kgm:plansTo", "kgm:enjoys", "kgm:sharedPhotoOf")


def _claims(subject: str, predicate: str, value: str) -> list[dict[str, Any]]:
    return [{"subject": subject, "predicate": predicate, "value": value}]


def _draft(
    title: str, claims: list[dict[str, Any]], source: str, quote: str, **extra: Any
) -> dict[str, Any]:
    return {
        "kind": "semantic",
        "title": title[:200],
        "confidence": 0.9,
        "claims": claims,
        "evidence": [{"source": source, "quote": quote}],
        **extra,
    }


def _negated(turn: str, start: int) -> bool:
    """Whether the turn negates the phrase at ``turn[start:]``: one of kgmem's negation cues,
    in the phrase's clause, right before it or one word before it ("I don't have pets").
    Further off, a cue is often no negation of the phrase ("I can't wait to surprise them",
    "long time no chat - I adopted"), and after it, it negates something else ("I got a no
    for the job, which wasn't great"): the case stays, and kgmem's reading is tested."""
    tokens = analyse(turn).tokens
    first = next(i for i, t in enumerate(tokens) if t.start >= start)
    before = tokens[max(0, first - _NEGATION_REACH) : first]
    return any(t.negates and t.clause == tokens[first].clause for t in before)


def _asks(sentence: str) -> bool:
    """Whether ``sentence`` is a question, which states nothing: "Can you tell me more about
    the values they gave you?" (it opens with an auxiliary or a wh-word and ends with "?").
    A statement a question is tacked onto is not one: "I started eating healthier - what's
    new with you?" states the first part, and how kgmem reads it is tested."""
    words = _WORD.findall(sentence)
    return sentence.rstrip().endswith("?") and bool(words) and words[0].lower() in _ASKING


def _value_in(turn: str, fact: str) -> tuple[str, str, str] | None:
    """The longest run of the turn's words that the fact also uses (at least one of them not
    a stop word, stop words trimmed from both ends), the turn's sentence holding it, if that
    sentence speaks in the first person, and why no true case can be built on it: the turn
    negates the run there (``negated``), the sentence is a question (``asked``), or ""."""
    fact_words = {w.lower() for w in _WORD.findall(fact)}
    best: tuple[int, int, int] | None = None  # (length, start, end) in characters
    for sent in _SENTENCE.finditer(turn):
        if not _FIRST_PERSON.search(sent.group()):
            continue
        words = list(_WORD.finditer(sent.group()))
        i = 0
        while i < len(words):
            j = i
            while j < len(words) and words[j].group().lower() in fact_words:
                j += 1
            run = words[i:j]
            while run and run[0].group().lower() in _STOP:
                run = run[1:]
            while run and run[-1].group().lower() in _STOP:
                run = run[:-1]
            if run and (len(run) >= 2 or len(run[0].group()) >= 5):
                start = sent.start() + run[0].start()
                end = sent.start() + run[-1].end()
                if best is None or end - start > best[0]:
                    best = (end - start, start, end)
            i = max(j, i + 1)
    if best is None:
        return None
    _, start, end = best
    sent = next(s for s in _SENTENCE.finditer(turn) if s.start() <= start < s.end())
    quote = sent.group().strip()
    why = "negated" if _negated(turn, start) else "asked" if _asks(quote) else ""
    return turn[start:end], quote, why


def _locomo_facts(path: Path, limit: int | None) -> tuple[list[dict[str, Any]], Counter[str]]:
    """The facts a true case can be built from (at most ``limit``), and how many were found
    (``found``) and skipped, by why (``negated``, ``asked``: see :func:`_value_in`). They are
    skipped after the shuffle, so the others keep their places in it."""
    facts = []
    for sample in json.loads(path.read_text()):
        conv = sample["conversation"]
        turns = {
            t["dia_id"]: t
            for key, value in conv.items()
            if re.fullmatch(r"session_\d+", key) and isinstance(value, list)
            for t in value
        }
        for session in sorted(sample.get("observation", {})):
            for speaker, items in sample["observation"][session].items():
                for text, dia in items:
                    for d in re.split(r"[;,\s]+", str(dia)):
                        turn = turns.get(d)
                        if turn is None or turn.get("speaker") != speaker:
                            continue
                        found = _value_in(turn["text"], text)
                        if found is not None:
                            value, quote, why = found
                            facts.append(
                                {
                                    "conv": sample["sample_id"],
                                    "dia": d,
                                    "speaker": speaker,
                                    "fact": text,
                                    "turn": turn["text"],
                                    "value": value,
                                    "quote": quote,
                                    "skip": why,
                                }
                            )
                        break
    random.Random(8).shuffle(facts)
    counts = Counter(f["skip"] for f in facts if f["skip"]) + Counter(found=len(facts))
    kept = [f for f in facts if not f.pop("skip")]
    return (kept[:limit] if limit else kept), counts


def _stems(text: str) -> set[str]:
    """Content words, crudely stemmed, so another fact's value counts as unstated only when
    the quote shares none of its words in any inflection ("dreams" is stated by "dream")."""
    words = (w.lower() for w in _WORD.findall(text))
    return {w[:5] for w in words if w not in _STOP and len(w) > 2}


def _change_number(quote: str) -> str | None:
    m = re.search(r"\b(\d+)\b(\s+[A-Za-z]+)?", quote)
    if m is None:
        return None
    return str(int(m.group(1)) + 1) + (m.group(2) or "")


def locomo_cases(path: Path, limit: int | None) -> list[dict[str, Any]]:
    facts, counts = _locomo_facts(path, limit)
    print(
        f"locomo: of {counts['found']} facts found, skipped {counts['negated']} whose turn"
        f" negates the phrase they share with it and {counts['asked']} whose quote is a"
        f" question; {len(facts)} used"
    )
    out: list[dict[str, Any]] = []
    for n, f in enumerate(facts):
        sp, gold = f["speaker"], {"key": "gold", "role": "user", "text": f["turn"]}
        gold["speaker"] = sp
        cid = f"{f['conv']}/{f['dia']}/{n}"
        true = _draft(f["fact"], _claims(sp, "schema:description", f["value"]), "$gold", f["quote"])
        true["entities"] = [{"name": sp, "types": ["schema:Person"]}]
        out.append(case(f"true/{cid}", "true", "locomo_observation", [gold], true, "keep"))
        other = facts[(n + 1) % len(facts)]
        same_speaker = next(
            (
                g
                for g in facts[n + 1 :] + facts[:n]
                if g["speaker"] == sp and not _stems(g["value"]) & _stems(f["quote"])
            ),
            None,
        )
        if other["conv"] != f["conv"]:
            lie = dict(true, evidence=[{"source": "$gold", "quote": other["quote"]}])
            out.append(
                case(f"inv-foreign/{cid}", "invention", "foreign_quote", [gold], lie, "refuse")
            )
        if same_speaker is not None:
            v = same_speaker["value"]
            altered = f["quote"].replace(f["value"], v)
            lie = _draft(f["fact"], _claims(sp, "schema:description", v), "$gold", altered)
            out.append(
                case(f"inv-altered/{cid}", "invention", "altered_quote", [gold], lie, "refuse")
            )
            lie = _draft(f["fact"], _claims(sp, "schema:description", v), "$gold", f["quote"])
            out.append(
                case(f"inv-unstated/{cid}", "invention", "unstated_value", [gold], lie, "refuse")
            )
        changed = _change_number(f["quote"])
        if changed is not None:
            lie = _draft(f["fact"], _claims(sp, "schema:description", changed), "$gold", f["quote"])
            out.append(
                case(f"inv-number/{cid}", "invention", "changed_number", [gold], lie, "refuse")
            )
        recall = {
            "key": "recall",
            "role": "tool",
            "text": f"memory_search: {f['turn']}",
            "tool_name": "memory_search",
            "tool_outcome": "success",
        }
        lie = dict(true, evidence=[{"source": "$recall", "quote": f["quote"]}])
        out.append(
            case(f"inv-recall/{cid}", "invention", "recall_tool_quote", [recall], lie, "refuse")
        )
        m = re.search(re.escape(f["value"]), f["fact"], re.IGNORECASE)
        if m is not None:
            prose = {"key": "agent", "role": "assistant", "text": f["fact"]}
            lie = _draft(
                f["fact"], _claims(sp, "schema:description", m.group()), "$agent", f["fact"]
            )
            out.append(case(f"inv-agent/{cid}", "invention", "agent_prose", [prose], lie, "refuse"))
        pred = _PREDICATES[n % len(_PREDICATES)]
        bad = dict(true, claims=_claims(sp, pred, f["value"]))
        out.append(
            case(f"mis-pred/{cid}", "mislabel", "improvised_predicate", [gold], bad, "catch")
        )
        bad = dict(true, entities=[{"name": sp, "types": ["schema:Organization"]}])
        bad["title"] = f"{sp} (organization): {f['value']}"
        out.append(
            case(f"mis-disjoint/{cid}", "mislabel", "person_as_org", [gold], bad, "catch", [true])
        )
        again = dict(true, title=f"{sp}: {f['quote']}"[:200])
        out.append(
            case(f"re-reword/{cid}", "restatement", "reworded", [gold], again, "fold", [true])
        )
        later = {"key": "later", "role": "user", "text": f"As I said before, {f['quote']}"}
        later["speaker"] = sp
        again = dict(true, evidence=[{"source": "$later", "quote": f["quote"]}])
        out.append(
            case(
                f"re-evidence/{cid}",
                "restatement",
                "new_evidence",
                [gold, later],
                again,
                "fold",
                [true],
            )
        )
        out.append(
            case(f"re-exact/{cid}", "restatement", "exact_repeat", [gold], true, "fold", [true])
        )
    return out


_ORGS = ("Northwind", "Initech", "Umbrella Labs", "Vandelay Industries", "Hooli", "Stark Works")


def dialogre_cases(path: Path, limit: int | None) -> list[dict[str, Any]]:
    """A fact recorded about a person with their gold alias, then the same fact under the
    alias: the second must fold into the first."""
    pairs: list[tuple[str, str]] = []
    for dialogue in json.loads(path.read_text()):
        names: dict[str, set[str]] = {}
        for r in dialogue[1]:
            if "per:alternate_names" in r["r"] and r.get("y_type") == "PER":
                names.setdefault(r["x"], set()).add(r["y"])
        for x, ys in names.items():
            group = sorted(({x} | ys) - {n for n in ys | {x} if n.startswith("Speaker")})
            full = [g for g in group if " " in g]
            if full:
                pairs += [(full[0], g) for g in group if g != full[0]]
    pairs = sorted(set(pairs))
    random.Random(8).shuffle(pairs)
    out = []
    for n, (name, alias) in enumerate(pairs[:limit]):
        org = _ORGS[n % len(_ORGS)]
        first = {"key": "m1", "role": "user", "text": f"I work at {org}.", "speaker": name}
        told = {
            "key": "m2",
            "role": "user",
            "text": f"{alias} works at {org}.",
            "speaker": "Reader",
        }
        entities = [{"name": org, "types": ["schema:Organization"]}]
        setup = _draft(
            f"{name} works at {org}",
            [{"subject": name, "predicate": "schema:worksFor", "object": org}],
            "$m1",
            f"I work at {org}",
            entities=[{"name": name, "types": ["schema:Person"], "aliases": [alias]}, *entities],
        )
        proposal = _draft(
            f"{alias} works at {org}",
            [{"subject": alias, "predicate": "schema:worksFor", "object": org}],
            "$m2",
            f"{alias} works at {org}",
            entities=entities,
        )
        out.append(
            case(
                f"re-alias/{n}",
                "restatement",
                "dialogre_alias",
                [first, told],
                proposal,
                "fold",
                [setup],
            )
        )
    return out


def _line(name: str, value: float) -> str:
    return f"{name}={value:.3f}" if not math.isnan(value) else f"{name}=nan"


def sample(cases: list[dict[str, Any]], per_sub: int) -> list[dict[str, Any]]:
    """At most ``per_sub`` cases of each mode and sub-case (all when 0): the first of a
    shuffle seeded with the sub-case's name, in their original order."""
    if per_sub <= 0:
        return list(cases)
    groups: dict[tuple[str, str], list[int]] = {}
    for n, c in enumerate(cases):
        groups.setdefault((c["mode"], c["sub"]), []).append(n)
    chosen: set[int] = set()
    for (mode, sub), members in groups.items():
        random.Random(f"{mode}/{sub}").shuffle(members)
        chosen.update(members[:per_sub])
    return [c for n, c in enumerate(cases) if n in chosen]


def _draft_path(home: Path, cases: list[dict[str, Any]]) -> list[Verdict]:
    services, _ = open_services(home, NOW)
    try:
        return [run_case(services, f"case{n}", c, NOW) for n, c in enumerate(cases)]
    finally:
        services.close()


def _consolidation_path(home: Path, cases: list[dict[str, Any]]) -> list[Verdict]:
    services, _ = open_services(home, NOW)
    model = CaseModel()
    pipeline = consolidation(services, model)
    try:
        return [
            run_pass_case(services, pipeline, model, f"pass{n}", c, NOW)
            for n, c in enumerate(cases)
        ]
    finally:
        services.close()


def run(
    cases: list[dict[str, Any]],
    failures: int,
    paths: tuple[str, ...] = PATHS,
    consolidation_limit: int = CONSOLIDATION_LIMIT,
) -> list[Verdict]:
    verdicts: list[Verdict] = []
    timings = []
    with tempfile.TemporaryDirectory(prefix="kgmem-correctness-") as tmp:
        for path in paths:
            chosen = cases if path == "draft" else sample(cases, consolidation_limit)
            started = time.perf_counter()
            if path == "draft":
                verdicts += _draft_path(Path(tmp) / path, chosen)
            else:
                verdicts += _consolidation_path(Path(tmp) / path, chosen)
            seconds = time.perf_counter() - started
            subset = "" if len(chosen) == len(cases) else f" of {len(cases)}"
            if path == "consolidation" and subset:
                subset += f" (at most {consolidation_limit} per sub-case, seeded by its name)"
            timings.append(f"{path}: {len(chosen)}{subset} cases in {seconds:.1f}s")
    for line in table(verdicts):
        print(line)
    print()
    for line in timings:
        print(line)
    wrong = [v for v in verdicts if not v.kgmem]
    if failures and wrong:
        print(f"\nkgmem wrong ({len(wrong)}), first {failures} per sub-case and path:")
        shown: dict[tuple[str, str], int] = {}
        for v in wrong:
            at = (v.sub, v.path)
            if shown.get(at, 0) < failures:
                shown[at] = shown.get(at, 0) + 1
                print(f"  {v.path} {v.id} [{v.expect} -> {v.outcome}] {v.why[:200]}")
    print()
    for path in paths:
        for system in ("accept_all", "dedupe"):
            s = summary(verdicts, system, path)
            print(f"{path} {system}: " + " ".join(_line(k, v) for k, v in s.items()))
    per_path = []
    for path in paths:
        scores = summary(verdicts, path=path)
        per_path.append(scores)
        print(_line(f"{path}_false_merges", scores["false_merges"]))
        for name, value in scores.items():
            if name != "false_merges":
                print(_line(f"{path}_{name}", value))
    scores = worst(per_path)
    print(_line("false_merges", scores.pop("false_merges")))
    for name, value in scores.items():
        print(_line(name, value))
    rated = [v for v in scores.values() if v == v]
    print(_line("correctness_min", min(rated) if rated else float("nan")))
    return verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    bench = Path(__file__).resolve().parents[2] / "shared" / "bench"
    parser.add_argument("--locomo", type=Path, default=bench / "locomo" / "locomo10.json")
    parser.add_argument("--dialogre", type=Path, default=bench / "dialogre" / "en" / "dev.json")
    parser.add_argument("--limit", type=int, default=300, help="LoCoMo facts / DialogRE pairs")
    parser.add_argument("--cases", type=Path, help="run these cases (JSONL) instead")
    parser.add_argument("--dump", type=Path, help="write the built-in cases (JSONL) and stop")
    parser.add_argument("--failures", type=int, default=3, help="wrong cases shown per sub-case")
    parser.add_argument(
        "--paths",
        default=",".join(PATHS),
        help=f"comma-separated paths to run, of {', '.join(PATHS)}",
    )
    parser.add_argument(
        "--consolidation-limit",
        type=int,
        default=CONSOLIDATION_LIMIT,
        help="consolidation path: at most this many cases per sub-case (0: all)",
    )
    args = parser.parse_args()
    paths = tuple(p.strip() for p in args.paths.split(",") if p.strip())
    if not paths or set(paths) - set(PATHS):
        parser.error(f"--paths takes a comma-separated list of {', '.join(PATHS)}")
    if args.cases is not None:
        cases = read_cases(args.cases)
    else:
        cases = synthetic_cases()
        cases += locomo_cases(args.locomo, args.limit)
        cases += dialogre_cases(args.dialogre, args.limit)
    if args.dump is not None:
        print(f"wrote {write_cases(args.dump, cases)} cases to {args.dump}")
        return
    run(cases, args.failures, paths, args.consolidation_limit)


if __name__ == "__main__":
    main()
