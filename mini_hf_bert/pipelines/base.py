"""The steps every pipeline shares (preprocess, forward in padded batches, postprocess) and
the checks on what a caller passes. Each task's pipeline is a subclass in its own module."""

from __future__ import annotations

import inspect
import itertools
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import torch

from ..checkpoints.loading import resolve_dtype
from ..tokenization_bert import BertTokenizer
from ..tokenization_bert_fast import BertTokenizerFast
from ..tokenization_utils_base import BatchEncoding

#: The padding value of each key when features are batched (transformers' ``pad_collate_fn``):
#: padding is no token (attention 0), segment 0, and never part of an answer (masks 1).
_PAD_VALUES = {"attention_mask": 0, "token_type_ids": 0, "special_tokens_mask": 1, "p_mask": 1}


class PipelineException(ValueError):
    """An input a pipeline cannot answer (fill-mask: a text with no [MASK]), naming the
    task and the model as transformers' does; also a ValueError, as these were before.

    transformers: ``pipelines.base.PipelineException``
    """

    def __init__(self, task: str, model: str, reason: str) -> None:
        super().__init__(reason)
        self.task, self.model, self.reason = task, model, reason


class PipelineInputError(ValueError, TypeError):
    """An input a pipeline cannot take: not text, empty, or in a form the task does not
    read. A ValueError, as transformers' pipelines raise, and a TypeError where the value
    is of the wrong type, so code written for either catches it.

    transformers: none (its pipelines raise ValueError)
    """


class Pipeline:
    """What every task shares: loading, batching features, the progress bar.

    transformers: ``pipelines.base.Pipeline``

    Args:
        model: the model, in eval mode.
        tokenizer: its tokenizer.
        feature_extractor / image_processor / processor: transformers' arguments for
            pipelines that read sound or images; BERT's read text, so each must be None
            (transformers' tools pass them as None).
        device: where the model runs (``"cpu"``, ``"cuda"``, ``0``); None leaves it where it is.
        dtype: cast the model to this dtype (a torch dtype or its name; None or "auto":
            leave it as it is). transformers ignores it for a model object; here it is
            what was asked.
        batch_size: features per forward pass (1: each input alone, unpadded).
        progress: a progress bar (tqdm) over the batches; None shows one when there is
            more than one batch and stderr is a terminal.
        **call_defaults: defaults for the call's keyword arguments (``FillMaskPipeline(...,
            top_k=2)``), as transformers' pipelines take them; each must name one of the
            call's arguments, or it is a TypeError listing them.
    """

    task = ""
    #: The model classes this task can run (checked when a model object is given).
    model_classes: tuple[type, ...] = ()

    def __init__(self, model: torch.nn.Module, tokenizer: BertTokenizer | None = None, feature_extractor: Any = None,
                 image_processor: Any = None, processor: Any = None, device: str | int | torch.device | None = None,
                 dtype: str | torch.dtype | None = None, batch_size: int = 1, progress: bool | None = None,
                 **call_defaults: Any) -> None:
        if not isinstance(model, self.model_classes) and not _transformers_counterpart(model, self.model_classes):
            names = " or ".join(c.__name__ for c in self.model_classes)
            raise TypeError(f"{self.task} needs a {names} (mini_hf_bert's or transformers'), got {_described(model)}")
        for name, value in (("feature_extractor", feature_extractor), ("image_processor", image_processor),
                            ("processor", processor)):
            if value is not None:
                raise TypeError(f"{type(self).__name__} reads text with its tokenizer; it takes no {name} "
                                f"(got {_described(value)})")
        if tokenizer is None:
            raise ValueError(f"{type(self).__name__} needs tokenizer= (a BertTokenizer, or transformers' BertTokenizer "
                             f"or BertTokenizerFast): there is no hub here to fetch the model's own")
        if _is_transformers_bert_tokenizer(tokenizer):
            tokenizer = _from_transformers_tokenizer(tokenizer)
        if not isinstance(tokenizer, BertTokenizer):
            raise TypeError(f"tokenizer must be a BertTokenizer (mini_hf_bert's, or transformers' BertTokenizer or "
                            f"BertTokenizerFast), got {_described(tokenizer)}")
        self.batch_size = _check_batch_size(batch_size)
        target = resolve_dtype(dtype, "dtype")
        if target not in (None, "auto"):
            model = model.to(target)
        self.model = model.eval() if device is None else model.to(_device(device)).eval()
        self.tokenizer = tokenizer
        self.progress = progress
        self.defaults: dict[str, Any] = self._checked_defaults(call_defaults)

    @classmethod
    def call_arguments(cls) -> list[str]:
        """The keyword arguments of the task's call that ``call_defaults`` may set."""
        return [p for p in inspect.signature(cls.__call__).parameters if p not in ("self", "batch_size")]

    def _checked_defaults(self, call_defaults: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(call_defaults) - set(self.call_arguments()))
        if unknown:
            raise TypeError(f"{type(self).__name__} got unexpected keyword arguments {unknown}; its calls take "
                            f"{self.call_arguments()}")
        return dict(call_defaults)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def _options(self, given: dict[str, Any]) -> dict[str, Any]:
        """The call's keyword arguments, those left None taken from ``pipeline(...)``'s."""
        return {key: self.defaults.get(key) if value is None else value for key, value in given.items()}

    # -------------------------------------------------------------- the three steps
    def _run(self, inputs: list, preprocess: Callable[[Any, int], list[dict]], postprocess: Callable[[Any, list[dict]], Any],
             batch_size: int | None) -> list:
        """``inputs`` -> answers: preprocess each into features, forward them in padded
        batches, postprocess each input's features' outputs."""
        batch_size = _check_batch_size(self.batch_size if batch_size is None else batch_size)
        features = [preprocess(item, index) for index, item in enumerate(inputs)]
        flat = [feature for group in features for feature in group]
        outputs = self._forward_all(flat, batch_size)
        answers, position = [], 0
        for item, group in zip(inputs, features):
            answers.append(postprocess(item, outputs[position:position + len(group)]))
            position += len(group)
        return answers

    def _forward_all(self, features: list[dict], batch_size: int) -> list[dict]:
        """Each feature with the model's outputs for it added (a (1, T, ...) slice of its
        batch, padding kept: transformers' pipelines return padded rows too)."""
        batches = [features[i:i + batch_size] for i in range(0, len(features), batch_size)]
        results: list[dict] = []
        for batch in _progress_bar(batches, self.task, self.progress):
            padded = self._collate(batch)
            names = [n for n in self.tokenizer.model_input_names if n in padded]
            with torch.no_grad():
                outputs = self.model(**{n: padded[n].to(self.device) for n in names})
            for i, feature in enumerate(batch):
                result = dict(feature)
                result.update({key: value[i:i + 1] for key, value in padded.items()})  # the padded inputs
                result.update({key: value[i:i + 1].float().cpu() for key, value in outputs.items()
                               if isinstance(value, torch.Tensor)})
                results.append(result)
        return results

    def _collate(self, batch: list[dict]) -> dict[str, torch.Tensor]:
        """Stack the features' (1, T) tensors into (B, T_max), padded on the tokenizer's side."""
        keys = [k for k, v in batch[0].items() if isinstance(v, torch.Tensor)]
        if len(batch) == 1:
            return {k: batch[0][k] for k in keys}
        padded = {}
        for key in keys:
            width = max(f[key].shape[1] for f in batch)
            value = self.tokenizer.pad_token_id if key == "input_ids" else _PAD_VALUES.get(key, 0)
            table = torch.full((len(batch), width) + tuple(batch[0][key].shape[2:]), value, dtype=batch[0][key].dtype)
            for i, feature in enumerate(batch):
                row = feature[key][0]
                if self.tokenizer.padding_side == "left":
                    table[i, width - len(row):] = row
                else:
                    table[i, :len(row)] = row
            padded[key] = table  # (B, T_max)
        return padded

    # -------------------------------------------------------------- streams
    def _stream(self, inputs: Iterable, call: Callable[[list, int], Any], batch_size: int | None,
                unwraps_one: bool = False) -> Iterator:
        """One answer per item of ``inputs`` (a generator, a dataset), as they come: ``call``
        answers a list of ``batch_size`` items at a time (the pipeline's, where not given)
        in one batch, so a stream of any length is never held whole (transformers'
        ``PipelineIterator``). ``unwraps_one``: the task answers a list of one item with
        that item's answer alone (fill-mask, as transformers'), not a list of it."""
        size = _check_batch_size(self.batch_size if batch_size is None else batch_size)
        items = iter(inputs)
        while chunk := list(itertools.islice(items, size)):
            answers = call(chunk, size)
            yield from ([answers] if unwraps_one and len(chunk) == 1 else answers)

    # -------------------------------------------------------------- input checks
    def _texts(self, inputs: Any, argument: str = "inputs") -> tuple[list[str], bool]:
        """One text or a list of them -> (the list, whether a list was given)."""
        if isinstance(inputs, str):
            return [_non_empty(inputs, argument)], False
        if isinstance(inputs, (list, tuple)) and inputs:
            return [_non_empty(t, f"{argument}[{i}]") for i, t in enumerate(inputs)], True
        raise PipelineInputError(f"{argument} must be a str or a non-empty list of str, got "
                                 f"{type(inputs).__name__ if not isinstance(inputs, (list, tuple)) else 'an empty list'}")


def is_stream(inputs: Any) -> bool:
    """Whether ``inputs`` is a stream of inputs to answer one by one (a generator, a
    dataset), not one input or a list of them.

    transformers: none (its ``Pipeline.__call__`` tells a generator or a Dataset from a list inline)
    """
    return isinstance(inputs, Iterable) and not isinstance(inputs, (str, bytes, list, tuple, Mapping))


def _non_empty(text: Any, where: str) -> str:
    if not isinstance(text, str):
        raise PipelineInputError(f"{where} must be a str, got {type(text).__name__}")
    if not text.strip():
        raise PipelineInputError(f"{where} is empty ({text!r}); there is nothing to run the model on")
    return text


def _encode_to_fit(pipe: Pipeline, text: str, pair: str | None, where: str) -> BatchEncoding:
    """``text`` (and ``pair``) encoded as one (1, T) input, refused when longer than the
    model's position table. The tokenizer reads one token past the table and no further,
    so a book costs what its first page costs before it is refused."""
    limit = pipe.model.config.max_position_embeddings
    encoded = pipe.tokenizer(text, pair, truncation=True, max_length=limit + 1, return_tensors="pt")
    if encoded["input_ids"].shape[-1] > limit:
        raise ValueError(f"{where} is more than {limit} tokens long; the model takes at most {limit}: "
                         f"shorten it, or pass truncation=True where the task has it")
    return encoded


def _check_fits(model: torch.nn.Module, input_ids: torch.Tensor, where: str) -> None:
    """A text longer than the position table would index past it: say so, with the fix."""
    limit = model.config.max_position_embeddings
    if input_ids.shape[-1] > limit:
        raise ValueError(f"{where} is {input_ids.shape[-1]} tokens long; the model takes at most {limit}: "
                         f"shorten it, or pass truncation=True where the task has it")


def _check_batch_size(batch_size: Any) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    return batch_size


def _device(device: str | int | torch.device) -> torch.device:
    return torch.device(f"cuda:{device}" if isinstance(device, int) and device >= 0 else
                        "cpu" if isinstance(device, int) else device)


def _progress_bar(batches: list, task: str, progress: bool | None) -> Iterable:
    """``batches``, with a tqdm bar when asked (or, for None, when there are several and
    stderr is a terminal); without tqdm installed, the batches alone."""
    if progress is False or (progress is None and len(batches) < 2):
        return batches
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return batches
    return tqdm(batches, desc=task, unit="batch", disable=None if progress is None else False)


# ------------------------------------------------------------------ transformers' objects


def _described(value: Any) -> str:
    """``BertForMaskedLM`` (ours) or ``transformers' RobertaForMaskedLM``, for messages."""
    kind = type(value)
    return f"transformers' {kind.__name__}" if kind.__module__.startswith("transformers.") else kind.__name__


def _transformers_counterpart(model: Any, classes: tuple[type, ...]) -> bool:
    """A transformers model of the same class as one of ``classes`` (transformers'
    ``BertForMaskedLM`` for ours): it computes the same outputs, under the same names."""
    kind = type(model)
    return kind.__module__.startswith("transformers.") and kind.__name__ in {c.__name__ for c in classes}


def _is_transformers_bert_tokenizer(tokenizer: Any) -> bool:
    kind = type(tokenizer)
    return kind.__module__.startswith("transformers.") and kind.__name__ in ("BertTokenizer", "BertTokenizerFast")


def _from_transformers_tokenizer(tokenizer: Any) -> BertTokenizerFast:
    """Ours, from the files a transformers BERT tokenizer saves (vocab.txt and its settings):
    the same WordPiece, so the same ids (tests/core/test_tokenizer.py)."""
    with tempfile.TemporaryDirectory(prefix="mini_hf_bert_tokenizer_") as directory:
        tokenizer.save_pretrained(directory)
        return BertTokenizerFast.from_pretrained(directory)
