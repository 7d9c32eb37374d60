"""A loopback listener that records every connection made to it: a test that names its URL in
a request and then finds a connection here has caught the server reaching out."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Tripwire:
    url: str
    connections: list[tuple[str, int]] = field(default_factory=list)


@contextmanager
def tripwire() -> Iterator[Tripwire]:
    """Listen on a free loopback port; every accepted connection is recorded and closed."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.1)
    wire = Tripwire(f"http://127.0.0.1:{listener.getsockname()[1]}/x")
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, peer = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            wire.connections.append(peer)
            conn.close()

    thread = threading.Thread(target=accept, name="tripwire", daemon=True)
    thread.start()
    try:
        yield wire
    finally:
        stop.set()
        thread.join(timeout=2)
        listener.close()
