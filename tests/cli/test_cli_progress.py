"""The command line's progress display (parasol_core.cli.progress): plain lines without
terminal codes where stderr is not a terminal, one redrawn bar where it is."""

from __future__ import annotations

import io
import re

from parasol_core.cli.progress import ProgressBar, progress_line
from parasol_core.measure import Progress

CONTROL = re.compile(r"[\r\x1b\x08]")


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_plain_line_says_how_far_what_and_the_time_left():
    assert progress_line(0.4, "dla", 30) == "[ 40%] dla; about 30 s left"
    assert progress_line(0.0, "compiling", None) == "[  0%] compiling; estimating the time left"
    assert progress_line(0.5, "cache x=5000", 200) == "[ 50%] cache x=5000; about 3 min left"
    assert progress_line(1.0, "done", 0.0) == "[100%] done"


def test_off_a_terminal_each_step_is_one_clean_line():
    out = io.StringIO()
    bar = ProgressBar(out, every=0)
    for p in (Progress(0.0, "compiling", None), Progress(0.1, "dla", 9.0),
              Progress(0.1, "dla", 9.0), Progress(0.6, "igd", 4.0),
              Progress(1.0, "done", 0.0), Progress(1.0, "done", 0.0)):  # fmt: skip
        bar(p)
    bar.close()
    text = out.getvalue()
    assert not CONTROL.search(text), repr(text)
    assert text.splitlines() == [
        "[  0%] compiling; estimating the time left",
        "[ 10%] dla; about 9 s left",  # the same step again: no second line
        "[ 60%] igd; about 4 s left",
        "[100%] done",  # once
    ]


def test_off_a_terminal_lines_are_spaced_out_but_the_end_is_always_said():
    out = io.StringIO()
    with ProgressBar(out, every=3600) as bar:
        for i in range(50):
            bar.update(i / 50, f"step {i}", 10.0)
        bar.update(1.0, "done", 0.0)
    assert out.getvalue().splitlines() == ["[  0%] step 0; about 10 s left", "[100%] done"]


def test_on_a_terminal_one_line_is_redrawn_and_cleared_at_the_end():
    out = Terminal()
    bar = ProgressBar(out, redraw=0)
    bar.update(0.0, "compiling", None)
    bar.update(0.4, "dla", 30.0)
    drawn = out.getvalue()
    assert "\n" not in drawn and "\r" in drawn
    assert re.search(r"\[#{8}\.{12}\]\s+40 % dla\s+30 s left", drawn), repr(drawn)
    bar.close()
    assert out.getvalue()[len(drawn) :].strip(" \r") == ""  # the line is blanked
    bar.update(0.5, "GEB: timing", 3.0)  # a second piece of work draws a new bar
    assert "GEB: timing" in out.getvalue()
    bar.close()
