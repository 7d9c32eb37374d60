"""The committed schema.graphql is the schema the server serves."""

from __future__ import annotations

from pathlib import Path

from kgmem.api.graphql.schema import schema_text

SCHEMA = Path(__file__).resolve().parents[2] / "schema.graphql"


def test_schema_file_matches_the_served_schema() -> None:
    committed = SCHEMA.read_text(encoding="utf-8") if SCHEMA.is_file() else ""
    assert committed == schema_text(), (
        "schema.graphql differs from the schema: if the change is intended, regenerate it with "
        "`python -m kgmem.api.graphql.schema > schema.graphql` and commit it"
    )
