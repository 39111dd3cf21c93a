"""``python -m mini_hf_bert trace|parity`` as library calls: run texts through a
checkpoint under the tracer (``tracing.py``), optionally beside transformers on the same
weights, and format what every module computed.

The walk-through generator and the tests call ``trace_texts`` directly.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

import torch

from .languages import checkpoint_for_text
from ..checkpoints.bundled import DEFAULT_SENTENCES
from ..checkpoints.convert import as_hf_directory, load_tokenizer
from ..modeling_bert import BertModel
from ..parity.compare import ParityRow, format_table, load_transformers_bert
from .tracing import (ModuleDiff, Trace, compare_traces, first_divergence, format_comparison_summary, format_trace,
                      trace)

#: What the tracer runs when no text is given to ``parity``: the demo's sentences, padded
#: into one batch, so the comparison covers the padding mask too.
INPUT_KEYS = ("input_ids", "attention_mask", "token_type_ids")


@dataclass
class TraceReport:
    """A traced forward pass: the input, our trace, and (with ``compare``) the diffs."""

    checkpoint: str
    attn_implementation: str
    tokens: list[list[str]]
    inputs: dict[str, torch.Tensor]
    trace: Trace
    diffs: list[ModuleDiff] | None = None
    other: str = ""

    @property
    def ok(self) -> bool:
        return self.diffs is None or all(d.ok for d in self.diffs)


def trace_texts(
    texts: list[str],
    checkpoint: str | None = None,
    compare: bool = False,
    attn_implementation: str = "eager",
    model: BertModel | None = None,
) -> TraceReport:
    """Tokenize ``texts`` (padded into one batch), run the checkpoint's BertModel under the
    tracer, and with ``compare`` run transformers' BertModel on the same weights and input.

    Args:
        texts: one or more texts; each is one sequence ([CLS] text [SEP]).
        checkpoint: any form ``from_pretrained`` reads; default the Chinese BERT for mostly-Chinese
            text, else all-MiniLM-L6-v2 (``checkpoint_for_text``).
        compare: also trace transformers (needs it installed) and diff every module.
        attn_implementation: "eager" (default: every attention step is a module call to
            see) or "sdpa", on both sides.
        model: an already loaded (perhaps modified) model to trace instead of loading one;
            ``checkpoint`` still supplies the tokenizer and transformers' weights.
    """
    if not texts or any(not isinstance(t, str) or not t.strip() for t in texts):
        raise ValueError("trace needs a non-empty text to run through the model")
    path = checkpoint or checkpoint_for_text("".join(texts))
    if model is None:
        model = BertModel.from_pretrained(path, attn_implementation=attn_implementation)
    with as_hf_directory(path) as hf_dir:
        tokenizer = load_tokenizer(hf_dir, path)
        batch = tokenizer(list(texts), padding=True, truncation=True, return_tensors="pt")
        inputs = {k: batch[k] for k in INPUT_KEYS}
        theirs_model = load_transformers_bert(hf_dir, attn_implementation) if compare else None
    with torch.no_grad(), trace(model) as ours:
        model(**inputs)
    tokens = [tokenizer.convert_ids_to_tokens(row[row_mask.bool()].tolist())
              for row, row_mask in zip(inputs["input_ids"], inputs["attention_mask"])]
    report = TraceReport(path, attn_implementation, tokens, inputs, ours)
    if theirs_model is not None:
        import transformers

        with torch.no_grad(), trace(theirs_model) as theirs:
            theirs_model(**inputs)
        report.diffs = compare_traces(ours, theirs)
        report.other = f"transformers {transformers.__version__}"
    return report


def format_trace_report(report: TraceReport, match: str | None = None) -> str:
    """The header (checkpoint, tokens, input shape), the module table, and the verdict."""
    lines = [f"Checkpoint: {report.checkpoint}  (attention: {report.attn_implementation}, fp32, CPU)"]
    for i, tokens in enumerate(report.tokens):
        lines.append(f"Tokens [{i}]: {' '.join(tokens)}")
    ids = report.inputs["input_ids"]
    lines.append(f"input_ids: {tuple(ids.shape)} (batch, seq)")
    lines.append("")
    diffs = report.diffs
    lines.append(format_trace(report.trace, diffs, match=match))
    if diffs is not None:
        lines.append("")
        lines.append(format_comparison_summary(diffs, report.other))
    return "\n".join(lines)


def run_module_parity(checkpoint: str | None = None, attn_implementation: str = "eager", out: TextIO | None = None) -> int:
    """Module-by-module parity on the demo's sentences: the tracer's comparison
    (``trace_texts(..., compare=True)``), every module's max |diff| against
    transformers' module of the same path, and the first to diverge, if one does."""
    out = out or sys.stdout  # looked up per call, so a redirected stdout is honoured
    report = trace_texts(list(DEFAULT_SENTENCES), checkpoint, compare=True, attn_implementation=attn_implementation)
    rows = [ParityRow(d.record.path, d.max_abs_diff, d.atol) for d in report.diffs if d.compared]
    out.write(format_table(rows, f"Module-by-module parity with {report.other} ({attn_implementation}), "
                                 f"{report.checkpoint}:") + "\n")
    first = first_divergence(report.diffs)
    if first is not None:
        out.write(f"\nThe first module to compute a diverging output: {first.record.path} "
                  f"({first.record.class_name}); `trace TEXT --compare` shows its numbers.\n")
    return 0 if report.ok else 1
