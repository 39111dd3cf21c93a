"""hub_options.KEYWORDS against transformers 4.57.6's loaders and savers (the signatures
and the keywords their bodies pop, read at run time), as tests/core/test_loader_keywords.py
holds it against 5.x: every keyword has a row, and our counterparts take each at 4.57.6's
default and refuse the refused-when-set ones in one error naming them."""

from __future__ import annotations

import pytest
import transformers

from mini_hf_bert.hub_options import KEYWORDS, REFUSED_WHEN_SET
from tests.core.test_loader_keywords import (
    OWN_DEFAULTS,
    keywords_and_defaults,
    missing_rows,
    ours,
    saved,  # noqa: F401  (a fixture)
    transformers_loaders,
)


def test_this_is_transformers_4():
    assert transformers.__version__.startswith("4.57")


def test_every_keyword_of_4_57_6_loaders_and_savers_has_a_row():
    assert missing_rows(KEYWORDS, transformers) == []


@pytest.mark.parametrize("loader", list(transformers_loaders(transformers)))
def test_our_counterpart_takes_every_4x_keyword_at_its_default(loader, saved, tmp_path):  # noqa: F811
    call = ours(loader, saved, tmp_path)
    for name, default in keywords_and_defaults(transformers_loaders(transformers)[loader]).items():
        value = OWN_DEFAULTS.get(name, default)
        try:
            call(**{name: value})
        except Exception as e:  # noqa: BLE001 - any refusal of a default is the failure reported
            pytest.fail(f"{loader}: {name}={value!r} (4.57.6's default) is refused: {type(e).__name__}: {e}")
        if KEYWORDS[name][0] == REFUSED_WHEN_SET:
            with pytest.raises(ValueError, match=rf"{name}='set' cannot be honoured here: "):
                call(**{name: "set"})
