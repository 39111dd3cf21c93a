"""Structure: every mirrored class has transformers' state_dict keys and shapes, the
signatures transformers users call, HF's weight initialisation, and its annotation."""

from __future__ import annotations

import inspect
import re

import pytest
import torch
import transformers
from transformers.models.bert import modeling_bert as hf_modeling

import mini_hf_bert
from mini_hf_bert import modeling_bert

from ..conftest import SMALL_CONFIGS, small_config_kwargs

MIRRORED = [
    "BertEmbeddings", "BertSelfAttention", "BertSelfOutput", "BertAttention", "BertIntermediate",
    "BertOutput", "BertLayer", "BertEncoder", "BertPooler", "BertModel",
]


def _shapes(module: torch.nn.Module) -> dict[str, tuple[int, ...]]:
    return {k: tuple(v.shape) for k, v in module.state_dict().items()}


@pytest.mark.parametrize("config_name", sorted(SMALL_CONFIGS))
@pytest.mark.parametrize("class_name", MIRRORED)
def test_state_dict_keys_and_shapes_equal_transformers(class_name, config_name):
    kwargs = small_config_kwargs(config_name)
    ours = getattr(modeling_bert, class_name)(mini_hf_bert.BertConfig(**kwargs))
    theirs = getattr(hf_modeling, class_name)(transformers.BertConfig(**kwargs))
    assert _shapes(ours) == _shapes(theirs)
    # Same submodule tree too (buffers and parameters aside): module names are the checkpoint's scopes.
    ours_modules = {n for n, _ in ours.named_modules()}
    theirs_modules = {n for n, _ in theirs.named_modules()}
    assert ours_modules == theirs_modules


def test_bert_model_without_pooler_has_transformers_keys():
    kwargs = small_config_kwargs("tiny")
    ours = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**kwargs), add_pooling_layer=False)
    theirs = transformers.BertModel(transformers.BertConfig(**kwargs), add_pooling_layer=False)
    assert _shapes(ours) == _shapes(theirs)


def test_bert_base_parameter_count_is_the_published_one():
    # bert-base-uncased: 109,482,240 parameters (embeddings 23.8M + 12 layers 85.0M + pooler 0.6M).
    model = mini_hf_bert.BertModel(mini_hf_bert.BertConfig())
    assert model.num_parameters() == transformers.BertModel(transformers.BertConfig()).num_parameters() == 109_482_240


def test_forward_signatures_use_transformers_names():
    ours = inspect.signature(mini_hf_bert.BertModel.forward).parameters
    theirs = inspect.signature(transformers.BertModel.forward).parameters
    assert list(ours)[:5] == list(theirs)[:5] == ["self", "input_ids", "attention_mask", "token_type_ids", "position_ids"]
    for name in ("inputs_embeds",):
        assert name in ours and name in theirs
    # 5.x's parameters, in its order, and like 5.x the output switches by keyword (**kwargs)
    assert list(ours)[:-1] == list(theirs)[:-1]
    assert list(ours.values())[-1].kind == list(theirs.values())[-1].kind == inspect.Parameter.VAR_KEYWORD
    from mini_hf_bert.pytorch_utils import keyword_names

    assert {"output_attentions", "output_hidden_states", "return_dict"} <= keyword_names(mini_hf_bert.BertModel.forward)
    for cls_name in ("BertSelfOutput", "BertOutput"):
        a = inspect.signature(getattr(modeling_bert, cls_name).forward).parameters
        b = inspect.signature(getattr(hf_modeling, cls_name).forward).parameters
        assert list(a) == list(b)
    emb_ours = inspect.signature(modeling_bert.BertEmbeddings.forward).parameters
    emb_theirs = inspect.signature(hf_modeling.BertEmbeddings.forward).parameters
    assert list(emb_ours) == list(emb_theirs)


@pytest.mark.parametrize("class_name", MIRRORED + ["BertPreTrainedModel"])
def test_every_class_is_annotated(class_name):
    """Each class names its transformers counterpart; each module class also its TF scope
    and the shapes it maps between."""
    doc = inspect.getdoc(getattr(modeling_bert, class_name))
    assert doc and "\ntransformers: ``" + class_name + "``" in doc
    # One line for the TF scope: a variable scope of Google's checkpoints, or "none".
    scope = re.search(r"^Google TF: (``(bert|cls)[\w/{}]*``|none)", doc, re.M)
    assert scope, doc
    if class_name != "BertPreTrainedModel":  # the shapes, wherever the explanation puts them
        assert re.search(r"^.*\S -> \S.*$", doc.split("\ntransformers: ")[0], re.M), doc


def _within_sampling_error(sample: torch.Tensor, std: float) -> bool:
    """Mean and std of n draws from N(0, std) lie within 6 standard errors of 0 and std
    (standard errors std/sqrt(n) and std/sqrt(2n)); false alarm odds ~1e-9."""
    n = sample.numel()
    return abs(sample.mean().item()) < 6 * std / n**0.5 and abs(sample.std().item() - std) < 6 * std / (2 * n) ** 0.5


def test_weight_initialisation_follows_transformers():
    config = mini_hf_bert.BertConfig(pad_token_id=5, initializer_range=0.05)
    torch.manual_seed(0)
    model = mini_hf_bert.BertModel(config)
    emb = model.embeddings.word_embeddings.weight
    assert torch.count_nonzero(emb[5]) == 0  # the padding row
    assert _within_sampling_error(torch.cat([emb[:5], emb[6:]]), 0.05)
    q = model.encoder.layer[0].attention.self.query
    assert _within_sampling_error(q.weight, 0.05) and torch.count_nonzero(q.bias) == 0
    assert not _within_sampling_error(q.weight, 0.02)  # the check can fail
    ln = model.encoder.layer[3].output.LayerNorm
    assert torch.equal(ln.weight, torch.ones_like(ln.weight)) and torch.count_nonzero(ln.bias) == 0


def test_model_is_in_train_mode_when_built_and_dropout_acts():
    config = mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))
    model = mini_hf_bert.BertModel(config)
    assert model.training
    ids = torch.randint(0, config.vocab_size, (2, 8))
    torch.manual_seed(0)
    a = model(ids).last_hidden_state
    b = model(ids).last_hidden_state
    assert not torch.equal(a, b)  # dropout on in train mode
    model.eval()
    assert torch.equal(model(ids).last_hidden_state, model(ids).last_hidden_state)


def test_unknown_attention_implementation_is_rejected():
    expected = """Specified `attn_implementation="flash"` is not supported; choose one of ['eager', 'fast', 'sdpa']"""
    with pytest.raises(ValueError, match=re.escape(expected)):
        mini_hf_bert.BertModel(mini_hf_bert.BertConfig(attn_implementation="flash", **small_config_kwargs("tiny")))
