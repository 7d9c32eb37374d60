"""LoCoMo retrieval recall: does memory_search find the turns that answer each question?

    .venv/bin/python benchmarks/locomo.py --data ../shared/bench/locomo/locomo10.json
                                          [--conversations N] [--ablation]

Each conversation is one user. Session by session, every turn is ingested as a user message
(its speaker and the session's date and time) and drafted through the write gate as an
episodic memory quoting the whole turn, about its speaker, happening at the session's time
(an image a speaker shares is part of the turn as "[shares: caption]"). Then, for every
question with evidence, ``memory_search`` runs within that conversation's user and its hits
are mapped back to their source turns (``dia_id``). No language model is anywhere in the path.

Prints, per LoCoMo category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial) and for categories 1-4 together: recall@5 and recall@10 (the share of gold
turns in the first 5/10 turns retrieved), all@10, any@10 and MRR, for kgmem and for a
BM25-over-raw-turns baseline computed in the same run; search latency p50/p95. Malformed
evidence ids are split on ";" and spaces, and unknown ids dropped. ``--ablation`` adds one
run per ranking signal switched off. Works on any file with LoCoMo's JSON layout.
Last line: ``locomo_r10=<kgmem recall@10 over categories 1-4>``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_support import (
    Conversation,
    Question,
    Scores,
    Turn,
    TurnBM25,
    Written,
    latency_line,
    open_services,
    print_table,
    ranked_turns,
    searcher,
    write_conversation,
)

from kgmem.retrieval import RankWeights

CATEGORIES = {1: "1 multi-hop", 2: "2 temporal", 3: "3 open-domain", 4: "4 single-hop"}
CATEGORIES[5] = "5 adversarial"
_SESSION = re.compile(r"session_(\d+)$")
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%d %B %Y", "%Y-%m-%d")


def parse_when(text: str) -> datetime:
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text.strip(), fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise ValueError(f"unrecognised session date {text!r}")


def load(path: Path, limit: int | None) -> list[Conversation]:
    data: list[dict[str, Any]] = json.loads(path.read_text())
    out = []
    for number, sample in enumerate(data[:limit]):
        conv = sample["conversation"]
        uid = re.sub(r"[^A-Za-z0-9_.-]", "-", str(sample.get("sample_id", f"conv-{number}")))
        turns: list[Turn] = []
        sessions = sorted(
            (int(m.group(1)), key) for key in conv if (m := _SESSION.match(key)) and conv[key]
        )
        for n, key in sessions:
            when = parse_when(conv[f"{key}_date_time"])
            for index, raw in enumerate(conv[key]):
                text = str(raw.get("text", "")).strip()
                if raw.get("blip_caption"):
                    text = f"{text} [shares: {raw['blip_caption']}]".strip()
                if not text:
                    continue
                # turns of a session are a minute apart, so their order is their time order
                moment = when + timedelta(minutes=index)
                turns.append(Turn(raw["dia_id"], raw["speaker"], text, moment, f"s{n}", index))
        known = {t.id for t in turns}
        questions = []
        for q_index, qa in enumerate(sample.get("qa", [])):
            gold = frozenset(
                part
                for ev in qa.get("evidence", [])
                for part in re.split(r"[;\s]+", str(ev))
                if part in known
            )
            if gold:
                category = CATEGORIES.get(int(qa["category"]), str(qa["category"]))
                questions.append(Question(f"{uid}#{q_index}", qa["question"], category, gold))
        out.append(Conversation(uid, turns, questions, owner="Reader"))
    return out


def evaluate(
    convs: list[Conversation],
    written: dict[str, Written],
    services: Any,
    clock: Any,
    ablation: Ablation | None = None,
) -> tuple[dict[str, Scores], list[float]]:
    groups: dict[str, Scores] = {name: Scores() for name in CATEGORIES.values()}
    groups["categories 1-4"] = Scores()
    weights, fields = ablation if ablation is not None else (None, None)
    search = searcher(services, clock, weights, fields)
    latencies: list[float] = []
    for conv in convs:
        turns_of = written[conv.uid].turns_of
        search.memory_search(conv.uid, "warm up", k=10)
        for q in conv.questions:
            started = time.perf_counter()
            hits = search.memory_search(conv.uid, q.text, k=10)
            latencies.append((time.perf_counter() - started) * 1000)
            ranked = ranked_turns(hits, turns_of, 10)
            _add(groups, q, ranked)
    return groups, latencies


def baseline(convs: list[Conversation]) -> dict[str, Scores]:
    groups: dict[str, Scores] = {name: Scores() for name in CATEGORIES.values()}
    groups["categories 1-4"] = Scores()
    for conv in convs:
        bm25 = TurnBM25(conv.turns)
        for q in conv.questions:
            _add(groups, q, bm25.search(q.text, 10))
    return groups


def _add(groups: dict[str, Scores], q: Question, ranked: list[str]) -> None:
    groups[q.category].add(q.gold, ranked)
    if not q.category.startswith("5"):
        groups["categories 1-4"].add(q.gold, ranked)


Ablation = tuple[RankWeights | None, dict[str, int] | None]
_PLAIN = RankWeights(
    conversation=0.0,
    named=0.0,
    when=0.0,
    question=0.0,
    temporal=1.0,
    recency=0.0,
    strength=0.0,
    usage=0.0,
    confidence=0.0,
    pinned=0.0,
    unaccepted=0.0,
)
ABLATIONS: dict[str, Ablation] = {
    "no context field": (None, {"context": 0}),
    "no reply field": (None, {"reply": 0}),
    "no context, no reply": (None, {"context": 0, "reply": 0}),
    "no entity field": (None, {"entity": 0}),
    "no conversation": (RankWeights(conversation=0.0), None),
    "no named entity": (RankWeights(named=0.0), None),
    "no 'says when'": (RankWeights(when=0.0), None),
    "no question penalty": (RankWeights(question=0.0), None),
    "no temporal cue": (RankWeights(temporal=1.0), None),
    "no recency": (RankWeights(recency=0.0), None),
    "no strength/usage/conf.": (RankWeights(strength=0.0, usage=0.0, confidence=0.0), None),
    "unaccepted weigh the same": (RankWeights(unaccepted=0.0), None),  # pending, quarantined
    "plain BM25 of the memory": (_PLAIN, {"context": 0, "reply": 0}),
    "no dense vectors": (RankWeights(meaning=0.0), None),  # a no-op without --embeddings
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/bench/locomo/locomo10.json"))
    parser.add_argument("--conversations", type=int, default=None, help="only the first N")
    parser.add_argument("--ablation", action="store_true", help="one run per signal off")
    parser.add_argument(
        "--embeddings",
        type=Path,
        default=None,
        help="a static model's directory (kgmem index distill): search adds dense vectors",
    )
    args = parser.parse_args()
    convs = load(args.data, args.conversations)
    last = max(t.when for c in convs for t in c.turns)
    turns = sum(len(c.turns) for c in convs)
    questions = sum(len(c.questions) for c in convs)
    print(f"{len(convs)} conversations, {turns} turns, {questions} questions with evidence")
    with tempfile.TemporaryDirectory(prefix="kgmem-locomo-") as home:
        services, clock = open_services(Path(home), last + timedelta(days=1), args.embeddings)
        try:
            written = {c.uid: write_conversation(services, c) for c in convs}
            seconds = sum(w.seconds for w in written.values())
            outcomes = sum(
                (w.outcomes for w in written.values()), start=__import__("collections").Counter()
            )
            print(f"written in {seconds:.1f} s ({turns / seconds:.0f} turns/s): {dict(outcomes)}")
            groups, latencies = evaluate(convs, written, services, clock)
            print_table("kgmem memory_search (no LLM)", groups)
            print(latency_line(latencies))
            print_table("baseline: BM25 over raw turns", baseline(convs))
            if args.ablation:
                print("\nablation (recall@10, categories 1-4):")
                full = groups["categories 1-4"].row()[2]
                print(f"{'all signals':<22} {full:.3f}")
                for name, ablation in ABLATIONS.items():
                    g, _ = evaluate(convs, written, services, clock, ablation)
                    r10 = g["categories 1-4"].row()[2]
                    print(f"{name:<22} {r10:.3f} ({r10 - full:+.3f})")
        finally:
            services.close()
    print(f"locomo_r10={groups['categories 1-4'].row()[2]:.4f}")


if __name__ == "__main__":
    main()
