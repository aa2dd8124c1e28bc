"""Files PIUI ships as package data: its icon and its desktop entry."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
ICON = HERE / "piui.svg"
DESKTOP_ENTRY = HERE / "piui.desktop"
