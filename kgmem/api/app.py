"""``create_app(settings)``: wires the services into one Starlette application."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.routing import Route

from kgmem.api.health import health
from kgmem.api.jobs import Jobs
from kgmem.api.services import Services, build_services
from kgmem.clock import Clock
from kgmem.config import Settings

__all__ = ["create_app"]

log = logging.getLogger("kgmem.api")


def create_app(
    settings: Settings, *, services: Services | None = None, clock: Clock | None = None
) -> Starlette:
    """Build the services once (or take the given ones) and the routes that use them.

    Start-up errors (broken query or shapes file, locked or corrupt store) raise here,
    before the server accepts a connection; so does the projections' start-up check (see
    :mod:`kgmem.api.services`).
    """
    built = services or build_services(settings, clock=clock)

    jobs = Jobs(built)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        log.info("kgmem serving from %s", built.store.location)
        try:
            # the projections were levelled with the store in build_services; the search
            # index is built now so no first search pays for it
            users = built.warm()
            log.info("search index built for %d users", users)
            jobs.start()
            yield
        finally:
            jobs.stop()  # before the store closes: no job may run on a closed store
            built.close()
            log.info("store closed")

    app = Starlette(routes=[Route("/health", health)], lifespan=lifespan)
    app.state.services = built
    app.state.jobs = jobs
    return app
