"""``pipeline("sentence-similarity")``: cosine similarities of pooled sentence embeddings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from ..modeling_bert import BertModel
from ..tokenization_bert import BertTokenizer
from .base import Pipeline, PipelineInputError, _non_empty
from .sentence_embeddings import DEFAULT_POOLING, pool


class SentenceSimilarityPipeline(Pipeline):
    """Cosine similarity of a source sentence to each of several sentences, from pooled
    sentence embeddings: by the pooling the checkpoint's sentence-transformers files name
    (``pooling``: its modes; ``pipeline()`` reads them), else mean pooling.

    transformers: none (the hub's ``sentence-similarity`` task, run by sentence-transformers)
    """

    task = "sentence-similarity"
    model_classes = (BertModel,)

    def __init__(self, model: torch.nn.Module, tokenizer: BertTokenizer | None = None, *,
                 max_length: int | None = None, pooling: tuple[str, ...] = DEFAULT_POOLING[0], **options: Any) -> None:
        """``max_length`` and ``pooling`` as ``pipeline()`` reads them from a sentence-transformers
        directory; ``options``: ``Pipeline``'s (device, dtype, batch_size, progress)."""
        super().__init__(model, tokenizer, **options)
        # sentence-transformers truncates at its own max_seq_length (256 for all-MiniLM-L6-v2).
        self.max_length = max_length
        self.pooling = pooling

    def __call__(self, inputs: dict | list[dict], batch_size: int | None = None) -> list:
        """Args:
            inputs: ``{"source_sentence": str, "sentences": [str, ...]}`` (the hub's form),
                or a list of such dicts.

        Returns:
            The cosine similarities, one per sentence (a list of such lists for a list).
        """
        many = isinstance(inputs, (list, tuple))
        queries = list(inputs) if many else [inputs]
        if not queries:
            raise PipelineInputError("inputs must be a {'source_sentence': ..., 'sentences': [...]} dict or a non-empty list of them")
        texts, sizes = [], []
        for i, query in enumerate(queries):
            where = f"inputs[{i}]" if many else "inputs"
            if not isinstance(query, Mapping) or set(query) != {"source_sentence", "sentences"}:
                raise PipelineInputError(f"{where} must be a dict with keys 'source_sentence' and 'sentences', got {query!r:.80}")
            sentences = query["sentences"]
            if isinstance(sentences, str) or not isinstance(sentences, (list, tuple)) or not sentences:
                raise PipelineInputError(f"{where}['sentences'] must be a non-empty list of str")
            texts.append(_non_empty(query["source_sentence"], f"{where}['source_sentence']"))
            texts += [_non_empty(s, f"{where}['sentences'][{j}]") for j, s in enumerate(sentences)]
            sizes.append(len(sentences))

        def preprocess(text: str, index: int) -> list[dict]:
            return [dict(self.tokenizer(text, truncation=True, max_length=self.max_length, return_tensors="pt"))]

        def postprocess(text: str, outputs: list[dict]) -> torch.Tensor:
            pooled = pool(outputs[0]["last_hidden_state"], outputs[0]["attention_mask"], self.pooling)  # (1, H')
            return torch.nn.functional.normalize(pooled, p=2, dim=1)[0]  # (H,)

        embeddings = self._run(texts, preprocess, postprocess, batch_size)
        results, position = [], 0
        for size in sizes:
            source, others = embeddings[position], torch.stack(embeddings[position + 1:position + 1 + size])  # (H,), (n, H)
            results.append((others @ source).tolist())  # unit vectors: dot product = cosine
            position += 1 + size
        return results if many else results[0]
