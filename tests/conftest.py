"""Shared test setup: GUI tests run offscreen with their own settings file."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_models"
OSU_LOGS = ROOT / "tests" / "data" / "osu"  # OSU benchmark logs (see generate.py there)


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path, monkeypatch):
    """No test reads or writes the user's real PIUI settings or data folder: a copy of
    unsaved edits left there by a PIUI a signal stopped would be offered back by a test
    that starts PIUI's main(), in a modal question no offscreen test answers."""
    monkeypatch.setenv("PIUI_SETTINGS", str(tmp_path / "piui-settings.ini"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))


@pytest.fixture(autouse=True)
def _no_window_outlives_its_test(request):
    """Every top-level window a GUI test leaves shown is closed after it, unsaved work
    discarded: a main window whose close a test answered with Cancel stayed on screen,
    and its application-wide Ctrl+Z made the next test's Ctrl+Z ambiguous (Qt then runs
    neither). Set up before qtbot, so this runs after qtbot has closed what it knows."""
    yield
    if request.node.get_closest_marker("gui") is None:
        return
    from PySide6.QtWidgets import QApplication, QMessageBox

    app = QApplication.instance()
    if app is None:
        return
    for widget in app.topLevelWidgets():
        if widget.isVisible():
            if hasattr(widget, "ask_save_changes"):
                widget.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
            widget.close()
            widget.hide()  # a window that still refuses is at least off screen


@pytest.fixture(autouse=True)
def _no_modal_dialogs(monkeypatch):
    """A modal dialog would block an offscreen test forever: answer them, and record
    what was asked (``modal_dialogs`` fixture)."""
    asked: list[tuple[str, str]] = []
    try:
        from PySide6.QtWidgets import QMessageBox
    except ImportError:  # pragma: no cover - the core tests run without Qt too
        yield asked
        return

    def answer(default):
        def dialog(parent, title, text="", *args, **kwargs):
            asked.append((title, text))
            return default

        return staticmethod(dialog)

    B = QMessageBox.StandardButton
    monkeypatch.setattr(QMessageBox, "question", answer(B.Discard))
    monkeypatch.setattr(QMessageBox, "critical", answer(B.Ok))
    monkeypatch.setattr(QMessageBox, "warning", answer(B.Ok))
    monkeypatch.setattr(QMessageBox, "information", answer(B.Ok))
    monkeypatch.setattr(QMessageBox, "about", answer(None))

    def box_exec(self):  # QMessageBox instances (confirmations, error boxes): "Go on"/OK
        asked.append((self.windowTitle(), self.text()))
        return B.Ok

    monkeypatch.setattr(QMessageBox, "exec", box_exec)
    yield asked


@pytest.fixture
def modal_dialogs(_no_modal_dialogs):
    return _no_modal_dialogs


@pytest.fixture
def sample_copy(tmp_path):
    """A writable copy of a sample model: sample_copy("parsytec-gcel.machine")."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copy(SAMPLES / name, target)
        return target

    return copy


@pytest.fixture
def main_window(qtbot, sample_copy, monkeypatch):
    """The main window with a copy of the GCel sample open; dialogs answered by tests."""
    from PySide6.QtWidgets import QMessageBox

    from piui.main_window import MainWindow
    from piui.widgets.shortcuts import CancelsItsRunFirst

    # closing a dialog with a run under way asks (a modal box would block): a test that
    # does not answer stops the run, as closing did before it asked
    monkeypatch.setattr(CancelsItsRunFirst, "ask_stop_run", lambda self, what: True)

    window = MainWindow()
    qtbot.addWidget(window)
    # A modal question would block an offscreen test forever: closing at teardown
    # discards unsaved changes unless a test says otherwise.
    window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard

    def ask_restore(copy):  # a copy of unsaved edits found: the test must say what to do
        raise AssertionError(f"offered to restore {copy.path}: answer window.ask_restore")

    window.ask_restore = ask_restore
    window.errors = []
    window.show_error = lambda title, text, source="": window.errors.append((title, text))
    window.confirm = lambda title, text, details: True  # "Go on"
    assert window.open_file(sample_copy("parsytec-gcel.machine"))
    window.show()
    return window


@pytest.fixture
def document(sample_copy):
    """``document(name)``: a PIUI document open on a copy of a sample (default: the 4 x 4
    grid)."""
    from piui.document import Document

    def make(name: str = "grid4x4.machine") -> Document:
        doc = Document()
        doc.open(sample_copy(name))
        return doc

    return make


# --------------------------------------------------------------------------- markers
#
# gui: needs Qt and pytest-qt; subprocess: starts another process (the command line, the
# estimator server, mpiexec, a compiler); slow: over about 2 s, alone or as a module
# (measured with --durations=0 on a quiet 2-core machine). `make test-fast` runs what is
# none of subprocess and slow. They are given here, from the test's fixtures and from
# the lists below, rather than on each test: a new test in a listed module has its
# module's markers, and a test that starts a process without the subprocess marker
# fails, saying so (pytest_runtest_makereport below), so the lists cannot fall behind.

# A test that uses one of these fixtures (or one built on them) needs Qt.
GUI_FIXTURES = {"qtbot", "qapp", "main_window", "document"}
GUI_MODULES = {"test_grid_view_networks", "test_reliability_gui"}  # and every test_gui_*

# A test that uses one of these fixtures talks to an estimator server of its own.
SUBPROCESS_FIXTURES = {"estimator", "server"}
# Modules whose tests start processes, most of them or in threads the guard below does
# not watch (the measure dialog's compiler, PIUI's own estimator).
SUBPROCESS_MODULES = {
    "test_estimator_service",  # a server per test
    "test_estimate_program",  # a server for the module, one with a small batch budget
    "test_estimator_names",  # a server for the module
    "test_gui_disk_watch",  # another writer: `parasol-model set -i`
    "test_gui_measure",  # the C compiler and the benchmarks, from a worker thread
    "test_measure_network",  # mpiexec
    "test_measure",  # the C compiler: the check of CC, the benchmarks
    "test_measure_suite",  # the C compiler: the program suite, counted and timed
    "test_measure_memory",  # the C compiler: the growing-array curve; block's command line
    "test_packaging",  # pip wheel
    "test_simgrid_run",  # SimGrid's python3
    "test_flow_simgrid",  # SimGrid's python3 running the same phases
    "test_simgrid_platform_flows",  # SimGrid's python3 running imported platforms
    "test_simgrid_cluster_routes",  # SimGrid's python3 giving its clusters' routes
    "test_simgrid_router_zones",  # SimGrid's python3 giving exported dragonflies' routes
    "test_simgrid_zoned_clusters",  # SimGrid's python3 routing clusters in larger platforms
    "test_replay_simgrid",  # smpicc, smpirun -trace-ti and -replay
    "test_estimator_load",  # a capped server, a server with small batches
    "test_signals",  # measure, set -i and mpiexec runs signalled
    "test_signals_event_loops",  # the estimator and PIUI signalled
    "test_gui_restore_unsaved",  # PIUI stopped by SIGTERM, leaving copies to restore
    "test_soak",  # a subprocess that loads thousands of times, a real estimator
    "test_budgets_every_size",  # a real estimator refusing route calls
    "test_outputs_first",  # the command line's writers
    "test_numeric_options",  # the command line's options
    "test_finite_answers",  # simulate and the estimator on overflowing models
    "test_outside_text",  # measure with odd compilers and CPU names
    "test_sweep_cli",  # sweeps on process pools, killed, under mpiexec
    "test_sweep_estimator",  # a real estimator
    "test_cli_lazy",  # parasol-model replay in a fresh process: what it imports
    "test_replay_memory",  # parasol-model replay in processes: their peak memory
    "test_gui_sweep",  # File > Sweep… runs its variants on a process pool
    "test_gui_dialog_keys",  # a sweep on a process pool, a measurement's C compiler
    "test_gui_sweep_follows_model",  # a sweep on a process pool, another model opened
    "test_gui_estimate_answers",  # a real estimator answering the Estimate panel
}
# Single tests that start processes (the command line, mostly) in modules that do not.
SUBPROCESS_TESTS: dict[str, set[str]] = {
    "test_memory": {"test_a_repeating_process_keeps_its_freed_heap_and_faults_it_in_once"},
    "test_replay_matching": {
        "test_simgrid_gives_the_first_receive_the_send_posted_first",
        "test_many_senders_of_both_sizes_agree_with_simgrid",
    },
    "test_sweep_core": {  # a process pool
        "test_a_process_pool_makes_the_same_rows",
        "test_a_pools_batches_follow_the_variants_seconds",
    },
    "test_budgets": {
        "test_generate_past_the_budget_is_refused_at_once",
        "test_simulate_pattern_past_the_limit_is_refused_at_once",
    },
    "test_cli_model": {
        "test_installed_command_runs",
    },
    "test_concurrent_writers": {
        "test_a_session_does_not_save_over_another_writers_change",
        "test_a_session_reloads_what_another_writer_saved",
        "test_every_in_place_command_waits_for_the_lock",
        "test_rounds_of_concurrent_set_in_place_keep_every_edit",
        "test_save_as_elsewhere_and_a_session_without_a_read_file_are_not_checked",
        "test_set_in_place_that_cannot_take_the_lock_changes_nothing",
    },
    "test_estimator_binary": {
        "test_every_encoding_equals_the_core",
    },
    "test_estimator_budgets": {
        "test_a_pattern_past_the_limit_is_refused_before_it_is_built",
        "test_a_request_past_its_time_budget_is_cancelled_with_an_error",
        "test_temporary_files_of_a_killed_push_are_removed_at_start",
        "test_the_parsed_models_kept_between_calls_stay_within_their_limit",
        "test_the_store_has_a_limit_a_push_is_told_about",
    },
    "test_estimator_e2e": {
        "test_push_command_exits_1_with_the_diagnostics_when_refused",
        "test_push_command_exits_2_when_nothing_answers",
        "test_push_command_prints_the_id",
        "test_server_info_gives_the_protocol_version",
        "test_status_command",
    },
    "test_estimator_hostile": {
        "test_a_thousand_concurrent_connections",
        "test_malformed_json_is_a_parse_error",
    },
    "test_expr_cli": {
        "test_the_installed_command_runs",
    },
    "test_fast_parser_imports": {
        "test_importing_the_model_does_not_import_lark",
        "test_nothing_imports_lark_at_run_time",
        "test_parsing_still_works_through_the_old_names",
    },
    "test_forwarding": {
        "test_the_estimator_answers_with_forwarding_and_sharing",
    },
    "test_gui_export": {
        "test_a_local_estimator_dies_with_the_process_that_started_it",
        "test_export_pushes_the_model_and_the_estimator_holds_the_same_text",
        "test_preferences_check_says_what_is_true_of_a_wrong_token",
        "test_preferences_start_a_local_estimator_that_stops_with_piui",
        "test_with_the_estimator_down_nothing_is_lost_and_export_can_be_retried",
    },
    "test_gui_startup": {
        "test_importing_piui_and_opening_a_model_loads_no_heavy_module",
        "test_sympy_comes_after_the_first_paint_and_fills_the_sensitivity",
    },
    "test_hostile_cli": {
        "test_a_fifo_input_does_not_block_the_real_command",
        "test_huge_and_endless_inputs_take_bounded_time_and_memory",
        "test_output_that_cannot_be_written_exits_2_with_the_reason",
    },
    "test_hostile_estimator": {
        "test_a_json_number_that_underflows_is_a_parse_error_naming_it",
    },
    "test_layering": {
        "test_importing_every_core_module_loads_no_qt",
    },
    "test_measure": {
        "test_a_coarse_timer_refuses_a_cheap_operation",
        "test_cancel_stops_kills_and_leaves_nothing",
        "test_cli_writes_a_model_with_periodic_progress",
        "test_instrumented_counts_match_the_programs",
        "test_measure_a_few_parameters_gives_a_valid_model",
        "test_the_operation_survives_the_optimiser",
        "test_validate_host_predicts_each_size_from_the_model",
    },
    "test_reader": {
        "test_an_unusual_text_and_a_syntax_error_do_not_import_lark",
        "test_loading_a_model_does_not_import_lark",
    },
    "test_topology_routing": {
        "test_validating_built_in_routings_reads_no_plug_in_metadata",
    },
}

# Modules slow as a whole: their fixtures start servers and their cases take seconds.
SLOW_MODULES = {
    "test_gui_no_overlap",  # every window shown, floated and laid out narrow
    "test_replay_simgrid",
    "test_replay_memory",  # four replays of 100,000 actions in processes of their own
    "test_sweep_cli",
    "test_gui_sweep",
    "test_gui_sweep_follows_model",
    "test_gui_dialog_keys",  # a sweep and a measurement started and cancelled by keys
    "test_gui_field_error_follows_text",  # a trace opened and predicted three times
    "test_gui_preferences_url",  # nine addresses typed, checked and refused in one dialog
    "test_estimator_budgets",
    "test_estimator_load",
    "test_signals",
    "test_signals_event_loops",
    "test_gui_restore_unsaved",  # a PIUI started and stopped in most tests
    "test_gui_message_lines",  # every dock floated, squeezed and widened again
    "test_soak",
}
# Over about 0.5 s in a run on two lightly loaded workers (a parametrized test: all
# its cases together), so that `make test-fast` (what is left, on two workers) stays
# under a minute on two quiet cores: measured from `pytest --durations=0`, see
# docs/development.md, "The test loop", to redo it when the fast loop grows.
SLOW_TESTS: dict[str, set[str]] = {
    "test_ascii_numbers": {
        "test_any_annotation_text_loads_with_at_worst_a_warning",
    },
    "test_simgrid_zoned_clusters": {
        "test_clusters_in_a_larger_platform_cross_simgrids_links",  # 1,640 routes in SimGrid
    },
    "test_simgrid_router_zones": {
        "test_a_dragonfly_of_1088_processors_exports_as_its_links",  # refused Full zone first
        "test_the_export_grows_with_the_links_not_the_routers_squared",  # 1,600 routers, 14 MB
        "test_the_pad_links_leave_simgrids_default_update_exact",  # 300 messages in SimGrid
        "test_a_dragonfly_with_one_link_between_two_groups_grows_with_its_groups",  # 6.5 MB
    },
    "test_bad_input": {
        "test_a_50_mb_line_is_rejected_fast",
        "test_every_line_of_a_sample_duplicated_or_deleted",
        "test_every_prefix_of_a_small_model",
        "test_mutated_files_load_or_raise_a_syntax_error",
    },
    "test_budgets": {
        "test_pattern_counts_match_their_formulas",
    },
    "test_bulk_text": {
        "test_varied_stores",
    },
    "test_concurrent_writers": {
        "test_rounds_of_concurrent_set_in_place_keep_every_edit",
    },
    "test_estimator_budgets": {
        "test_a_request_past_its_time_budget_is_cancelled_with_an_error",
        "test_idle_and_dribbling_connections_are_closed",
        "test_one_client_cannot_starve_another",
    },
    "test_estimator_service": {
        "test_a_long_request_neither_stalls_others_nor_is_cut_by_sigterm",
        "test_eight_clients_at_once",
    },
    "test_expr_evaluate": {
        "test_operators_of_one_level_group_to_the_left",
    },
    "test_fast_parser_differential": {
        "test_generated_models_in_canonical_form",
        "test_generated_models_in_varied_layouts",
        "test_mutated_models",
        "test_samples",
    },
    "test_fast_parser_imports": {
        "test_no_cycle_in_module_level_imports_of_the_syntax_package",
        "test_the_model_does_not_reach_the_parser_nor_the_tree_the_model",
    },
    "test_flow_engine": {
        "test_kernel_equals_the_python_trace_on_random_phases",
    },
    "test_gui_combinations": {
        "test_a_reference_back_to_the_expression_itself_is_refused",
        "test_the_machine_combination_tab_behind_another_waits_for_its_tab",
    },
    "test_gui_dialog_titles": {
        "test_every_message_box_is_as_wide_as_its_title",
    },
    "test_gui_export": {
        "test_the_window_never_blocks_while_a_slow_estimator_answers",
    },
    "test_gui_file_dialog_folders": {
        "test_a_model_without_a_file_starts_where_the_last_file_was",
        "test_the_windows_dialogs_start_in_the_models_folder",
    },
    "test_gui_groups": {
        "test_a_drag_with_every_window_open_is_one_edit",
    },
    "test_gui_hostile": {
        "test_saving_onto_a_copy_of_dev_null_writes_through_it",
    },
    "test_gui_instructions": {
        "test_in_the_main_window_rejected_input_reaches_the_terminal",
    },
    "test_gui_keys": {
        "test_a_view_key_brings_a_dock_behind_a_tab_to_the_front",
        "test_a_view_key_reaches_a_floating_dock_and_hides_it_when_pressed_in_it",
        "test_the_history_lists_the_steps_and_a_click_goes_back_to_one",
    },
    "test_gui_layouts": {
        "test_a_floating_dock_is_a_window_of_its_own",
        "test_a_layout_chosen_at_any_moment_shows_the_model_on_screen",
        "test_a_layout_kept_until_the_user_moves_a_dock",
        "test_a_saved_layout_of_another_version_starts_from_the_default",
        "test_a_window_built_by_a_layout_after_edits_shows_them",
        "test_each_layout_shows_its_windows_side_by_side",
        "test_the_first_run_is_maximised_in_the_what_if_layout",
        "test_the_grid_view_fits_what_is_visible_and_its_words_are_in_view",
        "test_the_layouts_are_in_the_view_menu_with_their_shortcuts",
        "test_the_next_start_is_as_the_user_left_it",
        "test_the_what_if_layout_has_the_scalers_and_the_ratios_side_by_side",
    },
    "test_gui_main": {
        "test_closing_with_unsaved_changes_asks",
        "test_exceptions_in_slots_reach_the_terminal",
        "test_open_each_sample",
        "test_opening_and_saving_show_a_wait_cursor_and_say_what_they_do",
        "test_screenshots_render_every_window",
    },
    "test_gui_measure": {
        "test_measure_opens_the_result_as_a_new_model_and_validate_plots_it",
    },
    "test_gui_model_state": {
        "test_a_refusals_tooltip_goes_when_its_window_is_resized",
        "test_opening_a_second_model_leaves_nothing_of_the_first",
        "test_the_estimate_panels_transfer_time_is_in_sight_without_scrolling",
    },
    "test_gui_network_drawings": {
        "test_a_png_export_has_the_size_asked",
    },
    "test_gui_new_user": {
        "test_a_bad_processor_id_is_refused_in_words_at_the_field",
        "test_a_long_error_never_pushes_the_values_out_of_sight",
        "test_a_message_goes_when_the_state_it_describes_goes",
        "test_a_number_too_small_to_represent_says_so",
        "test_ctrl_z_in_a_category_window_undoes",
        "test_side_docks_get_their_width_back_when_the_window_grows",
    },
    "test_gui_program": {
        "test_keep_as_before_and_another_model",
        "test_open_program_trace_predicts_it_on_the_model_on_screen",
        "test_out_of_sight_it_predicts_when_shown_again",
        "test_the_prediction_follows_a_link_speed_dragged",
        "test_the_prediction_follows_a_scaler_dragged",
        "test_what_dominates_shows_the_cores_answer_and_follows_edits",
    },
    "test_gui_program_cancel": {
        "test_an_edit_while_a_prediction_runs_stops_it_and_the_last_edit_is_shown",  # Python
    },
    "test_gui_readable_plots": {
        "test_a_readable_axis_over_any_range",
        "test_the_combinations_chart_at",
        "test_the_fit_dialogs_plots_at",
        "test_the_measure_dialogs_plots_at",
        "test_the_runtime_windows_plots_at",
    },
    "test_gui_runtime": {
        "test_an_invalid_expression_is_refused_in_place",
        "test_crosshair_reads_out_the_values_under_the_mouse",
        "test_editing_a_pvm_expression_changes_its_value_and_plot",
        "test_fit_dialog_lists_the_tables_of_a_log_and_fits_the_one_picked",
        "test_fit_dialog_never_fits_different_benchmarks_together",
        "test_fit_dialog_reads_osu_output_and_reports_bad_files",
        "test_fit_dialog_shows_all_seven_process_counts_a_picker_and_the_residuals",
        "test_fit_dialog_writes_the_chosen_expression_as_one_undoable_edit",
        "test_overlay_another_primitive_and_another_model_file",
        "test_screenshots_include_the_runtime_window_and_fit_dialog",
        "test_sliders_set_the_arguments_values_and_markers",
        "test_the_readout_evaluates_the_cost_at_the_cursor_not_at_a_nearby_sample",
        "test_the_window_and_its_fit_dialog_find_the_measurements_beside_the_model",
        "test_typing_a_collective_into_a_model_without_mpi_adds_the_section",
    },
    "test_gui_stability": {
        "test_a_long_slider_drag_keeps_the_reference_count_of_none",
    },
    "test_gui_startup": {
        "test_a_sensitivity_behind_another_dock_waits_for_its_tab",
        "test_a_sensitivity_behind_the_chart_tab_follows_edits_when_shown_again",
        "test_asking_for_a_panel_builds_it_without_showing_it",
        "test_the_sensitivity_waits_until_shown_then_fills",
    },
    "test_gui_unsaved": {
        "test_every_way_to_drop_an_in_memory_model_asks_first",
    },
    "test_layering": {
        "test_every_core_module_imports_only_its_floor_and_below",
        "test_no_core_module_imports_qt",
        "test_no_import_cycle_among_core_modules",
        "test_the_expression_tree_imports_no_syntax",
    },
    "test_linkstore": {
        "test_a_group_edit_holds_the_store_and_uids_never_a_view_per_link",
        "test_a_save_of_links_edited_in_bulk_writes_what_the_link_by_link_path_writes",
        "test_random_edits_match_a_plain_list",
    },
    "test_mapping_incremental": {
        "test_random_swaps_match_the_full_recomputation",
    },
    "test_measure_progress": {
        "test_compiling_ticks_while_it_runs",
    },
    "test_measure_suite": {
        "test_a_measurement_writes_calibrated_values_with_both_measurements_and_the_levels",
    },
    "test_network_drawings": {
        "test_every_processor_is_placed_apart_at_a_finite_place_the_same_every_time",
        "test_tori_of_3_to_6_dimensions_are_full_grids_of_blocks",
    },
    "test_networks": {
        "test_dragonfly_minimal_and_valiant_routes_are_valid_and_bounded",
    },
    "test_packaging": {
        "test_wheel_carries_the_grammar_and_resources",
    },
    "test_phase_groups": {
        "test_groups_equal_the_reference_on_random_phases",
        "test_the_bulk_path_equals_the_loop_on_phases_started_at_once",
        "test_the_bulk_path_took_some_random_phases",
    },
    "test_phases": {
        "test_every_pattern_runs_on_the_gcel",
        "test_property_bounds_and_the_reference",
    },
    "test_phases_native": {
        "test_kernel_equals_python_on_every_pattern",
        "test_kernel_equals_python_on_random_phases",
    },
    "test_reader": {
        "test_expressions_read_as_lark_reads_them",
        "test_generated_expressions_are_read_by_the_reader",
        "test_generated_models_are_read_by_the_reader",
        "test_mutated_models",
        "test_the_reader_reads_every_sample_as_lark_does",
    },
    "test_reliability": {
        "test_reading_a_huge_file_of_zeros_stops_early",
    },
    "test_reliability_corpus": {
        "test_every_subcommand_on_a_corpus_of_corrupt_models",
    },
    "test_replacement": {
        "test_what_the_plan_says_is_what_apply_does",
    },
    "test_replay_cancel": {
        "test_a_replay_cancelled_from_another_thread_stops_part_way",  # two replays of each
    },
    "test_roundtrip_properties": {
        "test_canonical_text_reads_back_equal",
        "test_edit_then_save_then_edit_again",
        "test_one_edit_changes_only_its_lines",
        "test_several_edits_change_only_their_lines",
        "test_unedited_model_writes_back_byte_for_byte",
    },
    "test_save_inplace": {
        "test_generated_models_in_varied_layouts",
        "test_samples",
    },
    "test_scalers": {
        "test_any_sequence_of_moves_undone_by_reset_or_by_ones_gives_the_exact_values",
    },
    "test_signal_slots": {
        "test_checked_never_lands_in_a_parameter",
    },
    "test_simgrid": {
        "test_a_mangled_export_is_read_or_refused_with_a_reason",
        "test_a_mangled_platform_is_read_or_refused_with_a_reason",
        "test_every_sample_exports_and_imports_as_the_same_model",
        "test_generated_topologies_round_trip",
    },
    "test_simgrid_export_xml": {
        "test_the_export_is_well_formed_xml_or_refused",
    },
    "test_simgrid_names": {
        "test_a_clusters_names_are_one_run_however_many_hosts",
    },
    "test_simgrid_platform_flows": {
        "test_the_gcel_sample_exported_shares_in_simgrid_as_in_parasol",  # 512 hosts in SimGrid
    },
    "test_sweep_examples": {
        "test_each_example_runs_without_an_error",
    },
    "test_topology_generators": {
        "test_comparing_in_bulk_is_comparing_link_by_link",
    },
    "test_topology_nd": {
        "test_dimension_order_routes_on_nd_grids_are_minimal_per_dimension",
        "test_shortest_routes_on_random_connected_links_are_bfs_distances",
    },
    "test_virtual_shapes": {
        "test_any_virtual_topology_with_a_shape_routes_on_any_hardware",
    },
}


def _module(item: pytest.Item) -> str:
    return item.path.stem


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module, name = _module(item), getattr(item, "originalname", item.name)
        if (
            module.startswith("test_gui_")
            or module in GUI_MODULES
            or GUI_FIXTURES & set(getattr(item, "fixturenames", ()))
        ):
            item.add_marker(pytest.mark.gui)
        if (
            module in SUBPROCESS_MODULES
            or name in SUBPROCESS_TESTS.get(module, ())
            or SUBPROCESS_FIXTURES & set(getattr(item, "fixturenames", ()))
        ):
            item.add_marker(pytest.mark.subprocess)
        if module in SLOW_MODULES or name in SLOW_TESTS.get(module, ()):
            item.add_marker(pytest.mark.slow)


# --------------------------------------------------------------------------- the guard

_running: list[pytest.Item] = []
_started = pytest.StashKey[list]()
_execute_child = subprocess.Popen._execute_child  # type: ignore[attr-defined]


_elsewhere: list[tuple[str, str]] = []  # (test, command) started from another thread


def _watched_execute_child(self, args, *rest, **kwargs):
    # the test running now, if this is its own thread; a process a background thread
    # starts may be a later test's doing: it is only reported at the end
    if _running:
        item = _running[-1]
        if threading.current_thread() is threading.main_thread():
            item.stash.setdefault(_started, []).append(args)
        elif item.get_closest_marker("subprocess") is None:
            command = " ".join(map(str, args)) if isinstance(args, (list, tuple)) else str(args)
            _elsewhere.append((item.nodeid, command[:120]))
    return _execute_child(self, args, *rest, **kwargs)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if _elsewhere:
        terminalreporter.section("processes started by threads during unmarked tests")
        for nodeid, command in _elsewhere:
            terminalreporter.write_line(f"{nodeid}: {command}")


def pytest_configure(config: pytest.Config) -> None:
    subprocess.Popen._execute_child = _watched_execute_child  # type: ignore[attr-defined]


def pytest_unconfigure(config: pytest.Config) -> None:
    subprocess.Popen._execute_child = _execute_child  # type: ignore[attr-defined]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    _running.append(item)
    try:
        yield
    finally:
        _running.pop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    started = item.stash.get(_started, None)
    if (
        report.when == "call"
        and report.passed
        and started
        and item.get_closest_marker("subprocess") is None
    ):
        first = started[0]
        command = " ".join(map(str, first)) if isinstance(first, (list, tuple)) else str(first)
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} started {len(started)} process(es) ({command[:200]}) but is not "
            "marked subprocess: add its module to SUBPROCESS_MODULES or the test to "
            "SUBPROCESS_TESTS in tests/conftest.py (make test-fast leaves those out)"
        )
