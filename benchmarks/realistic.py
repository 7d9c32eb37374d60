"""The realistic suite: does kgmem keep what is true, as a careful model writes it? (#23)

    .venv/bin/python benchmarks/realistic.py [--cases DIR|FILE] [--paths draft,consolidation]
        [--locomo ../shared/bench/locomo/locomo10.json] [--locomo-limit N] [--no-locomo]
        [--failures K] [--dump FILE.jsonl]

Conversations written for this suite (``benchmarks/realistic/``, one file per conversation:
personal life, family, work, software, health, travel, finance, ...) and the drafts a
careful model writes about them - short quotes, pronouns, first names, nicknames, a fact
stated across a sentence, confirmations, changes, procedures - each case TRUE, a LIE or
AMBIGUOUS, run through the write gate and through a consolidation pass whose recorded model
proposes the same draft (``realistic_run.py``); then, per conversation, what memory holds
after the whole feed of drafts (``realistic_state.py``). Plus LoCoMo observations rendered
as a model writes them (``realistic_locomo.py``), when ``../shared/bench`` is there: without
it the suite says so loudly and runs the conversations alone.

Conversation format ``kgmem-realistic/1``: one JSON object per file, with the keys

- ``format``: ``"kgmem-realistic/1"``; ``id``: unique; ``kind``: what the conversation is
  about (personal life, family, work, ...), one section of the results; ``about``: one line;
- ``chat``: the chat id; ``started`` (optional, ISO 8601): when the first message was said;
- ``messages``: the chat, in order, each ``{"role": "user"|"assistant", "text"}`` plus
  optional ``at`` (ISO 8601; default a minute after the message before) and ``speaker`` (a
  display name the host knows); message ``n`` is turn ``n``, cited ``chat:<chat>#<n>``;
- ``drafts``: named drafts, each in the REST batch-draft format (``kind``, ``title``,
  ``claims`` with ``subject``/``predicate``/``object`` or ``value``, ``entities``,
  ``evidence`` with ``source`` ``chat:<chat>#<turn>`` and a short verbatim ``quote``;
  procedural drafts may add ``steps`` and ``triggers``): what a careful model writes;
- ``cases``: each ``{"id", "phenomenon", "variant", "mode", "expect", "proposal",
  "reading"}`` plus optional ``setup`` (names of drafts already known, drafted through the
  gate first in order; one refused makes the case *broken*, never scored) and ``also``:

  - ``phenomenon``: ``a``..``j`` of issue #23 (:data:`realistic_data.PHENOMENA`);
  - ``variant``: ``true`` (a careful human reading the chat agrees), ``lie`` (an invented
    value, number, name or date, a mislabelled type, a restatement posing as new, a change
    no one said) or ``ambiguous`` (two readings: the case holds, never guesses);
  - ``mode`` (what it is scored as) and ``expect`` (what kgmem must do): ``true`` ->
    ``keep`` (active) or ``separate`` (active, apart from the last setup memory);
    ``invention`` -> ``refuse``; ``mislabel`` -> ``catch`` (refused, or pending on a
    vocabulary proposal, or an improvised predicate stored as a declared term); ``restatement``
    -> ``fold`` (discarded or merged into the last setup memory); ``change`` -> ``close``
    (active, the last setup memory's valid time closed) or ``stand`` (the last setup memory
    still active and open); ``ambiguous`` -> ``hold`` (pending, refused or quarantined, with
    a reason);
  - ``proposal``: a draft's name or a draft; ``reading``: why a careful human expects that;
  - ``also``: more that must hold: ``confirmed``, ``steps``, ``in_feed``, ``adjudicated``
    (see ``realistic_run.py``);
- ``feed``: names of drafts, in order: what the model writes over the whole conversation;
- ``checks``: the end state after the feed (see ``realistic_state.py``): ``one_entity``,
  ``alias``, ``apart``, ``active``, ``closed``, ``current``, ``steps``, ``profile``.

Each case and each feed runs as its own user, on one store per path. Prints, per phenomenon,
variant and path, kgmem's outcomes and the rate of right answers; per phenomenon the scores;
the end-state checks per conversation; then per path ``<path>_true_kept=`` ... and over the
paths (each score's lowest) ``true_kept=``, ``invention_caught=``, ``mislabel_caught=``,
``restatement_folded=``, ``change_closed=``, ``ambiguity_held=``, ``extra_checks_passed=``
(the ``also`` checks), ``endstate_passed=``, and
last ``realistic_true_kept=``, ``realistic_invention_caught=``, ``realistic_min=`` (the
lowest score). ``--dump FILE`` writes every compiled case (LoCoMo's too) as JSON lines and
stops; ``--cases`` runs other conversation files.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# before DSPy (and litellm) load: nothing may reach the network
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from correctness_core import PATHS
from correctness_pass import CaseModel, consolidation
from realistic_data import MODES, PHENOMENA, compile_cases, read_conversations
from realistic_locomo import locomo_cases
from realistic_run import Judged, run_draft_case, run_pass_case
from realistic_state import CheckResult, checks, feed_by_draft, feed_by_pass
from recall_support import open_services

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
HERE = Path(__file__).resolve().parent
SCORES = (*(name for name, _ in MODES.values()), "extra_checks_passed", "endstate_passed")
OUTCOMES = ("active", "pending", "merged", "discarded", "quarantined", "refused", "aligned")
OUTCOMES += ("failed", "broken")


def run_path(
    path: str, home: Path, cases: Sequence[dict[str, Any]], convs: Sequence[dict[str, Any]]
) -> tuple[list[Judged], list[CheckResult]]:
    """Every case, then every conversation's feed and checks, on ``path``."""
    services, _ = open_services(home, NOW)
    try:
        if path == "draft":
            judged = [run_draft_case(services, f"case{n}", c, NOW) for n, c in enumerate(cases)]
            state: list[CheckResult] = []
            for n, conv in enumerate(convs):
                memories = feed_by_draft(services, f"feed{n}", conv, NOW)
                state += checks(services, f"feed{n}", conv, memories, path)
            return judged, state
        model = CaseModel()
        pipeline = consolidation(services, model)
        judged = [
            run_pass_case(services, pipeline, model, f"pass{n}", c, NOW)
            for n, c in enumerate(cases)
        ]
        state = []
        for n, conv in enumerate(convs):
            memories = feed_by_pass(services, pipeline, model, f"pfeed{n}", conv, NOW)
            state += checks(services, f"pfeed{n}", conv, memories, path)
        return judged, state
    finally:
        services.close()


# -- the tables ---------------------------------------------------------------------------


def _rate(k: int, n: int) -> str:
    return f"{k / n:.3f}" if n else "  -  "


def _label(phenomenon: str) -> str:
    return PHENOMENA.get(phenomenon, "LoCoMo observations")[:26]


def outcome_table(judged: Sequence[Judged]) -> list[str]:
    head = (
        f"{'':<2} {'phenomenon':<26} {'variant':<9} {'path':<6} {'n':>4} {'right':>5} {'rate':>6} |"
    )
    head += " ".join(f"{o[:5]:>5}" for o in OUTCOMES)
    lines = [head, "-" * len(head)]
    rows: dict[tuple[str, str, str], list[Judged]] = defaultdict(list)
    for j in judged:
        rows[(j.phenomenon, j.variant, j.path)].append(j)
    order = {p: i for i, p in enumerate([*PHENOMENA, "locomo"])}
    variants = {"true": 0, "lie": 1, "ambiguous": 2}
    for key in sorted(rows, key=lambda k: (order[k[0]], variants[k[1]], PATHS.index(k[2]))):
        group, (phen, variant, path) = rows[key], key
        scored = [j for j in group if j.outcome != "broken"]
        right = sum(j.right for j in scored)
        counts = Counter(j.outcome for j in group)
        line = f"{phen if phen != 'locomo' else '-':<2} {_label(phen):<26} {variant:<9} "
        line += f"{path[:6]:<6} {len(scored):>4} {right:>5} {_rate(right, len(scored)):>6} |"
        line += " ".join(f"{counts[o]:>5}" for o in OUTCOMES)
        lines.append(line)
    return lines


def _mode_score(judged: Sequence[Judged], mode: str) -> tuple[int, int]:
    scored = [j for j in judged if j.mode == mode and j.outcome != "broken"]
    return sum(j.ok for j in scored), len(scored)


def score_table(judged: Sequence[Judged], paths: Sequence[str]) -> list[str]:
    names = [name for name, _ in MODES.values()]
    head = f"{'':<2} {'phenomenon':<26} {'path':<6} " + " ".join(f"{n[:18]:>18}" for n in names)
    lines = [head, "-" * len(head)]
    for phen in [*PHENOMENA, "locomo"]:
        for path in paths:
            mine = [j for j in judged if j.phenomenon == phen and j.path == path]
            if not mine:
                continue
            cells = []
            for mode in MODES:
                k, n = _mode_score(mine, mode)
                cells.append(f"{f'{k}/{n} {_rate(k, n)}' if n else '-':>18}")
            label = _label(phen)
            lines.append(
                f"{phen if phen != 'locomo' else '-':<2} {label:<26} {path[:6]:<6} "
                + " ".join(cells)
            )
    return lines


def summary(judged: Sequence[Judged], state: Sequence[CheckResult], path: str) -> dict[str, float]:
    mine = [j for j in judged if j.path == path]
    out = {}
    for mode, (name, _) in MODES.items():
        k, n = _mode_score(mine, mode)
        out[name] = k / n if n else math.nan
    extra = [j.extras for j in mine if j.extras is not None and j.outcome != "broken"]
    out["extra_checks_passed"] = sum(extra) / len(extra) if extra else math.nan
    checked = [s for s in state if s.path == path and s.ok is not None]
    out["endstate_passed"] = (
        sum(bool(s.ok) for s in checked) / len(checked) if checked else math.nan
    )
    return out


def _line(name: str, value: float) -> str:
    return f"{name}={value:.3f}" if not math.isnan(value) else f"{name}=nan"


def report(
    judged: Sequence[Judged],
    state: Sequence[CheckResult],
    paths: Sequence[str],
    failures: int,
    say: Callable[[str], None] = print,
) -> dict[str, float]:
    """Print the tables and scores; the scores over the paths (each one's lowest)."""
    for line in outcome_table(judged):
        say(line)
    say("")
    for line in score_table(judged, paths):
        say(line)
    say("")
    say("end-state checks (passed/total per conversation):")
    for conv in dict.fromkeys(s.conversation for s in state):
        cells = []
        for path in paths:
            mine = [s for s in state if s.conversation == conv and s.path == path]
            run = [s for s in mine if s.ok is not None]
            na = f" ({len(mine) - len(run)} not run)" if len(run) < len(mine) else ""
            cells.append(f"{path} {sum(bool(s.ok) for s in run)}/{len(run)}{na}")
        say(f"  {conv:<28} " + "  ".join(cells))
    wrong = [j for j in judged if not j.right and j.outcome != "broken"]
    if failures:
        say(f"\nkgmem wrong ({len(wrong)}), first {failures} per phenomenon, variant and path:")
        shown: Counter[tuple[str, str, str]] = Counter()
        for j in wrong:
            at = (j.phenomenon, j.variant, j.path)
            if shown[at] < failures:
                shown[at] += 1
                say(f"  {j.path} {j.id} [{j.expect} -> {j.outcome}] {j.why[:220]}")
        bad = [s for s in state if s.ok is False]
        say(f"\nend-state checks failed ({len(bad)}):")
        for s in bad[: failures * 10]:
            say(f"  {s.path} {s.conversation} {s.check}: {s.why[:160]}")
    broken = [j for j in judged if j.outcome == "broken"]
    if broken:
        say(f"\nbroken cases, never scored ({len(broken)}):")
        for j in broken:
            say(f"  {j.path} {j.id}: {j.why[:200]}")
    skipped = [s for s in state if s.ok is None]
    if skipped:
        say(f"\nend-state checks not run ({len(skipped)}):")
        for s in skipped:
            say(f"  {s.path} {s.conversation} {s.check}: {s.why}")
    say("")
    per_path = []
    for path in paths:
        scores = summary(judged, state, path)
        per_path.append(scores)
        for name, value in scores.items():
            say(_line(f"{path}_{name}", value))
    worst = {
        name: min((s[name] for s in per_path if not math.isnan(s[name])), default=math.nan)
        for name in SCORES
    }
    for name, value in worst.items():
        say(_line(name, value))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    bench = HERE.parents[1] / "shared" / "bench"
    parser.add_argument("--cases", type=Path, default=HERE / "realistic", help="conversations")
    parser.add_argument("--locomo", type=Path, default=bench / "locomo" / "locomo10.json")
    parser.add_argument("--locomo-limit", type=int, default=300, help="observations (0: all)")
    parser.add_argument("--no-locomo", action="store_true", help="the conversations alone")
    parser.add_argument("--failures", type=int, default=3, help="wrong cases shown per row")
    parser.add_argument("--paths", default=",".join(PATHS), help="of " + ", ".join(PATHS))
    parser.add_argument("--dump", type=Path, help="write every case (JSON lines) and stop")
    parser.add_argument("--only", default="", help="the cases whose id holds this text")
    args = parser.parse_args()
    paths = tuple(p.strip() for p in args.paths.split(",") if p.strip())
    if not paths or set(paths) - set(PATHS):
        parser.error(f"--paths takes a comma-separated list of {', '.join(PATHS)}")
    convs = read_conversations(args.cases)
    cases = [c for conv in convs for c in compile_cases(conv)]
    per = Counter(c["phenomenon"] for c in cases)
    print(
        f"realistic: {len(convs)} conversations, {len(cases)} cases ("
        + ", ".join(f"{p}: {per[p]}" for p in PHENOMENA)
        + f"), {sum(len(c.get('checks', [])) for c in convs)} end-state checks"
    )
    if args.no_locomo:
        print("locomo: left out (--no-locomo)")
    elif not args.locomo.is_file():
        print(f"\n!!! LoCoMo NOT RUN: {args.locomo} is missing (../shared/bench absent?);")
        print("!!! the scores below are the conversations' alone.\n")
    else:
        found, counts = locomo_cases(args.locomo, args.locomo_limit)
        print(
            f"locomo: {counts['used']} of {counts['found']} observations with a source turn"
            f" ({counts['unsourced']} name no turn of their conversation), none skipped;"
            f" {counts['paraphrase']} share no words with their turn; {len(found)} cases;"
            f" {counts['reviewed']} reviewed, {counts['misattributed']} of them found not to"
            " state their observation (scored as misattributions to refuse)"
        )
        cases += found
    if args.only:
        cases = [c for c in cases if args.only in c["id"]]
        print(f"only the {len(cases)} cases whose id holds {args.only!r}")
    if args.dump is not None:
        lines = [json.dumps(c, ensure_ascii=False) for c in cases]
        args.dump.write_text("".join(line + "\n" for line in lines))
        print(f"wrote {len(lines)} cases to {args.dump}")
        return
    judged: list[Judged] = []
    state: list[CheckResult] = []
    timings = []
    with tempfile.TemporaryDirectory(prefix="kgmem-realistic-") as tmp:
        for path in paths:
            started = time.perf_counter()
            j, s = run_path(path, Path(tmp) / path, cases, convs)
            judged, state = judged + j, state + s
            took = time.perf_counter() - started
            timings.append(f"{path}: {len(cases)} cases, {len(convs)} feeds in {took:.1f}s")
    worst = report(judged, state, paths, args.failures)
    for line in timings:
        print(line)
    rated = [v for v in worst.values() if not math.isnan(v)]
    print(_line("realistic_true_kept", worst["true_kept"]))
    print(_line("realistic_invention_caught", worst["invention_caught"]))
    print(_line("realistic_min", min(rated) if rated else math.nan))


if __name__ == "__main__":
    main()
