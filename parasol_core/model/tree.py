"""Expression trees, as the parser builds them, and their text form.

Nodes are immutable and compare by structure; their positions (offsets into the
expression's text) are kept for messages but take no part in comparison.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from dataclasses import field as _field

# Binary operator precedence, loosest first; `**` binds tighter than the unary operators.
BINARY_LEVELS: tuple[tuple[str, ...], ...] = (
    ("||",),
    ("&&",),
    ("|",),
    ("^",),
    ("&",),
    ("==", "!="),
    ("<", "<=", ">", ">="),
    ("<<", ">>"),
    ("+", "-"),
    ("*", "/", "%"),
)
PRECEDENCE: dict[str, int] = {op: i for i, ops in enumerate(BINARY_LEVELS) for op in ops}
UNARY_LEVEL = len(BINARY_LEVELS)
POWER_LEVEL = UNARY_LEVEL + 1
ATOM_LEVEL = POWER_LEVEL + 1
PRECEDENCE["**"] = POWER_LEVEL

FUNCTIONS: tuple[str, ...] = (
    "abs", "acos", "asin", "atan", "cos", "cosh", "double", "exp", "floor", "int",
    "log", "log10", "round", "sgn", "sin", "sinh", "sqrt", "tan", "tanh",
)  # fmt: skip

# Limits on expressions, checked at load. ``MAX_DEPTH`` is nesting as a reader counts
# it (parentheses, calls, unary operators, ``**`` chains); a flat chain of one
# operator (``a + b + c ...``) is one level. ``MAX_TREE_DEPTH`` bounds the depth of the
# tree itself, which a long flat chain also grows: every tree walk here is recursive.
MAX_DEPTH = 200
MAX_TREE_DEPTH = 400


@dataclass(frozen=True)
class Number:
    value: int | float
    text: str = field(default="", compare=False)
    start: int = field(default=0, compare=False)
    end: int = field(default=0, compare=False)
    depth: int = field(default=1, compare=False, repr=False)
    nesting: int = field(default=1, compare=False, repr=False)


@dataclass(frozen=True)
class Reference:
    """A reference such as ``pt(1).iga``: prefix, the numbers in parentheses after it,
    the field after the dot and the field's own index (``connect(k)``)."""

    prefix: str
    indices: tuple[int, ...] = ()
    field: str | None = None
    field_index: int | None = None
    start: int = _field(default=0, compare=False)
    end: int = _field(default=0, compare=False)
    depth: int = _field(default=1, compare=False, repr=False)
    nesting: int = _field(default=1, compare=False, repr=False)

    def __str__(self) -> str:
        text = self.prefix + "".join(f"({i})" for i in self.indices)
        if self.field is not None:
            text += "." + self.field
            if self.field_index is not None:
                text += f"({self.field_index})"
        return text


@dataclass(frozen=True)
class Unary:
    op: str
    operand: Node
    start: int = field(default=0, compare=False)
    end: int = field(default=0, compare=False)
    depth: int = field(default=1, compare=False, repr=False)
    nesting: int = field(default=1, compare=False, repr=False)


@dataclass(frozen=True)
class Binary:
    op: str
    left: Node
    right: Node
    start: int = field(default=0, compare=False)
    end: int = field(default=0, compare=False)
    depth: int = field(default=1, compare=False, repr=False)
    nesting: int = field(default=1, compare=False, repr=False)


@dataclass(frozen=True)
class Call:
    func: str
    arg: Node
    start: int = field(default=0, compare=False)
    end: int = field(default=0, compare=False)
    depth: int = field(default=1, compare=False, repr=False)
    nesting: int = field(default=1, compare=False, repr=False)


Node = Number | Reference | Unary | Binary | Call


@dataclass(eq=False)
class Expression:
    """An expression as it stands in a model: its text and its tree.

    Two expressions are equal when their trees are, whatever their spacing.
    """

    text: str
    tree: Node
    # Node positions minus ``offset`` are positions in ``text`` (a loaded expression's
    # nodes hold offsets into the whole file).
    offset: int = 0
    # What the writer puts after it on its line, replacing the comment there ("fitted
    # ...", set by a fit); None: the line's comment stays as it is. Not part of equality.
    comment: str | None = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Expression):
            return NotImplemented
        return self.tree == other.tree

    def __hash__(self) -> int:
        return hash(self.tree)

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"

    def references(self) -> list[Reference]:
        return list(iter_references(self.tree))

    @classmethod
    def from_tree(cls, tree: Node) -> Expression:
        return cls(unparse(tree), tree)


def iter_references(node: Node) -> Iterator[Reference]:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Reference):
            yield n
        elif isinstance(n, Binary):
            stack.append(n.right)
            stack.append(n.left)
        elif isinstance(n, Unary):
            stack.append(n.operand)
        elif isinstance(n, Call):
            stack.append(n.arg)


def _level(node: Node) -> int:
    if isinstance(node, Binary):
        return PRECEDENCE[node.op]
    if isinstance(node, Unary):
        return UNARY_LEVEL
    if isinstance(node, Number) and _number_text(node).startswith("-"):
        return UNARY_LEVEL
    return ATOM_LEVEL


def _number_text(node: Number) -> str:
    if node.text:
        return node.text
    return format_number(node.value)


def format_number(value: int | float) -> str:
    """Integers as integers; floats in the shortest form that reads back the same."""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        return str(value)
    text = repr(float(value))
    if text in ("inf", "-inf", "nan"):
        raise ValueError(f"{text} cannot be written in a model file")
    return text


def unparse(node: Node) -> str:
    """Text for a tree, with the parentheses precedence needs and no others."""
    if isinstance(node, Number):
        return _number_text(node)
    if isinstance(node, Reference):
        return str(node)
    if isinstance(node, Call):
        return f"{node.func}({unparse(node.arg)})"
    if isinstance(node, Unary):
        inner = unparse(node.operand)
        if _level(node.operand) < UNARY_LEVEL:
            inner = f"({inner})"
        elif inner.startswith("-") and node.op == "-":
            inner = f"({inner})"  # keep `- -x` from reading as a decrement-like `--x`
        return node.op + inner
    level = PRECEDENCE[node.op]
    left, right = unparse(node.left), unparse(node.right)
    if node.op == "**":
        # right-associative; its left operand must be an atom, its right a unary
        if _level(node.left) < ATOM_LEVEL:
            left = f"({left})"
        if _level(node.right) < UNARY_LEVEL:
            right = f"({right})"
    else:
        if _level(node.left) < level:
            left = f"({left})"
        if _level(node.right) <= level:
            right = f"({right})"
    return f"{left} {node.op} {right}"
