"""Learning a WordPiece vocabulary from word counts: start from the characters (a word's
first as itself, the others as ``##`` + the character), then merge, again and again, the
adjacent pair of pieces that scores best, until the vocabulary has the size asked for. A
merge of ``un`` and ``##aff`` adds ``unaff``; of ``##aff`` and ``##able``, ``##affable``.

Two scores:

* ``"frequency"``: the pair seen most often, as the tokenizers library's WordPieceTrainer
  (which transformers' ``train_new_from_iterator`` runs) picks it;
* ``"likelihood"``: the pair whose merge most raises the likelihood of the corpus under a
  unigram model of the pieces (Schuster & Nakajima's WordPiece criterion, which Google's
  BERT vocabularies were built with):

      gain(a, b) = count(ab) · log(count(ab) · N / (count(a) · count(b))),   N = pieces in the corpus

  Frequent pairs that occur together more than chance would have them go first.

Pair counts are kept up to date as merges rewrite the words, and a heap holds each pair's
score as last computed (an entry whose counts moved since is scored anew when it surfaces).

transformers: none (tokenizers: ``trainers.WordPieceTrainer``, which runs its BPE trainer)
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

CRITERIA = ("frequency", "likelihood")
#: The prefix of a piece that continues a word (WordPiece's and BERT's).
CONTINUATION = "##"


def learn_wordpiece(
    word_counts: Mapping[str, int],
    vocab_size: int,
    special_tokens: Sequence[str],
    criterion: str = "likelihood",
    min_frequency: int = 0,
    limit_alphabet: int | None = None,
    on_token: Callable[[], None] | None = None,
) -> list[str]:
    """The vocabulary, in id order: ``special_tokens``, the alphabet, then the merges.

    Args:
        word_counts: each word (as the tokenizer splits text before WordPiece) and how often.
        vocab_size: stop when the vocabulary has this many tokens (specials included); by
            frequency, an alphabet that alone is larger is kept whole, as tokenizers keeps it.
        criterion: ``"frequency"`` (the tokenizers library's) or ``"likelihood"``.
        min_frequency: a pair seen fewer times (over all words) is not merged.
        limit_alphabet: keep at most this many distinct characters (the most frequent;
            the others are spelled by no piece), as the tokenizers library's option.
        on_token: called once per token a merge adds (a progress bar's ``update``).

    The alphabet is, for ``"frequency"``, every character as itself in code-point order,
    then each ``##`` continuation as first met (the tokenizers library's layout); for
    ``"likelihood"``, the pieces of the words from the most to the least frequent.
    """
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size <= len(special_tokens):
        raise ValueError(f"vocab_size must be an int above the {len(special_tokens)} special tokens, got {vocab_size!r}")
    if isinstance(min_frequency, bool) or not isinstance(min_frequency, int) or min_frequency < 0:
        raise ValueError(f"min_frequency must be an int >= 0, got {min_frequency!r}")
    if limit_alphabet is not None and (isinstance(limit_alphabet, bool) or not isinstance(limit_alphabet, int)
                                       or limit_alphabet < 1):
        raise ValueError(f"limit_alphabet must be a positive int or None, got {limit_alphabet!r}")
    characters: Counter[str] = Counter()
    for word, count in word_counts.items():
        for character in word:
            characters[character] += count
    if limit_alphabet is not None:
        characters = Counter(dict(characters.most_common(limit_alphabet)))
    words = [w for w in word_counts if w and all(c in characters for c in w)]  # a word spelled by the alphabet
    if not words:
        raise ValueError("the corpus holds no text to build a vocabulary from")
    freqs = [word_counts[w] for w in words]
    splits = [[w[0]] + [CONTINUATION + c for c in w[1:]] for w in words]
    vocab = list(special_tokens)
    ids = {token: i for i, token in enumerate(vocab)}

    def add(token: str) -> None:
        if token not in ids:
            ids[token] = len(vocab)
            vocab.append(token)

    if criterion == "frequency":
        for character in sorted(characters):
            add(character)
        for split in splits:
            for piece in split[1:]:
                add(piece)
    else:
        pieces: Counter[str] = Counter()
        for split, f in zip(splits, freqs):
            for piece in split:
                pieces[piece] += f
        for piece, _ in sorted(pieces.items(), key=lambda item: (-item[1], item[0])):
            add(piece)

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
    lowest = max(1, min_frequency)

    def entry(pair: tuple[str, str]) -> tuple:
        """The heap's key: the best score first; among equal counts, the pair of the lowest
        ids (the tokenizers library's order), or for likelihood the pair's text."""
        joint = pair_count[pair]
        if criterion == "frequency":
            return -joint, ids[pair[0]], ids[pair[1]], pair
        return -joint * math.log(joint * total / (piece_count[pair[0]] * piece_count[pair[1]])), pair

    heap = [entry(p) for p, n in pair_count.items() if n >= lowest]
    heapq.heapify(heap)
    while len(vocab) < vocab_size and heap:
        top = heapq.heappop(heap)
        pair = top[-1]
        if pair_count[pair] < lowest:
            continue  # merged away, or now too rare
        current = entry(pair)
        if current[0] != top[0] and abs(current[0] - top[0]) > 1e-9 * abs(current[0]):
            heapq.heappush(heap, current)  # stale: its counts moved since it was pushed
            continue
        a, b = pair
        merged = a + b[len(CONTINUATION):] if b.startswith(CONTINUATION) else a + b
        touched: set[str] = set()
        for index in sorted(pair_words.get(pair, ())):
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
        if merged not in ids:
            add(merged)
            if on_token is not None:
                on_token()
        for piece in touched:  # every pair whose counts changed gets its new score pushed
            for other in partners.get(piece, ()):
                if pair_count[other] >= lowest:
                    heapq.heappush(heap, entry(other))
    # An alphabet larger than vocab_size is kept whole by the tokenizers library (a text of
    # those characters must still be spelled); the likelihood criterion keeps vocab_size.
    return vocab if criterion == "frequency" else vocab[:vocab_size]
