"""The memory browser: a read-only web UI at ``/`` over the GraphQL API.

The page and its script are static files (``browser/static``); the graph and Markdown
libraries come from the npm registry (``browser/package-lock.json``), installed into
``browser/node_modules`` by ``make serve`` and ``make test`` and served from there, never
copied into git. None of these files holds data, so they need no key (like ``/health``):
the page asks for the key, keeps it for the tab (``sessionStorage``) and sends it as a
Bearer header with every GraphQL request, so no cookie carries authority and a forged
cross-site request has nothing to ride on.

Only names listed here are served: a request names a file, never a path, so nothing
outside these folders can be reached. Every answer carries a Content-Security-Policy that
lets the page load and connect to this origin only: nothing it renders (a page's Markdown
included) can reach another host.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from kgmem.api.errors import error_response

__all__ = [
    "BROWSER_DIR",
    "CHROMIUM",
    "CHROMIUM_FLAGS",
    "OPEN_PREFIX",
    "browser_routes",
    "is_browser_path",
]

BROWSER_DIR = Path(__file__).resolve().parent.parent.parent / "browser"
OPEN_PREFIX = "/ui/"
# How the browser tests and benchmarks/browser.py run it: Debian's chromium (a browser a test
# tool downloads fails here), headless, with the features that would call out turned off.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
_STATIC = BROWSER_DIR / "static"
_MODULES = BROWSER_DIR / "node_modules"
_FILES = {"app.js": "text/javascript", "app.css": "text/css", "graph.js": "text/javascript"}
_LIBRARIES = {  # served name -> the file in node_modules
    "cytoscape.min.js": "cytoscape/dist/cytoscape.min.js",
    "markdown-it.min.js": "markdown-it/dist/browser/markdown-it.umd.min.js",
}
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}


def is_browser_path(path: str, method: str) -> bool:
    """A request for the browser's static files (no data: no key needed)."""
    return method in ("GET", "HEAD") and (path == "/" or path.startswith(OPEN_PREFIX))


async def _index(request: Request) -> Response:
    return FileResponse(_STATIC / "index.html", media_type="text/html", headers=_HEADERS)


async def _file(request: Request) -> Response:
    name = request.path_params["name"]
    media = _FILES.get(name)
    if media is None:
        return error_response(404, "not_found", f"no browser file {name!r}", "path")
    return FileResponse(_STATIC / name, media_type=media, headers=_HEADERS)


async def _library(request: Request) -> Response:
    name = request.path_params["name"]
    relative = _LIBRARIES.get(name)
    if relative is None:
        return error_response(404, "not_found", f"no browser library {name!r}", "path")
    path = _MODULES / relative
    if not path.is_file():
        return error_response(
            503,
            "not_installed",
            f"the browser library {name} is not installed: run `make serve` "
            f"(or `npm ci` in {BROWSER_DIR})",
            None,
        )
    return FileResponse(path, media_type="text/javascript", headers=_HEADERS)


def browser_routes() -> list[Route]:
    return [
        Route("/", _index, methods=["GET", "HEAD"]),
        Route(OPEN_PREFIX + "lib/{name}", _library, methods=["GET", "HEAD"]),
        Route(OPEN_PREFIX + "{name}", _file, methods=["GET", "HEAD"]),
    ]
