"""transformers.pipeline("feature-extraction") over our BertModel: the one pipeline of
transformers' that does not take our model as it is (docs/ecosystem.md, docs/conformance.md).

transformers' ``Pipeline._ensure_tensor_on_device`` rebuilds a model output that is not its
own ``ModelOutput`` as a plain dict of its named fields, and the feature-extraction pipeline
then reads ``outputs[0]``: a KeyError. No output type of ours survives both this and
transformers' other pipelines, which read ``outputs["logits"]`` from the same rebuilt value:
a tuple (or list) loses the names, and integer keys in the mapping would also be seen by every
caller that walks ``outputs.items()`` (Trainer's prediction step collects each value, so the
logits would come twice). Deriving from transformers' ``ModelOutput`` would make transformers a
run-time dependency. A model that returns tuples (``return_dict=False``, as transformers' own
TorchScript recipe builds it) passes through unchanged and gives transformers' features.
"""

from __future__ import annotations

import numpy as np
import pytest
import transformers

import mini_hf_bert

TEXT = "Paris is in France."


@pytest.fixture(scope="module")
def tokenizer(minilm_dir):
    return transformers.AutoTokenizer.from_pretrained(minilm_dir)


def test_feature_extraction_over_our_model_with_return_dict_false_equals_transformers(minilm_dir, tokenizer):
    reference = transformers.pipeline("feature-extraction", model=transformers.BertModel.from_pretrained(minilm_dir),
                                      tokenizer=tokenizer)(TEXT)
    ours = mini_hf_bert.BertModel.from_pretrained(minilm_dir, return_dict=False)
    features = transformers.pipeline("feature-extraction", model=ours, tokenizer=tokenizer)(TEXT)
    assert np.asarray(features).shape == np.asarray(reference).shape == (1, 7, 384)
    np.testing.assert_array_equal(np.asarray(features), np.asarray(reference))


def test_feature_extraction_over_our_model_returning_its_output_class_is_a_key_error(minilm_dir, tokenizer):
    """The kept difference itself: fails when transformers stops rebuilding foreign outputs."""
    ours = mini_hf_bert.BertModel.from_pretrained(minilm_dir)
    with pytest.raises(KeyError, match="0"):
        transformers.pipeline("feature-extraction", model=ours, tokenizer=tokenizer)(TEXT)
