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
from tools.reading_metrics import TARGET_CODE_LINES, class_lines, code_line_numbers, encoder_core_lines, target_size

from ..paths import ROOT

MODEL_FILE = os.path.join(ROOT, "mini_hf_bert", "modeling_bert.py")



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
    expected = ["query", "key", "value", "attention_mask", "scaling", "dropout"]  # no module: none uses one
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


def test_a_model_call_runs_no_hook():
    """No forward hook on the model, and no __call__ of our own: a debugger stepping into
    model(...) goes from nn.Module.__call__ straight to forward."""
    config = mini_hf_bert.BertConfig(vocab_size=30, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=16)
    model = mini_hf_bert.BertForSequenceClassification(config).eval()
    assert all(not module._forward_pre_hooks and not module._forward_hooks for module in model.modules())
    assert all("__call__" not in vars(cls) for cls in type(model).__mro__ if cls.__module__.startswith("mini_hf_bert"))


def test_checkpointing_is_in_the_encoder_loop():
    source = inspect.getsource(modeling_bert.BertEncoder.forward)
    assert "checkpointed_module_call(layer_module" in source and "gradient_checkpointing" in source


@pytest.mark.parametrize("name, limit", sorted(TARGET_CODE_LINES.items()))
def test_the_lesson_keeps_its_size_in_code_lines(name, limit):
    """Sizes count code, never explanation: tools/reading_metrics.py's targets."""
    measured = {"classes": class_lines(MODEL_FILE), "encoder_core": encoder_core_lines(MODEL_FILE)}
    lines = target_size(measured, name)
    assert 0 < lines <= limit, f"{name} is {lines} code lines (at most {limit}: tools/reading_metrics.py)"


def test_explanation_is_not_counted_but_code_is():
    plain = "class A:\n    def forward(self, x):\n        return x\n"
    explained = ('class A:\n    """What A is.\n\n    At length.\n    """\n\n    # why forward is so short\n'
                 '    def forward(self, x):\n        """Returns x."""\n        # the identity\n'
                 '        return x  # unchanged\n')
    assert len(code_line_numbers(plain)) == len(code_line_numbers(explained)) == 3
    grown = explained.replace("        return x", "        y = x\n        return y")
    assert len(code_line_numbers(grown)) == 4
    assert len(code_line_numbers('x = """a\nb"""\n')) == 2  # a string that is not a docstring is code


def _functions_run(model: torch.nn.Module, **inputs: object) -> set[tuple[str, str]]:
    """(file name, qualified name) of every Python function a call runs in the model file
    and the extras beside it: where a debugger's breakpoint would fire."""
    import sys

    watched = {MODEL_FILE, os.path.join(ROOT, "mini_hf_bert", "modeling_bert_extras.py")}
    ran = set()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename in watched:
            ran.add((os.path.basename(frame.f_code.co_filename), frame.f_code.co_qualname))

    sys.setprofile(profile)
    try:
        with torch.no_grad():
            model(**inputs)
    finally:
        sys.setprofile(None)
    return ran


LESSON_FORWARDS = {("modeling_bert.py", f"{name}.forward") for name in (
    "BertEmbeddings", "BertSelfAttention", "BertAttention", "BertLayer", "BertEncoder", "BertPooler", "BertModel")}


@pytest.mark.parametrize("attn_implementation", ["eager", "sdpa"])
def test_a_plain_call_steps_through_the_lesson_forwards_only(attn_implementation):
    """A breakpoint in each of the lesson's forwards fires on an encoder's call, and nothing
    of 4.x's options runs; a head mask (an option) goes to modeling_bert_extras.py instead."""
    config = mini_hf_bert.BertConfig(vocab_size=30, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=16, attn_implementation=attn_implementation)
    model = mini_hf_bert.BertModel(config).eval()
    ids = torch.tensor([[1, 2, 3, 0]])
    ran = _functions_run(model, input_ids=ids, attention_mask=(ids > 0).long(), output_attentions=True)
    assert LESSON_FORWARDS <= ran
    assert not {name for file, name in ran if file == "modeling_bert_extras.py"} - {"forward_elsewhere", "needs_options"}
    with_options = _functions_run(model, input_ids=ids, head_mask=torch.ones(2))
    assert ("modeling_bert_extras.py", "layer_forward_with_options") in with_options
    assert ("modeling_bert.py", "BertLayer.forward") not in with_options


@pytest.mark.parametrize("attn_implementation, options, runs_in", [
    ("eager", {}, "BertModel.forward"),
    ("fast", {}, "fast_path_forward"),  # the whole-model forward takes the call
    ("fast", {"output_attentions": True}, "BertModel.forward"),  # it declines; the layers run it
    ("eager", {"head_mask": torch.ones(2)}, "model_forward_with_options"),
])
def test_one_dispatch_at_the_top_and_the_inputs_checked_once(attn_implementation, options, runs_in):
    """BertModel.forward's first lines send the call where it runs, before anything is
    checked; wherever it runs, check_model_inputs runs exactly once, from there."""
    import sys

    from mini_hf_bert import validation

    config = mini_hf_bert.BertConfig(vocab_size=30, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=16, attn_implementation=attn_implementation)
    model = mini_hf_bert.BertModel(config).eval()
    ids = torch.tensor([[1, 2, 3, 0]])
    checks = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code is validation.check_model_inputs.__code__:
            checks.append(frame.f_back.f_code.co_qualname)

    sys.setprofile(profile)
    try:
        with torch.no_grad():
            model(input_ids=ids, attention_mask=(ids > 0).long(), **options)
    finally:
        sys.setprofile(None)
    assert checks == [runs_in]


def test_a_layer_returns_its_output_and_the_probabilities_asked_for():
    """The one protocol the encoder reads in place: (output,), or (output, probabilities)
    where they are asked for, whatever the attention implementation."""
    config = mini_hf_bert.BertConfig(vocab_size=30, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=16, attn_implementation="sdpa")
    layer = mini_hf_bert.BertModel(config).eval().encoder.layer[0]
    hidden = torch.randn(2, 5, 16)
    with torch.no_grad():
        (plain,) = layer(hidden)
        output, probs = layer(hidden, output_attentions=True)
    assert torch.allclose(plain, output, atol=1e-6) and plain.shape == (2, 5, 16)
    assert probs.shape == (2, 2, 5, 5) and torch.allclose(probs.sum(-1), torch.ones(2, 2, 5))
