"""LongMemEval retrieval recall: does memory_search find the sessions that answer each question?

    .venv/bin/python benchmarks/longmemeval.py --data ../shared/bench/longmemeval/s_cleaned_subset
                                               [--questions N] [--write-at session|question]
                                               [--ablation]

``--data`` is a directory of per-question JSON files (one LongMemEval instance each) or one
JSON file holding a list of instances (``longmemeval_s``/``_m``/``_oracle``). The oracle file
holds only each question's evidence sessions, so its session recall is trivially high (every
session retrieved is gold); only its turn recall and MRR say anything there.

Each question is one user (``lme-<question_id>``) with its own haystack. Session by session,
in date order (a session id repeated in a haystack is written once), every turn is ingested as a
message of the session's chat with its own role (user or assistant), at the session's date plus
one minute per turn index, and drafted through the write gate as an episodic memory quoting the
whole turn (a turn over 20,000 characters is quoted by its opening), about its speaker ("User"
or "Assistant"). The process's clock stands at each session's time while it is written
(``--write-at question``: at the question's date throughout), and at the question's date when
``memory_search`` runs within that user for the question, asking for 100 hits (its most).
No language model is anywhere in the path.

Assistant turns: the gate never activates a memory grounded only in an assistant message
(agent prose needs independent first-hand support), so those memories land ``pending`` (see
the outcomes line) and a default search, which reads only active memories, would never return
them. LongMemEval asks about what the assistant said (single-session-assistant), so the search
here asks for ``statuses=("active", "pending")`` explicitly; what a default search would find
is only the user's side of each conversation.

Hits are mapped memory -> turn -> session. Prints, per question type and overall: session
recall@5 and @10 (the share of gold ``answer_session_ids`` among the first 5/10 distinct
sessions retrieved), any@5 (at least one gold session in the first 5), session MRR and turn
recall@10 (the share of ``has_answer`` turns among the first 10 turns; questions without such
turns, e.g. abstention ``_abs`` questions, are left out of it and counted), for kgmem and for a
BM25-over-raw-turns baseline computed in the same run (its first 100 turns, mapped to sessions
the same way); search latency p50/p95 (of the question's search, after a warm-up search that
drains the change feed into the index; "written in" is the write gate's time alone).
``--ablation`` also searches each question once per ranking signal switched off (locomo.py's
list, on the same written store) and prints overall session recall@5 and turn recall@10 of
each beside the full ranking.
Last line: ``longmemeval_session_r5=<kgmem overall session recall@5>``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import ABLATIONS
from recall_support import (
    Conversation,
    Scores,
    Turn,
    TurnBM25,
    Written,
    latency_line,
    open_services,
    ranked_turns,
    searcher,
    write_conversation,
)

HITS = 100  # memories asked for (turns, for the baseline): enough for 10 distinct sessions
STATUSES = ("active", "pending")  # pending: the memories of assistant turns
OWNER = "User"
SPEAKERS = {"user": OWNER, "assistant": "Assistant"}
_WHEN = re.compile(
    r"(\d{4})[/-](\d{1,2})[/-](\d{1,2})(?:\s*\(\w+\))?(?:[\sT]+(\d{1,2}):(\d{2})(?::(\d{2}))?)?"
)


def parse_when(text: str) -> datetime:
    """``2023/04/10 (Mon) 17:50``, with or without the weekday, the time or seconds; UTC."""
    m = _WHEN.search(str(text))
    if m is None:
        raise ValueError(f"unrecognised date {text!r}")
    y, mo, d, h, mi, s = (int(g) if g else 0 for g in m.groups())
    return datetime(y, mo, d, h, mi, s, tzinfo=UTC)


def _id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", str(text))


@dataclass
class Item:
    """One LongMemEval question and its haystack, as one user's sessions."""

    qid: str
    uid: str
    kind: str
    text: str
    asked_at: datetime
    gold_sessions: frozenset[str]
    gold_turns: frozenset[str]
    sessions: list[tuple[datetime, list[Turn]]]  # in date order
    session_of: dict[str, str] = field(default_factory=dict)  # turn id -> session id
    repeats: int = 0

    @property
    def turns(self) -> list[Turn]:
        return [t for _, turns in self.sessions for t in turns]


def load(path: Path, limit: int | None) -> list[Item]:
    raw: list[dict[str, Any]] = []
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    for file in files:
        data = json.loads(file.read_text())
        raw.extend(data if isinstance(data, list) else [data])
        if limit is not None and len(raw) >= limit:
            break
    return [_item(inst) for inst in raw[:limit]]


def _item(inst: dict[str, Any]) -> Item:
    qid = str(inst["question_id"])
    uid = f"lme-{_id(qid)}"[:128]
    item = Item(
        qid,
        uid,
        str(inst["question_type"]),
        str(inst["question"]),
        parse_when(inst["question_date"]),
        frozenset(),
        frozenset(),
        [],
    )
    gold_turns: set[str] = set()
    seen: set[str] = set()
    parts = zip(
        inst["haystack_session_ids"], inst["haystack_dates"], inst["haystack_sessions"], strict=True
    )
    for sid, date, session in sorted(parts, key=lambda p: parse_when(p[1])):
        if sid in seen:
            item.repeats += 1
            continue
        seen.add(sid)
        when, turns = parse_when(date), []
        for index, raw in enumerate(session):
            text = str(raw.get("content", "")).strip()
            if not text:
                continue
            role = "assistant" if raw.get("role") == "assistant" else "user"
            tid = f"{sid}#{index}"
            # turns of a session are a minute apart, so their order is their time order
            moment = when + timedelta(minutes=index)
            turns.append(Turn(tid, SPEAKERS[role], text, moment, _id(sid), index, role))
            item.session_of[tid] = sid
            if raw.get("has_answer"):
                gold_turns.add(tid)
        if turns:
            item.sessions.append((when, turns))
    item.gold_sessions = frozenset(inst["answer_session_ids"]) & seen
    item.gold_turns = frozenset(gold_turns)
    return item


def sessions_of(ranked: Sequence[str], session_of: dict[str, str]) -> list[str]:
    """The distinct sessions of ranked turns, in order."""
    out: list[str] = []
    for tid in ranked:
        sid = session_of[tid]
        if sid not in out:
            out.append(sid)
    return out


@dataclass
class Group:
    """Recall figures of one group of questions: session-level and turn-level."""

    sessions: Scores = field(default_factory=Scores)
    any5: list[float] = field(default_factory=list)
    turns: Scores = field(default_factory=Scores)

    def add(self, item: Item, sessions: list[str], turns: list[str]) -> None:
        self.sessions.add(item.gold_sessions, sessions)
        self.any5.append(float(bool(item.gold_sessions & set(sessions[:5]))))
        if item.gold_turns:
            self.turns.add(item.gold_turns, turns)


def _add(groups: dict[str, Group], item: Item, sessions: list[str], turns: list[str]) -> None:
    for name in (item.kind, "overall"):
        groups.setdefault(name, Group()).add(item, sessions, turns)


def _ordered(groups: dict[str, Group]) -> dict[str, Group]:
    return {k: groups[k] for k in sorted(groups, key=lambda k: (k == "overall", k))}


def print_table(title: str, groups: dict[str, Group]) -> None:
    print(f"\n{title}")
    head = ("n", "s-r@5", "s-r@10", "any@5", "s-MRR", "turn n", "t-r@10")
    print(f"{'question type':<26} " + " ".join(f"{h:>7}" for h in head))
    for name, g in _ordered(groups).items():
        n, r5, r10, _, _, mrr = g.sessions.row()
        any5 = sum(g.any5) / len(g.any5) if g.any5 else 0.0
        tn, _, t10, _, _, _ = g.turns.row()
        print(
            f"{name:<26} {n:>7} {r5:>7.3f} {r10:>7.3f} {any5:>7.3f} {mrr:>7.3f} {tn:>7} {t10:>7.3f}"
        )


def write_item(services: Any, clock: Any, item: Item, at_session: bool) -> Written:
    """Write the haystack session by session, the clock at each session's last turn (or at the
    question's date throughout)."""
    out = Written()
    for _, turns in item.sessions:
        clock.current = turns[-1].when if at_session else item.asked_at
        one = write_conversation(services, Conversation(item.uid, turns, [], owner=OWNER))
        for memory, tids in one.turns_of.items():
            out.turns_of[memory].extend(tids)
        out.outcomes.update(one.outcomes)
        out.seconds += one.seconds
    return out


def run(
    items: list[Item],
    services: Any,
    clock: Any,
    at_session: bool,
    ablations: dict[str, dict[str, Group]] | None = None,
) -> tuple[dict[str, Group], list[float], Counter[str], float, list[int]]:
    """Write each item and search its question; with ``ablations`` (name -> groups, filled
    here), also search it once per ranking signal switched off (locomo.ABLATIONS)."""
    groups: dict[str, Group] = {}
    latencies: list[float] = []
    others = {name: searcher(services, clock, *ABLATIONS[name]) for name in ablations or {}}
    outcomes: Counter[str] = Counter()
    seconds, reached = 0.0, []
    for number, item in enumerate(items, 1):
        written = write_item(services, clock, item, at_session)
        outcomes.update(written.outcomes)
        seconds += written.seconds
        clock.current = item.asked_at
        services.search.memory_search(item.uid, "warm up", k=10, statuses=STATUSES)
        started = time.perf_counter()
        hits = services.search.memory_search(item.uid, item.text, k=HITS, statuses=STATUSES)
        latencies.append((time.perf_counter() - started) * 1000)
        turns = ranked_turns(hits, written.turns_of, HITS)
        sessions = sessions_of(turns, item.session_of)
        reached.append(len(sessions))
        _add(groups, item, sessions, turns[:10])
        for name, search in others.items():
            assert ablations is not None
            found = search.memory_search(item.uid, item.text, k=HITS, statuses=STATUSES)
            off = ranked_turns(found, written.turns_of, HITS)
            _add(ablations[name], item, sessions_of(off, item.session_of), off[:10])
        if number % 10 == 0:
            print(f"  {number}/{len(items)} questions, {seconds:.0f} s writing", flush=True)
    return groups, latencies, outcomes, seconds, reached


def baseline(items: list[Item]) -> dict[str, Group]:
    groups: dict[str, Group] = {}
    for item in items:
        turns = TurnBM25(item.turns).search(item.text, HITS)
        _add(groups, item, sessions_of(turns, item.session_of), turns[:10])
    return groups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=Path("../shared/bench/longmemeval/s_cleaned_subset")
    )
    parser.add_argument("--questions", type=int, default=None, help="only the first N")
    parser.add_argument(
        "--write-at",
        choices=("session", "question"),
        default="session",
        help="the clock while a session is written: its own time, or the question's date",
    )
    parser.add_argument(
        "--embeddings",
        type=Path,
        default=None,
        help="a static model's directory (kgmem index distill): search adds dense vectors",
    )
    parser.add_argument(
        "--ablation", action="store_true", help="also one search per ranking signal off"
    )
    args = parser.parse_args()
    loaded = load(args.data, args.questions)
    items = [i for i in loaded if i.gold_sessions]
    if len(items) < len(loaded):
        print(f"{len(loaded) - len(items)} questions left out: no answer session in the haystack")
    turns = [t for i in items for t in i.turns]
    roles = Counter(t.role for t in turns)
    sessions = sum(len(i.sessions) for i in items)
    print(
        f"{len(items)} questions, {sessions} sessions, {len(turns)} turns "
        f"({roles['user']} user, {roles['assistant']} assistant); "
        f"{sum(i.repeats for i in items)} repeated sessions written once; "
        f"{sum(not i.gold_turns for i in items)} questions without has_answer turns "
        f"(left out of turn recall)"
    )
    with tempfile.TemporaryDirectory(prefix="kgmem-longmemeval-") as home:
        services, clock = open_services(Path(home), items[0].asked_at, args.embeddings)
        try:
            ablations = {name: {} for name in ABLATIONS} if args.ablation else None
            groups, latencies, outcomes, seconds, reached = run(
                items, services, clock, args.write_at == "session", ablations
            )
        finally:
            services.close()
    print(f"written in {seconds:.1f} s ({len(turns) / seconds:.0f} turns/s): {dict(outcomes)}")
    print(
        f"distinct sessions in {HITS} hits: mean {sum(reached) / len(reached):.1f}, "
        f"min {min(reached)}"
    )
    print_table(f"kgmem memory_search (no LLM; statuses {'+'.join(STATUSES)})", groups)
    print(latency_line(latencies))
    print_table("baseline: BM25 over raw turns", baseline(items))
    if ablations:
        print("\nablation (overall session recall@5, turn recall@10):")
        full = groups["overall"]
        print(f"{'all signals':<26} {full.sessions.row()[1]:.3f}  {full.turns.row()[2]:.3f}")
        for name, found in ablations.items():
            r5, t10 = found["overall"].sessions.row()[1], found["overall"].turns.row()[2]
            print(
                f"{name:<26} {r5:.3f} ({r5 - full.sessions.row()[1]:+.3f})  "
                f"{t10:.3f} ({t10 - full.turns.row()[2]:+.3f})"
            )
    print(f"longmemeval_session_r5={groups['overall'].sessions.row()[1]:.4f}")


if __name__ == "__main__":
    main()
