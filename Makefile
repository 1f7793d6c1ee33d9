# madeval: install, quick start and tests. Everything installs into .venv.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# Local benchmark mirrors (the Hugging Face hub is not reachable everywhere).
export MADEVAL_DATA_DIR ?= $(abspath ../shared/data)

.PHONY: install demo test clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[embedded,test]'
	touch $(STAMP)

install: $(STAMP)

# The main job: a three-agent Memory debate with majority consensus on generated arithmetic,
# served by the embedded SmolLM2-135M-Instruct model; prints the leaderboard table.
demo: $(STAMP)
	$(BIN)/madeval --tasks arith_mc --limit 4 --max-turns 2 --max-tokens 128 --output-path madeval-out/demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) madeval-out
