"""The process one user query runs in, and the frames it and its parent exchange.

This file is also run as a script (``python -I child.py``) and then imports only the
standard library and pyoxigraph: a worker costs ~20 MB and starts in ~0.1 s. It reads one
request at a time from stdin, runs it on a read-only copy of the store (a RocksDB
checkpoint the parent made) and writes the answer to stdout.

The parent stops a query by killing its process: pyoxigraph cannot cancel a running query,
and a Python callback cannot stop Oxigraph's joins or sorts (see STACK.md). It also watches
the worker's resident memory while it waits and kills a worker that outgrows its budget
(``RLIMIT_DATA`` is no bound here: RocksDB's threads reserve ~75 MB of address space they
never touch). The worker runs at a lower CPU priority than the server, asks the kernel to
kill it if the parent dies, and, where the kernel allows it, leaves the network altogether
(a network namespace of its own, with no interfaces), so even a query the parse-tree check
missed could reach nothing.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import struct
import sys
from itertools import islice
from typing import IO, Any

_LENGTH = struct.Struct("!Q")
_PR_SET_PDEATHSIG = 1
_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000


def write_frame(stream: IO[bytes], value: object) -> None:
    """Send ``value`` as one length-prefixed pickle."""
    body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(body)) + body)
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    """The next value :func:`write_frame` sent; :class:`EOFError` when the stream ended."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        raise EOFError("the other side closed the stream")
    (length,) = _LENGTH.unpack(head)
    body = stream.read(length)
    if len(body) < length:
        raise EOFError("the other side closed the stream mid-frame")
    return pickle.loads(body)  # frames come only from our own processes


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _leave_the_network() -> bool:
    """Move this process into a network namespace of its own, which has no interfaces: a
    query that somehow got past the parse-tree check (SERVICE) could reach nothing, not even
    loopback. Whether the kernel allowed it (user namespaces may be disabled)."""
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) == 0 or (
        os.geteuid() == 0 and libc.unshare(_CLONE_NEWNET) == 0
    )


def answer(store: Any, request: dict[str, Any]) -> tuple[Any, ...]:
    """Run one request on ``store``: ``("ask", bool)``, ``("select", names, rows)``,
    ``("graph", triples)`` or ``("error", kind, message)``."""
    import pyoxigraph as ox

    limit = request["limit"]
    try:
        result = store.query(
            request["text"],
            prefixes=request["prefixes"],
            use_default_graph_as_union=request["union"],
            default_graph=request["default"],
            named_graphs=request["named"],
        )
        if isinstance(result, ox.QueryBoolean):
            return ("ask", bool(result))
        if isinstance(result, ox.QuerySolutions):
            names = [v.value for v in result.variables]
            rows = [tuple(s[n] for n in names) for s in _taken(result, limit)]
            return ("select", names, rows)
        return ("graph", list(_taken(result, limit)))
    except _OverLimit:
        return ("error", "limit", str(limit))
    except SyntaxError as exc:
        return ("error", "syntax", str(exc).splitlines()[0] if str(exc) else "syntax error")
    except MemoryError:
        return ("error", "memory", "")
    except RuntimeError as exc:  # pyoxigraph's evaluation errors: the query's own fault
        return ("error", "evaluation", str(exc))
    except OSError as exc:  # reading the store failed
        return ("error", "store", str(exc))


class _OverLimit(Exception):
    pass


def _taken(results: Any, limit: int | None) -> list[Any]:
    if limit is None:
        return list(results)
    taken = list(islice(results, limit + 1))
    if len(taken) > limit:
        raise _OverLimit()
    return taken


def main() -> None:
    import pyoxigraph as ox

    _die_with_parent()
    os.nice(10)  # a runaway query yields the CPU to the server and its other requests
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but frames may reach the parent's pipe
    opened: tuple[str, Any] | None = None
    write_frame(replies, ("ready", _leave_the_network()))
    while True:
        try:
            request = read_frame(requests)
        except EOFError:
            return
        if opened is None or opened[0] != request["snapshot"]:
            opened = None  # the old copy is let go before the new one opens
            try:
                opened = (request["snapshot"], ox.Store.read_only(request["snapshot"]))
            except (OSError, RuntimeError) as exc:
                write_frame(replies, ("error", "store", f"cannot open the snapshot: {exc}"))
                continue
        write_frame(replies, answer(opened[1], request))


if __name__ == "__main__":
    main()
