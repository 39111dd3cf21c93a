"""shap over our text-classification pipeline, against shap over transformers' own pipeline
on the same weights: the recipe of docs/ecosystem.md (shap recognises pipelines and
tokenizers by transformers' class names, so ours are named to it: its TransformersPipeline
wrapper and its Text masker), and what shap does without it."""

from __future__ import annotations

import numpy as np
import pytest
import shap
import torch
import transformers

import mini_hf_bert

#: Shapley values of the same model through two pipelines: each evaluation's logits agree
#: within float32 noise (~1e-7); their sums over coalitions keep that order.
SHAPLEY_ATOL = 1e-6


@pytest.fixture(scope="module")
def pipelines(minilm_dir):
    torch.manual_seed(0)
    model = mini_hf_bert.BertForSequenceClassification.from_pretrained(minilm_dir, num_labels=2).eval()
    theirs = transformers.BertForSequenceClassification.from_pretrained(minilm_dir, num_labels=2).eval()
    theirs.load_state_dict(model.state_dict())
    ours = mini_hf_bert.pipeline("text-classification", model=model,
                                 tokenizer=mini_hf_bert.BertTokenizer.from_pretrained(minilm_dir), top_k=None)
    return ours, transformers.pipeline("text-classification", model=theirs,
                                       tokenizer=transformers.BertTokenizer.from_pretrained(minilm_dir), top_k=None)


def test_the_recipe_gives_transformers_shapley_values(pipelines):
    ours, theirs = pipelines
    texts = ["a great and moving film", "dull, far too long", "北京是中国的首都。"]
    explained = shap.Explainer(shap.models.TransformersPipeline(ours), shap.maskers.Text(ours.tokenizer))(texts)
    reference = shap.Explainer(theirs)(texts)
    for a, b in zip(explained, reference):
        assert list(a.data) == list(b.data)
        assert np.abs(a.values - b.values).max() < SHAPLEY_ATOL


def test_without_the_recipe_shap_does_not_know_the_pipeline(pipelines):
    """Why it is a recipe: shap builds a masker only for transformers' own classes."""
    ours, _ = pipelines
    with pytest.raises(ValueError, match="masker cannot be None"):
        shap.Explainer(ours)(["a great film"])


def test_shap_s_own_path_takes_transformers_pipeline_over_our_model(pipelines, minilm_dir):
    """The other way in: transformers' pipeline holding our model is a transformers Pipeline,
    so shap wraps it and builds its masker itself, and the values are those of transformers'
    own model."""
    ours, theirs = pipelines
    over_ours = transformers.pipeline("text-classification", model=ours.model,
                                      tokenizer=transformers.BertTokenizer.from_pretrained(minilm_dir), top_k=None)
    texts = ["a great film"]
    explained, reference = shap.Explainer(over_ours)(texts), shap.Explainer(theirs)(texts)
    assert list(explained[0].data) == list(reference[0].data)
    assert np.abs(explained[0].values - reference[0].values).max() < SHAPLEY_ATOL


def test_our_tokenizer_as_the_masker_is_taken_for_data(pipelines):
    """What the recipe avoids (docs/ecosystem.md): shap turns a tokenizer into its Text masker
    only when it is transformers' class; ours it takes for a data array, and fails on it."""
    ours, _ = pipelines
    with pytest.raises(AttributeError, match="'str' object has no attribute 'shape'"):
        shap.Explainer(ours, ours.tokenizer)(["a great film"])
