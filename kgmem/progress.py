"""How far long work got, told to whoever asked: a callback, never a display.

Work that takes seconds (ingesting a long log, rebuilding the graph projection) takes a
``progress: Progress | None`` and calls it as units of work finish; with None it pays one
``is None`` test a unit. The command line draws it on a terminal (``kgmem.cli.progress``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

__all__ = ["Progress", "Steps", "counted"]

_T = TypeVar("_T")


class Progress(Protocol):
    def __call__(self, what: str, done: int, total: int, /) -> None:
        """``done`` of ``total`` units are finished; ``what`` names the units (``"messages"``)
        or the step under way (``"read Memory"``). A ``total`` of 0: how many is not known
        (one step, say a commit, that cannot count its own progress)."""
        ...


class Steps:
    """Tells ``progress`` as each of ``total`` steps begins: ``(what, steps finished,
    total)``; silent without one."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self._progress, self._total, self._started = progress, total, 0

    def start(self, what: str) -> None:
        if self._progress is not None:
            self._progress(what, self._started, self._total)
        self._started += 1

    def run(self, what: str, step: Callable[[], _T]) -> _T:
        """``step()``, told as it begins."""
        self.start(what)
        return step()


def counted(items: Sequence[_T], what: str, progress: Progress | None) -> Iterator[_T]:
    """``items``; ``progress`` hears ``(what, done, len(items))`` as the caller is done with
    each (when it asks for the next, or stops)."""
    for done, item in enumerate(items, start=1):
        yield item
        if progress is not None:
            progress(what, done, len(items))
