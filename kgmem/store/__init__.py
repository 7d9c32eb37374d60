"""The store layer: the ``TripleStore`` port, its adapters, graph names and named queries."""

from kgmem.store.base import (
    AskResult,
    Bindings,
    Changeset,
    CommitHook,
    Dataset,
    GraphResult,
    Quad,
    QueryResult,
    RdfFormat,
    Row,
    SelectResult,
    Term,
    Transaction,
    TripleStore,
)
from kgmem.store.facts import StoreFacts, collect_facts
from kgmem.store.graphs import (
    ACCOUNTS_GRAPH,
    USER_NODE_BASE,
    GraphKind,
    ParsedGraph,
    UserGraphs,
    catalogue_graph,
    check_id,
    parse_graph,
    shapes_graph,
    users_with,
)
from kgmem.store.oxigraph import OxigraphStore
from kgmem.store.queries import Query, QueryKind, QueryRegistry
from kgmem.store.serialize import from_nquads, to_nquads

__all__ = [
    "ACCOUNTS_GRAPH",
    "USER_NODE_BASE",
    "AskResult",
    "Bindings",
    "Changeset",
    "CommitHook",
    "Dataset",
    "GraphKind",
    "GraphResult",
    "OxigraphStore",
    "ParsedGraph",
    "Quad",
    "Query",
    "QueryKind",
    "QueryRegistry",
    "QueryResult",
    "RdfFormat",
    "Row",
    "SelectResult",
    "StoreFacts",
    "Term",
    "Transaction",
    "TripleStore",
    "UserGraphs",
    "catalogue_graph",
    "check_id",
    "collect_facts",
    "from_nquads",
    "parse_graph",
    "shapes_graph",
    "to_nquads",
    "users_with",
]
