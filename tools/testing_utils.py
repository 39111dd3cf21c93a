"""Helpers for the tests, the benchmarks and the generated docs.

* Checkpoints written the way the HuggingFace hub publishes them.

The machine this project is tested on cannot reach the hub, so bert-base-sized
checkpoints are written at test time by transformers itself (a dev dependency, imported
only inside these functions), in the exact layout of the hub's 2019 bert-base-uncased
``pytorch_model.bin``: LayerNorm ``gamma``/``beta``, the ``bert.`` prefix, the tied
``cls.predictions.decoder.bias`` absent, the decoder weight stored once (it shares the
word embeddings' storage), and the ``position_ids`` buffer present.
"""

from __future__ import annotations

import os

import torch


def to_hub_legacy_layout(state_dict: dict[str, torch.Tensor], max_position_embeddings: int = 512) -> dict[str, torch.Tensor]:
    """Rewrite a transformers 5.x ``BertForPreTraining`` state dict in the hub's legacy names.

    Tensors are not copied, so tied ones still share storage and ``torch.save`` writes
    them once, as the hub file does (440,473,133 bytes for bert-base-uncased).
    """
    legacy = {}
    for key, tensor in state_dict.items():
        if key == "cls.predictions.decoder.bias":
            continue  # tied to cls.predictions.bias; the 2019 file does not hold it
        if key.endswith("LayerNorm.weight"):
            key = key[: -len("weight")] + "gamma"
        elif key.endswith("LayerNorm.bias"):
            key = key[: -len("bias")] + "beta"
        legacy[key] = tensor
    legacy["bert.embeddings.position_ids"] = torch.arange(max_position_embeddings).expand((1, -1))
    return legacy


def write_hub_legacy_checkpoint(directory: str | os.PathLike, seed: int = 1234, **config_kwargs) -> str:
    """Write ``config.json`` + ``pytorch_model.bin`` of a seeded random transformers
    ``BertForPreTraining`` (bert-base-uncased's shape unless ``config_kwargs`` say
    otherwise) in the hub's legacy layout; return the directory."""
    import transformers

    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    torch.manual_seed(seed)
    config = transformers.BertConfig(**config_kwargs)  # the defaults are bert-base-uncased's
    model = transformers.BertForPreTraining(config)
    config.architectures = ["BertForPreTraining"]
    config.save_pretrained(directory)
    state = to_hub_legacy_layout(model.state_dict(), config.max_position_embeddings)
    torch.save(state, os.path.join(directory, "pytorch_model.bin"))
    return directory


def write_transformers_safetensors_checkpoint(directory: str | os.PathLike, seed: int = 1234, **config_kwargs) -> str:
    """Write the same seeded model with transformers 5.x's own ``save_pretrained``
    (``model.safetensors``, current names); return the directory."""
    import transformers

    directory = os.fspath(directory)
    torch.manual_seed(seed)
    model = transformers.BertForPreTraining(transformers.BertConfig(**config_kwargs))
    model.save_pretrained(directory)
    return directory


def write_head_checkpoint(directory: str | os.PathLike, base: str | os.PathLike, head_class: str, seed: int = 1234,
                          head_std: float = 1.0, **config_kwargs) -> str:
    """``base``'s encoder under a fresh task head (transformers' ``head_class``, e.g.
    ``"BertForTokenClassification"``), written by transformers' ``save_pretrained`` with
    ``base``'s tokenizer beside it; return the directory. The head's weights are drawn with
    std ``head_std`` (not the usual 0.02), so that its predictions are decided by clear
    margins rather than by near-ties that rounding could flip."""
    import transformers

    from mini_hf_bert.tokenization_bert import BertTokenizer

    directory = os.fspath(directory)
    torch.manual_seed(seed)
    model = getattr(transformers, head_class).from_pretrained(os.fspath(base), **config_kwargs)
    head = {"BertForQuestionAnswering": "qa_outputs", "BertForTokenClassification": "classifier",
            "BertForSequenceClassification": "classifier"}[head_class]
    with torch.no_grad():
        getattr(model, head).weight.normal_(0.0, head_std)
        getattr(model, head).bias.normal_(0.0, head_std)
    model.save_pretrained(directory)
    BertTokenizer.from_pretrained(base).save_pretrained(directory)
    return directory


# --------------------------------------------------------------------------------------
# Counterpart annotations
# --------------------------------------------------------------------------------------

#: The modules that mirror transformers' files, each public class and function of which
#: names its transformers counterpart in its docstring.
MIRRORING_MODULES = (
    "mini_hf_bert.modeling_bert",
    "mini_hf_bert.modeling_bert_extras",
    "mini_hf_bert.modeling_bert_fast",
    "mini_hf_bert.parity.speed",
    "mini_hf_bert_benchmarks.inference",
    "mini_hf_bert.activations",
    "mini_hf_bert.pytorch_utils",
    "mini_hf_bert.masking_utils",
    "mini_hf_bert.modeling_utils",
    "mini_hf_bert.generation_utils",
    "mini_hf_bert.integrations.sdpa_attention",
    "mini_hf_bert.checkpoints.loading",
    "mini_hf_bert.checkpoints.saving",
    "mini_hf_bert.modeling_outputs",
    "mini_hf_bert.configuration_bert",
    "mini_hf_bert.configuration_utils",
    "mini_hf_bert.tokenization_bert",
    "mini_hf_bert.tokenization_bert_fast",
    "mini_hf_bert.tokenization_bert_files",
    "mini_hf_bert.tokenization_utils",
    "mini_hf_bert.tokenization_utils_base",
    "mini_hf_bert.auto",
    "mini_hf_bert.pipelines",
    "mini_hf_bert.pipelines.base",
    "mini_hf_bert.pipelines.feature_extraction",
    "mini_hf_bert.pipelines.fill_mask",
    "mini_hf_bert.pipelines.text_classification",
    "mini_hf_bert.pipelines.token_classification",
    "mini_hf_bert.pipelines.question_answering",
    "mini_hf_bert.pipelines.sentence_similarity",
    "mini_hf_bert.pipelines.sentence_embeddings",
    "mini_hf_bert.training.pretraining_data",
    "mini_hf_bert.training.pretraining",
    "mini_hf_bert.training.trainer",
    "mini_hf_bert.training.optimization",
    "mini_hf_bert.training.build_vocab",
    "mini_hf_bert.training.finetuning",
)

#: A docstring line ``transformers: ``Name```` (the installed 5.x) or
#: ``transformers 4.x: ``Name```` (only 4.x has it), or ``transformers: none``.
_COUNTERPART = __import__("re").compile(r"^\s*transformers( 4\.x)?: (?:``([\w.]+)``|(none)\b)", __import__("re").M)


def counterpart_annotations() -> list[tuple[str, str | None, str | None]]:
    """(our qualified name, the counterpart's dotted name or None, "5" or "4.x" or None)
    for every public class and function of ``MIRRORING_MODULES``; the second and third
    are None where the docstring names no counterpart line at all."""
    import importlib
    import inspect

    found = []
    for module_name in MIRRORING_MODULES:
        module = importlib.import_module(module_name)
        for name, obj in vars(module).items():
            if name.startswith("_") or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if getattr(obj, "__module__", None) != module_name:
                continue
            match = _COUNTERPART.search(inspect.getdoc(obj) or "")
            qualified = f"{module_name}.{name}"
            if match is None:
                found.append((qualified, None, None))
            elif match.group(3):
                found.append((qualified, "none", None))
            else:
                found.append((qualified, match.group(2), "4.x" if match.group(1) else "5"))
    return found


def resolve_transformers_name(dotted: str) -> object:
    """The object a counterpart annotation names: a bare name lives in
    ``transformers.models.bert.modeling_bert``; a dotted one is relative to ``transformers``.
    Raises LookupError if the installed transformers has no such thing."""
    import importlib

    parts = dotted.split(".") if "." in dotted else ["models", "bert", "modeling_bert", dotted]
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module("transformers." + ".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            if not hasattr(obj, attribute):
                raise LookupError(f"transformers.{'.'.join(parts[:split])} has no {'.'.join(parts[split:])}")
            obj = getattr(obj, attribute)
        return obj
    raise LookupError(f"no module of transformers holds {dotted}")
