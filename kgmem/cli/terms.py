"""``kgmem ontology search`` and ``kgmem ontology explain``: look terms up in the catalogue."""

from __future__ import annotations

import json

import click
from rdflib import URIRef

from kgmem.cli.common import fail, local_store
from kgmem.cli.ontology import ontology
from kgmem.config import load_settings
from kgmem.ontology.service import OntologyService
from kgmem.ontology.vocabulary import TermKind
from kgmem.store import QueryRegistry
from kgmem.vocab import PREFIXES

__all__ = ["disjoint", "search"]


def expand(term: str) -> URIRef:
    """``schema:Person`` → the full IRI, using kgmem's standard prefixes."""
    prefix, _, local = term.partition(":")
    if prefix in PREFIXES and not local.startswith("//"):
        return URIRef(PREFIXES[prefix] + local)
    return URIRef(term)


@ontology.command()
@click.argument("text")
@click.option("--limit", type=click.IntRange(1, 200), default=10, show_default=True)
@click.option("--kind", type=click.Choice([k.value for k in TermKind]), default=None)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def search(text: str, limit: int, kind: str | None, as_json: bool) -> None:
    """Find catalogue terms by label, alternate label or local name."""
    settings = load_settings()
    with local_store(settings, "search the catalogue") as store:
        ontology = OntologyService(store, QueryRegistry.load(), settings.catalogue_index_path)
        hits = ontology.search(text, limit, TermKind(kind) if kind else None)
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "term": str(h.term),
                        "label": h.label,
                        "kind": h.kind.value,
                        "ontology": str(h.ontology),
                        "score": h.score,
                        "matched": h.matched,
                    }
                    for h in hits
                ],
                indent=2,
            )
        )
        return
    if not hits:
        click.echo(f"no term matches {text!r}")
    for h in hits:
        source = str(h.ontology or "").rsplit(":", 1)[-1]
        click.echo(f"{h.score:>9.2f}  {h.kind.value:<8}  {h.term}  {h.label!r}  [{source}]")


@ontology.command()
@click.argument("a")
@click.argument("b")
def disjoint(a: str, b: str) -> None:
    """Say whether classes A and B are disjoint, and which axioms prove it."""
    settings = load_settings()
    with local_store(settings, "query the catalogue") as store:
        kept = settings.catalogue_index_path
        vocab = OntologyService(store, QueryRegistry.load(), kept).vocabulary()
    first, second = expand(a), expand(b)
    for term in (first, second):
        if vocab.kind_of(term) is None:
            fail(f"{term} is not a class of the installed catalogue")
    proof = vocab.disjointness(first, second)
    if proof is None:
        click.echo(f"not disjoint: no axiom separates {first} and {second}")
        return
    click.echo(f"disjoint: {proof.explain()}")
