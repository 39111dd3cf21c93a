"""What every transformers tokenizer offers around its algorithm, as transformers'
``tokenization_utils_base.py``: the encoding returned (``BatchEncoding``), added and special
tokens, ``__call__`` with truncation, windows, padding and offsets, ``pad`` (what data
collators call), ``batch_decode``, ``from_pretrained``, and the tokenizer files' readers.

The algorithm itself, BERT's normalizer, pre-tokenizer and WordPiece, is in
``tokenization_bert.py``; ``BertTokenizer`` subclasses ``PreTrainedTokenizerBase`` and
supplies what this class calls: ``_ordinary_tokens`` (text without special or added
tokens to wordpieces with spans), ``_normalize`` and ``_word_start`` (its normalizer, and
where a text may be cut between words), ``vocab`` (a {token: id} dict),
``build_inputs_with_special_tokens`` and its siblings (the [CLS] A [SEP] B [SEP]
template), ``decode`` and ``_from_directory``.
"""

from __future__ import annotations

import itertools
import json
import logging
import operator
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, TypedDict, Unpack

from .file_utils import directory_lock, no_remote_code, read_json, unfinished_move_in
from .hub_options import take_transformers_keywords
from .limits import Limits
from .progress import progress_bar
from .wordpiece_trainer import learn_wordpiece

logger = logging.getLogger(__name__)

TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
TOKENIZER_FILE = "tokenizer.json"
SPECIAL_TOKENS_MAP_FILE = "special_tokens_map.json"
#: transformers' "no limit" for model_max_length when a tokenizer_config.json gives none.
VERY_LARGE_INTEGER = int(1e30)
#: When truncation needs only a text's first tokens, it is read in stretches: this many
#: characters first (a few hundred tokens of English or Chinese), each next stretch twice
#: the last, so a text costs at most about twice what its kept tokens need.
FIRST_STRETCH_CHARS = 4096


class TokenizerFileError(ValueError):
    """A vocabulary or tokenizer file that cannot be used; the message names the file.

    transformers: none (it raises ValueError and OSError)
    """


class ConflictingArgumentError(TypeError, AttributeError):
    """An argument named like one of the tokenizer's methods (``add_special_tokens=True``):
    a TypeError (a wrong argument), and the AttributeError transformers raises for it.

    transformers: none (``PreTrainedTokenizerBase.__init__`` raises a plain AttributeError)
    """


class AddedToken(NamedTuple):
    """A token added to the vocabulary (``tokenizer.add_tokens``): matched in the text
    before WordPiece, so it is never split, wherever it stands (also inside a word).

    transformers: ``tokenization_utils_base.AddedToken``

    Args:
        content: the token's text.
        special: a special token: ``skip_special_tokens`` drops it, and it is matched in
            the raw text.
        normalized: matched in the normalized text (lower-cased, accents stripped, as the
            tokenizer normalizes), so ``"Newword"`` matches ``"NEWWORD"`` in an uncased
            model. None: True for ordinary tokens, False for special ones.
        lstrip / rstrip: the match also takes the whitespace left / right of a token that
            is matched in the raw text (its offsets cover it; the ids do not change, since
            BERT drops whitespace).
        single_word: accepted only as False (match inside words too, as BERT's own tokens).
    """

    content: str
    special: bool = False
    normalized: bool | None = None
    lstrip: bool = False
    rstrip: bool = False
    single_word: bool = False

    def __str__(self) -> str:
        return self.content  # as transformers' AddedToken


class CharSpan(NamedTuple):
    """A token's characters in its text: ``text[start:end]``.

    transformers: ``tokenization_utils_base.CharSpan``
    """

    start: int
    end: int


class WordPieceModel(NamedTuple):
    """What transformers' code reads of a Rust tokenizer's model: the prefix that marks a
    piece continuing a word, which tells its token-classification pipeline a word's first
    piece from the rest.

    transformers: none (tokenizers: ``models.WordPiece.continuing_subword_prefix``)
    """

    continuing_subword_prefix: str = "##"


class BackendTokenizer(NamedTuple):
    """A fast tokenizer's ``backend_tokenizer`` (the Rust ``tokenizers.Tokenizer``), as far
    as transformers' own code reads it: its ``model``.

    transformers: none (tokenizers: ``Tokenizer``)
    """

    model: WordPieceModel = WordPieceModel()


class BatchEncoding(dict):
    """What ``BertTokenizer.__call__`` returns: a dict of ``input_ids``, ``token_type_ids``,
    ``attention_mask`` (and ``offset_mapping`` ...), also readable as attributes, as
    transformers' ``BatchEncoding``.

    transformers: ``tokenization_utils_base.BatchEncoding``
    """

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    #: Per row, the word index and sequence index of every token (None for special and
    #: padding tokens): what ``word_ids`` / ``sequence_ids`` read. Set by the tokenizer's
    #: ``__call__``; an encoding built by hand or by ``pad`` has none.
    _token_words: list[list[int | None]] | None = None
    _token_sequences: list[list[int | None]] | None = None
    _token_offsets: list[list[tuple[int, int]]] | None = None

    def convert_to_tensors(self, tensor_type: str | None = None, prepend_batch_axis: bool = False) -> BatchEncoding:
        """Turn every value into a tensor in place ("pt" or "np"; None leaves them), with a
        batch axis first where ``prepend_batch_axis``; returns the encoding. Unequal rows
        cannot make one tensor: the error names the key and says to pad.

        transformers: ``tokenization_utils_base.BatchEncoding.convert_to_tensors``
        """
        _check_return_tensors(tensor_type)
        if tensor_type is None:
            return self
        for key, value in self.items():
            if not isinstance(value, (list, tuple)) and _tensor_kind(value) is not None:
                continue  # a tensor already
            try:
                self[key] = _to_tensor([value] if prepend_batch_axis else value, tensor_type, exact=True)
            except ValueError as e:
                raise ValueError(f"{key}: cannot make one tensor of rows of unequal length ({e}); pad them "
                                 f"(padding=True) or truncate them first") from None
        return self

    def to(self, device) -> BatchEncoding:
        """Move tensor values to ``device`` (like transformers)."""
        moved = BatchEncoding({k: v.to(device) if hasattr(v, "to") else v for k, v in self.items()})
        moved._token_words, moved._token_sequences = self._token_words, self._token_sequences
        moved._token_offsets = self._token_offsets
        return moved

    def _row(self, table: list | None, batch_index: int, what: str) -> list[int | None]:
        if table is None:
            raise ValueError(f"{what}() is available only on what the tokenizer's __call__ returned")
        if not isinstance(batch_index, int) or not -len(table) <= batch_index < len(table):
            raise IndexError(f"batch_index {batch_index!r} is out of range for a batch of {len(table)}")
        return list(table[batch_index])

    def word_ids(self, batch_index: int = 0) -> list[int | None]:
        """For each token of row ``batch_index``, the index of the word it came from (words
        as the pre-tokenizer splits them: at whitespace, punctuation and CJK characters;
        counted from 0 in each sequence of a pair); None for special and padding tokens."""
        return self._row(self._token_words, batch_index, "word_ids")

    def _indices(self, first: int, second: int | None) -> tuple[int, int]:
        """transformers' overloading: (index) for a batch of one, (batch_index, index) otherwise."""
        if second is None:
            rows = len(self._token_words or [])
            if rows > 1:
                raise ValueError(f"this encoding holds {rows} rows: pass (batch_index, index)")
            return 0, first
        return first, second

    def token_to_chars(self, batch_or_token_index: int, token_index: int | None = None) -> CharSpan | None:
        """The characters token ``token_index`` came from, in its own text (the pair's for a
        token of the pair); None for special and padding tokens."""
        batch_index, token_index = self._indices(batch_or_token_index, token_index)
        sequences = self._row(self._token_sequences, batch_index, "token_to_chars")
        if sequences[token_index] is None:
            return None
        return CharSpan(*self._token_offsets[batch_index][token_index])

    def char_to_token(self, batch_or_char_index: int, char_index: int | None = None, sequence_index: int = 0) -> int | None:
        """The token holding character ``char_index`` of the text (``sequence_index`` 0) or
        of the pair (1); None for a character no token holds (a space)."""
        batch_index, char_index = self._indices(batch_or_char_index, char_index)
        sequences = self._row(self._token_sequences, batch_index, "char_to_token")
        for index, (sequence, (start, end)) in enumerate(zip(sequences, self._token_offsets[batch_index])):
            if sequence == sequence_index and start <= char_index < end:
                return index
        return None

    def sequence_ids(self, batch_index: int = 0) -> list[int | None]:
        """For each token of row ``batch_index``: 0 (the text), 1 (the pair), or None
        (special and padding tokens)."""
        return self._row(self._token_sequences, batch_index, "sequence_ids")


#: What ``pad`` fills each padded key with (input_ids: the [PAD] id).
_PAD_FILLS = {"input_ids": None, "token_type_ids": 0, "attention_mask": 0, "special_tokens_mask": 1}


def _check_return_tensors(return_tensors: str | None) -> None:
    if return_tensors not in (None, "pt", "np"):
        raise ValueError(f"return_tensors={return_tensors!r}: expected None, 'pt' or 'np'")


def _check_multiple(pad_to_multiple_of: int | None) -> None:
    if pad_to_multiple_of is not None and (not isinstance(pad_to_multiple_of, int) or pad_to_multiple_of < 1):
        raise ValueError(f"pad_to_multiple_of must be a positive int, got {pad_to_multiple_of!r}")


def _round_up(width: int, multiple: int | None) -> int:
    return width if not multiple else -(-width // multiple) * multiple


def _tensor_kind(value: Any) -> str | None:
    """"pt" for a torch tensor (or a list of them), "np" for a numpy array, else None."""
    first = value[0] if isinstance(value, (list, tuple)) and value else value
    module = type(first).__module__.split(".")[0]
    if module == "torch" and hasattr(first, "tolist"):
        return "pt"
    if module == "numpy" and hasattr(first, "tolist"):
        return "np"
    return None


def _take_stacked_mask(encoded_inputs: Any) -> tuple[Any, list | None]:
    """Split off a batch's per-example attention masks of 2+ dimensions (tensors or arrays),
    which ``pad`` stacks rather than pads: (the other inputs, the masks), or (the inputs,
    None) when the masks are token rows. The caller's dict is left as it was."""
    if not isinstance(encoded_inputs, Mapping) or "attention_mask" not in encoded_inputs:
        return encoded_inputs, None
    masks = encoded_inputs["attention_mask"]
    if isinstance(masks, (list, tuple)) and masks and getattr(masks[0], "ndim", 0) > 1:
        return {key: value for key, value in encoded_inputs.items() if key != "attention_mask"}, list(masks)
    return encoded_inputs, None


def _stack_masks(masks: list, return_tensors: str | None) -> Any:
    """Per-example masks of one shape as one (batch, ...) tensor or array."""
    shapes = {tuple(mask.shape) for mask in masks}
    if len(shapes) > 1:
        raise ValueError(f"pad: the examples' attention masks have different shapes {sorted(shapes)}; masks of two "
                         "or more dimensions are stacked, not padded, so they must share one shape")
    if _tensor_kind(masks) == "pt":
        import torch

        stacked = torch.stack(list(masks))
        return stacked.numpy() if return_tensors == "np" else stacked
    import numpy

    stacked = numpy.stack(masks)
    if return_tensors == "pt":
        import torch

        return torch.from_numpy(stacked)
    return stacked


def _to_tensor(rows: Any, return_tensors: str, exact: bool = False) -> Any:
    """Token rows as int64 tensors; with ``exact``, whatever the values are (float labels stay floats)."""
    if return_tensors == "np":
        try:
            import numpy
        except ImportError:
            raise RuntimeError("return_tensors='np' needs numpy installed") from None
        return numpy.array(rows) if exact else numpy.array(rows, dtype=numpy.int64)
    import torch

    return torch.tensor(rows) if exact else torch.tensor(rows, dtype=torch.long)


_PADDING = {False: None, "do_not_pad": None, True: "longest", "longest": "longest", "max_length": "max_length"}
_TRUNCATION = {False: None, "do_not_truncate": None, True: "longest_first", "longest_first": "longest_first",
               "only_first": "only_first", "only_second": "only_second"}
#: transformers' string-level clean-up (``clean_up_tokenization``): no space before
#: ``. ? ! ,`` and in contractions.
_CLEAN_UP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
             (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))
#: The fast WordPiece decoder's clean-up, applied to each " token" it joins: the same, and " do not".
_DECODER_CLEANUP = _CLEAN_UP[:7] + ((" do not", " don't"),) + _CLEAN_UP[7:]


#: The special tokens a BERT tokenizer names (``add_special_tokens`` keys).
#: The ``deprecation_warnings`` key of the "longer than the specified maximum" warning (transformers').
_TOO_LONG = "sequence-length-is-longer-than-the-specified-maximum"
_SPECIAL_TOKEN_KEYS = ("unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
#: Special tokens transformers' tokenizers all have and BERT's leaves unset (None).
_OPTIONAL_SPECIAL_TOKEN_KEYS = ("bos_token", "eos_token")


def _is_batch_of_pairs(text: Any, is_split_into_words: bool) -> bool:
    """``[(text, pair), ...]``, as transformers reads a batch: each item a 2-tuple (or list)
    of texts; with ``is_split_into_words``, of word lists (an item whose first element is
    a word is one text, not a pair)."""
    if not isinstance(text, (list, tuple)) or not text:
        return False
    if is_split_into_words:
        return all(isinstance(item, (list, tuple)) and len(item) == 2
                   and all(isinstance(part, (list, tuple)) for part in item) for item in text)
    return all(isinstance(item, (list, tuple)) and len(item) == 2 for item in text)


def _padded(row: list, width: int, fill: Any, side: str) -> list:
    """``row`` filled with ``fill`` up to ``width`` on ``side``; a row as long or longer stays as it is."""
    missing = max(0, width - len(row))
    return row + [fill] * missing if side == "right" else [fill] * missing + row


def _max_length_width(width: int) -> int:
    """The width ``padding="max_length"`` pads to (``max_length``, else ``model_max_length``),
    refused when the tokenizer has no ``model_max_length`` to fall back on."""
    if width >= VERY_LARGE_INTEGER:
        raise ValueError("padding='max_length' needs max_length (this tokenizer has no model_max_length)")
    return width


def _side(value: Any, argument: str) -> str:
    if value not in ("right", "left"):
        raise ValueError(f"{argument}={value!r}: expected 'right' or 'left'")
    return value


def _is_choice(value: Any, table: Mapping) -> bool:
    """``value`` is one of ``table``'s keys, as a bool or a str (``1 in {True: ...}`` is true in Python)."""
    return isinstance(value, (bool, str)) and value in table


def _kind(value: Any) -> str:
    return type(value).__name__ if not isinstance(value, (list, tuple)) else f"a {type(value).__name__} of {sorted({type(v).__name__ for v in value})}"


def _token_id_list(ids: Any, argument: str) -> list[int]:
    """An int, a list of ints, or a 1-D tensor / array of them -> a list of ints."""
    if hasattr(ids, "tolist"):
        ids = ids.tolist()
    if isinstance(ids, int) and not isinstance(ids, bool):
        return [ids]
    try:
        if not isinstance(ids, (list, tuple)) or any(isinstance(i, bool) for i in ids):
            raise TypeError
        return [operator.index(i) for i in ids]  # ints, numpy ints, 0-d tensors
    except TypeError:
        raise TypeError(f"{argument} must be an int or a list of ints (or a 1-D tensor), got {_kind(ids)}") from None


def _as_added_token(given: Any, special: bool, argument: str) -> AddedToken:
    """A str or an AddedToken (ours, or transformers' / tokenizers') -> our AddedToken."""
    if isinstance(given, str):
        token = AddedToken(given, special=special)
    elif isinstance(getattr(given, "content", None), str):
        if getattr(given, "single_word", False):
            raise ValueError(f"{argument}: AddedToken({given.content!r}, single_word=True) is not supported; "
                             f"added tokens match anywhere, as BERT's own do")
        token = AddedToken(given.content, special=bool(getattr(given, "special", False)) or special,
                           normalized=getattr(given, "normalized", None), lstrip=bool(getattr(given, "lstrip", False)),
                           rstrip=bool(getattr(given, "rstrip", False)))
    else:
        raise TypeError(f"{argument} must be a str or an AddedToken, got {type(given).__name__}")
    if not token.content or token.content.isspace():
        raise ValueError(f"{argument}: an added token must hold a non-space character, got {token.content!r}")
    return token


def stretches(text: str, start: int, end: int, boundary: Callable[[str, int, int], int]) -> Iterator[tuple[int, int]]:
    """``text[start:end]`` as consecutive (start, end) stretches, each ending where
    ``boundary(text, position, end)`` says a word begins (at or after ``position``), the
    first about ``FIRST_STRETCH_CHARS`` long and each next one twice the last. Tokenizing
    the stretches one by one gives the tokens of the whole, so a reader that needs only the
    first tokens can stop early.

    transformers: none (its tokenizers read the whole text before truncating)
    """
    size = FIRST_STRETCH_CHARS
    while start < end:
        cut = boundary(text, start + size, end) if start + size < end else end
        yield start, cut
        start, size = cut, size * 2


def _windows(tokens: list, keep: int, stride: int, overflow: bool, argument: str, left: bool = False) -> list[list]:
    """``tokens`` cut to ``keep``: the first window only, or with ``overflow`` every window
    of ``keep`` tokens, each starting ``stride`` tokens before the previous one ended (the
    last may be shorter). ``[t0 … t9]``, keep 4, stride 1 -> ``[t0-t3] [t3-t6] [t6-t9]``.
    ``left``: the same from the end (``truncation_side="left"``): ``[t6-t9] [t3-t6] [t0-t3]``."""
    if left:
        return [window[::-1] for window in _windows(tokens[::-1], keep, stride, overflow, argument)]
    if len(tokens) <= keep:
        return [tokens]
    if keep == 0:  # nothing fits: an empty window, then the whole sequence (as the Rust tokenizer)
        return [[], tokens] if overflow else [[]]
    if stride >= keep:
        raise ValueError(
            f"stride={stride} must be less than the {keep} tokens of {argument} that fit in a window "
            f"(max_length less the special tokens and any other sequence); lower stride or raise max_length"
        )
    if not overflow:
        return [tokens[:keep]]
    step = keep - stride
    out = []
    for start in range(0, len(tokens), step):
        out.append(tokens[start:start + keep])
        if start + keep >= len(tokens):
            break
    return out


class PreTrainedTokenizerBase:
    """The API transformers' tokenizers share, over a subclass's vocabulary and algorithm
    (see the module docstring for what the subclass supplies).

    transformers: ``tokenization_utils_base.PreTrainedTokenizerBase``
    """

    def __init__(
        self,
        source: str,
        init_kwargs: dict[str, Any],
        *,
        unk_token: str | AddedToken,
        sep_token: str | AddedToken,
        pad_token: str | AddedToken,
        cls_token: str | AddedToken,
        mask_token: str | AddedToken,
        model_max_length: int | None,
        clean_up_tokenization_spaces: bool,
        padding_side: str,
        truncation_side: str,
        extra_special_tokens: Sequence[str] | None,
        additional_special_tokens: Sequence[str] | None,
        bos_token: str | AddedToken | None,
        eos_token: str | AddedToken | None,
        add_bos_token: bool,
        add_eos_token: bool,
        limits: Limits | None = None,
    ) -> None:
        """The special tokens, padding and truncation, after the subclass has set ``self.vocab``
        (a special token the vocabulary lacks is added after it, as transformers does).
        ``source`` names the vocabulary in messages; ``init_kwargs`` are the subclass's own
        arguments, recorded with these. The arguments are the subclass's (``BertTokenizer``)."""
        # transformers' attributes, for its tools and tests rather than for this class:
        # what the tokenizer was built with (save_pretrained's tests read init_kwargs); each
        # special token as given, a str or an AddedToken (_special_tokens_map); the warnings
        # given once, by key (deprecation_warnings: reset it to warn again); and
        # add_bos_token / add_eos_token, accepted and kept as 5.x keeps them for BERT, whose
        # template ([CLS] A [SEP] B [SEP]) has no BOS or EOS slot to add.
        self.init_inputs: tuple = ()
        self.init_kwargs = {
            **init_kwargs, "unk_token": unk_token, "sep_token": sep_token, "pad_token": pad_token,
            "cls_token": cls_token, "mask_token": mask_token, "model_max_length": model_max_length,
            "clean_up_tokenization_spaces": clean_up_tokenization_spaces, "padding_side": padding_side,
            "truncation_side": truncation_side, "extra_special_tokens": extra_special_tokens,
            "bos_token": bos_token, "eos_token": eos_token, "add_bos_token": add_bos_token, "add_eos_token": add_eos_token,
            "limits": limits,
        }
        self._special_tokens_map: dict[str, str | AddedToken | None] = {
            "bos_token": bos_token, "eos_token": eos_token, "unk_token": unk_token, "sep_token": sep_token,
            "pad_token": pad_token, "cls_token": cls_token, "mask_token": mask_token,
        }
        self.deprecation_warnings: dict[str, bool] = {}
        self.add_bos_token, self.add_eos_token = bool(add_bos_token), bool(add_eos_token)
        # A Jinja template that lays a conversation out as text (apply_chat_template); BERT
        # checkpoints have none, a tokenizer_config.json may give one.
        self.chat_template: str | None = None
        # The longest text read whole (Limits.text_chars); truncated texts are read only as
        # far as their kept tokens, whatever their length.
        self.limits = Limits.given(limits)

        self.unk_token, self.sep_token, self.pad_token, self.cls_token, self.mask_token = (
            getattr(t, "content", t) for t in (unk_token, sep_token, pad_token, cls_token, mask_token))
        self.bos_token = self.eos_token = None
        self.additional_special_tokens: list[str] = []
        # Tokens added after the vocabulary: content -> (id, AddedToken), in the order added.
        self._added: dict[str, tuple[int, AddedToken]] = {}
        for key in _SPECIAL_TOKEN_KEYS:
            if not isinstance(getattr(self, key), str) or not getattr(self, key):
                raise TypeError(f"{type(self).__name__}: {key} must be a non-empty str, got {getattr(self, key)!r}")
        self.model_max_length = VERY_LARGE_INTEGER if model_max_length is None else int(model_max_length)
        self.clean_up_tokenization_spaces = clean_up_tokenization_spaces
        # Where __call__ and pad put padding: "right" (BERT's absolute positions count from
        # the left, so its inputs are padded on the right), or "left"; and which end
        # truncation cuts ("left" keeps the end of a text: the last turns of a dialogue).
        self.padding_side = _side(padding_side, "padding_side")
        self.truncation_side = _side(truncation_side, "truncation_side")
        missing = [t for t in dict.fromkeys(getattr(self, key) for key in _SPECIAL_TOKEN_KEYS) if t not in self.vocab]
        self._specials_added_to = (source, missing, len(self.vocab))  # for require_special_tokens_in_vocabulary
        if missing:
            logger.info("%s: the special tokens %s are not in the vocabulary; added after its %d tokens (as transformers)",
                        source, missing, len(self.vocab))
            self.add_tokens([AddedToken(t, special=True) for t in missing], special_tokens=True)
        if extra_special_tokens is not None and additional_special_tokens is not None:
            raise TypeError("pass extra_special_tokens (transformers 5.x's name) or additional_special_tokens (4.x's), not both")
        extra = extra_special_tokens if extra_special_tokens is not None else additional_special_tokens
        if extra:
            self.add_special_tokens({"additional_special_tokens": list(extra)})
        optional = {key: value for key, value in (("bos_token", bos_token), ("eos_token", eos_token)) if value is not None}
        if optional:
            self.add_special_tokens(optional)
        self._compile_added()

    @property
    def backend_tokenizer(self) -> BackendTokenizer:
        """The Rust tokenizer of a fast tokenizer, as far as transformers' code reads it
        (``BackendTokenizer``); ``_tokenizer`` is transformers' own name for it.

        transformers: ``TokenizersBackend.backend_tokenizer``
        """
        return BackendTokenizer()

    _tokenizer = backend_tokenizer

    @property
    def is_fast(self) -> bool:
        """True for both of this library's tokenizers, as for transformers 5.x's
        ``BertTokenizer`` (the Rust one): what callers check it for, offsets
        (``return_offsets_mapping``), ``word_ids`` and windows with ``stride`` and
        ``overflow_to_sample_mapping``, both give, equal to the Rust one's (docs/tokenizer.md),
        the plain ``BertTokenizer`` too, unlike transformers 4.x's Python one. transformers'
        whole-word masking collator and its token-classification pipeline's aggregation
        read it.

        transformers: ``PreTrainedTokenizerBase.is_fast`` (``TokenizersBackend.is_fast``: True)
        """
        return True

    @property
    def extra_special_tokens(self) -> list[str]:
        """The special tokens besides the named ones (transformers 5.x's name)."""
        return list(self.additional_special_tokens)

    @property
    def extra_special_tokens_ids(self) -> list[int]:
        return [self._token_id(t) for t in self.additional_special_tokens]

    @extra_special_tokens_ids.setter
    def extra_special_tokens_ids(self, ids: Sequence[int]) -> None:
        self.additional_special_tokens = [self.convert_ids_to_tokens(i) for i in ids]
        self._compile_added()

    def _compile_added(self) -> None:
        """The patterns that find special and added tokens in a text."""
        # Special tokens (and added ones not normalized) are matched in the raw text, longest
        # first: "[MASK]" is the mask token, "[mask]" is three words.
        raw = set(self.all_special_tokens) | {t for t, (_, a) in self._added.items() if not self._is_normalized(a)}
        self._raw_tokens = raw
        def pattern(content: str) -> str:  # lstrip / rstrip: the match takes the whitespace beside it
            token = self._added.get(content, (0, AddedToken(content)))[1]
            return ("\\s*" if token.lstrip else "") + re.escape(content) + ("\\s*" if token.rstrip else "")
        self._special_pattern = re.compile("|".join(pattern(t) for t in sorted(raw, key=len, reverse=True)))
        # Normalized added tokens are matched in the normalized text (as the fast tokenizer
        # does): "Newword" in an uncased model is found as "newword", "NEWWORD", "NewWord".
        self._normalized_added: dict[str, str] = {}  # normalized content -> content (first added wins)
        self._added_names: dict[int, str] = {}  # id -> the token as it reads ("Newword" -> "newword")
        for content, (index, token) in self._added.items():
            name = self._normalize(content)[0] if self._is_normalized(token) else content
            if self._is_normalized(token):
                self._normalized_added.setdefault(name, content)
            self._added_names.setdefault(index, name)
        keys = sorted(self._normalized_added, key=len, reverse=True)
        self._normalized_pattern = re.compile("|".join(re.escape(k) for k in keys)) if keys else None

    @staticmethod
    def _is_normalized(token: AddedToken) -> bool:
        return (not token.special) if token.normalized is None else token.normalized

    # ------------------------------------------------------------- vocabulary
    @property
    def all_special_tokens(self) -> list[str]:
        keys = ("bos_token", "eos_token", *_SPECIAL_TOKEN_KEYS)
        named = [getattr(self, k) for k in keys if getattr(self, k) is not None]
        return list(dict.fromkeys(named)) + [t for t in self.additional_special_tokens if t not in named]

    @property
    def all_special_ids(self) -> list[int]:
        return [self._token_id(t) for t in self.all_special_tokens]

    # The ids of the special tokens; setting one sets its token (None unsets it), as in transformers.
    unk_token_id = property(lambda self: self._special_id("unk_token"), lambda self, i: self._set_special_id("unk_token", i))

    sep_token_id = property(lambda self: self._special_id("sep_token"), lambda self, i: self._set_special_id("sep_token", i))

    pad_token_id = property(lambda self: self._special_id("pad_token"), lambda self, i: self._set_special_id("pad_token", i))

    cls_token_id = property(lambda self: self._special_id("cls_token"), lambda self, i: self._set_special_id("cls_token", i))

    mask_token_id = property(lambda self: self._special_id("mask_token"),
                             lambda self, i: self._set_special_id("mask_token", i))

    bos_token_id = property(lambda self: self._special_id("bos_token"), lambda self, i: self._set_special_id("bos_token", i))

    eos_token_id = property(lambda self: self._special_id("eos_token"), lambda self, i: self._set_special_id("eos_token", i))

    def _special_id(self, key: str) -> int | None:
        token = getattr(self, key)
        return None if token is None else self._token_id(token)

    def _set_special_id(self, key: str, index: int | None) -> None:
        token = None if index is None else self.convert_ids_to_tokens(index)
        setattr(self, key, token)
        self._special_tokens_map[key] = token
        self._compile_added()

    @property
    def added_tokens_encoder(self) -> dict[str, int]:
        return {content: i for content, (i, _) in self._added.items()}

    @property
    def added_tokens_decoder(self) -> dict[int, AddedToken]:
        return {i: token for i, token in self._added.values()}

    def add_tokens(self, new_tokens: str | AddedToken | Sequence[str | AddedToken], special_tokens: bool = False) -> int:
        """Add tokens that are never split: each gets the next id (or its id in
        ``vocab.txt``), and is matched in the text before WordPiece. Grow the model to
        match with ``model.resize_token_embeddings(len(tokenizer))``.

        Args:
            new_tokens: a str, an ``AddedToken``, or a list of them.
            special_tokens: add them as special tokens (matched as written, dropped by
                ``skip_special_tokens``).

        Returns:
            How many tokens were added (already added ones are not counted).
        """
        if isinstance(new_tokens, str) or hasattr(new_tokens, "content"):
            new_tokens = [new_tokens]
        if not isinstance(new_tokens, (list, tuple)):
            raise TypeError(f"new_tokens must be a str, an AddedToken or a list of them, got {_kind(new_tokens)}")
        added = 0
        for i, given in enumerate(new_tokens):
            token = _as_added_token(given, special_tokens, f"new_tokens[{i}]")
            if token.content in self._added:
                continue
            index = self.vocab.get(token.content)
            if index is None:
                index = len(self)
            self._added[token.content] = (index, token)
            added += 1
        self._compile_added()
        return added

    def add_special_tokens(self, special_tokens_dict: Mapping[str, Any], replace_extra_special_tokens: bool = True) -> int:
        """Set special tokens, adding those not yet known:
        ``{"pad_token": "[PAD2]", "additional_special_tokens": ["[E1]", "[/E1]"]}``.

        Args:
            special_tokens_dict: keys ``unk_token``, ``sep_token``, ``pad_token``,
                ``cls_token``, ``mask_token``, ``bos_token``, ``eos_token`` (a str or an
                ``AddedToken`` each) and ``extra_special_tokens`` (5.x's name; 4.x's
                ``additional_special_tokens``): a list of str.
            replace_extra_special_tokens: the list replaces the current one (earlier ones
                stay in the vocabulary, still special); False appends to it.

        Returns:
            How many tokens were added.
        """
        if not isinstance(special_tokens_dict, Mapping):
            raise TypeError(f"special_tokens_dict must be a dict, got {type(special_tokens_dict).__name__}")
        keys = (*_SPECIAL_TOKEN_KEYS, *_OPTIONAL_SPECIAL_TOKEN_KEYS)
        unknown = sorted(set(special_tokens_dict) - set(keys) - {"additional_special_tokens", "extra_special_tokens"})
        if unknown:
            raise ValueError(f"add_special_tokens: unknown keys {unknown}; expected {list(keys)} "
                             f"or 'extra_special_tokens' / 'additional_special_tokens'")
        if "additional_special_tokens" in special_tokens_dict and "extra_special_tokens" in special_tokens_dict:
            raise ValueError("add_special_tokens: pass extra_special_tokens (5.x) or additional_special_tokens (4.x), not both")
        added = 0
        for key in keys:
            if key in special_tokens_dict:
                given = special_tokens_dict[key]
                token = _as_added_token(given, True, key)
                if token.content not in self.vocab:
                    added += self.add_tokens([token._replace(special=True)])
                setattr(self, key, token.content)
                self._special_tokens_map[key] = given
        name = "extra_special_tokens" if "extra_special_tokens" in special_tokens_dict else "additional_special_tokens"
        extra = special_tokens_dict.get(name)
        if extra is not None:
            if not isinstance(extra, (list, tuple)):
                raise TypeError(f"{name} must be a list, got {type(extra).__name__}")
            tokens = [_as_added_token(t, True, f"{name}[{i}]") for i, t in enumerate(extra)]
            if replace_extra_special_tokens:
                self.additional_special_tokens = []
            for token in tokens:
                added += self.add_tokens([token._replace(special=True)])
                if token.content not in self.all_special_tokens:
                    self.additional_special_tokens.append(token.content)
        self._compile_added()
        return added

    def convert_ids_to_tokens(self, ids: int | Sequence[int], skip_special_tokens: bool = False) -> str | list[str]:
        """Id(s) -> token(s); an id outside the vocabulary is an IndexError naming it."""
        if isinstance(ids, int) and not isinstance(ids, bool):
            return self._id_to_token(ids)
        ids = _token_id_list(ids, "ids")
        special = set(self.all_special_ids) | {i for i, t in self._added.values() if t.special} if skip_special_tokens else set()
        return [self._id_to_token(int(i)) for i in ids if int(i) not in special]

    # ------------------------------------------------------------- text -> tokens
    def _check_text(self, text: Any, argument: str) -> str:
        if not isinstance(text, str):
            raise TypeError(f"{argument} must be a str (or a list of str for a batch), got {type(text).__name__}")
        return text

    def _check_words(self, words: Any, argument: str) -> list[str]:
        if not isinstance(words, (list, tuple)):
            raise TypeError(f"{argument} must be a list of words with is_split_into_words=True, got {type(words).__name__}")
        for i, word in enumerate(words):
            if not isinstance(word, str):
                raise TypeError(f"{argument}[{i}] must be a str (a word), got {type(word).__name__}")
        return list(words)

    # ------------------------------------------------------------- __call__
    def __call__(
        self,
        text: str | list[str] | None = None,
        text_pair: str | list[str] | None = None,
        *,
        text_target: str | list[str] | None = None,
        text_pair_target: str | list[str] | None = None,
        **options: Unpack[EncodeOptions],
    ) -> BatchEncoding:
        """Encode one text (or pair) or a batch, as transformers' tokenizer ``__call__``.

        Args:
            text: a str, or a list of str (a batch).
            text_pair: the second segment (same form as ``text``): token type 1.
            text_target / text_pair_target: the texts a sequence-to-sequence model is to
                produce (bert2bert's summaries), encoded with the same options: their
                ``input_ids`` come back as ``labels`` beside ``text``'s encoding, or, with
                no ``text``, as the encoding itself (transformers' ``text_target``).
            padding: False / "do_not_pad"; True / "longest" (to the longest in the batch);
                "max_length" (to ``max_length``, else ``model_max_length``). Pads on the right.
            truncation: False / None; True / "longest_first" (the shorter of the two keeps
                at most half the room, the longer the rest); "only_first"; "only_second". To
                ``max_length``, else ``model_max_length``; the special tokens count.
            max_length: with ``truncation=None``, implies "longest_first" (as transformers).
            return_tensors: None (lists), "pt" (torch tensors, shape (B, T); B = 1 for one
                text) or "np" (numpy arrays).
            pad_to_multiple_of: with padding, round the padded length up to a multiple of this.
            is_split_into_words: each text is a list of words (a batch, a list of lists):
                every word is tokenized on its own, its tokens get its index as word id,
                and offsets count within the word (as transformers' fast tokenizer).
            padding_side: "right" or "left" for this call; default the tokenizer's ``padding_side``.
            stride: with truncation, each window after the first starts this many tokens
                before the previous one ended, so that every token has context on both
                sides in some window (question answering's sliding window).
            return_overflowing_tokens: with truncation, return every window, not only the
                first: the result is always a batch, with ``overflow_to_sample_mapping``
                giving the text each row came from. For a pair, "only_second" keeps the
                whole first text (the question) in every window of the second (the context).
            return_offsets_mapping: (start, end) of each token in its text, in characters;
                (0, 0) for special and padding tokens.

        Returns:
            ``BatchEncoding`` with ``input_ids``, ``token_type_ids``, ``attention_mask`` (and
            ``offset_mapping``, ``special_tokens_mask``, ``length``, ``overflow_to_sample_mapping``
            when asked; ``labels`` with ``text_target``).
        """
        if text is None and text_target is None:
            raise ValueError("the tokenizer needs text, or text_target (a sequence-to-sequence model's labels), or both")
        encodings = None if text is None else self._call_one(text, text_pair, **options)
        if text_target is None:
            return encodings
        targets = self._call_one(text_target, text_pair_target, **options)
        if encodings is None:
            return targets
        encodings["labels"] = targets["input_ids"]
        return encodings

    def _call_one(
        self,
        text: str | list[str],
        text_pair: str | list[str] | None = None,
        *,
        add_special_tokens: bool = True,
        padding: bool | str = False,
        truncation: bool | str | None = None,
        max_length: int | None = None,
        return_tensors: str | None = None,
        return_token_type_ids: bool = True,
        return_attention_mask: bool = True,
        return_offsets_mapping: bool = False,
        return_special_tokens_mask: bool = False,
        return_length: bool = False,
        pad_to_multiple_of: int | None = None,
        is_split_into_words: bool = False,
        stride: int = 0,
        return_overflowing_tokens: bool = False,
        padding_side: str | None = None,
    ) -> BatchEncoding:
        """One text (or pair) or a batch, encoded: ``__call__`` for ``text`` (and again for
        ``text_target``); its options are ``__call__``'s (``EncodeOptions``).

        transformers: ``PreTrainedTokenizerBase._call_one``
        """
        if text_pair is None and _is_batch_of_pairs(text, is_split_into_words):  # [(text, pair), ...]
            text, text_pair = [item[0] for item in text], [item[1] for item in text]
        if is_split_into_words:
            # A text is a list of words; a batch is a list of such lists.
            batched = isinstance(text, (list, tuple)) and bool(text) and isinstance(text[0], (list, tuple))
            unit = "a list of words (str)"
        else:
            batched = isinstance(text, (list, tuple))
            unit = "a str"
        texts = list(text) if batched else [text]
        empty_pair = text_pair == "" or (is_split_into_words and isinstance(text_pair, (list, tuple)) and not text_pair)
        if empty_pair and not batched:  # as transformers: an empty pair is no pair
            text_pair = None
        if text_pair is None:
            pairs = [None] * len(texts)
        else:
            pair_batched = (isinstance(text_pair, (list, tuple)) and bool(text_pair)
                            and (isinstance(text_pair[0], (list, tuple)) if is_split_into_words else True))
            if pair_batched != batched:
                batch = "a list of such lists" if is_split_into_words else "a list of str"
                raise TypeError(f"text and text_pair must both be {unit} or both be {batch}")
            pairs = list(text_pair) if batched else [text_pair]
            if len(pairs) != len(texts):
                raise ValueError(f"text has {len(texts)} entries but text_pair has {len(pairs)}")
        check = self._check_words if is_split_into_words else self._check_text
        for i, t in enumerate(texts):
            check(t, f"text[{i}]" if batched else "text")
        for i, t in enumerate(pairs):
            if t is not None:
                check(t, f"text_pair[{i}]" if batched else "text_pair")
        if not _is_choice(padding, _PADDING):
            raise ValueError(f"padding={padding!r}: expected False, True, 'longest', 'max_length' or 'do_not_pad'")
        if truncation is None and max_length is not None and not padding:
            # as transformers: max_length alone means truncation; with padding it is the pad width
            logger.warning("max_length=%d without truncation: truncating with 'longest_first' (as transformers)", max_length)
            truncation = "longest_first"
        if not _is_choice(truncation or False, _TRUNCATION):
            raise ValueError(f"truncation={truncation!r}: expected False, True, 'longest_first', 'only_first' or 'only_second'")
        _check_return_tensors(return_tensors)
        _check_multiple(pad_to_multiple_of)
        side = _side(self.padding_side if padding_side is None else padding_side, "padding_side")
        _side(self.truncation_side, "truncation_side")
        self._check_can_pad(padding)
        if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1):
            raise ValueError(f"max_length must be a positive int, got {max_length!r}")
        if not isinstance(stride, int) or isinstance(stride, bool) or stride < 0:
            raise ValueError(f"stride must be an int >= 0, got {stride!r}")
        pad_mode, trunc_mode = _PADDING[padding], _TRUNCATION[truncation or False]
        limit = max_length if max_length is not None else self.model_max_length
        if pad_mode is not None and trunc_mode is not None and pad_to_multiple_of and limit % pad_to_multiple_of:
            raise ValueError(f"Truncation and padding are both activated but truncation length ({limit}) is not a "
                             f"multiple of pad_to_multiple_of ({pad_to_multiple_of}).")
        if pad_mode == "max_length":
            _max_length_width(limit)
        room = limit - self.num_special_tokens_to_add()
        if trunc_mode is not None and 0 <= room < stride:
            raise ValueError(f"stride={stride} is more than the {room} tokens a window holds "
                             f"(max_length={limit} less the special tokens); lower stride or raise max_length")

        tokens = self._word_tokens if is_split_into_words else self._tokens_with_offsets
        # One text cut on the right, with no windows asked for, keeps at most `budget`
        # tokens: read one more (enough to tell it was cut), and no further.
        budget = limit - (self.num_special_tokens_to_add() if add_special_tokens else 0)
        reads_to_the_end = (trunc_mode is None or return_overflowing_tokens or self.truncation_side == "left"
                            or budget < 0)
        rows, sources = [], []
        for index, (t, p) in enumerate(zip(texts, pairs)):
            most = None if reads_to_the_end or p is not None else budget + 1
            if most is None or most > self.limits.text_chars:  # a bound that bounds nothing
                self._check_length(t, f"text[{index}]" if batched else "text")
                if p is not None:
                    self._check_length(p, f"text_pair[{index}]" if batched else "text_pair")
            windows = self._encode_windows(tokens(t, most), None if p is None else tokens(p), add_special_tokens,
                                           trunc_mode, limit, stride, return_overflowing_tokens)
            rows += windows
            sources += [index] * len(windows)
        if return_overflowing_tokens:  # windows make a batch even of one text (as transformers)
            batched = True
        warned = self.deprecation_warnings
        if trunc_mode is None and not warned.get(_TOO_LONG) and self.model_max_length < VERY_LARGE_INTEGER:
            longest = max(len(r["input_ids"]) for r in rows)
            if longest > self.model_max_length:  # once per tokenizer (until deprecation_warnings is reset), as transformers
                warned[_TOO_LONG] = True
                logger.warning("Token indices sequence length is longer than the specified maximum sequence length "
                               "for this model (%d > %d). Running this sequence through the model will result in "
                               "indexing errors", longest, self.model_max_length)
        if pad_mode is not None:
            # "longest" is the longest first window of each text, as the fast tokenizer pads
            # (a later window is longer only when the first is empty: max_length below the
            # special tokens plus one)
            firsts = [r for i, r in enumerate(rows) if i == 0 or sources[i] != sources[i - 1]]
            width = limit if pad_mode == "max_length" else max(len(r["input_ids"]) for r in firsts)
            width = _round_up(width, pad_to_multiple_of)
            fills = {"input_ids": self.pad_token_id, "token_type_ids": 0, "attention_mask": 0,
                     "offset_mapping": (0, 0), "special_tokens_mask": 1, "word_ids": None, "sequence_ids": None}
            for r in rows:
                for key, fill in fills.items():
                    r[key] = _padded(r[key], width, fill, side)
        keys = ["input_ids"]
        keys += ["token_type_ids"] if return_token_type_ids else []
        keys += ["attention_mask"] if return_attention_mask else []
        keys += ["special_tokens_mask"] if return_special_tokens_mask else []
        keys += ["offset_mapping"] if return_offsets_mapping else []
        encoding = BatchEncoding()
        for key in keys:
            encoding[key] = [r[key] for r in rows] if batched else rows[0][key]
        if return_length:
            lengths = [len(r["input_ids"]) for r in rows]
            encoding["length"] = lengths if batched else lengths[0]
        if return_overflowing_tokens:
            encoding["overflow_to_sample_mapping"] = sources
        if return_tensors is not None:
            encoding = self._as_tensors(encoding, batched, return_tensors)
        encoding._token_words = [r["word_ids"] for r in rows]
        encoding._token_sequences = [r["sequence_ids"] for r in rows]
        encoding._token_offsets = [r["offset_mapping"] for r in rows]
        return encoding

    def _check_length(self, text: str | list[str], argument: str) -> None:
        """Refuse a text longer than ``limits.text_chars`` that would be read whole."""
        length = len(text) if isinstance(text, str) else sum(len(word) for word in text)
        if length > self.limits.text_chars:
            raise ValueError(
                f"{argument}: {length} characters, more than the {self.limits.text_chars} read whole "
                f"(Limits.text_chars); pass truncation=True with max_length to read only what is kept, split the "
                f"text, or raise the bound with limits=Limits(text_chars=...) when the tokenizer is made"
            )

    def _encode_windows(self, first: list, second: list | None, add_special: bool, truncation: str | None,
                        limit: int, stride: int, overflow: bool) -> list[dict]:
        """One text (or pair) -> its rows: one, or with ``overflow`` every window the
        truncation cuts it into, in the fast tokenizer's order."""
        if truncation is None:
            return [self._encode_one(first, second, add_special)]
        specials = self.num_special_tokens_to_add(second is not None) if add_special else 0
        keep_first, keep_second = self._kept_lengths(len(first), None if second is None else len(second),
                                                     truncation, limit - specials)
        left = self.truncation_side == "left"
        windows_a = _windows(first, keep_first, stride, overflow, "text", left)
        windows_b = [None] if second is None else _windows(second, keep_second, stride, overflow, "text_pair", left)
        # The first window of each, then every later window of the text with each window of
        # the pair, then the first window of the text with every later window of the pair
        # (the order of the Rust tokenizer's Encoding.merge_with; for "only_second", the QA
        # case, simply the question with each window of the context).
        order = [(0, 0)] + [(i, j) for i in range(1, len(windows_a)) for j in range(len(windows_b))]
        order += [(0, j) for j in range(1, len(windows_b))]
        return [self._encode_one(windows_a[i], windows_b[j], add_special) for i, j in order]

    def _encode_one(self, first: list, second: list | None, add_special: bool) -> dict:
        ids_a = [self._token_id(t) for t, _, _, _ in first]
        ids_b = None if second is None else [self._token_id(t) for t, _, _, _ in second]
        spans_a = [(s, e) for _, s, e, _ in first]
        spans_b = None if second is None else [(s, e) for _, s, e, _ in second]
        words_a = [w for _, _, _, w in first]
        words_b = None if second is None else [w for _, _, _, w in second]
        if add_special:
            ids = self.build_inputs_with_special_tokens(ids_a, ids_b)
            types = self.create_token_type_ids_from_sequences(ids_a, ids_b)
            special = self.get_special_tokens_mask(ids_a, ids_b)
            offsets = [(0, 0)] + spans_a + [(0, 0)] + ([] if spans_b is None else spans_b + [(0, 0)])
            words = [None] + words_a + [None] + ([] if words_b is None else words_b + [None])
            sequences = [None] + [0] * len(ids_a) + [None] + ([] if ids_b is None else [1] * len(ids_b) + [None])
        else:
            ids = ids_a + (ids_b or [])
            types = [0] * len(ids_a) + [1] * len(ids_b or [])
            special = [0] * len(ids)
            offsets = spans_a + (spans_b or [])
            words = words_a + (words_b or [])
            sequences = [0] * len(ids_a) + [1] * len(ids_b or [])
        return {"input_ids": ids, "token_type_ids": types, "attention_mask": [1] * len(ids),
                "offset_mapping": offsets, "special_tokens_mask": special, "word_ids": words, "sequence_ids": sequences}

    @staticmethod
    def _kept_lengths(n1: int, n2: int | None, strategy: str, budget: int) -> tuple[int, int | None]:
        """How many tokens of the text and of the pair truncation keeps, so that together
        they fit ``budget`` (max_length less the special tokens), the way the fast tokenizer
        does, edge cases included."""
        if budget < 0:  # max_length below the special tokens alone: left as it is
            logger.warning("max_length leaves no room even for the special tokens; not truncating")
            return n1, n2
        if budget == 0:
            return 0, None if n2 is None else 0
        if n1 + (n2 or 0) <= budget:
            return n1, n2
        if n2 is None:
            if strategy == "only_second":
                raise ValueError("truncation='only_second' truncates text_pair, but no text_pair was given")
            return budget, None
        to_remove = n1 + n2 - budget
        if strategy in ("only_first", "only_second"):
            target, length = ("first", n1) if strategy == "only_first" else ("second", n2)
            if to_remove >= length:
                raise ValueError(
                    f"truncation={strategy!r}: {to_remove} tokens must go, but the {target} sequence has {length}; "
                    f"it is too short to truncate to fit max_length"
                )
            return (n1 - to_remove, n2) if strategy == "only_first" else (n1, n2 - to_remove)
        # longest_first, as the fast tokenizer: the shorter sequence (the first, on a tie)
        # keeps at most half the budget, rounded down; the longer gets the rest. (4.x's Python
        # tokenizer removes one token at a time from the longer, ties from the second, which
        # gives the odd token to the first instead: docs/tokenizer.md.)
        first_is_shorter = n1 <= n2
        keep_shorter = min(n1 if first_is_shorter else n2, budget // 2)
        keep_longer = min(n2 if first_is_shorter else n1, budget - keep_shorter)
        return (keep_shorter, keep_longer) if first_is_shorter else (keep_longer, keep_shorter)

    @staticmethod
    def _as_tensors(encoding: BatchEncoding, batched: bool, return_tensors: str = "pt") -> BatchEncoding:
        out = BatchEncoding()
        for key, value in encoding.items():
            flat = key in ("length", "overflow_to_sample_mapping")  # one number per row
            rows = value if batched else [value]
            lengths = {1} if flat else {len(r) for r in rows}
            if len(lengths) > 1:
                raise ValueError(
                    f"return_tensors={return_tensors!r} needs rows of one length, but {key} has lengths "
                    f"{sorted(lengths)}: pass padding=True (and truncation=True for texts longer than the model takes)"
                )
            out[key] = _to_tensor(value if flat else rows, return_tensors)
        return out

    # ------------------------------------------------------------- encode, pad
    def encode(
        self,
        text: str,
        text_pair: str | None = None,
        *,
        add_special_tokens: bool = True,
        padding: bool | str = False,
        truncation: bool | str | None = None,
        max_length: int | None = None,
        return_tensors: str | None = None,
    ) -> list[int] | Any:
        """The ``input_ids`` of one text (or pair): ``encode("hello")`` -> ``[101, 7592, 102]``."""
        if isinstance(text, (list, tuple)):
            raise TypeError("encode takes one text (a str); call the tokenizer itself for a batch")
        return self(text, text_pair, add_special_tokens=add_special_tokens, padding=padding, truncation=truncation,
                    max_length=max_length, return_tensors=return_tensors)["input_ids"]

    def train_new_from_iterator(
        self,
        text_iterator: Iterable[str | Sequence[str]],
        vocab_size: int,
        length: int | None = None,
        new_special_tokens: Sequence[str] | None = None,
        special_tokens_map: dict[str, str] | None = None,
        *,
        min_frequency: int = 0,
        limit_alphabet: int | None = None,
        show_progress: bool = True,
    ) -> PreTrainedTokenizerBase:
        """A tokenizer of this one's kind and settings (case, accents, Chinese characters,
        special tokens) with a vocabulary learned from ``text_iterator``, as transformers'
        ``train_new_from_iterator``: the words this tokenizer splits the texts into are
        counted, and WordPiece pieces merged by frequency, as the tokenizers library's
        WordPieceTrainer does (``wordpiece_trainer.learn_wordpiece``).

        Args:
            text_iterator: texts, or batches (lists) of texts, as transformers takes them.
            vocab_size: the new vocabulary's size, special tokens included.
            length: how many items ``text_iterator`` yields, for the progress bar.
            new_special_tokens: special tokens to add to this one's (first in the vocabulary).
            special_tokens_map: renames of this one's special tokens (``{"[UNK]": "<unk>"}``).
            min_frequency / limit_alphabet: the tokenizers trainer's options of these names.
            show_progress: a bar over the texts read (where tqdm is installed).

        The tokenizers library breaks ties between equally frequent pairs in an order that
        changes from run to run; this trainer's is fixed (the pair of the lowest ids), so
        where tokenizers' own runs agree, the two give the same vocabulary.
        """
        if special_tokens_map is not None and not isinstance(special_tokens_map, dict):
            raise TypeError(f"special_tokens_map must be a dict of old -> new token, got {_kind(special_tokens_map)}")
        renames = special_tokens_map or {}
        specials = [renames.get(t, t) for t in sorted(self.all_special_tokens, key=self.convert_tokens_to_ids)]
        for token in new_special_tokens or ():
            if not isinstance(token, str) or not token:
                raise TypeError(f"new_special_tokens must be non-empty str, got {token!r}")
            if token not in specials:
                specials.append(token)
        counts: Counter[str] = Counter()
        bar = progress_bar(length or 0, "reading the texts", show_progress, unit="text")
        try:
            for index, item in enumerate(text_iterator):
                texts = [item] if isinstance(item, str) else item
                if not isinstance(texts, (list, tuple)) or not all(isinstance(t, str) for t in texts):
                    raise TypeError(f"text_iterator item {index} must be a str or a list of str, got {_kind(item)}")
                for text in texts:
                    self._check_length(text, f"text_iterator item {index}")
                    counts.update(w for w in self._pre_tokenize(text) if w not in specials)
                bar.update(1)
        finally:
            bar.close()
        tokens = learn_wordpiece(counts, vocab_size, specials, "frequency", min_frequency, limit_alphabet)
        settings = {key: value for key, value in self.init_kwargs.items() if key not in ("vocab_file", "vocab")}
        for key in _SPECIAL_TOKEN_KEYS + ("bos_token", "eos_token"):
            token = getattr(self, key)
            if token is not None:
                settings[key] = renames.get(token, token)
        settings["additional_special_tokens"] = [renames.get(t, t) for t in self.additional_special_tokens] + [
            t for t in new_special_tokens or () if t not in self.all_special_tokens]
        settings.pop("extra_special_tokens", None)
        return type(self)(None, vocab={token: i for i, token in enumerate(tokens)}, **settings)

    def _pre_tokenize(self, text: str) -> list[str]:
        """The words of ``text`` before they are cut into pieces (a subclass's)."""
        raise NotImplementedError

    def get_chat_template(self, chat_template: str | None = None) -> str:
        """The Jinja template ``apply_chat_template`` uses: ``chat_template``, else the
        tokenizer's; with neither, a ValueError, as transformers' (BERT checkpoints have none)."""
        template = chat_template if chat_template is not None else self.chat_template
        if template is None:
            raise ValueError("Cannot use chat template functions because tokenizer.chat_template is not set and no "
                             "template argument was passed (BERT checkpoints have none): pass chat_template=, a Jinja "
                             "template, or set tokenizer.chat_template")
        if not isinstance(template, str):
            raise TypeError(f"chat_template must be a str (a Jinja template), got {_kind(template)}")
        return template

    def apply_chat_template(
        self,
        conversation: list[dict[str, str]] | list[list[dict[str, str]]],
        *,
        chat_template: str | None = None,
        add_generation_prompt: bool = False,
        tokenize: bool = True,
        return_dict: bool = True,
        **options: Unpack[EncodeOptions],
    ) -> str | list[str] | list[int] | BatchEncoding:
        """A conversation (``[{"role": ..., "content": ...}, ...]``, or a list of them) laid
        out by a Jinja chat template, then encoded without adding special tokens (the template
        writes its own), as transformers' ``apply_chat_template``: the text with
        ``tokenize=False``, the ids with ``return_dict=False``, else the encoding. The template
        runs in Jinja's sandbox (it may come from a downloaded file); ``add_generation_prompt``
        is passed to it. ``options`` are ``__call__``'s."""
        from jinja2.exceptions import TemplateError
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        template = self.get_chat_template(chat_template)
        batched = isinstance(conversation, (list, tuple)) and bool(conversation) and isinstance(conversation[0], (list, tuple))
        conversations = list(conversation) if batched else [conversation]
        for i, chat in enumerate(conversations):
            if not isinstance(chat, (list, tuple)) or not all(isinstance(m, dict) for m in chat):
                raise TypeError(f"conversation{f'[{i}]' if batched else ''} must be a list of messages (dicts with "
                                f"'role' and 'content'), got {_kind(chat)}")
            if not chat:
                raise ValueError(f"conversation{f'[{i}]' if batched else ''} is empty: no message to lay out")
        # A key whose value is None (OpenAI's content=None) is a key the message lacks, as transformers reads it.
        conversations = [[{k: v for k, v in message.items() if v is not None} for message in chat] for chat in conversations]

        def raise_exception(message: str) -> None:
            raise TemplateError(message)

        environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        environment.filters["tojson"] = lambda value, indent=None: json.dumps(value, indent=indent, ensure_ascii=False)
        environment.globals["raise_exception"] = raise_exception
        try:
            compiled = environment.from_string(template)
            specials = {key: getattr(self, key) for key in ("bos_token", "eos_token", *_SPECIAL_TOKEN_KEYS)}
            texts = [compiled.render(messages=chat, add_generation_prompt=add_generation_prompt, **specials)
                     for chat in conversations]
        except TemplateError as e:
            raise ValueError(f"the chat template failed on this conversation: {e}") from None
        if not tokenize:
            return texts if batched else texts[0]
        encoded = self(texts if batched else texts[0], add_special_tokens=False, **options)
        return encoded if return_dict else encoded["input_ids"]

    def encode_plus(self, text: str | list[str], text_pair: str | list[str] | None = None, *,
                    pad_to_max_length: bool = False, **options: Unpack[EncodeOptions]) -> BatchEncoding:
        """One text (or pair), as ``__call__``: transformers 3.x/4.x's name, which the
        tutorials of that time call (``encode_plus(text, max_length=128, pad_to_max_length=True,
        return_tensors="pt")``). ``pad_to_max_length=True`` is 4.x's old spelling of
        ``padding="max_length"``."""
        if isinstance(text, (list, tuple)) and not options.get("is_split_into_words"):
            raise TypeError("encode_plus takes one text (a str); for a batch call batch_encode_plus or the tokenizer itself")
        return self(text, text_pair, **_legacy_padding(pad_to_max_length, options))

    def batch_encode_plus(self, batch_text_or_text_pairs: Sequence[Any], *, pad_to_max_length: bool = False,
                          **options: Unpack[EncodeOptions]) -> BatchEncoding:
        """A batch of texts or of (text, pair) tuples, as ``__call__`` on the batch:
        transformers 3.x/4.x's name. Pre-split words (``is_split_into_words=True``) come as
        lists of words, and pairs as tuples of two such lists."""
        if not isinstance(batch_text_or_text_pairs, (list, tuple)):
            raise TypeError(f"batch_encode_plus takes a list of texts or of (text, pair) tuples, got "
                            f"{_kind(batch_text_or_text_pairs)}")
        words = options.get("is_split_into_words", False)
        is_pair = [isinstance(item, (list, tuple)) and (not words or isinstance(item[0], (list, tuple)))
                   for item in batch_text_or_text_pairs]
        if any(is_pair) and not all(is_pair):
            raise ValueError("batch_encode_plus: give every item as a text, or every item as a (text, pair) tuple")
        for item, pair in zip(batch_text_or_text_pairs, is_pair):
            if pair and len(item) != 2:
                raise ValueError(f"batch_encode_plus: a pair is (text, text_pair), got {len(item)} items")
        options = _legacy_padding(pad_to_max_length, options)
        if not batch_text_or_text_pairs or not is_pair[0]:
            return self(list(batch_text_or_text_pairs), **options)
        return self([item[0] for item in batch_text_or_text_pairs], [item[1] for item in batch_text_or_text_pairs],
                    **options)

    def _check_can_pad(self, padding: bool | str) -> None:
        """Refuse to pad without a [PAD] token, as transformers does (a ValueError)."""
        if _PADDING.get(padding) is not None and self.pad_token is None:
            raise ValueError("Asking to pad but the tokenizer does not have a padding token: set one with "
                             "tokenizer.add_special_tokens({'pad_token': '[PAD]'}) (transformers' words)")

    def pad(
        self,
        encoded_inputs: Any,
        padding: bool | str = True,
        max_length: int | None = None,
        pad_to_multiple_of: int | None = None,
        padding_side: str | None = None,
        return_attention_mask: bool | None = None,
        return_tensors: str | None = None,
    ) -> BatchEncoding:
        """Pad already-encoded inputs, as transformers' ``pad`` (what its data collators call).

        Args:
            encoded_inputs: one encoding (a dict of lists), a batch as a dict of lists of
                lists, or a list of encodings (a Dataloader's list of examples); lists, torch
                tensors or numpy arrays.
            padding: True / "longest" (default), "max_length" (to ``max_length``, else
                ``model_max_length``), False / "do_not_pad".
            pad_to_multiple_of: round the padded length up to a multiple of this.
            padding_side: "right" or "left"; default the tokenizer's ``padding_side``.
            return_attention_mask: add or keep ``attention_mask`` (default: yes).
            return_tensors: None (lists; or the inputs' own kind when they are tensors),
                "pt" or "np".

        ``input_ids`` is padded with the [PAD] id, ``token_type_ids`` with 0,
        ``attention_mask`` with 0, ``special_tokens_mask`` with 1; other keys (labels)
        are left as they are. A per-example attention mask of two or more dimensions
        (tensors or arrays, e.g. each example's (seq, seq) or (1, seq, seq) mask, as packed
        or custom-attention datasets carry) is not padded: the examples' masks are stacked
        as they are, as transformers does, so they must already share one shape.
        """
        if isinstance(encoded_inputs, (list, tuple)) and encoded_inputs and isinstance(encoded_inputs[0], Mapping):
            encoded_inputs = {key: [example[key] for example in encoded_inputs] for key in encoded_inputs[0].keys()}
        encoded_inputs, stacked_mask = _take_stacked_mask(encoded_inputs)
        if not isinstance(encoded_inputs, Mapping) or "input_ids" not in encoded_inputs:
            raise ValueError("pad needs an encoding, a batch of encodings or a list of them, with input_ids; got "
                             f"{type(encoded_inputs).__name__}"
                             + (f" with keys {list(encoded_inputs)}" if isinstance(encoded_inputs, Mapping) else ""))
        if not _is_choice(padding, _PADDING):
            raise ValueError(f"padding={padding!r}: expected False, True, 'longest', 'max_length' or 'do_not_pad'")
        self._check_can_pad(padding)
        side = _side(self.padding_side if padding_side is None else padding_side, "padding_side")
        _check_return_tensors(return_tensors)
        _check_multiple(pad_to_multiple_of)
        values = {}
        for key, value in encoded_inputs.items():
            kind = _tensor_kind(value)
            if kind is not None and return_tensors is None:
                return_tensors = kind  # tensors in, tensors of the same kind out (as transformers)
            if kind is not None:  # a tensor, or a list of them (one per example)
                value = [v.tolist() for v in value] if isinstance(value, (list, tuple)) else value.tolist()
            values[key] = value
        batched = bool(values["input_ids"]) and isinstance(values["input_ids"][0], (list, tuple))
        rows = {key: [list(v) for v in value] if batched else [list(value)] for key, value in values.items()
                if key in _PAD_FILLS}
        if return_attention_mask is not False and "attention_mask" not in rows:
            rows["attention_mask"] = [[1] * len(ids) for ids in rows["input_ids"]]
        if return_attention_mask is False:
            rows.pop("attention_mask", None)
        pad_mode = _PADDING[padding]
        if pad_mode is not None and rows["input_ids"]:
            if pad_mode == "max_length":
                width = _max_length_width(max_length if max_length is not None else self.model_max_length)
            else:
                width = max(len(ids) for ids in rows["input_ids"])
            width = _round_up(width, pad_to_multiple_of)
            fills = dict(_PAD_FILLS, input_ids=self.pad_token_id)
            for key, table in rows.items():
                rows[key] = [_padded(row, width, fills[key], side) for row in table]
        encoding = BatchEncoding()
        for key, value in values.items():  # the input's key order; unpadded keys passed through
            if key in rows:
                encoding[key] = rows[key] if batched else rows[key][0]
            else:
                encoding[key] = value
        if "attention_mask" in rows and "attention_mask" not in encoding:
            encoding["attention_mask"] = rows["attention_mask"] if batched else rows["attention_mask"][0]
        if return_tensors is not None:
            tensors = BatchEncoding()
            for key, value in encoding.items():
                # Every key, as transformers' BatchEncoding converts them (labels too).
                tensors[key] = _to_tensor(value, return_tensors, exact=key not in rows)
            encoding = tensors
        if stacked_mask is not None:
            encoding["attention_mask"] = _stack_masks(stacked_mask, return_tensors)
        return encoding

    def batch_decode(self, sequences, skip_special_tokens: bool = False, clean_up_tokenization_spaces: bool | None = None) -> list[str]:
        if hasattr(sequences, "tolist"):
            sequences = sequences.tolist()
        if not isinstance(sequences, (list, tuple)):
            raise TypeError(f"sequences must be a list of id lists (or a 2-D tensor), got {_kind(sequences)}")
        return [self.decode(s, skip_special_tokens, clean_up_tokenization_spaces) for s in sequences]

    # ------------------------------------------------------------- the vocabulary
    # A WordPiece vocabulary (``self.vocab``, {token: id}) and the tokens added after it.

    def require_special_tokens_in_vocabulary(self) -> None:
        """Raise TokenizerFileError, naming the file, if a special token had to be added
        after the vocabulary: a model's embedding table has a row per vocabulary entry, so
        an added token's id lies past it. The commands that pair a vocabulary with a
        checkpoint or build a model on one call this."""
        source, missing, size = self._specials_added_to
        if missing:
            raise TokenizerFileError(
                f"{source}: the special tokens {missing} are not in the vocabulary "
                f"({size} tokens); a BERT vocab.txt holds [PAD], [UNK], [CLS], [SEP] and [MASK]"
            )

    @property
    def vocab_size(self) -> int:
        """The size of ``vocab.txt``, without added tokens (``len(tokenizer)`` counts them)."""
        return len(self.vocab)

    def __len__(self) -> int:
        return len(self.vocab) + len({i for i, _ in self._added.values() if i >= len(self.vocab)})

    def get_vocab(self) -> dict[str, int]:
        return dict(self.vocab) | self.added_tokens_encoder

    def _token_id(self, token: str) -> int:
        added = self._added.get(token)
        if added is not None:
            return added[0]
        return self.vocab.get(token, self.vocab[self.unk_token])

    def convert_tokens_to_ids(self, tokens: str | Sequence[str]) -> int | list[int]:
        """Token(s) -> id(s); a token not in the vocabulary -> the ``[UNK]`` id."""
        if isinstance(tokens, str):
            return self._token_id(tokens)
        if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
            raise TypeError(f"tokens must be a str or a list of str, got {_kind(tokens)}")
        return [self._token_id(t) for t in tokens]

    def _id_to_token(self, index: int) -> str:
        added = self._added_names.get(index)
        if added is not None:
            return added
        token = self.ids_to_tokens.get(index)
        if token is None:
            raise IndexError(f"token id {index} is outside the vocabulary (0..{len(self) - 1})")
        return token

    # ------------------------------------------------------------- text -> tokens
    # Special and added tokens are found first and kept whole; the text between them goes
    # to the subclass's ``_ordinary_tokens`` (its algorithm), ``_normalize`` and
    # ``_word_start`` (where a text may be cut between words).

    def _tokens_with_offsets(self, text: str, most: int | None = None) -> list[tuple[str, int, int, int]]:
        """``text`` -> [(wordpiece, start, end, word)]: spans in characters of ``text``, and
        the index of the pre-tokenizer word each piece came from (``word_ids``).

        ``most``: only the first ``most`` pieces are wanted (truncation keeps no more), so
        the text is read in stretches that end between words, and reading stops once they
        are found: a book cut to 512 tokens costs what its first pages cost."""
        out: list[tuple[str, int, int, int]] = []
        position = words = 0
        # A normalized added token spelled with a space could straddle two stretches.
        in_stretches = most is not None and not any(" " in key for key in self._normalized_added)
        segments = itertools.chain(((m.start(), m.end()) for m in self._special_pattern.finditer(text)),
                                   [(len(text), len(text))])
        for start, end in segments:
            if most is not None and len(out) >= most:
                break
            if position == start:  # two special tokens side by side: no text between them
                pieces = []
            else:
                pieces = stretches(text, position, start, self._word_start) if in_stretches else [(position, start)]
            for a, b in pieces:
                tokens, count = self._added_and_ordinary_tokens(text[a:b], a, words)
                out.extend(tokens)
                words += count
                if most is not None and len(out) >= most:
                    return out[:most]
            if start < end:
                matched = text[start:end]  # with lstrip / rstrip, the whitespace it took too
                content = matched if matched in self._raw_tokens else matched.strip()
                out.append((content, start, end, words))  # a special token is a word of its own
                words += 1
            position = end
        return out if most is None else out[:most]

    def _added_and_ordinary_tokens(self, text: str, offset: int, first_word: int) -> tuple[list[tuple[str, int, int, int]], int]:
        """Normalized added tokens, found in the normalized text, then the rest as usual."""
        if self._normalized_pattern is None:
            return self._ordinary_tokens(text, offset, first_word)
        normalized, origins = self._normalize(text)
        out: list[tuple[str, int, int, int]] = []
        position = words = 0
        matches = [(origins[m.start()], origins[m.end() - 1] + 1, m.group()) for m in self._normalized_pattern.finditer(normalized)]
        for start, end, key in matches + [(len(text), len(text), None)]:
            if position < start:
                tokens, count = self._ordinary_tokens(text[position:start], offset + position, first_word + words)
                out.extend(tokens)
                words += count
            if key is not None:  # an added token is a word of its own
                out.append((self._normalized_added[key], offset + start, offset + end, first_word + words))
                words += 1
            position = max(position, end)
        return out, words

    def _word_tokens(self, words: list[str], most: int | None = None) -> list[tuple[str, int, int, int]]:
        """Pre-split words -> [(wordpiece, start, end, word)]: each word tokenized alone,
        offsets within it, and its position in ``words`` as the word id; with ``most``, the
        first ``most`` pieces only, reading no further words than they need."""
        out: list[tuple[str, int, int, int]] = []
        for index, word in enumerate(words):
            if most is not None and len(out) >= most:
                return out[:most]
            out += [(piece, start, end, index) for piece, start, end, _ in self._tokens_with_offsets(word, most)]
        return out if most is None else out[:most]

    #: transformers 5.x reads "tokenizers" as "has the Rust-backed tokenizers' API" (offsets,
    #: word_ids, sequence_ids: its token-classification and QA pipelines ask), which this
    #: tokenizer has; it holds no Rust tokenizer.
    backend = "tokenizers"

    @property
    def pad_token_type_id(self) -> int:
        """The token type padding positions get: 0 (transformers' data collators read it)."""
        return 0

    # ------------------------------------------------------------- files
    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: str | os.PathLike, *, revision: str = "main",
                        cache_dir: str | os.PathLike | None = None, local_files_only: bool = False,
                        subfolder: str = "", trust_remote_code: bool = False, token: str | bool | None = None,
                        force_download: bool = False, **overrides: Any) -> PreTrainedTokenizerBase:
        """Load from a directory with ``vocab.txt`` (and ``tokenizer_config.json``) or
        ``tokenizer.json``; a Google checkpoint directory (``vocab.txt`` beside
        ``bert_config.json``); or a hub id (from the local HuggingFace cache, or downloaded
        where that is allowed). ``revision`` / ``cache_dir`` / ``local_files_only`` / ``token`` /
        ``force_download``: for hub ids, as transformers'; ``subfolder``: the tokenizer's folder in a local directory.
        ``overrides`` are ``__init__`` arguments (``do_lower_case=False``). ``trust_remote_code``:
        accepted, as by every loader here; True draws a warning (no code is ever run)."""
        no_remote_code(trust_remote_code, cls.__name__)
        token = take_transformers_keywords(overrides, f"{cls.__name__}.from_pretrained", token)  # _from_auto=, ...
        for key in overrides:  # as transformers: BertTokenizer(add_special_tokens=True) is a mistake
            if callable(getattr(cls, key, None)):
                raise ConflictingArgumentError(f"{key} conflicts with the method {key} in {cls.__name__}")
        directory = _tokenizer_directory(pretrained_model_name_or_path, revision, cache_dir, local_files_only, token,
                                         force_download)
        if subfolder:
            if not isinstance(subfolder, str) or os.path.isabs(subfolder) or ".." in subfolder.replace("\\", "/").split("/"):
                raise ValueError(f"subfolder={subfolder!r}: expected a folder name inside the tokenizer's directory")
            directory = os.path.join(directory, subfolder)
            if not os.path.isdir(directory):
                raise FileNotFoundError(f"{directory}: no such subfolder (subfolder={subfolder!r})")
        with directory_lock(directory, exclusive=False):  # a save running there finishes first
            problem = unfinished_move_in(directory)
            if problem:
                raise TokenizerFileError(f"{directory}: {problem}; nothing was loaded")
            return cls._from_directory(directory, overrides)

    def _load_added(self, added: list[tuple[int, AddedToken]], extra: list[str], source: str) -> None:
        """Re-add saved added tokens, checking that each gets the id it was saved with."""
        for index, token in sorted(added, key=lambda pair: pair[0]):
            if token.content in self._added or (self.vocab.get(token.content) == index and token.content in self.all_special_tokens):
                continue  # one of the vocabulary's own special tokens
            expected = self.vocab.get(token.content, len(self))
            if index != expected:
                raise TokenizerFileError(
                    f"{source}: added token {token.content!r} has id {index}, but it would get {expected} "
                    f"(added tokens follow the vocabulary's {len(self.vocab)} ids without gaps)"
                )
            self.add_tokens([token])
        for content in extra:
            if content not in self._added and content not in self.vocab:
                raise TokenizerFileError(f"{source}: extra special token {content!r} is neither in the vocabulary nor added")
            if content not in self.all_special_tokens:
                self.additional_special_tokens.append(content)
        self._compile_added()


class EncodeOptions(TypedDict, total=False):
    """The keyword arguments of the tokenizer's ``__call__`` (see it for each), which
    ``encode_plus`` and ``batch_encode_plus`` pass on unchanged; an unknown one is a
    TypeError naming it.

    transformers: none (its methods list them one by one)
    """

    add_special_tokens: bool
    padding: bool | str
    truncation: bool | str | None
    max_length: int | None
    return_tensors: str | None
    return_token_type_ids: bool
    return_attention_mask: bool
    return_offsets_mapping: bool
    return_special_tokens_mask: bool
    return_length: bool
    pad_to_multiple_of: int | None
    is_split_into_words: bool
    stride: int
    return_overflowing_tokens: bool
    padding_side: str | None


def _legacy_padding(pad_to_max_length: bool, options: dict) -> dict:
    """``pad_to_max_length=True`` as transformers 3.x read it: given a ``max_length``,
    ``padding="max_length"`` and (unless truncation is given) ``truncation="longest_first"``,
    else ``padding="longest"``; an explicit ``padding`` wins."""
    if not pad_to_max_length or options.get("padding", False) is not False:
        return options
    if options.get("max_length") is None:
        changes = {"padding": "longest"}
    else:  # 3.x's padding argument was still False here, so max_length also turned truncation on
        changes = {"padding": "max_length", "truncation": options.get("truncation") or "longest_first"}
    logger.warning("pad_to_max_length=True is transformers 3.x/4.x's old spelling of %s", changes)
    return {**options, **changes}


def clean_up_tokenization(text: str) -> str:
    """transformers' string-level clean-up: no space before ``. ? ! ,`` and in contractions.

    transformers: ``tokenization_utils_base.PreTrainedTokenizerBase.clean_up_tokenization``
    """
    for dirty, clean in _CLEAN_UP:
        text = text.replace(dirty, clean)
    return text


def _is_kind(value: Any, kind: str) -> bool:
    if kind == "true or false":
        return isinstance(value, bool)
    if kind == "a number":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
    if kind == "a list of strings":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, str)


def _read_json(path: str) -> dict:
    value = read_json(path, TokenizerFileError, "tokenizer file")
    if not isinstance(value, dict):
        raise TokenizerFileError(f"{path}: expected a JSON object, found {type(value).__name__}")
    return value


def _added_token_entry(entry: Any, index: Any, where: str) -> tuple[int, AddedToken]:
    """One saved added token ({"content": ..., "special": ..., "normalized": ...}) -> (id, token)."""
    if isinstance(index, str) and index.isdigit():
        index = int(index)
    if not isinstance(entry, dict) or not isinstance(entry.get("content"), str) or not entry["content"]:
        raise TokenizerFileError(f"{where}: an added token must be an object with a non-empty \"content\", got {entry!r:.80}")
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise TokenizerFileError(f"{where}: added token {entry['content']!r} has no valid id ({index!r})")
    flags = {key: entry.get(key) for key in ("special", "normalized", "lstrip", "rstrip", "single_word")}
    if any(value is not None and not isinstance(value, bool) for value in flags.values()):
        raise TokenizerFileError(f"{where}: added token {entry['content']!r}: its flags must be true or false")
    if flags["single_word"]:
        raise TokenizerFileError(f"{where}: added token {entry['content']!r} uses single_word, "
                                 f"which this tokenizer does not support")
    token = _as_added_token(AddedToken(entry["content"], bool(flags["special"]), flags["normalized"],
                                       bool(flags["lstrip"]), bool(flags["rstrip"])), False, where)
    return index, token


def _added_tokens_of_config(path: str, config: dict) -> tuple[list[tuple[int, AddedToken]], list[str]]:
    """``added_tokens_decoder`` and the extra special tokens of a ``tokenizer_config.json``."""
    decoder = config.get("added_tokens_decoder") or {}
    if not isinstance(decoder, dict):
        raise TokenizerFileError(f"{path}: added_tokens_decoder must be an object of id -> token")
    added = [_added_token_entry(entry, index, path) for index, entry in decoder.items()]
    extra = config.get("extra_special_tokens", config.get("additional_special_tokens")) or []
    if isinstance(extra, dict):  # 5.x may name them: {"name": "token"}
        extra = list(extra.values())
    extra = [e.get("content") if isinstance(e, dict) else e for e in extra] if isinstance(extra, list) else extra
    if not isinstance(extra, list) or not all(isinstance(e, str) for e in extra):
        raise TokenizerFileError(f"{path}: extra_special_tokens must be a list of strings")
    return added, extra


def _tokenizer_directory(path: str | os.PathLike, revision: str = "main", cache_dir: str | os.PathLike | None = None,
                         local_files_only: bool = False, token: str | bool | None = None,
                         force_download: bool = False) -> str:
    """The directory holding a tokenizer's files: a local directory, or a hub id's snapshot."""
    source = os.fspath(path) if isinstance(path, (str, os.PathLike)) else path
    if not isinstance(source, str):
        raise TypeError(f"pretrained_model_name_or_path must be a str or os.PathLike, got {type(path).__name__}")
    if os.path.isdir(source):
        return source
    if os.path.isfile(source):
        raise TokenizerFileError(f"{source}: is a file; pass the directory that holds vocab.txt")
    from .checkpoints.errors import CheckpointError
    from .checkpoints.hub import looks_like_hub_id, resolve_hub_id

    if looks_like_hub_id(source):
        try:
            return resolve_hub_id(source, revision, cache_dir, local_files_only, required=("vocab.txt", "tokenizer.json"),
                                  token=token, force_download=force_download)
        except CheckpointError as e:
            raise FileNotFoundError(f"{source}: no such local directory, and as a hub id: {e}") from None
    raise FileNotFoundError(f"{source}: no such directory (and not a hub model id)")
