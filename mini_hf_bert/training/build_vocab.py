"""Build a ``vocab.txt`` from a corpus, for pre-training from scratch.

* ``build_char_vocab``: character level, as Google built BERT-Chinese's vocabulary: every
  CJK ideograph is a token of its own (the basic tokenizer already splits them), and a
  word of any other script (digits, Latin) is spelled in characters: its first character,
  then ``##`` + each following one, so WordPiece can always spell it and never needs [UNK]
  for a character it saw.

The vocabulary starts with the special tokens, [PAD] first (id 0, which BERT's padding and
Google's scripts assume), then the tokens from the most to the least frequent.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence

from ..file_utils import write_text
from ..tokenization_bert import BasicTokenizer
from ..wordpiece_trainer import learn_wordpiece
from ..progress import progress_bar

#: The special tokens, in the order of Google's vocabularies (ids 0, 100-103 there; 0-4 here).
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def build_char_vocab(documents: Sequence[Sequence[str]], do_lower_case: bool = True, min_count: int = 1,
                     max_size: int | None = None) -> list[str]:
    """Character-level vocabulary of ``documents`` (lists of sentences).

    transformers: none (google-research/bert: BERT-Chinese's character vocabulary)

    Args:
        do_lower_case: normalize as an uncased tokenizer will (lower case, no accents).
        min_count: leave out characters seen fewer times (they will be [UNK]).
        max_size: keep at most this many tokens, specials included (the most frequent).

    Returns:
        The tokens, in id order: write them with ``write_vocab``.
    """
    if not isinstance(min_count, int) or min_count < 1:
        raise ValueError(f"min_count must be a positive int, got {min_count!r}")
    if max_size is not None and (not isinstance(max_size, int) or max_size <= len(SPECIAL_TOKENS)):
        raise ValueError(f"max_size must be an int above the {len(SPECIAL_TOKENS)} special tokens, got {max_size!r}")
    basic = BasicTokenizer(do_lower_case=do_lower_case)
    counts: Counter[str] = Counter()
    for document in documents:
        for sentence in document:
            for word in basic.tokenize(sentence):
                counts[word[0]] += 1
                counts.update("##" + c for c in word[1:])
    if not counts:
        raise ValueError("the corpus holds no text to build a vocabulary from")
    tokens = [t for t, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])) if n >= min_count]
    vocab = list(SPECIAL_TOKENS) + [t for t in tokens if t not in SPECIAL_TOKENS]
    return vocab if max_size is None else vocab[:max_size]


def write_vocab(tokens: Sequence[str], path: str | os.PathLike) -> str:
    """One token per line, in id order (``vocab.txt``); returns the path.

    transformers: none
    """
    path = os.fspath(path)
    if len(set(tokens)) != len(tokens):
        raise ValueError(f"{path}: the vocabulary repeats tokens")
    return write_text(path, "".join(token + "\n" for token in tokens))


def train_wordpiece(documents: Sequence[Sequence[str]], vocab_size: int, do_lower_case: bool = True,
                    min_frequency: int = 2, progress: bool = False) -> list[str]:
    """A WordPiece vocabulary learned from ``documents`` by the likelihood criterion
    (``wordpiece_trainer.learn_wordpiece``: Schuster & Nakajima's, which Google's BERT
    vocabularies were built with), over the words an uncased or cased BasicTokenizer splits.

    transformers: none (tokenizers: ``trainers.WordPieceTrainer``; Google's own tool was
    not released)

    Args:
        vocab_size: stop when the vocabulary (specials included) has this many tokens.
        do_lower_case: normalize as an uncased tokenizer will.
        min_frequency: a pair seen fewer times (in total, over all words) is not merged.
        progress: show a bar (tqdm) of the vocabulary growing to ``vocab_size``.

    Returns:
        The tokens, in id order: the special tokens, the characters, then the merges.
    """
    if not isinstance(vocab_size, int) or vocab_size <= len(SPECIAL_TOKENS):
        raise ValueError(f"vocab_size must be an int above the {len(SPECIAL_TOKENS)} special tokens, got {vocab_size!r}")
    basic = BasicTokenizer(do_lower_case=do_lower_case)
    word_counts: Counter[str] = Counter(w for d in documents for s in d for w in basic.tokenize(s))
    if not word_counts:
        raise ValueError("the corpus holds no text to build a vocabulary from")
    alphabet = len({c for w in word_counts for c in w})
    bar = progress_bar(max(0, vocab_size - len(SPECIAL_TOKENS) - alphabet), "building the vocabulary", progress,
                       unit="token")
    try:
        return learn_wordpiece(word_counts, vocab_size, SPECIAL_TOKENS, "likelihood", min_frequency, on_token=bar.update)
    finally:
        bar.close()
