# madeval: install, quick start and tests. Everything installs into .venv.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# Local benchmark mirrors (the Hugging Face hub is not reachable everywhere).
export MADEVAL_DATA_DIR ?= $(abspath ../shared/data)

# WordNet 3.0 for the METEOR metric, offline: Debian's wordnet-base (NLTK's downloader needs the
# network). Installed only when missing; as root directly, otherwise through sudo.
WORDNET := /usr/share/wordnet/data.noun
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Headless Chromium for the leaderboard page's screenshot test: Debian's chromium, when missing.
CHROMIUM := /usr/bin/chromium

.PHONY: install demo test clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[embedded,metrics,test,fleet,wandb,inspect]' -e ./plugins/madeval-madc -e ./plugins/madeval-freemad -e ./plugins/madeval-frameworks -e ./plugins/madeval-lmeval
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
# answers; prints the leaderboard table. Add --base-url URL --model M to use a real server.
demo: $(STAMP)
	$(BIN)/madeval --config examples/demo.yaml --output-path madeval-out/demo

test: install
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) madeval-out
