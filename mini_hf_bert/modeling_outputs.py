"""Output containers, named and ordered as transformers' ``modeling_outputs.py``.

A ``ModelOutput`` is a dataclass that also behaves like transformers' one:

* ``out.last_hidden_state`` or ``out["last_hidden_state"]`` by name;
* ``out[0]``, ``out[:2]``, ``out.to_tuple()`` by position, counting only the fields
  that are not None (so positions match ``return_dict=False``);
* ``keys()`` / ``values()`` / ``items()`` over the fields that are set.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Iterator

import torch


@dataclass
class ModelOutput:
    """Base class: a dataclass whose non-None fields also form a tuple."""

    def to_tuple(self) -> tuple[Any, ...]:
        """The non-None fields in declaration order: what ``return_dict=False`` returns."""
        return tuple(v for _, v in self.items())

    def keys(self) -> list[str]:
        return [f.name for f in dataclasses.fields(self) if getattr(self, f.name) is not None]

    def values(self) -> list[Any]:
        return [getattr(self, k) for k in self.keys()]

    def items(self) -> list[tuple[str, Any]]:
        return [(k, getattr(self, k)) for k in self.keys()]

    def __getitem__(self, key: str | int | slice) -> Any:
        if isinstance(key, str):
            if key not in self.keys():
                raise KeyError(f"{type(self).__name__} has no field {key!r} set; set fields: {self.keys()}")
            return getattr(self, key)
        return self.to_tuple()[key]

    def __iter__(self) -> Iterator[str]:
        # Like transformers' ModelOutput (an OrderedDict), iteration yields the keys.
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())


@dataclass
class BaseModelOutputWithPastAndCrossAttentions(ModelOutput):
    """What BertEncoder returns (transformers' class of the same name and field order).

    Attributes:
        last_hidden_state: (B, T, H) output of the last layer.
        past_key_values: decoders with use_cache: per layer (self K, self V[, cross K, cross V]),
            each (B, N, S, D).
        hidden_states: L + 1 tensors (B, T, H): the embeddings, then each layer's output.
        attentions: L tensors (B, N, T, S): each layer's self-attention probabilities.
        cross_attentions: L tensors (B, N, T, S_enc): each layer's cross-attention probabilities.
    """

    last_hidden_state: torch.Tensor | None = None
    past_key_values: tuple[Any, ...] | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None
    cross_attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class BaseModelOutputWithPoolingAndCrossAttentions(ModelOutput):
    """What BertModel returns (transformers' class of the same name and field order).

    Attributes:
        last_hidden_state: (B, T, H) output of the last layer.
        pooler_output: (B, H) tanh(dense(last_hidden_state[:, 0])); None without a pooler.
        hidden_states: L + 1 tensors (B, T, H), when output_hidden_states.
        past_key_values: decoders with use_cache: per layer (self K, self V[, cross K, cross V]).
        attentions: L tensors (B, N, T, S), when output_attentions.
        cross_attentions: L tensors (B, N, T, S_enc) over the encoder's states, when output_attentions.
    """

    last_hidden_state: torch.Tensor | None = None
    pooler_output: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    past_key_values: tuple[Any, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None
    cross_attentions: tuple[torch.Tensor, ...] | None = None


# --------------------------------------------------------------------------------------
# Task-head outputs. Shapes: V vocabulary, C num_labels (or choices), L layers.
# --------------------------------------------------------------------------------------


@dataclass
class BertForPreTrainingOutput(ModelOutput):
    """BertForPreTraining: loss = MLM cross-entropy + NSP cross-entropy (when both label sets are given).

    Attributes:
        prediction_logits: (B, T, V) masked-LM scores before softmax.
        seq_relationship_logits: (B, 2) next-sentence scores (0 = B follows A, 1 = random).
    """

    loss: torch.Tensor | None = None
    prediction_logits: torch.Tensor | None = None
    seq_relationship_logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class MaskedLMOutput(ModelOutput):
    """BertForMaskedLM. logits: (B, T, V)."""

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class CausalLMOutputWithCrossAttentions(ModelOutput):
    """BertLMHeadModel. logits: (B, T, V); loss on next-token prediction (labels shifted left by one)."""

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    past_key_values: tuple[Any, ...] | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None
    cross_attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class NextSentencePredictorOutput(ModelOutput):
    """BertForNextSentencePrediction. logits: (B, 2)."""

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class SequenceClassifierOutput(ModelOutput):
    """BertForSequenceClassification. logits: (B, C)."""

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class MultipleChoiceModelOutput(ModelOutput):
    """BertForMultipleChoice. logits: (B, num_choices)."""

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class TokenClassifierOutput(ModelOutput):
    """BertForTokenClassification. logits: (B, T, C)."""

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class QuestionAnsweringModelOutput(ModelOutput):
    """BertForQuestionAnswering. start_logits, end_logits: (B, T) span-boundary scores."""

    loss: torch.Tensor | None = None
    start_logits: torch.Tensor | None = None
    end_logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None
