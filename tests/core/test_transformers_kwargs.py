"""Keyword arguments transformers users pass, with transformers' meaning, each checked
against transformers itself where it has the same call: gradient_checkpointing_kwargs,
num_parameters' filters, resize_token_embeddings(pad_to_multiple_of), sharded
save_pretrained(max_shard_size), from_pretrained(device_map), BertConfig.from_pretrained,
name_or_path, and a saved config.json that does not claim a transformers version."""

from __future__ import annotations

import inspect
import json
import os
import warnings

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert import BertConfig, BertForPreTraining, BertModel
from mini_hf_bert.checkpoints.saving import parse_size

from ..conftest import small_config_kwargs
from ..checkpoints.test_hub import write_cache
from ..paths import FIXTURES

GOOGLE_DIR = os.path.join(FIXTURES, "tf", "bert_pretraining")


def _pair(class_name="BertForPreTraining"):
    torch.manual_seed(0)
    theirs = getattr(transformers, class_name)(transformers.BertConfig(**small_config_kwargs("tiny")))
    ours = getattr(mini_hf_bert, class_name)(BertConfig(**small_config_kwargs("tiny")))
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


# -------------------------------------------------------- gradient checkpointing


def _gradients(model) -> dict[str, torch.Tensor]:
    """Every parameter's gradient after one seeded training step (dropout on)."""
    model.train()
    torch.manual_seed(1)
    ids = torch.randint(0, model.config.vocab_size, (2, 7))
    out = model(ids, labels=ids, next_sentence_label=torch.tensor([0, 1]))
    model.zero_grad()
    out.loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("kwargs", [{"use_reentrant": False}, {"use_reentrant": True},
                                    {"preserve_rng_state": True, "use_reentrant": False}])
def test_gradient_checkpointing_kwargs_reach_torch_checkpoint_and_keep_the_gradients(kwargs, monkeypatch):
    ours, _ = _pair()
    plain = _gradients(ours)
    seen = []
    real = torch.utils.checkpoint.checkpoint

    def spy(function, *args, **options):
        seen.append(options)
        return real(function, *args, **options)

    monkeypatch.setattr(torch.utils.checkpoint, "checkpoint", spy)
    ours.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # reentrant checkpointing warns when inputs need no grad
        checkpointed = _gradients(ours)
    assert len(seen) == ours.config.num_hidden_layers and all(options == kwargs for options in seen)
    assert plain.keys() == checkpointed.keys() and all(torch.equal(plain[k], checkpointed[k]) for k in plain)


def test_gradient_checkpointing_defaults_and_refusals():
    ours, _ = _pair()
    ours.gradient_checkpointing_enable()
    layers = ours.bert.encoder.layer
    assert all(layer._gradient_checkpointing_func.keywords == {"offload": False, "use_reentrant": False}
               for layer in layers) and ours.is_gradient_checkpointing
    with pytest.raises(TypeError, match="takes no \\['use_reentrent'\\]"):
        ours.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrent": False})
    with pytest.raises(TypeError, match="must be a dict"):
        ours.gradient_checkpointing_enable(gradient_checkpointing_kwargs=[("use_reentrant", False)])


# ---------------------------------------------------------------- num_parameters


@pytest.mark.parametrize("class_name", ["BertModel", "BertForPreTraining", "BertForSequenceClassification"])
@pytest.mark.parametrize("only_trainable", [False, True])
@pytest.mark.parametrize("exclude_embeddings", [False, True])
def test_num_parameters_equals_transformers(class_name, only_trainable, exclude_embeddings):
    ours, theirs = _pair(class_name)
    for model in (ours, theirs):  # freeze the same parameters on both sides
        model.get_input_embeddings().weight.requires_grad_(False)
        for p in model.base_model.encoder.layer[0].parameters():
            p.requires_grad_(False)
    kwargs = dict(only_trainable=only_trainable, exclude_embeddings=exclude_embeddings)
    assert ours.num_parameters(**kwargs) == theirs.num_parameters(**kwargs)
    if only_trainable or exclude_embeddings:
        assert ours.num_parameters(**kwargs) < ours.num_parameters()


# ------------------------------------------------------- resize_token_embeddings


@pytest.mark.parametrize("new_num_tokens,pad_to_multiple_of", [(250, 64), (None, 64), (300, None), (211, 1), (None, None)])
def test_resize_token_embeddings_pads_as_transformers(new_num_tokens, pad_to_multiple_of):
    ours, theirs = _pair("BertForMaskedLM")
    a = ours.resize_token_embeddings(new_num_tokens, pad_to_multiple_of=pad_to_multiple_of)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = theirs.resize_token_embeddings(new_num_tokens, pad_to_multiple_of=pad_to_multiple_of, mean_resizing=False)
    assert a.num_embeddings == b.num_embeddings == ours.config.vocab_size == theirs.config.vocab_size
    assert ours.get_output_embeddings().weight is ours.get_input_embeddings().weight  # still tied
    assert torch.equal(a.weight[:211], b.weight[:211])  # the old rows are kept


def test_resize_token_embeddings_refuses_a_bad_multiple():
    ours, _ = _pair("BertModel")
    for bad in (0, -8, 2.5, "64", True):
        with pytest.raises(ValueError, match="pad_to_multiple_of must be a positive int"):
            ours.resize_token_embeddings(300, pad_to_multiple_of=bad)


# --------------------------------------------------------- sharded save_pretrained


@pytest.mark.parametrize("text", ["5GB", "5gb", "500MB", "2GiB", "100KiB", "10KB", "10Kb", "1MiB", 12345])
def test_size_strings_read_as_transformers_reads_them(text):
    from transformers.utils.hub import convert_file_size_to_int

    assert parse_size(text, "max_shard_size") == convert_file_size_to_int(text)


@pytest.mark.parametrize("bad", ["5 TB", "-5GB", "GB", "", 0, -1, 1.5, None])
def test_bad_shard_sizes_are_named(bad):
    with pytest.raises(ValueError, match="max_shard_size=.* is not a size"):
        parse_size(bad, "max_shard_size")


@pytest.mark.parametrize("safe", [True, False])
def test_sharded_save_loads_in_transformers_and_here(tmp_path, safe):
    ours, theirs = _pair()
    ours.save_pretrained(tmp_path / "sharded", safe_serialization=safe, max_shard_size="30KB")
    files = sorted(os.listdir(tmp_path / "sharded"))
    stem, ext = ("model", "safetensors") if safe else ("pytorch_model", "bin")
    shards = [f for f in files if f.startswith(f"{stem}-")]
    assert len(shards) > 2 and shards[0] == f"{stem}-00001-of-{len(shards):05d}.{ext}"
    with open(tmp_path / "sharded" / f"{stem}.{ext}.index.json") as f:
        index = json.load(f)
    assert sorted(set(index["weight_map"].values())) == shards
    sizes = [os.path.getsize(tmp_path / "sharded" / s) for s in shards]
    assert index["metadata"]["total_size"] <= sum(sizes)
    reloaded_theirs = transformers.BertForPreTraining.from_pretrained(tmp_path / "sharded").eval()
    reloaded_ours = BertForPreTraining.from_pretrained(tmp_path / "sharded")
    ids = torch.randint(0, 211, (2, 6))
    with torch.no_grad():
        want = theirs.eval()(ids).prediction_logits
        assert torch.equal(reloaded_theirs(ids).prediction_logits, want)
        assert torch.equal(reloaded_ours(ids).prediction_logits, want)
    # Saving again unsharded replaces the shards: no stale file is left for a loader to pick.
    ours.save_pretrained(tmp_path / "sharded", safe_serialization=safe)
    assert sorted(os.listdir(tmp_path / "sharded")) == ["config.json", f"{stem}.{'safetensors' if safe else 'bin'}"]


def test_a_tensor_larger_than_the_shard_limit_gets_a_shard_of_its_own(tmp_path):
    ours, _ = _pair("BertModel")
    ours.save_pretrained(tmp_path, max_shard_size=1000)  # smaller than the word embeddings (211 x 64 x 4 bytes)
    with open(tmp_path / "model.safetensors.index.json") as f:
        weight_map = json.load(f)["weight_map"]
    shard = weight_map["embeddings.word_embeddings.weight"]
    assert [k for k, v in weight_map.items() if v == shard] == ["embeddings.word_embeddings.weight"]


# -------------------------------------------------------------------- device_map


@pytest.mark.parametrize("device_map", ["cpu", torch.device("cpu"), {"": "cpu"}, "auto"])
def test_device_map_for_one_device(good_dir, device_map):
    model = BertModel.from_pretrained(good_dir, device_map=device_map)
    assert model.device == torch.device("cpu") and all(p.device.type == "cpu" for p in model.parameters())


@pytest.mark.parametrize("device_map,fragment", [
    ("cuda", "no cuda device is available on this machine"),
    ("cuda:0", "no cuda device is available"),
    (0, "no cuda device is available"),
    ({"embeddings": "cpu", "encoder": "cuda:0"}, "spreads the model over several devices"),
    ("gpu please", "is not a device"),
    ("meta", "would load no weights"),
])
def test_device_map_refusals(good_dir, device_map, fragment):
    if "no cuda device" in fragment and torch.cuda.is_available():  # a CUDA machine: the same call must work
        assert BertModel.from_pretrained(good_dir, device_map=device_map).device.type == "cuda"
        return
    with pytest.raises(ValueError, match=fragment):
        BertModel.from_pretrained(good_dir, device_map=device_map)


@pytest.fixture
def good_dir(tmp_path):
    torch.manual_seed(0)
    BertModel(BertConfig(**small_config_kwargs("tiny"))).save_pretrained(tmp_path / "good")
    return tmp_path / "good"


# ------------------------------------------------------ BertConfig.from_pretrained


def test_config_from_pretrained_reads_every_form(good_dir, tmp_path, monkeypatch):
    (tmp_path / "config-only").mkdir()
    os.rename(good_dir / "config.json", tmp_path / "config-only" / "config.json")
    assert BertConfig.from_pretrained(tmp_path / "config-only").hidden_size == 64  # no weights needed
    assert BertConfig.from_pretrained(tmp_path / "config-only" / "config.json").num_hidden_layers == 2
    google = BertConfig.from_pretrained(GOOGLE_DIR)
    assert google.hidden_size == 16 and google.name_or_path == GOOGLE_DIR
    assert BertConfig.from_pretrained(os.path.join(GOOGLE_DIR, "bert_model.ckpt")).hidden_size == 16
    assert BertConfig.from_pretrained(os.path.join(os.path.dirname(GOOGLE_DIR), "bert_model.ckpt.zip")).hidden_size == 16
    assert BertConfig.from_pretrained(tmp_path / "config-only", num_labels=5).num_labels == 5
    cache = tmp_path / "hub"
    write_cache(cache, "someone/tiny-bert", {"config.json": (tmp_path / "config-only" / "config.json").read_bytes()})
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    hub_config = BertConfig.from_pretrained("someone/tiny-bert")
    assert hub_config.hidden_size == 64 and hub_config.name_or_path == "someone/tiny-bert"
    assert transformers.BertConfig.from_pretrained("someone/tiny-bert", cache_dir=str(cache)).hidden_size == 64


def test_config_from_pretrained_refusals(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (tmp_path / "empty-dir").mkdir()
    with pytest.raises(mini_hf_bert.CheckpointError, match="empty-dir: no config.json"):
        BertConfig.from_pretrained(tmp_path / "empty-dir")
    with pytest.raises(mini_hf_bert.CheckpointError, match="no-such-model: no such local directory or file, and as a hub id"):
        BertConfig.from_pretrained("no-such-model")
    with pytest.raises(TypeError, match="no field 'hiden_size'"):
        BertConfig.from_pretrained(GOOGLE_DIR, hiden_size=3)


def test_name_or_path_and_a_saved_config_that_claims_no_transformers_version(minilm_dir, tmp_path):
    model = BertModel.from_pretrained(minilm_dir)
    theirs = transformers.BertModel.from_pretrained(minilm_dir)
    assert model.name_or_path == model.config.name_or_path == theirs.name_or_path == minilm_dir
    with open(os.path.join(minilm_dir, "config.json")) as f:
        assert json.load(f)["transformers_version"] == "4.8.2"  # the packaged file says which transformers wrote it
    model.save_pretrained(tmp_path / "saved")
    with open(tmp_path / "saved" / "config.json") as f:
        saved = json.load(f)
    assert "transformers_version" not in saved and "_name_or_path" not in saved and "name_or_path" not in saved
    assert saved["gradient_checkpointing"] is False  # other unknown keys are still kept


@pytest.mark.parametrize("class_name", ["BertModel", "BertForPreTraining", "BertForSequenceClassification",
                                        "BertForQuestionAnswering", "BertForMaskedLM"])
def test_positional_arguments_follow_transformers_5(class_name):
    """The positional order is 5.x's, class by class (inputs_embeds fifth, then the labels
    where 5.x puts them), then at most peft's ``past_key_values`` (its prefix tuning looks
    for the name in a head's signature), and no keyword-only parameter (the legacy ONNX
    exporter would pass it positionally); 3.4.0's ``model(ids, mask, tt, None, None)`` still
    means what it meant, and a head mask passed fifth is refused with the keyword form."""
    ours = list(inspect.signature(getattr(mini_hf_bert, class_name).forward).parameters.values())[1:]
    theirs = list(inspect.signature(getattr(transformers, class_name).forward).parameters)[1:]
    positional = [p.name for p in ours if p.kind == p.POSITIONAL_OR_KEYWORD]
    if positional[-1] == "past_key_values" and "past_key_values" not in theirs:
        positional.pop()
    assert positional == theirs[: len(positional)] and "inputs_embeds" in positional
    assert not [p.name for p in ours if p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)]
    model = getattr(mini_hf_bert, class_name)(mini_hf_bert.BertConfig(
        vocab_size=10, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8)).eval()
    ids = torch.tensor([[1, 2, 3]])
    mask, segments = torch.ones_like(ids), torch.zeros_like(ids)
    with torch.no_grad():
        assert torch.equal(model(ids, mask, segments, None, None)[0], model(ids, mask, segments)[0])
    with pytest.raises(ValueError, match=r"5th positional argument, as in transformers 5.x; .* head_mask=\.\.\.$"):
        model(ids, mask, segments, None, torch.ones(2))


def test_the_keyword_groups_are_what_the_forwards_take():
    """Each forward takes by keyword exactly its named parameters and its group's keys; a
    head's group holds BertModel's, so what it passes on is always taken there, and only the
    per-token heads' groups hold the loss count transformers' Trainer passes."""
    from mini_hf_bert import modeling_bert, modeling_bert_extras as extras
    from mini_hf_bert.pytorch_utils import keyword_names

    model_keywords = keyword_names(modeling_bert.BertModel.forward)
    assert set(extras.BertModelKwargs.__optional_keys__) <= model_keywords
    for class_name in ("BertForPreTraining", "BertForSequenceClassification", "BertForMultipleChoice",
                       "BertForTokenClassification", "BertForQuestionAnswering", "BertForMaskedLM",
                       "BertForNextSentencePrediction", "BertLMHeadModel"):
        keywords = keyword_names(getattr(modeling_bert, class_name).forward)
        passed_on = keywords - set(extras.LOSS_KEYWORDS)
        assert set(extras.BertModelKwargs.__optional_keys__) <= passed_on, class_name
        assert not passed_on - model_keywords - {"labels", "next_sentence_label", "start_positions",
                                                 "end_positions"} - {"self"}, class_name
        per_token = class_name in ("BertForTokenClassification", "BertForMaskedLM", "BertLMHeadModel")
        assert ("num_items_in_batch" in keywords) == per_token, class_name


@pytest.mark.parametrize("class_name", ["BertForSequenceClassification", "BertForMaskedLM", "BertForMultipleChoice"])
def test_a_head_refuses_a_misspelt_keyword_by_name(class_name):
    model = getattr(mini_hf_bert, class_name)(mini_hf_bert.BertConfig(
        vocab_size=10, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8)).eval()
    ids = torch.tensor([[[1, 2, 3]]]) if class_name == "BertForMultipleChoice" else torch.tensor([[1, 2, 3]])
    with pytest.raises(TypeError, match="unexpected keyword argument 'output_attention'"):
        model(ids, output_attention=True)
    with torch.no_grad():  # the group's own keywords reach the encoder
        out = model(ids, output_attentions=True, output_hidden_states=True, head_mask=torch.ones(2))
    assert len(out.attentions) == 1 and len(out.hidden_states) == 2


def test_an_encoder_handed_a_batchs_labels_ignores_them_and_refuses_anything_else():
    """transformers' generate for an encoder-decoder hands the encoder the batch's other
    keywords, labels among them: BertModel ignores a task's labels, as 5.x does, and still
    refuses a keyword it does not take, by name."""
    model = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(
        vocab_size=10, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8)).eval()
    ids = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        plain = model(ids).last_hidden_state
        assert torch.equal(model(ids, labels=torch.tensor([[4, 5, 6]])).last_hidden_state, plain)
    with pytest.raises(TypeError, match="BertModel.forward\\(\\) got an unexpected keyword argument 'label'"):
        model(ids, label=torch.tensor([1]))
