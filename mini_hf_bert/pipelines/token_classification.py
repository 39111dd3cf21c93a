"""``pipeline("token-classification")`` (alias ``ner``): labelled tokens, or entities grouped from them."""

from __future__ import annotations

from typing import Any

import torch

from ..modeling_bert import BertForTokenClassification
from .base import Pipeline, _check_fits, is_stream

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
        if is_stream(inputs):
            return self._stream(inputs, lambda chunk, size: self(
                chunk, aggregation_strategy=aggregation_strategy, ignore_labels=ignore_labels, stride=stride,
                is_split_into_words=is_split_into_words, delimiter=delimiter, batch_size=size), batch_size)
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
