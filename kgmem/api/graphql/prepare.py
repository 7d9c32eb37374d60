"""Parsing and validating a GraphQL document off the event loop.

Strawberry parses and validates on the event loop, so while a large document is read (1 MiB
of comment takes ~0.3 s to lex) no other request of any user is answered, not even
``/health``. :class:`PrepareOffLoop` does both steps on a worker thread first; strawberry
then finds the document parsed and the validation done and skips its own.

It also refuses what graphql-core would otherwise leave to chance: a document of several
operations with no ``operationName`` (strawberry ran the first).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio.to_thread
from graphql import DocumentNode, GraphQLError, OperationDefinitionNode, parse
from strawberry.extensions import SchemaExtension
from strawberry.schema.schema import validate_document

__all__ = ["PrepareOffLoop"]


def _parse(query: str, options: dict[str, Any], operation: str | None) -> DocumentNode:
    document = parse(query, **options)
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if operation is None and len(operations) > 1:
        raise GraphQLError(
            f"The document holds {len(operations)} operations: operationName must name one.",
            extensions={"field": "operationName", "code": "BAD_REQUEST"},
        )
    return document


class PrepareOffLoop(SchemaExtension):
    """Parse and validate on a worker thread (see the module docstring)."""

    async def on_parse(self) -> AsyncIterator[None]:
        context = self.execution_context
        if context.graphql_document is None and context.query:
            context.graphql_document = await anyio.to_thread.run_sync(
                _parse, context.query, dict(context.parse_options), context.operation_name
            )
        yield

    async def on_validate(self) -> AsyncIterator[None]:
        context = self.execution_context
        document = context.graphql_document
        if context.pre_execution_errors is None and document is not None:
            context.pre_execution_errors = await anyio.to_thread.run_sync(
                validate_document, context.schema._schema, document, context.validation_rules
            )
        yield
