"""A real OpenAI-compatible model server on loopback, answering from a per-test script.

:class:`ModelServer` is a stdlib ``ThreadingHTTPServer`` bound to ``127.0.0.1`` on a free port.
It answers ``POST /v1/chat/completions`` in the OpenAI format and everything else with 404.
What it says comes from two places, consulted in this order:

1. HTTP-level answers (:meth:`ModelServer.then` queues them, :meth:`ModelServer.always`
   stands them), each for the next request matching a model name and/or a signature:
   a content string, a status code (``500``, ``429``, or a :class:`Status` with a message and a
   ``Retry-After``), a :class:`Slow` answer (a delay, then an answer), or a :class:`Raw`
   body sent as is (malformed JSON);
2. the recorded engine of :mod:`kgmem.pipeline.scripted` (``server.engine``), which answers
   per DSPy signature the way the in-process scripted model does, standing on
   :func:`~kgmem.pipeline.scripted.neutral_replies`; script it with ``server.engine.add``.

A server made with a ``key`` answers 401 to any request whose ``Authorization`` is not
``Bearer <key>``. Every request is recorded (path, headers, JSON body) in ``server.requests``.
A mistake in the script (no reply left for a signature) is answered with a 500 and kept in
``server.errors``; the fixture that owns the server fails the test when it holds any.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import dspy
from dspy.lm15 import Message, Request

from kgmem.pipeline.scripted import SIGNATURES, ScriptedEngine, neutral_replies

__all__ = ["ModelServer", "Raw", "Recorded", "Slow", "Status", "serve_model"]

_OUTPUTS = re.compile(r"Your output fields are:\n(.*?)\n(?:All interactions|$)", re.S)


@dataclass(frozen=True)
class Status:
    """An HTTP error in OpenAI's error format; ``retry_after`` adds a ``Retry-After`` header."""

    code: int
    message: str = "scripted failure"
    retry_after: float | None = None


@dataclass(frozen=True)
class Slow:
    """Wait ``seconds`` (cut short when the server stops), then answer ``then`` (None: the
    engine answers)."""

    seconds: float
    then: Answer | None = None


@dataclass(frozen=True)
class Raw:
    """A 200 whose body is ``body`` as is, e.g. JSON cut off halfway."""

    body: str


Answer = str | int | Status | Slow | Raw


@dataclass(frozen=True)
class Recorded:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: Any  # the JSON body, None when it was not JSON
    at: float  # time.monotonic() when it arrived

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def authorization(self) -> str | None:
        return self.headers.get("authorization")

    @property
    def signature(self) -> type[dspy.Signature] | None:
        """The DSPy signature asking, told by the output fields its system prompt lists."""
        return _signature(_request(self.body)) if isinstance(self.body, dict) else None

    @property
    def prompt(self) -> str:
        """Every message's text, in order."""
        if not isinstance(self.body, dict):
            return ""
        return "\n".join(_text(m.get("content")) for m in self.body.get("messages", []))


@dataclass
class _Rule:
    answer: Answer
    model: str | None
    signature: type[dspy.Signature] | None

    def matches(self, model: str | None, signature: type[dspy.Signature] | None) -> bool:
        return (self.model is None or self.model == model) and (
            self.signature is None or self.signature is signature
        )


@dataclass
class ModelServer:
    key: str | None = None
    engine: ScriptedEngine = field(
        default_factory=lambda: ScriptedEngine(standing=neutral_replies())
    )
    requests: list[Recorded] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _queue: list[_Rule] = field(default_factory=list)
    _standing: list[_Rule] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _http: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    # -- the script ------------------------------------------------------------------------

    def then(
        self,
        *answers: Answer,
        model: str | None = None,
        signature: type[dspy.Signature] | None = None,
    ) -> ModelServer:
        """Answer the next matching requests with ``answers``, in order, once each."""
        with self._lock:
            self._queue.extend(_Rule(a, model, signature) for a in answers)
        return self

    def always(
        self,
        answer: Answer | None,
        *,
        model: str | None = None,
        signature: type[dspy.Signature] | None = None,
    ) -> ModelServer:
        """Answer every matching request with ``answer`` (after the queue); None clears every
        standing answer."""
        with self._lock:
            if answer is None:
                self._standing.clear()
            else:
                self._standing.append(_Rule(answer, model, signature))
        return self

    def calls(
        self, signature: type[dspy.Signature] | None = None, *, path: str | None = None
    ) -> list[Recorded]:
        """Recorded requests, of ``signature`` and at ``path`` when given."""
        with self._lock:
            seen = list(self.requests)
        return [
            r
            for r in seen
            if (signature is None or r.signature is signature) and (path is None or r.path == path)
        ]

    # -- running ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._http is not None, "the server is not running"
        return int(self._http.server_address[1])

    @property
    def url(self) -> str:
        """The base URL to configure as ``model_api_base``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ModelServer:
        handler = type("Handler", (_Handler,), {"model_server": self})
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- answering (on the server's threads) -----------------------------------------------

    def _record(self, handler: BaseHTTPRequestHandler, raw: bytes) -> Recorded:
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {name.lower(): value for name, value in handler.headers.items()}
        recorded = Recorded(handler.command, handler.path, headers, body, time.monotonic())
        with self._lock:
            self.requests.append(recorded)
        return recorded

    def _scripted(self, recorded: Recorded) -> Answer | None:
        signature = recorded.signature
        with self._lock:
            for n, rule in enumerate(self._queue):
                if rule.matches(recorded.model, signature):
                    del self._queue[n]
                    return rule.answer
            for rule in self._standing:
                if rule.matches(recorded.model, signature):
                    return rule.answer
        return None

    def _engine_answer(self, recorded: Recorded) -> str | Status:
        try:
            response = self.engine.complete(_request(recorded.body))
        except Exception as exc:  # a script mistake (the model itself "failing" is an Answer)
            self.errors.append(f"{type(exc).__name__}: {exc}")
            return Status(500, f"script error: {exc}")
        return str(response.message.text or "")

    def answer(self, recorded: Recorded) -> tuple[int, dict[str, str], bytes]:
        """Status, headers and body for one chat completion request."""
        if self.key is not None and recorded.authorization != f"Bearer {self.key}":
            return _error(Status(401, "Incorrect API key provided"), "invalid_api_key")
        found = self._scripted(recorded)
        while isinstance(found, Slow):
            self._stopping.wait(found.seconds)
            found = found.then
        if found is None:
            found = self._engine_answer(recorded)
        if isinstance(found, int):
            found = Status(found)
        if isinstance(found, Status):
            return _error(found, "scripted")
        if isinstance(found, Raw):
            return 200, {"Content-Type": "application/json"}, found.body.encode()
        return 200, {"Content-Type": "application/json"}, _completion(recorded, found)


class _Handler(BaseHTTPRequestHandler):
    model_server: ModelServer
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        recorded = self.model_server._record(self, raw)
        if self.path != "/v1/chat/completions":
            self._send(404, {"Content-Type": "application/json"}, b'{"error": "not found"}')
            return
        self._send(*self.model_server.answer(recorded))

    def do_GET(self) -> None:
        self.model_server._record(self, b"")
        self._send(404, {"Content-Type": "application/json"}, b'{"error": "not found"}')

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:  # the client gave up (its timeout) before the answer
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        return None


def _text(content: Any) -> str:
    """A message's content as text: a string, or OpenAI's list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _request(body: dict[str, Any]) -> Request:
    """The OpenAI request body as the ``dspy.lm15.Request`` the scripted engine reads."""
    messages = body.get("messages", [])
    system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    rest = tuple(
        Message.assistant(_text(m.get("content")))
        if m.get("role") == "assistant"
        else Message.user(_text(m.get("content")))
        for m in messages
        if m.get("role") != "system"
    )
    return Request(model=str(body.get("model", "")), messages=rest, system=system or None)


def _signature(request: Request) -> type[dspy.Signature] | None:
    system = request.system if isinstance(request.system, str) else ""
    found = _OUTPUTS.search(system)
    names = tuple(re.findall(r"^\d+\. `(\w+)`", found.group(1), re.M)) if found else ()
    return next((s for s in SIGNATURES if tuple(s.output_fields) == names), None)


def _completion(recorded: Recorded, content: str) -> bytes:
    body = {
        "id": f"chatcmpl-{len(content)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": recorded.model or "",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    return json.dumps(body).encode()


def _error(status: Status, code: str) -> tuple[int, dict[str, str], bytes]:
    headers = {"Content-Type": "application/json"}
    if status.retry_after is not None:
        headers["Retry-After"] = f"{status.retry_after:g}"
    body = {"error": {"message": status.message, "type": "server_error", "code": code}}
    return status.code, headers, json.dumps(body).encode()


@contextmanager
def serve_model(key: str | None = None) -> Iterator[ModelServer]:
    """A running :class:`ModelServer`; stopped (its slow answers cut short) on exit."""
    server = ModelServer(key=key).start()
    try:
        yield server
    finally:
        server.stop()
