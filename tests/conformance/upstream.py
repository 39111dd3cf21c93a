"""What the ported upstream tests share: the library under test, and transformers'
test helpers (``ids_tensor``, ``floats_tensor``, ``random_attention_mask``) re-expressed.

The ports run against mini_hf_bert. ``MINI_HF_BERT_CONFORMANCE=transformers`` runs the very
same ports against transformers 5.x instead, to show that a failure is ours, not the
port's: ``MINI_HF_BERT_CONFORMANCE=transformers .venv/bin/python -m pytest tests/conformance``.
"""

from __future__ import annotations

import os
import random

import torch

if os.environ.get("MINI_HF_BERT_CONFORMANCE", "mini_hf_bert") == "transformers":
    import transformers as library
    from transformers import logging as _logging

    LOGGER_NAME = "transformers"
    _logging.set_verbosity_warning()
    from transformers import AddedToken

    if library.__version__.startswith("4."):
        # transformers 4.x (first on PYTHONPATH): only the ports of its own files run (conftest.py).
        import transformers.models.bert.tokenization_bert as word_tokenization
        import transformers.tokenization_utils as character_classes
        from transformers import BertTokenizerFast as TokenizersBackend

        PythonBertTokenizer = word_tokenization.BertTokenizer
    else:
        import transformers.models.bert.tokenization_bert_legacy as word_tokenization
        import transformers.tokenization_python as character_classes
        from transformers import TokenizersBackend

        #: transformers 5.x keeps its pure-Python BERT tokenizer as BertTokenizerLegacy.
        PythonBertTokenizer = word_tokenization.BertTokenizerLegacy
else:
    import mini_hf_bert as library
    import mini_hf_bert.tokenization_bert as word_tokenization
    import mini_hf_bert.tokenization_utils as character_classes

    LOGGER_NAME = "mini_hf_bert"
    AddedToken = library.AddedToken
    #: 5.x's BertTokenizer is Rust-backed (a TokenizersBackend); this library's one tokenizer plays it.
    TokenizersBackend = library.BertTokenizer
    #: One tokenizer here plays transformers' Python (legacy) and Rust-backed ones alike.
    PythonBertTokenizer = library.BertTokenizer

def transformers_4_api(reason: str):
    """Marks a port of a 4.x test whose API transformers 5.x removed: run against 5.x
    (``MINI_HF_BERT_CONFORMANCE=transformers``) it is skipped with ``reason``; against
    mini_hf_bert, which keeps the 4.x API, it always runs."""
    import unittest

    if library.__name__ == "transformers":
        return unittest.skip(f"transformers 5.x: {reason}")
    return lambda test: test


#: The tests run on the CPU, as transformers' do without an accelerator.
torch_device = "cpu"

#: transformers draws test inputs from one unseeded ``random.Random()``; seeded here, so a
#: failure reproduces (a mechanical change, named in each port's header).
global_rng = random.Random(0)


def ids_tensor(shape, vocab_size, rng=None, name=None):
    """A (shape) long tensor of random ids in [0, vocab_size): transformers' helper."""
    rng = global_rng if rng is None else rng
    count = 1
    for dim in shape:
        count *= dim
    values = [rng.randint(0, vocab_size - 1) for _ in range(count)]
    return torch.tensor(values, dtype=torch.long, device=torch_device).view(shape).contiguous()


def random_attention_mask(shape, rng=None, name=None):
    """Random 0/1 mask with the first position always attended: transformers' helper."""
    mask = ids_tensor(shape, vocab_size=2, rng=rng)
    mask[:, 0] = 1
    return mask


def floats_tensor(shape, scale=1.0, rng=None, name=None):
    """A (shape) float32 tensor of uniform values in [0, scale): transformers' helper."""
    rng = global_rng if rng is None else rng
    count = 1
    for dim in shape:
        count *= dim
    values = [rng.random() * scale for _ in range(count)]
    return torch.tensor(values, dtype=torch.float, device=torch_device).view(shape).contiguous()


# ----------------------------------------------------------------- the modeling mixin's names
# ``test_modeling_common_upstream.py`` (5.23's ModelTesterMixin) calls these by transformers'
# names; each is bound here to the library under test.

#: BERT's rows of transformers' auto mappings (``models/auto/modeling_auto.py``): the mixin
#: picks labels and skips classes by looking a class's name up in them.
MODEL_MAPPING_NAMES = {"bert": "BertModel"}
MODEL_FOR_PRETRAINING_MAPPING_NAMES = {"bert": "BertForPreTraining"}
MODEL_FOR_CAUSAL_LM_MAPPING_NAMES = {"bert": "BertLMHeadModel"}
MODEL_FOR_MASKED_LM_MAPPING_NAMES = {"bert": "BertForMaskedLM"}
MODEL_FOR_MULTIPLE_CHOICE_MAPPING_NAMES = {"bert": "BertForMultipleChoice"}
MODEL_FOR_NEXT_SENTENCE_PREDICTION_MAPPING_NAMES = {"bert": "BertForNextSentencePrediction"}
MODEL_FOR_QUESTION_ANSWERING_MAPPING_NAMES = {"bert": "BertForQuestionAnswering"}
MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES = {"bert": "BertForSequenceClassification"}
MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING_NAMES = {"bert": "BertForTokenClassification"}
#: Tasks BERT has no model for: empty rows.
(MODEL_FOR_AUDIO_CLASSIFICATION_MAPPING_NAMES, MODEL_FOR_AUDIO_XVECTOR_MAPPING_NAMES, MODEL_FOR_BACKBONE_MAPPING_NAMES,
 MODEL_FOR_CAUSAL_IMAGE_MODELING_MAPPING_NAMES, MODEL_FOR_CTC_MAPPING_NAMES,
 MODEL_FOR_DOCUMENT_QUESTION_ANSWERING_MAPPING_NAMES, MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES,
 MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES, MODEL_FOR_MASKED_IMAGE_MODELING_MAPPING_NAMES,
 MODEL_FOR_SEMANTIC_SEGMENTATION_MAPPING_NAMES, MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
 MODEL_FOR_VIDEO_CLASSIFICATION_MAPPING_NAMES, MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES) = ({} for _ in range(13))
MODEL_MAPPING = {library.BertConfig: library.BertModel}
MODEL_FOR_PRETRAINING_MAPPING = {library.BertConfig: library.BertForPreTraining}


def get_values(model_mapping):
    """transformers' ``models.auto.get_values``: the mapping's values."""
    return list(model_mapping.values())


CONFIG_NAME = "config.json"
SAFE_WEIGHTS_NAME = "model.safetensors"
GENERATION_CONFIG_NAME = "generation_config.json"


def set_seed(seed):
    """transformers' ``set_seed`` (the parts a CPU run uses)."""
    random.seed(seed)
    torch.manual_seed(seed)
    import numpy

    numpy.random.seed(seed)


def set_config_for_less_flaky_test(config):
    """transformers' testing_utils helper: every norm epsilon set to 1, BERT's only being ``layer_norm_eps``."""
    for name in ("rms_norm_eps", "post_norm_eps", "layer_norm_eps", "norm_eps", "norm_epsilon",
                 "layer_norm_epsilon", "batch_norm_eps"):
        setattr(config, name, 1.0)


def set_model_for_less_flaky_test(model):
    """transformers' testing_utils helper: the eps of every norm module set to 1."""
    for module in model.modules():
        if type(module).__name__.endswith(("LayerNorm", "GroupNorm", "BatchNorm", "RMSNorm")):
            for name in ("eps", "epsilon", "variance_epsilon"):
                if hasattr(module, name):
                    setattr(module, name, 1.0)


def _matmul_runs(dtype, device):
    """Whether a matmul in ``dtype`` runs on ``device``."""
    try:
        x = torch.zeros(2, 2, dtype=dtype, device=device)
        _ = x @ x
    except Exception:
        return False
    return True


def is_torch_fp16_available_on_device(device):
    """transformers' helper, re-expressed: a float16 matmul runs on ``device``."""
    return _matmul_runs(torch.float16, device)


def is_torch_bf16_available_on_device(device):
    """transformers' helper, re-expressed: a bfloat16 matmul runs on ``device``."""
    return _matmul_runs(torch.bfloat16, device)


def is_deepspeed_zero3_enabled():
    """No DeepSpeed here."""
    return False


class CaptureLogger:
    """transformers' ``testing_utils.CaptureLogger``: what ``logger`` writes inside the block,
    in ``.out``."""

    def __init__(self, logger):
        import io
        import logging

        self.logger = logger
        self.io = io.StringIO()
        self.handler = logging.StreamHandler(self.io)
        self.out = ""

    def __enter__(self):
        self.logger.addHandler(self.handler)
        return self

    def __exit__(self, *exc):
        self.logger.removeHandler(self.handler)
        self.out = self.io.getvalue()


_STAND_IN_ROOT = None


def stand_in_directory(repo: str) -> tuple[str, bool]:
    """Where the ports build their local stand-in for hub repo ``repo`` (in one temporary
    directory per session, removed at exit), and whether it is already built."""
    global _STAND_IN_ROOT
    if _STAND_IN_ROOT is None:
        import atexit
        import shutil
        import tempfile

        _STAND_IN_ROOT = tempfile.mkdtemp(prefix="conformance_hub_")
        atexit.register(shutil.rmtree, _STAND_IN_ROOT, True)
    directory = os.path.join(_STAND_IN_ROOT, repo.replace("/", "--"))
    return directory, os.path.isdir(directory)


def compare_state_dicts(state_dict1, state_dict2) -> bool:
    """transformers 5.23's ``tests/test_modeling_common.compare_state_dicts``, ported: the two
    state dicts have the same keys and close values (``torch.testing.assert_close``)."""
    if sorted(state_dict1.keys()) != sorted(state_dict2.keys()):
        in1_not2 = sorted(set(state_dict1.keys()) - set(state_dict2.keys()))
        in2_not1 = sorted(set(state_dict2.keys()) - set(state_dict1.keys()))
        raise ValueError(
            f"The keys of both state dict are not the same.\nKeys found in the first item but not second: {in1_not2}"
            f"\nKeys found in the second item but not first: {in2_not1}"
        )

    for k, v1 in state_dict1.items():
        v2 = state_dict2[k]
        try:
            torch.testing.assert_close(v1, v2)
        except Exception as e:
            raise AssertionError(f"For key {k}: {e}")

    return True


def id_tensor_storage(tensor):
    """transformers' ``pytorch_utils.id_tensor_storage``: which storage a tensor views."""
    return tensor.device, tensor.untyped_storage().data_ptr(), tensor.untyped_storage().nbytes()


if library.__name__ == "transformers":
    import logging as _std_logging

    #: from_pretrained's arguments for a checkpoint that lacks encoder weights: transformers
    #: loads it with a warning; mini_hf_bert refuses a half-loaded encoder unless strict=False.
    ACCEPT_MISSING_ENCODER_WEIGHTS = {}

    from transformers import PreTrainedModel

    #: 4.x names the config base class PretrainedConfig; 5.x, PreTrainedConfig.
    PreTrainedConfig = getattr(library, "PreTrainedConfig", None) or library.PretrainedConfig
    from transformers.modeling_layers import GradientCheckpointingLayer
    from transformers.modeling_utils import _get_tied_weight_keys, load_state_dict

    def get_logger(name):
        """transformers' logger ``name``, propagating so CaptureLogger sees it."""
        return _logging.get_logger(name)
else:
    import logging as _std_logging

    from mini_hf_bert.checkpoints.hf_format import read_state_dict as load_state_dict
    from mini_hf_bert.modeling_utils import PreTrainedModel
    from mini_hf_bert.pytorch_utils import GradientCheckpointingLayer

    PreTrainedConfig = library.BertConfig
    ACCEPT_MISSING_ENCODER_WEIGHTS = {"strict": False}

    def _get_tied_weight_keys(model):
        """The names of the weights that ``model`` ties to another (transformers' helper)."""
        return list(model.tied_weights())

    #: transformers' loading messages come from modeling_utils; mini_hf_bert's from checkpoints/loading.py.
    _LOGGER_NAMES = {"transformers.modeling_utils": "mini_hf_bert.checkpoints.loading"}

    def get_logger(name):
        """mini_hf_bert's logger for the messages transformers' logger ``name`` writes."""
        return _std_logging.getLogger(_LOGGER_NAMES.get(name, name.replace("transformers", "mini_hf_bert", 1)))
