"""Progress of a long command, drawn on stderr while stderr is a terminal (with rich).

Library code tells a :class:`kgmem.progress.Progress` callback how far it got. A command
opens :func:`shown` and hands down a :meth:`Display.lane`, one line of the display. Off a
terminal (a pipe, a script, a test) every lane is None: the work pays one ``is None`` test a
unit and nothing extra is printed. The display never writes stdout, so a command prints
there what it would print without one; a line it prints while the display is drawn goes
above it (on stderr, when stdout is the terminal too: the same screen).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO, cast

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as Bars

__all__ = ["REFRESH_PER_SECOND", "Display", "Lane", "shown"]

REFRESH_PER_SECOND = 10
_HAND_EVERY = 1 / REFRESH_PER_SECOND  # a count more often than this would never be drawn


class Lane:
    """One line of the display, ``title  bar  done/total what  elapsed``: a
    :class:`kgmem.progress.Progress` callback."""

    def __init__(self, bars: Bars, title: str) -> None:
        self._bars = bars
        self._task = bars.add_task(title, total=1, count="", what="")
        self._what: str | None = None
        self._handed = 0.0
        self._finished = False

    def __call__(self, what: str, done: int, total: int, /) -> None:
        now = time.monotonic()
        if what == self._what and done < total and now - self._handed < _HAND_EVERY:
            return  # a unit of a tight loop pays this test, not rich's lock
        self._what, self._handed = what, now
        drawn = total or 1  # not known: an empty bar, with the spinner and the clock going
        if self._finished and done < drawn:  # rich keeps a task finished till its total moves
            self._bars.update(self._task, total=drawn + 1)
        count = f"{done}/{total}" if total else ""
        completed = done if total else 0
        self._bars.update(self._task, total=drawn, completed=completed, count=count, what=what)
        self._finished = completed >= drawn


class Display:
    """The lanes of one command's progress; inert off a terminal."""

    def __init__(self, bars: Bars | None) -> None:
        self._bars = bars
        # said on stderr once the display is gone (on a terminal only), by a command whose
        # stdout has no line that sums up what it did
        self.summary: str | None = None

    def lane(self, title: str) -> Lane | None:
        """A new line of the display, or None when nothing is drawn."""
        return None if self._bars is None else Lane(self._bars, title)


@contextmanager
def shown() -> Iterator[Display]:
    """The display of a long command: drawn while the block runs, gone after it (leaving
    the summary, if any), redrawn at most :data:`REFRESH_PER_SECOND` times a second."""
    from rich.console import Console  # the long commands pay its import; others never

    console = Console(stderr=True, soft_wrap=True)  # a line printed above: as it came
    if not console.is_terminal:
        yield Display(None)
        return
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    bars = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        TextColumn("{task.fields[count]}", style="progress.download"),
        TextColumn("{task.fields[what]}", markup=False),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        refresh_per_second=REFRESH_PER_SECOND,
        redirect_stdout=False,  # rich's own stand-ins: click writes around them (see _above)
        redirect_stderr=False,
    )
    display = Display(bars)
    with bars, _above(console):
        yield display
    if display.summary is not None:
        console.print(display.summary, markup=False, highlight=False, soft_wrap=True)


@contextmanager
def _above(console: Console) -> Iterator[None]:
    """While the display is drawn, a line written to stderr (click's, a log record's), or
    to stdout when that is a terminal too, is printed above it: a line written under it
    would be erased with it. Stdout elsewhere (a pipe, a file) is left alone.

    rich's stand-in for a stream reports no encoding, so click would write around it, to
    the stream's buffer: this one reports the stream's."""
    from rich.file_proxy import FileProxy

    def stand_in(stream: TextIO) -> TextIO:
        class Above(FileProxy):
            encoding = stream.encoding
            errors = stream.errors

        return cast(TextIO, Above(console, stream))

    saved = sys.stdout, sys.stderr
    logs = [  # `kgmem --debug` logs to the stderr it found at start
        h
        for h in logging.getLogger().handlers
        if isinstance(h, logging.StreamHandler) and h.stream is saved[1]
    ]
    try:
        if sys.stdout.isatty():
            sys.stdout = stand_in(sys.stdout)
        sys.stderr = stand_in(sys.stderr)
        for handler in logs:
            handler.setStream(sys.stderr)
        yield
    finally:
        sys.stdout.flush()  # a last line without its newline
        sys.stderr.flush()
        sys.stdout, sys.stderr = saved
        for handler in logs:
            handler.setStream(saved[1])
