"""Analyses of a model's expressions that stand on the engine (one floor above it):

* :mod:`.check`: what an expression typed into a field would do (unknown references,
  errors, its value), checked as the user types;
* :mod:`.symbolic`: expressions as sympy, their pretty and LaTeX forms, derivatives and
  sensitivities to the timings they read;
* :mod:`.flops`: a flop's time on a model, the expression a replay takes when given
  none and what a SimGrid host's speed is written from and read into.

``parasol_core.expr`` (trees, references, numeric evaluation) sits below the engine;
these read the engine's values, so they live here, above it (tests/test_layering.py).
"""

FLOOR = 4
