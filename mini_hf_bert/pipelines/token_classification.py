"""``pipeline("token-classification")`` (alias ``ner``): labelled tokens, or entities grouped from them."""

from __future__ import annotations

import enum
import warnings
from typing import Any

import numpy as np

from ..modeling_bert import BertForTokenClassification
from .base import Pipeline, PipelineInputError, _check_fits, is_stream


class AggregationStrategy(str, enum.Enum):
    """How token predictions become entities (see ``TokenClassificationPipeline``); a str,
    so ``"simple"`` and ``AggregationStrategy.SIMPLE`` are equal.

    transformers: ``pipelines.token_classification.AggregationStrategy``
    """

    NONE = "none"
    SIMPLE = "simple"
    FIRST = "first"
    AVERAGE = "average"
    MAX = "max"

    @classmethod
    def of(cls, value: Any) -> AggregationStrategy:
        """An ``AggregationStrategy`` from itself or its name, in any case."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str) and value.lower() in cls._value2member_map_:
            return cls(value.lower())
        raise ValueError(f"aggregation_strategy={value!r}: expected one of {[s.value for s in cls]}")


#: The names of the strategies, in order (the CLI's choices).
AGGREGATION_STRATEGIES = tuple(strategy.value for strategy in AggregationStrategy)


class TokenClassificationArgumentHandler:
    """What a token-classification call was given -> (texts, is_split_into_words,
    offset_mapping, delimiter), the texts as a list and ``offset_mapping`` one list per
    text, checked to match them.

    transformers: ``pipelines.token_classification.TokenClassificationArgumentHandler``
    """

    def __call__(self, inputs: str | list[str], *, is_split_into_words: bool = False,
                 offset_mapping: list | None = None, delimiter: str | None = None) -> tuple:
        if isinstance(inputs, str):
            inputs = [inputs]
        elif isinstance(inputs, (list, tuple)) and inputs:
            inputs = list(inputs)
        else:
            raise ValueError(f"token classification needs a text or a non-empty list of texts, got {inputs!r:.80}")
        if offset_mapping:
            if isinstance(offset_mapping, list) and isinstance(offset_mapping[0], tuple):
                offset_mapping = [offset_mapping]  # one text's (start, end) pairs
            if len(offset_mapping) != len(inputs):
                raise ValueError(f"offset_mapping has {len(offset_mapping)} lists of offsets for {len(inputs)} texts; "
                                 f"give one per text")
        return inputs, is_split_into_words, offset_mapping, delimiter


class TokenClassificationPipeline(Pipeline):
    """A label per token (``aggregation_strategy="none"``), or entities: runs of tokens
    whose labels continue each other (B-PER, I-PER), with the mean score, the text and
    its character span.

    transformers: ``pipelines.token_classification.TokenClassificationPipeline``

    ``aggregation_strategy``: ``"simple"`` groups tokens as they are labelled; ``"first"``,
    ``"average"`` and ``"max"`` first give every word one label (its first token's, the
    mean of its tokens' scores, or its most confident token's), so a word is never split.
    The two steps are public, as in transformers: ``gather_pre_entities`` (tokens ->
    scored pieces) and ``aggregate`` (pieces -> entities).
    """

    task = "token-classification"
    model_classes = (BertForTokenClassification,)

    def __init__(self, model, tokenizer=None, *, grouped_entities: bool | None = None,
                 ignore_subwords: bool | None = None, **options: Any) -> None:
        """``grouped_entities`` / ``ignore_subwords``: transformers 4.x's older spelling of
        ``aggregation_strategy`` ("simple" / "first"), taken with its deprecation warning;
        ``options``: ``Pipeline``'s, and defaults for the call (``aggregation_strategy``)."""
        if grouped_entities is not None or ignore_subwords is not None:
            legacy = AggregationStrategy.FIRST if grouped_entities and ignore_subwords else \
                AggregationStrategy.SIMPLE if grouped_entities else AggregationStrategy.NONE
            for name in ("grouped_entities", "ignore_subwords"):
                if locals()[name] is not None:
                    warnings.warn(f"`{name}` is deprecated (transformers 5 removed it): use "
                                  f"aggregation_strategy=\"{legacy.value}\" instead", UserWarning, stacklevel=2)
            options.setdefault("aggregation_strategy", legacy)
        super().__init__(model, tokenizer, **options)
        if self.defaults.get("aggregation_strategy") is not None:
            self._strategy(self.defaults["aggregation_strategy"])  # a bad one is refused now, not at the first call

    @property
    def _postprocess_params(self) -> dict[str, Any]:
        """The settings that turn the model's scores into the answer, as transformers'
        pipelines keep them (its tests read ``aggregation_strategy`` here)."""
        return {"aggregation_strategy": self._strategy(self.defaults.get("aggregation_strategy")),
                "ignore_labels": ["O"] if self.defaults.get("ignore_labels") is None else self.defaults["ignore_labels"]}

    def _strategy(self, value: Any) -> AggregationStrategy:
        # transformers refuses word aggregation ("first", "average", "max") with a tokenizer
        # that is not is_fast, which has no offsets; both of this library's tokenizers give them.
        return AggregationStrategy.of("none" if value is None else value)

    def __call__(self, inputs: str | list, aggregation_strategy: str | AggregationStrategy | None = None,
                 ignore_labels: list[str] | None = None, stride: int | None = None,
                 is_split_into_words: bool | None = None, delimiter: str | None = None,
                 offset_mapping: list | None = None, batch_size: int | None = None) -> list:
        """Args:
            inputs: a text or a list of texts (with ``is_split_into_words``, a list of words
                or a list of such lists).
            aggregation_strategy: see the class docstring (default ``"none"``).
            ignore_labels: labels left out of the result (default ``["O"]``).
            stride: cover a text longer than the model in overlapping windows, each
                starting ``stride`` tokens before the previous ended (not with "none").
            is_split_into_words: the input is pre-split into words, joined by ``delimiter``
                (default ``" "``) for the offsets.
            offset_mapping: each text's (start, end) character span per token, instead of
                the tokenizer's (transformers' argument).
        """
        if is_stream(inputs):
            return self._stream(inputs, lambda chunk, size: self(
                chunk, aggregation_strategy=aggregation_strategy, ignore_labels=ignore_labels, stride=stride,
                is_split_into_words=is_split_into_words, delimiter=delimiter, batch_size=size), batch_size)
        options = self._options({"aggregation_strategy": aggregation_strategy, "ignore_labels": ignore_labels,
                                 "stride": stride, "is_split_into_words": is_split_into_words, "delimiter": delimiter})
        strategy = self._strategy(options["aggregation_strategy"])
        ignore = ["O"] if options["ignore_labels"] is None else list(options["ignore_labels"])
        stride = options["stride"]
        if stride is not None:
            if strategy is AggregationStrategy.NONE:
                raise ValueError("stride covers long texts in windows, whose entities are then merged: "
                                 "pass an aggregation_strategy other than 'none'")
            if isinstance(stride, bool) or not isinstance(stride, int) or not 0 <= stride < self.tokenizer.model_max_length:
                raise ValueError(f"stride must be an int from 0 to model_max_length - 1, got {stride!r}")
        split = bool(options["is_split_into_words"])
        delimiter = " " if options["delimiter"] is None else options["delimiter"]
        if split:
            items, many = self._word_lists(inputs)
            offsets = None
        else:
            items, many = self._texts(inputs)
            offsets = TokenClassificationArgumentHandler()(items, offset_mapping=offset_mapping)[2]

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
            features = [{**{k: v[i:i + 1] for k, v in encoded.items()}, "sentence": sentence, "word_spans": word_spans,
                         "word_ids": encoded.word_ids(i)} for i in range(len(encoded["input_ids"]))]
            if offsets is not None:
                features[0]["offset_mapping"] = offsets[index]
            return features

        def postprocess(item: Any, outputs: list[dict]) -> list[dict]:
            entities = []
            for output in outputs:
                scores = output["logits"][0].softmax(dim=-1).numpy()  # (T, L)
                offset_mapping = output["offset_mapping"]
                offset_mapping = offset_mapping[0].tolist() if hasattr(offset_mapping, "tolist") else offset_mapping
                pre = self.gather_pre_entities(output["sentence"], output["input_ids"][0].numpy(), scores, offset_mapping,
                                               output["special_tokens_mask"][0].numpy(), strategy,
                                               word_ids=output["word_ids"], word_to_chars_map=output["word_spans"])
                entities += [e for e in self.aggregate(pre, strategy)
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
                raise PipelineInputError(f"{where} must be a non-empty list of words (str) with is_split_into_words=True")
        return [list(w) for w in lists], many

    def gather_pre_entities(self, sentence: str, input_ids: np.ndarray, scores: np.ndarray,
                            offset_mapping: list[tuple[int, int]] | None, special_tokens_mask: np.ndarray,
                            aggregation_strategy: AggregationStrategy | str,
                            word_ids: list[int | None] | None = None,
                            word_to_chars_map: list[tuple[int, int]] | None = None) -> list[dict]:
        """Each real token of one row: its wordpiece, label probabilities (a row of
        ``scores``, (T, L)), character span in ``sentence`` and whether it continues the
        previous token's word. With pre-split words, ``word_ids`` and ``word_to_chars_map``
        place each word's offsets in the joined sentence.

        transformers: ``pipelines.token_classification.TokenClassificationPipeline.gather_pre_entities``
        """
        AggregationStrategy.of(aggregation_strategy)  # one WordPiece rule serves every strategy
        found = []
        for index, token_scores in enumerate(scores):
            if special_tokens_mask[index]:
                continue
            token_id = int(input_ids[index])
            word = self.tokenizer.convert_ids_to_tokens(token_id)
            if offset_mapping is None:
                found.append({"word": word, "scores": token_scores, "start": None, "end": None, "index": index,
                              "is_subword": False})
                continue
            start, end = (int(x) for x in offset_mapping[index])
            if word_to_chars_map is not None and word_ids is not None and word_ids[index] is not None:
                shift = word_to_chars_map[word_ids[index]][0]  # offsets count within the word
                start, end = start + shift, end + shift
            text = sentence[start:end]
            # A "##" piece is longer than the characters it covers: it continues a word.
            is_subword = len(word) != len(text)
            if token_id == self.tokenizer.unk_token_id:
                word, is_subword = text, False
            found.append({"word": word, "scores": token_scores, "start": start, "end": end, "index": index,
                          "is_subword": is_subword})
        return found

    def aggregate(self, pre_entities: list[dict], aggregation_strategy: AggregationStrategy | str) -> list[dict]:
        """Scored pieces (``gather_pre_entities``) -> the answer: one labelled entity per
        token ("none"), or entity groups, after labelling whole words first for "first",
        "average" and "max".

        transformers: ``pipelines.token_classification.TokenClassificationPipeline.aggregate``
        """
        strategy = AggregationStrategy.of(aggregation_strategy)
        labels = self.model.config.id2label
        if strategy in (AggregationStrategy.NONE, AggregationStrategy.SIMPLE):
            entities = []
            for piece in pre_entities:
                best = int(np.argmax(piece["scores"]))
                entities.append({"entity": labels[best], "score": float(piece["scores"][best]), "index": piece["index"],
                                 "word": piece["word"], "start": piece["start"], "end": piece["end"]})
        else:
            entities = self.aggregate_words(pre_entities, strategy)
        return entities if strategy is AggregationStrategy.NONE else self.group_entities(entities)

    def aggregate_words(self, pre_entities: list[dict], aggregation_strategy: AggregationStrategy) -> list[dict]:
        """Pieces -> one labelled entity per word (a word: a piece and the subword pieces after it).

        transformers: ``pipelines.token_classification.TokenClassificationPipeline.aggregate_words``
        """
        words, group = [], []
        for piece in pre_entities:
            if group and not piece["is_subword"]:
                words.append(self.aggregate_word(group, aggregation_strategy))
                group = []
            group.append(piece)
        if group:
            words.append(self.aggregate_word(group, aggregation_strategy))
        return words

    def aggregate_word(self, pieces: list[dict], aggregation_strategy: AggregationStrategy) -> dict:
        """A word's pieces -> its label: the first piece's scores, the most confident
        piece's, or the mean of all (``np.nanmean``)."""
        strategy = AggregationStrategy.of(aggregation_strategy)
        if strategy is AggregationStrategy.FIRST:
            scores = pieces[0]["scores"]
        elif strategy is AggregationStrategy.MAX:
            scores = max(pieces, key=lambda piece: float(np.max(piece["scores"])))["scores"]
        elif strategy is AggregationStrategy.AVERAGE:
            scores = np.nanmean(np.stack([np.asarray(piece["scores"]) for piece in pieces]), axis=0)  # (L,)
        else:
            raise ValueError(f"aggregate_word labels whole words for 'first', 'average' or 'max', not {strategy.value!r}")
        best = int(np.argmax(scores))
        return {"entity": self.model.config.id2label[best], "score": float(scores[best]),
                "word": self.tokenizer.convert_tokens_to_string([piece["word"] for piece in pieces]),
                "start": pieces[0]["start"], "end": pieces[-1]["end"]}

    def group_entities(self, entities: list[dict]) -> list[dict]:
        """Adjacent entities with the same tag, where each continues the last (not B-),
        -> one group with their mean score.

        transformers: ``pipelines.token_classification.TokenClassificationPipeline.group_entities``
        """
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
        return [{"entity_group": g[0]["entity"].split("-", 1)[-1], "score": float(np.nanmean([e["score"] for e in g])),
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
