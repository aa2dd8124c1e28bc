"""One open model edited through operations: undo history and typed change records.

See :class:`Session` and ``docs/architecture.md``.
"""

from parasol_core.session.changes import (
    EDIT,
    OPEN,
    REDO,
    SAVED,
    SELECTED,
    UNDO,
    VALIDATED,
    Change,
    FieldRef,
)
from parasol_core.session.history import ABSENT
from parasol_core.session.session import MAX_ID, Session, SessionError

FLOOR = 5
__all__ = [
    "ABSENT",
    "EDIT",
    "MAX_ID",
    "OPEN",
    "REDO",
    "SAVED",
    "SELECTED",
    "UNDO",
    "VALIDATED",
    "Change",
    "FieldRef",
    "Session",
    "SessionError",
]
