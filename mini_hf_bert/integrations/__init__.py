"""Functions that plug into the shared machinery by name, as transformers' ``integrations/``:
an attention implementation registers in ``modeling_utils.ALL_ATTENTION_FUNCTIONS``; and
the bridges to other libraries: ``Trainer`` (``trainer.py``, transformers' Trainer saving
through our ``save_pretrained``), imported only when asked for, since it needs transformers."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "Trainer":
        try:
            from .trainer import Trainer
        except ImportError as e:
            raise ImportError(f"mini_hf_bert.integrations.Trainer needs transformers "
                              f"(pip install 'mini_hf_bert[integrations]'): {e}") from None
        return Trainer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
