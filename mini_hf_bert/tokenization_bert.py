"""BERT's WordPiece tokenizer: text -> ids, ids -> text, mirroring transformers'
``tokenization_bert.py`` (``BasicTokenizer``, ``WordpieceTokenizer``, ``BertTokenizer``).

The pipeline, one stage per class, as in google-research/bert's ``tokenization.py``:

    "Héllo, [MASK]世界!"
      1. special tokens in the raw text stay whole          "Héllo, " | [MASK] | "世界!"
      2. BasicTokenizer
         clean: drop NUL, U+FFFD, control chars; whitespace -> " "
         CJK ideographs become words of their own           "Héllo, " | " 世  界 !"
         strip accents (NFD, drop Mn), lower-case           "hello, " | " 世  界 !"
         split on whitespace, isolate punctuation           hello , | 世 界 !
      3. WordpieceTokenizer: greedy longest match, "##"     hello , | 世 界 !
      4. BertTokenizer: [CLS] A [SEP] (B [SEP]), token types, truncation, padding

This file is the algorithm in plain Python, and ``BertTokenizer`` runs it: a breakpoint in
``WordpieceTokenizer.tokenize`` stops every call. ``tokenization_bert_fast.py`` holds
``BertTokenizerFast``, which computes the same once per distinct character and word (tested
equal, id for id and offset for offset); ``AutoTokenizer`` and the pipelines give that one.
The character classes are in ``tokenization_utils.py``, the files in
``tokenization_bert_files.py``, and what every tokenizer has around its algorithm (added
tokens, ``__call__``, padding, windows) in ``tokenization_utils_base.py``.

It equals transformers 5's ``BertTokenizer`` (the Rust ``tokenizers`` one, 4.x's
``BertTokenizerFast``), which disagrees with the pure-Python one (5.x's
``BertTokenizerLegacy``, 4.x's ``BertTokenizer``) on a few inputs: no NFC composition
first, lower-casing character by character, unassigned code points kept, accents stripped
before lower-casing, and the fast tokenizer's Unicode tables. docs/tokenizer.md lists them
with examples; tests/core/test_tokenizer.py checks both lists.
"""

from __future__ import annotations

import bisect
import itertools
import os
from collections.abc import Iterable, Sequence
from typing import Any, Unpack

from .hub_options import SaveOptions, no_upload
from .limits import Limits
from .tokenization_bert_files import VOCAB_FILES_NAMES, read_tokenizer_directory, read_vocab_lines, write_tokenizer_directory
from .tokenization_utils import _is_control, _is_punctuation, _is_whitespace, is_chinese_char, lower_case, strip_accents
from .tokenization_utils_base import _DECODER_CLEANUP, AddedToken, PreTrainedTokenizerBase, _token_id_list, clean_up_tokenization


#: (piece, start, end, word): a wordpiece, its span in characters of the text, and the
#: index of the pre-tokenizer word it came from (``word_ids``).
Token = tuple[str, int, int, int]


def load_vocab(vocab_file: str | os.PathLike) -> dict[str, int]:
    """``vocab.txt`` -> {token: id}: one token per line, the line number is its id.

    transformers: ``models.bert.tokenization_bert_legacy.load_vocab``
    """
    vocab: dict[str, int] = {}
    for index, token in enumerate(read_vocab_lines(vocab_file)):  # each line checked, the file named
        vocab[token] = index  # as transformers: a repeated token keeps its last line
    return vocab


def whitespace_tokenize(text: str) -> list[str]:
    """Split on runs of whitespace (Python's ``str.split``).

    transformers: ``models.bert.tokenization_bert_legacy.whitespace_tokenize``
    """
    return text.split()


def _starts_a_chunk(cleaned: str, position: int, word: str) -> bool:
    """Whether ``word`` is the next space-delimited stretch of ``cleaned`` from ``position``
    on: BasicTokenizer's test for a ``never_split`` word."""
    start = position
    while start < len(cleaned) and cleaned[start] == " ":
        start += 1
    end = start + len(word)
    return (start == 0 or cleaned[start - 1] == " ") and cleaned.startswith(word, start) and cleaned[end:end + 1] in ("", " ")


class BasicTokenizer:
    r"""Cleaning, CJK splitting, accent stripping, lower-casing, punctuation splitting.

    text -> words: ``"Héllo, 世界!"`` -> ``["hello", ",", "世", "界", "!"]``.

    transformers: ``models.bert.tokenization_bert_legacy.BasicTokenizer`` (3.4 / 4.x: in
    ``tokenization_bert``; 5.x's ``BertTokenizer`` does the same in Rust:
    ``tokenizers.normalizers.BertNormalizer`` + ``BertPreTokenizer``).
    google-research/bert: ``tokenization.BasicTokenizer``.

    Args:
        do_lower_case: lower-case every character.
        never_split: words kept as they are (not lower-cased, not split on punctuation).
        tokenize_chinese_chars: make every CJK ideograph a word of its own (Chinese is
            written without spaces; BERT's vocabularies hold single ideographs).
        strip_accents: None follows ``do_lower_case`` (uncased models strip accents,
            cased ones keep them), True or False forces it.
        do_split_on_punc: make every punctuation character a word of its own.
    """

    def __init__(
        self,
        do_lower_case: bool = True,
        never_split: Iterable[str] | None = None,
        tokenize_chinese_chars: bool = True,
        strip_accents: bool | None = None,
        do_split_on_punc: bool = True,
    ) -> None:
        self.do_lower_case = do_lower_case
        self.never_split = set(never_split or ())
        self.tokenize_chinese_chars = tokenize_chinese_chars
        self.strip_accents = strip_accents
        self.do_split_on_punc = do_split_on_punc
        self._strip = do_lower_case if strip_accents is None else bool(strip_accents)

    def tokenize(self, text: str, never_split: Iterable[str] | None = None) -> list[str]:
        """``text`` -> its words."""
        never_split = self.never_split.union(never_split or ())
        text = self._clean_text(text)
        if self.tokenize_chinese_chars:
            # Chinese is written without spaces: each ideograph becomes a word of its own.
            text = self._tokenize_chinese_chars(text)
        words = []
        for word in text.split(" "):  # cleaning made every kind of whitespace a space
            if not word:
                continue
            if word in never_split:
                words.append(word)
            else:
                words.extend(self._run_split_on_punc(self.normalize(word)))
        return words

    def _clean_text(self, text: str) -> str:
        """Drop NUL, U+FFFD (a decoding error's mark) and control characters; make every
        whitespace character a space."""
        out = []
        for char in text:
            if char in "\x00\ufffd" or _is_control(char):
                continue
            out.append(" " if _is_whitespace(char) else char)
        return "".join(out)

    def _tokenize_chinese_chars(self, text: str) -> str:
        """A space on both sides of every CJK ideograph: ``"ab世界"`` -> ``"ab 世  界 "``."""
        return "".join(f" {char} " if is_chinese_char(ord(char)) else char for char in text)

    def normalize(self, word: str) -> str:
        """Accents stripped, then lower-cased, as the settings say: ``"Héllo"`` -> ``"hello"``.
        Both go character by character, as in the fast tokenizer."""
        if self._strip:  # before lower-casing, as the fast tokenizer does
            word = strip_accents(word)
        if self.do_lower_case:
            word = lower_case(word)
        return word

    def _run_split_on_punc(self, word: str) -> list[str]:
        """``"hello,"`` -> ``["hello", ","]``: each punctuation character a word of its own
        (normalizing can make one: "≠" loses its stroke and is "="). Whitespace separates
        words too, as in the fast tokenizer, which splits after normalizing."""
        words: list[str] = []
        current: list[str] = []
        for char in word:
            split = self.do_split_on_punc and _is_punctuation(char)
            if _is_whitespace(char) or split:
                if current:
                    words.append("".join(current))
                    current = []
                if split:
                    words.append(char)
            else:
                current.append(char)
        if current:
            words.append("".join(current))
        return words


class WordpieceTokenizer:
    r"""Greedy longest-match-first WordPiece: ``"unaffable"`` -> ``["un", "##aff", "##able"]``.

    From the start of the word, take the longest prefix in the vocabulary; continue from
    where it ended with pieces spelled ``"##" + rest``. A word with no match at some point,
    or longer than ``max_input_chars_per_word`` characters, becomes ``unk_token`` whole.

    transformers: ``models.bert.tokenization_bert_legacy.WordpieceTokenizer`` (3.4 / 4.x: in
    ``tokenization_bert``; in Rust, ``tokenizers.models.WordPiece``).
    google-research/bert: ``tokenization.WordpieceTokenizer``.
    """

    def __init__(self, vocab: dict[str, int], unk_token: str, max_input_chars_per_word: int = 100) -> None:
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word

    def tokenize(self, text: str) -> list[str]:
        """Whitespace-separated words -> their pieces."""
        output_tokens = []
        for word in whitespace_tokenize(text):
            if len(word) > self.max_input_chars_per_word:
                output_tokens.append(self.unk_token)
                continue
            pieces = []
            start = 0
            while start < len(word):
                end = len(word)
                while end > start:  # the longest piece from `start` that the vocabulary has
                    piece = word[start:end] if start == 0 else "##" + word[start:end]
                    if piece in self.vocab:
                        break
                    end -= 1
                if end == start:  # nothing matches from here: the whole word is unknown
                    pieces = [self.unk_token]
                    break
                pieces.append(piece)
                start = end
            output_tokens.extend(pieces)
        return output_tokens


class BertTokenizer(PreTrainedTokenizerBase):
    r"""The BERT tokenizer: ``BasicTokenizer`` then ``WordpieceTokenizer`` over ``vocab.txt``,
    plus the special tokens, truncation and padding a model input needs.

    ``tokenizer("Hello world", "Second text")`` ->
    ``{"input_ids": [101, ..., 102, ..., 102], "token_type_ids": [0, ..., 1], "attention_mask": [1, ...]}``.

    transformers: ``models.bert.tokenization_bert.BertTokenizer`` (3.4 / 4.x pure Python;
    5.x the Rust-backed one, 4.x's ``BertTokenizerFast``). Equal ids, token types,
    attention masks and offsets to 5.x's; see the module docstring for where 4.x's Python
    tokenizer differs. google-research/bert: ``tokenization.FullTokenizer`` plus
    ``run_classifier.convert_single_example`` (special tokens, segment ids, truncation).

    Args:
        vocab_file: path of ``vocab.txt``; or pass ``vocab`` (a {token: id} dict) instead.
        do_lower_case, tokenize_chinese_chars, strip_accents, never_split: see ``BasicTokenizer``.
        do_basic_tokenize: run ``BasicTokenizer`` first (else WordPiece on whitespace-split text).
        unk_token, sep_token, pad_token, cls_token, mask_token: the special tokens; each
            must be in the vocabulary.
        model_max_length: the longest input the model takes (512 for BERT), used by
            ``truncation=True`` and ``padding="max_length"`` without ``max_length``.
        clean_up_tokenization_spaces: ``decode`` also removes spaces before punctuation
            (transformers' string-level clean-up; default False, as 5.x).
        padding_side / truncation_side: where padding goes and which end truncation cuts,
            "right" (default) or "left" (keep the end of a long text).
        extra_special_tokens: more special tokens (5.x's name; 4.x's
            ``additional_special_tokens``), added after the vocabulary where new.
        bos_token / eos_token: unset for BERT; set, they are special tokens (added where new).
        add_bos_token / add_eos_token: accepted and kept, and change nothing, as in
            transformers 5.x for BERT (its template has no BOS or EOS slot).
        limits: the longest text read whole (``mini_hf_bert.Limits``, ``text_chars``);
            a truncated text is read only as far as the tokens it keeps.

    A special token the vocabulary lacks (Google's and transformers' tokenizers accept a
    vocabulary without ``[PAD]`` or ``[MASK]``) is added after it, as transformers does.
    """

    def __init__(
        self,
        vocab_file: str | os.PathLike | None = None,
        do_lower_case: bool = True,
        do_basic_tokenize: bool = True,
        never_split: Iterable[str] | None = None,
        unk_token: str = "[UNK]",
        sep_token: str = "[SEP]",
        pad_token: str = "[PAD]",
        cls_token: str = "[CLS]",
        mask_token: str = "[MASK]",
        tokenize_chinese_chars: bool = True,
        strip_accents: bool | None = None,
        model_max_length: int | None = None,
        clean_up_tokenization_spaces: bool = False,
        *,
        vocab: dict[str, int] | None = None,
        padding_side: str = "right",
        truncation_side: str = "right",
        extra_special_tokens: Sequence[str] | None = None,
        additional_special_tokens: Sequence[str] | None = None,
        bos_token: str | AddedToken | None = None,
        eos_token: str | AddedToken | None = None,
        add_bos_token: bool = False,
        add_eos_token: bool = False,
        limits: Limits | None = None,
    ) -> None:
        if (vocab_file is None) == (vocab is None):
            raise TypeError("BertTokenizer needs exactly one of vocab_file (a vocab.txt path) or vocab (a dict)")
        self.vocab_file = os.fspath(vocab_file) if vocab_file is not None else None
        self.vocab = load_vocab(vocab_file) if vocab is None else dict(vocab)
        self.ids_to_tokens = {i: t for t, i in self.vocab.items()}
        self.do_lower_case = do_lower_case
        self.do_basic_tokenize = do_basic_tokenize
        self.tokenize_chinese_chars = tokenize_chinese_chars
        self.strip_accents = strip_accents
        self.basic_tokenizer = BasicTokenizer(do_lower_case, never_split, tokenize_chinese_chars, strip_accents)
        self.wordpiece_tokenizer = WordpieceTokenizer(self.vocab, getattr(unk_token, "content", unk_token))
        # The special tokens, padding and truncation: what every transformers tokenizer has.
        super().__init__(
            self.vocab_file or "the vocab dict",
            {"do_lower_case": do_lower_case, "do_basic_tokenize": do_basic_tokenize, "never_split": never_split,
             "tokenize_chinese_chars": tokenize_chinese_chars, "strip_accents": strip_accents},
            unk_token=unk_token, sep_token=sep_token, pad_token=pad_token, cls_token=cls_token, mask_token=mask_token,
            model_max_length=model_max_length, clean_up_tokenization_spaces=clean_up_tokenization_spaces,
            padding_side=padding_side, truncation_side=truncation_side, extra_special_tokens=extra_special_tokens,
            additional_special_tokens=additional_special_tokens, bos_token=bos_token, eos_token=eos_token,
            add_bos_token=add_bos_token, add_eos_token=add_eos_token, limits=limits,
        )


    # ------------------------------------------------------------- the algorithm, with spans
    # What PreTrainedTokenizerBase calls between special and added tokens: BasicTokenizer
    # then WordpieceTokenizer, as the module docstring draws them, and for each wordpiece
    # the span of the text it came from (``return_offsets_mapping``).

    def _ordinary_tokens(self, text: str, offset: int, first_word: int) -> tuple[list[Token], int]:
        """``text`` (no special or added tokens in it) -> [(wordpiece, start, end, word)]:
        spans (+ ``offset``) in characters of the text, word ids from ``first_word``; and
        how many words it held."""
        words = self.basic_tokenizer.tokenize(text) if self.do_basic_tokenize else whitespace_tokenize(text)
        tokens = []
        for index, (word, origins) in enumerate(zip(words, self._word_origins(text, words))):
            pieces = self.wordpiece_tokenizer.tokenize(word)
            lengths = [len(piece.removeprefix("##")) for piece in pieces]
            if sum(lengths) != len(word):  # the unknown token stands for the whole word
                pieces, lengths = pieces[:1], [len(word)]
            start = 0
            for piece, end in zip(pieces, itertools.accumulate(lengths)):
                tokens.append((piece, origins[start] + offset, origins[end - 1] + offset + 1, first_word + index))
                start = end
        return tokens, len(words)

    def _word_origins(self, text: str, words: list[str]) -> list[list[int]]:
        """For each word, the index in ``text`` of each of its characters.

        Each word is found again in the text BasicTokenizer cut it from, with the index each
        character came from: the cleaned, normalized text (``_normalize``), or the cleaned
        text as written for a ``never_split`` word kept whole. Only whitespace lies between
        two words, so a word's first match after the previous word is where it came from."""
        never_split = self.basic_tokenizer.never_split if self.do_basic_tokenize else set()
        if not self.do_basic_tokenize:
            streams = [(text, list(range(len(text))))] * 2
        else:  # the text before normalizing is searched for never_split words only
            streams = [self._normalize(text), self._basic_text(text, normalizing=False) if never_split else ("", [])]
        cursors = [0, 0]  # where each stream's next word may start
        found = []
        for word in words:
            kept = int(word in never_split and _starts_a_chunk(streams[1][0], cursors[1], word))
            searched, origins = streams[kept]
            end = searched.find(word, cursors[kept]) + len(word)
            found.append(origins[end - len(word):end])
            cursors[kept] = end
            # The other stream goes on after this word's last character.
            cursors[1 - kept] = bisect.bisect_right(streams[1 - kept][1], origins[end - 1])
        return found

    def _normalize(self, text: str, offset: int = 0) -> tuple[str, list[int]]:
        """BERT's normalizer: the text BasicTokenizer splits into words, with the index
        (+ ``offset``) each character came from. Added tokens are found in it too."""
        return self._basic_text(text, offset)

    def _basic_text(self, text: str, offset: int = 0, normalizing: bool = True) -> tuple[str, list[int]]:
        """BasicTokenizer's cleaning, CJK spacing and (``normalizing``) normalization, one
        character at a time so that each output character knows where it came from."""
        basic = self.basic_tokenizer
        out: list[str] = []
        origins: list[int] = []
        for index, char in enumerate(text):
            piece = basic._clean_text(char)  # "" (dropped), " " (whitespace) or the character
            if basic.tokenize_chinese_chars:
                piece = basic._tokenize_chinese_chars(piece)  # "中" -> " 中 "
            if normalizing:
                piece = basic.normalize(piece)
            out.append(piece)
            origins += [index + offset] * len(piece)
        return "".join(out), origins

    def _word_start(self, text: str, position: int, end: int) -> int:
        """The first index at or after ``position`` (before ``end``) where a word starts
        whatever came before it: whitespace, or a CJK ideograph where they are split off;
        ``end`` if there is none. A long text cut by truncation is read up to such a place."""
        ideographs = self.do_basic_tokenize and self.tokenize_chinese_chars
        for index in range(position, end):
            char = text[index]
            if char in " \t\n\r" or (ideographs and not _is_control(char) and is_chinese_char(ord(char))):
                return index
        return end

    def _pre_tokenize(self, text: str) -> list[str]:  # what train_new_from_iterator counts
        return self.basic_tokenizer.tokenize(text) if self.do_basic_tokenize else whitespace_tokenize(text)

    def tokenize(self, text: str) -> list[str]:
        """``text`` -> wordpieces: ``"unaffable"`` -> ``["un", "##aff", "##able"]``."""
        self._check_length(self._check_text(text, "text"), "text")
        pieces = [token for token, _, _, _ in self._tokens_with_offsets(text)]
        if not self._added:
            return pieces
        return [self._id_to_token(self._added[p][0]) if p in self._added else p for p in pieces]

    # ------------------------------------------------------------- special tokens
    def build_inputs_with_special_tokens(self, token_ids_0: list[int], token_ids_1: list[int] | None = None) -> list[int]:
        """``[CLS] A [SEP]`` or ``[CLS] A [SEP] B [SEP]``."""
        cls, sep = [self.cls_token_id], [self.sep_token_id]
        if token_ids_1 is None:
            return cls + list(token_ids_0) + sep
        return cls + list(token_ids_0) + sep + list(token_ids_1) + sep

    def create_token_type_ids_from_sequences(self, token_ids_0: list[int], token_ids_1: list[int] | None = None) -> list[int]:
        """Segment ids: 0 for ``[CLS] A [SEP]``, 1 for ``B [SEP]``."""
        first = [0] * (len(token_ids_0) + 2)
        return first if token_ids_1 is None else first + [1] * (len(token_ids_1) + 1)

    def get_special_tokens_mask(self, token_ids_0: list[int], token_ids_1: list[int] | None = None,
                                already_has_special_tokens: bool = False) -> list[int]:
        """1 where ``build_inputs_with_special_tokens`` adds a special token, else 0; with
        ``already_has_special_tokens``, 1 at every special token id already in ``token_ids_0``."""
        if already_has_special_tokens:
            special = set(self.all_special_ids)
            return [int(i in special) for i in list(token_ids_0) + list(token_ids_1 or [])]
        first = [1] + [0] * len(token_ids_0) + [1]
        return first if token_ids_1 is None else first + [0] * len(token_ids_1) + [1]

    def num_special_tokens_to_add(self, pair: bool = False) -> int:
        return 3 if pair else 2

    # ------------------------------------------------------------- ids -> text
    def convert_tokens_to_string(self, tokens: Sequence[str]) -> str:
        """Join wordpieces: ``["un", "##aff", "##able"]`` -> ``"unaffable"``."""
        return " ".join(tokens).replace(" ##", "").strip()

    def decode(
        self, token_ids, skip_special_tokens: bool = False, clean_up_tokenization_spaces: bool | None = None
    ) -> str:
        """Ids -> text: pieces joined (``##`` pieces glued to the previous one), as the fast
        WordPiece decoder does, including its clean-up of spaces before ``. ? ! ,``."""
        tokens = self.convert_ids_to_tokens(_token_id_list(token_ids, "token_ids"), skip_special_tokens=skip_special_tokens)
        parts = []
        for i, token in enumerate(tokens):
            if i > 0:
                token = token[2:] if token.startswith("##") else " " + token
            for dirty, clean in _DECODER_CLEANUP:
                token = token.replace(dirty, clean)
            parts.append(token)
        text = "".join(parts)
        if clean_up_tokenization_spaces if clean_up_tokenization_spaces is not None else self.clean_up_tokenization_spaces:
            text = clean_up_tokenization(text)
        return text

    # ------------------------------------------------------------- files (tokenization_bert_files)
    @classmethod
    def _from_directory(cls, directory: str, overrides: dict[str, Any]) -> BertTokenizer:
        found = read_tokenizer_directory(directory, overrides)
        tokenizer = cls(found.vocab_file, vocab=found.vocab, **found.kwargs)
        tokenizer._load_added(found.added, found.extra, found.source)
        tokenizer.chat_template = found.chat_template
        return tokenizer

    def save_pretrained(self, save_directory: str | os.PathLike, legacy_format: bool | None = None,
                        save_jinja_files: bool = True, push_to_hub: bool = False,
                        **options: Unpack[SaveOptions]) -> list[str]:
        """Write ``vocab.txt`` and ``tokenizer.json`` (``legacy_format``: True for the first
        only, False for the second only, as transformers 4.x), ``tokenizer_config.json``,
        ``special_tokens_map.json`` and a chat template's ``chat_template.jinja`` (in the
        config with ``save_jinja_files=False``), into ``save_directory`` (created if needed),
        each whole or not at all (``file_utils``). ``push_to_hub`` and transformers' other
        saving keywords: as ``hub_options.no_upload`` says."""
        no_upload(options, push_to_hub, f"{type(self).__name__}.save_pretrained")
        return write_tokenizer_directory(self, save_directory, legacy_format, save_jinja_files)

    #: The file save_pretrained writes the vocabulary to (transformers' tokenizer tests).
    vocab_files_names = VOCAB_FILES_NAMES
    #: The inputs a BERT model takes, in order (Trainer and the collators keep these columns).
    model_input_names = ["input_ids", "token_type_ids", "attention_mask"]
