"""``pipeline("fill-mask")``: the most likely tokens for each [MASK] of a text."""

from __future__ import annotations

import logging

import torch

from ..modeling_bert import BertForMaskedLM
from .base import Pipeline, PipelineException, PipelineInputError, _encode_to_fit, is_stream

logger = logging.getLogger(__name__)


class FillMaskPipeline(Pipeline):
    """The most likely tokens at each ``[MASK]``: for each, ``top_k`` dicts
    ``{"score", "token", "token_str", "sequence"}``, score = softmax(logits at the mask).

    transformers: ``pipelines.fill_mask.FillMaskPipeline``
    """

    task = "fill-mask"
    model_classes = (BertForMaskedLM,)

    def __call__(self, inputs: str | list[str], top_k: int | None = None, targets: str | list[str] | None = None,
                 batch_size: int | None = None) -> list:
        """Args:
            inputs: a text (or a list) with at least one ``[MASK]``.
            top_k: how many tokens to return per mask (default 5).
            targets: score only these tokens (a word not in the vocabulary stands for its
                first wordpiece, as transformers does).

        Returns:
            For one text with one mask, a list of ``top_k`` dicts; with several masks, a
            list of such lists; for a list of texts, one of those per text.
        """
        if is_stream(inputs):
            return self._stream(inputs, lambda chunk, size: self(chunk, top_k=top_k, targets=targets, batch_size=size),
                                batch_size, unwraps_one=True)
        options = self._options({"top_k": top_k, "targets": targets})
        top_k = 5 if options["top_k"] is None else options["top_k"]
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ValueError(f"top_k must be a positive int, got {top_k!r}")
        target_ids = None if options["targets"] is None else self._target_ids(options["targets"])
        texts, many = self._texts(inputs)
        mask_id = self.tokenizer.mask_token_id

        def preprocess(text: str, index: int) -> list[dict]:
            encoded = _encode_to_fit(self, text, None, f"inputs[{index}]" if many else "inputs")
            if not (encoded["input_ids"] == mask_id).any():
                where = f"inputs[{index}]" if many else "inputs"
                raise PipelineException(self.task, self.model.base_model_prefix,
                                        f"{where}: no {self.tokenizer.mask_token} in {text!r}; fill-mask predicts the "
                                        f"token at each {self.tokenizer.mask_token}")
            return [dict(encoded)]

        def postprocess(text: str, outputs: list[dict]) -> list:
            input_ids = outputs[0]["input_ids"][0]  # (T,), padding included when batched
            masked = torch.nonzero(input_ids == mask_id).squeeze(-1)  # (M,)
            probs = outputs[0]["logits"][0, masked].softmax(dim=-1)  # (M, V)
            if target_ids is not None:
                probs = probs[:, target_ids]  # (M, len(targets))
            values, predictions = probs.topk(min(top_k, probs.shape[-1]))  # (M, k)
            single = len(masked) == 1
            rows = []
            for mask_index, (scores, tokens) in enumerate(zip(values.tolist(), predictions.tolist())):
                row = []
                for score, token in zip(scores, tokens):
                    token = target_ids[token] if target_ids is not None else token
                    filled = input_ids.clone()
                    filled[masked[mask_index]] = token
                    filled = filled[filled != self.tokenizer.pad_token_id]
                    # With several masks the others stay visible, so special tokens are kept.
                    sequence = self.tokenizer.decode(filled, skip_special_tokens=single)
                    row.append({"score": score, "token": token, "token_str": self.tokenizer.decode([token]),
                                "sequence": sequence})
                rows.append(row)
            return rows[0] if single else rows

        answers = self._run(texts, preprocess, postprocess, batch_size)
        return answers if many and len(answers) > 1 else answers[0]

    def _target_ids(self, targets: str | list[str]) -> list[int]:
        targets = [targets] if isinstance(targets, str) else targets
        if not isinstance(targets, (list, tuple)) or not all(isinstance(t, str) for t in targets):
            raise PipelineInputError(f"targets must be a str or a list of str, got {targets!r}")
        vocab = self.tokenizer.get_vocab()
        ids = []
        for target in targets:
            index = vocab.get(target)
            if index is None:
                pieces = self.tokenizer(target, add_special_tokens=False)["input_ids"]
                if not pieces:  # no token at all (spaces): nothing it could stand for
                    logger.warning("targets: %r is not in the model's vocabulary and holds no token; ignoring it",
                                   target)
                    continue
                index = pieces[0]
                # Its first wordpiece stands for it, as in transformers: say which, or the
                # scores would seem to be the word's own.
                logger.warning("targets: %r is not in the model's vocabulary; scoring its first wordpiece %r instead",
                               target, self.tokenizer.convert_ids_to_tokens(index))
            ids.append(index)
        if not ids:
            raise ValueError(f"targets {targets!r}: none of them is a token")
        return sorted(set(ids))
