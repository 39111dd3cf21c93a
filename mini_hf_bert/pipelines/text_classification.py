"""``pipeline("text-classification")`` (alias ``sentiment-analysis``): a label and its probability per text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..modeling_bert import BertForSequenceClassification
from .base import Pipeline, PipelineInputError, _encode_to_fit, _non_empty, is_stream


class TextClassificationPipeline(Pipeline):
    """A label for a text (or a text pair): softmax over the labels (sigmoid for one
    label or multi-label models, nothing for regression), as ``{"label", "score"}``.

    transformers: ``pipelines.text_classification.TextClassificationPipeline``
    """

    task = "text-classification"
    model_classes = (BertForSequenceClassification,)
    _ALL = object()  # top_k not given: transformers' legacy form, one dict per text

    def __call__(self, inputs: str | dict | list, top_k: int | None | object = _ALL,
                 function_to_apply: str | None = None, batch_size: int | None = None) -> list:
        """Args:
            inputs: a text, ``{"text": ..., "text_pair": ...}``, or a list of those.
            top_k: not given: the best label, one dict per input. An int: the ``top_k``
                best, a list of dicts per input. None: every label.
            function_to_apply: ``"softmax"``, ``"sigmoid"`` or ``"none"``; default from the
                config (regression: none; one label or multi-label: sigmoid; else softmax).
        """
        if is_stream(inputs):
            return self._stream(inputs, lambda chunk, size: self(chunk, top_k=top_k, function_to_apply=function_to_apply,
                                                                 batch_size=size), batch_size)
        if top_k is self._ALL:
            top_k = self.defaults.get("top_k", self._ALL)
        legacy = top_k is self._ALL
        if not legacy and top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
            raise ValueError(f"top_k must be a positive int or None, got {top_k!r}")
        function = self._options({"function_to_apply": function_to_apply})["function_to_apply"]
        function = self._default_function() if function is None else str(function).lower()
        if function not in ("softmax", "sigmoid", "none"):
            raise ValueError(f"function_to_apply={function!r}: expected 'softmax', 'sigmoid' or 'none'")
        items, many = self._items(inputs)
        labels = self.model.config.id2label

        def preprocess(item: tuple[str, str | None], index: int) -> list[dict]:
            encoded = _encode_to_fit(self, item[0], item[1], f"inputs[{index}]" if many else "inputs")
            return [dict(encoded)]

        def postprocess(item: Any, outputs: list[dict]) -> Any:
            logits = outputs[0]["logits"][0]  # (L,)
            scores = (logits.softmax(-1) if function == "softmax" else logits.sigmoid() if function == "sigmoid"
                      else logits).tolist()
            if legacy:
                best = max(range(len(scores)), key=scores.__getitem__)
                return {"label": labels[best], "score": scores[best]}
            ranked = sorted(({"label": labels[i], "score": s} for i, s in enumerate(scores)),
                            key=lambda d: d["score"], reverse=True)
            return ranked if top_k is None else ranked[:top_k]

        answers = self._run(items, preprocess, postprocess, batch_size)
        if many:
            return answers
        # transformers' legacy form: one text without top_k -> a list holding its dict.
        return [answers[0]] if legacy and isinstance(inputs, str) else answers[0]

    def _default_function(self) -> str:
        config = self.model.config
        if config.problem_type == "regression":
            return "none"
        if config.problem_type == "multi_label_classification" or config.num_labels == 1:
            return "sigmoid"
        return "softmax"

    def _items(self, inputs: Any) -> tuple[list[tuple[str, str | None]], bool]:
        def one(value: Any, where: str) -> tuple[str, str | None]:
            if isinstance(value, str):
                return _non_empty(value, where), None
            if isinstance(value, Mapping) and "text" in value and set(value) <= {"text", "text_pair"}:
                pair = value.get("text_pair")
                return (_non_empty(value["text"], f"{where}['text']"),
                        None if pair is None else _non_empty(pair, f"{where}['text_pair']"))
            if _legacy_pair(value):  # [[text, pair]]: transformers' old pair form, kept as it keeps it
                return _non_empty(value[0][0], f"{where}[0][0]"), _non_empty(value[0][1], f"{where}[0][1]")
            # [text, pair] reads as a pair to some and as two texts to others (transformers#17305):
            # transformers refuses it, and so do we.
            raise PipelineInputError(f"{where} must be a str or a dict {{'text': ..., 'text_pair': ...}} (for a text "
                                     f"pair, send the dict), got {value!r:.80}")

        if isinstance(inputs, (list, tuple)):
            if not inputs:
                raise PipelineInputError("inputs must be a text, a {'text', 'text_pair'} dict, or a non-empty list of them")
            return [one(v, f"inputs[{i}]") for i, v in enumerate(inputs)], True
        return [one(inputs, "inputs")], False


def _legacy_pair(value: Any) -> bool:
    """``[[text, pair]]``, one list holding a text and its pair."""
    return (isinstance(value, (list, tuple)) and len(value) == 1 and isinstance(value[0], (list, tuple))
            and len(value[0]) == 2)
