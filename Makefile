# Two commands do everything on a fresh machine: `make serve` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
export LITELLM_LOCAL_MODEL_COST_MAP := True
export HF_HUB_OFFLINE := 1

BROWSER := browser
NODE_MODULES := $(BROWSER)/node_modules/.installed

.PHONY: serve test lint typecheck pytest install install-test chromium clean

serve: $(VENV)/.installed $(NODE_MODULES)
	$(BIN)/kgmem serve

test: $(VENV)/.installed-test $(NODE_MODULES) chromium lint typecheck pytest

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(VENV)/.installed-test
	$(BIN)/mypy --strict kgmem

# Tests run on every core, a module to a worker (its module fixtures are built once);
# PYTEST_WORKERS='-n 0' runs them in this process.
PYTEST_WORKERS ?= -n auto --dist loadscope

pytest: $(VENV)/.installed-test
	$(BIN)/python -m pytest $(PYTEST_WORKERS) $(PYTEST_ARGS)

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "kgmem needs Python >= 3.11 (found $$($(PYTHON) --version))"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-test: pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $@ $(VENV)/.installed

# The memory browser's libraries (cytoscape, markdown-it), from the npm registry as the
# committed lockfile pins them; kgmem serves them from node_modules.
$(NODE_MODULES): $(BROWSER)/package.json $(BROWSER)/package-lock.json
	cd $(BROWSER) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The browser tests' browser: Debian's chromium (Playwright drives it; it never downloads one),
# and curl, which the README's snippets use (tests/test_readme.py runs them).
chromium:
	@{ command -v chromium && command -v curl; } >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium curl; \
		else \
			echo "the tests need Debian's chromium and curl: sudo apt-get install chromium curl"; \
		fi; }

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache build *.egg-info $(BROWSER)/node_modules
