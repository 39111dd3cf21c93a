"""hub_options.KEYWORDS against transformers 4.57.6's loaders and savers (the signatures
and the keywords their bodies pop, read at run time), as tests/core/test_loader_keywords.py
holds it against 5.x: every keyword has a row, and our counterparts take each at 4.57.6's
default and refuse the refused-when-set ones in one error naming them."""

from __future__ import annotations

import pytest
import transformers

from mini_hf_bert.hub_options import KEYWORDS
from tests.core.test_loader_keywords import (
    check_every_keyword,
    missing_rows,
    saved,  # noqa: F401  (a fixture)
    transformers_loaders,
)


def test_this_is_transformers_4():
    assert transformers.__version__.startswith("4.57")


def test_every_keyword_of_4_57_6_loaders_and_savers_has_a_row():
    assert missing_rows(KEYWORDS, transformers) == []


@pytest.mark.parametrize("loader", list(transformers_loaders(transformers)))
def test_our_counterpart_takes_every_4x_keyword_and_refuses_the_refused_ones_when_set(loader, saved, tmp_path):  # noqa: F811
    check_every_keyword(transformers, loader, saved, tmp_path)
