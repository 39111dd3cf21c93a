"""``pipeline("feature-extraction")``: the encoder's last hidden states, one (T, H) list per text."""

from __future__ import annotations

from typing import Any

from ..modeling_bert import BertModel
from .base import Pipeline, _check_fits, _encode_to_fit, is_stream


class FeatureExtractionPipeline(Pipeline):
    """Text -> the model's first output per token: ``last_hidden_state`` as nested lists
    of shape (1, T, H) (T counts [CLS] and [SEP]; with ``batch_size`` > 1, padding too).

    transformers: ``pipelines.feature_extraction.FeatureExtractionPipeline``
    """

    task = "feature-extraction"
    model_classes = (BertModel,)

    def __call__(self, inputs: str | list[str], truncation: bool | None = None, return_tensors: bool | None = None,
                 batch_size: int | None = None) -> Any:
        """Args:
            inputs: a text or a list of texts.
            truncation: cut texts longer than the model takes (default: no, as transformers).
            return_tensors: a (1, T, H) tensor per text instead of nested lists.
        """
        if is_stream(inputs):
            return self._stream(inputs, lambda chunk, size: self(chunk, truncation=truncation,
                                                                 return_tensors=return_tensors, batch_size=size),
                                batch_size)
        options = self._options({"truncation": truncation, "return_tensors": return_tensors})
        texts, many = self._texts(inputs)

        def preprocess(text: str, index: int) -> list[dict]:
            where = f"inputs[{index}]" if many else "inputs"
            if options["truncation"]:
                encoded = self.tokenizer(text, truncation=True, return_tensors="pt")
                _check_fits(self.model, encoded["input_ids"], where)
            else:
                encoded = _encode_to_fit(self, text, None, where)
            return [dict(encoded)]

        def postprocess(text: str, outputs: list[dict]) -> Any:
            hidden = outputs[0]["last_hidden_state"]  # (1, T, H)
            return hidden if options["return_tensors"] else hidden.tolist()

        answers = self._run(texts, preprocess, postprocess, batch_size)
        return answers if many else answers[0]
