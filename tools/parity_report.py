"""Regenerate docs/parity.md from the test suite's own measurements.

Runs both test sessions (tests/ against transformers 5.x, tests_transformers4/ against
4.57.6, as `make test` does), collects every parity family's tensor count and largest
max |diff|, and writes the table with a fingerprint of the measured code and inputs.
Every full test run then checks that the doc still describes what it measures
(``mini_hf_bert.parity.compare.parity_doc_problems``).

    .venv/bin/python tools/parity_report.py        # after `make test` has set up .venv and .cache
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mini_hf_bert.file_utils import write_text  # noqa: E402

DOC = os.path.join(ROOT, "docs", "parity.md")
TF4_DIR = os.path.join(ROOT, ".cache", "transformers-4.57.6")

HEADER = """# Parity with transformers

Every number below is measured by the test suite (`make test`) and written here by
`tools/parity_report.py`. Each full test run fails if this table no longer describes what
it measures: a family added or removed, another tensor count or tolerance, a figure over
its tolerance, or a change to the measured code or inputs (the fingerprint at the end).
A figure that moves within its tolerance on another machine does not make the table
stale: the last bits of float results depend on the GEMM kernel, thread count and memory
layout (the run's summary shows both figures). fp32 on CPU, weights copied from (or
loaded like) transformers' own model, same inputs. "tensors" counts the compared tensors (outputs, hidden states, attention maps,
logits, losses, gradients) in the family; "max |diff|" is the largest absolute difference
among them; the tolerance is `mini_hf_bert.parity.compare.FP32_ATOL` (why 1e-5: see its comment).

"5 input forms" are: a padded batch with a 2D mask; no mask and no token_type_ids; given
position_ids; inputs_embeds instead of input_ids; a 3D (batch, from, to) mask. The configs
are small random models chosen to exercise every switch: "tiny" (hidden 64, 4 heads),
"h96-3heads-relu" (head dim 32, relu), "gelu_new-eps1e-5-pad3-types3" (tanh GELU,
layer_norm_eps 1e-5, pad_token_id 3, three segment types), "chunked-ff"
(chunk_size_feed_forward 3).

transformers 5.x is the reference wherever it has the feature. 4.57.6, the last 4.x
release, is the reference for what 5.x dropped: `get_extended_attention_mask` and 3D
masks, `head_mask`, `prune_heads`, relative position embeddings.

Checked against mini_hf_bert itself rather than transformers (so not in the table):
gradient checkpointing gives bit-identical gradients; a chunk size that does not divide
the sequence (transformers refuses it) equals the unchunked model; eager equals sdpa.

| family | transformers | tensors | max \\|diff\\| | atol |
| --- | --- | --- | --- | --- |
"""


#: The one test that checks the doc being rewritten (its fingerprint): left out of the run that rewrites it.
DOC_CHECK = "tests/docs/test_docs_current.py::test_parity_doc_was_measured_with_the_current_code_and_inputs"


def run_session(test_dir: str, extra_env: dict[str, str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "families.json")
        env = dict(os.environ, MINI_HF_BERT_PARITY_JSON=out, **extra_env)
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_dir, "--deselect", DOC_CHECK]
        result = subprocess.run(command, cwd=ROOT, env=env)
        if result.returncode != 0:
            raise SystemExit(f"pytest {test_dir} failed (exit {result.returncode}); the table is written only from a passing run")
        with open(out, encoding="utf-8") as f:
            return json.load(f)


def main() -> int:
    if not os.path.isdir(TF4_DIR):
        raise SystemExit(f"{TF4_DIR} is missing: run `make test` once to install transformers 4.57.6 there")
    sessions = [run_session("tests", {}), run_session("tests_transformers4", {"PYTHONPATH": TF4_DIR})]
    lines = [HEADER]
    for session in sessions:
        for family, row in session["families"].items():
            lines.append(f"| {family} | {session['version']} | {row['tensors']} | {row['max_abs_diff']} | {row['atol']} |\n")
    os.makedirs(os.path.dirname(DOC), exist_ok=True)
    from conftest import parity_sources_fingerprint

    lines.append(f"\n<!-- measured sources fingerprint: {parity_sources_fingerprint()} -->\n")
    write_text(DOC, "".join(lines))
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
