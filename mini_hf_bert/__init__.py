"""mini_hf_bert: a source-annotated BERT that mirrors HuggingFace transformers' class
hierarchy, loads the real checkpoints, and is tested to compute the same numbers.

Start reading at ``modeling_bert.py``.

``from mini_hf_bert import BertModel`` imports ``modeling_bert`` when the name is first
asked for (PEP 562's module ``__getattr__``), not when the package is: so
``python -m mini_hf_bert --help`` loads no torch. ``EXPORTS`` lists every public name by
the module that defines it.
"""

from __future__ import annotations

import importlib
from typing import Any

from .integrations.model_forwards import ALL_MODEL_FORWARDS

__version__ = "0.1.0"

#: Module (relative to the package) -> the public names it defines.
EXPORTS: dict[str, tuple[str, ...]] = {
    "configuration_bert": ("BertConfig",),
    "validation": ("ConfigError",),
    "modeling_bert": ("BertAttention", "BertEmbeddings", "BertEncoder", "BertForMaskedLM",
        "BertForMultipleChoice", "BertForNextSentencePrediction", "BertForPreTraining",
        "BertForQuestionAnswering", "BertForSequenceClassification", "BertForTokenClassification",
        "BertIntermediate", "BertLayer", "BertLMHeadModel", "BertLMPredictionHead", "BertModel",
        "BertOnlyMLMHead", "BertOnlyNSPHead", "BertOutput", "BertPooler", "BertPredictionHeadTransform",
        "BertPreTrainedModel", "BertPreTrainingHeads", "BertSelfAttention", "BertSelfOutput"),
    "modeling_outputs": ("BaseModelOutputWithPastAndCrossAttentions",
        "BaseModelOutputWithPoolingAndCrossAttentions", "ModelOutput"),
    "modeling_utils": ("PreTrainedModel",),
    "generation_utils": ("GenerateOutput", "GenerationConfig", "GenerationMixin"),
    "activations": ("ACT2FN",),
    "masking_utils": ("get_extended_attention_mask",),
    "pytorch_utils": ("apply_chunking_to_forward",),
    "tokenization_bert": ("BasicTokenizer", "BertTokenizer", "WordpieceTokenizer"),
    "tokenization_bert_fast": ("BertTokenizerFast",),
    "tokenization_utils_base": ("AddedToken", "TokenizerFileError"),
    "auto": ("AutoConfig", "AutoModel", "AutoModelForCausalLM", "AutoModelForMaskedLM",
        "AutoModelForMultipleChoice", "AutoModelForNextSentencePrediction", "AutoModelForPreTraining",
        "AutoModelForQuestionAnswering", "AutoModelForSequenceClassification",
        "AutoModelForTokenClassification", "AutoTokenizer"),
    "pipelines": ("FeatureExtractionPipeline", "FillMaskPipeline", "Pipeline", "QuestionAnsweringPipeline",
        "SentenceSimilarityPipeline", "TextClassificationPipeline", "TokenClassificationPipeline", "pipeline"),
    "pipelines.sentence_embeddings": ("encode_sentences",),
    "checkpoints": ("CheckpointError", "CheckpointNotFoundError"),
    "checkpoints.bundled": ("chinese_checkpoint_dir", "default_checkpoint_dir"),
    "limits": ("Limits",),
}

__all__ = [name for names in EXPORTS.values() for name in names]
_MODULE_OF = {name: module for module, names in EXPORTS.items() for name in names}

# attn_implementation="fast" runs the whole encoder in modeling_bert_fast.py, which registers
# its function when a model first selects "fast"; where it declines a call, the layers attend with sdpa.
ALL_MODEL_FORWARDS.declare("fast", "mini_hf_bert.modeling_bert_fast", layer_attention="sdpa")


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use."""
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_MODULE_OF[name]}", __name__), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
