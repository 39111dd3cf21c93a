"""BertLMHeadModel.generate against transformers 5.x's on the same weights, inputs and seed:
greedy (with and without the cache), sampling (temperature, top-k, top-p), beam search and
beam sampling, several sequences returned, a left-padded batch, EOS tokens that end
sequences early, and the logits processors (repetition penalty, no repeated n-grams,
minimum lengths). Then generation_config.json, and what generate refuses."""

from __future__ import annotations

import json

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert import GenerationConfig

from ..conftest import small_config_kwargs


def _pair():
    kwargs = dict(small_config_kwargs("tiny"), is_decoder=True)
    torch.manual_seed(0)
    theirs = transformers.BertLMHeadModel(transformers.BertConfig(**kwargs)).eval()
    ours = mini_hf_bert.BertLMHeadModel(mini_hf_bert.BertConfig(**kwargs)).eval()
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def _prompts():
    """Three prompts of 6 tokens, the second left-padded by 2."""
    ids = torch.randint(4, 211, (3, 6), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    ids[1, :2], mask[1, :2] = 0, 0
    return ids, mask


def _produced_tokens(ours, ids, mask, options) -> list[int]:
    """Tokens the same call produces without an EOS, early in one row and later in another:
    as EOS, they end some sequences (some beams) and not others."""
    torch.manual_seed(5)
    produced = ours.generate(ids, attention_mask=mask, **options)[:, 6:]
    return [int(produced[0, 0]), int(produced[-1, 3])]


CASES = {
    "greedy": {},
    "greedy, no cache": {"use_cache": False},
    "sampling": {"do_sample": True},
    "sampling, warped, 2 each": {"do_sample": True, "top_k": 8, "top_p": 0.8, "temperature": 0.7, "num_return_sequences": 2},
    "beam search": {"num_beams": 3},
    "beam search, 2 returned, length penalty": {"num_beams": 4, "num_return_sequences": 2, "length_penalty": 0.5},
    "beam sampling": {"num_beams": 3, "do_sample": True},
    "processors": {"repetition_penalty": 1.3, "no_repeat_ngram_size": 2},
    "greedy to EOS": {"eos": 1},
    "beam search to EOS, early stopping": {"eos": 2, "num_beams": 3, "early_stopping": True},
    "beam search to EOS, never stopping early": {"eos": 2, "num_beams": 3, "early_stopping": "never",
                                                  "num_return_sequences": 3},
    "beam search to EOS, heuristic": {"eos": 2, "num_beams": 2, "num_return_sequences": 2},
    "sampling to EOS": {"eos": 2, "do_sample": True},
    "minimum new tokens": {"eos": 1, "min_new_tokens": 5},
    "minimum length": {"eos": 1, "min_length": 10},
}


@pytest.mark.parametrize("case", list(CASES))
def test_generate_equals_transformers(case):
    ours, theirs = _pair()
    ids, mask = _prompts()
    options = dict(CASES[case], max_new_tokens=10)
    eos = options.pop("eos", None)
    if eos is not None:
        produced = _produced_tokens(ours, ids, mask, options)
        options["eos_token_id"] = produced[0] if eos == 1 else produced
    generated = []
    for model in (ours, theirs):
        torch.manual_seed(5)
        generated.append(model.generate(ids, attention_mask=mask, **options))
    assert generated[0].shape == generated[1].shape and torch.equal(generated[0], generated[1]), generated
    if eos is not None:  # the EOS did end something early: the data reach what the case names
        ended = torch.isin(generated[0][:, 6:], torch.tensor(options["eos_token_id"])).any(dim=1)
        assert ended.any(), generated[0]


def test_generation_config_json_round_trips_with_transformers(tmp_path):
    ours, theirs = _pair()
    assert ours.can_generate() and not mini_hf_bert.BertModel.can_generate()
    ours.generation_config = ours.generation_config.update(num_beams=3, max_length=30, eos_token_id=7)
    ours.save_pretrained(tmp_path / "ours")
    written = json.loads((tmp_path / "ours" / "generation_config.json").read_text())
    assert (written["num_beams"], written["max_length"], written["eos_token_id"]) == (3, 30, 7)
    read = transformers.GenerationConfig.from_pretrained(tmp_path / "ours")
    assert (read.num_beams, read.max_length, read.eos_token_id) == (3, 30, 7)
    again = mini_hf_bert.BertLMHeadModel.from_pretrained(tmp_path / "ours")
    assert again.generation_config == ours.generation_config
    theirs.generation_config.num_beams = 2
    theirs.save_pretrained(tmp_path / "theirs")
    assert mini_hf_bert.BertLMHeadModel.from_pretrained(tmp_path / "theirs").generation_config.num_beams == 2
    assert not (tmp_path / "encoder").exists()
    mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"))).save_pretrained(tmp_path / "encoder")
    assert not (tmp_path / "encoder" / "generation_config.json").exists()


def test_config_generation_fields_are_the_defaults():
    """transformers 4.x kept generation settings on the model config; they are generate's defaults."""
    config = mini_hf_bert.BertConfig(**small_config_kwargs("tiny"), is_decoder=True, num_beams=3, max_length=12)
    model = mini_hf_bert.BertLMHeadModel(config).eval()
    assert model.generation_config.num_beams == 3
    ids, _ = _prompts()
    assert model.generate(ids).shape == (3, 12)


@pytest.mark.parametrize("call, error, message", [
    (dict(input_ids=[[1, 2]]), ValueError, "generate needs input_ids, a \\(batch, length\\) tensor"),
    (dict(max_length=4), ValueError, "nothing to generate: the prompt has 6 tokens and max_length is 4"),
    (dict(num_beams=2, num_return_sequences=3), ValueError, "num_return_sequences \\(3\\) cannot exceed num_beams \\(2\\)"),
    (dict(num_return_sequences=2), ValueError, "Greedy methods without beam search do not support num_return_sequences"),
    (dict(do_sample=True, temperature=0.0), ValueError, "temperature must be positive"),
    (dict(top_p=1.5), ValueError, "top_p must be in \\[0, 1\\]"),
    (dict(num_beam=2), TypeError, "unexpected keyword argument\\(s\\) \\['num_beam'\\]"),
    (dict(eos_token_id="x"), ValueError, "eos_token_id must be a token id"),
    (dict(max_new_tokens=0), ValueError, "max_new_tokens must be an int >= 1 or None, got 0"),
    (dict(top_k=-1), ValueError, "top_k must be an int >= 0 or None"),
    (dict(max_new_tokens=10**9), ValueError, "max_length 1000000006 .* exceeds the 40 positions the model has"),
    (dict(attention_mask=torch.ones(3, 4)), ValueError, "attention_mask must be a tensor of input_ids' shape"),
])
def test_generate_refuses_what_cannot_work(call, error, message):
    ours, _ = _pair()
    ids, _ = _prompts()
    arguments = {"input_ids": ids, "max_new_tokens": 3, **call}
    if "max_length" in call:
        arguments.pop("max_new_tokens")
    with pytest.raises(error, match=message):
        ours.generate(**arguments)


def test_generation_config_is_checked():
    ours, _ = _pair()
    with pytest.raises(TypeError, match="mini_hf_bert GenerationConfig"):
        ours.generation_config = {"num_beams": 2}
    assert GenerationConfig(num_beams=2).update(top_k=3).top_k == 3


def test_a_bad_generation_config_json_is_refused_naming_it(tmp_path):
    import os

    ours, _ = _pair()
    ours.save_pretrained(tmp_path)
    path = tmp_path / "generation_config.json"
    for content, message in (("{not json", "not valid JSON"), ("[1]", "must be a JSON object"),
                             (json.dumps({"num_beams": "x"}), "GenerationConfig.num_beams must be an int >= 1"),
                             (json.dumps({"early_stopping": "sometimes"}), "early_stopping must be True, False or 'never'"),
                             (json.dumps({"temperature": None}), "temperature must be a finite number")):
        path.write_text(content)
        with pytest.raises(ValueError, match=f"generation_config.json: .*{message}"):
            mini_hf_bert.BertLMHeadModel.from_pretrained(tmp_path)
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(ValueError, match="generation_config.json: is a named pipe"):
        mini_hf_bert.BertLMHeadModel.from_pretrained(tmp_path)
