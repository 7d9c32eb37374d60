"""The memory browser in Debian's Chromium, driven by Playwright, against a real uvicorn.

Chromium is the system's (``/usr/bin/chromium``, installed by ``make test``), never a
browser Playwright downloads. Every page runs with a request guard: a request to anything but
the server's loopback address is aborted and recorded, and a test that caused one fails; so
does one that logged a console error or raised in the page. Each view's screenshot is saved
under ``build/screenshots/`` (not committed).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import count
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Page,
    Playwright,
    Request,
    Route,
    sync_playwright,
)

from kgmem.api.accounts import Role
from kgmem.api.browser import BROWSER_DIR, CHROMIUM, CHROMIUM_FLAGS
from kgmem.memory import WriteMode
from tests.api.support import ApiServer, api_server
from tests.browser.world import (
    BOB_CHATS,
    MAYA_CHATS,
    Written,
    bob_drafts,
    maya_drafts,
    maya_held,
    write,
)
from tests.conftest import REPO

SHOTS = REPO / "build" / "screenshots"
LIBRARY = BROWSER_DIR / "node_modules" / "cytoscape" / "package.json"
_users = count()


def _missing() -> str | None:
    if not CHROMIUM.exists():
        return (
            f"{CHROMIUM} is absent (`make test` installs it as root; or: apt-get install chromium)"
        )
    if not LIBRARY.exists():
        return f"{LIBRARY.parent} is absent (`make test` runs npm ci in {BROWSER_DIR})"
    return None


# module-scoped: Playwright's sync API runs an event loop in this thread while it is open,
# and the next module on this worker may run asyncio itself
@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    missing = _missing()
    if missing is not None:  # never a skip: `make test` installs both
        pytest.fail(f"the browser tests cannot run: {missing}", pytrace=False)
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_FLAGS))
    yield instance
    instance.close()


@dataclass
class Watch:
    """What a page did that it must not: requests off loopback, console errors, exceptions."""

    origin: str
    outside: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def route(self, route: Route, request: Request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme in ("data", "blob") or f"{parts.scheme}://{parts.netloc}" == self.origin:
            route.continue_()
            return
        self.outside.append(request.url)
        route.abort()

    def console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(f"console {message.type}: {message.text}")


@dataclass
class Ui:
    page: Page
    base: str
    watch: Watch

    def sign_in(self, token: str) -> None:
        self.page.goto(self.base + "/")
        self.page.fill("#key", token)
        self.page.click("#sign-in-form button[type=submit]")
        self.page.wait_for_selector("body[data-graph=ready]", timeout=30_000)

    def shot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)


@pytest.fixture
def ui(browser: Browser, world: World) -> Iterator[Ui]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    watch = Watch(world.server.base)
    context.route("**/*", watch.route)
    page = context.new_page()
    page.on("console", watch.console)
    page.on("pageerror", lambda exc: watch.errors.append(f"page error: {exc}"))
    page.set_default_timeout(15_000)
    yield Ui(page, world.server.base, watch)
    context.close()
    assert watch.outside == [], f"requests left loopback: {watch.outside}"
    assert watch.errors == [], watch.errors


@dataclass
class World:
    server: ApiServer

    def token(self, uid: str, admin: bool = False) -> str:
        accounts = self.server.app.state.accounts
        known = {a.uid for a in accounts.all()}
        if uid in known:
            return str(accounts.issue(uid).token)
        return str(accounts.add(uid, role=Role.ADMIN if admin else Role.USER).token)

    def maya(self, uid: str | None = None) -> tuple[str, Written]:
        """A new user with Maya's week (a fresh id unless given): their id and what was written."""
        uid = uid or f"maya{next(_users)}"
        with self.server.client(uid) as client:
            written = write(client, MAYA_CHATS, maya_drafts())
            self.server.app.state.services.gate.set_mode(uid, WriteMode.REVIEW)
            held = write(client, {}, [maya_held()])
            self.server.app.state.services.gate.set_mode(uid, WriteMode.AUTONOMOUS)
        assert self.server.app.state.services.settle(), "pages did not catch up"
        written.outcomes.update(held.outcomes)
        written.memories.update(held.memories)
        return uid, written


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with api_server(tmp_path_factory, "browser") as server:
        with server.client("bob") as client:
            write(client, BOB_CHATS, bob_drafts())
        assert server.app.state.services.settle(), "pages did not catch up"
        yield World(server)
