"""Fixtures the training tests share."""

from __future__ import annotations

import os

import pytest

from mini_hf_bert.checkpoints.convert import convert
from ..paths import FIXTURES

GOOGLE_DIR = os.path.join(FIXTURES, "tf", "bert_pretraining")


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory) -> str:
    """Google's checkpoint format (the TF fixture), converted: any form the loader reads works."""
    directory = tmp_path_factory.mktemp("google") / "hf"
    convert(GOOGLE_DIR, directory, progress=False)
    return str(directory)
