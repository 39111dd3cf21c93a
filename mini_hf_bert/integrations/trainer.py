"""``transformers.Trainer`` for mini_hf_bert models: the same class, arguments and
behaviour, except that checkpoints and ``save_model`` go through our ``save_pretrained``.

Why a subclass: transformers 5.23's ``Trainer._save`` calls ``save_pretrained`` only on
its own ``PreTrainedModel`` or a peft ``PeftModel``. Any other model gets a bare
``safetensors.save_file(state_dict)``: no ``config.json`` (the directory reloads in
neither library), and a crash on tied weights ("Some tensors share memory") at the first
checkpoint of a masked-LM model. No callback runs before that save, and making our
classes inherit transformers' would make transformers a run-time dependency. So this
subclass overrides the save and nothing else of substance; a transformers user changes
one import::

    from mini_hf_bert.integrations import Trainer   # instead of: from transformers import Trainer

Needs transformers (the ``integrations`` extra).

transformers: ``trainer.Trainer``
"""

from __future__ import annotations

import contextlib
import glob
import inspect
import json
import logging
import os
import pickle
import re
from collections.abc import Iterator
from typing import Any

import torch
import transformers

from ..checkpoints.errors import CheckpointError
from ..checkpoints.hf_format import refused_globals
from ..file_utils import MAX_METADATA_BYTES, read_file, staged_file
from ..modeling_utils import PreTrainedModel
from ..tokenization_utils_base import PreTrainedTokenizerBase

logger = logging.getLogger(__name__)

#: Where transformers' Trainer keeps its TrainingArguments beside the weights.
TRAINING_ARGS_NAME = "training_args.bin"
#: transformers writes a checkpoint's trainer_state.json last: a checkpoint without a
#: readable one was cut short (a kill between the weights and the optimizer, say).
TRAINER_STATE_NAME = "trainer_state.json"
_CHECKPOINT_FOLDER = re.compile(r"^checkpoint-(\d+)$")


def last_complete_checkpoint(output_dir: str) -> str:
    """The newest ``checkpoint-N`` of ``output_dir`` whose ``trainer_state.json`` reads
    whole; each newer one passed over gets a warning naming it and why.

    transformers: ``trainer_utils.get_last_checkpoint`` (which takes the newest folder,
    complete or not)
    """
    steps = sorted(((int(m.group(1)), name) for name in os.listdir(output_dir)
                    if (m := _CHECKPOINT_FOLDER.match(name)) and os.path.isdir(os.path.join(output_dir, name))),
                   reverse=True)
    for _, name in steps:
        path = os.path.join(output_dir, name)
        try:
            state = json.loads(read_file(os.path.join(path, TRAINER_STATE_NAME), MAX_METADATA_BYTES).decode("utf-8"))
            if isinstance(state, dict):
                return path
            why = "is not a JSON object"
        except FileNotFoundError:
            why = "is missing"
        except (OSError, UnicodeDecodeError, ValueError) as e:
            why = f"cannot be read ({e})"
        logger.warning("%s: skipped: its %s %s, so the save of this checkpoint did not finish; resuming from an "
                       "earlier one", path, TRAINER_STATE_NAME, why)
    raise ValueError(f"No valid checkpoint found in output directory ({output_dir}): no checkpoint-N in it holds a "
                     f"complete {TRAINER_STATE_NAME}")


@contextlib.contextmanager
def _naming_refused_pickles(checkpoint: str | None, patterns: tuple[str, ...]) -> Iterator[None]:
    """Run a load of transformers' from ``checkpoint``; if torch refuses a pickle in it (it
    asks for code), raise one error naming the file and what it asked for, instead of
    torch's message, which advises loading it with ``weights_only=False``."""
    try:
        yield
    except pickle.UnpicklingError:
        paths = sorted(p for pattern in patterns for p in glob.glob(os.path.join(glob.escape(checkpoint or "."), pattern)))
        for path in paths:
            try:
                with getattr(transformers.trainer_pt_utils, "safe_globals", contextlib.nullcontext)():
                    torch.load(path, weights_only=True)
            except pickle.UnpicklingError as refusal:
                asked = ", ".join(refused_globals(refusal)) or "objects a training state never holds"
                raise CheckpointError(f"{path}: refused as unsafe: its pickle asks for {asked}, code that would run "
                                      f"when it is unpickled; nothing in it was run. Resume from another checkpoint, "
                                      f"or remove this file") from None
        raise


class Trainer(transformers.Trainer):
    """``transformers.Trainer`` whose saves write a directory both libraries load.

    A mini_hf_bert model is saved with its own ``save_pretrained`` (config.json, tied
    weights stored once, files written whole); any other model (a peft ``PeftModel``, a
    transformers model) is saved exactly as transformers saves it. Given a mini_hf_bert
    tokenizer as ``processing_class`` and no ``data_collator``, batches are padded by
    ``DataCollatorWithPadding``, as transformers' Trainer chooses for its own tokenizers.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """transformers' ``Trainer.__init__``, its arguments unchanged."""
        super().__init__(*args, **kwargs)
        given = inspect.signature(transformers.Trainer.__init__).bind(self, *args, **kwargs).arguments
        if given.get("data_collator") is None and isinstance(self.processing_class, PreTrainedTokenizerBase):
            self.data_collator = transformers.DataCollatorWithPadding(self.processing_class)

    def _save(self, output_dir: str | None = None, state_dict: dict[str, torch.Tensor] | None = None) -> None:
        model = self.accelerator.unwrap_model(self.model, keep_torch_compile=False)
        if not isinstance(model, PreTrainedModel):
            super()._save(output_dir, state_dict)
            return
        output_dir = output_dir if output_dir is not None else self.args.output_dir
        if not self.args.should_save:
            return
        logger.info("Saving model checkpoint to %s", output_dir)
        model.save_pretrained(output_dir, state_dict=state_dict, is_main_process=self.args.should_save)
        tokenizer = self.processing_class
        if tokenizer is None:
            tokenizer = getattr(self.data_collator, "tokenizer", None)
        if tokenizer is not None:
            tokenizer.save_pretrained(output_dir)
        # Whole or not at all, as every other file this library writes (a crash mid-save
        # leaves the previous training_args.bin, never half of one).
        with staged_file(os.path.join(output_dir, TRAINING_ARGS_NAME)) as staged:
            torch.save(self.args, staged)

    def train(self, resume_from_checkpoint: str | bool | None = None, trial: Any = None,
              ignore_keys_for_eval: list[str] | None = None) -> Any:
        """transformers' ``train``; ``resume_from_checkpoint=True`` takes the newest
        checkpoint that was saved whole (``last_complete_checkpoint``), not the newest folder."""
        if resume_from_checkpoint is True:
            resume_from_checkpoint = last_complete_checkpoint(self.args.output_dir)
        return super().train(resume_from_checkpoint, trial, ignore_keys_for_eval)

    def _load_rng_state(self, checkpoint: str | None) -> None:
        with _naming_refused_pickles(checkpoint, ("rng_state*.pth",)):
            super()._load_rng_state(checkpoint)

    def _load_optimizer_and_scheduler(self, checkpoint: str | None) -> None:
        with _naming_refused_pickles(checkpoint, ("optimizer.pt", "scheduler.pt")):
            super()._load_optimizer_and_scheduler(checkpoint)

    def _load_scaler(self, checkpoint: str | None) -> None:
        with _naming_refused_pickles(checkpoint, ("scaler.pt",)):
            super()._load_scaler(checkpoint)

    def _issue_warnings_after_load(self, load_result: Any) -> None:
        """Resuming loads a checkpoint with ``load_state_dict(strict=False)``; a tied weight
        is stored once, so its other name is 'missing' though it is loaded. Leave those out
        of transformers' warning."""
        model = self.accelerator.unwrap_model(self.model, keep_torch_compile=False)
        if isinstance(model, PreTrainedModel):
            tied = set(model.tied_weights())
            load_result = type(load_result)([k for k in load_result.missing_keys if k not in tied],
                                            list(load_result.unexpected_keys))
        super()._issue_warnings_after_load(load_result)
