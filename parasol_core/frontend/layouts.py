"""The named layouts of PIUI's main window (View > Layout): for each of the three jobs
people do with a model, the windows it needs on screen at once, where, and how much of
the window each gets.

* **Processors: what-if** (the first-run layout): scale a processor type's instruction
  groups and watch its ratios move — the scalers and the combinations side by side,
  beside the overview whose table chooses the processor type.
* **Topology and mapping**: the grid view large, the topology and mapping editors beside
  it, one above the other.
* **Estimating**: the estimator's questions across the bottom of the window, the grid
  view that draws a route and the run-time systems' costs above them.
* **Program: what-if**: the Program window (a traced program's predicted time and
  timeline) large below the overview, the scalers beside it to drag.

A layout is columns of windows on the left and the right of the main window's centre
(the machine overview) and a row below it; a column is stacks one above the other; a
stack is windows sharing one place, the first in front and the others as tabs behind it.
Every window has a place in every layout: those a layout does not show (``hidden``) come
back to their stack when the View menu shows them. Widths and heights are fractions of
the window's, so that a layout fits any screen (:func:`pixels`). The side columns run
the window's full height (a what-if study's scalers and ratios, the editors beside the
grid view, get the height they need) and the bottom row lies under the centre only;
a layout whose bottom row needs the window's width (the Estimate panel's three questions
side by side) puts it across the window (``bottom_across``).

The windows are named by the keys the main window docks them under.
"""

from __future__ import annotations

from dataclasses import dataclass

# The windows the main window docks (piui/main_window.py and piui/windows/registry.py)
WINDOWS = (
    "processors", "groups", "instructions", "cache", "combinations", "runtime",
    "grid-view", "link-groups", "topology-editor", "mapping-editor", "machine-combination",
    "diagnostics", "terminal", "estimate", "history", "program",
)  # fmt: skip


@dataclass(frozen=True)
class Stack:
    """Windows in one place: ``windows[0]`` in front, the others tabs behind it;
    ``hidden`` are closed and come back here, behind the others, when shown."""

    windows: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    share: float = 1.0  # of its column's height (of the bottom row's width)

    @property
    def front(self) -> str | None:
        return self.windows[0] if self.windows else None

    def all(self) -> tuple[str, ...]:
        return self.windows + self.hidden


@dataclass(frozen=True)
class Column:
    stacks: tuple[Stack, ...]
    width: float  # fraction of the window's width
    least: int = 0  # pixels: windows whose fields need this width (editors) get it

    @property
    def shown(self) -> bool:
        return any(s.windows for s in self.stacks)


@dataclass(frozen=True)
class Layout:
    key: str
    title: str  # the View > Layout entry, with its & mnemonic
    shortcut: str
    purpose: str  # the entry's tooltip
    left: tuple[Column, ...] = ()
    right: tuple[Column, ...] = ()
    bottom: tuple[Stack, ...] = ()  # side by side, each its ``share`` of the row's width
    bottom_height: float = 0.16  # fraction of the window's height
    bottom_across: bool = False  # the bottom row under the side columns too

    def stacks(self) -> list[Stack]:
        return [s for c in (*self.left, *self.right) for s in c.stacks] + list(self.bottom)

    def front(self) -> list[str]:
        """The windows in front of their stacks: all on screen at once."""
        return [s.front for s in self.stacks() if s.front is not None]

    def shown(self) -> list[str]:
        """Every window the layout opens (in front, or as a tab behind one)."""
        return [w for s in self.stacks() for w in s.windows]

    def hidden(self) -> list[str]:
        return [w for s in self.stacks() for w in s.hidden]

    def problems(self, windows: tuple[str, ...] | list[str] = WINDOWS) -> list[str]:
        """What is wrong with the layout for these windows (nothing: [])."""
        out = []
        placed = [w for s in self.stacks() for w in s.all()]
        for w in sorted(set(placed)):
            if placed.count(w) > 1:
                out.append(f"{self.key}: {w} has {placed.count(w)} places")
        missing = [w for w in windows if w not in placed]
        unknown = [w for w in placed if w not in windows]
        if missing:
            out.append(f"{self.key}: no place for {', '.join(missing)}")
        if unknown:
            out.append(f"{self.key}: no such window {', '.join(unknown)}")
        sides = sum(c.width for c in (*self.left, *self.right) if c.shown)
        if sides > 0.8:
            out.append(f"{self.key}: the side columns take {sides:.0%} of the width")
        for column in (*self.left, *self.right):
            total = sum(s.share for s in column.stacks if s.windows)
            if column.shown and abs(total - 1.0) > 1e-6:
                out.append(f"{self.key}: a column's stacks share {total:g} of its height")
        return out


# A window shown into a place where nothing is on show (a stack of hidden windows only:
# the topology windows in the what-if layout) gets this share of its column's height, as
# the topology windows had beside the processor windows when every window was built at
# start (457:343); left to itself, Qt gives it its minimum height, a sliver.
RETURNING_SHARE = 343 / 800

# The topology windows and the processor windows, as the others' hidden ones
_TOPOLOGY = ("grid-view", "link-groups", "topology-editor", "mapping-editor",
             "machine-combination")  # fmt: skip

WHAT_IF = Layout(
    key="what-if",
    title="&Processors: what-if",
    shortcut="Ctrl+Alt+1",
    purpose="Scale a processor type's instruction groups and watch its ratios move: the "
    "scalers and the combinations side by side",
    # the processor types are chosen in the overview's table (the processor master is
    # one key away, Ctrl+1): the scalers and the ratios get the room
    left=(Column((Stack((), ("processors",)),), 0.16),),
    right=(
        Column((Stack(("groups", "instructions", "cache")),), 0.33, least=420),
        Column((Stack(("combinations", "runtime")), Stack((), _TOPOLOGY, 0.0)), 0.38),
    ),
    bottom=(Stack(("diagnostics", "terminal"), ("estimate", "history", "program")),),
)

TOPOLOGY = Layout(
    key="topology",
    title="&Topology and mapping",
    shortcut="Ctrl+Alt+2",
    purpose="The grid view large, with the topology editor and the mapping editor beside it",
    left=(Column((Stack((), ("processors",)),), 0.16),),
    right=(
        Column((Stack(("grid-view",)),), 0.42),
        Column(
            (
                Stack(("topology-editor", "link-groups"), share=0.5),
                Stack(("mapping-editor", "machine-combination"), share=0.5),
            ),
            0.32,
            least=560,
        ),
        Column((Stack((), ("groups", "instructions", "cache", "combinations", "runtime")),), 0.3),
    ),  # fmt: skip
    bottom=(Stack(("diagnostics", "terminal"), ("estimate", "history", "program")),),
)

ESTIMATING = Layout(
    key="estimating",
    title="&Estimating",
    shortcut="Ctrl+Alt+3",
    purpose="Ask the estimator about routes, transfers and blocks (below, across the "
    "window), with the grid view that draws a route and the run-time systems' costs",
    left=(Column((Stack((), ("processors",)),), 0.16),),
    right=(
        Column((Stack(("grid-view",)),), 0.36, least=440),
        Column(
            (
                Stack(
                    ("runtime", "combinations"),
                    (
                        "groups",
                        "instructions",
                        "cache",
                        "link-groups",
                        "topology-editor",
                        "mapping-editor",
                        "machine-combination",
                    ),
                ),
            ),
            0.36,
            least=450,
        ),
    ),  # fmt: skip
    # the estimator's three questions side by side need the window's width; what an
    # export said is behind them (a failed one brings the diagnostics to the front)
    bottom=(Stack(("estimate", "terminal", "diagnostics"), ("history", "program")),),
    bottom_height=0.24,
    bottom_across=True,
)

PROGRAM = Layout(
    key="program",
    title="P&rogram: what-if",
    shortcut="Ctrl+Alt+4",
    purpose="Predict a traced program and watch its time move as you drag: the Program "
    "window large below, the scalers beside it",
    left=(Column((Stack((), ("processors",)),), 0.16),),
    right=(
        Column(
            (
                Stack(
                    ("groups", "instructions", "cache", "link-groups"), ("combinations", "runtime")
                ),
                Stack(
                    (),
                    ("grid-view", "topology-editor", "mapping-editor", "machine-combination"),
                    0.0,
                ),
            ),
            0.34,
            least=420,
        ),
    ),  # fmt: skip
    # the timeline needs width and height: the bottom row, half the window's height
    bottom=(Stack(("program", "diagnostics", "terminal"), ("estimate", "history")),),
    bottom_height=0.62,
)

LAYOUTS = (WHAT_IF, TOPOLOGY, ESTIMATING, PROGRAM)
DEFAULT = WHAT_IF


def layout(key: str) -> Layout:
    for found in LAYOUTS:
        if found.key == key:
            return found
    raise KeyError(key)


def pixels(layout: Layout, width: int, height: int, centre: int = 320) -> dict[str, list]:
    """The sizes to ask of the window system for ``layout`` in a window of ``width`` x
    ``height`` pixels whose centre needs ``centre`` pixels: ``"columns"``, the front
    window of each shown column with its width (its fraction of the window, at least its
    ``least``; when they do not leave the centre its room, the columns without a
    ``least`` give way); ``"rows"``, for each column of several shown stacks, each
    stack's front window with its height; ``"bottom"``, the bottom row's front window
    with its height, and ``"bottom_row"``, its stacks' front windows with their widths
    when there are several. Every size is at least 1 pixel: Qt refuses a call to size
    docks with any size below it, and applies none of its sizes (on an 800-pixel-wide
    screen the topology layout's grid view gave way to nothing, and the editors beside
    it did not get their least width either); the window system then gives each window
    at least its own minimum."""

    def px(size: float) -> int:  # a pixel at least
        return max(1, round(size))

    shown = [c for c in (*layout.left, *layout.right) if c.shown]
    widths = [max(px(c.width * width), c.least) for c in shown]
    over = sum(widths) - max(width - centre, 0)
    flexible = sum(w for w, c in zip(widths, shown) if not c.least)
    if over > 0 and flexible > 0:
        keep = max(flexible - over, 0) / flexible
        widths = [w if c.least else px(w * keep) for w, c in zip(widths, shown)]
    columns: list[tuple[str, int]] = []
    rows: list[list[tuple[str, int]]] = []
    for column, pixels_wide in zip(shown, widths):
        stacks = [s for s in column.stacks if s.windows]
        columns.append((stacks[0].front, pixels_wide))
        if len(stacks) > 1:
            rows.append([(s.front, px(s.share * height)) for s in stacks])
    bottom = [s for s in layout.bottom if s.windows]
    across = width if layout.bottom_across else max(width - sum(widths), centre)
    return {
        "columns": columns,
        "rows": rows,
        "bottom": [(bottom[0].front, px(layout.bottom_height * height))] if bottom else [],
        "bottom_row": [(s.front, px(s.share * across)) for s in bottom] if len(bottom) > 1 else [],
    }
