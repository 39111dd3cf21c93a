"""Sentence embeddings as sentence-transformers computes them for all-MiniLM-L6-v2:
the encoder's ``last_hidden_state``, averaged over the real tokens, scaled to length 1.

The checkpoint's own files say so: ``modules.json`` lists Transformer -> Pooling ->
Normalize, ``1_Pooling/config.json`` sets ``pooling_mode_mean_tokens`` (sentence-transformers
6.x writes ``"pooling_mode": "mean"``), and ``sentence_bert_config.json`` truncates at
``max_seq_length`` = 256 tokens.
"""

from __future__ import annotations

import json
import os

import torch

from ..modeling_bert import BertModel
from ..tokenization_bert import BertTokenizer

#: sentence-transformers' guard against an all-padding row (its Pooling module's clamp).
_MIN_TOKENS = 1e-9
#: sentence-transformers' pooling modes (6.x's names, as its ``"pooling_mode"`` key holds them),
#: each under the key of a ``1_Pooling/config.json`` of 2.x-5.x that turns it on, in the order
#: its Pooling module concatenates them when several keys are on.
POOLING_MODES = {
    "pooling_mode_cls_token": "cls", "pooling_mode_max_tokens": "max", "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
#: What a padding position holds before max pooling (sentence-transformers' value): never the max.
_MAX_POOL_PADDING = -1e9
#: A plain BERT directory (no modules.json) pools as all-MiniLM-L6-v2 does.
DEFAULT_POOLING = (("mean",), True)


def mean_pool(last_hidden_state: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Average the token vectors of each sentence, padding excluded: (B, T, H), (B, T) -> (B, H).

    transformers: none (sentence-transformers: ``models.Pooling`` with ``pooling_mode_mean_tokens``)
    """
    weights = attention_mask.unsqueeze(-1).to(last_hidden_state.dtype)  # (B, T, 1)
    summed = (last_hidden_state * weights).sum(dim=1)  # (B, H)
    return summed / weights.sum(dim=1).clamp(min=_MIN_TOKENS)  # (B, H)


def pool(last_hidden_state: torch.Tensor, attention_mask: torch.Tensor, modes: tuple[str, ...]) -> torch.Tensor:
    """The sentence vector of each row by each of ``modes`` (``POOLING_MODES``' values),
    concatenated: (B, T, H), (B, T) -> (B, H x len(modes)).

    transformers: none (sentence-transformers: ``models.Pooling.forward``)
    """
    batch, length, hidden = last_hidden_state.shape
    weights = attention_mask.unsqueeze(-1).to(last_hidden_state.dtype)  # (B, T, 1)
    vectors = []
    for mode in modes:
        if mode == "cls":  # the first real token: [CLS] (a left-padded row starts later)
            first = attention_mask.to(torch.int).argmax(dim=1)  # (B,)
            vectors.append(last_hidden_state[torch.arange(batch), first])  # (B, H)
        elif mode == "max":
            vectors.append(last_hidden_state.masked_fill(weights == 0, _MAX_POOL_PADDING).max(dim=1).values)  # (B, H)
        elif mode == "mean":
            vectors.append(mean_pool(last_hidden_state, attention_mask))
        elif mode == "mean_sqrt_len_tokens":  # the sum over the square root of the count
            summed = (last_hidden_state * weights).sum(dim=1)  # (B, H)
            vectors.append(summed / weights.sum(dim=1).clamp(min=_MIN_TOKENS).sqrt())
        elif mode == "weightedmean":  # token i of a row (counted from its first real token) weighs i
            position = torch.arange(1, length + 1, dtype=weights.dtype).view(1, -1, 1)  # (1, T, 1)
            position = position - attention_mask.to(torch.int).argmax(dim=1).view(-1, 1, 1)  # (B, T, 1)
            weighted = weights * position  # (B, T, 1)
            vectors.append((last_hidden_state * weighted).sum(dim=1) / weighted.sum(dim=1).clamp(min=_MIN_TOKENS))
        else:  # lasttoken: the last real token of each row
            last = length - 1 - attention_mask.flip(1).to(torch.int).argmax(dim=1)  # (B,)
            vectors.append((last_hidden_state * weights)[torch.arange(batch), last])  # (B, H)
    return torch.cat(vectors, dim=-1)


def sentence_pooling(path: str) -> tuple[tuple[str, ...], bool]:
    """(pooling modes, whether a Normalize module follows) of a sentence-transformers
    directory, from its ``modules.json`` and its Pooling module's ``config.json``; a
    directory without ``modules.json``: ``DEFAULT_POOLING`` (mean, normalised).

    The Pooling config names its modes as sentence-transformers 6.x writes them
    (``"pooling_mode": "cls"``, or a list) or as earlier versions did (a true
    ``pooling_mode_*_token(s)`` key each).

    Raises:
        ValueError: naming the file, for a mode sentence-transformers does not have, or none.

    transformers: none (sentence-transformers: ``SentenceTransformer._load_sbert_model``)
    """
    directory = os.fspath(path)
    modules_file = os.path.join(directory, "modules.json")
    if not os.path.isfile(modules_file):
        return DEFAULT_POOLING
    with open(modules_file, encoding="utf-8") as f:
        modules = json.load(f)
    kinds = {str(m.get("type", "")).rsplit(".", 1)[-1]: m for m in modules if isinstance(m, dict)}
    pooling = kinds.get("Pooling")
    if pooling is None:
        raise ValueError(f"{modules_file}: no Pooling module; a sentence embedding needs one")
    config_file = os.path.join(directory, str(pooling.get("path", "")), "config.json")
    with open(config_file, encoding="utf-8") as f:
        config = json.load(f)
    known = tuple(POOLING_MODES.values())
    if "pooling_mode" in config:  # sentence-transformers 6.x: one name, or a list of names
        given = config["pooling_mode"]
        modes = (given,) if isinstance(given, str) else tuple(given) if isinstance(given, list) else ()
        unknown = [m for m in modes if m not in known]
        if not modes or unknown:
            raise ValueError(f"{config_file}: pooling_mode {given!r} is not a sentence-transformers pooling "
                             f"(it has {', '.join(known)})")
    else:
        unread = sorted(k for k, v in config.items() if k.startswith("pooling_mode") and v and k not in POOLING_MODES)
        if unread:
            raise ValueError(f"{config_file}: {', '.join(unread)} is not a pooling mini_hf_bert computes "
                             f"(it computes {', '.join(POOLING_MODES)})")
        modes = tuple(mode for key, mode in POOLING_MODES.items() if config.get(key))
        if not modes:
            raise ValueError(f"{config_file}: no pooling mode is on")
    return modes, "Normalize" in kinds


def sentence_max_length(path: str) -> int | None:
    """``max_seq_length`` of a sentence-transformers directory's sentence_bert_config.json, else None.

    transformers: none (sentence-transformers: ``SentenceTransformer.max_seq_length``)
    """
    config = os.path.join(os.fspath(path), "sentence_bert_config.json")
    if not os.path.isfile(config):
        return None
    with open(config, encoding="utf-8") as f:
        value = json.load(f).get("max_seq_length")
    return value if isinstance(value, int) and value > 0 else None


def encode_sentences(
    model: BertModel,
    tokenizer: BertTokenizer,
    texts: list[str],
    normalize: bool = True,
    batch_size: int = 32,
    max_length: int | None = None,
    pooling: tuple[str, ...] = DEFAULT_POOLING[0],
) -> torch.Tensor:
    """(len(texts), H) sentence embeddings: mean pooling over real tokens, then (with
    ``normalize``) L2 normalisation, in batches of ``batch_size``, each text truncated to
    ``max_length`` tokens (default: the tokenizer's ``model_max_length``).

    Args:
        model: a BertModel in eval mode (``from_pretrained`` gives one).
        tokenizer: its tokenizer.
        texts: non-empty strings.
        normalize: scale each embedding to length 1, so a dot product is a cosine.
        pooling: the pooling modes (``sentence_pooling`` reads a directory's).

    transformers: none (sentence-transformers: ``SentenceTransformer.encode``)
    """
    if isinstance(texts, str) or not isinstance(texts, (list, tuple)):
        raise TypeError(f"texts must be a list of str, got {type(texts).__name__}")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] must be a str, got {type(text).__name__}")
    chunks = []
    for start in range(0, len(texts), batch_size):
        batch = tokenizer(list(texts[start:start + batch_size]), padding=True, truncation=True,
                          max_length=max_length, return_tensors="pt")
        with torch.no_grad():
            hidden = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                           token_type_ids=batch["token_type_ids"]).last_hidden_state  # (b, T, H)
        pooled = pool(hidden, batch["attention_mask"], pooling)  # (b, H x len(pooling))
        chunks.append(torch.nn.functional.normalize(pooled, p=2, dim=1) if normalize else pooled)
    if not chunks:
        return torch.zeros(0, model.config.hidden_size)
    return torch.cat(chunks)  # (len(texts), H)


def cosine_matrix(embeddings: torch.Tensor) -> torch.Tensor:
    """(B, H) -> (B, B) cosine similarities.

    transformers: none (sentence-transformers: ``util.cos_sim``)
    """
    unit = torch.nn.functional.normalize(embeddings, dim=-1)  # (B, H)
    return unit @ unit.T  # (B, B)
