"""The question-answering pipeline, which transformers 5 removed: equal to 4.57.6's
``pipeline("question-answering")`` (its fast-tokenizer path) on the same weights: the same
answers and character spans, scores within FP32_ATOL."""

from __future__ import annotations

import pytest
import transformers

from mini_hf_bert import pipeline
from mini_hf_bert.checkpoints.bundled import default_checkpoint_dir
from tools.testing_utils import write_head_checkpoint
from tests.pipelines.test_pipelines import assert_close

CONTEXT = ("The Eiffel Tower, completed in 1889, stands in Paris on the Champ de Mars. It was designed by the "
           "engineering company of Gustave Eiffel and was the tallest structure in the world until 1930. "
           "北京是中华人民共和国的首都，位于华北平原北部。") * 3
QUESTIONS = ["When was the Eiffel Tower completed?", "Who designed it?", "北京位于哪里？"]


@pytest.fixture(scope="module")
def qa_dir(tmp_path_factory) -> str:
    return write_head_checkpoint(tmp_path_factory.mktemp("qa"), default_checkpoint_dir(), "BertForQuestionAnswering",
                                 head_std=0.5)


@pytest.fixture(scope="module")
def pair(qa_dir):
    assert transformers.__version__ == "4.57.6"
    return pipeline("question-answering", model=qa_dir), transformers.pipeline("question-answering", model=qa_dir)


@pytest.mark.parametrize("options", [
    {},
    {"top_k": 3},
    {"max_seq_len": 48, "doc_stride": 16},  # the context cut into many windows
    {"max_seq_len": 48, "doc_stride": 16, "top_k": 4, "batch_size": 3},
    {"handle_impossible_answer": True, "top_k": 2},
    {"align_to_words": False, "max_answer_len": 4},
])
def test_question_answering_equals_transformers_4(pair, options):
    ours, theirs = pair
    for question in QUESTIONS:
        assert_close(ours(question=question, context=CONTEXT, **options), theirs(question=question, context=CONTEXT, **options))
    assert_close(ours(question=QUESTIONS, context=CONTEXT, **options), theirs(question=QUESTIONS, context=CONTEXT, **options))


def test_question_answering_input_forms(pair):
    ours, theirs = pair
    item = {"question": QUESTIONS[0], "context": CONTEXT}
    assert_close(ours(item), theirs(item))
    assert_close(ours([item, item]), theirs([item, item]))
    assert_close(ours(question=QUESTIONS[:2], context=[CONTEXT, CONTEXT[:200]]),
                 theirs(question=QUESTIONS[:2], context=[CONTEXT, CONTEXT[:200]]))


@pytest.mark.parametrize("call,error,message", [
    (lambda p: p(question="", context="text"), ValueError, r"question is empty \(''\)"),
    (lambda p: p(question="why?", context="  "), ValueError, r"context is empty"),
    (lambda p: p(question="why " * 400, context="text"), ValueError,
     r"question has 400 tokens: with max_seq_len=384 a window leaves 0 tokens for the context"),
    (lambda p: p(question="why " * 50, context="text " * 30, max_seq_len=64, doc_stride=16), ValueError,
     r"question has 50 tokens: .* leaves 11 tokens for the context, which must be more than doc_stride=16"),
    (lambda p: p(question=["a?", "b?"], context=["x"]), ValueError, "2 questions but 1 contexts"),
    (lambda p: p({"question": "a?"}), KeyError, r"'context' is missing"),  # a KeyError, as transformers
    (lambda p: p(question="a?", context="b", top_k=0), ValueError, "top_k must be a positive int, got 0"),
    (lambda p: p(question="a?", context="b", doc_stride=500), ValueError, r"doc_stride \(500\) is larger than max_seq_len"),
])
def test_question_answering_bad_input(pair, call, error, message):
    with pytest.raises(error, match=message):
        call(pair[0])


def test_a_long_question_with_a_short_context_needs_no_windows(pair):
    ours, theirs = pair
    options = dict(question="why " * 50, context="The tower was completed in 1889.", max_seq_len=64, doc_stride=16)
    assert_close(ours(**options), theirs(**options))


def test_question_answering_streams_dicts_as_transformers_4(pair):
    """A generator of {"question", "context"} dicts answers lazily, one answer each, as 4.57.6's does."""
    ours, theirs = pair
    items = [{"question": q, "context": CONTEXT} for q in QUESTIONS]
    streamed = ours((item for item in items), batch_size=2)
    assert not isinstance(streamed, (list, dict))  # an iterator: nothing answered yet
    assert_close(list(streamed), list(theirs((item for item in items), batch_size=2)))
