"""The dtype a model is built and loaded in, against transformers 5.x: ``from_pretrained``
with no dtype keeps the checkpoint's (5.x's default ``"auto"``), and ``from_config`` /
``_from_config`` take ``dtype=`` (default ``config.dtype``)."""

from __future__ import annotations

import json

import pytest
import torch
import transformers

import mini_hf_bert

from ..conftest import small_config_kwargs


def _transformers_checkpoint(tmp_path, dtype: torch.dtype, record_dtype: bool = True) -> str:
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(transformers.BertConfig(**small_config_kwargs("tiny"))).to(dtype)
    directory = tmp_path / f"{dtype}-{record_dtype}"
    model.save_pretrained(directory)
    if not record_dtype:  # a config.json that names no dtype: the weights' own decides
        path = directory / "config.json"
        config = json.loads(path.read_text())
        config.pop("dtype", None)
        config.pop("torch_dtype", None)
        path.write_text(json.dumps(config))
    return str(directory)


@pytest.mark.parametrize("record_dtype", [True, False], ids=["config-records-dtype", "weights-only"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_from_pretrained_keeps_the_checkpoint_dtype_as_transformers(tmp_path, dtype, record_dtype):
    path = _transformers_checkpoint(tmp_path, dtype, record_dtype)
    for given in ({}, {"dtype": "auto"}, {"dtype": torch.float32}, {"torch_dtype": "bfloat16"}):
        theirs = transformers.BertForSequenceClassification.from_pretrained(path, **given)
        ours = mini_hf_bert.BertForSequenceClassification.from_pretrained(path, **given)
        assert ours.dtype == theirs.dtype, given
        assert {p.dtype for p in ours.parameters()} == {ours.dtype}
        assert ours.config.dtype == theirs.config.dtype, given
    assert mini_hf_bert.AutoModel.from_pretrained(path).dtype == transformers.AutoModel.from_pretrained(path).dtype


@pytest.mark.parametrize("dtype", [None, torch.bfloat16, "float16"])
def test_from_config_takes_a_dtype_as_transformers(dtype):
    given = {} if dtype is None else {"dtype": dtype}
    ours = mini_hf_bert.AutoModelForSequenceClassification.from_config(
        mini_hf_bert.BertConfig(**small_config_kwargs("tiny")), **given)
    theirs = transformers.AutoModelForSequenceClassification.from_config(
        transformers.BertConfig(**small_config_kwargs("tiny")), **given)
    assert ours.dtype == theirs.dtype and {p.dtype for p in ours.parameters()} == {ours.dtype}
    assert ours.config.dtype == theirs.config.dtype
    model = mini_hf_bert.AutoModel.from_config(mini_hf_bert.BertConfig(**small_config_kwargs("tiny")),
                                               add_pooling_layer=False, attn_implementation="eager", **given)
    assert model.pooler is None and model.config.attn_implementation == "eager"


def test_from_config_uses_the_config_dtype_as_transformers():
    ours = mini_hf_bert.BertModel._from_config(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"), dtype="bfloat16"))
    theirs = transformers.BertModel._from_config(transformers.BertConfig(**small_config_kwargs("tiny"), dtype="bfloat16"))
    assert ours.dtype == theirs.dtype == torch.bfloat16


def test_from_config_refuses_what_it_cannot_take():
    config = mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))
    with pytest.raises(ValueError, match="dtype='int8' is not a floating torch dtype"):
        mini_hf_bert.AutoModel.from_config(config, dtype="int8")
    with pytest.raises(TypeError, match="add_poolin_layer"):
        mini_hf_bert.AutoModel.from_config(config, add_poolin_layer=False)
