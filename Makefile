# madeval: install, quick start and tests. Everything installs into .venv.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# `make demo` installs madeval and the embedded model only; `make test` (and `make install`) the rest.
DEMO_STAMP := $(VENV)/.demo-installed
STAMP := $(VENV)/.installed
DEMO_OUT := madeval-out/demo
# A pipe must not hide a failed pip (the demo's install filters pip's build log; a filter that
# matches no line is no failure).
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
# What the demo's install shows of pip's verbose log (unbuffered, so each line comes when it
# happens): what it fetches, the compiler's progress ([12/80] from ninja, [ 40%] from make) while
# llama-cpp-python builds, the result and any error.
PIP_PROGRESS := ^(Collecting|Building wheel|Created wheel|Successfully|ERROR)|^ *\[ *[0-9]+(/[0-9]+|%)\]|[Ee]rror:

# The files holding blocks generated from the code (cog markers).
DOCS_GENERATED = README.md $(wildcard docs/*.md docs/reference/*.md)

# Local benchmark mirrors (the Hugging Face hub is not reachable everywhere).
export MADEVAL_DATA_DIR ?= $(abspath ../shared/data)

# WordNet 3.0 for the METEOR metric, offline: Debian's wordnet-base (NLTK's downloader needs the
# network). Installed only when missing; as root directly, otherwise through sudo.
WORDNET := /usr/share/wordnet/data.noun
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Headless Chromium for the leaderboard page's screenshot test: Debian's chromium, when missing.
CHROMIUM := /usr/bin/chromium

.PHONY: install demo test docs docs-update clean

$(DEMO_STAMP): pyproject.toml constraints.txt
	@echo "make demo: installing madeval and its embedded model (llama-cpp-python, SmolLM2-135M) into $(VENV)"
	@echo "  (not torch, lm-eval, wandb or the routers: 'make test' adds them)."
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	@echo "Where pip finds no llama-cpp-python wheel for this machine it compiles one: 5 to 15 minutes on"
	@echo "2 cores, once (pip's cache keeps the wheel). The compiler's progress follows as [step/steps]."
	PYTHONUNBUFFERED=1 $(BIN)/pip install --verbose -c constraints.txt -e '.[embedded]' 2>&1 | { grep --line-buffered -E '$(PIP_PROGRESS)' || true; }
	touch $(DEMO_STAMP)

$(STAMP): $(DEMO_STAMP) pyproject.toml constraints.txt
	@echo "Installing the test environment: metrics (torch CPU build), routers, wandb and the plugin packages"
	$(BIN)/pip install --quiet -c constraints.txt -e '.[embedded,metrics,test,fleet,wandb,inspect,docs]' -e ./plugins/madeval-madc -e ./plugins/madeval-freemad -e ./plugins/madeval-frameworks -e ./plugins/madeval-lmeval
	touch $(STAMP)

$(WORDNET):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wordnet-base

$(CHROMIUM):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

install: $(STAMP) $(WORDNET) $(CHROMIUM)

# The main job: a single agent against a three-agent debate on the same generated arithmetic
# items (examples/demo.yaml), served by the embedded SmolLM2-135M-Instruct model with structured
# answers; prints the leaderboard table, then where to see the debates (--view writes the debate
# viewer before the board, which links it). Add --base-url URL --model M to use a real server.
demo: $(DEMO_STAMP)
	@echo "Running examples/demo.yaml: a single agent and a three-agent debate on the same 5 questions, on the embedded model"
	$(BIN)/madeval --config examples/demo.yaml --output-path $(DEMO_OUT) --view
	@echo
	@echo "The board as a page (it links the debates): $(DEMO_OUT)/leaderboard.html"

# The docs site (docs/ -> build/docs): Sphinx fails on any warning, and a broken reference in the
# docstrings is one (-n). 'make test' builds it first; tests/docs/ check what it says.
docs: $(STAMP)
	$(BIN)/sphinx-build -b html -W --keep-going -n -q -E docs build/docs
	@echo "The docs: build/docs/index.html"

# Rewrite the blocks of README and docs/ that are generated from the code (CLI help, the components
# table, the board's column legend, every run setting); tests/docs/test_generated_blocks.py fails
# while one is out of date.
docs-update: $(STAMP)
	MADEVAL_LOAD_PLUGINS= $(BIN)/cog -r -I docs $(DOCS_GENERATED)   # the built-in components only

# The suite runs on every core (pytest-xdist): tests/<stage>/ follows madeval's stages, and every
# test can share the machine with the others (no fixed port, no process-wide state left behind).
# One worker more than the cores: every worker spends part of its time waiting (on the child
# processes it starts, on timeouts a test is about), and a third worker fills that time on 2 cores
# (a fresh clone: 8 min 25 s with 3 workers against 8 min 59 s with 2).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))

# The suite starts about two hundred madeval processes; where PYTHONDONTWRITEBYTECODE is set (as on
# this project's CI machine) each would compile madeval's sources again, 0.3 s of CPU a process.
# compileall writes them once (and later only what changed), whatever that variable says.
test: install docs
	$(BIN)/ruff check .
	$(BIN)/python -m compileall -q madeval plugins bench
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS)

clean:
	rm -rf $(VENV) madeval-out build/docs
