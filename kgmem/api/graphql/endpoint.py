"""GraphQL at ``/graphql`` (strawberry): GraphiQL on GET, queries and mutations on POST.

The endpoint is behind :class:`~kgmem.api.auth.KeyAuth` like every route; the caller's key
is the only scope (no argument names a user). Expected failures are union members
(:mod:`kgmem.api.graphql.results`); an unexpected error is logged with its traceback and
answered as "Unexpected error." (``MaskErrors``), while GraphQL's own validation errors,
the depth limit and the alias and token limits keep their messages. Documents are parsed and
validated on a worker thread (:mod:`kgmem.api.graphql.prepare`), never on the event loop.

    curl -s localhost:8765/graphql -H "Authorization: Bearer $KEY" \\
      -H 'Content-Type: application/json' -d '{"query": "{ me { id } }"}'

The schema is committed as ``schema.graphql``; ``python -m kgmem.api.graphql.schema``
prints it.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import strawberry
from cross_web import HTTPException
from graphql import GraphQLError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.extensions import AddValidationRules, MaskErrors, MaxTokensLimiter
from strawberry.types import ExecutionContext
from strawberry.types.unset import UNSET

from kgmem.api.auth import principal_of
from kgmem.api.graphql.context import GraphContext
from kgmem.api.graphql.limits import MAX_ALIASES, MAX_COST, MAX_DEPTH, DocumentLimits
from kgmem.api.graphql.mutation import Mutation
from kgmem.api.graphql.prepare import PrepareOffLoop
from kgmem.api.graphql.query import Query
from kgmem.api.services import Services

__all__ = [
    "MAX_ALIASES",
    "MAX_COST",
    "MAX_DEPTH",
    "MAX_TOKENS",
    "GraphQLEndpoint",
    "build_schema",
    "graphql_route",
]

log = logging.getLogger("kgmem.api")

MAX_TOKENS = 2000


def _unexpected(error: GraphQLError) -> bool:
    """An error a resolver raised (not a GraphQL validation or limit error)."""
    original = error.original_error
    return original is not None and not isinstance(original, GraphQLError)


class _Schema(strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        for error in errors:
            if _unexpected(error):
                log.error("GraphQL %s failed", error.path, exc_info=error.original_error)


def build_schema() -> strawberry.Schema:
    """The schema with its limits and error masking."""
    return _Schema(
        query=Query,
        mutation=Mutation,
        extensions=[
            lambda: AddValidationRules([DocumentLimits]),  # depth, aliases, cost: linear
            lambda: MaxTokensLimiter(max_token_count=MAX_TOKENS),
            PrepareOffLoop,  # after the limits above: it parses and validates with them
            lambda: MaskErrors(should_mask_error=_unexpected),
        ],
    )


class GraphQLEndpoint(GraphQL[GraphContext, None]):
    """Strawberry's ASGI app with the caller and the services as the request context."""

    def __init__(self, services: Services, schema: strawberry.Schema | None = None) -> None:
        super().__init__(schema or build_schema(), graphql_ide="graphiql")
        self.services = services

    async def run(self, request: Any, context: Any = UNSET, root_value: Any = UNSET) -> Any:
        """The GraphiQL page before any context: static HTML that a browser asks for without
        a key (:class:`~kgmem.api.auth.KeyAuth` lets it through), and the context needs the
        caller."""
        if (
            isinstance(request, Request)
            and "principal" not in request.scope.get("state", {})
            and self.should_render_graphql_ide(self.request_adapter_class(request))
        ):
            return await self.render_graphql_ide(request)
        return await super().run(request, context, root_value)

    def decode_json(self, data: str | bytes) -> object:
        """JSON as strawberry reads it, but an array nested past Python's recursion limit,
        or a body that is not an object, is a 400, not an internal error."""
        try:
            decoded = json.loads(data)
        except RecursionError:
            raise json.JSONDecodeError("nested too deeply", str(data)[:40], 0) from None
        if not isinstance(decoded, dict):  # strawberry reads it with .get: a 500 otherwise
            raise HTTPException(400, "The body must be a JSON object with a query.")
        return decoded

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> GraphContext:
        assert isinstance(request, Request) and isinstance(response, Response)
        return GraphContext(request, response, self.services, principal_of(request))


def graphql_route(services: Services) -> Route:
    """``/graphql`` itself (a Mount would redirect it to ``/graphql/``)."""
    return Route("/graphql", GraphQLEndpoint(services), methods=["GET", "POST"])
