"""Floor 3: references, numeric evaluation and the engine of derived values.

* :mod:`.refs`: what a reference names, read and written (one table of reference kinds);
* :mod:`.evaluate`: evaluating an expression tree with units and errors;
* :mod:`.engine`: the dependency graph of a model's expressions, re-evaluating only what
  an edit reaches.

Expression trees themselves are data of the model (:mod:`parasol_core.model.tree`).
"""

FLOOR = 3
