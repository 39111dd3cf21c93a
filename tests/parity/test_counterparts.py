"""Annotations that cannot rot: every class and function of the modules that mirror
transformers' files names its transformers counterpart, and that counterpart exists in
the installed transformers 5.x (``tests_transformers4/test_counterparts_4x.py`` checks
the ones only 4.x has, against 4.57.6)."""

from __future__ import annotations

import pytest
import transformers

from tools.testing_utils import counterpart_annotations, resolve_transformers_name

ANNOTATIONS = counterpart_annotations()


def test_the_walk_covers_the_model_file():
    names = {qualified.rsplit(".", 1)[1] for qualified, _, _ in ANNOTATIONS}
    # The classes the project exists to mirror, and the helpers the model file calls.
    for expected in ("BertEmbeddings", "BertSelfAttention", "BertModel", "BertForQuestionAnswering",
                     "GELUActivation", "get_extended_attention_mask", "apply_chunking_to_forward",
                     "PreTrainedModel", "BertConfig", "BertTokenizer", "MaskedLMOutput"):
        assert expected in names


@pytest.mark.parametrize("qualified", [q for q, _, _ in ANNOTATIONS])
def test_every_mirrored_object_names_its_counterpart(qualified):
    counterpart = {q: c for q, c, _ in ANNOTATIONS}[qualified]
    assert counterpart is not None, (
        f"{qualified}'s docstring has no 'transformers: ``Name``' (or 'transformers 4.x: ``Name``', "
        f"or 'transformers: none') line"
    )


@pytest.mark.parametrize(
    "qualified,counterpart", [(q, c) for q, c, v in ANNOTATIONS if v == "5"]
)
def test_named_counterpart_exists_in_transformers_5(qualified, counterpart):
    assert transformers.__version__.startswith("5."), transformers.__version__
    try:
        resolve_transformers_name(counterpart)
    except LookupError as exc:
        pytest.fail(f"{qualified} names transformers' {counterpart}, which transformers "
                    f"{transformers.__version__} does not have: {exc}")


def test_resolver_refuses_what_does_not_exist():
    with pytest.raises(LookupError):
        resolve_transformers_name("BertSelfAttentionThatNeverWas")
    with pytest.raises(LookupError):
        resolve_transformers_name("activations.NoSuchActivation")
