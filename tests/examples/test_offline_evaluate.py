"""The offline metrics the ported example scripts score with (offline_evaluate.py), on
cases worked by hand: what evaluate's modules of those names would return."""

from __future__ import annotations

import pytest

from . import offline_evaluate


def test_squad_normalises_answers_and_scores_token_overlap():
    metric = offline_evaluate.load("squad")
    references = [{"id": "1", "answers": {"text": ["paris"], "answer_start": [0]}},
                  {"id": "2", "answers": {"text": ["in rome"], "answer_start": [0]}}]
    predictions = [{"id": "1", "prediction_text": "The Paris!"},  # articles and punctuation dropped: exact
                   {"id": "2", "prediction_text": "rome and paris"}]  # 1 of 3 tokens, 1 of 2: F1 0.4
    assert metric.compute(predictions=predictions, references=references) == pytest.approx(
        {"exact_match": 50.0, "f1": 70.0})


def test_seqeval_scores_whole_entities():
    metric = offline_evaluate.load("seqeval")
    truth = [["O", "O", "O", "B-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    guess = [["O", "O", "B-MISC", "I-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    scores = metric.compute(predictions=guess, references=truth)  # PER right, MISC one token too long
    assert scores["overall_precision"] == scores["overall_recall"] == scores["overall_f1"] == pytest.approx(0.5)
    assert scores["overall_accuracy"] == pytest.approx(0.8)  # 8 of 10 tags
    assert scores["PER"]["f1"] == pytest.approx(1.0) and scores["MISC"]["number"] == 1


def test_glue_and_accuracy_gather_batches():
    metric = offline_evaluate.load("glue", "mrpc")
    metric.add_batch(predictions=[1, 0], references=[1, 1])
    metric.add_batch(predictions=[1, 1], references=[1, 0])
    assert metric.compute() == pytest.approx({"accuracy": 0.5, "f1": 2 / 3})  # TP 2, FP 1, FN 1
    assert offline_evaluate.load("glue", "stsb").compute(predictions=[1.0, 2.0, 3.0], references=[2.0, 4.0, 6.0]) \
        == pytest.approx({"pearson": 1.0, "spearmanr": 1.0})


def test_a_metric_it_does_not_have_is_named():
    with pytest.raises(ValueError, match="offline_evaluate has no metric 'bleu'"):
        offline_evaluate.load("bleu")
    with pytest.raises(ValueError, match="glue: config_name 'sts'"):
        offline_evaluate.load("glue", "sts")
