"""Progress of a long command on stderr, the same in every command.

On a terminal one line is redrawn in place by tqdm, and cleared when the work ends::

    [########............]  40 % dla                              30 s left

Anywhere else (a pipe, a file, CI's log, the ranks of ``mpiexec``) there are no carriage
returns or terminal codes: a plain line says how far the work is and what it does now,
at most one every ``every`` seconds (with ``every=0``, one as each step starts), and
one when it is done::

    [ 40%] dla; about 30 s left
    [100%] done

A command makes a :class:`ProgressBar` and calls it with what its work reports (anything
with ``fraction``, ``parameter`` and ``seconds_left``, like
:class:`parasol_core.measure.Progress`), or calls :meth:`ProgressBar.update`; it
:meth:`~ProgressBar.close`\\ s the bar (or leaves the ``with`` block) before printing
anything else. Whether the stream is a terminal is asked of the stream itself, not of
the environment (``FORCE_COLOR`` and the like do not make a log file a terminal).
"""

from __future__ import annotations

import io
import os
import sys
import time
from types import TracebackType
from typing import Any, TextIO

BAR_WIDTH = 20
STEP_WIDTH = 32  # a step this long and the time left fit in 80 columns


def duration(seconds: float) -> str:
    """A time left as a person says it: "40 s", "3 min"."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{round(seconds / 60)} min"


def time_left(fraction: float, seconds_left: float | None, short: bool = False) -> str:
    """The time left as the line says it: "about 30 s left", "estimating the time left"
    ("30 s left", "estimating" when ``short``), or nothing once done."""
    if fraction >= 1.0:
        return ""
    if seconds_left is None:
        return "estimating" if short else "estimating the time left"
    return f"{'' if short else 'about '}{duration(seconds_left)} left"


def progress_line(fraction: float, step: str, seconds_left: float | None) -> str:
    """The line written where the stream is not a terminal: ``[ 40%] dla; about 30 s left``."""
    left = time_left(fraction, seconds_left)
    return f"[{100 * fraction:3.0f}%] {step}" + (f"; {left}" if left else "")


def _columns(stream: TextIO) -> int:
    """The terminal's width, 0 where it says none."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        return 0


def is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


class ProgressBar:
    """One command's progress on ``stream`` (stderr by default); see the module."""

    def __init__(self, stream: TextIO | None = None, *, every: float = 5.0,
                 redraw: float = 0.1) -> None:  # fmt: skip
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = is_terminal(self.stream)
        self.every = every  # seconds between two plain lines (0: one as each step starts)
        self.redraw = redraw  # seconds between two redraws of the same step on a terminal
        self._bar: Any = None  # the tqdm bar while one is drawn
        self._last = float("-inf")
        self._last_step: str | None = None
        self._finished = False

    def __call__(self, p: object) -> None:
        """What a measurement reports (``fraction``, ``parameter``, ``seconds_left``)."""
        self.update(getattr(p, "fraction", 0.0), getattr(p, "parameter", ""),
                    getattr(p, "seconds_left", None))  # fmt: skip

    def update(self, fraction: float, step: str, seconds_left: float | None = None) -> None:
        fraction = min(max(float(fraction), 0.0), 1.0)
        now = time.monotonic()
        if self.terminal:
            if step == self._last_step and now - self._last < self.redraw and fraction < 1:
                return
            self._draw(fraction, step, seconds_left)
        else:
            if fraction >= 1.0:
                if self._finished:
                    return
                self._finished = True
            elif now - self._last < self.every or (step == self._last_step and not self.every):
                return
            self.stream.write(progress_line(fraction, step, seconds_left) + "\n")
            self.stream.flush()
        self._last = now
        self._last_step = step

    def _draw(self, fraction: float, step: str, seconds_left: float | None) -> None:
        text = f"{step:<{STEP_WIDTH}} {time_left(fraction, seconds_left, short=True)}"
        if self._bar is None:
            from tqdm import tqdm

            # tqdm cuts the line to the terminal's width (read again at each redraw), so
            # a narrow window does not wrap it; a terminal that reports no width gets 80
            known = _columns(self.stream) > 0
            self._bar = tqdm(total=1000, initial=int(fraction * 1000), desc=text,
                             file=self.stream, leave=False, ascii=".#", mininterval=0,
                             bar_format=f"[{{bar:{BAR_WIDTH}}}] {{percentage:3.0f}} % {{desc}}",
                             dynamic_ncols=known, ncols=None if known else 80,
                             nrows=None if known else 24)  # fmt: skip
            return
        self._bar.set_description_str(text, refresh=False)
        self._bar.n = int(fraction * 1000)
        self._bar.refresh()

    def close(self) -> None:
        """End this piece of work: the terminal's line is cleared; a later update starts a
        new bar (a second piece of work, such as measure's validation after the model)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._last = float("-inf")
        self._last_step = None
        self._finished = False

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        self.close()
