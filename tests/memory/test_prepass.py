"""The pre-pass (discard / merge / create) and the contradiction policy."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from rdflib import Literal, URIRef

from kgmem.memory.model import Authority
from kgmem.memory.prepass import (
    Conflict,
    Disposition,
    ExistingClaim,
    Resolution,
    prepass,
    rank,
    resolve_conflict,
)
from kgmem.memory.records import ClaimRecord
from kgmem.vocab import KGM, SDO

ANN, ACME, GLOBEX = URIRef("urn:e:ann"), URIRef("urn:e:acme"), URIRef("urn:e:globex")
M1, M2 = URIRef("urn:m:1"), URIRef("urn:m:2")


def claim(
    p: URIRef, o: URIRef | None = None, value: str | None = None, negated: bool = False
) -> ClaimRecord:
    lit = None if value is None else Literal(value)
    return ClaimRecord(URIRef(f"urn:c:{p}{o}{value}{negated}"), ANN, p, o, lit, negated)


def existing(
    c: ClaimRecord,
    memory: URIRef = M1,
    *,
    pinned: bool = False,
    authority: Authority = Authority.USER,
    valid_from: datetime | None = None,
) -> ExistingClaim:
    fresh = ClaimRecord(
        URIRef(f"{c.iri}-stored"), c.subject, c.predicate, c.object, c.value, c.negated
    )
    return ExistingClaim(memory, fresh, pinned, 0.9, authority, valid_from)


def functional(p: URIRef) -> bool:
    return p in {SDO.worksFor, SDO.birthDate}


def test_all_known_is_discard_onto_the_knowing_memory() -> None:
    works = claim(SDO.worksFor, ACME)
    result = prepass([works], [existing(works, M2)], functional)
    assert (result.disposition, result.target, result.new_claims) == (Disposition.DISCARD, M2, ())


def test_some_known_merges_into_the_memory_knowing_most() -> None:
    a, b, c = claim(SDO.worksFor, ACME), claim(KGM.likes, value="jazz"), claim(SDO.knows, GLOBEX)
    result = prepass(
        [a, b, c],
        [existing(a, M1), existing(b, M2), existing(claim(SDO.name, value="x"), M2)],
        functional,
    )
    assert result.disposition is Disposition.MERGE
    assert result.new_claims == (c,)


def test_nothing_known_creates() -> None:
    result = prepass([claim(KGM.likes, value="jazz")], [], functional)
    assert result.disposition is Disposition.CREATE and result.target is None


def test_functional_value_change_and_negation_conflict() -> None:
    old_job = existing(claim(SDO.worksFor, ACME))
    new_job = claim(SDO.worksFor, GLOBEX)
    [conflict] = prepass([new_job], [old_job], functional).conflicts
    assert conflict.existing is old_job and "single-valued" in conflict.reason
    likes = existing(claim(KGM.likes, value="jazz"))
    [negation] = prepass(
        [claim(KGM.likes, value="jazz", negated=True)], [likes], functional
    ).conflicts
    assert "negates" in negation.reason
    # a second value of a multi-valued property is no conflict
    assert prepass([claim(KGM.likes, value="rock")], [likes], functional).conflicts == ()


T1, T2 = datetime(2024, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("pinned", "old_auth", "old_from", "new_auth", "new_from", "expected"),
    [
        (True, Authority.AGENT, None, Authority.USER, T2, Resolution.QUARANTINE),
        (False, Authority.USER, None, Authority.AGENT, T2, Resolution.QUARANTINE),
        (False, Authority.TOOL, T1, Authority.USER, T2, Resolution.SUPERSEDE),
        (False, Authority.USER, T1, Authority.USER, T2, Resolution.SUPERSEDE),
        (False, Authority.USER, T2, Authority.USER, T1, Resolution.WEAKEN),
        (False, Authority.USER, None, Authority.USER, None, Resolution.WEAKEN),
        (False, Authority.AGENT, None, Authority.AGENT, None, Resolution.WEAKEN),
    ],
)
def test_resolution_policy(
    pinned: bool,
    old_auth: Authority,
    old_from: datetime | None,
    new_auth: Authority,
    new_from: datetime | None,
    expected: Resolution,
) -> None:
    old = existing(
        claim(SDO.worksFor, ACME), pinned=pinned, authority=old_auth, valid_from=old_from
    )
    conflict = Conflict(claim(SDO.worksFor, GLOBEX), old, "single-valued")
    assert resolve_conflict(conflict, new_auth, new_from) is expected


def test_authority_order_is_configurable() -> None:
    assert (
        rank(Authority.USER) > rank(Authority.TOOL) > rank(Authority.TASK) > rank(Authority.AGENT)
    )
    tool_first = (Authority.TOOL, Authority.USER, Authority.TASK, Authority.AGENT)
    old = existing(claim(SDO.worksFor, ACME), authority=Authority.TOOL)
    conflict = Conflict(claim(SDO.worksFor, GLOBEX), old, "")
    assert resolve_conflict(conflict, Authority.USER, None, tool_first) is Resolution.QUARANTINE
    assert resolve_conflict(conflict, Authority.USER, None) is Resolution.WEAKEN
