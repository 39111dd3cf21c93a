"""The counterparts that only transformers 4.x has (``transformers 4.x: ``Name````
annotations) exist in 4.57.6."""

from __future__ import annotations

import pytest
import transformers

from tools.testing_utils import counterpart_annotations, resolve_transformers_name

FOUR_X = [(q, c) for q, c, v in counterpart_annotations() if v == "4.x"]


def test_some_annotations_are_4x_only():
    assert len(FOUR_X) >= 3  # the mask helpers and get_head_mask at least


@pytest.mark.parametrize("qualified,counterpart", FOUR_X)
def test_named_counterpart_exists_in_transformers_4(qualified, counterpart):
    assert transformers.__version__.startswith("4."), transformers.__version__
    try:
        resolve_transformers_name(counterpart)
    except LookupError as exc:
        pytest.fail(f"{qualified} names transformers 4.x's {counterpart}, missing from {transformers.__version__}: {exc}")
