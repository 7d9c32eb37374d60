"""Making many long-lived objects at once (decoding a saved index or vocabulary).

CPython's cyclic collector runs every few hundred new containers and, as they survive, walks
the older generations too; hundreds of thousands of new containers none of which is garbage
make it run for nothing, doubling or tripling the time a decode takes (measured: a 10k-memory
user's saved search index, 19-26 ms to unpickle without collections, 19-57 ms with them).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["no_collections"]


@contextmanager
def no_collections() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (as it was before, after)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
