"""Print the GraphQL schema (SDL): ``python -m kgmem.api.graphql.schema > schema.graphql``.

The committed ``schema.graphql`` at the repository root is checked against this output by
the tests, so a change to the schema is always a visible change to that file.
"""

from __future__ import annotations

import sys

from kgmem.api.graphql.endpoint import build_schema

__all__ = ["schema_text"]


def schema_text() -> str:
    """The schema as SDL, ending with one newline."""
    return build_schema().as_str().rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.stdout.write(schema_text())
