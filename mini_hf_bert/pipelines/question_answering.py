"""``pipeline("question-answering")``: the best answer spans of a context, long contexts cut into windows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from ..modeling_bert import BertForQuestionAnswering
from .base import Pipeline, _non_empty

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
