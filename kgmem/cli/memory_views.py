"""How ``kgmem memories`` and ``kgmem review`` print memories, decisions and gate outcomes."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import click
from rdflib import URIRef

from kgmem.api.tools.args import jsonable, short_id
from kgmem.memory import DecisionRecord, ItemResult, MemoryRecord, MemorySummary

__all__ = [
    "echo_json",
    "jsonable",
    "short",
    "show_decisions",
    "show_items",
    "show_record",
    "show_summaries",
]


def short(iri: URIRef | str | None) -> str:
    """The last path segment of a kgmem node (what the CLI accepts back), else the IRI."""
    return "-" if iri is None else short_id(iri)


def echo_json(value: Any) -> None:
    click.echo(json.dumps(jsonable(value), indent=2, ensure_ascii=False))


def _when(value: datetime | None) -> str:
    return "(unreadable)    " if value is None else value.strftime("%Y-%m-%d %H:%M")


def _confidence(value: float | None) -> str:
    return " -- " if value is None else f"{value:.2f}"


def show_summaries(summaries: list[MemorySummary], what: str = "memories") -> None:
    """One row per memory: id, status, kind, confidence, recorded, title."""
    if not summaries:
        click.echo(f"(no {what})")
        return
    click.echo(f"{'ID':<32}  {'STATUS':<14}  {'KIND':<10}  CONF  {'RECORDED':<16}  TITLE")
    for s in summaries:
        status = s.status.value + (", pinned" if s.pinned else "")
        click.echo(
            f"{short(s.iri):<32}  {status:<14}  {s.kind.value:<10}  {_confidence(s.confidence)}"
            f"  {_when(s.recorded_at)}  {s.title}"
        )
    click.echo(f"({len(summaries)} {what})")


def _scalar(value: Any) -> str:
    if value is None or value == []:
        return "-"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def show_record(record: MemoryRecord, names: dict[str, str]) -> None:
    """Every field, then a procedure's numbered steps, the claims (entities by name) and the
    evidence, one per line."""

    def named(iri: str) -> str:
        return f"{names[iri]} <{iri}>" if iri in names else f"<{iri}>"

    data = jsonable(record)
    claims, evidence, steps = data.pop("claims"), data.pop("evidence"), data.pop("steps")
    for name, value in data.items():
        click.echo(f"{name:<14} {_scalar(value)}")
    if steps:
        click.echo(f"steps ({len(steps)}):")
        for position, step in enumerate(steps, 1):
            click.echo(f"  {position}. {step}")
    click.echo(f"claims ({len(claims)}):")
    for claim in claims:
        obj = named(claim["object"]) if claim["object"] else json.dumps(claim["value"])
        negated = "  (negated)" if claim["negated"] else ""
        click.echo(f"  {named(claim['subject'])} <{claim['predicate']}> {obj}{negated}")
    click.echo(f"evidence ({len(evidence)}):")
    for item in evidence:
        span = f"{item['span'][0]}-{item['span'][1]}" if item["span"] else "-"
        click.echo(
            f"  {item['source']} ({item['source_type']}): support {item['support']},"
            f" authority {item['authority']}, span {span}"
            + (", agent-reported" if item["agent_reported"] else "")
            + (f", confirms {item['confirms']}" if item["confirms"] else "")
        )
        if item["quote"] is not None:
            click.echo(f"    quote: {json.dumps(item['quote'], ensure_ascii=False)}")


def show_items(items: tuple[ItemResult, ...]) -> None:
    """One line per draft: index, outcome, memory id, reasons."""
    for item in items:
        reasons = list(item.reasons)
        if item.needs_terms:
            reasons.append("needs terms: " + ", ".join(str(t) for t in item.needs_terms))
        line = f"{item.index:>3}  {item.outcome.value:<11}  {short(item.memory):<32}"
        click.echo(f"{line}  {'; '.join(reasons)}".rstrip())


def show_decisions(records: list[DecisionRecord]) -> None:
    if not records:
        click.echo("(no decisions)")
        return
    for d in records:
        reverted = f"  [reverted by {short(d.reverted_by)}]" if d.reverted_by else ""
        # a refusal acted on no memory: it names the draft it refused instead
        what = short(d.target) if d.draft is None else f"draft {d.draft.title!r}"
        click.echo(
            f"{short(d.iri)}  {_when(d.at)}  {d.action.value:<13}  {what}"
            f"  {d.actor}: {d.reason}{reverted}"
        )
    click.echo(f"({len(records)} decisions)")
