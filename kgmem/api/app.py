"""``create_app(settings)``: wires the services into one Starlette application."""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.routing import Route

from kgmem.api.accounts import Accounts
from kgmem.api.auth import KeyAuth, default_admin_key
from kgmem.api.body_cap import BodyCap
from kgmem.api.browser import browser_routes
from kgmem.api.errors import kgmem_error, unexpected_error
from kgmem.api.graphql.endpoint import graphql_route
from kgmem.api.jobs import Jobs
from kgmem.api.mcp.server import McpEndpoint
from kgmem.api.resets import ResetJobs
from kgmem.api.rest.admin import admin_routes
from kgmem.api.rest.health import health
from kgmem.api.rest.me import me
from kgmem.api.rest.routes import rest_routes
from kgmem.api.routing import http_error
from kgmem.api.services import Services, build_services
from kgmem.api.sparql.endpoint import SparqlEndpoint
from kgmem.api.startup import settle_digests
from kgmem.clock import Clock
from kgmem.config import Settings
from kgmem.errors import KgmemError

__all__ = ["create_app"]

log = logging.getLogger("kgmem.api")


def _warm(services: Services, stop: threading.Event) -> None:
    started = time.monotonic()
    try:
        users = services.warm(stop)
        log.info("search index of %d users ready in %.1f s", users, time.monotonic() - started)
        # what start-up built (the services, every user's search index) lives as long as the
        # server: kept out of the collector's full passes, which otherwise pause a request
        # for ~200 ms every few write batches at 10k memories
        gc.collect()
        gc.freeze()
    except Exception:  # each user's first search opens its index instead
        log.exception("loading the search index failed")
    finally:
        services.warmed.set()
    started = time.monotonic()
    try:
        # after: searches and repairs come first
        read = settle_digests(services.digests, services.store, services.queries, stop)
    except Exception:  # the next start reads them; a drift meanwhile is compared in full
        log.exception("reading the digests failed")
        return
    if read:
        log.info("digests of %d users read in %.1f s", read, time.monotonic() - started)


def create_app(
    settings: Settings, *, services: Services | None = None, clock: Clock | None = None
) -> Starlette:
    """Build the services once (or take the given ones) and the routes that use them.

    Start-up errors (broken query or shapes file, locked or corrupt store) raise here,
    before the server accepts a connection; so does the projections' start-up check (see
    :mod:`kgmem.api.services`). A store with no admin gets its first one here (the
    default user; its key in ``$KGMEM_HOME/api-key``, written again if it is gone): every
    route but ``/health`` needs a Bearer key (:mod:`kgmem.api.auth`).
    """
    # a drifted user's graph projection is repaired once the server answers (see _warm)
    built = services or build_services(settings, clock=clock, repair=False)
    accounts = Accounts(built.store, built.queries, built.clock)
    default_key = default_admin_key(accounts, settings)
    jobs = Jobs(built)
    resets = ResetJobs(built)
    mcp = McpEndpoint(built, settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        log.info("kgmem serving from %s", built.store.location)
        # the projections were levelled with the store in build_services; the search index
        # is loaded (or, where it drifted, rebuilt) in the background meanwhile
        stop = threading.Event()
        warming = threading.Thread(target=_warm, args=(built, stop), name="kgmem-warm", daemon=True)
        try:
            built.watch_vaults()  # edits to vault pages are read as they are made, from now on
            warming.start()
            jobs.start()
            async with mcp.running():
                yield
        finally:
            jobs.stop()  # before the store closes: no job may run on a closed store
            resets.close()  # a reset under way ends first
            stop.set()  # a user's rebuild under way finishes: it is saved for the next start
            if warming.is_alive():
                warming.join()
            built.close()
            gc.unfreeze()  # a process that goes on (tests) collects it as usual again
            log.info("store closed")

    app = Starlette(
        routes=[
            *browser_routes(),
            Route("/health", health),
            Route("/api/me", me),
            mcp.route,
            *rest_routes(settings),
            *admin_routes(),
            Route("/sparql", SparqlEndpoint(built), methods=["GET", "POST"]),
            graphql_route(built),
        ],
        middleware=[
            Middleware(BodyCap, cap=settings.max_body_bytes),
            Middleware(KeyAuth, accounts=accounts),
        ],
        exception_handlers={
            HTTPException: http_error,
            KgmemError: kgmem_error,
            Exception: unexpected_error,
        },
        lifespan=lifespan,
    )
    app.state.services = built
    app.state.accounts = accounts
    app.state.default_key = default_key  # `kgmem serve` says when it wrote one
    app.state.jobs = jobs
    app.state.resets = resets
    return app
