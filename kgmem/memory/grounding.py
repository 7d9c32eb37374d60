"""Deterministic grounding: does the cited evidence really state the claim? Pure, no store.

The code that exists to catch a lying model. For each evidence item of a claim:

1. the source must be one of the caller's (``sources`` holds only the caller's) and must not be
   a recall tool (memory_search, ...) nor a failed tool; the quote, stripped, must occur
   verbatim in its text (first occurrence, code-point span);
2. ``explicit`` support: the quote must state the object/value and name the subject, in the
   same sentence, with the claim's polarity (a negation cue before the value in its clause
   for a negated claim, or a cue that something ended, "left", "no longer"; none for a
   positive one), and not as a question. The subject is named by a name, an alias, or a
   referring expression the chat around the quote resolves to it (:mod:`discourse`:
   speakers and self-introductions, pronouns, first names, nicknames, descriptions); a
   fragment may take it from its sentence, from the question it answers, or from its
   speaker (:mod:`mentions`). ``derived``/``inferred`` support: the quote must name the
   subject or the object/value, and is capped and labelled;
3. a user message that opens with an affirmation ("yes", "that's right") confirms the agent
   message right before it in the same chat (its last question, if it asks one; never an
   either-or question): the agent's words and the confirmation are both kept, also when the
   draft cites only the "yes";
4. an assistant message grounds nothing alone: it needs another accepted item;
5. authority is the source's, clamped by what the source is (an assistant message is agent, an
   agent-reported source is agent); only a non-agent item lets a claim auto-activate.

Refusals are results (:class:`Refusal`), never exceptions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from functools import lru_cache

from rdflib import URIRef

from kgmem.memory.affirmations import affirmation_span, is_denial
from kgmem.memory.discourse import Discourse, Identity, Kind, Speaker, Turn
from kgmem.memory.grounding_types import (
    AUTHORITY_CONFIDENCE_CAPS,
    DEFAULT_AUTHORITY_ORDER,
    SUPPORT_CONFIDENCE_CAPS,
    SUPPORT_ORDER,
    BatchNames,
    GroundedEvidence,
    GroundingContext,
    GroundingResult,
    Refusal,
    RefusalCode,
)
from kgmem.memory.mentions import (
    explicit_mismatches,
    mentions,
    named_terms,
    related_mismatches,
)
from kgmem.memory.model import (
    Authority,
    ClaimDraft,
    EvidenceDraft,
    Role,
    SourceRecord,
    SourceType,
    SupportKind,
)
from kgmem.memory.reader import WH_WORDS, Reading, Voice, refers_to
from kgmem.memory.surface import Analysis, analyse, find_phrase, locate_quote, phrase

__all__ = [
    "AUTHORITY_CONFIDENCE_CAPS",
    "DEFAULT_AUTHORITY_ORDER",
    "SUPPORT_CONFIDENCE_CAPS",
    "BatchNames",
    "GroundedEvidence",
    "GroundingContext",
    "GroundingResult",
    "Refusal",
    "RefusalCode",
    "batch_names",
    "ground_claim",
    "locate_quote",
    "mentions",
    "source_authority",
]


class _Origin(Enum):
    USER = "user message"
    AGENT = "assistant message"
    TOOL = "tool result"
    TASK = "task record"
    NOTE = "external note"
    SHORT_NOTE = "short note"


def _origin(rec: SourceRecord) -> _Origin:
    fixed = {
        SourceType.TOOL_RESULT: _Origin.TOOL,
        SourceType.TASK_RECORD: _Origin.TASK,
        SourceType.EXTERNAL_NOTE: _Origin.NOTE,
        SourceType.SHORT_NOTE: _Origin.SHORT_NOTE,
    }
    if rec.type in fixed:
        return fixed[rec.type]
    if rec.type is SourceType.AGENT_MESSAGE or rec.role is Role.ASSISTANT:
        return _Origin.AGENT
    return _Origin.TOOL if rec.role is Role.TOOL else _Origin.USER


_CEILING = {
    _Origin.USER: Authority.USER,
    _Origin.NOTE: Authority.USER,
    _Origin.SHORT_NOTE: Authority.USER,
    _Origin.TOOL: Authority.TOOL,
    _Origin.TASK: Authority.TASK,
    _Origin.AGENT: Authority.AGENT,
}


def _rank(order: Sequence[Authority], authority: Authority) -> int:
    return order.index(authority) if authority in order else len(order)


def source_authority(rec: SourceRecord, order: Sequence[Authority]) -> Authority:
    """The record's authority, never stronger than what the source is; second-hand: agent."""
    if rec.agent_reported:
        return Authority.AGENT
    return max(rec.authority, _CEILING[_origin(rec)], key=lambda a: _rank(order, a))


_VOICES = {
    _Origin.USER: Voice.USER,
    _Origin.NOTE: Voice.USER_NOTE,
    _Origin.AGENT: Voice.AGENT,
}
_Problem = tuple[RefusalCode, str, str]  # code, field, message


def _voice(rec: SourceRecord) -> Voice:
    origin = _origin(rec)
    if origin is _Origin.SHORT_NOTE and rec.authority is Authority.USER and not rec.agent_reported:
        return Voice.USER_NOTE
    return _VOICES.get(origin, Voice.OTHER)


def _speaker(rec: SourceRecord, ctx: GroundingContext, alone: bool) -> Speaker:
    """Who wrote ``rec``; ``alone``: the chat's user messages have one speaker, the user,
    whatever display name the host gives them."""
    voice = _voice(rec)
    if voice is Voice.AGENT:
        return Speaker(assistant=True)
    if voice is Voice.USER and rec.speaker is not None:
        is_user = alone or ctx.user is None or ctx.is_user(rec.speaker)
        return Speaker((rec.speaker,), is_user=is_user)
    if voice in (Voice.USER, Voice.USER_NOTE):
        return Speaker(is_user=True)
    return Speaker()


def reading(rec: SourceRecord, claim: ClaimDraft, ctx: GroundingContext) -> Reading:
    """The chat around ``rec`` (from ``ctx.history``), read with the names the draft and
    the caller know."""
    records = ctx.history.get(rec.iri) or (rec,)
    voices = [(_voice(r), r.speaker) for r in records]
    humans = {speaker for voice, speaker in voices if voice is Voice.USER}
    turns = [Turn(r.text, _speaker(r, ctx, len(humans) == 1)) for r in records]
    known = caller_names([claim], ctx) if ctx.batch is None else ctx.batch.names
    kinds = ctx.kinds if ctx.batch is None else ctx.batch.kinds
    user = (ctx.user, *ctx.user_aliases) if ctx.user else ()
    discourse = _discourse(
        tuple(turns),
        tuple(sorted((k, tuple(v)) for k, v in known.items())),
        tuple(sorted(kinds.items(), key=lambda kv: kv[0])),
        tuple(user),
    )
    return Reading(discourse, next(i for i, r in enumerate(records) if r.iri == rec.iri))


def caller_names(claims: Iterable[ClaimDraft], ctx: GroundingContext) -> dict[str, tuple[str, ...]]:
    """The names the caller gives with ``claims``: the draft's entities (with their
    aliases) and the claims' subjects and objects, those that are the user left out."""
    known: dict[str, tuple[str, ...]] = dict(ctx.entities)
    for claim in claims:
        for term in (claim.subject, claim.object):
            if term is not None and not ctx.resolve(term).is_user:
                known.setdefault(term, ())
    return known


def batch_names(contexts: Sequence[tuple[Sequence[ClaimDraft], GroundingContext]]) -> BatchNames:
    """What a batch's drafts (each its claims and grounding context) know together: their
    names, aliases merged, and the kinds they agree on."""
    names: dict[str, tuple[str, ...]] = {}
    kinds: dict[str, Kind | None] = {}
    for claims, ctx in contexts:
        for name, aliases in caller_names(claims, ctx).items():
            names[name] = tuple(dict.fromkeys((*names.get(name, ()), *aliases)))
        for name, kind in ctx.kinds.items():
            kinds[name] = kind if kinds.get(name, kind) is kind else None
    agreed = {name: kind for name, kind in kinds.items() if kind is not None}
    return BatchNames(names, agreed)


@lru_cache(maxsize=64)
def _discourse(
    turns: tuple[Turn, ...],
    known: tuple[tuple[str, tuple[str, ...]], ...],
    kinds: tuple[tuple[str, Kind], ...],
    user: tuple[str, ...],
) -> Discourse:
    """A chat read once for all the claims (and drafts) that cite it with the same names:
    a draft's claims share their evidence, a batch its chat."""
    return Discourse(turns, dict(known), dict(kinds), user)


class _Texts:
    """What one claim's grounding reads, each once: texts analysed, chats read."""

    def __init__(self, claim: ClaimDraft, ctx: GroundingContext) -> None:
        self._claim, self._ctx = claim, ctx
        self.ctx = ctx
        self._docs: dict[str, Analysis] = {}
        self._readings: dict[URIRef, Reading] = {}

    def doc(self, text: str) -> Analysis:
        if text not in self._docs:
            self._docs[text] = analyse(text)
        return self._docs[text]

    def reading(self, rec: SourceRecord) -> Reading:
        if rec.iri not in self._readings:
            self._readings[rec.iri] = reading(rec, self._claim, self._ctx)
        return self._readings[rec.iri]


def _check(
    claim: ClaimDraft,
    ev: EvidenceDraft,
    rec: SourceRecord,
    texts: _Texts,
    span: tuple[int, int],
    ctx: GroundingContext,
    supplied: Sequence[str] = (),
) -> tuple[_Problem, ...]:
    check = explicit_mismatches if ev.support is SupportKind.EXPLICIT else related_mismatches
    doc = texts.doc(rec.text)
    reading = texts.reading(rec)
    found = check(claim, doc, span, ctx, _voice(rec), rec.speaker, reading, supplied)
    problems = tuple((RefusalCode(m.value), where, why) for m, where, why in found)
    if ev.support is SupportKind.EXPLICIT and not problems:
        problems = _opposite_predicate(claim, rec.text[span[0] : span[1]])
    return problems


# Preference predicates whose opposite a quote can state outright ("I hate jazz" is no
# evidence that the speaker likes jazz). Keyed by the predicate's local name.
_OPPOSITE_CUES: dict[str, tuple[str, ...]] = {
    "likes": (
        "hate",
        "hates",
        "hated",
        "dislike",
        "dislikes",
        "detest",
        "detests",
        "loathe",
        "loathes",
        "can't stand",
        "cannot stand",
        "can not stand",
    ),
    "dislikes": ("love", "loves", "like", "likes", "enjoy", "enjoys", "adore", "adores"),
}


def _opposite_predicate(claim: ClaimDraft, quote: str) -> tuple[_Problem, ...]:
    local = re.split(r"[#/:]", claim.predicate)[-1]
    cues = _OPPOSITE_CUES.get(local, ())
    words = quote.casefold().replace("\u2019", "'")
    for cue in cues:
        if re.search(rf"(?<![\w']){re.escape(cue)}(?![\w'])", words):
            why = f"the quote says {cue!r}, the opposite of {local}"
            return ((RefusalCode.NEGATION_MISMATCH, "quote", why),)
    return ()


# -- one evidence item ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Verdict:
    index: int
    support: SupportKind
    record: SourceRecord | None = None
    span: tuple[int, int] | None = None
    problems: tuple[_Problem, ...] = ()
    confirms: URIRef | None = None

    @property
    def accepted(self) -> bool:
        return self.record is not None and self.span is not None and not self.problems

    @property
    def origin(self) -> _Origin | None:
        return None if self.record is None else _origin(self.record)


def _not_verbatim(text: str, quote: str) -> str:
    def squash(s: str) -> str:
        return " ".join(s.split()).casefold()

    if squash(quote) and squash(quote) in squash(text):
        return "matches only after normalizing case or whitespace, which is not verbatim"
    return "does not occur verbatim in the source"


def _judge(
    index: int,
    ev: EvidenceDraft,
    sources: Mapping[str, SourceRecord],
    claim: ClaimDraft,
    ctx: GroundingContext,
    texts: _Texts,
) -> _Verdict:
    verdict = _Verdict(index, ev.support, sources.get(ev.source))
    rec = verdict.record
    if rec is None:
        why = f"{ev.source!r} is not one of this user's sources"
        return replace(verdict, problems=((RefusalCode.UNKNOWN_SOURCE, "source", why),))
    if rec.recall_tool or (rec.tool_name or "") in ctx.recall_tools:
        why = f"{rec.tool_name or 'a recall tool'} returns remembered text, never evidence"
        return replace(verdict, problems=((RefusalCode.RECALL_TOOL, "source", why),))
    if _origin(rec) is _Origin.TOOL and rec.tool_succeeded is not True:
        why = f"tool {rec.tool_name or '?'} did not report success"
        return replace(verdict, problems=((RefusalCode.FAILED_TOOL, "source", why),))
    if ev.quote is None or not ev.quote.strip():
        why = "every evidence item needs an exact quote"
        return replace(verdict, problems=((RefusalCode.MISSING_QUOTE, "quote", why),))
    span = locate_quote(rec.text, ev.quote)
    if span is None:
        why = _not_verbatim(rec.text, ev.quote)
        return replace(verdict, problems=((RefusalCode.QUOTE_NOT_IN_SOURCE, "quote", why),))
    return replace(verdict, span=span, problems=_check(claim, ev, rec, texts, span, ctx))


# -- the claim as a whole -------------------------------------------------------------------


def _precedes(agent: SourceRecord, user: SourceRecord, ctx: GroundingContext) -> bool:
    if user.iri in ctx.previous:
        return ctx.previous[user.iri].iri == agent.iri
    return (
        agent.chat is not None
        and agent.chat == user.chat
        and agent.turn is not None
        and user.turn is not None
        and agent.turn == user.turn - 1
    )


def _asked(agent: _Verdict) -> bool:
    """A reply answers the agent message's last question, if it asks one, else the message.

    "You live in Paris. Shall I book a table?" "Yes." confirms the booking, not Paris.
    """
    assert agent.record is not None and agent.span is not None
    doc = analyse(agent.record.text)
    if not doc.questions:
        return True
    asked = [t for t in doc.tokens if t.sentence == max(doc.questions)]
    if any(t.norm == "or" for t in asked):
        return False  # "Lyon or Geneva?" "Yes." picks neither
    return asked[0].start < agent.span[1] and agent.span[0] < asked[-1].end


def _question(agent: SourceRecord, texts: _Texts) -> tuple[int, int] | None:
    """The span of the last question an agent message asks (all of it when it asks none);
    None for an either-or question ("Lyon or Geneva?" "Yes." picks neither)."""
    doc = texts.doc(agent.text)
    if not doc.tokens:
        return None
    asked = [t for t in doc.tokens if doc.questions and t.sentence == max(doc.questions)]
    if any(t.norm == "or" for t in asked):
        return None
    return (asked[0].start, asked[-1].end) if asked else (0, len(agent.text))


#: what a bare answer may say besides the answer ("Probably Dmitri.", "Oh, the colleague.")
_ANSWER_FILLER = frozenset(
    {"it's", "that's", "it", "is", "was", "the", "a", "an", "probably", "maybe", "i", "think",
     "guess", "oh", "ha", "well", "um", "just", "still", "now", "actually", "that", "one"}
)  # fmt: skip


def _supplied(
    v: _Verdict, agent: SourceRecord, claim: ClaimDraft, ctx: GroundingContext, texts: _Texts
) -> tuple[str, ...] | None:
    """The claim's terms a user's reply gives the agent question it answers, or None when
    it completes no question: a confirmation names what the question leaves out ("...so
    roughly end of March?" "Yes, that's *his* estimate."), a bare answer what a wh-question
    asks ("Who's the tech lead on Payments Platform?" "Dmitri Volkov.")."""
    rec, span = v.record, v.span
    assert rec is not None and span is not None
    doc = texts.doc(rec.text)
    reading = texts.reading(rec)
    terms = named_terms(claim, doc, span, ctx, _voice(rec), rec.speaker, reading)
    said = affirmation_span(rec.text)
    if said is not None and span[0] <= said[0] and said[1] <= span[1]:
        return terms
    asked = _question(agent, texts)
    if not terms or asked is None or is_denial(rec.text):
        return None
    question = texts.doc(agent.text).words(*asked)
    if not any(w.norm in WH_WORDS for w in question[:3]):
        return None
    quoted = doc.words(*span)
    first = [w for w in doc.tokens if w.sentence == doc.tokens[0].sentence]
    if not quoted or quoted[0].sentence != first[0].sentence:
        return None  # the answer opens the reply
    covered = {(w.start, w.end) for w in quoted if w.norm not in _ANSWER_FILLER}
    named = set()
    for term in terms:
        occurrences = find_phrase(first, phrase(term)) or [
            (i, i + 1) for i, w in enumerate(first) if (w.start, w.end) in covered
        ]
        named |= {(first[k].start, first[k].end) for i, j in occurrences for k in range(i, j)}
    rest = [w for w in first if w.norm not in _ANSWER_FILLER and (w.start, w.end) not in named]
    return terms if not rest else None


def _as_confirmation(
    v: _Verdict, agents: Sequence[_Verdict], claim: ClaimDraft, ctx: GroundingContext,
    texts: _Texts,
) -> _Verdict:  # fmt: skip
    """A refused user item may still confirm the cited agent message right before it."""
    assert v.record is not None and v.span is not None
    before = [
        a
        for a in agents
        if a.record is not None and _precedes(a.record, v.record, ctx) and _asked(a)
    ]
    said = affirmation_span(v.record.text)
    quoted = said is not None and v.span[0] <= said[0] and said[1] <= v.span[1]
    if before and not quoted and before[0].record is not None:
        quoted = bool(_supplied(v, before[0].record, claim, ctx, texts))  # a bare answer
    if before and quoted:
        agent = before[0]
        assert agent.record is not None
        return replace(v, support=agent.support, problems=(), confirms=agent.record.iri)
    if before and is_denial(v.record.text):
        why = "the user's reply rejects or qualifies the agent message it answers"
        return replace(v, problems=((RefusalCode.CONFIRMATION_NEGATED, "quote", why),))
    # a quote that leaves the opening "yes" out offers no confirmation: its own problems stand
    if quoted and not before:
        why = "an affirmation, but of no cited agent claim right before it (or not what it asked)"
        return replace(v, problems=((RefusalCode.CONFIRMATION_UNLINKED, "source", why),))
    return v


def _implied(
    v: _Verdict, claim: ClaimDraft, ctx: GroundingContext, texts: _Texts, index: int
) -> _Verdict | None:
    """The agent message a cited "Yes, that's right" answers, when the draft cites only the
    reply: the message right before it, read where the reply answers it (its last question,
    if it asks one), must state the claim."""
    assert v.record is not None
    agent = ctx.previous.get(v.record.iri)
    if agent is None or _origin(agent) is not _Origin.AGENT:
        return None
    span = _question(agent, texts)
    supplied = _supplied(v, agent, claim, ctx, texts) if v.span is not None else None
    if span is None or supplied is None:
        return None
    if not _answers(claim, agent, span, ctx, texts, supplied):
        return None
    return _Verdict(index, SupportKind.EXPLICIT, agent, span)


def _answers(
    claim: ClaimDraft,
    agent: SourceRecord,
    span: tuple[int, int],
    ctx: GroundingContext,
    texts: _Texts,
    supplied: Sequence[str],
) -> bool:
    """Whether the agent's question at ``span``, with what the reply supplies, states
    ``claim`` (it asks rather than states: that alone is no problem)."""
    ev = EvidenceDraft.model_construct(source=str(agent.iri), quote=agent.text[span[0] : span[1]])
    problems = _check(claim, ev, agent, texts, span, ctx, supplied)
    return all(p[0] is RefusalCode.QUOTE_IS_QUESTION for p in problems)


def _completed(
    verdicts: list[_Verdict], claim: ClaimDraft, ctx: GroundingContext, texts: _Texts
) -> list[_Verdict]:
    """Cited agent questions that the cited user reply right after them completes (see
    :func:`_supplied`): such a question asks the claim, as one that states it does."""
    question = ((RefusalCode.QUOTE_IS_QUESTION, "quote", "asks rather than states the claim"),)
    out = list(verdicts)
    for n, a in enumerate(verdicts):
        if a.origin is not _Origin.AGENT or a.span is None or a.record is None or a.accepted:
            continue
        if all(p[0] is RefusalCode.QUOTE_IS_QUESTION for p in a.problems):
            continue
        for v in verdicts:
            if v.origin is not _Origin.USER or v.span is None or v.record is None:
                continue
            if not _precedes(a.record, v.record, ctx):
                continue
            supplied = _supplied(v, a.record, claim, ctx, texts)
            if supplied and _answers(claim, a.record, a.span, ctx, texts, supplied):
                out[n] = replace(a, problems=question)
                break
    return out


def _confirmations(
    verdicts: list[_Verdict], claim: ClaimDraft, ctx: GroundingContext, texts: _Texts
) -> list[_Verdict]:
    question = RefusalCode.QUOTE_IS_QUESTION
    verdicts = _completed(verdicts, claim, ctx, texts)
    agents = [
        v
        for v in verdicts
        if v.origin is _Origin.AGENT and v.span and all(p[0] is question for p in v.problems)
    ]
    out = [
        _as_confirmation(v, agents, claim, ctx, texts)
        if v.origin is _Origin.USER and v.span is not None and not v.accepted
        else v
        for v in verdicts
    ]
    if not agents:
        for n, v in enumerate(out):
            if v.origin is not _Origin.USER or v.span is None or v.accepted:
                continue
            implied = _implied(v, claim, ctx, texts, len(out))
            if implied is not None and implied.record is not None:
                out[n] = replace(v, problems=(), confirms=implied.record.iri)
                out.append(implied)
                agents = [implied]
                break
    # A confirmed question ("Are you allergic to shellfish?" "Yes.") is an answered question.
    confirmed = {v.confirms for v in out if v.confirms is not None}
    answered = {a.index for a in agents if a.record is not None and a.record.iri in confirmed}
    return [replace(v, problems=()) if v.index in answered else v for v in out]


def _agent_rule(verdicts: list[_Verdict]) -> list[_Verdict]:
    """Agent prose is accepted only beside an accepted item that is not agent prose."""
    if any(v.accepted and v.origin is not _Origin.AGENT for v in verdicts):
        return verdicts
    why = "agent prose alone is not proof: no user, note, task or tool item supports it"
    problem = (RefusalCode.AGENT_ONLY, "source", why)
    return [
        replace(v, problems=(problem,)) if v.accepted and v.origin is _Origin.AGENT else v
        for v in verdicts
    ]


def _grounded(v: _Verdict, order: Sequence[Authority]) -> GroundedEvidence:
    rec, span = v.record, v.span
    assert rec is not None and span is not None
    authority = source_authority(rec, order)
    return GroundedEvidence.at(rec, span, v.index, v.support, authority, v.confirms)


def _cap(item: GroundedEvidence) -> float:
    return min(SUPPORT_CONFIDENCE_CAPS[item.support], AUTHORITY_CONFIDENCE_CAPS[item.authority])


def _refusals(verdicts: Sequence[_Verdict]) -> tuple[Refusal, ...]:
    return tuple(
        Refusal(code, f"evidence[{v.index}].{where}: {why}", v.index, where)
        for v in verdicts
        for code, where, why in v.problems
    )


def _identities(
    claim: ClaimDraft, accepted: Sequence[_Verdict], texts: _Texts
) -> Mapping[str, Identity]:
    """Whom the claim's names mean in the chats of its accepted evidence (the first that
    knows)."""
    out: dict[str, Identity] = {}
    for term in (claim.subject, claim.object):
        for v in accepted:
            if term is None or term in out or v.record is None or v.span is None:
                continue
            reading = texts.reading(v.record)
            # the one the quote itself names ("My brother Arjun"), else the chat's one
            quoted = [r for r in reading.refs() if v.span[0] <= r.start and r.end <= v.span[1]]
            said = [r for r in quoted if refers_to(r, term, texts.ctx, reading)]
            found = next(
                (i for r in said if (i := reading.discourse.identity_of(r, term)) is not None),
                None,
            )
            if found is None:
                found = reading.discourse.identity(term)
            if found is not None:
                out[term] = found
    return out


def ground_claim(
    claim: ClaimDraft,
    evidence: Sequence[EvidenceDraft],
    sources: Mapping[str, SourceRecord],
    ctx: GroundingContext,
    *,
    authority_order: Sequence[Authority] = DEFAULT_AUTHORITY_ORDER,
) -> GroundingResult:
    """Check ``claim`` against its ``evidence``; ``sources`` holds only the caller's sources.

    ``authority_order`` lists authorities strongest first (default user > tool > task > agent).
    """
    if not evidence:
        refusal = Refusal(RefusalCode.NO_EVIDENCE, "a claim needs at least one evidence item")
        return GroundingResult(False, (refusal,), (), None, None, 0.0, False)
    texts = _Texts(claim, ctx)
    verdicts = [_judge(i, ev, sources, claim, ctx, texts) for i, ev in enumerate(evidence)]
    verdicts = _agent_rule(_confirmations(verdicts, claim, ctx, texts))
    items = tuple(_grounded(v, authority_order) for v in verdicts if v.accepted)
    if not items:
        return GroundingResult(False, _refusals(verdicts), (), None, None, 0.0, False)
    return GroundingResult(
        identities=_identities(claim, [v for v in verdicts if v.accepted], texts),
        grounded=True,
        reasons=_refusals(verdicts),
        items=items,
        authority=min((i.authority for i in items), key=lambda a: _rank(authority_order, a)),
        support=min((i.support for i in items), key=SUPPORT_ORDER.index),
        confidence_cap=max(_cap(i) for i in items),
        may_auto_activate=any(i.authority is not Authority.AGENT for i in items),
    )
