"""Floor 6: what only the front ends (PIUI's windows, the command line) use.

Nothing else in the core imports these; they hold no rule another package needs.

* :mod:`.categories`: the instruction categories the processor windows group timings by;
* :mod:`.meanings`: what each combination ratio and parameter means, in words;
* :mod:`.runtime`: the run-time systems (PVM, Express, MPI) as a window plots them;
* :mod:`.folders`: the folder a file dialog opens in;
* :mod:`.layouts`: the main window's named layouts, one for each job people do;
* :mod:`.timeline`: a replayed program's operations as the pixels of a timeline;
* :mod:`.dropped`: what a file dropped on the window is (a model, a platform, a trace);
"""

FLOOR = 6
