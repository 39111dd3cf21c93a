"""``pipeline(task, model=...)``: text in, answers out, as transformers' pipelines.

    >>> fill = pipeline("fill-mask", model="path/to/bert-base-uncased")
    >>> fill("Paris is the [MASK] of France.")[0]["token_str"]
    'capital'

Every pipeline runs the same three steps (transformers' ``preprocess`` / ``_forward`` /
``postprocess``):

1. **preprocess**: each input becomes one or more *features*, the tokenizer's output for
   one row ((1, T) tensors). Question answering cuts a long context into several
   overlapping windows, one feature each.
2. **forward**: the features go through the model ``batch_size`` at a time, padded to
   the longest of the batch as transformers pads them (so the numbers are the same).
3. **postprocess**: each input's features' outputs become its answer: probabilities,
   labels, character spans.

Tasks: ``feature-extraction``, ``fill-mask``, ``text-classification`` (alias
``sentiment-analysis``), ``token-classification`` (alias ``ner``), ``question-answering``
(the 4.x pipeline, which transformers 5 removed), and ``sentence-similarity`` (the hub's
task for sentence-transformers models: cosine similarities of mean-pooled embeddings).

Where transformers accepts an empty text, a question that leaves no room for its context,
or a fill-mask text without [MASK], and then fails deep inside, or answers nonsense, these
raise a ``ValueError`` naming the input.
"""

from __future__ import annotations

import inspect
import os
from typing import Any

import torch

from ..auto import (
    AutoModel,
    AutoModelForMaskedLM,
    AutoModelForQuestionAnswering,
    AutoModelForSequenceClassification,
    AutoModelForTokenClassification,
    AutoTokenizer,
)
from ..checkpoints.bundled import resolve_named_checkpoint
from ..checkpoints.errors import CheckpointError
from ..checkpoints.loading import name_list
from ..file_utils import no_remote_code
from ..tokenization_bert import BertTokenizer
from .base import Pipeline, PipelineException, PipelineInputError
from .feature_extraction import FeatureExtractionPipeline
from .fill_mask import FillMaskPipeline
from .question_answering import QuestionAnsweringArgumentHandler, QuestionAnsweringPipeline, SquadExample
from .sentence_embeddings import sentence_max_length, sentence_pooling
from .sentence_similarity import SentenceSimilarityPipeline
from .text_classification import TextClassificationPipeline
from .token_classification import AggregationStrategy, TokenClassificationArgumentHandler, TokenClassificationPipeline

#: task -> (its pipeline, the Auto class that loads its model).
SUPPORTED_TASKS: dict[str, tuple[type[Pipeline], type]] = {
    "feature-extraction": (FeatureExtractionPipeline, AutoModel),
    "fill-mask": (FillMaskPipeline, AutoModelForMaskedLM),
    "text-classification": (TextClassificationPipeline, AutoModelForSequenceClassification),
    "token-classification": (TokenClassificationPipeline, AutoModelForTokenClassification),
    "question-answering": (QuestionAnsweringPipeline, AutoModelForQuestionAnswering),
    "sentence-similarity": (SentenceSimilarityPipeline, AutoModel),
}
TASK_ALIASES = {"sentiment-analysis": "text-classification", "ner": "token-classification"}


def pipeline(
    task: str,
    model: str | os.PathLike | torch.nn.Module | None = None,
    tokenizer: str | os.PathLike | BertTokenizer | None = None,
    device: str | int | torch.device | None = None,
    batch_size: int = 1,
    progress: bool | None = None,
    dtype: str | torch.dtype | None = None,
    trust_remote_code: bool = False,
    **call_defaults: Any,
) -> Pipeline:
    """A ready pipeline for ``task``.

    transformers: ``pipelines.pipeline``

    Args:
        task: one of ``SUPPORTED_TASKS`` (or ``"sentiment-analysis"``, ``"ner"``).
        model: a checkpoint directory (or cached hub id), loaded with the task's Auto class
            (a checkpoint without the task's head is an error: its answers would be
            random); "zh", the shipped Chinese BERT (as ``--checkpoint zh``); or a model.
        tokenizer: a directory or a ``BertTokenizer``; default: the model's directory.
        device: where to run the model.
        batch_size: features per forward pass.
        progress: a progress bar over the batches (None: when there are several and
            stderr is a terminal).
        dtype: the model's dtype: a checkpoint is loaded in it, a model object cast to it
            (a torch dtype or its name; "auto": the checkpoint's own).
        trust_remote_code: accepted, as by every loader here; True draws one warning (no
            code is ever run from a checkpoint).
        call_defaults: defaults for the pipeline's call (``aggregation_strategy="simple"``,
            ``top_k=3``); each must be one of the call's keyword arguments (or one of the
            pipeline's own settings, such as token classification's legacy
            ``grouped_entities``).

    Returns:
        The pipeline: call it on text.
    """
    if not isinstance(task, str) or TASK_ALIASES.get(task, task) not in SUPPORTED_TASKS:
        known = sorted(SUPPORTED_TASKS) + sorted(TASK_ALIASES)
        raise ValueError(f"unknown task {task!r}; the tasks are {', '.join(known)}")
    pipeline_class, auto_class = SUPPORTED_TASKS[TASK_ALIASES.get(task, task)]
    settings = [name for name, p in inspect.signature(pipeline_class.__init__).parameters.items()
                if name not in _BASE_ARGUMENTS and p.kind is not inspect.Parameter.VAR_KEYWORD]
    allowed = pipeline_class.call_arguments() + settings
    unknown = sorted(set(call_defaults) - set(allowed))
    if unknown:
        raise TypeError(f"pipeline({task!r}) got unexpected keyword arguments {unknown}; its calls take {allowed}")
    no_remote_code(trust_remote_code, f"the {task!r} pipeline")
    if model is None:
        raise ValueError(f"pipeline({task!r}) needs model=: a checkpoint directory or a model "
                         "(there is no hub here to fetch a default from)")
    source = None
    if isinstance(model, (str, os.PathLike)):
        source = resolve_named_checkpoint(os.fspath(model))  # "zh": the shipped Chinese BERT, as --checkpoint zh
        model, info = auto_class.from_pretrained(source, output_loading_info=True, dtype=dtype)
        dtype = None  # loaded in it
        untrained = sorted(k for k in info["newly_initialized_keys"] if not k.startswith(model.base_model_prefix + "."))
        if untrained:  # from_pretrained gives a fresh head, as transformers; a pipeline of one answers at random
            raise CheckpointError(
                f"{source}: has no trained head for {task!r} ({name_list(untrained)} would be random). "
                f"To run it anyway, load the model yourself (from_pretrained initialises the head, with a warning) "
                f"and pass model= and tokenizer="
            )
    if tokenizer is None:
        if source is None:
            raise ValueError(f"pipeline({task!r}) was given a model object: pass tokenizer= too (a directory or a BertTokenizer)")
        tokenizer = source
    if isinstance(tokenizer, (str, os.PathLike)):
        tokenizer = AutoTokenizer.from_pretrained(tokenizer)
    extra = {}
    if pipeline_class is SentenceSimilarityPipeline and source is not None and os.path.isdir(source):
        extra["max_length"] = sentence_max_length(source)
        extra["pooling"] = sentence_pooling(source)[0]  # normalised or not, a cosine is the same
    return pipeline_class(model, tokenizer, device=device, dtype=dtype, batch_size=batch_size, progress=progress,
                          **extra, **call_defaults)


#: ``Pipeline.__init__``'s own parameters: what a subclass's constructor adds besides them
#: (sentence similarity's ``pooling``, token classification's legacy flags) ``pipeline()`` passes on.
_BASE_ARGUMENTS = frozenset(inspect.signature(Pipeline.__init__).parameters) | {"self"}

__all__ = [
    "AggregationStrategy",
    "FeatureExtractionPipeline",
    "FillMaskPipeline",
    "Pipeline",
    "PipelineException",
    "PipelineInputError",
    "QuestionAnsweringArgumentHandler",
    "QuestionAnsweringPipeline",
    "SquadExample",
    "TokenClassificationArgumentHandler",
    "SentenceSimilarityPipeline",
    "TextClassificationPipeline",
    "TokenClassificationPipeline",
    "SUPPORTED_TASKS",
    "TASK_ALIASES",
    "pipeline",
]
