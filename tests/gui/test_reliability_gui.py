"""The editor's number fields hold to what the file format can hold (issue 9, class 1)."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from piui.widgets.number_controls import LogIntEdit


@pytest.mark.parametrize("typed, kept", [("512", 512), (str(2**63), 64), ("9" * 30, 64)])
def test_a_cache_size_beyond_the_format_is_rejected(qtbot, typed: str, kept: int) -> None:
    edit = LogIntEdit()
    qtbot.addWidget(edit)
    edit.setValue(64)
    seen: list[int] = []
    edit.valueEdited.connect(lambda value, _key: seen.append(value))
    edit.field.setText(typed)
    edit._typed()
    assert edit.value() == kept
    assert seen == ([kept] if kept != 64 else [])
