"""The legacy ONNX export every 4.x tutorial writes, ``torch.onnx.export(model, (input_ids,
attention_mask, token_type_ids), path, dynamo=False)``: ours and 4.57.6's, each run by ONNX
Runtime on another shape, give the same logits."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert.parity.compare import ONNX_ATOL

CONFIG = dict(vocab_size=120, hidden_size=64, num_attention_heads=4, num_hidden_layers=2, intermediate_size=96)


def _inputs(batch: int, seq: int, seed: int) -> dict:
    g = torch.Generator().manual_seed(seed)
    mask = torch.ones(batch, seq, dtype=torch.long)
    mask[-1, seq // 2:] = 0
    return {"input_ids": torch.randint(0, 120, (batch, seq), generator=g), "attention_mask": mask,
            "token_type_ids": torch.randint(0, 2, (batch, seq), generator=g)}


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning", "ignore::torch.jit.TracerWarning")
@pytest.mark.parametrize("class_name", ["BertForSequenceClassification", "BertForQuestionAnswering"])
def test_legacy_export_equals_4x(tmp_path, class_name):
    import onnxruntime

    torch.manual_seed(0)
    theirs = getattr(transformers, class_name)(transformers.BertConfig(**CONFIG, return_dict=False)).eval()
    ours = getattr(mini_hf_bert, class_name)(mini_hf_bert.BertConfig(**CONFIG, return_dict=False)).eval()
    ours.load_state_dict(theirs.state_dict())
    inputs, other = _inputs(2, 9, 0), _inputs(3, 13, 1)
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    results = []
    for name, model in (("ours", ours), ("theirs", theirs)):
        path = str(tmp_path / f"{name}.onnx")
        torch.onnx.export(model, tuple(inputs.values()), path, dynamo=False, input_names=list(inputs),
                          dynamic_axes={k: {0: "batch", 1: "seq"} for k in inputs})
        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        results.append(session.run(None, {k: v.numpy() for k, v in other.items()}))
    for a, b in zip(*results):
        assert a.shape == b.shape and float(np.abs(a - b).max()) <= ONNX_ATOL
