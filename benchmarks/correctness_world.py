"""A small synthetic world for the unreliable-author suite: people, their employers and a
single-valued "current job" property, with one case per sub-case and person.

Used by ``benchmarks/correctness.py``; reads no files.
"""

from __future__ import annotations

from typing import Any

from correctness_core import case

JOB = {
    "name": "currentJobAt",
    "label": "current job at",
    "domain": "schema:Person",
    "range": "schema:Organization",
    "functional": True,
}
PEOPLE = (
    ("Nora Lindqvist", "Acme Robotics", "Globex"),
    ("Tomas Berg", "Initech", "Hooli"),
    ("Priya Raman", "Umbrella Labs", "Stark Works"),
    ("Diego Alvarez", "Vandelay Industries", "Northwind"),
    ("Mei Chen", "Wayne Foods", "Cyberdyne"),
)
NICK = {"Nora Lindqvist": "Nono", "Tomas Berg": "Tom", "Priya Raman": "Pri"}
NICK |= {"Diego Alvarez": "Dee", "Mei Chen": "Meimei"}
TWINS = (("Sam Carter", "Sam Wilson"), ("Alex Kim", "Alex Moreau"), ("Jo Park", "Jo Novak"))


def _msg(key: str, text: str, speaker: str | None = None, role: str = "user") -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "role": role, "text": text}
    if speaker is not None:
        out["speaker"] = speaker
    return out


def _tool(key: str, text: str, name: str) -> dict[str, Any]:
    return {"key": key, "role": "tool", "text": text, "tool_name": name, "tool_outcome": "success"}


def works(
    person: str,
    org: str,
    source: str,
    quote: str,
    predicate: str = "schema:worksFor",
    title: str | None = None,
    types: tuple[str, ...] = ("schema:Person",),
    **claim: Any,
) -> dict[str, Any]:
    return {
        "kind": "semantic",
        "title": title or f"{person} works at {org}",
        "confidence": 0.9,
        "claims": [{"subject": person, "predicate": predicate, "object": org, **claim}],
        "entities": [
            {"name": person, "types": list(types)},
            {"name": org, "types": ["schema:Organization"]},
        ],
        "evidence": [{"source": source, "quote": quote}],
    }


def _person_cases(n: int, p: str, org: str, other: str) -> list[dict[str, Any]]:
    said = _msg("said", f"I work at {org} as an engineer.", p)
    true = works(p, org, "$said", f"I work at {org}")
    out = [case(f"syn-true/{n}", "true", "synthetic_user", [said], true, "keep")]
    inv = "invention"
    out.append(
        case(
            f"syn-altered/{n}",
            inv,
            "altered_quote",
            [said],
            works(p, other, "$said", f"I work at {other}"),
            "refuse",
        )
    )
    out.append(
        case(
            f"syn-unstated/{n}",
            inv,
            "unstated_value",
            [said],
            works(p, other, "$said", f"I work at {org}"),
            "refuse",
        )
    )
    prose = _msg("prose", f"{p} works at {org}.", role="assistant")
    out.append(
        case(
            f"syn-agent/{n}",
            inv,
            "agent_prose",
            [prose],
            works(p, org, "$prose", f"{p} works at {org}"),
            "refuse",
        )
    )
    recall = _tool("recall", f"Found memory: {p} works at {org}.", "memory_search")
    out.append(
        case(
            f"syn-recall/{n}",
            inv,
            "recall_tool_quote",
            [recall],
            works(p, org, "$recall", f"{p} works at {org}"),
            "refuse",
        )
    )
    mis = "mislabel"
    out.append(
        case(
            f"syn-pred/{n}",
            mis,
            "improvised_predicate",
            [said],
            works(p, org, "$said", f"I work at {org}", "kgm:employedBy"),
            "catch",
        )
    )
    as_org = works(p, org, "$said", f"I work at {org}", types=("schema:Organization",))
    out.append(case(f"syn-disjoint/{n}", mis, "person_as_org", [said], as_org, "catch", [true]))
    boss = PEOPLE[(n + 1) % len(PEOPLE)][0]
    colleague = _msg("boss", f"I work for {boss}.", p)
    boss_said = _msg("bs", f"I work at {org}.", boss)
    known = works(boss, org, "$bs", f"I work at {org}")
    wrong = works(p, boss, "$boss", f"I work for {boss}", types=("schema:Person",))
    wrong["entities"] = [{"name": p, "types": ["schema:Person"]}]
    out.append(
        case(
            f"syn-range/{n}",
            mis,
            "range_violation",
            [boss_said, colleague],
            wrong,
            "catch",
            [known],
        )
    )
    founded = _msg("founded", f"{org} was founded on 12 March 1990.", "Reader")
    dom = {
        "kind": "semantic",
        "title": f"{org} born 1990",
        "confidence": 0.9,
        "claims": [{"subject": org, "predicate": "schema:birthDate", "value": "1990-03-12"}],
        "entities": [{"name": org, "types": ["schema:Organization"]}],
        "evidence": [{"source": "$founded", "quote": f"{org} was founded on 12 March 1990"}],
    }
    out.append(case(f"syn-domain/{n}", mis, "domain_violation", [founded], dom, "catch"))
    re_ = "restatement"
    again = _msg("again", f"As I said, I work at {org}.", p)
    out.append(
        case(
            f"syn-evidence/{n}",
            re_,
            "new_evidence",
            [said, again],
            works(p, org, "$again", f"I work at {org}"),
            "fold",
            [true],
        )
    )
    reworded = works(p, org, "$said", f"I work at {org}", title=f"Employed by {org}")
    out.append(case(f"syn-reword/{n}", re_, "reworded", [said], reworded, "fold", [true]))
    nick = NICK[p]
    told = _msg("told", f"{nick} works at {org}.", "Reader")
    known = works(p, org, "$said", f"I work at {org}")
    known["entities"][0]["aliases"] = [nick]
    by_nick = works(nick, org, "$told", f"{nick} works at {org}")
    by_nick["entities"] = by_nick["entities"][1:]
    out.append(
        case(f"syn-alias/{n}", re_, "synthetic_alias", [said, told], by_nick, "fold", [known])
    )
    born = _msg("born", "I was born on 12 March 1990.", p)
    birth = {
        "kind": "semantic",
        "title": f"{p} born 1990",
        "confidence": 0.9,
        "claims": [{"subject": p, "predicate": "schema:birthDate", "value": "1990-03-12"}],
        "entities": [{"name": p, "types": ["schema:Person"]}],
        "evidence": [{"source": "$born", "quote": "I was born on 12 March 1990"}],
    }
    written = dict(birth, claims=[dict(birth["claims"][0], value="12 March 1990")])
    out.append(
        case(f"syn-date/{n}", re_, "date_written_two_ways", [born], written, "fold", [birth])
    )
    con = "contradiction"
    job = works(p, org, "$said", f"I work at {org}", "delta:currentJobAt")
    crm = _tool("crm", f"Profile: {p} works at {other}.", "crm")
    lower = works(p, other, "$crm", f"{p} works at {other}", "delta:currentJobAt")
    out.append(
        case(
            f"syn-lower/{n}",
            con,
            "lower_authority",
            [said, crm],
            lower,
            "quarantine",
            [job],
            declare=[JOB],
        )
    )
    moved = _msg("moved", f"I now work at {other}.", p)
    newer = works(p, other, "$moved", f"I now work at {other}", "delta:currentJobAt")
    out.append(
        case(
            f"syn-pinned/{n}",
            con,
            "against_pinned",
            [said, moved],
            newer,
            "quarantine",
            [job],
            pin=True,
            declare=[JOB],
        )
    )
    newer_dated = works(
        p,
        other,
        "$moved",
        f"I now work at {other}",
        "delta:currentJobAt",
        valid_from="2026-05-01T00:00:00Z",
    )
    out.append(
        case(
            f"syn-newer/{n}",
            con,
            "newer_authoritative",
            [said, moved],
            newer_dated,
            "supersede",
            [job],
            declare=[JOB],
        )
    )
    left = _msg("left", f"I no longer work at {org}.", p)
    negation = works(p, org, "$left", f"I no longer work at {org}", negated=True)
    out.append(
        case(
            f"syn-negation/{n}", con, "explicit_negation", [said, left], negation, "contest", [true]
        )
    )
    return out


def _twin_cases(n: int, a: str, b: str) -> list[dict[str, Any]]:
    org = PEOPLE[n % len(PEOPLE)][1]
    said = _msg("a", f"I work at {org}.", a)
    other = _msg("b", f"I work at {org} too.", b)
    setup = works(a, org, "$a", f"I work at {org}")
    proposal = works(b, org, "$b", f"I work at {org}")
    return [
        case(
            f"syn-twins/{n}",
            "restatement",
            "same_first_name",
            [said, other],
            proposal,
            "separate",
            [setup],
        )
    ]


def synthetic_cases() -> list[dict[str, Any]]:
    out = []
    for n, (p, org, other) in enumerate(PEOPLE):
        out += _person_cases(n, p, org, other)
    for n, (a, b) in enumerate(TWINS):
        out += _twin_cases(n, a, b)
    return out
