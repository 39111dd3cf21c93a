"""BERT's tokenizer algorithm, fast and with offsets: what ``BasicTokenizer`` and
``WordpieceTokenizer`` in ``tokenization_bert.py`` compute, plus, for every wordpiece, the
span of the original text it came from. ``BertTokenizerFast`` (at the end) runs this; a
learner reads and steps through the plain version, ``BertTokenizer``.
tests/core/test_tokenizer_fast.py holds the two equal, id for id and offset for offset, on
the tokenizer corpus and on random Unicode (hypothesis).

The normalization of a character is the plain ``BasicTokenizer.normalize`` itself; the
cleaning, splitting, WordPiece search and spans are this file's own.

Where the speed comes from: text repeats characters and words. Each distinct character's
fate (dropped, a space, an ideograph, its normalized text and how the pre-tokenizer treats
each of its characters) is worked out once and kept; each distinct word's wordpieces are
too. A pure-Python tokenizer spends most of its time in the Unicode look-ups that this
skips on every character after the first.

transformers: none (5.x's ``BertTokenizer`` is the Rust ``tokenizers`` one, 4.x's
``BertTokenizerFast``: the same results, offsets included).
"""

from __future__ import annotations

import functools
import re

from .tokenization_bert import BertTokenizer, Token
from .tokenization_utils import CJK_RANGES, _is_control, _is_punctuation, _is_whitespace, is_chinese_char
from . import unicode_tables

# A "word" below is (text, origins): the normalized characters and, for each, the index
# of the character of the original text it came from (for offsets).
_Word = tuple[str, list[int]]

# What cleaning does with a character of the input text.
_KEEP, _DROP, _SPACE, _CJK = 0, 1, 2, 3
# What the pre-tokenizer does with a character after normalization.
_PLAIN, _PUNCT, _BREAK = 0, 1, 2

# Where a truncated text may be cut between words (word_start checks each candidate
# against the tokenizer's own character classes).
_ASCII_SPACE = re.compile(r"[ \t\n\r]")
_SPACE_OR_IDEOGRAPH = re.compile(
    "[ \t\n\r" + "".join(f"{chr(low)}-{chr(high)}" for low, high in CJK_RANGES + unicode_tables.CJK_EXTRA) + "]")


class FastWordPieces:
    """Text -> [(wordpiece, start, end, word)], by the settings of a ``BasicTokenizer``
    and the vocabulary of a ``WordpieceTokenizer``.

    transformers: none (the Rust ``tokenizers``' BertNormalizer, BertPreTokenizer and
    WordPiece model, with offsets)

    Args:
        basic: the ``BasicTokenizer`` whose settings apply (lower-casing, accents, CJK
            splitting, punctuation splitting, ``never_split``).
        wordpiece: the ``WordpieceTokenizer`` whose vocabulary, unknown token and longest
            word apply.
        do_basic_tokenize: False: WordPiece on whitespace-split text only.
    """

    #: Words whose pieces are remembered; text repeats words, so this is most of the speed.
    CACHE_SIZE = 200_000

    def __init__(self, basic, wordpiece, do_basic_tokenize: bool = True) -> None:
        self.basic = basic
        self.wordpiece = wordpiece
        self.do_basic_tokenize = do_basic_tokenize
        self._chars: dict[str, tuple[int, str, tuple[int, ...]]] = {}
        self._pieces: dict[str, list[tuple[str, int, int]]] = {}

    def _char(self, char: str) -> tuple[int, str, tuple[int, ...]]:
        """(what cleaning does, the normalized text, what the pre-tokenizer does with each
        of its characters)."""
        cached = self._chars.get(char)
        if cached is not None:
            return cached
        basic = self.basic
        cp = ord(char)
        if cp == 0 or cp == 0xFFFD or _is_control(char):
            kind = _DROP
        elif _is_whitespace(char):
            kind = _SPACE
        elif basic.tokenize_chinese_chars and is_chinese_char(cp):
            kind = _CJK
        else:
            kind = _KEEP
        text = basic.normalize(char) if kind in (_KEEP, _CJK) else char
        roles = tuple(
            _BREAK if _is_whitespace(c) else _PUNCT if basic.do_split_on_punc and _is_punctuation(c) else _PLAIN
            for c in text
        )
        self._chars[char] = result = (kind, text, roles)
        return result

    def split_words(self, text: str, offset: int = 0) -> list[_Word]:
        """``text`` -> words, each with the original index (+ ``offset``) of every character:
        ``BasicTokenizer.tokenize`` with origins."""
        never_split = self.basic.never_split
        words: list[_Word] = []
        raw: list[int] = []  # indices of the word being gathered (control characters left out)

        def flush() -> None:
            if raw:
                self._normalize_word(text, raw, offset, never_split, words)
                raw.clear()

        for i, char in enumerate(text):
            kind = self._char(char)[0]
            if kind == _KEEP:
                raw.append(i)
            elif kind == _SPACE:
                flush()
            elif kind == _CJK:  # an ideograph is a word of its own
                flush()
                raw.append(i)
                flush()
            # _DROP: removed; the characters on either side stay one word ("a\x00b" -> "ab")
        flush()
        return words

    def _normalize_word(self, text: str, indices: list[int], offset: int, never_split: set[str], out: list[_Word]) -> None:
        """One whitespace-delimited word: normalize it, then split off its punctuation."""
        if never_split:
            word = "".join(text[i] for i in indices)
            if word in never_split:
                out.append((word, [i + offset for i in indices]))
                return
        chars: list[str] = []
        origins: list[int] = []

        def emit() -> None:
            if chars:
                out.append(("".join(chars), origins.copy()))
                chars.clear()
                origins.clear()

        for i in indices:
            _, normalized, roles = self._char(text[i])
            for c, role in zip(normalized, roles):
                if role == _PLAIN:
                    chars.append(c)
                    origins.append(i + offset)
                else:
                    emit()
                    if role == _PUNCT:
                        out.append((c, [i + offset]))
        emit()

    def word_pieces(self, word: str) -> list[tuple[str, int, int]]:
        """One word -> [(piece, start, end)], character spans within the word:
        ``WordpieceTokenizer.tokenize`` of one word, with spans, remembered."""
        cached = self._pieces.get(word)
        if cached is not None:
            return cached
        vocab, unk = self.wordpiece.vocab, self.wordpiece.unk_token
        if len(word) > self.wordpiece.max_input_chars_per_word:
            pieces = [(unk, 0, len(word))]
        else:
            pieces = []
            start = 0
            while start < len(word):
                end = len(word)
                while end > start:
                    piece = word[start:end] if start == 0 else "##" + word[start:end]
                    if piece in vocab:
                        break
                    end -= 1
                if end == start:  # nothing matches from here: the whole word is unknown
                    pieces = [(unk, 0, len(word))]
                    break
                pieces.append((piece, start, end))
                start = end
        if len(self._pieces) >= self.CACHE_SIZE:
            self._pieces.clear()
        self._pieces[word] = pieces
        return pieces

    def tokens(self, text: str, offset: int, first_word: int) -> tuple[list[Token], int]:
        """``text`` (no special or added tokens in it) -> its wordpieces with spans
        (+ ``offset``) and word ids (from ``first_word``), and how many words it held."""
        if self.do_basic_tokenize:
            words = self.split_words(text, offset)
        else:
            words = [(m.group(), list(range(m.start() + offset, m.end() + offset))) for m in re.finditer(r"\S+", text)]
        out = []
        for index, (word, origins) in enumerate(words):
            for piece, start, end in self.word_pieces(word):
                out.append((piece, origins[start], origins[end - 1] + 1, first_word + index))
        return out, len(words)

    def normalize(self, text: str, offset: int = 0) -> tuple[str, list[int]]:
        """BERT's normalizer over ``text``: control characters dropped, whitespace made a
        space, a space either side of each CJK ideograph, accents stripped and lower-cased
        as this tokenizer does; with the index (+ ``offset``) each character came from."""
        out: list[str] = []
        origins: list[int] = []
        for i, char in enumerate(text):
            kind, normalized, _ = self._char(char)
            if kind == _DROP:
                continue
            piece = " " if kind == _SPACE else f" {normalized} " if kind == _CJK else normalized
            out.append(piece)
            origins += [i + offset] * len(piece)
        return "".join(out), origins

    def word_start(self, text: str, position: int, end: int) -> int:
        """The first index at or after ``position`` (before ``end``) where a word must
        start whatever comes before: whitespace, or a CJK ideograph when they are split off;
        ``end`` if there is none."""
        ideographs = self.do_basic_tokenize and self.basic.tokenize_chinese_chars
        for match in (_SPACE_OR_IDEOGRAPH if ideographs else _ASCII_SPACE).finditer(text, position, end):
            char = match.group()
            if char in " \t\n\r" or self._char(char)[0] == _CJK:
                return match.start()
        return end


class BertTokenizerFast(BertTokenizer):
    r"""``BertTokenizer`` run by ``FastWordPieces``: the same ids, offsets and word ids
    (tests/core/test_tokenizer_fast.py), several times faster on real text
    (``tools/benchmark_tokenizer.py``). What ``AutoTokenizer`` and the pipelines give.

    transformers 4.x: ``models.bert.tokenization_bert_fast.BertTokenizerFast`` (Rust-backed; in
    5.x the Rust one is ``BertTokenizer``, and ``BertTokenizerFast`` a name for it)
    """

    @functools.cached_property
    def _fast(self) -> FastWordPieces:
        return FastWordPieces(self.basic_tokenizer, self.wordpiece_tokenizer, self.do_basic_tokenize)

    def _ordinary_tokens(self, text: str, offset: int, first_word: int) -> tuple[list[Token], int]:
        return self._fast.tokens(text, offset, first_word)

    def _normalize(self, text: str, offset: int = 0) -> tuple[str, list[int]]:
        return self._fast.normalize(text, offset)

    def _word_start(self, text: str, position: int, end: int) -> int:
        return self._fast.word_start(text, position, end)
