"""One Kùzu connection as the projection uses it: statements and their rows, transactions,
reads planned once, and the connection renewed before it holds too much.

Kùzu 0.11's connection keeps every parameter value it was given until it is closed
(measured: ~1.6 KB a row of a rebuild's ``$rows``, 10 GB by the time a 1M-memory user was
half written; a connection closed and opened again gives it all back). So the connection is
renewed, between transactions, once it has been given ``_RENEW_AFTER`` parameters (a row of
``$rows`` counts one): a rebuild stays flat, and so does a server that refreshes for months.
Kùzu's own errors become :class:`~kgmem.errors.StoreOperationFailed` here.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, cast

import kuzu

from kgmem.errors import StoreOperationFailed

__all__ = ["Connection"]

_RENEW_AFTER = 100_000  # parameters given to one connection
_PLANS = 64  # reads kept planned on a connection


def _next_rows(result: kuzu.QueryResult, size: int = 20_000) -> list[list[Any]]:
    """Up to ``size`` more rows of ``result``."""
    rows: list[list[Any]] = []
    while len(rows) < size and result.has_next():
        rows.append(cast(list[Any], result.get_next()))
    return rows


class Connection:
    """A connection to the projection's database; callers serialize access."""

    def __init__(self, database: kuzu.Database) -> None:
        self._database = database
        self._conn = kuzu.Connection(database)
        self._plans: dict[str, kuzu.PreparedStatement] = {}  # reads planned on _conn
        self._given = 0  # parameters the connection holds (see the module)
        self._open = 0  # transactions under way: the connection is not renewed in one

    def close(self) -> None:
        self._conn.close()
        self._database.close()

    def run(
        self, cypher: str, params: dict[str, Any] | None = None, *, prepared: bool = False
    ) -> list[list[Any]]:
        """``cypher``'s rows. ``prepared``: plan it once on this connection and keep the
        plan (a read repeated with other keys: Kùzu plans a query given as text at each
        call, ~2 ms of a one-hop read's ~3 at a million memories). Not a walk: Kùzu binds its
        recursive filter's parameters at planning."""
        try:
            query: str | kuzu.PreparedStatement = cypher
            if prepared:
                query = self._plans.get(cypher) or self._plan(cypher)
            result = self._conn.execute(query, params or {})
            assert not isinstance(result, list)
            rows = cast(list[list[Any]], result.get_all())
        except RuntimeError as exc:
            raise StoreOperationFailed("graph projection", str(exc)) from exc
        self._given += sum(len(v) if isinstance(v, list) else 1 for v in (params or {}).values())
        if not self._open:
            self._renew()
        return rows

    def chunks(self, cypher: str, params: dict[str, Any]) -> Iterator[list[list[Any]]]:
        """``cypher``'s rows a chunk at a time, as Kùzu hands them over (a whole table is
        never held as one list)."""
        try:
            result = self._conn.execute(cypher, params)
            assert not isinstance(result, list)
            while chunk := _next_rows(result):
                yield chunk
        except RuntimeError as exc:
            raise StoreOperationFailed("graph projection", str(exc)) from exc

    def _plan(self, cypher: str) -> kuzu.PreparedStatement:
        plan = kuzu.PreparedStatement(self._conn, cypher)
        if not plan.is_success():
            raise RuntimeError(plan.get_error_message())
        if len(self._plans) >= _PLANS:
            self._plans.clear()
        self._plans[cypher] = plan
        return plan

    def _renew(self) -> None:
        """A new connection, when this one holds ``_RENEW_AFTER`` parameters."""
        if self._given >= _RENEW_AFTER:
            self._plans.clear()  # a plan belongs to its connection
            self._conn.close()
            self._conn = kuzu.Connection(self._database)
            self._given = 0

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One Kùzu transaction: committed at the end, rolled back on any error."""
        self.begin()
        try:
            yield
        except BaseException:
            with suppress(StoreOperationFailed):  # a failed COPY has rolled back already
                self.run("ROLLBACK")
            self._open -= 1
            raise
        self.commit()

    def begin(self) -> None:
        self.run("BEGIN TRANSACTION")
        self._open += 1

    def commit(self) -> None:
        self.run("COMMIT")
        self._open -= 1
        if not self._open:
            self._renew()
