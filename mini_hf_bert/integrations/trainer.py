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

import logging
import os
from typing import Any

import torch
import transformers

from ..file_utils import staged_file
from ..modeling_utils import PreTrainedModel

logger = logging.getLogger(__name__)

#: Where transformers' Trainer keeps its TrainingArguments beside the weights.
TRAINING_ARGS_NAME = "training_args.bin"


class Trainer(transformers.Trainer):
    """``transformers.Trainer`` whose saves write a directory both libraries load.

    A mini_hf_bert model is saved with its own ``save_pretrained`` (config.json, tied
    weights stored once, files written whole); any other model (a peft ``PeftModel``, a
    transformers model) is saved exactly as transformers saves it.
    """

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
