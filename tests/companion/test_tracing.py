"""The tracer: an activation cache over the real module tree, the side-by-side comparison
with transformers, and ``python -m mini_hf_bert trace`` / ``parity`` built on it."""

from __future__ import annotations

import contextlib
import io

import pytest
import torch

from mini_hf_bert import BertModel, chinese_checkpoint_dir
from mini_hf_bert.checkpoints.bundled import default_checkpoint_dir
from mini_hf_bert.__main__ import main
from mini_hf_bert.companion.trace_report import format_trace_report, trace_texts
from mini_hf_bert.parity.compare import FP32_ATOL
from mini_hf_bert.companion.tracing import ATTENTION_PROBABILITIES, first_divergence, run_with_cache, trace

TEXT = "The cat sat on the mat."
CHINESE = "北京是中国的首都。"


@pytest.fixture(scope="module")
def model(minilm_dir):
    return BertModel.from_pretrained(minilm_dir, attn_implementation="eager")


@pytest.fixture(scope="module")
def batch(minilm_tokenizer):
    encoded = minilm_tokenizer([TEXT, CHINESE], padding=True, return_tensors="pt")
    return {k: encoded[k] for k in ("input_ids", "attention_mask", "token_type_ids")}


def _hooks(model) -> int:
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())


def test_cache_holds_every_module_output_under_its_checkpoint_path(model, batch):
    before = _hooks(model)
    with torch.no_grad(), trace(model) as t:
        out = model(**batch)
    assert _hooks(model) == before  # the hooks are gone afterwards
    batch_size, seq = batch["input_ids"].shape
    hidden = model.config.hidden_size
    assert t["encoder.layer.0.attention.self"].shape == (batch_size, seq, hidden)
    assert t["encoder.layer.0.intermediate"].shape == (batch_size, seq, model.config.intermediate_size)
    # The cached values are the ones the model computed, checked by recomputing them.
    assert torch.equal(t["encoder"], out.last_hidden_state)
    assert torch.equal(t["pooler"], out.pooler_output)
    assert torch.equal(t["embeddings"], model.embeddings(batch["input_ids"], batch["token_type_ids"]))
    query = t["encoder.layer.0.attention.self.query"]
    assert torch.equal(query, model.encoder.layer[0].attention.self.query(t["embeddings"]))
    # The whole output is there too: (context, probabilities) for self-attention, which eager
    # forms whether or not the caller asked for them (the layer returns them only if asked).
    context, probs = t.output("encoder.layer.0.attention.self")
    heads = model.config.num_attention_heads
    assert torch.equal(context, t["encoder.layer.0.attention.self"]) and probs.shape == (batch_size, heads, seq, seq)
    assert len(t.output("encoder.layer.0")) == 1 and torch.allclose(probs.sum(-1), torch.ones(()))
    with pytest.raises(KeyError, match="no module of that path ran"):
        t["encoder.layer.99"]


def test_records_come_in_execution_order(model, batch):
    _, t = run_with_cache(model, **batch)
    paths = [r.path for r in t.records]
    assert paths[0] == "embeddings" and paths[-1] == "pooler.activation"
    assert paths.index("encoder.layer.0") < paths.index("encoder.layer.0.attention.self.query") < \
        paths.index("encoder.layer.1")
    by_path = {r.path: r for r in t.records}
    # A parent starts before its children and finishes after them.
    parent, child = by_path["encoder.layer.2"], by_path["encoder.layer.2.output.dense"]
    assert parent.started < child.started and parent.finished > child.finished
    stats = by_path["encoder.layer.0.output.LayerNorm"].stats()
    x = t["encoder.layer.0.output.LayerNorm"].double()
    assert stats["mean"] == pytest.approx(x.mean().item()) and stats["max"] == x.max().item()


def test_unchanged_weights_agree_with_transformers_everywhere(minilm_dir):
    report = trace_texts([TEXT, CHINESE], minilm_dir, compare=True)
    compared = [d for d in report.diffs if d.compared]
    assert len(compared) > 6 * 15
    assert report.ok and first_divergence(report.diffs) is None
    assert max(d.max_abs_diff for d in compared) <= FP32_ATOL


def test_attention_probabilities_are_recorded_before_dropout_and_compared(model, batch, minilm_dir):
    """softmax is a function, so the row is the attention Dropout's input: the
    probabilities themselves, also while training (rows sum to 1, nothing dropped)."""
    report = trace_texts([TEXT, CHINESE], minilm_dir, compare=True)
    rows = [d for d in report.diffs if d.record.class_name == ATTENTION_PROBABILITIES]
    assert [d.record.path for d in rows] == [f"encoder.layer.{i}.attention.self.dropout" for i in range(6)]
    assert all(d.compared and d.max_abs_diff <= FP32_ATOL for d in rows)
    with torch.no_grad():
        returned = model(**batch, output_attentions=True).attentions
        _, t = run_with_cache(model, **batch)
    assert all(torch.equal(t[f"encoder.layer.{i}.attention.self.dropout"], returned[i]) for i in range(6))
    dropping = BertModel.from_pretrained(minilm_dir, attn_implementation="eager", attention_probs_dropout_prob=0.5)
    dropping.train()
    with torch.no_grad():
        _, t = run_with_cache(dropping, **batch)
    probabilities = t["encoder.layer.0.attention.self.dropout"]  # (B, N, T, T)
    assert torch.allclose(probabilities.sum(-1), torch.ones(probabilities.shape[:-1]), atol=1e-5)
    assert "attention probabilities" in format_trace_report(report)


@pytest.mark.parametrize("perturbed", [
    "embeddings.LayerNorm",
    "encoder.layer.0.attention.self.value",
    "encoder.layer.3.intermediate.dense",
    "encoder.layer.5.output.LayerNorm",
    "pooler.dense",
])
def test_a_perturbed_module_is_named_first(perturbed, minilm_dir):
    """Change one module's weights: every module after it diverges too, but the tracer
    names the one that computed the first diverging output."""
    model = BertModel.from_pretrained(minilm_dir, attn_implementation="eager")
    with torch.no_grad():
        model.get_submodule(perturbed).weight.add_(1e-3)
    report = trace_texts([TEXT], minilm_dir, compare=True, model=model)
    first = first_divergence(report.diffs)
    assert first is not None and first.record.path == perturbed
    assert not report.ok
    text = format_trace_report(report)
    marked = [line for line in text.splitlines() if "first beyond tolerance" in line]
    assert len(marked) == 1 and marked[0].strip().startswith(perturbed + " ")
    assert f"the first to compute a diverging output is {perturbed}" in text


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("text", [TEXT, CHINESE])
def test_trace_command_on_the_packaged_checkpoint(text):
    code, out, err = _cli("trace", text, "--compare")
    assert code == 0, err
    lines = out.splitlines()
    # the checkpoint it chose and why, as every companion command says it
    why = "zh, the Chinese BERT: the text is mostly Chinese" if text == CHINESE else \
        "all-MiniLM-L6-v2 (English): the text is not Chinese"
    path = chinese_checkpoint_dir() if text == CHINESE else default_checkpoint_dir()
    assert lines[0] == f"checkpoint: {why} ({path})"
    assert lines[2].startswith("Tokens [0]: [CLS]")
    if text == CHINESE:
        assert "北 京" in lines[2]  # one token per character: the CJK rule
    row = next(line for line in lines if line.strip().startswith("encoder.layer.0.attention.self.query "))
    assert "Linear" in row and "float32" in row and row.split()[-1] == "0.00e+00"
    assert "all within tolerance" in lines[-1]


def test_trace_match_filters_and_bad_match_is_one_error():
    code, out, _ = _cli("trace", TEXT, "--match", r"^pooler")
    table = [line for line in out.splitlines()[4:] if line.strip()]
    assert code == 0 and [line.split()[0] for line in table[1:]] == ["pooler", "pooler.dense", "pooler.activation"]
    code, _, err = _cli("trace", TEXT, "--match", "no-such-module")
    assert code == 2 and err.strip() == "error: --match 'no-such-module' matches no module path (e.g. 'encoder.layer.0.attention')"
    code, _, err = _cli("trace", "   ")
    assert code == 2 and err.strip() == "error: trace needs a non-empty text to run through the model"


def test_parity_is_the_tracers_comparison():
    code, out, err = _cli("parity")
    assert code == 0, err
    assert "Module-by-module parity with transformers 5." in out
    rows = [line for line in out.splitlines() if line.endswith("within tolerance")]
    assert len(rows) > 6 * 15
