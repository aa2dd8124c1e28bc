"""Floor 1: the model in memory (report appendix A as objects).

* :mod:`.machine`: the sections (``Machine``, ``Processor``, ``Topology``, ``Link``,
  ``VirtualTopology`` and the expression sections), the schema the reader and writers are
  driven by, and the table of fields a reference names; this package re-exports it, so
  ``from parasol_core.model import Machine`` is the usual spelling;
* :mod:`.tree`: expression trees (``Expression``, ``Reference``, operators, functions);
* :mod:`.linkstore`: a topology's links as numpy columns, with views for one link;
* :mod:`.linktext`: the link text a stored record is read back from;
* :mod:`.inttable`: the ``procid`` and ``mapping`` tables as columns.
"""

from parasol_core.model.machine import *  # noqa: F403

FLOOR = 1
