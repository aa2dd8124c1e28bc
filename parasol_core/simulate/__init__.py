"""The event simulator: how long a communication phase takes on a hardware topology.

* :mod:`.messages`: a phase's messages (sizes, ends, what each waits for), read from a
  file or built in arrays;
* :mod:`.patterns`: the communication patterns (shift, halo, all-to-all, broadcasts,
  ring all-gather) as messages between compute processors;
* :mod:`.phases`: the API (``simulate``, ``simulate_phase``, ``PhaseResult``), which
  chooses the trace;
* :mod:`.trace`: a phase made ready for any trace (:class:`~.trace.Phase`) and the 1994
  model's trace (C kernels in ``parasol_core/native/``);
* :mod:`.flow`: the flow engine, every other sharing rule over the resources of
  :mod:`parasol_core.topology.resources` (link directions, forwarders).

It stands on :mod:`parasol_core.topology` (routes, transfer times, sharing) and is used
by ``parasol-model simulate`` and the estimator's phase method. See docs/topology.md,
"Communication phases".
"""

FLOOR = 5
