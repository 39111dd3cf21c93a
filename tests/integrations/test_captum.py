"""captum's attributions on our models, against the same on transformers' own: layer
conductance through one BertLayer (captum hooks the layer and needs its output as tensors)
and integrated gradients through the word embeddings, on a sequence classifier."""

from __future__ import annotations

import pytest
import torch
import transformers
from captum.attr import LayerConductance, LayerIntegratedGradients

import mini_hf_bert
from mini_hf_bert.parity.compare import FP32_ATOL

from ..conftest import small_config_kwargs


def _models():
    torch.manual_seed(0)
    theirs = transformers.BertForSequenceClassification(transformers.BertConfig(**small_config_kwargs("tiny"))).eval()
    ours = mini_hf_bert.BertForSequenceClassification(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))).eval()
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


IDS = torch.tensor([[2, 15, 27, 33, 41, 60, 3]])
BASELINE = torch.tensor([[2, 0, 0, 0, 0, 0, 3]])


@pytest.mark.parametrize("layer", [0, 1])
def test_layer_conductance_equals_transformers(layer):
    attributions = []
    for model in _models():
        embed = model.bert.embeddings.word_embeddings
        conductance = LayerConductance(lambda embeds, m=model: m(inputs_embeds=embeds).logits[:, 1],
                                       model.bert.encoder.layer[layer])
        result = conductance.attribute(embed(IDS), baselines=embed(BASELINE), n_steps=16)
        attributions.append(result[0] if isinstance(result, tuple) else result)
    assert attributions[0].shape == (1, 7, attributions[0].shape[-1])
    assert (attributions[0] - attributions[1]).abs().max() < FP32_ATOL


def test_layer_integrated_gradients_equal_transformers():
    attributions = []
    for model in _models():
        gradients = LayerIntegratedGradients(lambda ids, m=model: m(ids).logits[:, 1], model.bert.embeddings)
        result, delta = gradients.attribute(IDS, baselines=BASELINE, n_steps=16, return_convergence_delta=True)
        attributions.append(result)
    assert (attributions[0] - attributions[1]).abs().max() < FP32_ATOL
