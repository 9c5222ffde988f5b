# duplexeval: two commands on a fresh machine.
#   make demo   set up .venv and run the main job on the bundled default data
#   make test   set up .venv with the test dependencies and run the whole test suite

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-12)

.PHONY: demo test lint clean venv

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
