"""bertviz's head view and model view of our model's attentions: the same page as of
transformers' own model, on the packaged all-MiniLM-L6-v2 and a sentence pair (every
number it embeds equal within FP32_ATOL; bertviz names its page with a random id, fixed here)."""

from __future__ import annotations

import re
import uuid
from unittest import mock

import pytest
import torch
import transformers
from bertviz import head_view, model_view

import mini_hf_bert
from mini_hf_bert.parity.compare import FP32_ATOL

NUMBER = re.compile(r"-?\d+\.\d+(?:e-?\d+)?")


def _numbers_and_text(html: str) -> tuple[list[float], str]:
    """The page's decimal numbers, and the page with each replaced by a mark."""
    return [float(n) for n in NUMBER.findall(html)], NUMBER.sub("#", html)


@pytest.mark.parametrize("view", ["head_view", "model_view"])
def test_views_of_our_attentions_equal_transformers(minilm_dir, view):
    tokenizer = mini_hf_bert.BertTokenizer.from_pretrained(minilm_dir)
    encoded = tokenizer("The cat sat on the mat.", "It was tired.", return_tensors="pt")
    tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"][0])
    second = int(encoded["token_type_ids"][0].argmax())
    pages = []
    for model in (mini_hf_bert.BertModel.from_pretrained(minilm_dir, attn_implementation="eager"),
                  transformers.BertModel.from_pretrained(minilm_dir, attn_implementation="eager")):
        with torch.no_grad():
            attentions = model(**encoded, output_attentions=True).attentions
        with mock.patch("uuid.uuid4", return_value=uuid.UUID(int=7)):
            show = head_view if view == "head_view" else model_view
            pages.append(show(attentions, tokens, sentence_b_start=second, html_action="return").data)
    (ours, our_text), (theirs, their_text) = (_numbers_and_text(page) for page in pages)
    assert our_text == their_text and "[CLS]" in our_text and len(ours) == len(theirs) > 1000
    assert max(abs(a - b) for a, b in zip(ours, theirs)) < FP32_ATOL
