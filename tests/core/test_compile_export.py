"""The model under PyTorch's graph tools, each equal to eager: ``torch.compile`` with
``fullgraph=True`` (no graph break anywhere, losses included), ``torch.export.export``,
``torch.jit.trace`` and ONNX export through the dynamo exporter, run by ONNX Runtime.

These work because nothing in a forward reads a tensor's values on the Python side
outside eager CPU use (``validation.values_are_checkable``), and because outputs are
dicts registered as pytree nodes (``modeling_outputs.ModelOutput``)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

import mini_hf_bert
from mini_hf_bert.parity.compare import FP32_ATOL, ONNX_ATOL, max_abs_diff

from ..conftest import small_config_kwargs

B, T, K = 2, 9, 3  # batch, sequence, multiple-choice candidates
CLASSES = [
    "BertModel", "BertForPreTraining", "BertForMaskedLM", "BertLMHeadModel", "BertForNextSentencePrediction",
    "BertForSequenceClassification", "BertForMultipleChoice", "BertForTokenClassification", "BertForQuestionAnswering",
]


def _model(class_name: str, **extra):
    torch.manual_seed(0)
    config = mini_hf_bert.BertConfig(**small_config_kwargs("h96-3heads-relu"), is_decoder=class_name == "BertLMHeadModel",
                                     **extra)
    return getattr(mini_hf_bert, class_name)(config).eval()


def _inputs(class_name: str, vocab: int, batch: int = B, seq: int = T, seed: int = 0, labels: bool = True) -> dict:
    g = torch.Generator().manual_seed(seed)
    mask = torch.ones(batch, seq, dtype=torch.long)
    mask[-1, seq // 2:] = 0  # one padded row
    inputs = dict(input_ids=torch.randint(0, vocab, (batch, seq), generator=g), attention_mask=mask,
                  token_type_ids=torch.randint(0, 2, (batch, seq), generator=g))
    if class_name == "BertForMultipleChoice":
        inputs = {k: v[:, None, :].expand(batch, K, seq).contiguous() for k, v in inputs.items()}
    if not labels or class_name == "BertModel":
        return inputs
    if class_name in ("BertForPreTraining", "BertForMaskedLM", "BertLMHeadModel"):
        inputs["labels"] = torch.randint(0, vocab, (batch, seq), generator=g)
        inputs["labels"][:, ::2] = -100
        if class_name == "BertForPreTraining":
            inputs["next_sentence_label"] = torch.randint(0, 2, (batch,), generator=g)
    elif class_name == "BertForTokenClassification":
        inputs["labels"] = torch.randint(0, 2, (batch, seq), generator=g)
    elif class_name == "BertForQuestionAnswering":
        inputs["start_positions"], inputs["end_positions"] = torch.tensor([1, 2]), torch.tensor([3, seq + 4])
    else:  # sentence-level: NSP, sequence classification, multiple choice
        inputs["labels"] = torch.randint(0, 2, (batch,), generator=g)
    return inputs


def _assert_equal_outputs(got, want, atol: float) -> None:
    assert type(got) is type(want) and list(got.keys()) == list(want.keys())
    for name in want.keys():
        a, b = got[name], want[name]
        pairs = [(a, b)] if isinstance(a, torch.Tensor) else list(zip(torch.utils._pytree.tree_leaves(a),
                                                                        torch.utils._pytree.tree_leaves(b)))
        for x, y in pairs:
            assert max_abs_diff(x, y) <= atol, (name, max_abs_diff(x, y))


@pytest.mark.parametrize("class_name", CLASSES)
# Inductor's own modules still call the deprecated torch.jit.script_method when it compiles.
@pytest.mark.filterwarnings("ignore:`torch.jit.:DeprecationWarning")
def test_compile_fullgraph_equals_eager(class_name):
    """fullgraph=True: one graph per model, losses and label checks included."""
    model = _model(class_name)
    inputs = _inputs(class_name, model.config.vocab_size)
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True)
    with torch.no_grad():
        want, got = model(**inputs), compiled(**inputs)
    _assert_equal_outputs(got, want, FP32_ATOL)
    if "loss" in want.keys():
        assert torch.isfinite(got.loss)


@pytest.mark.parametrize("class_name", CLASSES)
def test_export_program_runs_equal_to_eager(class_name):
    model = _model(class_name)
    inputs = _inputs(class_name, model.config.vocab_size)
    program = torch.export.export(model, (), inputs)
    with torch.no_grad():
        want, got = model(**inputs), program.module()(**inputs)
    _assert_equal_outputs(got, want, FP32_ATOL)


def test_export_with_dynamic_batch_and_sequence():
    model = _model("BertModel")
    inputs = _inputs("BertModel", model.config.vocab_size)
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq", max=model.config.max_position_embeddings)
    program = torch.export.export(model, (), inputs, dynamic_shapes={k: {0: batch, 1: seq} for k in inputs})
    other = _inputs("BertModel", model.config.vocab_size, batch=3, seq=17, seed=1)
    with torch.no_grad():
        _assert_equal_outputs(program.module()(**other), model(**other), FP32_ATOL)


@pytest.mark.parametrize("class_name", CLASSES)
# The tracer warns at every Python-side shape check (it bakes the traced shapes in, which is
# what tracing is) and that torch.jit itself is deprecated in favour of torch.export.
@pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning", "ignore:`torch.jit.:DeprecationWarning")
def test_jit_trace_with_the_default_return_dict(class_name):
    """Outputs are dicts, which the tracer accepts with strict=False (as for transformers'
    ModelOutput). TorchScript dicts hold one value type, so the traced call returns tensors
    only: the decoder's key/value cache is switched off, as transformers' must be too."""
    model = _model(class_name, use_cache=False)
    inputs = _inputs(class_name, model.config.vocab_size, labels=False)
    traced = torch.jit.trace(model, example_kwarg_inputs=inputs, strict=False)
    other = _inputs(class_name, model.config.vocab_size, seed=1, labels=False)  # same shapes, other values
    with torch.no_grad():
        want, got = model(**other), traced(**other)
    assert list(got.keys()) == list(want.keys())
    for name in want.keys():
        assert max_abs_diff(got[name], want[name]) <= FP32_ATOL, name


def test_out_of_range_ids_still_get_a_clear_error_in_eager_use():
    model = _model("BertModel")
    with pytest.raises(ValueError, match=r"input_ids must lie in \[0, vocab_size=211\), got values in \[0, 211\]"):
        model(torch.tensor([[0, 211]]))
    with pytest.raises(ValueError, match="labels must be in \\[0, 2\\) or -100"):
        _model("BertForSequenceClassification")(torch.tensor([[1, 2]]), labels=torch.tensor([5]))


@pytest.mark.parametrize("class_name,output_names", [
    ("BertModel", ["last_hidden_state", "pooler_output"]),
    ("BertForSequenceClassification", ["logits"]),
    ("BertForQuestionAnswering", ["start_logits", "end_logits"]),
    ("BertForMaskedLM", ["logits"]),
])
@pytest.mark.filterwarnings("ignore:# The axis name:UserWarning", "ignore:`isinstance\\(treespec, LeafSpec\\)`:FutureWarning")
def test_onnx_export_runs_in_onnxruntime(tmp_path, class_name, output_names):
    """The dynamo exporter writes a model with dynamic batch and sequence axes; ONNX Runtime
    runs it on another shape than the one exported, within ONNX_ATOL of eager."""
    import onnxruntime

    model = _model(class_name)
    inputs = _inputs(class_name, model.config.vocab_size, labels=False)
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq", max=model.config.max_position_embeddings)
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    program = torch.onnx.export(model, (), kwargs=inputs, dynamo=True, verbose=False, output_names=output_names,
                                dynamic_shapes={k: {0: batch, 1: seq} for k in inputs})
    program.save(str(tmp_path / "model.onnx"))
    session = onnxruntime.InferenceSession(str(tmp_path / "model.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == list(inputs) and [o.name for o in session.get_outputs()] == output_names
    other = _inputs(class_name, model.config.vocab_size, batch=3, seq=14, seed=1, labels=False)
    got = session.run(None, {k: v.numpy() for k, v in other.items()})
    with torch.no_grad():
        want = model(**other)
    for name, array in zip(output_names, got):
        assert array.shape == tuple(want[name].shape)
        assert float(np.abs(array - want[name].numpy()).max()) <= ONNX_ATOL, name


@pytest.mark.parametrize("class_name,output_names", [
    ("BertModel", ["last_hidden_state", "pooler_output"]),
    ("BertForSequenceClassification", ["logits"]),
    ("BertForQuestionAnswering", ["start_logits", "end_logits"]),
    ("BertForMultipleChoice", ["logits"]),
])
@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning", "ignore::torch.jit.TracerWarning")
def test_legacy_onnx_export_of_a_positional_tuple_runs_in_onnxruntime(tmp_path, class_name, output_names):
    """What every legacy export tutorial writes: ``torch.onnx.export(model, (input_ids,
    attention_mask, token_type_ids), ..., dynamo=False)``. That exporter passes every other
    parameter positionally as its default (None), which the forward accepts; ONNX Runtime
    then runs it on another batch and length within ONNX_ATOL of eager. (transformers 5.23's
    own BertModel fails this export: "got multiple values for argument 'use_cache'".)"""
    import onnxruntime

    model = _model(class_name)
    inputs = _inputs(class_name, model.config.vocab_size, labels=False)
    names = list(inputs)
    axes = {name: {0: "batch", 1: "seq"} if class_name != "BertForMultipleChoice" else {0: "batch", 2: "seq"}
            for name in names}
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    path = str(tmp_path / "model.onnx")
    torch.onnx.export(model, tuple(inputs.values()), path, dynamo=False, input_names=names,
                      output_names=output_names, dynamic_axes=axes)
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    other = _inputs(class_name, model.config.vocab_size, batch=3, seq=14, seed=1, labels=False)
    got = session.run(None, {k: v.numpy() for k, v in other.items()})
    with torch.no_grad():
        want = model(**other)
    for output, array in zip(output_names, got):
        assert array.shape == tuple(want[output].shape), output
        assert float(np.abs(array - want[output].numpy()).max()) <= ONNX_ATOL, output


def test_a_call_in_4x_positional_order_never_binds_silently():
    """The positional parameters are 5.x's (and peft's past_key_values after a head's labels),
    which the legacy exporter's Nones fill: a call in 4.x's order (head_mask 5th,
    inputs_embeds 6th, labels 7th) is refused, by the 5th argument's shape, by a 6th meeting
    an encoder with no cross-attention, by a 7th that is no prefix, or by one positional
    argument too many."""
    model = _model("BertForSequenceClassification")
    ids = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        assert model(ids, None, None, None, None, None, None).logits.shape == (1, 2)
        with pytest.raises(ValueError, match="past_key_values must hold one"):
            model(ids, None, None, None, None, None, torch.tensor([1]))
        with pytest.raises(TypeError, match="positional argument"):
            model(ids, None, None, None, None, None, None, True)
        base = _model("BertModel")
        with pytest.raises(ValueError, match="head_mask=\\.\\.\\.$"):
            base(ids, None, None, None, torch.ones(2))
        with pytest.raises(ValueError, match="no cross-attention layers"):
            base(None, None, None, None, None, torch.zeros(1, 3, base.config.hidden_size))
        with pytest.raises(TypeError, match="positional argument"):
            base(ids, None, None, None, None, None, None, None, None, True)
