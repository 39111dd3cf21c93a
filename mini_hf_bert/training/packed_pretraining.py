"""Pre-training data for an accelerator: the corpus tokenized once, on the CPU, into flat
arrays; sentence pairs cut from them on the device, a whole batch at once, every step.

    corpus --pack_documents (CPU, once)--> PackedCorpus: tokens, sentence_starts, document bounds
           --save_pack / load_pack--> one gzipped safetensors file: the ids (int16, two bytes a
             character), each sentence's length and each document's sentence count
           --sample_pairs (on the device)--> [CLS] A [SEP] B [SEP], segments, NSP labels
           --mask_tokens_dynamically (on the device)--> MLM inputs and labels

Why not Google's instances (pretraining_data.py): a GPU computes a small BERT's step in a
few milliseconds, while Python makes a few thousand instances a second; written out they
would not fit the 64 MiB a lent machine's run carries. Here a batch is index arithmetic.

The pairs follow Google's rules, simplified where a batch must be made at once:
* A is whole sentences from a random sentence, up to a random length within the target,
  at least one sentence;
* B is, half the time and always after a document's last sentence, a random place in
  another document (label 1), else the sentences after A (label 0): up to the target, at
  least one sentence;
* a pair longer than the target loses tokens from the longer side until it fits, as
  Google's ``truncate_seq_pair`` does (A from its front, B from its back: what stays of
  A still ends where B begins);
* the target is the full length, or with probability ``short_seq_prob`` a random shorter
  one (Google's ``short_seq_prob``);
* masks are drawn afresh each step (RoBERTa's dynamic masking; the plateau study found it
  no worse than static masks: docs/training_results.md).

transformers: none (google-research/bert: ``create_pretraining_data.py``, vectorized)
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import struct
from collections.abc import Sequence

import torch

from ..file_utils import staged_file
from ..tokenization_bert import BertTokenizer
from .pretraining_data import mask_tokens_dynamically
from ..progress import progress_bar

#: [CLS], [SEP], [SEP]: the tokens of a pair that are not text.
NUM_SPECIAL_TOKENS = 3
#: Google's defaults: how often a pair aims at a random shorter length, and the share of
#: tokens predicted.
SHORT_SEQ_PROB = 0.1
MLM_PROBABILITY = 0.15
#: What the pack file says it is, so that a wrong file is refused by name.
PACK_FORMAT = "mini_hf_bert packed pre-training corpus, version 1"
#: Ids and sentence lengths are stored as int16 where they fit: half the bytes of int32.
INT16_LIMIT = 2 ** 15
#: The pack is read whole into memory (gzip, then safetensors from bytes): at most this much.
MAX_PACK_BYTES = 2 ** 30


@dataclasses.dataclass
class PackedCorpus:
    """A tokenized corpus as flat arrays (all int64 once loaded).

    Attributes:
        tokens: (N,) every sentence's ids, one after another.
        sentence_starts: (S + 1,) sentence i is ``tokens[sentence_starts[i]:sentence_starts[i + 1]]``.
        document_starts: (S,) the first sentence of sentence i's document.
        document_ends: (S,) one past the last sentence of sentence i's document.
    """

    tokens: torch.Tensor
    sentence_starts: torch.Tensor
    document_starts: torch.Tensor
    document_ends: torch.Tensor

    @property
    def num_sentences(self) -> int:
        return len(self.document_ends)

    @property
    def num_documents(self) -> int:
        return int(torch.unique(self.document_starts).numel())

    def to(self, device: torch.device | str) -> PackedCorpus:
        return PackedCorpus(*(getattr(self, f.name).to(device) for f in dataclasses.fields(self)))


def pack_documents(documents: Sequence[Sequence[str]], tokenizer: BertTokenizer, progress: bool = False,
                   what: str = "the corpus") -> PackedCorpus:
    """Tokenize ``documents`` (each a list of sentences) into a ``PackedCorpus``; empty
    sentences and documents are dropped. Refuses text with fewer than two documents (a
    random B needs another document) or no document of two sentences (no true next one)."""
    ids: list[int] = []
    starts, doc_starts, doc_ends = [0], [], []
    bar = progress_bar(len(documents), f"tokenizing {what}", progress, unit="doc")
    for document in documents:
        first = len(starts) - 1
        for sentence in document:
            pieces = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(sentence))
            if pieces:
                ids += pieces
                starts.append(len(ids))
        count = len(starts) - 1 - first
        doc_starts += [first] * count
        doc_ends += [first + count] * count
        bar.update()
    bar.close()
    corpus = PackedCorpus(torch.tensor(ids, dtype=torch.long), torch.tensor(starts, dtype=torch.long),
                          torch.tensor(doc_starts, dtype=torch.long), torch.tensor(doc_ends, dtype=torch.long))
    if corpus.num_sentences == 0 or corpus.num_documents < 2:
        raise ValueError(f"{what}: {corpus.num_documents} document(s) with text; a random next sentence comes from "
                         f"another document, so two at least are needed")
    if not bool((corpus.document_ends - corpus.document_starts > 1).any()):
        raise ValueError(f"{what}: every document is one sentence long, so no pair would be a true next sentence")
    return corpus


def _smallest(values: torch.Tensor) -> torch.Tensor:
    """``values`` (non-negative) as int16 where they fit, else int32."""
    fits = values.numel() == 0 or int(values.max()) < INT16_LIMIT
    return values.to(torch.int16 if fits else torch.int32).contiguous()


def save_pack(path: str | os.PathLike, parts: dict[str, PackedCorpus], vocab_size: int,
              metadata: dict[str, str] | None = None) -> str:
    """Write ``parts`` (e.g. "train", "heldout") to one gzipped safetensors file, whole:
    per part its ids, each sentence's length and each document's number of sentences (the
    starts and bounds follow from them)."""
    from safetensors.torch import save

    if vocab_size < 1:
        raise ValueError(f"vocab_size must be positive, got {vocab_size}")
    tensors = {}
    for name, corpus in parts.items():
        tensors[f"{name}.tokens"] = corpus.tokens.to(torch.int16 if vocab_size <= INT16_LIMIT else torch.int32)
        tensors[f"{name}.sentence_lengths"] = _smallest(corpus.sentence_starts.diff())
        first = torch.unique_consecutive(corpus.document_starts)
        tensors[f"{name}.document_sentences"] = _smallest(corpus.document_ends[first] - first)
    info = {"format": PACK_FORMAT, "vocab_size": str(vocab_size), "parts": json.dumps(sorted(parts)),
            **(metadata or {})}
    data = gzip.compress(save(tensors, metadata=info), compresslevel=6, mtime=0)
    with staged_file(path) as staged, open(staged, "wb") as f:
        f.write(data)
    return os.fspath(path)


def _safetensors_metadata(data: bytes) -> dict[str, str]:
    """The ``__metadata__`` of safetensors bytes: an 8-byte little-endian header length,
    then the header, JSON (the format's own layout)."""
    (length,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + length]).get("__metadata__") or {}


def load_pack(path: str | os.PathLike, device: torch.device | str = "cpu") -> tuple[dict[str, PackedCorpus],
                                                                                    dict[str, str]]:
    """(parts by name, the file's metadata) of a pack ``save_pack`` wrote, on ``device``."""
    from safetensors.torch import load

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such pack file (tools/pretrain_gpu.py pack writes it)")
    try:
        with gzip.open(path, "rb") as f:
            data = f.read(MAX_PACK_BYTES + 1)
        metadata = _safetensors_metadata(data) if len(data) <= MAX_PACK_BYTES else {}
    except Exception as e:  # noqa: BLE001 - gzip's, struct's and json's errors: a damaged or foreign file
        raise ValueError(f"{path}: not a readable pack (gzipped safetensors) file ({type(e).__name__}: {e})") from None
    if len(data) > MAX_PACK_BYTES:
        raise ValueError(f"{path}: not a readable pack: more than {MAX_PACK_BYTES:,} bytes unpacked")
    if metadata.get("format") != PACK_FORMAT:
        raise ValueError(f"{path}: not a packed corpus (its metadata says {metadata.get('format')!r})")
    try:
        tensors = load(data)
    except Exception as e:  # noqa: BLE001 - safetensors' errors: a damaged file
        raise ValueError(f"{path}: not a readable pack (gzipped safetensors) file ({type(e).__name__}: {e})") from None
    parts = {}
    for name in json.loads(metadata["parts"]):
        lengths = tensors[f"{name}.sentence_lengths"].long()
        counts = tensors[f"{name}.document_sentences"].long()
        starts = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
        first = torch.cat([torch.zeros(1, dtype=torch.long), counts.cumsum(0)[:-1]])
        document_starts = first.repeat_interleave(counts)
        parts[name] = PackedCorpus(tensors[f"{name}.tokens"].long(), starts, document_starts,
                                   document_starts + counts.repeat_interleave(counts))
        parts[name] = parts[name].to(device)
    return parts, metadata


@dataclasses.dataclass
class PairBatch:
    """A batch of sentence pairs: (B, T) each, ``next_sentence_label`` (B,), 1 = random B."""

    input_ids: torch.Tensor
    token_type_ids: torch.Tensor
    attention_mask: torch.Tensor
    special_tokens_mask: torch.Tensor
    next_sentence_label: torch.Tensor


def _uniform_below(high: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """An integer in [0, high) for each element of ``high`` (all > 0)."""
    draw = torch.rand(high.shape, generator=generator, device=high.device)
    return torch.minimum((draw * high).long(), high - 1)


def sample_pairs(corpus: PackedCorpus, batch_size: int, seq_length: int, tokenizer: BertTokenizer,
                 generator: torch.Generator, short_seq_prob: float = SHORT_SEQ_PROB) -> PairBatch:
    """``batch_size`` sentence pairs of ``seq_length`` tokens, made on ``corpus``'s device
    (the module docstring gives the rules)."""
    device = corpus.tokens.device
    starts, doc_starts, doc_ends = corpus.sentence_starts, corpus.document_starts, corpus.document_ends
    room = seq_length - NUM_SPECIAL_TOKENS
    if room < 2:
        raise ValueError(f"seq_length must be at least {NUM_SPECIAL_TOKENS + 2}, got {seq_length}")
    shape = (batch_size,)

    # The target length: the full room, or sometimes a random shorter one.
    short = torch.rand(shape, generator=generator, device=device) < short_seq_prob
    target = torch.where(short, 2 + _uniform_below(torch.full(shape, room - 1, device=device), generator),
                         torch.full(shape, room, device=device))  # (B,) in [2, room]

    # A: whole sentences from a0, up to a random share of the target, within the document.
    a0 = _uniform_below(torch.full(shape, corpus.num_sentences, device=device), generator)
    a_wanted = 1 + _uniform_below(target - 1, generator)  # (B,) in [1, target - 1]
    a_end = torch.searchsorted(starts, starts[a0] + a_wanted, right=True) - 1  # last start within a_wanted
    a_end = torch.minimum(torch.maximum(a_end, a0 + 1), doc_ends[a0])  # one sentence at least, same document
    full_a = starts[a_end] - starts[a0]

    # B: the next sentences, or (half the time, and after a document's end) another document's.
    is_random = (torch.rand(shape, generator=generator, device=device) < 0.5) | (a_end == doc_ends[a0])
    own = doc_ends[a0] - doc_starts[a0]
    other = _uniform_below(corpus.num_sentences - own, generator)
    other = other + (other >= doc_starts[a0]).long() * own  # skip a0's document
    b0 = torch.where(is_random, other, a_end)
    b0 = torch.minimum(b0, torch.full_like(b0, corpus.num_sentences - 1))  # a_end may equal S when not random
    first_b = starts[b0 + 1] - starts[b0]
    full_b = torch.minimum(starts[doc_ends[b0]] - starts[b0], torch.maximum(first_b, target - full_a))

    # Truncate the pair to the target, the longer side first: the closed form of removing
    # one token at a time from whichever is longer.
    len_a = torch.minimum(full_a, torch.maximum(target - full_b, target // 2))
    len_b = torch.minimum(full_b, target - len_a)
    a_from = starts[a_end] - len_a

    # (B, T): [CLS] A [SEP] B [SEP] [PAD]...
    j = torch.arange(seq_length, device=device)[None, :]  # (1, T)
    la, lb = len_a[:, None], len_b[:, None]  # (B, 1)
    in_a = (j >= 1) & (j <= la)
    in_b = (j >= la + 2) & (j <= la + 1 + lb)
    index = torch.where(in_a, a_from[:, None] + j - 1, starts[b0][:, None] + j - la - 2)
    ids = corpus.tokens[index.clamp(0, len(corpus.tokens) - 1)]
    ids = torch.where(in_a | in_b, ids, torch.full_like(ids, tokenizer.pad_token_id))
    ids = torch.where((j == la + 1) | (j == la + lb + 2), torch.full_like(ids, tokenizer.sep_token_id), ids)
    ids[:, 0] = tokenizer.cls_token_id
    length = la + lb + NUM_SPECIAL_TOKENS  # (B, 1)
    return PairBatch(input_ids=ids, token_type_ids=((j >= la + 2) & (j < length)).long(),
                     attention_mask=(j < length).long(), special_tokens_mask=~(in_a | in_b),
                     next_sentence_label=is_random.long())


def pretraining_batch(corpus: PackedCorpus, batch_size: int, seq_length: int, tokenizer: BertTokenizer,
                      generator: torch.Generator, mlm_probability: float = MLM_PROBABILITY) -> dict[str, torch.Tensor]:
    """A batch for ``BertForPreTraining``: pairs (``sample_pairs``) with fresh masks."""
    pairs = sample_pairs(corpus, batch_size, seq_length, tokenizer, generator)
    input_ids, labels = mask_tokens_dynamically(pairs.input_ids, tokenizer, mlm_probability,
                                                special_tokens_mask=pairs.special_tokens_mask, generator=generator)
    return {"input_ids": input_ids, "token_type_ids": pairs.token_type_ids, "attention_mask": pairs.attention_mask,
            "labels": labels, "next_sentence_label": pairs.next_sentence_label}
