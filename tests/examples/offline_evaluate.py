"""``evaluate.load`` for the metrics transformers' example scripts name, computed here
without the hub (``evaluate`` fetches each metric's code from it).

Each metric returns what evaluate's module of that name returns, the same keys and the same
definitions, from the libraries those modules call: scikit-learn (accuracy, F1, MSE,
Matthews), SciPy (Pearson, Spearman), seqeval (entity-level NER scores). SQuAD's exact
match and F1 follow the official v1.1 evaluation script's definition (no library ships it).
A metric not listed is refused by name rather than guessed.
"""

from __future__ import annotations

import collections
import re
import string

import numpy as np

GLUE_TASKS = ("sst2", "mnli", "mnli_mismatched", "mnli_matched", "cola", "stsb", "mrpc", "qqp", "qnli", "rte", "wnli",
              "hans")


def _accuracy(predictions, references) -> dict:
    from sklearn.metrics import accuracy_score

    return {"accuracy": float(accuracy_score(references, predictions))}


def _mse(predictions, references) -> dict:
    from sklearn.metrics import mean_squared_error

    return {"mse": float(mean_squared_error(references, predictions))}


def _glue(task: str):
    def compute(predictions, references) -> dict:
        from sklearn.metrics import f1_score, matthews_corrcoef

        predictions, references = np.asarray(predictions), np.asarray(references)
        if task == "cola":
            return {"matthews_correlation": float(matthews_corrcoef(references, predictions))}
        if task == "stsb":
            from scipy.stats import pearsonr, spearmanr

            return {"pearson": float(pearsonr(predictions, references)[0]),
                    "spearmanr": float(spearmanr(predictions, references)[0])}
        accuracy = float((predictions == references).mean())
        if task in ("mrpc", "qqp"):
            return {"accuracy": accuracy, "f1": float(f1_score(y_true=references, y_pred=predictions))}
        return {"accuracy": accuracy}

    return compute


def _seqeval(predictions, references) -> dict:
    from seqeval.metrics import accuracy_score, classification_report

    report = classification_report(y_true=references, y_pred=predictions, output_dict=True)
    report.pop("macro avg")
    report.pop("weighted avg")
    overall = report.pop("micro avg")
    scores = {kind: {"precision": values["precision"], "recall": values["recall"], "f1": values["f1-score"],
                     "number": values["support"]} for kind, values in report.items()}
    scores.update(overall_precision=overall["precision"], overall_recall=overall["recall"],
                  overall_f1=overall["f1-score"], overall_accuracy=accuracy_score(y_true=references, y_pred=predictions))
    return scores


def _normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def _token_f1(prediction: str, truth: str) -> float:
    predicted, true = _normalize_answer(prediction).split(), _normalize_answer(truth).split()
    common = sum((collections.Counter(predicted) & collections.Counter(true)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(true)
    return 2 * precision * recall / (precision + recall)


def _squad(predictions, references) -> dict:
    answers = {reference["id"]: reference["answers"]["text"] for reference in references}
    exact = f1 = 0.0
    for prediction in predictions:
        truths = answers[prediction["id"]]
        exact += max(float(_normalize_answer(prediction["prediction_text"]) == _normalize_answer(t)) for t in truths)
        f1 += max(_token_f1(prediction["prediction_text"], t) for t in truths)
    return {"exact_match": 100.0 * exact / len(predictions), "f1": 100.0 * f1 / len(predictions)}


class Metric:
    """What ``evaluate.load`` returns, as far as the scripts use it: ``add_batch`` gathers,
    ``compute`` scores what was gathered or what it is given."""

    def __init__(self, name: str, compute) -> None:
        self.name, self._compute = name, compute
        self._predictions: list = []
        self._references: list = []

    def add_batch(self, *, predictions, references) -> None:
        self._predictions.extend(np.asarray(predictions).tolist() if hasattr(predictions, "shape") else predictions)
        self._references.extend(np.asarray(references).tolist() if hasattr(references, "shape") else references)

    def compute(self, *, predictions=None, references=None) -> dict:
        if predictions is None:
            predictions, references = self._predictions, self._references
            self._predictions, self._references = [], []
        return self._compute(predictions, references)


def load(path: str, config_name: str | None = None, cache_dir: str | None = None) -> Metric:
    """``evaluate.load(path, config_name)`` for accuracy, mse, glue, seqeval and squad."""
    del cache_dir  # nothing is downloaded
    if path == "glue":
        if config_name not in GLUE_TASKS:
            raise ValueError(f"glue: config_name {config_name!r} is not one of {', '.join(GLUE_TASKS)}")
        return Metric(f"glue/{config_name}", _glue(config_name))
    metrics = {"accuracy": _accuracy, "mse": _mse, "seqeval": _seqeval, "squad": _squad}
    if path not in metrics:
        raise ValueError(f"offline_evaluate has no metric {path!r}: it computes {', '.join(metrics)} and glue")
    return Metric(path, metrics[path])
