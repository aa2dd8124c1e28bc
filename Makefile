# Everything a fresh clone needs: `make run` starts PIUI on a sample, `make test` runs
# every test headless, `make test-fast` the quick ones while working. All create .venv
# and install into it first.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SAMPLE := sample_models/parsytec-gcel.machine

.PHONY: run test test-fast lint format bench clean install-desktop simgrid

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall when the package metadata or a C kernel changes (pip builds the kernels).
# The mpi extra brings mpiexec (the mpich wheel) for the network measurement's tests.
$(VENV)/.installed: pyproject.toml setup.py $(wildcard parasol_core/native/*.c) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[gui,test,mpi]'
	touch $@

run: $(VENV)/.installed
	@if $(BIN)/python -c "import piui.app" 2>/dev/null; then \
		$(BIN)/python -m piui $(SAMPLE); \
	else \
		$(BIN)/parasol-model show $(SAMPLE); \
	fi

# Extra pytest arguments for test and test-fast: PYTEST_ARGS="-k reader -x".
PYTEST_ARGS ?=

# Every test, in random order (pytest-random-order: the modules shuffled, and the tests
# within each; the seed is printed first, and PYTEST_ARGS=--random-order-seed=N runs the
# same order again), then ruff.
test: $(VENV)/.installed
	-@$(MAKE) --no-print-directory simgrid
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest --random-order $(PYTEST_ARGS)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The loop while working, under a minute on two cores: no test marked slow (over ~2 s)
# or subprocess (the command line, the estimator, mpiexec, compilers: tests/conftest.py
# says which), on two workers (pytest-xdist). `make test` before committing.
test-fast: $(VENV)/.installed
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -n 2 -m "not slow and not subprocess" $(PYTEST_ARGS)

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(VENV)/.installed
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The application-menu entry and icon, for this user (~/.local/share).
install-desktop: $(VENV)/.installed
	$(BIN)/piui --install-desktop

bench: $(VENV)/.installed
	for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build *.egg-info parasol_core/native/*.so

# SimGrid for tests/simgrid/test_simgrid_run.py: Debian's python3-simgrid for the system python3,
# and libsimgrid-dev (smpicc, smpirun and its replay program) for tests/replay/
# test_replay_simgrid.py; installed where apt-get is there and we are root (or sudo asks
# no password); never fatal: without them those tests skip and say why.
SIMGRID_PACKAGES = python3-simgrid libsimgrid-dev
simgrid:
	@if /usr/bin/python3 -c 'import simgrid' >/dev/null 2>&1 && command -v smpirun >/dev/null 2>&1; then :; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
	  echo "note: no apt-get: $(SIMGRID_PACKAGES) not installed, the SimGrid tests will skip"; \
	elif [ "$$(id -u)" = 0 ]; then \
	  apt-get install -y -q $(SIMGRID_PACKAGES) >/dev/null 2>&1 || \
	  echo "note: apt-get could not install $(SIMGRID_PACKAGES); the SimGrid tests will skip"; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then \
	  sudo -n apt-get install -y -q $(SIMGRID_PACKAGES) >/dev/null 2>&1 || \
	  echo "note: apt-get could not install $(SIMGRID_PACKAGES); the SimGrid tests will skip"; \
	else echo "note: not root: $(SIMGRID_PACKAGES) not installed, the SimGrid tests will skip"; fi
