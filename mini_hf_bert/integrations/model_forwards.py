"""Whole-model forwards by ``attn_implementation`` name: the registry ``modeling_utils``
offers as ``ALL_MODEL_FORWARDS``, beside its ``ALL_ATTENTION_FUNCTIONS``.

It imports no torch, so the package's ``__init__.py`` can declare ``"fast"`` here without
loading the fast path: the module behind a declared name is imported the first time a
model looks the name up, and registers its function then.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


class ModelForwardInterface(dict):
    """``attn_implementation`` name -> a function that runs a whole base model's forward.

    Such a function takes the base model and its forward's arguments, and returns the
    model's output for the calls it computes, None for the others: those the model's own
    layers run, attending with the function ``layer_attention[name]`` names in
    ``ALL_ATTENTION_FUNCTIONS``. The model file looks a name up and never lists one.

    A name is either registered (the function itself) or declared (the module that
    registers it when imported): ``mini_hf_bert/__init__.py`` declares ``"fast"``
    (``modeling_bert_fast.py``), and ``get`` imports that module on first use.

    transformers: none (its nearest is optimum's BetterTransformer, which swaps the encoder)
    """

    def __init__(self) -> None:
        super().__init__()
        self.layer_attention: dict[str, str] = {}
        self.declared: dict[str, str] = {}  # name -> dotted module that registers it on import

    def register(self, name: str, function: Callable[..., Any], layer_attention: str) -> None:
        self[name] = function
        self.layer_attention[name] = layer_attention

    def declare(self, name: str, module: str, layer_attention: str) -> None:
        self.declared[name] = module
        self.layer_attention[name] = layer_attention

    def names(self) -> list[str]:
        """Every name a model may select here, registered or declared."""
        return sorted({*self, *self.declared})

    def get(self, name: str, default: Callable[..., Any] | None = None) -> Callable[..., Any] | None:
        """The function of ``name``, importing its declared module the first time."""
        if name not in self and name in self.declared:
            importlib.import_module(self.declared[name])
        return super().get(name, default)


ALL_MODEL_FORWARDS = ModelForwardInterface()
