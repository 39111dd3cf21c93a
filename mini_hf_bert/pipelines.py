"""``pipeline(task, model=...)``: text in, answers out, as transformers' pipelines.

    >>> fill = pipeline("fill-mask", model="path/to/bert-base-uncased")
    >>> fill("Paris is the [MASK] of France.")[0]["token_str"]
    'capital'

Every pipeline runs the same three steps (transformers' ``preprocess`` / ``_forward`` /
``postprocess``):

1. **preprocess**: each input becomes one or more *features*, the tokenizer's output for
   one row ((1, T) tensors). Question answering cuts a long context into several
   overlapping windows, one feature each.
2. **forward**: the features go through the model ``batch_size`` at a time, padded to
   the longest of the batch as transformers pads them (so the numbers are the same).
3. **postprocess**: each input's features' outputs become its answer: probabilities,
   labels, character spans.

Tasks: ``feature-extraction``, ``fill-mask``, ``text-classification`` (alias
``sentiment-analysis``), ``token-classification`` (alias ``ner``), ``question-answering``
(the 4.x pipeline, which transformers 5 removed), and ``sentence-similarity`` (the hub's
task for sentence-transformers models: cosine similarities of mean-pooled embeddings).

Where transformers accepts an empty text, a question that leaves no room for its context,
or a fill-mask text without [MASK], and then fails deep inside, or answers nonsense, these
raise a ``ValueError`` naming the input.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch

from .auto import (
    AutoModel,
    AutoModelForMaskedLM,
    AutoModelForQuestionAnswering,
    AutoModelForSequenceClassification,
    AutoModelForTokenClassification,
    AutoTokenizer,
)
from .modeling_bert import (
    BertForMaskedLM,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    BertModel,
)
from .sentence_embeddings import mean_pool, sentence_max_length
from .tokenization_bert import BertTokenizer

#: The padding value of each key when features are batched (transformers' ``pad_collate_fn``):
#: padding is no token (attention 0), segment 0, and never part of an answer (masks 1).
_PAD_VALUES = {"attention_mask": 0, "token_type_ids": 0, "special_tokens_mask": 1, "p_mask": 1}
#: question answering: a position no answer may start or end at gets this logit before
#: the softmax (transformers' value), so its probability is exactly 0 in float32.
_EXCLUDED_LOGIT = -10000.0


class Pipeline:
    """What every task shares: loading, batching features, the progress bar.

    transformers: ``pipelines.base.Pipeline``

    Args:
        model: the model, in eval mode.
        tokenizer: its tokenizer.
        batch_size: features per forward pass (1: each input alone, unpadded).
        device: where the model runs (``"cpu"``, ``"cuda"``, ``0``); None leaves it where it is.
        progress: a progress bar (tqdm) over the batches; None shows one when there is
            more than one batch and stderr is a terminal.
    """

    task = ""
    #: The model classes this task can run (checked when a model object is given).
    model_classes: tuple[type, ...] = ()

    def __init__(self, model: torch.nn.Module, tokenizer: BertTokenizer, batch_size: int = 1,
                 device: str | int | torch.device | None = None, progress: bool | None = None) -> None:
        if not isinstance(model, self.model_classes):
            names = " or ".join(c.__name__ for c in self.model_classes)
            raise TypeError(f"{self.task} needs a {names}, got {type(model).__name__}")
        if not isinstance(tokenizer, BertTokenizer):
            raise TypeError(f"tokenizer must be a mini_hf_bert BertTokenizer, got {type(tokenizer).__name__}")
        self.batch_size = _check_batch_size(batch_size)
        self.model = model.eval() if device is None else model.to(_device(device)).eval()
        self.tokenizer = tokenizer
        self.progress = progress
        self.defaults: dict[str, Any] = {}

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def _options(self, given: dict[str, Any]) -> dict[str, Any]:
        """The call's keyword arguments, those left None taken from ``pipeline(...)``'s."""
        return {key: self.defaults.get(key) if value is None else value for key, value in given.items()}

    # -------------------------------------------------------------- the three steps
    def _run(self, inputs: list, preprocess: Callable[[Any, int], list[dict]], postprocess: Callable[[Any, list[dict]], Any],
             batch_size: int | None) -> list:
        """``inputs`` -> answers: preprocess each into features, forward them in padded
        batches, postprocess each input's features' outputs."""
        batch_size = _check_batch_size(self.batch_size if batch_size is None else batch_size)
        features = [preprocess(item, index) for index, item in enumerate(inputs)]
        flat = [feature for group in features for feature in group]
        outputs = self._forward_all(flat, batch_size)
        answers, position = [], 0
        for item, group in zip(inputs, features):
            answers.append(postprocess(item, outputs[position:position + len(group)]))
            position += len(group)
        return answers

    def _forward_all(self, features: list[dict], batch_size: int) -> list[dict]:
        """Each feature with the model's outputs for it added (a (1, T, ...) slice of its
        batch, padding kept: transformers' pipelines return padded rows too)."""
        batches = [features[i:i + batch_size] for i in range(0, len(features), batch_size)]
        results: list[dict] = []
        for batch in _progress_bar(batches, self.task, self.progress):
            padded = self._collate(batch)
            names = [n for n in self.tokenizer.model_input_names if n in padded]
            with torch.no_grad():
                outputs = self.model(**{n: padded[n].to(self.device) for n in names})
            for i, feature in enumerate(batch):
                result = dict(feature)
                result.update({key: value[i:i + 1] for key, value in padded.items()})  # the padded inputs
                result.update({key: value[i:i + 1].float().cpu() for key, value in outputs.items()
                               if isinstance(value, torch.Tensor)})
                results.append(result)
        return results

    def _collate(self, batch: list[dict]) -> dict[str, torch.Tensor]:
        """Stack the features' (1, T) tensors into (B, T_max), padded on the tokenizer's side."""
        keys = [k for k, v in batch[0].items() if isinstance(v, torch.Tensor)]
        if len(batch) == 1:
            return {k: batch[0][k] for k in keys}
        padded = {}
        for key in keys:
            width = max(f[key].shape[1] for f in batch)
            value = self.tokenizer.pad_token_id if key == "input_ids" else _PAD_VALUES.get(key, 0)
            table = torch.full((len(batch), width) + tuple(batch[0][key].shape[2:]), value, dtype=batch[0][key].dtype)
            for i, feature in enumerate(batch):
                row = feature[key][0]
                if self.tokenizer.padding_side == "left":
                    table[i, width - len(row):] = row
                else:
                    table[i, :len(row)] = row
            padded[key] = table  # (B, T_max)
        return padded

    # -------------------------------------------------------------- input checks
    def _texts(self, inputs: Any, argument: str = "inputs") -> tuple[list[str], bool]:
        """One text or a list of them -> (the list, whether a list was given)."""
        if isinstance(inputs, str):
            return [_non_empty(inputs, argument)], False
        if isinstance(inputs, (list, tuple)) and inputs:
            return [_non_empty(t, f"{argument}[{i}]") for i, t in enumerate(inputs)], True
        raise TypeError(f"{argument} must be a str or a non-empty list of str, got "
                        f"{type(inputs).__name__ if not isinstance(inputs, (list, tuple)) else 'an empty list'}")


# ------------------------------------------------------------------------------------------
# feature-extraction
# ------------------------------------------------------------------------------------------
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
        options = self._options({"truncation": truncation, "return_tensors": return_tensors})
        texts, many = self._texts(inputs)

        def preprocess(text: str, index: int) -> list[dict]:
            encoded = self.tokenizer(text, truncation=bool(options["truncation"]), return_tensors="pt")
            _check_fits(self.model, encoded["input_ids"], f"inputs[{index}]" if many else "inputs")
            return [dict(encoded)]

        def postprocess(text: str, outputs: list[dict]) -> Any:
            hidden = outputs[0]["last_hidden_state"]  # (1, T, H)
            return hidden if options["return_tensors"] else hidden.tolist()

        answers = self._run(texts, preprocess, postprocess, batch_size)
        return answers if many else answers[0]


# ------------------------------------------------------------------------------------------
# fill-mask
# ------------------------------------------------------------------------------------------
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
        options = self._options({"top_k": top_k, "targets": targets})
        top_k = 5 if options["top_k"] is None else options["top_k"]
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ValueError(f"top_k must be a positive int, got {top_k!r}")
        target_ids = None if options["targets"] is None else self._target_ids(options["targets"])
        texts, many = self._texts(inputs)
        mask_id = self.tokenizer.mask_token_id

        def preprocess(text: str, index: int) -> list[dict]:
            encoded = self.tokenizer(text, return_tensors="pt")
            if not (encoded["input_ids"] == mask_id).any():
                where = f"inputs[{index}]" if many else "inputs"
                raise ValueError(f"{where}: no {self.tokenizer.mask_token} in {text!r}; fill-mask predicts the token at "
                                 f"each {self.tokenizer.mask_token}")
            _check_fits(self.model, encoded["input_ids"], f"inputs[{index}]" if many else "inputs")
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
            raise TypeError(f"targets must be a str or a list of str, got {targets!r}")
        vocab = self.tokenizer.get_vocab()
        ids = []
        for target in targets:
            index = vocab.get(target)
            if index is None:
                pieces = self.tokenizer(target, add_special_tokens=False)["input_ids"]
                if not pieces:
                    continue  # no token at all (spaces): nothing it could stand for
                index = pieces[0]
            ids.append(index)
        if not ids:
            raise ValueError(f"targets {targets!r}: none of them is a token")
        return sorted(set(ids))


# ------------------------------------------------------------------------------------------
# text-classification
# ------------------------------------------------------------------------------------------
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
            encoded = self.tokenizer(item[0], item[1], return_tensors="pt")
            _check_fits(self.model, encoded["input_ids"], f"inputs[{index}]" if many else "inputs")
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
            raise TypeError(f"{where} must be a str or a dict {{'text': ..., 'text_pair': ...}}, got {value!r:.80}")

        if isinstance(inputs, (list, tuple)):
            if not inputs:
                raise TypeError("inputs must be a text, a {'text', 'text_pair'} dict, or a non-empty list of them")
            return [one(v, f"inputs[{i}]") for i, v in enumerate(inputs)], True
        return [one(inputs, "inputs")], False


# ------------------------------------------------------------------------------------------
# token-classification
# ------------------------------------------------------------------------------------------
#: How token predictions become entities (transformers' ``AggregationStrategy``).
AGGREGATION_STRATEGIES = ("none", "simple", "first", "average", "max")


class TokenClassificationPipeline(Pipeline):
    """A label per token (``aggregation_strategy="none"``), or entities: runs of tokens
    whose labels continue each other (B-PER, I-PER), with the mean score, the text and
    its character span.

    transformers: ``pipelines.token_classification.TokenClassificationPipeline``

    ``aggregation_strategy``: ``"simple"`` groups tokens as they are labelled; ``"first"``,
    ``"average"`` and ``"max"`` first give every word one label (its first token's, the
    mean of its tokens' scores, or its most confident token's), so a word is never split.
    """

    task = "token-classification"
    model_classes = (BertForTokenClassification,)

    def __call__(self, inputs: str | list, aggregation_strategy: str | None = None, ignore_labels: list[str] | None = None,
                 stride: int | None = None, is_split_into_words: bool | None = None, delimiter: str | None = None,
                 batch_size: int | None = None) -> list:
        """Args:
            inputs: a text or a list of texts (with ``is_split_into_words``, a list of words
                or a list of such lists).
            aggregation_strategy: see the class docstring (default ``"none"``).
            ignore_labels: labels left out of the result (default ``["O"]``).
            stride: cover a text longer than the model in overlapping windows, each
                starting ``stride`` tokens before the previous ended (not with "none").
            is_split_into_words: the input is pre-split into words, joined by ``delimiter``
                (default ``" "``) for the offsets.
        """
        options = self._options({"aggregation_strategy": aggregation_strategy, "ignore_labels": ignore_labels,
                                 "stride": stride, "is_split_into_words": is_split_into_words, "delimiter": delimiter})
        strategy = str(options["aggregation_strategy"] or "none").lower()
        if strategy not in AGGREGATION_STRATEGIES:
            raise ValueError(f"aggregation_strategy={strategy!r}: expected one of {AGGREGATION_STRATEGIES}")
        ignore = ["O"] if options["ignore_labels"] is None else list(options["ignore_labels"])
        stride = options["stride"]
        if stride is not None:
            if strategy == "none":
                raise ValueError("stride covers long texts in windows, whose entities are then merged: "
                                 "pass an aggregation_strategy other than 'none'")
            if isinstance(stride, bool) or not isinstance(stride, int) or not 0 <= stride < self.tokenizer.model_max_length:
                raise ValueError(f"stride must be an int from 0 to model_max_length - 1, got {stride!r}")
        split = bool(options["is_split_into_words"])
        delimiter = " " if options["delimiter"] is None else options["delimiter"]
        if split:
            items, many = self._word_lists(inputs)
        else:
            items, many = self._texts(inputs)

        def preprocess(item: Any, index: int) -> list[dict]:
            where = f"inputs[{index}]" if many else "inputs"
            windows = {} if stride is None else dict(return_overflowing_tokens=True, padding=True, stride=stride)
            encoded = self.tokenizer(item, return_tensors="pt", truncation=True, return_special_tokens_mask=True,
                                     return_offsets_mapping=True, is_split_into_words=split, **windows)
            encoded.pop("overflow_to_sample_mapping", None)
            _check_fits(self.model, encoded["input_ids"], where)
            word_spans = None
            if split:  # each word's characters in the words joined by the delimiter
                word_spans, position = [], 0
                for word in item:
                    word_spans.append((position, position + len(word)))
                    position += len(word) + len(delimiter)
            sentence = delimiter.join(item) if split else item
            return [{**{k: v[i:i + 1] for k, v in encoded.items()}, "sentence": sentence, "word_spans": word_spans,
                     "word_ids": encoded.word_ids(i)} for i in range(len(encoded["input_ids"]))]

        def postprocess(item: Any, outputs: list[dict]) -> list[dict]:
            entities = []
            for output in outputs:
                pre = self._pre_entities(output)
                entities += [e for e in self._aggregate(pre, strategy)
                             if e.get("entity") not in ignore and e.get("entity_group") not in ignore]
            return _merge_overlapping(entities) if len(outputs) > 1 else entities

        answers = self._run(items, preprocess, postprocess, batch_size)
        # One pre-split text still gives a list of one result, as transformers.
        return answers if many or split else answers[0]

    def _word_lists(self, inputs: Any) -> tuple[list[list[str]], bool]:
        many = isinstance(inputs, (list, tuple)) and bool(inputs) and all(isinstance(w, (list, tuple)) for w in inputs)
        lists = list(inputs) if many else [inputs]
        for i, words in enumerate(lists):
            where = f"inputs[{i}]" if many else "inputs"
            if not isinstance(words, (list, tuple)) or not words or not all(isinstance(w, str) for w in words):
                raise TypeError(f"{where} must be a non-empty list of words (str) with is_split_into_words=True")
        return [list(w) for w in lists], many

    def _pre_entities(self, output: dict) -> list[dict]:
        """Each real token: its wordpiece, label probabilities, span, and whether it
        continues the previous token's word."""
        probs = output["logits"][0].softmax(dim=-1)  # (T, L)
        sentence, spans = output["sentence"], output["word_spans"]
        found = []
        for index, token_probs in enumerate(probs):
            if output["special_tokens_mask"][0, index]:
                continue
            token_id = int(output["input_ids"][0, index])
            word = self.tokenizer.convert_ids_to_tokens(token_id)
            start, end = (int(x) for x in output["offset_mapping"][0, index])
            if spans is not None and output["word_ids"][index] is not None:
                shift = spans[output["word_ids"][index]][0]  # offsets count within the word
                start, end = start + shift, end + shift
            text = sentence[start:end]
            # A "##" piece is longer than the characters it covers: it continues a word.
            is_subword = len(word) != len(text)
            if token_id == self.tokenizer.unk_token_id:
                word, is_subword = text, False
            found.append({"word": word, "scores": token_probs, "start": start, "end": end, "index": index,
                          "is_subword": is_subword})
        return found

    def _aggregate(self, pre: list[dict], strategy: str) -> list[dict]:
        labels = self.model.config.id2label
        if strategy in ("none", "simple"):
            entities = []
            for p in pre:
                best = int(p["scores"].argmax())
                entities.append({"entity": labels[best], "score": float(p["scores"][best]), "index": p["index"],
                                 "word": p["word"], "start": p["start"], "end": p["end"]})
        else:
            words, group = [], []
            for p in pre:
                if group and not p["is_subword"]:
                    words.append(self._one_word(group, strategy))
                    group = []
                group.append(p)
            if group:
                words.append(self._one_word(group, strategy))
            entities = words
        return entities if strategy == "none" else self._group(entities)

    def _one_word(self, tokens: list[dict], strategy: str) -> dict:
        """A word's tokens -> one labelled word (first / average / max)."""
        if strategy == "first":
            scores = tokens[0]["scores"]
        elif strategy == "max":
            scores = max(tokens, key=lambda t: float(t["scores"].max()))["scores"]
        else:  # average
            scores = torch.stack([t["scores"] for t in tokens]).mean(dim=0)  # (L,)
        best = int(scores.argmax())
        return {"entity": self.model.config.id2label[best], "score": float(scores[best]),
                "word": self.tokenizer.convert_tokens_to_string([t["word"] for t in tokens]),
                "start": tokens[0]["start"], "end": tokens[-1]["end"]}

    def _group(self, entities: list[dict]) -> list[dict]:
        """Adjacent entities with the same tag, where each continues the last (not B-),
        -> one group with their mean score."""
        groups, current = [], []
        for entity in entities:
            if current:
                bi, tag = _bio(entity["entity"])
                if tag != _bio(current[-1]["entity"])[1] or bi == "B":
                    groups.append(current)
                    current = []
            current.append(entity)
        if current:
            groups.append(current)
        return [{"entity_group": g[0]["entity"].split("-", 1)[-1], "score": sum(e["score"] for e in g) / len(g),
                 "word": self.tokenizer.convert_tokens_to_string([e["word"] for e in g]),
                 "start": g[0]["start"], "end": g[-1]["end"]} for g in groups]


def _bio(label: str) -> tuple[str, str]:
    """``"B-PER"`` -> ("B", "PER"); ``"I-PER"`` and a bare ``"PER"`` -> ("I", "PER")."""
    if label.startswith(("B-", "I-")):
        return label[0], label[2:]
    return "I", label


def _merge_overlapping(entities: list[dict]) -> list[dict]:
    """Entities from overlapping windows: of those starting inside another, keep the
    longer (the higher score on a tie)."""
    if not entities:
        return entities
    entities = sorted(entities, key=lambda e: e["start"])
    kept, previous = [], entities[0]
    for entity in entities:
        if previous["start"] <= entity["start"] < previous["end"]:
            length, previous_length = entity["end"] - entity["start"], previous["end"] - previous["start"]
            if length > previous_length or (length == previous_length and entity["score"] > previous["score"]):
                previous = entity
        else:
            kept.append(previous)
            previous = entity
    kept.append(previous)
    return kept


# ------------------------------------------------------------------------------------------
# question-answering
# ------------------------------------------------------------------------------------------
class QuestionAnsweringPipeline(Pipeline):
    """The span of the context that answers the question: score(s, e) = P(start = s) ·
    P(end = e) over context tokens, s ≤ e < s + ``max_answer_len``, with the context cut
    into overlapping windows of ``max_seq_len`` tokens when it is long.

    transformers 4.x: ``pipelines.question_answering.QuestionAnsweringPipeline``
    """

    task = "question-answering"
    model_classes = (BertForQuestionAnswering,)

    def __call__(self, question: str | list[str] | None = None, context: str | list[str] | None = None,
                 top_k: int | None = None, doc_stride: int | None = None, max_answer_len: int | None = None,
                 max_seq_len: int | None = None, handle_impossible_answer: bool | None = None,
                 align_to_words: bool | None = None, batch_size: int | None = None) -> dict | list:
        """Args:
            question, context: a question and its context, or lists of them (one context
                for many questions, or one each). A ``{"question", "context"}`` dict (or a
                list of them) may be passed as ``question``.
            top_k: answers per question (default 1: a dict; more: a list).
            doc_stride: tokens each context window repeats from the previous (default
                min(max_seq_len // 2, 128)).
            max_answer_len: the longest answer in tokens (default 15).
            max_seq_len: tokens per window, question included (default min(model_max_length, 384)).
            handle_impossible_answer: also offer the empty answer ([CLS]), scored by the
                lowest P(start=[CLS])·P(end=[CLS]) of the windows.
            align_to_words: widen the answer to whole words (default True).

        Returns:
            ``{"score", "start", "end", "answer"}`` (character offsets in the context), a
            list of ``top_k`` of them, or for several questions a list of those.
        """
        options = self._options({"top_k": top_k, "doc_stride": doc_stride, "max_answer_len": max_answer_len,
                                 "max_seq_len": max_seq_len, "handle_impossible_answer": handle_impossible_answer,
                                 "align_to_words": align_to_words})
        top_k = 1 if options["top_k"] is None else options["top_k"]
        max_answer_len = 15 if options["max_answer_len"] is None else options["max_answer_len"]
        max_seq_len = options["max_seq_len"] if options["max_seq_len"] is not None else \
            min(self.tokenizer.model_max_length, 384)
        for name, value in (("top_k", top_k), ("max_answer_len", max_answer_len), ("max_seq_len", max_seq_len)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        stride = options["doc_stride"] if options["doc_stride"] is not None else min(max_seq_len // 2, 128)
        if isinstance(stride, bool) or not isinstance(stride, int) or stride < 0:
            raise ValueError(f"doc_stride must be an int >= 0, got {stride!r}")
        if stride > max_seq_len:
            raise ValueError(f"doc_stride ({stride}) is larger than max_seq_len ({max_seq_len})")
        impossible = bool(options["handle_impossible_answer"])
        align = True if options["align_to_words"] is None else bool(options["align_to_words"])
        examples = _qa_examples(question, context)
        question_first = self.tokenizer.padding_side == "right"

        def preprocess(example: tuple[str, str], index: int) -> list[dict]:
            first, second = example if question_first else example[::-1]
            try:
                encoded = self.tokenizer(first, second, truncation="only_second" if question_first else "only_first",
                                         max_length=max_seq_len, stride=stride, return_overflowing_tokens=True,
                                         return_offsets_mapping=True)
            except ValueError:  # the context needs windows, and the question leaves too little room for them
                where = f"question[{index}]" if len(examples) > 1 else "question"
                question_tokens = len(self.tokenizer.tokenize(example[0]))
                room = max_seq_len - self.tokenizer.num_special_tokens_to_add(pair=True) - question_tokens
                raise ValueError(
                    f"{where} has {question_tokens} tokens: with max_seq_len={max_seq_len} a window leaves "
                    f"{max(room, 0)} tokens for the context, which must be more than doc_stride={stride}; "
                    f"shorten the question, or raise max_seq_len (the model takes {self.tokenizer.model_max_length})"
                ) from None
            context_index = 1 if question_first else 0
            features = []
            for i, ids in enumerate(encoded["input_ids"]):  # one window: lists, of its own length
                sequence_ids = encoded.sequence_ids(i)
                # p_mask: 1 where no answer can be (not the context), except [CLS] (the empty answer).
                p_mask = [0 if s == context_index or t == self.tokenizer.cls_token_id else 1
                          for s, t in zip(sequence_ids, ids)]
                features.append({"input_ids": torch.tensor([ids]), "token_type_ids": torch.tensor([encoded["token_type_ids"][i]]),
                                 "attention_mask": torch.tensor([encoded["attention_mask"][i]]), "p_mask": torch.tensor([p_mask]),
                                 "offsets": encoded["offset_mapping"][i], "words": encoded.word_ids(i),
                                 "sequences": sequence_ids})  # each (1, T) / T long
            return features

        def postprocess(example: tuple[str, str], outputs: list[dict]) -> Any:
            context_text = example[1]
            answers: list[dict] = []
            min_null = 1_000_000.0  # transformers' start: larger than any probability
            for output in outputs:
                starts, ends, scores, min_null = _best_spans(
                    output["start_logits"], output["end_logits"], output["p_mask"], output["attention_mask"],
                    min_null, top_k * 2 + 10 if align else top_k, impossible, max_answer_len)
                shift = int((output["input_ids"] == self.tokenizer.pad_token_id).sum()) if not question_first else 0
                for s, e, score in zip(starts, ends, scores):
                    start, end = self._char_span(output, s - shift, e - shift, 1 if question_first else 0, align)
                    text = context_text[start:end]
                    same = next((a for a in answers if a["answer"].lower() == text.lower()), None)
                    if same is not None:  # the same answer found in another window: scores add up
                        same["score"] += score
                    else:
                        answers.append({"score": score, "start": start, "end": end, "answer": text})
            if impossible:
                answers.append({"score": min_null, "start": 0, "end": 0, "answer": ""})
            answers = sorted(answers, key=lambda a: a["score"], reverse=True)[:top_k]
            return answers[0] if len(answers) == 1 else answers

        answers = self._run(examples, preprocess, postprocess, batch_size)
        return answers[0] if len(answers) == 1 else answers

    @staticmethod
    def _char_span(output: dict, s: int, e: int, sequence: int, align: bool) -> tuple[int, int]:
        """Token span -> character span in the context: from the first character of the
        start token's word to the last of the end token's (with ``align``), else the tokens'."""
        offsets, words, sequences = output["offsets"], output["words"], output["sequences"]
        if align and words[s] is not None and words[e] is not None:
            start_word = [i for i, (w, q) in enumerate(zip(words, sequences)) if w == words[s] and q == sequence]
            end_word = [i for i, (w, q) in enumerate(zip(words, sequences)) if w == words[e] and q == sequence]
            if start_word and end_word:
                return offsets[start_word[0]][0], offsets[end_word[-1]][1]
        return offsets[s][0], offsets[e][1]


def _qa_examples(question: Any, context: Any) -> list[tuple[str, str]]:
    """The question-answering inputs as transformers accepts them -> [(question, context)]."""
    if context is None:
        if isinstance(question, Mapping):
            question = [question]
        if not isinstance(question, (list, tuple)) or not question or not all(isinstance(q, Mapping) for q in question):
            raise TypeError("question-answering needs question= and context= (str or lists), "
                            "or {'question': ..., 'context': ...} dicts")
        pairs = []
        for i, item in enumerate(question):
            missing = {"question", "context"} - set(item)
            if missing:
                raise ValueError(f"inputs[{i}]: a dict with keys 'question' and 'context' is needed; {sorted(missing)} missing")
            pairs.append((item["question"], item["context"]))
    elif isinstance(question, str) and isinstance(context, str):
        pairs = [(question, context)]
    elif isinstance(question, (list, tuple)) and isinstance(context, str):
        pairs = [(q, context) for q in question]
    elif isinstance(question, (list, tuple)) and isinstance(context, (list, tuple)):
        if len(question) != len(context):
            raise ValueError(f"{len(question)} questions but {len(context)} contexts; give one context, or one per question")
        pairs = list(zip(question, context))
    else:
        raise TypeError(f"question and context must be str or lists of str, got {type(question).__name__} "
                        f"and {type(context).__name__}")
    if not pairs:
        raise ValueError("question-answering needs at least one question")
    many = len(pairs) > 1
    return [(_non_empty(q, f"question[{i}]" if many else "question"), _non_empty(c, f"context[{i}]" if many else "context"))
            for i, (q, c) in enumerate(pairs)]


def _best_spans(start_logits: torch.Tensor, end_logits: torch.Tensor, p_mask: torch.Tensor, attention_mask: torch.Tensor,
                min_null: float, k: int, impossible: bool, max_answer_len: int) -> tuple[list[int], list[int], list[float], float]:
    """The ``k`` best (start, end) spans of one window, and the running empty-answer score.

    P(start = s) and P(end = e) are softmaxes over the positions an answer may use (the
    context, [CLS]); a span's score is their product, for s ≤ e < s + max_answer_len.
    """
    allowed = ((1 - p_mask) & attention_mask)[0].bool()  # (T,) context tokens (and [CLS])
    start = torch.where(allowed, start_logits[0], torch.tensor(_EXCLUDED_LOGIT)).softmax(dim=-1)  # (T,)
    end = torch.where(allowed, end_logits[0], torch.tensor(_EXCLUDED_LOGIT)).softmax(dim=-1)  # (T,)
    if impossible:
        min_null = min(min_null, float(start[0] * end[0]))
    start[0] = end[0] = 0.0  # [CLS] is the empty answer, offered apart
    scores = torch.outer(start, end)  # (T, T): scores[s, e] = P(start=s) · P(end=e)
    scores = torch.triu(scores).tril(max_answer_len - 1)  # s ≤ e < s + max_answer_len
    flat = scores.flatten()
    best = torch.topk(flat, min(k, flat.numel())).indices
    starts, ends = (best // scores.shape[1]).tolist(), (best % scores.shape[1]).tolist()
    keep = [i for i, (s, e) in enumerate(zip(starts, ends)) if allowed[s] and allowed[e]]
    return ([starts[i] for i in keep], [ends[i] for i in keep], [float(scores[starts[i], ends[i]]) for i in keep], min_null)


# ------------------------------------------------------------------------------------------
# sentence-similarity
# ------------------------------------------------------------------------------------------
class SentenceSimilarityPipeline(Pipeline):
    """Cosine similarity of a source sentence to each of several sentences, from mean-pooled,
    L2-normalised embeddings (sentence-transformers' recipe for all-MiniLM-L6-v2).

    transformers: none (the hub's ``sentence-similarity`` task, run by sentence-transformers)
    """

    task = "sentence-similarity"
    model_classes = (BertModel,)

    def __init__(self, model: torch.nn.Module, tokenizer: BertTokenizer, batch_size: int = 1,
                 device: str | int | torch.device | None = None, progress: bool | None = None,
                 max_length: int | None = None) -> None:
        super().__init__(model, tokenizer, batch_size, device, progress)
        # sentence-transformers truncates at its own max_seq_length (256 for all-MiniLM-L6-v2).
        self.max_length = max_length

    def __call__(self, inputs: dict | list[dict], batch_size: int | None = None) -> list:
        """Args:
            inputs: ``{"source_sentence": str, "sentences": [str, ...]}`` (the hub's form),
                or a list of such dicts.

        Returns:
            The cosine similarities, one per sentence (a list of such lists for a list).
        """
        many = isinstance(inputs, (list, tuple))
        queries = list(inputs) if many else [inputs]
        if not queries:
            raise TypeError("inputs must be a {'source_sentence': ..., 'sentences': [...]} dict or a non-empty list of them")
        texts, sizes = [], []
        for i, query in enumerate(queries):
            where = f"inputs[{i}]" if many else "inputs"
            if not isinstance(query, Mapping) or set(query) != {"source_sentence", "sentences"}:
                raise TypeError(f"{where} must be a dict with keys 'source_sentence' and 'sentences', got {query!r:.80}")
            sentences = query["sentences"]
            if isinstance(sentences, str) or not isinstance(sentences, (list, tuple)) or not sentences:
                raise TypeError(f"{where}['sentences'] must be a non-empty list of str")
            texts.append(_non_empty(query["source_sentence"], f"{where}['source_sentence']"))
            texts += [_non_empty(s, f"{where}['sentences'][{j}]") for j, s in enumerate(sentences)]
            sizes.append(len(sentences))

        def preprocess(text: str, index: int) -> list[dict]:
            return [dict(self.tokenizer(text, truncation=True, max_length=self.max_length, return_tensors="pt"))]

        def postprocess(text: str, outputs: list[dict]) -> torch.Tensor:
            pooled = mean_pool(outputs[0]["last_hidden_state"], outputs[0]["attention_mask"])  # (1, H)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)[0]  # (H,)

        embeddings = self._run(texts, preprocess, postprocess, batch_size)
        results, position = [], 0
        for size in sizes:
            source, others = embeddings[position], torch.stack(embeddings[position + 1:position + 1 + size])  # (H,), (n, H)
            results.append((others @ source).tolist())  # unit vectors: dot product = cosine
            position += 1 + size
        return results if many else results[0]


# ------------------------------------------------------------------------------------------
# pipeline()
# ------------------------------------------------------------------------------------------
#: task -> (its pipeline, the Auto class that loads its model).
SUPPORTED_TASKS: dict[str, tuple[type[Pipeline], type]] = {
    "feature-extraction": (FeatureExtractionPipeline, AutoModel),
    "fill-mask": (FillMaskPipeline, AutoModelForMaskedLM),
    "text-classification": (TextClassificationPipeline, AutoModelForSequenceClassification),
    "token-classification": (TokenClassificationPipeline, AutoModelForTokenClassification),
    "question-answering": (QuestionAnsweringPipeline, AutoModelForQuestionAnswering),
    "sentence-similarity": (SentenceSimilarityPipeline, AutoModel),
}
TASK_ALIASES = {"sentiment-analysis": "text-classification", "ner": "token-classification"}


def pipeline(
    task: str,
    model: str | os.PathLike | torch.nn.Module | None = None,
    tokenizer: str | os.PathLike | BertTokenizer | None = None,
    device: str | int | torch.device | None = None,
    batch_size: int = 1,
    progress: bool | None = None,
    **call_defaults: Any,
) -> Pipeline:
    """A ready pipeline for ``task``.

    transformers: ``pipelines.pipeline``

    Args:
        task: one of ``SUPPORTED_TASKS`` (or ``"sentiment-analysis"``, ``"ner"``).
        model: a checkpoint directory (or cached hub id), loaded with the task's Auto class
            (strictly: a checkpoint without the task's head is an error); or a model.
        tokenizer: a directory or a ``BertTokenizer``; default: the model's directory.
        device: where to run the model.
        batch_size: features per forward pass.
        progress: a progress bar over the batches (None: when there are several and
            stderr is a terminal).
        call_defaults: defaults for the pipeline's call (``aggregation_strategy="simple"``,
            ``top_k=3``); each must be one of the call's keyword arguments.

    Returns:
        The pipeline: call it on text.
    """
    if not isinstance(task, str) or TASK_ALIASES.get(task, task) not in SUPPORTED_TASKS:
        known = sorted(SUPPORTED_TASKS) + sorted(TASK_ALIASES)
        raise ValueError(f"unknown task {task!r}; the tasks are {', '.join(known)}")
    pipeline_class, auto_class = SUPPORTED_TASKS[TASK_ALIASES.get(task, task)]
    allowed = [p for p in inspect.signature(pipeline_class.__call__).parameters if p not in ("self", "batch_size")]
    unknown = sorted(set(call_defaults) - set(allowed))
    if unknown:
        raise TypeError(f"pipeline({task!r}) got unexpected keyword arguments {unknown}; its calls take {allowed}")
    if model is None:
        raise ValueError(f"pipeline({task!r}) needs model=: a checkpoint directory or a model "
                         "(there is no hub here to fetch a default from)")
    source = None
    if isinstance(model, (str, os.PathLike)):
        source = os.fspath(model)
        model = auto_class.from_pretrained(source)
    if tokenizer is None:
        if source is None:
            raise ValueError(f"pipeline({task!r}) was given a model object: pass tokenizer= too (a directory or a BertTokenizer)")
        tokenizer = source
    if isinstance(tokenizer, (str, os.PathLike)):
        tokenizer = AutoTokenizer.from_pretrained(tokenizer)
    extra = {}
    if pipeline_class is SentenceSimilarityPipeline and source is not None and os.path.isdir(source):
        extra["max_length"] = sentence_max_length(source)
    made = pipeline_class(model, tokenizer, batch_size=batch_size, device=device, progress=progress, **extra)
    made.defaults = dict(call_defaults)
    return made


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------
def _non_empty(text: Any, where: str) -> str:
    if not isinstance(text, str):
        raise TypeError(f"{where} must be a str, got {type(text).__name__}")
    if not text.strip():
        raise ValueError(f"{where} is empty ({text!r}); there is nothing to run the model on")
    return text


def _check_fits(model: torch.nn.Module, input_ids: torch.Tensor, where: str) -> None:
    """A text longer than the position table would index past it: say so, with the fix."""
    limit = model.config.max_position_embeddings
    if input_ids.shape[-1] > limit:
        raise ValueError(f"{where} is {input_ids.shape[-1]} tokens long; the model takes at most {limit}: "
                         f"shorten it, or pass truncation=True where the task has it")


def _check_batch_size(batch_size: Any) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    return batch_size


def _device(device: str | int | torch.device) -> torch.device:
    return torch.device(f"cuda:{device}" if isinstance(device, int) and device >= 0 else
                        "cpu" if isinstance(device, int) else device)


def _progress_bar(batches: list, task: str, progress: bool | None) -> Iterable:
    """``batches``, with a tqdm bar when asked (or, for None, when there are several and
    stderr is a terminal); without tqdm installed, the batches alone."""
    if progress is False or (progress is None and len(batches) < 2):
        return batches
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return batches
    return tqdm(batches, desc=task, unit="batch", disable=None if progress is None else False)
