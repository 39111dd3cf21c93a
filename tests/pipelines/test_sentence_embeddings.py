"""``encode_sentences``: sentence-transformers' all-MiniLM-L6-v2 recipe (Transformer ->
mean Pooling -> Normalize, truncated at max_seq_length), checked against that recipe
written out on transformers' own BertModel."""

from __future__ import annotations

import pytest
import torch
import transformers

from mini_hf_bert import BertModel, BertTokenizer
from mini_hf_bert.parity.compare import FP32_ATOL
from mini_hf_bert.pipelines.sentence_embeddings import encode_sentences, sentence_max_length

TEXTS = ["A man is playing a guitar.", "Someone is strumming a guitar on stage.", "北京是中国的首都。",
         "The new movie is awesome.", "word " * 400]  # the last one is longer than max_seq_length


def _reference(path: str, texts: list[str], max_length: int) -> torch.Tensor:
    """The model card's code: mean of token embeddings weighted by the mask, then F.normalize."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModel.from_pretrained(path).eval()
    batch = tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    with torch.no_grad():
        token_embeddings = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).expand(token_embeddings.size()).float()
    pooled = torch.sum(token_embeddings * mask, 1) / torch.clamp(mask.sum(1), min=1e-9)
    return torch.nn.functional.normalize(pooled, p=2, dim=1)


@pytest.fixture(scope="module")
def ours(minilm_dir):
    return BertModel.from_pretrained(minilm_dir), BertTokenizer.from_pretrained(minilm_dir)


def test_equals_the_sentence_transformers_recipe(ours, minilm_dir):
    model, tokenizer = ours
    max_length = sentence_max_length(minilm_dir)
    assert max_length == 256
    embeddings = encode_sentences(model, tokenizer, TEXTS, max_length=max_length)
    reference = _reference(minilm_dir, TEXTS, max_length)
    assert embeddings.shape == (len(TEXTS), 384)
    assert (embeddings - reference).abs().max().item() <= FP32_ATOL
    assert torch.allclose(embeddings.norm(dim=1), torch.ones(len(TEXTS)), atol=1e-6)
    # The guitar sentences are each other's nearest neighbours.
    sims = embeddings @ embeddings.T
    assert sims[0, 1] > 0.5 > sims[0, 3]


def test_batching_and_normalize_change_nothing_but_what_they_should(ours):
    model, tokenizer = ours
    whole = encode_sentences(model, tokenizer, TEXTS[:4], batch_size=32)
    one_by_one = encode_sentences(model, tokenizer, TEXTS[:4], batch_size=1)
    assert (whole - one_by_one).abs().max().item() <= FP32_ATOL  # padding does not leak into the mean
    raw = encode_sentences(model, tokenizer, TEXTS[:4], normalize=False)
    assert not torch.allclose(raw.norm(dim=1), torch.ones(4), atol=1e-3)
    assert torch.allclose(torch.nn.functional.normalize(raw, dim=1), whole, atol=FP32_ATOL)
    assert encode_sentences(model, tokenizer, []).shape == (0, 384)


@pytest.mark.parametrize("texts,batch_size,error,message", [
    ("one text", 32, TypeError, "texts must be a list of str, got str"),
    (["ok", 3], 32, TypeError, r"texts\[1\] must be a str, got int"),
    (["ok"], 0, ValueError, "batch_size must be a positive int, got 0"),
])
def test_bad_arguments(ours, texts, batch_size, error, message):
    model, tokenizer = ours
    with pytest.raises(error, match=message):
        encode_sentences(model, tokenizer, texts, batch_size=batch_size)
