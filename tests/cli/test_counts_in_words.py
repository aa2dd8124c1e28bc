"""A count of one thing is said in the singular: "1 variant", not "1 variants", in
the command line's messages (the rule: every count is worded by base.words)."""

from __future__ import annotations

from pathlib import Path

from modeltext import MINIMAL

from parasol_core.base.words import counted, plural
from parasol_core.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_counts_are_worded_singular_for_one_and_plural_otherwise():
    assert counted(1, "variant") == "1 variant"
    assert counted(0, "variant") == "0 variants"
    assert counted(1200, "rank") == "1,200 ranks"
    assert counted(1200, "rank", grouped=False) == "1200 ranks"
    assert counted(2, "problem size") == "2 problem sizes"
    assert plural("switch", 3) == "switches" and plural("axis", 2) == "axes"
    assert plural("switch", 1) == "switch"


def test_a_sweep_of_one_variant_says_one_variant_and_one_row(tmp_path, capsys):
    model = tmp_path / "m.machine"
    model.write_text(MINIMAL)
    sweep = tmp_path / "s.toml"
    sweep.write_text(f'model = "{model}"\n\n[[axis]]\nset = "pt(1).iga"\nvalues = [1e-6]\n\n'
                     '[[answer]]\neval = ["pt(1).iga * 2"]\n')  # fmt: skip
    assert main(["sweep", str(sweep), "-o", str(tmp_path / "r.csv"), "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "1 row written; 1 variant" in err, err
    assert "1 variants" not in err and "1 rows" not in err


def test_show_says_one_link_and_one_processor_in_the_singular(tmp_path, capsys):
    model = tmp_path / "m.machine"
    model.write_text(MINIMAL)
    assert main(["show", str(model)]) == 0
    out = capsys.readouterr().out
    for wrong in ("1 processors", "1 links", "1 timings"):
        assert wrong not in out, out
