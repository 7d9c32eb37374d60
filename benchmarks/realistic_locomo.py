"""LoCoMo observations rendered as a model writes them, for the realistic suite.

Each observation (``observation`` of ``locomo10.json``: a fact about a speaker with the
dialogue turns it came from) becomes one true case, with no case left out because kgmem
cannot judge it:

- the source: the observation's session as one chat (both speakers are ``user`` messages
  with their names as speakers) up to its gold turn (the first of its ``dia_id`` the
  conversation holds), so a pronoun's antecedent is there if the conversation has it;
- the subject: the observation's own third-person subject - its speaker when the
  observation names them ("The support group has made Caroline feel accepted"), else the
  name it opens with ("Pixie has become friends with the other dogs");
- the value (``schema:description``): the longest run of the gold turn's words, within a
  sentence, that the observation also uses (stop words trimmed from its ends; two words or
  one of five letters at least; else one word of three), else the observation itself less
  the subject (a paraphrase: true, and what the model would write);
- the quote: the shortest span of the gold turn that states the value: the clause holding
  it (cut at ``. ! ? ; : ,`` and dashes), widened to the value; pronouns as they occur.

A blind review (``benchmarks/locomo_review.json``, made without kgmem's results) judged
whether each of the first 300 rendered quotes states its observation; those it found a
paraphrase, a question, or said of another person (the addressee, a third person, the other
speaker's turn) are scored as misattributions a gate must refuse (``misattribution_caught``),
not as truths; the rest (stated, or the speaker's words said of a thing) stay true cases.
An entry applies only to the observation it judged (``observation_sha1``).

And, from the same rendering, two inventions: another observation's value of the same
speaker the quote does not state (``unstated_value``), and the quote's first number
changed (``changed_number``), both to be refused. An observation whose ``dia_id`` names no
turn of its conversation (a fault of the annotation) has no source; those are counted and
said.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

from correctness import _STOP, _WORD, _change_number, _stems

_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_CUT = re.compile(r"[.!?;:,]|\s[-\u2013\u2014]+\s|[\u2013\u2014]")
_OPENING = re.compile(r"^([A-Z][\w'\u2019-]*)")
_NOT_NAMES = frozenset({"the", "a", "an", "during", "some", "both", "one", "someone", "being"})


def _run(turn: str, fact: str) -> tuple[int, int] | None:
    """The value's span in ``turn`` (see the module docstring)."""
    fact_words = {w.lower() for w in _WORD.findall(fact)}
    best: tuple[int, int, int] | None = None
    single: tuple[int, int, int] | None = None
    for sent in _SENTENCE.finditer(turn):
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
            if run:
                start, end = sent.start() + run[0].start(), sent.start() + run[-1].end()
                strong = len(run) >= 2 or len(run[0].group()) >= 5
                if strong and (best is None or end - start > best[0]):
                    best = (end - start, start, end)
                if not strong and len(run[0].group()) >= 3 and single is None:
                    single = (end - start, start, end)
            i = max(j, i + 1)
    found = best or single
    return None if found is None else (found[1], found[2])


def _clause(turn: str, start: int, end: int) -> str:
    """The clause of ``turn`` holding ``turn[start:end]``, widened to it."""
    left = max((m.end() for m in _CUT.finditer(turn, 0, start)), default=0)
    right = next((m.start() for m in _CUT.finditer(turn, end)), len(turn))
    return turn[left:right].strip()


def _subject(fact: str, speaker: str) -> str:
    if re.search(rf"\b{re.escape(speaker)}\b", fact):
        return speaker
    m = _OPENING.match(fact)
    name = m.group(1).removesuffix("'s").removesuffix("\u2019s") if m else ""
    return name if name and name.lower() not in _NOT_NAMES else speaker


def _facts(path: Path) -> tuple[list[dict[str, Any]], int]:
    facts, unsourced = [], 0
    for sample in json.loads(path.read_text()):
        conv = sample["conversation"]
        for session in sorted(sample.get("observation", {})):
            name = session.removesuffix("_observation")
            turns = conv.get(name, [])
            at = {t["dia_id"]: n for n, t in enumerate(turns)}
            for speaker, items in sample["observation"][session].items():
                for text, dia in items:
                    gold = next((at[d] for d in re.split(r"[;,\s]+", str(dia)) if d in at), None)
                    if gold is None:
                        unsourced += 1
                        continue
                    facts.append(
                        {
                            "chat": f"{sample['sample_id']}-{name}",
                            "turns": turns[: gold + 1],
                            "speaker": speaker,
                            "fact": text,
                        }
                    )
    return facts, unsourced


def _render(f: dict[str, Any]) -> dict[str, Any]:
    """The fact's subject, value, quote and where it is cited from."""
    gold = f["turns"][-1]["text"]
    subject = _subject(f["fact"], f["speaker"])
    span = _run(gold, f["fact"])
    if span is None:
        value = re.sub(rf"\b{re.escape(subject)}('s|\u2019s)?\b", "", f["fact"]).strip(" .")
        quote = gold.strip()
    else:
        value, quote = gold[span[0] : span[1]], _clause(gold, *span)
    return f | {"subject": subject, "value": value, "quote": quote, "paraphrase": span is None}


def _draft(r: dict[str, Any], value: str, quote: str) -> dict[str, Any]:
    return {
        "kind": "semantic",
        "title": r["fact"][:200],
        "confidence": 0.9,
        "claims": [{"subject": r["subject"], "predicate": "schema:description", "value": value}],
        "entities": [{"name": r["subject"], "types": ["schema:Person"]}],
        "evidence": [{"source": f"chat:{r['chat']}#{len(r['turns']) - 1}", "quote": quote}],
    }


REVIEW = Path(__file__).resolve().parent / "locomo_review.json"
#: what the review found a quote does not state
MISATTRIBUTED = frozenset({"paraphrase", "question", "other_person"})


def _reviewed(path: Path = REVIEW) -> dict[str, tuple[str, str]]:
    """The review: case id -> (class, the judged observation's sha1 prefix)."""
    if not path.is_file():
        return {}
    cases = json.loads(path.read_text())["cases"]
    return {cid: (v["class"], v["observation_sha1"]) for cid, v in cases.items()}


def _case(
    n: int,
    r: dict[str, Any],
    kind: str,
    proposal: dict[str, Any],
    review: dict[str, tuple[str, str]] | None = None,
) -> dict[str, Any]:
    mode, expect = ("true", "keep") if kind == "true" else ("invention", "refuse")
    variant = "true" if kind == "true" else "lie"
    cid = f"locomo/{r['chat']}/{n}/{kind}"
    judged = (review or {}).get(cid)
    digest = hashlib.sha1(r["fact"].encode()).hexdigest()[:12]
    if kind == "true" and judged is not None and judged[1] == digest and judged[0] in MISATTRIBUTED:
        mode, expect, variant, kind = "misattribution", "refuse", "lie", f"true:{judged[0]}"
    return {
        "format": "kgmem-realistic/1",
        "id": cid,
        "kind": "locomo",
        "phenomenon": "locomo",
        "variant": variant,
        "mode": mode,
        "sub": f"locomo/{kind}",
        "expect": expect,
        "also": [],
        "reading": r["fact"],
        "sources": [
            {"key": f"t{i}", "role": "user", "text": t["text"], "speaker": t["speaker"]}
            | {"chat": r["chat"]}
            for i, t in enumerate(r["turns"])
        ],
        "setup": [],
        "proposal": proposal,
    }


def locomo_cases(path: Path, limit: int) -> tuple[list[dict[str, Any]], Counter[str]]:
    """The cases of at most ``limit`` observations (0: all), the first of a seeded shuffle,
    and counts: ``found``, ``used``, ``unsourced``, ``paraphrase`` (no shared words)."""
    facts, unsourced = _facts(path)
    random.Random(8).shuffle(facts)
    chosen = [_render(f) for f in (facts[:limit] if limit else facts)]
    counts = Counter(found=len(facts), used=len(chosen), unsourced=unsourced)
    counts["paraphrase"] = sum(r["paraphrase"] for r in chosen)
    review = _reviewed()
    out = []
    for n, r in enumerate(chosen):
        out.append(_case(n, r, "true", _draft(r, r["value"], r["quote"]), review))
        counts["reviewed"] += out[-1]["id"] in review
        counts["misattributed"] += out[-1]["mode"] == "misattribution"
        other = next(
            (
                g
                for g in chosen[n + 1 :] + chosen[:n]
                if g["speaker"] == r["speaker"] and not _stems(g["value"]) & _stems(r["quote"])
            ),
            None,
        )
        if other is not None and not r["paraphrase"]:
            out.append(_case(n, r, "unstated_value", _draft(r, other["value"], r["quote"])))
        changed = _change_number(r["quote"])
        if changed is not None:
            out.append(_case(n, r, "changed_number", _draft(r, changed, r["quote"])))
    return out, counts
