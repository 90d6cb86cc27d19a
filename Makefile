# The whole set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
UD ?= ../shared/data/ud
VENV := .venv
BIN := $(VENV)/bin
# The CPU build of PyTorch; installed first so the `torch` range in
# pyproject.toml is already satisfied and no multi-GB CUDA build is fetched.
TORCH ?= torch==2.13.0
export ARBORPARSE_UD := $(abspath $(UD))

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q "$(TORCH)"
	$(BIN)/pip install -q -e ".[dev]"
	touch $@

$(VENV)/.installed-all: pyproject.toml $(VENV)/.installed-dev
	$(BIN)/pip install -q -e ".[all]"
	touch $@

demo: $(VENV)/.installed-dev
	bash scripts/demo.sh "$(UD)"

# Debian's Chromium, which the browser tests drive with Playwright (nothing is downloaded)
/usr/bin/chromium:
	apt-get install -y -q chromium || (apt-get update -q && apt-get install -y -q chromium)

test: $(VENV)/.installed-dev /usr/bin/chromium
	$(BIN)/python -m pytest -n 2 -q

bench: $(VENV)/.installed-all
	$(BIN)/python bench/read_speed.py
	$(BIN)/python bench/trees_speed.py

clean:
	rm -rf $(VENV) build *.egg-info
