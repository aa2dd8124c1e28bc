"""Edits that cancel out (issue 33, item 7): "The two are the same" was shown while the
title said modified. Asking for the difference then marks the model as the file again."""

from __future__ import annotations


def test_edits_that_cancel_out_leave_the_model_unmodified_once_compared(main_window) -> None:
    doc = main_window.document
    before = doc.machine.processor(1).timings["iga"]
    doc.session.set("pt(1).iga", "9e-6")
    doc.session.set("pt(1).iga", repr(before.mean) + (f" {before.sd!r}" if before.sd else ""))
    assert doc.is_modified and main_window.isWindowModified()  # two edits, as history says
    shown = []
    main_window.show_diff = lambda text, name: shown.append(text)
    main_window.show_difference()
    assert shown and "The two are the same" in shown[0] and "no longer marked" in shown[0]
    assert not doc.is_modified and not main_window.isWindowModified()


def test_a_real_difference_is_shown_and_the_model_stays_modified(main_window) -> None:
    doc = main_window.document
    doc.session.set("pt(1).iga", "9e-6")
    shown = []
    main_window.show_diff = lambda text, name: shown.append(text)
    main_window.show_difference()
    assert shown and "iga" in shown[0] and doc.is_modified
