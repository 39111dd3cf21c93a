"""The model file a learner opens reads as BERT (docs/architecture.md, "The model file is
BERT"): it names no fast path, the attention registry holds attention functions only, no
hidden control flow runs on a call, and the classes stay within the sizes we hold them to."""

from __future__ import annotations

import ast
import inspect
import os

import pytest
import torch

import mini_hf_bert
from mini_hf_bert import modeling_bert, modeling_utils, pytorch_utils
from tools.reading_metrics import class_lines, encoder_core_lines

from ..paths import ROOT

MODEL_FILE = os.path.join(ROOT, "mini_hf_bert", "modeling_bert.py")

#: Sizes in lines (class or method, docstring included, as tools/reading_metrics.py counts
#: them): the targets of the review that measured us against transformers 3.4.0's file
#: (its BertSelfAttention is 76 lines), the encoder core from BertEmbeddings to the end of BertPooler.
MAX_LINES = {"BertSelfAttention": 70, "BertSelfAttention.forward": 30, "BertModel.forward": 60}
MAX_ENCODER_CORE_LINES = 380


def test_the_model_file_names_no_fast_path():
    with open(MODEL_FILE, encoding="utf-8") as f:
        source = f.read()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            imported |= {node.module or ""} | {alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
    assert not any("fast" in name for name in imported), imported
    assert "modeling_bert_fast" not in source and '"fast"' not in source


def test_the_attention_registry_holds_attention_functions_only():
    expected = ["module", "query", "key", "value", "attention_mask", "scaling", "dropout"]
    assert "fast" not in modeling_utils.ALL_ATTENTION_FUNCTIONS
    for name, function in modeling_utils.ALL_ATTENTION_FUNCTIONS.items():
        assert list(inspect.signature(function).parameters) == expected, name
    assert list(inspect.signature(modeling_bert.eager_attention_forward).parameters) == expected
    # "fast" runs the whole model: it is registered there, with the attention its layers fall back to
    assert modeling_utils.ALL_MODEL_FORWARDS.layer_attention["fast"] == "sdpa"


def test_fast_still_selects_the_fast_path():
    config = mini_hf_bert.BertConfig(vocab_size=30, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=16, attn_implementation="fast")
    model = mini_hf_bert.BertModel(config).eval()
    ids = torch.tensor([[2, 5, 7, 0], [2, 9, 0, 0]])
    mask = (ids != 0).long()
    with torch.no_grad():
        out = model(ids, mask).last_hidden_state
    # the fast path computes real tokens only: padding positions hold exactly 0 (the layers' path does not)
    assert torch.equal(out[1, 2:], torch.zeros_like(out[1, 2:]))
    assert out[0, 2].abs().sum() > 0 and out[1, 1].abs().sum() > 0  # real tokens are computed


def test_the_layers_forward_is_the_class_own():
    """A debugger stepping into a layer lands in BertLayer.forward: nothing wraps or swaps it."""
    assert modeling_bert.BertLayer.forward.__qualname__ == "BertLayer.forward"
    assert modeling_bert.BertLayer.forward.__code__.co_filename == MODEL_FILE
    assert "__init_subclass__" not in vars(pytorch_utils.GradientCheckpointingLayer)


def test_a_model_call_runs_no_hook(monkeypatch):
    """No forward pre-hook on the model, and the 3.x-call message is computed only for a call that failed."""
    config = mini_hf_bert.BertConfig(vocab_size=30, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=16)
    model = mini_hf_bert.BertForSequenceClassification(config).eval()
    assert all(not module._forward_pre_hooks and not module._forward_hooks for module in model.modules())

    def refuse(*args):
        raise AssertionError("computed for a call that did not fail")

    monkeypatch.setattr(modeling_utils, "positional_call_error", refuse)
    with torch.no_grad():
        model(torch.tensor([[2, 5, 7]]))


def test_checkpointing_is_in_the_encoder_loop():
    source = inspect.getsource(modeling_bert.BertEncoder.forward)
    assert "checkpointed_module_call(layer_module" in source and "gradient_checkpointing" in source


@pytest.mark.parametrize("name, limit", sorted(MAX_LINES.items()))
def test_the_lesson_keeps_its_size(name, limit):
    classes = class_lines(MODEL_FILE)
    cls, _, method = name.partition(".")
    lines = classes[cls]["forward" if method else "class"]
    assert 0 < lines <= limit, f"{name} is {lines} lines (at most {limit})"


def test_the_encoder_core_keeps_its_size():
    lines, _ = encoder_core_lines(MODEL_FILE)
    assert lines <= MAX_ENCODER_CORE_LINES, f"the encoder core is {lines} lines (at most {MAX_ENCODER_CORE_LINES})"
