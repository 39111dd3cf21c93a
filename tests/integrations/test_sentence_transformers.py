"""sentence-transformers on our encoder: all-MiniLM-L6-v2 (a real sentence-transformers
checkpoint) with its BertModel swapped for ours encodes as the original does, and trains
under SentenceTransformerTrainer (which failed before: ``BertConfig.get_text_config``) with
the loss curve of the original; the trained model saves and reloads in
sentence-transformers, and its encoder in both libraries."""

from __future__ import annotations

import pytest
import torch
import transformers
from datasets import Dataset
from sentence_transformers import (
    SentenceTransformer,
    SentenceTransformerTrainer,
    SentenceTransformerTrainingArguments,
    losses,
)

import mini_hf_bert
from mini_hf_bert.parity.compare import FP32_ATOL

TEXTS = ["A man is eating food.", "一个人在吃东西。", "The weather is lovely today."]
PAIRS = {"anchor": ["a cat sat on the mat", "the sun is out", "it rains today", "a big dog barks"] * 3,
         "positive": ["a kitten sat on a rug", "sunshine all day", "wet weather", "a large dog is barking"] * 3}


def _sentence_model(minilm_dir, ours: bool) -> SentenceTransformer:
    model = SentenceTransformer(minilm_dir, device="cpu")
    if ours:  # the one line a user changes
        model[0].model = mini_hf_bert.BertModel.from_pretrained(minilm_dir)
    return model


def _train(model, output_dir) -> list[float]:
    args = SentenceTransformerTrainingArguments(str(output_dir), max_steps=3, per_device_train_batch_size=4,
                                                learning_rate=1e-4, report_to=[], use_cpu=True, logging_steps=1,
                                                save_strategy="no", disable_tqdm=True, seed=5)
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=Dataset.from_dict(PAIRS),
                                         loss=losses.MultipleNegativesRankingLoss(model))
    trainer.train()
    return [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]


def test_encode_and_train_equal_the_original_and_the_result_reloads(minilm_dir, tmp_path):
    original, ours = _sentence_model(minilm_dir, False), _sentence_model(minilm_dir, True)
    assert type(ours[0].model) is mini_hf_bert.BertModel
    assert torch.allclose(ours.encode(TEXTS, convert_to_tensor=True), original.encode(TEXTS, convert_to_tensor=True),
                          atol=FP32_ATOL)

    trained_losses = _train(ours, tmp_path / "ours")
    assert len(trained_losses) == 3
    assert trained_losses == pytest.approx(_train(original, tmp_path / "original"), abs=FP32_ATOL)
    after = ours.encode(TEXTS, convert_to_tensor=True)
    assert torch.allclose(after, original.encode(TEXTS, convert_to_tensor=True), atol=FP32_ATOL)

    ours.save(str(tmp_path / "saved"))
    reloaded = SentenceTransformer(str(tmp_path / "saved"), device="cpu")  # transformers' BertModel inside
    assert torch.allclose(reloaded.encode(TEXTS, convert_to_tensor=True), after, atol=FP32_ATOL)
    ids = {k: v for k, v in ours.tokenize(TEXTS).items() if k in ("input_ids", "attention_mask", "token_type_ids")}
    with torch.no_grad():
        a = mini_hf_bert.BertModel.from_pretrained(tmp_path / "saved")(**ids).last_hidden_state
        b = transformers.BertModel.from_pretrained(tmp_path / "saved")(**ids).last_hidden_state
    assert torch.allclose(a, b, atol=FP32_ATOL)
