"""The API transformers code calls on a model, a config and an output, each checked against
transformers 5.23 doing the same: loading an encoder checkpoint into a task head,
``ignore_mismatched_sizes``, the error type of a size mismatch, the loading info's sets,
``from_pretrained`` / ``save_pretrained``'s other arguments, ``ModelOutput`` rebuilt from a
dict and taking new keys, ``BertConfig.get_text_config`` / ``use_return_dict`` / ``update``,
activation checkpointing with 5.23's arguments, ``enable_input_require_grads``,
``get_memory_footprint``, ``main_input_name``, ``_keys_to_ignore_on_save``,
``set_input_embeddings`` on every head, ``name_or_path`` and ``vocab_size`` as attributes.
"""

from __future__ import annotations

import logging
import os

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert import BertConfig, BertModel, CheckpointError
from mini_hf_bert.modeling_outputs import MaskedLMOutput, SequenceClassifierOutput
from mini_hf_bert.parity.compare import FP32_ATOL

from ..conftest import small_config_kwargs

#: Every task model: the classes a fine-tuning script builds on an encoder checkpoint.
HEAD_CLASSES = ("BertForPreTraining", "BertForMaskedLM", "BertLMHeadModel", "BertForNextSentencePrediction",
                "BertForSequenceClassification", "BertForMultipleChoice", "BertForTokenClassification",
                "BertForQuestionAnswering")


def _config_kwargs(**overrides):
    kwargs = small_config_kwargs("tiny")
    kwargs.update(overrides)
    return kwargs


def _ours(class_name, **overrides):
    config = BertConfig(**_config_kwargs(**overrides))
    if class_name == "BertLMHeadModel":
        config.is_decoder = True
    return getattr(mini_hf_bert, class_name)(config)


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory):
    """An encoder-only checkpoint (BertModel, with its pooler), written by transformers."""
    directory = tmp_path_factory.mktemp("encoder")
    torch.manual_seed(0)
    transformers.BertModel(transformers.BertConfig(**_config_kwargs())).save_pretrained(directory)
    return directory


# ------------------------------------------------------------- loading into a head


@pytest.mark.parametrize("class_name", HEAD_CLASSES)
def test_an_encoder_checkpoint_loads_into_every_task_head_as_in_transformers(class_name, encoder_dir, caplog):
    """The first line of a fine-tuning script: the head is new, initialised and named in a
    warning; the same keys as transformers reports; the encoder loaded exactly."""
    extra = {"is_decoder": True} if class_name == "BertLMHeadModel" else {}
    theirs, their_info = getattr(transformers, class_name).from_pretrained(encoder_dir, output_loading_info=True, **extra)
    with caplog.at_level(logging.WARNING, logger="mini_hf_bert"):
        ours, info = getattr(mini_hf_bert, class_name).from_pretrained(encoder_dir, output_loading_info=True, **extra)
    assert isinstance(info["missing_keys"], set) and isinstance(their_info["missing_keys"], set)
    assert info["missing_keys"] == their_info["missing_keys"] and info["missing_keys"]
    assert info["unexpected_keys"] == their_info["unexpected_keys"]
    assert f"Some weights of {class_name} were not initialized from the model checkpoint" in caplog.text
    assert all(k in caplog.text for k in info["missing_keys"] if not k.endswith(".bias") or "decoder" not in k)
    their_state = theirs.state_dict()
    for key, value in ours.state_dict().items():
        if key.startswith("bert.") and key not in info["missing_keys"]:
            assert torch.equal(value, their_state[key]), key


def test_a_missing_encoder_weight_is_still_an_error_unless_strict_false(tmp_path):
    """A half-loaded encoder computes garbage: never silent, whatever head is on top."""
    model = _ours("BertModel")
    state = {k: v for k, v in model.state_dict().items() if k != "encoder.layer.0.output.dense.weight"}
    model.config.save_pretrained(tmp_path)
    torch.save(state, tmp_path / "pytorch_model.bin")
    for class_name in ("BertModel", "BertForSequenceClassification"):
        with pytest.raises(CheckpointError, match="1 weights missing: .*encoder.layer.0.output.dense.weight"
                                                  ".*Pass strict=False"):
            getattr(mini_hf_bert, class_name).from_pretrained(tmp_path)
    _, info = mini_hf_bert.BertForSequenceClassification.from_pretrained(tmp_path, strict=False, output_loading_info=True)
    assert "bert.encoder.layer.0.output.dense.weight" in info["missing_keys"]


def test_ignore_mismatched_sizes_reheads_a_classifier_as_transformers(tmp_path):
    torch.manual_seed(0)
    source = transformers.BertForSequenceClassification(transformers.BertConfig(**_config_kwargs(), num_labels=2))
    source.save_pretrained(tmp_path)
    with pytest.raises(RuntimeError):  # transformers' type for a size mismatch
        transformers.BertForSequenceClassification.from_pretrained(tmp_path, num_labels=3)
    with pytest.raises(RuntimeError) as refused:
        mini_hf_bert.BertForSequenceClassification.from_pretrained(tmp_path, num_labels=3)
    assert isinstance(refused.value, CheckpointError) and "ignore_mismatched_sizes=True" in str(refused.value)
    assert "classifier.weight is (2, 64) in the checkpoint, the model expects (3, 64)" in str(refused.value)

    theirs, their_info = transformers.BertForSequenceClassification.from_pretrained(
        tmp_path, num_labels=3, ignore_mismatched_sizes=True, output_loading_info=True)
    ours, info = mini_hf_bert.BertForSequenceClassification.from_pretrained(
        tmp_path, num_labels=3, ignore_mismatched_sizes=True, output_loading_info=True)
    assert info["mismatched_keys"] == {(k, tuple(a), tuple(b)) for k, a, b in their_info["mismatched_keys"]}
    assert ours.classifier.out_features == 3 and ours.config.num_labels == 3
    assert torch.equal(ours.bert.pooler.dense.weight, source.bert.pooler.dense.weight)
    assert not torch.equal(ours.classifier.weight[:2], source.classifier.weight)  # fresh, not a slice of the old one


def test_ignore_mismatched_sizes_on_the_encoder_as_transformers_common_test(tmp_path):
    """ModelTesterMixin.test_load_with_mismatched_shapes: AutoModel with another vocab_size."""
    torch.manual_seed(0)
    transformers.BertForSequenceClassification(transformers.BertConfig(**_config_kwargs())).save_pretrained(tmp_path)
    with pytest.raises(RuntimeError):
        BertModel.from_pretrained(tmp_path, vocab_size=10)
    model = BertModel.from_pretrained(tmp_path, vocab_size=10, ignore_mismatched_sizes=True)
    out = model(torch.randint(0, 10, (1, 5)))
    assert model.embeddings.word_embeddings.num_embeddings == 10 and out.last_hidden_state.shape == (1, 5, model.config.hidden_size)


# ------------------------------------------------- from_pretrained / save_pretrained


def test_from_pretrained_takes_transformers_loading_arguments(encoder_dir, tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="mini_hf_bert"):
        model = BertModel.from_pretrained(encoder_dir, low_cpu_mem_usage=True, use_safetensors=True, trust_remote_code=True)
    assert "trust_remote_code=True has no effect" in caplog.text
    with pytest.raises(CheckpointError, match=r"expected one of pytorch_model.bin, .*\(use_safetensors=False\)"):
        BertModel.from_pretrained(encoder_dir, use_safetensors=False)
    model.save_pretrained(tmp_path / "bin", safe_serialization=False)
    with pytest.raises(CheckpointError, match=r"expected one of model.safetensors, .*\(use_safetensors=True\)"):
        BertModel.from_pretrained(tmp_path / "bin", use_safetensors=True)
    # config= with a directory of weights only, as transformers allows
    weights_only = tmp_path / "weights"
    weights_only.mkdir()
    os.link(encoder_dir / "model.safetensors", weights_only / "model.safetensors")
    with pytest.raises(CheckpointError, match="no config.json or bert_config.json beside this checkpoint; pass config="):
        BertModel.from_pretrained(weights_only)
    loaded = BertModel.from_pretrained(weights_only, config=model.config)
    assert torch.equal(loaded.pooler.dense.weight, model.pooler.dense.weight)


def test_save_pretrained_takes_state_dict_and_is_main_process(tmp_path):
    model = _ours("BertForMaskedLM")
    state = {k: torch.full_like(v, 0.5) if v.is_floating_point() else v for k, v in model.state_dict().items()}
    model.save_pretrained(tmp_path / "other", is_main_process=False)
    assert not (tmp_path / "other").exists()
    model.save_pretrained(tmp_path / "given", state_dict=state)
    theirs = transformers.BertForMaskedLM.from_pretrained(tmp_path / "given")
    assert all(torch.all(p == 0.5) for n, p in theirs.named_parameters() if "position" not in n)
    ours = mini_hf_bert.BertForMaskedLM.from_pretrained(tmp_path / "given")
    assert ours.cls.predictions.decoder.weight is ours.bert.embeddings.word_embeddings.weight


def test_push_to_hub_fails_clearly_offline(tmp_path, monkeypatch):
    model = _ours("BertModel")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OSError, match=r"push_to_hub\('me/tiny'\): offline mode is on .* nothing was uploaded"):
        model.push_to_hub("me/tiny")
    with pytest.raises(OSError, match="offline mode is on"):
        model.save_pretrained(tmp_path / "tiny", push_to_hub=True, repo_id="me/tiny")
    assert (tmp_path / "tiny" / "config.json").is_file()  # saved, as transformers does, before the push
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    pytest.importorskip("huggingface_hub")
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(OSError, match=r"could not be reached or refused the upload .*nothing was uploaded"):
        model.push_to_hub("me/tiny")
    with pytest.raises(ValueError, match="is not a hub repo id"):
        model.push_to_hub("not a repo")


# ---------------------------------------------------------------------- outputs


@pytest.mark.parametrize("library", [transformers, mini_hf_bert])
def test_an_output_rebuilt_from_a_dict_and_taking_new_keys(library):
    """accelerate and Trainer map over an output with ``type(out)({k: f(v) ...})``; the
    fill-mask pipeline adds ``input_ids`` to one. Checked on both libraries alike."""
    output_class = (transformers.modeling_outputs.MaskedLMOutput if library is transformers else MaskedLMOutput)
    out = output_class(loss=torch.tensor(2.0), logits=torch.ones(1, 2, 3))
    rebuilt = type(out)({k: v / 2 for k, v in out.items()})
    assert float(rebuilt.loss) == 1.0 and torch.equal(rebuilt.logits, torch.full((1, 2, 3), 0.5))
    assert list(rebuilt.keys()) == ["loss", "logits"] and float(rebuilt[0]) == 1.0
    out["input_ids"] = torch.tensor([[1, 2]])
    assert list(out.keys()) == ["loss", "logits", "input_ids"] and torch.equal(out.input_ids, out[2])
    assert len(out.to_tuple()) == 3
    out.hidden_states = (torch.zeros(1),)  # a field set later takes its place among the fields
    assert list(out.keys()) == (["loss", "logits", "input_ids", "hidden_states"] if library is transformers
                                else ["loss", "logits", "hidden_states", "input_ids"])


def test_new_keys_cannot_hide_the_output_methods():
    out = SequenceClassifierOutput(logits=torch.ones(1, 2))
    with pytest.raises(KeyError, match="would hide a method"):
        out["keys"] = 1
    with pytest.raises(KeyError, match="would hide a method"):
        out["_sync"] = 1


def test_transformers_fill_mask_pipeline_runs_on_our_model_object():
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat"]
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(directory, "vocab.txt"), "w") as f:
            f.write("\n".join(vocab) + "\n")
        tokenizer = transformers.BertTokenizer(os.path.join(directory, "vocab.txt"))
        model = _ours("BertForMaskedLM", vocab_size=len(vocab)).eval()
        fill = transformers.pipeline("fill-mask", model=model, tokenizer=tokenizer)
        result = fill("the cat [MASK] on the mat", top_k=3)
    ids = tokenizer("the cat [MASK] on the mat", return_tensors="pt")
    with torch.no_grad():
        logits = model(**ids).logits[0, 3]
    expected = logits.softmax(-1).topk(3)
    assert [r["token"] for r in result] == expected.indices.tolist()
    assert [r["score"] for r in result] == pytest.approx(expected.values.tolist(), abs=1e-6)


# ----------------------------------------------------------------------- config


def test_config_api_transformers_code_calls():
    ours, theirs = BertConfig(), transformers.BertConfig()
    assert ours.get_text_config() is ours and theirs.get_text_config() is theirs
    assert ours.get_text_config(decoder=True) is ours
    assert ours.use_return_dict is theirs.use_return_dict is True
    ours.return_dict = theirs.return_dict = False
    assert ours.use_return_dict is theirs.use_return_dict is False
    change = {"hidden_dropout_prob": 0.2, "num_labels": 3, "my_note": "kept"}
    ours.update(change)
    theirs.update(change)
    assert ours.hidden_dropout_prob == theirs.hidden_dropout_prob == 0.2
    assert ours.num_labels == theirs.num_labels == 3 and ours.id2label == theirs.id2label
    assert ours.extra["my_note"] == theirs.my_note == "kept"
    with pytest.raises(mini_hf_bert.ConfigError, match="hidden_dropout_prob must be a probability"):
        ours.update({"hidden_dropout_prob": 2.0, "layer_norm_eps": 1e-5})
    assert ours.hidden_dropout_prob == 0.2 and ours.layer_norm_eps == 1e-12  # a refused update changes nothing


# -------------------------------------------------------------- model attributes


def test_model_attributes_transformers_code_reads(encoder_dir):
    ours = mini_hf_bert.BertForSequenceClassification.from_pretrained(encoder_dir)
    theirs = transformers.BertForSequenceClassification.from_pretrained(encoder_dir)
    assert ours.main_input_name == theirs.main_input_name == "input_ids"
    assert ours.supports_gradient_checkpointing is theirs.supports_gradient_checkpointing is True
    assert not ours._keys_to_ignore_on_save and not theirs._keys_to_ignore_on_save
    assert ours.__dict__["name_or_path"] == theirs.__dict__["name_or_path"] == str(encoder_dir)  # peft reads __dict__
    assert ours.get_memory_footprint() == theirs.get_memory_footprint()
    assert ours.get_memory_footprint(return_buffers=False) == theirs.get_memory_footprint(return_buffers=False)


@pytest.mark.parametrize("class_name", ["BertModel", *HEAD_CLASSES])
def test_set_input_embeddings_on_every_model(class_name):
    model = _ours(class_name)
    new = torch.nn.Embedding(model.config.vocab_size, model.config.hidden_size, padding_idx=0)
    model.set_input_embeddings(new)
    assert model.get_input_embeddings() is new and model.base_model.embeddings.word_embeddings is new


def test_vocab_size_attribute_after_resizing_as_transformers():
    ours, theirs = _ours("BertForMaskedLM"), transformers.BertForMaskedLM(transformers.BertConfig(**_config_kwargs()))
    ours.resize_token_embeddings(120)
    theirs.resize_token_embeddings(120)
    assert ours.vocab_size == theirs.vocab_size == ours.config.vocab_size == 120


# ---------------------------------------------------------- activation checkpointing


@pytest.mark.parametrize("every_n_layers,offload", [(1, False), (2, False), (1, True)])
def test_activation_checkpointing_with_5_23_arguments_keeps_the_gradients(every_n_layers, offload, monkeypatch):
    """Trainer 5.23 calls activation_checkpointing_enable(every_n_layers=..., offload=...)."""
    model = _ours("BertForSequenceClassification", num_hidden_layers=3)
    model.train()

    def gradients():
        model.zero_grad()
        torch.manual_seed(1)
        ids = torch.randint(0, model.config.vocab_size, (2, 7))
        model(ids, labels=torch.tensor([0, 1])).loss.backward()
        return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

    plain = gradients()
    calls = []
    real = torch.utils.checkpoint.checkpoint
    monkeypatch.setattr(torch.utils.checkpoint, "checkpoint", lambda *a, **k: calls.append(1) or real(*a, **k))
    model.activation_checkpointing_enable(every_n_layers=every_n_layers, offload=offload)
    assert model.is_gradient_checkpointing
    checkpointed = gradients()
    assert len(calls) == len(range(0, 3, every_n_layers))  # layers 0, n, 2n, ...
    assert plain.keys() == checkpointed.keys() and all(torch.equal(plain[k], checkpointed[k]) for k in plain)
    model.gradient_checkpointing_disable()
    calls.clear()
    gradients()
    assert not calls and not model.is_gradient_checkpointing
    with pytest.raises(ValueError, match="every_n_layers must be a positive int"):
        model.activation_checkpointing_enable(every_n_layers=0)


def test_enable_input_require_grads_lets_gradients_through_a_frozen_encoder():
    ours = _ours("BertForSequenceClassification")
    ours.requires_grad_(False)
    ours.classifier.requires_grad_(True)
    ids = torch.randint(0, ours.config.vocab_size, (2, 5))
    assert not ours.bert.embeddings.word_embeddings(ids).requires_grad
    ours.enable_input_require_grads()
    assert ours.bert.embeddings.word_embeddings(ids).requires_grad
    ours.disable_input_require_grads()
    assert not ours.bert.embeddings.word_embeddings(ids).requires_grad


def test_shift_labels_replace_the_shifted_labels_as_transformers():
    """Sequence-parallel training passes targets already aligned with the logits."""
    torch.manual_seed(0)
    theirs = transformers.BertLMHeadModel(transformers.BertConfig(**_config_kwargs(is_decoder=True))).eval()
    ours = _ours("BertLMHeadModel").eval()
    ours.load_state_dict(theirs.state_dict())
    ids = torch.randint(0, ours.config.vocab_size, (3, 7), generator=torch.Generator().manual_seed(1))
    targets = torch.randint(0, ours.config.vocab_size, (3, 7), generator=torch.Generator().manual_seed(2))
    targets[0, 2] = -100
    with torch.no_grad():
        loss = ours(ids, labels=ids, shift_labels=targets).loss
        assert torch.allclose(loss, theirs(ids, labels=ids, shift_labels=targets).loss, atol=FP32_ATOL, rtol=0)
        assert not torch.allclose(loss, ours(ids, labels=ids).loss)  # the targets, not the shifted labels


def test_state_dict_beside_a_path_replaces_the_files_without_reading_them(encoder_dir, monkeypatch):
    """from_pretrained(path, state_dict=...) takes the config from the path and the weights
    from state_dict, as transformers; the checkpoint's own tensors are not read."""
    import mini_hf_bert.modeling_utils as modeling_utils

    torch.manual_seed(3)
    source = BertModel(BertConfig(**_config_kwargs()))

    def must_not_read(resolved, progress=False):
        raise AssertionError(f"read {resolved.source} although state_dict was given")

    monkeypatch.setattr(modeling_utils, "load_checkpoint_tensors", must_not_read)
    model = BertModel.from_pretrained(encoder_dir, state_dict=source.state_dict())
    for (name, a), b in zip(source.state_dict().items(), model.state_dict().values()):
        assert torch.equal(a, b), name


def test_padding_without_an_attention_mask_is_warned_once(caplog):
    """As transformers 4.x's warn_if_padding_and_no_attention_mask: input_ids that start or
    end with the pad token and no mask draw one warning per process (its words, which its
    own test matches); a mask, or no pad token at the ends, draws none."""
    from mini_hf_bert import validation

    model = BertModel(BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=8)).eval()
    validation._warn_once.cache_clear()
    padded = torch.tensor([[5, 6, 0], [5, 0, 0]])
    with caplog.at_level(logging.WARNING, logger="mini_hf_bert.validation"), torch.no_grad():
        model(torch.tensor([[5, 6, 7]]))
        model(padded, attention_mask=(padded != 0).long())
        assert caplog.records == []
        model(padded)
        model(padded)
    assert len(caplog.records) == 1 and "We strongly recommend passing in an `attention_mask`" in caplog.text
