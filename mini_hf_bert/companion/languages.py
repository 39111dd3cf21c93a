"""Which shipped checkpoint suits a text: the reading companion's commands give Chinese
text the Chinese BERT, because the English default cannot spell it; mixed text too, as
soon as one of its Chinese characters is missing from the English vocabulary."""

from __future__ import annotations

import functools
import os
import re

from ..checkpoints.bundled import chinese_checkpoint_dir, default_checkpoint_dir

#: Why Chinese text gets the Chinese BERT by default, as the commands' --help says it.
CHINESE_DEFAULT_REASON = ("Chinese text gets zh, the Chinese BERT, by default, mixed text too when the English "
                          "vocabulary lacks one of its characters: all-MiniLM-L6-v2's turns common characters such "
                          "as 是 and 首 into [UNK]")
#: How many of the characters the English vocabulary lacks a choice's reason lists.
SHOWN_CHARACTERS = 5


def _is_cjk(character: str) -> bool:
    return "\u4e00" <= character <= "\u9fff" or "\u3400" <= character <= "\u4dbf"


#: An English word: a run of Latin letters (iPhone, it's -> it, s).
LATIN_WORD = re.compile(r"[A-Za-z]+")


def text_language(text: str) -> str:
    """"zh" when ``text`` holds at least as many CJK ideographs as Latin words, else "en".
    Words, not letters: 我用iPhone拍照 is four characters and one word, mostly Chinese."""
    cjk = sum(1 for c in text if _is_cjk(c))
    return "zh" if cjk and cjk >= len(LATIN_WORD.findall(text)) else "en"


@functools.lru_cache(maxsize=1)
def _english_vocabulary() -> frozenset[str]:
    from ..file_utils import read_file

    path = os.path.join(default_checkpoint_dir(), "vocab.txt")
    return frozenset(line.strip() for line in read_file(path).decode("utf-8").splitlines())


def unknown_to_english(text: str) -> list[str]:
    """The Chinese characters of ``text`` that all-MiniLM-L6-v2's vocabulary lacks (it would
    read each as [UNK]), in order of first appearance."""
    vocabulary = _english_vocabulary()
    return list(dict.fromkeys(c for c in text if _is_cjk(c) and c not in vocabulary))


def checkpoint_choice(text: str) -> tuple[str, str]:
    """(the shipped checkpoint for ``text``, why, in words): the Chinese BERT for mostly
    Chinese text (``text_language``) and for text with a Chinese character the English
    vocabulary lacks; else all-MiniLM-L6-v2."""
    if text_language(text) == "zh":
        return chinese_checkpoint_dir(), "zh, the Chinese BERT: the text is mostly Chinese"
    missing = unknown_to_english(text)
    if missing:
        # Mostly English, yet a Chinese character the English vocabulary lacks: either
        # model loses something, so the reason says what and how to choose the other.
        shown = " ".join(missing[:SHOWN_CHARACTERS]) + (" ..." if len(missing) > SHOWN_CHARACTERS else "")
        return chinese_checkpoint_dir(), (f"zh, the Chinese BERT: all-MiniLM-L6-v2's English vocabulary lacks "
                                          f"{shown} of this text. The text is mostly English, and the Chinese "
                                          f"vocabulary spells English words letter by letter; --checkpoint en keeps "
                                          f"them whole but reads {shown} as [UNK]")
    return default_checkpoint_dir(), "all-MiniLM-L6-v2 (English): the text is not Chinese"


def checkpoint_for_text(text: str) -> str:
    """The shipped checkpoint for ``text`` (``checkpoint_choice``)."""
    return checkpoint_choice(text)[0]
