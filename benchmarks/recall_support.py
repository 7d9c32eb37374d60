"""What the recall benchmarks share: a store built like the server's, conversations written
through the real source store and write gate, searches mapped back to the turns they came from,
a BM25-over-raw-turns baseline, and the recall metrics and tables.

Not a benchmark itself: ``benchmarks/locomo.py`` and ``benchmarks/longmemeval.py`` use it.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from kgmem.api.services import Services, build_services
from kgmem.clock import FixedClock
from kgmem.config import load_settings
from kgmem.index.lexical import LexicalIndex, analyze
from kgmem.memory.gate import Outcome
from kgmem.memory.source_inputs import MessageIn
from kgmem.retrieval import MemorySearch, RankWeights, SearchHit

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

BATCH = 25
MAX_BODY = 20_000  # the longest body (and quote) a draft may carry


@dataclass(frozen=True)
class Turn:
    """One turn of a benchmark conversation, with the id the gold answers cite."""

    id: str
    speaker: str
    text: str
    when: datetime
    chat: str
    index: int
    role: str = "user"  # "assistant" for the agent's own turns


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    category: str
    gold: frozenset[str]  # turn ids (or session ids, for session recall)
    asked_at: datetime | None = None


@dataclass
class Conversation:
    """One user's history: turns in order and the questions asked about it."""

    uid: str
    turns: list[Turn]
    questions: list[Question]
    owner: str = "User"


@dataclass
class Written:
    """What writing a conversation produced: memory -> the turns it came from."""

    turns_of: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    outcomes: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0


def open_services(
    home: Path, now: datetime, embeddings: Path | None = None
) -> tuple[Services, FixedClock]:
    """Services over a new store in ``home``; ``embeddings``: a static model's directory
    (the embedding extra), so search adds dense vectors."""
    clock = FixedClock(now)
    env = {"KGMEM_HOME": str(home)}
    if embeddings is not None:
        env["KGMEM_EMBEDDING_MODEL"] = str(embeddings.resolve())
    settings = load_settings(env=env)
    return build_services(settings, clock=clock), clock


def write_conversation(services: Services, conv: Conversation) -> Written:
    """Each turn is a message of its chat and an episodic memory quoting it whole, about its
    speaker, happening at the turn's time."""
    out = Written()
    started = time.perf_counter()
    for batch in _batches(conv.turns, BATCH):
        msgs = [
            MessageIn(
                chat=t.chat,
                turn=t.index,
                role=t.role,
                text=t.text,
                timestamp=t.when,
                speaker=t.speaker,
            )
            for t in batch
        ]
        ingested = services.sources.ingest_messages(conv.uid, msgs)
        drafts = [_draft(t, str(r.iri)) for t, r in zip(batch, ingested, strict=True)]
        result = services.gate.draft(conv.uid, drafts, account_name=conv.owner)
        for turn, item in zip(batch, result.items, strict=True):
            out.outcomes[item.outcome.value] += 1
            if item.memory is not None and item.outcome is not Outcome.REFUSED:
                out.turns_of[str(item.memory)].append(turn.id)
    out.seconds = time.perf_counter() - started
    return out


def _draft(turn: Turn, source: str) -> dict[str, Any]:
    first = turn.text.split("\n", 1)[0]
    title = first if len(first) <= 120 else first[:117].rsplit(" ", 1)[0] + "..."
    # a memory's body and quote are at most MAX_BODY characters: a longer turn is cut (at a
    # space), and the quote is then its opening, still verbatim
    text = turn.text
    if len(text) > MAX_BODY:
        text = text[:MAX_BODY].rsplit(" ", 1)[0].rstrip()
    return {
        "kind": "episodic",
        "title": title,
        "body": text,
        "entities": [{"name": turn.speaker}],
        "occurred_at": turn.when,
        "confidence": 0.9,
        "evidence": [{"source": source, "quote": text}],
    }


def _batches(items: Sequence[Turn], size: int) -> Iterable[Sequence[Turn]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def searcher(
    services: Services,
    clock: FixedClock,
    weights: RankWeights | None = None,
    fields: dict[str, int] | None = None,
) -> MemorySearch:
    """The process's own search (its index fed by the change feed), or, for an ablation, one
    with other ranking weights and field weights over an index of its own."""
    if weights is None and fields is None:
        return services.search
    index = services.lexical
    if fields is not None:
        index = LexicalIndex(
            services.store,
            services.queries,
            field_weights=fields,
            embedder=services.lexical.embedder,
        )
    return MemorySearch(
        services.store,
        services.queries,
        index,
        clock,
        services.lifecycle,
        weights=weights,
        before_read=services.feed.drain,
    )


def ranked_turns(hits: Sequence[SearchHit], turns_of: dict[str, list[str]], k: int) -> list[str]:
    """The turns behind the hits, in hit order, at most ``k``."""
    out: list[str] = []
    for hit in hits:
        for turn in turns_of.get(hit.id, ()):
            if turn not in out:
                out.append(turn)
    return out[:k]


class TurnBM25:
    """The baseline: Okapi BM25 (k1 1.2, b 0.75) over the raw text of the turns, with the same
    words, stopwords and stemmer as kgmem's index, and nothing else."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        self.ids = [t.id for t in turns]
        self.docs = [Counter(analyze(t.text)) for t in turns]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lengths) / max(len(self.docs), 1)
        df: Counter[str] = Counter()
        for doc in self.docs:
            df.update(doc.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def search(self, text: str, k: int) -> list[str]:
        terms = set(analyze(text))
        scores = []
        for i, doc in enumerate(self.docs):
            norm = 1.2 * (1 - 0.75 + 0.75 * self.lengths[i] / self.avg)
            s = sum(self.idf[t] * doc[t] * 2.2 / (doc[t] + norm) for t in terms if t in doc)
            if s > 0:
                scores.append((s, i))
        scores.sort(key=lambda p: (-p[0], p[1]))
        return [self.ids[i] for _, i in scores[:k]]


@dataclass
class Scores:
    """Recall figures of one group of questions."""

    r5: list[float] = field(default_factory=list)
    r10: list[float] = field(default_factory=list)
    all10: list[float] = field(default_factory=list)
    any10: list[float] = field(default_factory=list)
    rr: list[float] = field(default_factory=list)

    def add(self, gold: frozenset[str], ranked: Sequence[str]) -> None:
        top5, top10 = set(ranked[:5]), set(ranked[:10])
        self.r5.append(len(gold & top5) / len(gold))
        self.r10.append(len(gold & top10) / len(gold))
        self.all10.append(float(gold <= top10))
        self.any10.append(float(bool(gold & top10)))
        rank = next((i for i, t in enumerate(ranked) if t in gold), None)
        self.rr.append(0.0 if rank is None else 1.0 / (rank + 1))

    def row(self) -> tuple[int, float, float, float, float, float]:
        def mean(xs: list[float]) -> float:
            return sum(xs) / len(xs) if xs else 0.0

        n = len(self.r10)
        return n, mean(self.r5), mean(self.r10), mean(self.all10), mean(self.any10), mean(self.rr)


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def print_table(title: str, groups: dict[str, Scores]) -> None:
    print(f"\n{title}")
    print(f"{'group':<22} {'n':>5} {'r@5':>7} {'r@10':>7} {'all@10':>7} {'any@10':>7} {'MRR':>7}")
    for name, scores in groups.items():
        n, r5, r10, all10, any10, mrr = scores.row()
        print(f"{name:<22} {n:>5} {r5:>7.3f} {r10:>7.3f} {all10:>7.3f} {any10:>7.3f} {mrr:>7.3f}")


def latency_line(latencies: Sequence[float]) -> str:
    p50, p95 = statistics.median(latencies) if latencies else 0.0, percentile(latencies, 95)
    return f"search latency over {len(latencies)} queries: p50 {p50:.2f} ms, p95 {p95:.2f} ms"


Search = Callable[[str, Question], list[str]]
