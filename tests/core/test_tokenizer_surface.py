"""The rest of the tokenizer call transformers users type: word_ids / sequence_ids, encode,
pad (and so transformers' data collators), pad_to_multiple_of, padding_side, return_tensors
"np"; each equal to transformers' BertTokenizer (the fast one)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mini_hf_bert import BertTokenizer

from .tokenizer_corpus import CHINESE, CORPUS, PAIRS

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
TEXT = st.text(st.sampled_from("ab cd XY.,!é中国\u0301\t[MASK]ß"), max_size=40)


@pytest.fixture(scope="module", params=["uncased", "cased"])
def pair(request, minilm_dir):
    lower = request.param == "uncased"
    return (BertTokenizer.from_pretrained(minilm_dir, do_lower_case=lower),
            transformers.BertTokenizer.from_pretrained(minilm_dir, do_lower_case=lower))


def _rows_equal(ours, theirs, keys=None):
    keys = keys or list(theirs.keys())
    assert list(ours.keys()) == list(theirs.keys())
    for key in keys:
        a, b = ours[key], theirs[key]
        if isinstance(b, torch.Tensor):
            assert isinstance(a, torch.Tensor) and torch.equal(a, b), key
        elif isinstance(b, np.ndarray):
            assert isinstance(a, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b), key
        else:
            assert a == b, key


def test_word_and_sequence_ids_on_the_corpus(pair):
    ours, fast = pair
    texts = CORPUS + CHINESE + ["Héllo, [MASK] unaffable 北京!", "[CLS] starts [SEP] here"]
    a, b = ours(texts, padding=True), fast(texts, padding=True)
    for i in range(len(texts)):
        assert a.word_ids(i) == b.word_ids(i), texts[i]
        assert a.sequence_ids(i) == b.sequence_ids(i), texts[i]
    firsts, seconds = [p[0] for p in PAIRS], [p[1] for p in PAIRS]
    for strategy in ("longest_first",):
        a = ours(firsts, seconds, truncation=strategy, max_length=16, padding="max_length")
        b = fast(firsts, seconds, truncation=strategy, max_length=16, padding="max_length")
        for i in range(len(PAIRS)):
            assert a.word_ids(i) == b.word_ids(i) and a.sequence_ids(i) == b.sequence_ids(i), (strategy, i)


@PROPERTY
@given(first=TEXT, second=TEXT, multiple=st.sampled_from([None, 1, 8, 64]), side=st.sampled_from(["right", "left"]),
       tensors=st.sampled_from([None, "pt", "np"]))
def test_random_batches_pad_alike(pair, first, second, multiple, side, tensors):
    ours, fast = pair
    ours.padding_side = fast.padding_side = side
    try:
        a = ours([first, second], padding=True, pad_to_multiple_of=multiple, return_tensors=tensors)
        b = fast([first, second], padding=True, pad_to_multiple_of=multiple, return_tensors=tensors)
    finally:
        ours.padding_side = fast.padding_side = "right"
    _rows_equal(a, b)
    for i in range(2):
        assert a.word_ids(i) == b.word_ids(i)


@PROPERTY
@given(texts=st.lists(TEXT, min_size=1, max_size=4), multiple=st.sampled_from([None, 4, 16]),
       side=st.sampled_from([None, "right", "left"]), tensors=st.sampled_from([None, "pt", "np"]),
       padding=st.sampled_from([True, "longest", "max_length", False]))
def test_random_pad_calls_alike(pair, texts, multiple, side, tensors, padding):
    ours, fast = pair
    max_length = 48 if padding == "max_length" else None
    if tensors is not None and padding is False and len({len(fast(t)["input_ids"]) for t in texts}) > 1:
        return  # ragged rows cannot be one tensor, on either side
    a = ours.pad([ours(t) for t in texts], padding=padding, max_length=max_length, pad_to_multiple_of=multiple,
                 padding_side=side, return_tensors=tensors)
    b = fast.pad([fast(t) for t in texts], padding=padding, max_length=max_length, pad_to_multiple_of=multiple,
                 padding_side=side, return_tensors=tensors)
    _rows_equal(a, b)


def test_pad_takes_tensors_and_one_encoding(pair):
    ours, fast = pair
    for tokenizer in (ours, fast):
        assert tokenizer.padding_side == "right"
    one_a, one_b = ours.pad(ours("hello there"), max_length=8, padding="max_length"), fast.pad(fast("hello there"), max_length=8, padding="max_length")
    _rows_equal(one_a, one_b)
    features_a = [{k: torch.tensor(v) for k, v in ours(t).items()} for t in ["a b", "c d e f"]]
    features_b = [{k: torch.tensor(v) for k, v in fast(t).items()} for t in ["a b", "c d e f"]]
    _rows_equal(ours.pad(features_a), fast.pad(features_b))  # tensors in: tensors out


def test_encode(pair):
    ours, fast = pair
    for text in CORPUS[:6] + CHINESE[:2]:
        assert ours.encode(text) == fast.encode(text)
    assert ours.encode("a b", "c d", add_special_tokens=False) == fast.encode("a b", "c d", add_special_tokens=False)
    assert torch.equal(ours.encode("hello", return_tensors="pt"), fast.encode("hello", return_tensors="pt"))


def test_data_collator_with_padding(pair):
    ours, fast = pair
    texts = ["A short one.", "A somewhat longer sentence than the first.", "北京是中国的首都。"]
    for multiple in (None, 8):
        results = []
        for tokenizer in (ours, fast):
            features = [dict(tokenizer(t), labels=i) for i, t in enumerate(texts)]
            collator = transformers.DataCollatorWithPadding(tokenizer, pad_to_multiple_of=multiple)
            results.append(collator(features))
        _rows_equal(results[0], results[1])


def test_data_collator_for_token_classification_with_word_aligned_labels(pair):
    """transformers' documented recipe: label the first piece of each word, -100 elsewhere."""
    ours, fast = pair
    words = [["Ms.", "Müller", "serves", "unaffable", "croissants"], ["北京", "是", "首都"]]
    word_labels = [[1, 2, 0, 0, 3], [4, 0, 5]]
    results = []
    for tokenizer in (ours, fast):
        features = []
        for tokens, labels in zip(words, word_labels):
            encoding = tokenizer(" ".join(tokens))
            # Our words are the pre-tokenizer's, so map pre-tokenizer words back to the given ones.
            spans, position = [], 0
            text = " ".join(tokens)
            for token in tokens:
                start = text.index(token, position)
                spans.append((start, start + len(token)))
                position = start + len(token)
            previous, aligned = None, []
            for word, (start, _) in zip(encoding.word_ids(), tokenizer(text, return_offsets_mapping=True)["offset_mapping"]):
                if word is None:
                    aligned.append(-100)
                    continue
                owner = next(i for i, (s, e) in enumerate(spans) if s <= start < e)
                aligned.append(labels[owner] if word != previous else -100)
                previous = word
            features.append(dict(encoding, labels=aligned))
        results.append(transformers.DataCollatorForTokenClassification(tokenizer)(features))
    _rows_equal(results[0], results[1])
    assert (results[0]["labels"] != -100).sum() >= 8


@pytest.mark.parametrize("call,message", [
    (lambda t: t.pad({"attention_mask": [1]}), "pad needs an encoding"),
    (lambda t: t.pad([t("a")], padding="middle"), "padding='middle'"),
    (lambda t: t.pad([t("a")], padding_side="up"), "padding_side='up'"),
    (lambda t: t.pad([t("a")], pad_to_multiple_of=0), "pad_to_multiple_of must be a positive int"),
    (lambda t: t.pad([t("a")], return_tensors="jax"), "return_tensors='jax'"),
    (lambda t: t.encode(["a", "b"]), "encode takes one text"),
    (lambda t: t.pad([t("a")]).word_ids(), r"word_ids\(\) is available only on what the tokenizer's __call__ returned"),
    (lambda t: t(["a"]).word_ids(3), "batch_index 3 is out of range for a batch of 1"),
])
def test_misuse_is_a_clear_error(minilm_dir, call, message):
    tokenizer = BertTokenizer.from_pretrained(minilm_dir)
    with pytest.raises((ValueError, TypeError, IndexError), match=message):
        call(tokenizer)


def test_token_to_chars_and_char_to_token(pair):
    ours, fast = pair
    texts = CORPUS[:8] + CHINESE[:3]
    a, b = ours(texts, padding=True), fast(texts, padding=True)
    for row, text in enumerate(texts):
        for token in range(len(b["input_ids"][row])):
            assert a.token_to_chars(row, token) == b.token_to_chars(row, token), (text, token)
        for char in range(len(text)):
            assert a.char_to_token(row, char) == b.char_to_token(row, char), (text, char)
    first, second = PAIRS[0]
    a, b = ours(first, second), fast(first, second)
    for char in range(len(second)):
        assert a.char_to_token(char, sequence_index=1) == b.char_to_token(char, sequence_index=1)
    assert a.token_to_chars(len(a["input_ids"]) - 2) == b.token_to_chars(len(b["input_ids"]) - 2)
    with pytest.raises(ValueError, match="holds 2 rows: pass"):
        ours(["a", "b"]).token_to_chars(0)


WORDS = st.lists(st.text(st.sampled_from("ab XY.,!é中国\u0301[MASK]ß"), max_size=8), max_size=8)


@PROPERTY
@given(first=WORDS, second=st.one_of(st.none(), WORDS), truncate=st.booleans())
def test_random_pre_split_words_alike(pair, first, second, truncate):
    ours, fast = pair
    options = dict(is_split_into_words=True, return_offsets_mapping=True,
                   truncation=truncate or None, max_length=12 if truncate else None)
    a, b = ours(first, second, **options), fast(first, second, **options)
    _rows_equal(a, b)
    assert a.word_ids() == b.word_ids() and a.sequence_ids() == b.sequence_ids()


def test_pre_split_batches_and_the_token_classification_recipe(pair):
    """transformers' documented recipe: tokenize word lists, label each word's first piece."""
    ours, fast = pair
    words = [["Ms.", "Müller", "serves", "unaffable", "croissants"], ["北京", "是", "首都", "。"]]
    labels = [[1, 2, 0, 0, 3], [4, 0, 5, 0]]
    results = []
    for tokenizer in (ours, fast):
        encoding = tokenizer(words, is_split_into_words=True, truncation=True)
        features = []
        for row, word_labels in enumerate(labels):
            previous, aligned = None, []
            for word in encoding.word_ids(row):
                aligned.append(-100 if word is None or word == previous else word_labels[word])
                previous = word
            features.append({k: encoding[k][row] for k in encoding} | {"labels": aligned})
        results.append(transformers.DataCollatorForTokenClassification(tokenizer)(features))
    _rows_equal(results[0], results[1])
    with pytest.raises(TypeError, match=r"text\[1\] must be a str \(a word\), got int"):
        ours(["a", 1], is_split_into_words=True)
    with pytest.raises(TypeError, match="must be a list of words with is_split_into_words=True, got str"):
        ours("a b", is_split_into_words=True)


# ------------------------------------------------------------- stride and overflowing windows
def fast_or_none(fast, *args, **options):
    """The fast tokenizer's encoding, or None where it refuses (a ValueError) or its Rust
    core panics: pyo3's PanicException derives from BaseException."""
    try:
        return fast(*args, **options)
    except BaseException as error:  # noqa: BLE001 - see the docstring
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        return None


LONG = st.lists(st.sampled_from(["one", "two", "unaffable", "北京", ",", "Müller", "[MASK]", "x"]), max_size=14).map(" ".join)


@PROPERTY
@given(first=LONG, second=st.one_of(st.none(), LONG), max_length=st.integers(1, 14), stride=st.integers(0, 6),
       truncation=st.sampled_from([True, "longest_first", "only_first", "only_second", False]),
       overflow=st.booleans(), special=st.booleans(), batch=st.booleans())
def test_random_overflowing_windows_alike(pair, first, second, max_length, stride, truncation, overflow, special, batch):
    """Every window, in the fast tokenizer's order, with offsets, word and sequence ids. Where
    transformers refuses (a ValueError) or its Rust core panics (stride not below a window),
    ours is a ValueError."""
    ours, fast = pair
    texts, pairs = ([first, first + " two"], None if second is None else [second, second]) if batch else (first, second)
    options = dict(max_length=max_length, stride=stride, truncation=truncation, return_overflowing_tokens=overflow,
                   add_special_tokens=special, return_offsets_mapping=True, return_special_tokens_mask=True)
    b = fast_or_none(fast, texts, pairs, **options)
    if b is None:
        with pytest.raises(ValueError):
            ours(texts, pairs, **options)
        return
    a = ours(texts, pairs, **options)
    _rows_equal(a, b)
    for i in range(len(b["input_ids"]) if overflow or batch else 1):
        assert a.word_ids(i) == b.word_ids(i) and a.sequence_ids(i) == b.sequence_ids(i)


def test_overflow_batches_pad_and_convert_alike(pair):
    ours, fast = pair
    texts = ["one two", "x y z w v u t s r q p", "北京 是 首都"]
    for tensors in (None, "pt", "np"):
        options = dict(max_length=7, stride=2, truncation=True, return_overflowing_tokens=True, padding=True,
                       return_tensors=tensors, return_length=True)
        _rows_equal(ours(texts, **options), fast(texts, **options))
    words = [t.split() for t in texts]
    options = dict(is_split_into_words=True, max_length=6, stride=1, truncation=True, return_overflowing_tokens=True)
    a, b = ours(words, **options), fast(words, **options)
    _rows_equal(a, b)
    assert [a.word_ids(i) for i in range(len(b["input_ids"]))] == [b.word_ids(i) for i in range(len(b["input_ids"]))]
    one = ours("one two three four five", max_length=5, stride=1, truncation=True, return_overflowing_tokens=True)
    assert one["overflow_to_sample_mapping"] == [0, 0] and len(one["input_ids"]) == 2  # one text, still a batch


def _qa_features(tokenizer, questions, contexts, answers, max_length=24, stride=6):
    """The sliding-window preprocessing of transformers' question-answering guide: windows of
    the context beside the whole question, each labelled with the answer's token span, or
    with [CLS] (0, 0) where the window does not hold the whole answer."""
    encoded = tokenizer(questions, contexts, truncation="only_second", max_length=max_length, stride=stride,
                        return_overflowing_tokens=True, return_offsets_mapping=True, padding="max_length")
    sample_mapping = encoded.pop("overflow_to_sample_mapping")
    offset_mapping = encoded.pop("offset_mapping")
    starts, ends = [], []
    for i, offsets in enumerate(offset_mapping):
        answer_start, answer_text = answers[sample_mapping[i]]
        answer_end = answer_start + len(answer_text)
        sequence_ids = encoded.sequence_ids(i)
        context_start = sequence_ids.index(1)
        context_end = len(sequence_ids) - 1 - sequence_ids[::-1].index(1)
        if offsets[context_start][0] > answer_start or offsets[context_end][1] < answer_end:
            starts.append(0)
            ends.append(0)
            continue
        start = context_start
        while start <= context_end and offsets[start][0] <= answer_start:
            start += 1
        end = context_end
        while end >= context_start and offsets[end][1] >= answer_end:
            end -= 1
        starts.append(start - 1)
        ends.append(end + 1)
    encoded["start_positions"], encoded["end_positions"] = starts, ends
    features = [{key: encoded[key][i] for key in encoded} for i in range(len(starts))]
    return transformers.DefaultDataCollator()(features)


def test_question_answering_sliding_window_preprocessing(pair):
    ours, fast = pair
    contexts = ["The Eiffel Tower, completed in 1889, stands in Paris on the Champ de Mars. It was designed by "
                "Gustave Eiffel's company and was the tallest structure in the world until 1930.",
                "北京是中华人民共和国的首都，位于华北平原北部，有三千多年的建城史。"]
    questions = ["When was the Eiffel Tower completed?", "北京位于哪里？"]
    answers = [(contexts[0].index("1889"), "1889"), (contexts[1].index("华北平原北部"), "华北平原北部")]
    a, b = _qa_features(ours, questions, contexts, answers), _qa_features(fast, questions, contexts, answers)
    _rows_equal(a, b)
    assert a["input_ids"].shape[0] > len(contexts)  # the contexts were cut into several windows
    labelled = a["start_positions"] > 0
    assert labelled.any() and (a["end_positions"][labelled] >= a["start_positions"][labelled]).all()
    row = int(labelled.nonzero()[0, 0])
    span = a["input_ids"][row, a["start_positions"][row]: a["end_positions"][row] + 1]
    assert ours.decode(span.tolist()) == "1889"


@pytest.mark.parametrize("options,message", [
    (dict(max_length=6, stride=5, truncation=True), r"stride=5 is more than the 4 tokens a window holds"),
    (dict(max_length=6, stride=4, truncation=True), r"stride=4 must be less than the 4 tokens of text"),
    (dict(max_length=6, stride=-1, truncation=True), r"stride must be an int >= 0, got -1"),
    (dict(max_length=6, stride=1.5, truncation=True), r"stride must be an int >= 0, got 1.5"),
])
def test_stride_misuse_is_a_clear_error(minilm_dir, options, message):
    ours = BertTokenizer.from_pretrained(minilm_dir)
    with pytest.raises(ValueError, match=message):
        ours("one two three four five six seven eight", return_overflowing_tokens=True, **options)


def test_encode_plus_is_the_call_and_refuses_what_it_cannot_read(minilm_dir):
    """transformers 3.x/4.x's encode_plus / batch_encode_plus (tests_transformers4 compares
    them with 4.57.6): the same encodings as the call, and a sentence for each misuse."""
    tokenizer = BertTokenizer.from_pretrained(minilm_dir)
    first, second = PAIRS[0]
    assert dict(tokenizer.encode_plus(first, second, max_length=12, truncation=True)) == \
        dict(tokenizer(first, second, max_length=12, truncation=True))
    assert dict(tokenizer.batch_encode_plus(list(PAIRS), padding=True)) == \
        dict(tokenizer([a for a, _ in PAIRS], [b for _, b in PAIRS], padding=True))
    padded = tokenizer.encode_plus(first, max_length=40, pad_to_max_length=True, return_tensors="pt")
    assert padded["input_ids"].shape == (1, 40)
    with pytest.raises(TypeError, match="encode_plus takes one text"):
        tokenizer.encode_plus([first, second])
    with pytest.raises(TypeError, match="batch_encode_plus takes a list"):
        tokenizer.batch_encode_plus(first)
    with pytest.raises(ValueError, match="every item as a text, or every item as a"):
        tokenizer.batch_encode_plus([first, (first, second)])
    with pytest.raises(ValueError, match="a pair is \\(text, text_pair\\), got 3 items"):
        tokenizer.batch_encode_plus([(first, second, first)])
    with pytest.raises(TypeError, match="max_lenght"):
        tokenizer.encode_plus(first, max_lenght=5)
