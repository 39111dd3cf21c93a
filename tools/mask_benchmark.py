"""How well a Chinese masked-LM fills in characters, and the bar it must clear: a model
that guesses a masked character from its neighbours' counts, with no neural network.

    one masked character:   北 京 是 中 国 的 [MASK] 都 。
                                        left ─┘      └─ right
    trigram   count(的, c, 都)                         the character between the same neighbours
    bigrams   count(的, c) · count(c, 都) / count(c)    ∝ P(c | left) · P(right | c), when no trigram was seen
    either    count(的, c) + count(c, 都)               when only one side was seen next to c
    unigram   count(c)                                  when neither was

A guess list is filled from each level in turn, best count first, until it holds k. A BERT
that does not beat this model has learned nothing a transformer was needed for.

``masked_sentences`` makes the test: held-out sentences, one character in each replaced by
[MASK]; ``top_k_accuracy`` scores any guesser on it, this model or a BERT
(``bert_guesser``). ``masked_character_accuracy`` is pre-training's own task on held-out
text (15% of the characters masked at once, [MASK] positions only), and ``unk_rate``
how much of a text a vocabulary cannot spell. ``held_out_sentences`` is the text they
read: the fixed test split's, which pre-training never reads.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import torch

from mini_hf_bert.tokenization_bert import BertTokenizer  # noqa: E402
from mini_hf_bert.tokenization_utils import is_chinese_char

#: The neighbour standing in for the sentence's edges (the [CLS] and [SEP] BERT sees there).
EDGE = "[EDGE]"
#: Sentences shorter than this are too short to have context on both sides worth the name.
MIN_SENTENCE_TOKENS = 8
#: The length BERT reads ([CLS] and [SEP] included); a longer sentence is left out.
MAX_SENTENCE_TOKENS = 126
DEFAULT_TOP_K = 5
BERT_BATCH_SIZE = 64


class CountModel:
    """(left, c, right) trigram counts with backoff to both bigrams, then the unigram.

    transformers: none
    """

    def __init__(self, sentences: Iterable[Sequence[str]]) -> None:
        """``sentences``: each a list of tokens (characters), as the tokenizer splits them."""
        self.unigram: Counter[str] = Counter()
        self.after: dict[str, Counter[str]] = defaultdict(Counter)  # left -> counts of c
        self.before: dict[str, Counter[str]] = defaultdict(Counter)  # right -> counts of c
        self.between: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)  # (left, right) -> counts of c
        for tokens in sentences:
            padded = [EDGE, *tokens, EDGE]
            for left, c, right in zip(padded, padded[1:], padded[2:]):
                self.unigram[c] += 1
                self.after[left][c] += 1
                self.before[right][c] += 1
                self.between[left, right][c] += 1
        self._by_frequency = [c for c, _ in self.unigram.most_common()]

    def top_k(self, left: str, right: str, k: int = DEFAULT_TOP_K) -> list[str]:
        """The k likeliest characters between ``left`` and ``right`` (``EDGE`` at an edge)."""
        after, before = self.after.get(left, Counter()), self.before.get(right, Counter())
        levels = [
            self.between.get((left, right), Counter()),
            {c: n * before[c] / self.unigram[c] for c, n in after.items() if c in before},
            {c: after.get(c, 0) + before.get(c, 0) for c in after.keys() | before.keys()},
        ]
        guesses: list[str] = []
        for level in levels:
            for c, _ in sorted(level.items(), key=lambda item: (-item[1], item[0])):
                if len(guesses) == k:
                    return guesses
                if c not in guesses:
                    guesses.append(c)
        for c in self._by_frequency:
            if len(guesses) == k:
                break
            if c not in guesses:
                guesses.append(c)
        return guesses


    def seen(self, item: "MaskedSentence") -> bool:
        """Whether the counted text held ``item``'s answer between the same two neighbours:
        the trigram level can then answer from memory."""
        padded = [EDGE, *item.tokens, EDGE]
        return self.between.get((padded[item.position], padded[item.position + 2]), Counter())[item.answer] > 0


@dataclass(frozen=True)
class MaskedSentence:
    """A sentence's tokens with one position to guess.

    transformers: none
    """

    tokens: tuple[str, ...]
    position: int

    @property
    def answer(self) -> str:
        return self.tokens[self.position]


def masked_sentences(sentences: Iterable[str], tokenizer: BertTokenizer, count: int, seed: int) -> list[MaskedSentence]:
    """Up to ``count`` held-out sentences, each with one Chinese character (never [UNK],
    punctuation, a digit or a Latin letter) chosen at random to be masked.

    transformers: none
    """
    rng = random.Random(seed)
    chosen = [MaskedSentence(tuple(tokens), rng.choice(candidates))
              for tokens, candidates in _maskable(sentences, tokenizer)]
    rng.shuffle(chosen)
    return chosen[:count]


def _maskable(sentences: Iterable[str], tokenizer: BertTokenizer) -> Iterator[tuple[list[str], list[int]]]:
    """(tokens, positions of its Chinese characters) of each sentence of a usable length
    that has any."""
    for sentence in sentences:
        tokens = tokenizer.tokenize(sentence)
        if not MIN_SENTENCE_TOKENS <= len(tokens) <= MAX_SENTENCE_TOKENS:
            continue
        candidates = [i for i, t in enumerate(tokens) if len(t) == 1 and is_chinese_char(ord(t))]
        if candidates:
            yield tokens, candidates


def count_model_guesser(model: CountModel, k: int = DEFAULT_TOP_K) -> Callable[[list[MaskedSentence]], list[list[str]]]:
    """The count model as a guesser: its top k for each sentence, from the two neighbours.

    transformers: none
    """
    def guess(batch: list[MaskedSentence]) -> list[list[str]]:
        guesses = []
        for item in batch:
            padded = [EDGE, *item.tokens, EDGE]
            guesses.append(model.top_k(padded[item.position], padded[item.position + 2], k))
        return guesses

    return guess


def bert_guesser(model: torch.nn.Module, tokenizer: BertTokenizer,
                 k: int = DEFAULT_TOP_K) -> Callable[[list[MaskedSentence]], list[list[str]]]:
    """A masked-LM (``BertForPreTraining`` or ``BertForMaskedLM``) as a guesser: its top k
    at the [MASK], reading the whole sentence.

    transformers: none
    """
    def guess(batch: list[MaskedSentence]) -> list[list[str]]:
        rows = [["[CLS]", *item.tokens, "[SEP]"] for item in batch]
        width = max(map(len, rows))
        ids = torch.full((len(rows), width), tokenizer.pad_token_id, dtype=torch.long)
        for row, (tokens, item) in enumerate(zip(rows, batch)):
            ids[row, :len(tokens)] = torch.tensor(tokenizer.convert_tokens_to_ids(tokens))
            ids[row, item.position + 1] = tokenizer.mask_token_id
        attention_mask = (ids != tokenizer.pad_token_id).long()
        with torch.no_grad():
            out = model(input_ids=ids, attention_mask=attention_mask, token_type_ids=torch.zeros_like(ids))
        logits = out.prediction_logits if hasattr(out, "prediction_logits") else out.logits  # (B, T, V)
        at_mask = logits[torch.arange(len(batch)), torch.tensor([item.position + 1 for item in batch])]  # (B, V)
        return [tokenizer.convert_ids_to_tokens(row) for row in at_mask.topk(k, dim=-1).indices.tolist()]

    return guess


def top_k_accuracy(guesser: Callable[[list[MaskedSentence]], list[list[str]]], items: Sequence[MaskedSentence],
                   k: int = DEFAULT_TOP_K, batch_size: int = BERT_BATCH_SIZE) -> dict[str, float]:
    """Top-1 and top-k accuracy of ``guesser`` on ``items``.

    transformers: none
    """
    if not items:
        raise ValueError("no masked sentences to score")
    top1 = topk = 0
    for start in range(0, len(items), batch_size):
        batch = list(items[start:start + batch_size])
        for item, guesses in zip(batch, guesser(batch)):
            top1 += bool(guesses) and guesses[0] == item.answer
            topk += item.answer in guesses[:k]
    return {"top1": top1 / len(items), f"top{k}": topk / len(items)}


def masked_character_accuracy(model: torch.nn.Module, tokenizer: BertTokenizer, sentences: Sequence[str],
                              mask_share: float = 0.15, seed: int = 0, k: int = DEFAULT_TOP_K) -> dict[str, float]:
    """Top-1 and top-k at positions replaced by [MASK]: ``mask_share`` of each held-out
    sentence's Chinese characters (at least one) masked at once, as in pre-training but
    without its 10% kept and 10% random tokens; and the accuracy of always guessing the
    commonest masked character (of these positions).

    transformers: none
    """
    rng = random.Random(seed)
    hits = top = total = 0
    answers: Counter[str] = Counter()
    rows = [(tokens, sorted(rng.sample(candidates, max(1, round(mask_share * len(candidates))))))
            for tokens, candidates in _maskable(sentences, tokenizer)]
    if not rows:
        raise ValueError("no held-out sentence to mask")
    for start in range(0, len(rows), BERT_BATCH_SIZE):
        batch = rows[start:start + BERT_BATCH_SIZE]
        width = max(len(tokens) for tokens, _ in batch) + 2
        ids = torch.full((len(batch), width), tokenizer.pad_token_id, dtype=torch.long)
        for row, (tokens, positions) in enumerate(batch):
            ids[row, :len(tokens) + 2] = torch.tensor(tokenizer.convert_tokens_to_ids(["[CLS]", *tokens, "[SEP]"]))
            ids[row, [p + 1 for p in positions]] = tokenizer.mask_token_id
        with torch.no_grad():
            out = model(input_ids=ids, attention_mask=(ids != tokenizer.pad_token_id).long(),
                        token_type_ids=torch.zeros_like(ids))
        logits = out.prediction_logits if hasattr(out, "prediction_logits") else out.logits  # (B, T, V)
        for row, (tokens, positions) in enumerate(batch):
            gold = torch.tensor(tokenizer.convert_tokens_to_ids([tokens[p] for p in positions]))  # (M,)
            best = logits[row, [p + 1 for p in positions]].topk(k, dim=-1).indices  # (M, k)
            hits += int((best[:, 0] == gold).sum())
            top += int((best == gold[:, None]).any(-1).sum())
            total += len(positions)
            answers.update(tokens[p] for p in positions)
    return {"top1": hits / total, f"top{k}": top / total, "positions": total,
            "commonest_character_guess": answers.most_common(1)[0][1] / total}


def unk_rate(tokenizer: BertTokenizer, sentences: Iterable[str]) -> float:
    """The share of ``sentences``' tokens that are [UNK].

    transformers: none
    """
    unknown = total = 0
    for sentence in sentences:
        tokens = tokenizer.tokenize(sentence)
        unknown += sum(token == tokenizer.unk_token for token in tokens)
        total += len(tokens)
    return unknown / max(total, 1)


def held_out_sentences() -> dict[str, list[str]]:
    """The fixed test split's text (``corpora``): People's Daily sentences, and whole reviews.

    transformers: none
    """
    from mini_hf_bert.training.corpora import peoples_daily_documents, review_documents

    return {"peoples-daily": [s for d in peoples_daily_documents(split="test") for s in d],
            "reviews": ["".join(d) for d in review_documents("test")]}
