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

import math
import os
from collections import Counter
from collections.abc import Sequence

from ..file_utils import write_text
from ..tokenization_bert import BasicTokenizer
from .progress import progress_bar

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
    """A WordPiece vocabulary learned from ``documents``: start from the characters, then
    merge, again and again, the adjacent pair of pieces whose merge most raises the
    likelihood of the corpus under a unigram model of the pieces (Schuster & Nakajima's
    WordPiece criterion, which Google's BERT vocabularies were built with):

        gain(a, b) = count(ab) · log(count(ab) · N / (count(a) · count(b))),   N = pieces in the corpus

    Frequent pairs that occur together more than chance would have them go first. (The
    score count(ab) / (count(a)·count(b)) alone, without the count(ab) factor, favours pairs
    seen a few times, and spends a small vocabulary on them.) A merge of ``un`` and
    ``##aff`` adds ``unaff``; of ``##aff`` and ``##able``, ``##affable``.

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
    import heapq

    if not isinstance(vocab_size, int) or vocab_size <= len(SPECIAL_TOKENS):
        raise ValueError(f"vocab_size must be an int above the {len(SPECIAL_TOKENS)} special tokens, got {vocab_size!r}")
    basic = BasicTokenizer(do_lower_case=do_lower_case)
    word_counts: Counter[str] = Counter(w for d in documents for s in d for w in basic.tokenize(s))
    if not word_counts:
        raise ValueError("the corpus holds no text to build a vocabulary from")
    words = list(word_counts)
    freqs = [word_counts[w] for w in words]
    splits = [[w[0]] + ["##" + c for c in w[1:]] for w in words]
    vocab = list(SPECIAL_TOKENS)
    seen = set(vocab)
    alphabet: Counter[str] = Counter()
    for split, f in zip(splits, freqs):
        for piece in split:
            alphabet[piece] += f
    for piece, _ in sorted(alphabet.items(), key=lambda item: (-item[1], item[0])):
        if piece not in seen:
            vocab.append(piece)
            seen.add(piece)
    piece_count: Counter[str] = Counter()
    pair_count: Counter[tuple[str, str]] = Counter()
    pair_words: dict[tuple[str, str], set[int]] = {}
    partners: dict[str, set[tuple[str, str]]] = {}  # piece -> the pairs it is part of

    def account(index: int, sign: int) -> None:
        split, f = splits[index], freqs[index] * sign
        for piece in split:
            piece_count[piece] += f
        for pair in zip(split, split[1:]):
            pair_count[pair] += f
            if sign > 0:
                pair_words.setdefault(pair, set()).add(index)
                partners.setdefault(pair[0], set()).add(pair)
                partners.setdefault(pair[1], set()).add(pair)

    for index in range(len(words)):
        account(index, +1)

    total = sum(piece_count.values())  # N, fixed at its start: it only shrinks a little per merge

    def score(pair: tuple[str, str]) -> float:
        joint = pair_count[pair]
        return joint * math.log(joint * total / (piece_count[pair[0]] * piece_count[pair[1]]))

    heap = [(-score(p), p) for p, n in pair_count.items() if n >= min_frequency]
    heapq.heapify(heap)
    bar = progress_bar(max(0, vocab_size - len(vocab)), "building the vocabulary", progress, unit="token")
    while len(vocab) < vocab_size and heap:
        negative, pair = heapq.heappop(heap)
        if pair_count[pair] < min_frequency:
            continue  # merged away, or now too rare
        current = score(pair)
        if abs(current + negative) > 1e-9 * abs(current):  # stale: its counts moved since it was pushed
            heapq.heappush(heap, (-current, pair))
            continue
        a, b = pair
        merged = a + b[2:] if b.startswith("##") else a + b
        touched: set[str] = set()
        for index in list(pair_words.get(pair, ())):
            split = splits[index]
            if not any(x == a and y == b for x, y in zip(split, split[1:])):
                continue
            account(index, -1)
            touched.update(split)
            new, i = [], 0
            while i < len(split):
                if i + 1 < len(split) and split[i] == a and split[i + 1] == b:
                    new.append(merged)
                    i += 2
                else:
                    new.append(split[i])
                    i += 1
            splits[index] = new
            account(index, +1)
            touched.update(new)
        if merged not in seen:
            vocab.append(merged)
            seen.add(merged)
            bar.update()
        for piece in touched:  # every pair whose counts changed gets its new score pushed
            for other in partners.get(piece, ()):
                if pair_count[other] >= min_frequency:
                    heapq.heappush(heap, (-score(other), other))
    bar.close()
    return vocab[:vocab_size]
