"""The write gate's pre-pass and contradiction policy, as pure functions.

Pre-pass: compare a draft's claims with the claims of active memories on the same subjects
and predicates. Every claim already known: DISCARD (the new evidence is added to the memory
that knows it). Some known: MERGE the new ones into that memory. None: CREATE.

Contradiction: a different value for a single-valued (functional) property, or the same
claim with the opposite negation. The policy: a claim never overwrites a pinned memory or
one backed by a higher authority (QUARANTINE); a claim with a newer valid time from at least
the same authority means the world changed (SUPERSEDE, history kept); otherwise both stand
and the older memory's confidence halves (WEAKEN).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from rdflib import URIRef

from kgmem.memory.grounding import DEFAULT_AUTHORITY_ORDER
from kgmem.memory.model import Authority
from kgmem.memory.records import ClaimRecord

__all__ = [
    "DEFAULT_AUTHORITY_ORDER",
    "Conflict",
    "Disposition",
    "ExistingClaim",
    "Prepass",
    "Resolution",
    "prepass",
    "rank",
    "resolve_conflict",
    "slots",
    "stated_change",
]


def rank(authority: Authority, order: Sequence[Authority] = DEFAULT_AUTHORITY_ORDER) -> int:
    """Higher is stronger. ``rank(USER) > rank(AGENT)`` in the default order."""
    return len(order) - order.index(authority)


class Disposition(StrEnum):
    DISCARD = "discard"
    MERGE = "merge"
    CREATE = "create"


class Resolution(StrEnum):
    QUARANTINE = "quarantine"
    SUPERSEDE = "supersede"
    WEAKEN = "weaken"


@dataclass(frozen=True)
class ExistingClaim:
    """A claim of an active memory, with what the policy needs to know about the memory."""

    memory: URIRef
    claim: ClaimRecord
    pinned: bool
    confidence: float
    authority: Authority
    valid_from: datetime | None = None


@dataclass(frozen=True)
class Conflict:
    claim: ClaimRecord
    existing: ExistingClaim
    reason: str


@dataclass(frozen=True)
class Prepass:
    disposition: Disposition
    target: URIRef | None  # the memory to merge into, or that already knows everything
    new_claims: tuple[ClaimRecord, ...]
    conflicts: tuple[Conflict, ...]


def prepass(
    claims: Sequence[ClaimRecord],
    existing: Sequence[ExistingClaim],
    functional: Callable[[URIRef], bool],
) -> Prepass:
    """Classify ``claims`` against the ``existing`` active claims."""
    by_key = {e.claim.key(): e for e in existing}
    known = [by_key[c.key()] for c in claims if c.key() in by_key]
    new = tuple(c for c in claims if c.key() not in by_key)
    conflicts = tuple(x for c in new for x in _conflicts(c, existing, functional))
    if claims and not new:
        return Prepass(Disposition.DISCARD, known[0].memory, (), conflicts)
    if known:
        target = Counter(e.memory for e in known).most_common(1)[0][0]
        return Prepass(Disposition.MERGE, target, new, conflicts)
    return Prepass(Disposition.CREATE, None, new, conflicts)


def _conflicts(
    claim: ClaimRecord, existing: Sequence[ExistingClaim], functional: Callable[[URIRef], bool]
) -> list[Conflict]:
    found = []
    value = claim.object or claim.value
    for e in existing:
        old = e.claim
        if (old.subject, old.predicate) != (claim.subject, claim.predicate):
            continue
        old_value = old.object or old.value
        if old_value == value and old.negated != claim.negated:
            found.append(Conflict(claim, e, "negates an active claim"))
        elif (
            old_value != value
            and not old.negated
            and not claim.negated
            and functional(claim.predicate)
        ):
            found.append(Conflict(claim, e, f"{claim.predicate} is single-valued"))
    return found


#: free-text predicates: a subject has many descriptions, so a change closes only the one
#: whose value the changing message names ("switched me from Symbicort to Fostair")
DESCRIPTIVE = frozenset(
    {
        URIRef("https://schema.org/description"),
        URIRef("https://schema.org/disambiguatingDescription"),
        URIRef("http://www.w3.org/2000/01/rdf-schema#comment"),
    }
)


def slots(functional: Callable[[URIRef], bool], changed: bool) -> Callable[[URIRef], bool]:
    """Which predicates hold one current value for a draft: the single-valued ones, and,
    when its evidence says the world changed, every one (its older values may close)."""
    return (lambda _: True) if changed else functional


def stated_change(
    conflict: Conflict, functional: Callable[[URIRef], bool], texts: Sequence[str]
) -> bool:
    """Whether ``conflict`` stands when a draft's evidence (``texts``) says the world
    changed: a single-valued predicate or a negation, any value; a descriptive one only
    when the changing text names the older value; any other predicate, any value."""
    old = conflict.existing.claim
    if functional(old.predicate) or old.negated != conflict.claim.negated:
        return True
    if old.predicate not in DESCRIPTIVE:
        return True
    said = old.value if old.value is not None else None
    if said is None:
        return False
    words = [w for w in re.findall(r"\w+", str(said).casefold()) if len(w) > 2]
    text = " ".join(texts).casefold()
    return bool(words) and any(re.search(rf"\b{re.escape(w)}\b", text) for w in words)


def resolve_conflict(
    conflict: Conflict,
    authority: Authority,
    valid_from: datetime | None,
    order: Sequence[Authority] = DEFAULT_AUTHORITY_ORDER,
) -> Resolution:
    """What to do about one conflict of a claim backed by ``authority``."""
    old = conflict.existing
    if old.pinned or rank(old.authority, order) > rank(authority, order):
        return Resolution.QUARANTINE
    newer = valid_from is not None and (old.valid_from is None or valid_from > old.valid_from)
    if newer and rank(authority, order) >= rank(old.authority, order):
        return Resolution.SUPERSEDE
    return Resolution.WEAKEN
