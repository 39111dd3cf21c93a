"""What the ported upstream tests share: the library under test, and transformers'
test helpers (``ids_tensor``, ``floats_tensor``, ``random_attention_mask``) re-expressed.

The ports run against mini_hf_bert. ``MINI_HF_BERT_CONFORMANCE=transformers`` runs the very
same ports against transformers 5.x instead, to show that a failure is ours, not the
port's: ``MINI_HF_BERT_CONFORMANCE=transformers .venv/bin/python -m pytest tests/conformance``.
"""

from __future__ import annotations

import os
import random

import torch

if os.environ.get("MINI_HF_BERT_CONFORMANCE", "mini_hf_bert") == "transformers":
    import transformers as library
    import transformers.models.bert.tokenization_bert_legacy as word_tokenization
    import transformers.tokenization_python as character_classes
    from transformers import logging as _logging

    LOGGER_NAME = "transformers"
    _logging.set_verbosity_warning()
    #: transformers 5.x keeps its pure-Python BERT tokenizer as BertTokenizerLegacy.
    PythonBertTokenizer = word_tokenization.BertTokenizerLegacy
else:
    import mini_hf_bert as library
    import mini_hf_bert.tokenization_bert as word_tokenization
    import mini_hf_bert.tokenization_bert as character_classes

    LOGGER_NAME = "mini_hf_bert"
    #: One tokenizer here plays transformers' Python (legacy) and Rust-backed ones alike.
    PythonBertTokenizer = library.BertTokenizer

def transformers_4_api(reason: str):
    """Marks a port of a 4.x test whose API transformers 5.x removed: run against 5.x
    (``MINI_HF_BERT_CONFORMANCE=transformers``) it is skipped with ``reason``; against
    mini_hf_bert, which keeps the 4.x API, it always runs."""
    import unittest

    if library.__name__ == "transformers":
        return unittest.skip(f"transformers 5.x: {reason}")
    return lambda test: test


#: The tests run on the CPU, as transformers' do without an accelerator.
torch_device = "cpu"

#: transformers draws test inputs from one unseeded ``random.Random()``; seeded here, so a
#: failure reproduces (a mechanical change, named in each port's header).
global_rng = random.Random(0)


def ids_tensor(shape, vocab_size, rng=None, name=None):
    """A (shape) long tensor of random ids in [0, vocab_size): transformers' helper."""
    rng = global_rng if rng is None else rng
    count = 1
    for dim in shape:
        count *= dim
    values = [rng.randint(0, vocab_size - 1) for _ in range(count)]
    return torch.tensor(values, dtype=torch.long, device=torch_device).view(shape).contiguous()


def random_attention_mask(shape, rng=None, name=None):
    """Random 0/1 mask with the first position always attended: transformers' helper."""
    mask = ids_tensor(shape, vocab_size=2, rng=rng)
    mask[:, 0] = 1
    return mask


def floats_tensor(shape, scale=1.0, rng=None, name=None):
    """A (shape) float32 tensor of uniform values in [0, scale): transformers' helper."""
    rng = global_rng if rng is None else rng
    count = 1
    for dim in shape:
        count *= dim
    values = [rng.random() * scale for _ in range(count)]
    return torch.tensor(values, dtype=torch.float, device=torch_device).view(shape).contiguous()
