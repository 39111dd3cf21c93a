"""transformers 4.x's configuration keywords, against 4.57.6: every keyword argument its
``PretrainedConfig`` takes is stored alike (the generation settings, ``torchscript``,
``torch_dtype``, ...), and ``torchscript=True`` makes a model TorchScript can trace, as 4.x's
TorchScript recipe has it."""

from __future__ import annotations

import copy
import inspect
import os

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert.parity.compare import FP32_ATOL

CONFIG = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37)

#: Every keyword of 4.57.6's PretrainedConfig.__init__, a value of each other than its default
#: (``is_encoder_decoder`` aside: a class setting here, see docs/conformance.md).
COMMON_KWARGS = {
    "return_dict": False, "output_hidden_states": True, "output_attentions": True, "torchscript": True,
    "dtype": "float16", "pruned_heads": {1: [0]}, "tie_word_embeddings": False, "chunk_size_feed_forward": 5,
    "is_decoder": True, "cross_attention_hidden_size": 128, "add_cross_attention": True, "tie_encoder_decoder": True,
    "architectures": ["BertModel"], "finetuning_task": "translation", "id2label": {0: "label"},
    "label2id": {"label": "0"}, "task_specific_params": {"translation": "some_params"}, "problem_type": "regression",
    "tokenizer_class": "BertTokenizerFast", "prefix": "prefix", "bos_token_id": 6, "pad_token_id": 7,
    "eos_token_id": 8, "sep_token_id": 9, "decoder_start_token_id": 10,
    "max_length": 50, "min_length": 3, "do_sample": True, "early_stopping": True, "num_beams": 3,
    "num_beam_groups": 3, "diversity_penalty": 0.5, "temperature": 2.0, "top_k": 10, "top_p": 0.7, "typical_p": 0.2,
    "repetition_penalty": 0.8, "length_penalty": 0.8, "no_repeat_ngram_size": 5, "encoder_no_repeat_ngram_size": 5,
    "bad_words_ids": [[1, 2, 3]], "num_return_sequences": 3, "output_scores": True, "return_dict_in_generate": True,
    "forced_bos_token_id": 2, "forced_eos_token_id": 3, "remove_invalid_values": True,
    "exponential_decay_length_penalty": (5, 1.01), "suppress_tokens": [0, 1], "begin_suppress_tokens": [2],
    "tf_legacy_loss": True, "use_bfloat16": True,
}


def test_the_list_covers_4x_keywords():
    """The list above is 4.57.6's own: its __init__'s named keywords and generation defaults."""
    named = set(inspect.signature(transformers.PretrainedConfig.__init__).parameters) - {"self", "kwargs", "num_labels"}
    generation = set(transformers.PretrainedConfig._get_global_generation_defaults())
    assert (named | generation | {"tf_legacy_loss", "use_bfloat16"}) - {"is_encoder_decoder"} == set(COMMON_KWARGS)


def test_every_4x_keyword_is_stored_as_4x_stores_it(tmp_path):
    ours = mini_hf_bert.BertConfig(**CONFIG, **copy.deepcopy(COMMON_KWARGS))
    theirs = transformers.BertConfig(**CONFIG, **copy.deepcopy(COMMON_KWARGS))
    for key in COMMON_KWARGS:
        assert getattr(ours, key) == getattr(theirs, key), key
    assert ours.use_return_dict is theirs.use_return_dict is False  # torchscript asks for tuples
    theirs.save_pretrained(tmp_path)  # and 4.x's config.json reads back the same
    again = mini_hf_bert.BertConfig.from_pretrained(tmp_path)
    for key in COMMON_KWARGS:
        expected = list(COMMON_KWARGS[key]) if isinstance(COMMON_KWARGS[key], tuple) else getattr(ours, key)
        assert getattr(again, key) == expected, key


def test_torch_dtype_is_4x_name_for_dtype(tmp_path):
    for value in ("bfloat16", torch.float16):
        assert mini_hf_bert.BertConfig(torch_dtype=value).dtype == transformers.BertConfig(torch_dtype=value).dtype
    transformers.BertConfig(**CONFIG, torch_dtype="bfloat16").save_pretrained(tmp_path)
    assert mini_hf_bert.BertConfig.from_pretrained(tmp_path).dtype == torch.bfloat16


@pytest.mark.parametrize("model_name", ["BertModel", "BertForSequenceClassification"])
def test_torchscript_config_traces_saves_and_loads_as_4x(model_name, tmp_path):
    """4.x's TorchScript recipe: torchscript=True, trace, save, load, run."""
    torch.manual_seed(0)
    theirs = getattr(transformers, model_name)(transformers.BertConfig(**CONFIG, torchscript=True)).eval()
    ours = getattr(mini_hf_bert, model_name)(mini_hf_bert.BertConfig(**CONFIG, torchscript=True)).eval()
    ours.load_state_dict(theirs.state_dict())
    ids = torch.randint(1, 99, (2, 7), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        plain = ours(ids)
        assert isinstance(plain, tuple) and isinstance(theirs(ids), tuple)
        assert isinstance(ours(ids, return_dict=True), mini_hf_bert.modeling_outputs.ModelOutput)
    path = os.path.join(tmp_path, "traced.pt")
    torch.jit.save(torch.jit.trace(ours, (ids,)), path)
    loaded = torch.jit.load(path)
    assert set(loaded.state_dict()) >= set(ours.state_dict())
    with torch.no_grad():
        for a, b in zip(loaded(ids), theirs(ids)):
            assert (a - b).abs().max() < FP32_ATOL


def test_pruned_heads_that_is_not_a_layer_map_is_refused_where_4x_stores_it():
    """A kept difference (docs/conformance.md): 4.57.6's config stores any value for
    ``pruned_heads`` (its ConfigTester sets one that is not a layer map), and the model built
    from it then fails in prune_heads with a TypeError naming neither the field nor the value;
    ours refuses the config, naming both."""
    bad = {"a": 1}
    assert transformers.BertConfig(**CONFIG, pruned_heads=bad).pruned_heads == bad
    with pytest.raises(TypeError):
        transformers.BertModel(transformers.BertConfig(**CONFIG, pruned_heads=bad))
    with pytest.raises(mini_hf_bert.ConfigError, match=r"pruned_heads must map layer -> list of head indices.*'a'"):
        mini_hf_bert.BertConfig(**CONFIG, pruned_heads=bad)
