"""``pipeline("question-answering")``: the best answer spans of a context, long contexts cut into windows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from ..modeling_bert import BertForQuestionAnswering
from .base import Pipeline, PipelineInputError, _non_empty, is_stream

#: question answering: a position no answer may start or end at gets this logit before
#: the softmax (transformers' value), so its probability is exactly 0 in float32.
_EXCLUDED_LOGIT = -10000.0


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
        if context is None and is_stream(question):  # a generator or dataset of {"question", "context"} dicts
            return self._stream(question, lambda chunk, size: self(
                chunk, top_k=top_k, doc_stride=doc_stride, max_answer_len=max_answer_len, max_seq_len=max_seq_len,
                handle_impossible_answer=handle_impossible_answer, align_to_words=align_to_words, batch_size=size),
                batch_size, unwraps_one=True)
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


@dataclass
class SquadExample:
    """One question with its context (and, in training data, its answer), in SQuAD's
    fields; what ``QuestionAnsweringArgumentHandler`` turns each input into.

    transformers 4.x: ``data.processors.squad.SquadExample``
    """

    qas_id: str | None
    question_text: str
    context_text: str
    answer_text: str | None = None
    start_position_character: int | None = None
    title: str | None = None
    answers: list = field(default_factory=list)
    is_impossible: bool = False


class QuestionAnsweringArgumentHandler:
    """Every form transformers' question-answering pipeline accepts -> a list of
    ``SquadExample``: ``(question, context)`` as two strings; ``question=`` and
    ``context=`` (one context for many questions, or one each); a ``{"question",
    "context"}`` dict, a list of them, or ``X=`` / ``data=`` holding those (scikit-learn's
    names). A missing key is a KeyError; anything else wrong, a ValueError naming it.

    transformers 4.x: ``pipelines.question_answering.QuestionAnsweringArgumentHandler``
    """

    def __call__(self, *args: Any, **kwargs: Any) -> list[SquadExample]:
        if args:
            if kwargs:
                raise ValueError(f"pass the inputs either positionally or as keywords, not both (got {sorted(kwargs)})")
            if len(args) == 2 and all(isinstance(a, str) for a in args):
                inputs: Any = [{"question": args[0], "context": args[1]}]
            else:
                inputs = args[0] if len(args) == 1 else list(args)
        elif set(kwargs) in ({"X"}, {"data"}):
            inputs = next(iter(kwargs.values()))
        elif set(kwargs) == {"question", "context"}:
            inputs = self._pairs(kwargs["question"], kwargs["context"])
        else:
            raise ValueError(f"question answering takes question= and context=, a {{'question', 'context'}} dict, or "
                             f"a list of them; got the arguments {sorted(kwargs)}")
        if isinstance(inputs, (Mapping, SquadExample)):
            inputs = [inputs]
        if not isinstance(inputs, (list, tuple)) or not inputs:
            raise ValueError(f"question answering needs a {{'question', 'context'}} dict or a non-empty list of them, "
                             f"got {inputs!r:.80}")
        return [self.normalize(item) for item in inputs]

    @staticmethod
    def _pairs(question: Any, context: Any) -> list[dict]:
        if isinstance(question, str) and isinstance(context, str):
            return [{"question": question, "context": context}]
        if isinstance(question, list) and isinstance(context, str):
            return [{"question": q, "context": context} for q in question]
        if isinstance(question, list) and isinstance(context, list):
            if len(question) != len(context):
                raise ValueError(f"{len(question)} questions but {len(context)} contexts; give one context, "
                                 f"or one per question")
            return [{"question": q, "context": c} for q, c in zip(question, context)]
        raise ValueError(f"question and context must be str or lists of str, got {type(question).__name__} "
                         f"and {type(context).__name__}")

    @staticmethod
    def normalize(item: Any) -> SquadExample:
        """One input -> a ``SquadExample``; the question and context must be non-empty text."""
        if isinstance(item, SquadExample):
            return item
        if not isinstance(item, Mapping):
            raise ValueError(f"{item!r:.80}: each input must be a {{'question', 'context'}} dict or a SquadExample")
        for key in ("question", "context"):
            if key not in item:
                raise KeyError(f"each input must be a dict with keys 'question' and 'context'; {key!r} is missing")
            if item[key] is None:
                raise ValueError(f"{key} is None; question answering needs a {key}")
            if isinstance(item[key], str) and not item[key].strip():
                raise ValueError(f"{key} is empty ({item[key]!r}); question answering needs a {key}")
        return SquadExample(None, item["question"], item["context"])


def _qa_examples(question: Any, context: Any) -> list[tuple[str, str]]:
    """The question-answering inputs as transformers accepts them -> [(question, context)]."""
    handler = QuestionAnsweringArgumentHandler()
    if context is None and (isinstance(question, str) or (isinstance(question, list) and question
                                                          and all(isinstance(q, str) for q in question))):
        raise PipelineInputError("context is None: question answering needs the context that holds the answer "
                                 "(context=, or {'question': ..., 'context': ...} dicts)")
    examples = handler(question) if context is None and question is not None else \
        handler(question=question, context=context)
    many = len(examples) > 1
    return [(_non_empty(e.question_text, f"question[{i}]" if many else "question"),
             _non_empty(e.context_text, f"context[{i}]" if many else "context")) for i, e in enumerate(examples)]


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
