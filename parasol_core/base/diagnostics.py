"""Diagnostics and the syntax error: how every problem with a model is reported."""

from __future__ import annotations

from dataclasses import dataclass, field

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True)
class Diagnostic:
    """A problem found in a model: severity, message and where (1-based line/column).

    ``target`` names the thing the message is about, as a tuple a window can use to
    jump to it, e.g. ``("processor", 2)`` or ``("topology", 1, "link", 7)``.
    """

    severity: str
    message: str
    line: int | None = None
    column: int | None = None
    file: str | None = None
    target: tuple = field(default=(), compare=False)

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def format(self, file: str | None = None) -> str:
        """`FILE:LINE:COL: severity: message`, the form compilers use."""
        where = file or self.file or "<model>"
        if self.line is not None:
            where += f":{self.line}:{self.column or 1}"
        return f"{where}: {self.severity}: {self.message}"

    def __str__(self) -> str:
        return self.format()


class ModelSyntaxError(Exception):
    """The text is not a model file: where, what was found and what was expected."""

    def __init__(
        self,
        message: str,
        line: int,
        column: int,
        *,
        text: str = "",
        expected: tuple[str, ...] = (),
        file: str | None = None,
        context: str = "",
    ) -> None:
        self.message = message
        self.line = line
        self.column = column
        self.text = text
        self.expected = expected
        self.file = file
        self.context = context
        super().__init__(self.format())

    def format(self) -> str:
        where = f"{self.file or '<text>'}:{self.line}:{self.column}"
        return f"{where}: error: {self.message}"

    def as_diagnostic(self) -> Diagnostic:
        return Diagnostic(ERROR, self.message, self.line, self.column, self.file)

    def with_file(self, file: str) -> ModelSyntaxError:
        return ModelSyntaxError(
            self.message, self.line, self.column, text=self.text,
            expected=self.expected, file=file, context=self.context,
        )  # fmt: skip
