"""Which shipped checkpoint suits a text: the reading companion's commands give Chinese
text the Chinese BERT, because the English default cannot spell it."""

from __future__ import annotations

from ..checkpoints.bundled import chinese_checkpoint_dir, default_checkpoint_dir

#: Why Chinese text gets the Chinese BERT by default, as the commands' --help says it.
CHINESE_DEFAULT_REASON = ("mostly-Chinese text gets zh, the Chinese BERT, by default: all-MiniLM-L6-v2's English "
                          "vocabulary turns common characters such as 是 and 首 into [UNK]")


def text_language(text: str) -> str:
    """"zh" when ``text`` holds at least as many CJK ideographs as Latin letters, else "en"."""
    cjk = sum(1 for c in text if "\u4e00" <= c <= "\u9fff" or "\u3400" <= c <= "\u4dbf")
    latin = sum(1 for c in text if c.isascii() and c.isalpha())
    return "zh" if cjk and cjk >= latin else "en"


def checkpoint_for_text(text: str) -> str:
    """The shipped checkpoint for ``text``: the Chinese BERT when the text is mostly
    Chinese (``text_language``), else all-MiniLM-L6-v2."""
    return chinese_checkpoint_dir() if text_language(text) == "zh" else default_checkpoint_dir()
