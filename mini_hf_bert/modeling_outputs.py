"""Output containers, named and ordered as transformers' ``modeling_outputs.py``.

A ``ModelOutput`` is a dataclass that is also an ordered dict of its fields that are
not None, as transformers' one is:

* ``out.last_hidden_state`` or ``out["last_hidden_state"]`` by name;
* ``out[0]``, ``out[:2]``, ``out.to_tuple()`` by position, counting only the fields
  that are set (so positions match ``return_dict=False``);
* ``keys()`` / ``values()`` / ``items()``, ``len`` and iteration over the fields that are set.

Being a dict is what lets ``torch.jit.trace(model, ..., strict=False)`` trace a model
that returns one (the tracer accepts dicts, not arbitrary objects), and every subclass
is registered as a pytree node, so ``torch.compile`` and ``torch.export`` flatten it into
its tensors and rebuild it.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import torch
import torch.utils._pytree as pytree


class ModelOutput(OrderedDict):
    """Base class: a dataclass whose non-None fields are also its dict entries, in field order.

    transformers: ``utils.ModelOutput``
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The pytree node (like transformers' ModelOutput): its children are the set fields'
        # values, its context their names, so a flattened output rebuilds exactly.
        pytree.register_pytree_node(
            cls,
            lambda output: (list(output.values()), list(output.keys())),
            lambda values, names, output_type=cls: output_type(dict(zip(names, values))),
            serialized_type_name=f"{cls.__module__}.{cls.__qualname__}",
        )

    def __post_init__(self) -> None:
        # Rebuilt from one dict, as transformers allows: ``type(out)({k: f(v) for k, v in
        # out.items()})`` is how accelerate and Trainer map a function over an output
        # (bf16 casts, gathering across processes). Then the dict is the content.
        names = [f.name for f in dataclasses.fields(self)]
        first = self.__dict__.get(names[0])
        if isinstance(first, dict) and all(self.__dict__.get(n) is None for n in names[1:]):
            object.__setattr__(self, names[0], None)
            object.__setattr__(self, "_extra_keys", [])
            for key, value in first.items():
                self[key] = value
        self._sync()

    def _sync(self) -> None:
        """Make the dict entries the fields that are not None, in declaration order, then
        the keys added by name that are not fields (in the order they were added)."""
        extra = {k: OrderedDict.__getitem__(self, k) for k in self.__dict__.get("_extra_keys", ()) if k in self}
        OrderedDict.clear(self)
        for f in dataclasses.fields(self):
            value = self.__dict__.get(f.name)
            if value is not None:
                OrderedDict.__setitem__(self, f.name, value)
        for key, value in extra.items():
            OrderedDict.__setitem__(self, key, value)

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name in self.__dataclass_fields__ and all(f in self.__dict__ for f in self.__dataclass_fields__):
            if value is not None and OrderedDict.__contains__(self, name):
                OrderedDict.__setitem__(self, name, value)  # in place: a loop over the output may set it
            else:
                self._sync()  # after construction: setting a field updates the dict view

    def __setitem__(self, key: str, value: Any) -> None:
        """Set a field, or add a key that is not one (transformers' pipelines add
        ``input_ids`` to a model's output): it follows the fields, by name and position."""
        if key in self.__dataclass_fields__:
            setattr(self, key, value)
            return
        if not isinstance(key, str):
            raise KeyError(f"{type(self).__name__} keys are strings, got {key!r}")
        if key in _RESERVED_NAMES or key.startswith("_"):
            raise KeyError(f"{type(self).__name__}: {key!r} would hide a method or attribute of the output")
        extra = self.__dict__.setdefault("_extra_keys", [])
        if key not in extra:
            extra.append(key)
        object.__setattr__(self, key, value)
        OrderedDict.__setitem__(self, key, value)

    def __getitem__(self, key: str | int | slice) -> Any:
        if isinstance(key, str):
            if key not in self:
                raise KeyError(f"{type(self).__name__} has no field {key!r} set; set fields: {list(self.keys())}")
            return OrderedDict.__getitem__(self, key)
        return self.to_tuple()[key]

    def __delitem__(self, key: str) -> None:
        raise TypeError(f"{type(self).__name__} fields cannot be deleted; set the field to None instead")

    def to_tuple(self) -> tuple[Any, ...]:
        """The non-None fields in declaration order: what ``return_dict=False`` returns."""
        return tuple(self.values())


#: Names a key added by ``__setitem__`` may not take: they would shadow the dict's methods.
_RESERVED_NAMES = frozenset(dir(ModelOutput))


@dataclass
class BaseModelOutput(ModelOutput):
    """What BertEncoder returns (transformers' class of the same name and field order).

    Attributes:
        last_hidden_state: (B, T, H) output of the last layer.
        hidden_states: L + 1 tensors (B, T, H): the embeddings, then each layer's output.
        attentions: L tensors (B, N, T, S): each layer's self-attention probabilities.

    transformers: ``modeling_outputs.BaseModelOutput`` (3.4's BertEncoder returns it)
    """

    last_hidden_state: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class BaseModelOutputWithPastAndCrossAttentions(ModelOutput):
    """What the encoder returns under transformers 4.x's options (modeling_bert_extras.py:
    a decoder's cache and cross-attentions), as transformers' class of the same name and field order.

    Attributes:
        last_hidden_state: (B, T, H) output of the last layer.
        past_key_values: decoders with use_cache: per layer (self K, self V[, cross K, cross V]),
            each (B, N, S, D).
        hidden_states: L + 1 tensors (B, T, H): the embeddings, then each layer's output.
        attentions: L tensors (B, N, T, S): each layer's self-attention probabilities.
        cross_attentions: L tensors (B, N, T, S_enc): each layer's cross-attention probabilities.

    transformers: ``modeling_outputs.BaseModelOutputWithPastAndCrossAttentions``
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

    transformers: ``modeling_outputs.BaseModelOutputWithPoolingAndCrossAttentions``
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

    transformers: ``BertForPreTrainingOutput``
    """

    loss: torch.Tensor | None = None
    prediction_logits: torch.Tensor | None = None
    seq_relationship_logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class MaskedLMOutput(ModelOutput):
    """BertForMaskedLM. logits: (B, T, V).

    transformers: ``modeling_outputs.MaskedLMOutput``
    """

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class CausalLMOutputWithCrossAttentions(ModelOutput):
    """BertLMHeadModel. logits: (B, T, V); loss on next-token prediction (labels shifted left by one).

    transformers: ``modeling_outputs.CausalLMOutputWithCrossAttentions``
    """

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    past_key_values: tuple[Any, ...] | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None
    cross_attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class NextSentencePredictorOutput(ModelOutput):
    """BertForNextSentencePrediction. logits: (B, 2).

    transformers: ``modeling_outputs.NextSentencePredictorOutput``
    """

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class SequenceClassifierOutput(ModelOutput):
    """BertForSequenceClassification. logits: (B, C).

    transformers: ``modeling_outputs.SequenceClassifierOutput``
    """

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class MultipleChoiceModelOutput(ModelOutput):
    """BertForMultipleChoice. logits: (B, num_choices).

    transformers: ``modeling_outputs.MultipleChoiceModelOutput``
    """

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class TokenClassifierOutput(ModelOutput):
    """BertForTokenClassification. logits: (B, T, C).

    transformers: ``modeling_outputs.TokenClassifierOutput``
    """

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class QuestionAnsweringModelOutput(ModelOutput):
    """BertForQuestionAnswering. start_logits, end_logits: (B, T) span-boundary scores.

    transformers: ``modeling_outputs.QuestionAnsweringModelOutput``
    """

    loss: torch.Tensor | None = None
    start_logits: torch.Tensor | None = None
    end_logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


#: What a task model's output takes from its encoder's unchanged, where it has the field.
ENCODER_FIELDS = ("past_key_values", "hidden_states", "attentions", "cross_attentions")


def with_encoder_fields(output: ModelOutput, encoded: ModelOutput) -> ModelOutput:
    """``output`` (a task model's) with the encoder's hidden states, attentions, and a
    decoder's cache and cross-attentions copied in, each where ``output`` has the field.

    transformers: none (each head's return statement names them one by one)
    """
    for name in ENCODER_FIELDS:
        if name in output.__dataclass_fields__:
            setattr(output, name, getattr(encoded, name))
    return output
