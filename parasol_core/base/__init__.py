"""Floor 0: what everything stands on, with no knowledge of models.

* :mod:`.limits`, :mod:`.budget`: the limits of what the file format holds, and the
  budgets (work, memory) that refuse work past them, naming both;
* :mod:`.numeric`, :mod:`.arrays`: reading numbers as the format does; array helpers
  (``arrays.unique`` is a sort, not numpy's hash);
* :mod:`.params`: the instruction parameter table (report appendix B) and its groups;
* :mod:`.values`: ``Timing``, a mean and an optional standard deviation;
* :mod:`.source`, :mod:`.diagnostics`: where a value sat in a text, and what is said
  about it (errors and warnings with their places);
* :mod:`.memory`: handing freed heap back to the system after large work;
* :mod:`.filelock`: advisory locks for writers of one file, and their temporaries
  (removed by the next writer when the one that made them was killed);
* :mod:`.words`: counts in words ("1 variant", "2 variants");
* :mod:`.signals`: how every long-running command stops on SIGINT, SIGTERM and SIGHUP
  (clean up, exit 128 + the signal).
"""

FLOOR = 0
