# duplexeval: two commands on a fresh machine.
#   make demo   set up .venv and run the main job on the bundled default data
#   make test   set up .venv with the test dependencies and run the whole test suite

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-12)

.PHONY: demo test lint clean venv venv-moshi test-moshi

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,asr,tts,tts-en,dask,servers,quality]"
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/duplexeval demo $(DEMO_ARGS)

test: $(STAMP)
	$(BIN)/python -m ruff check src tests benchmarks
	$(BIN)/lint-imports
	@$(BIN)/python -m pytest -q $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest ran no tests; that is a failure" >&2; exit 1; fi; \
	exit $$rc

lint: $(STAMP)
	$(BIN)/python -m ruff check src tests benchmarks
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) .pytest_cache build dist

# The in-process Moshi adapter (`--system moshi`) in its own environment: moshi 0.2.13 pins
# torch<2.10, numpy<2.3 and aiohttp<3.12, which stay out of .venv. PyPI's torch wheels are the
# CUDA build (about 7 GB); MOSHI_TORCH_INDEX=https://download.pytorch.org/whl/cpu gets a CPU build.
MOSHI_VENV ?= .venv-moshi
MOSHI_BIN := $(MOSHI_VENV)/bin
MOSHI_STAMP := $(MOSHI_VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-12)
MOSHI_TORCH_INDEX ?=

$(MOSHI_STAMP): pyproject.toml
	$(PYTHON) -m venv $(MOSHI_VENV)
	$(MOSHI_BIN)/python -m pip install --quiet --upgrade pip
	$(if $(MOSHI_TORCH_INDEX),$(MOSHI_BIN)/python -m pip install --quiet --index-url $(MOSHI_TORCH_INDEX) "torch<2.10")
	$(MOSHI_BIN)/python -m pip install --quiet -e ".[moshi,test]"
	rm -f $(MOSHI_VENV)/.installed-*
	touch $(MOSHI_STAMP)

venv-moshi: $(MOSHI_STAMP)

# the moshi tests (tiny random-weight models on CPU); `make test` does not collect tests_moshi/
test-moshi: $(MOSHI_STAMP)
	$(MOSHI_BIN)/python -m pytest -q tests_moshi $(PYTEST_ARGS)
