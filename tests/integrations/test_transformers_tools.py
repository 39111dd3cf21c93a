"""transformers' own tools given our tokenizer, compared with the same tools given
transformers' tokenizer on the same vocabulary (issue 35's client flows)."""

from __future__ import annotations

import pytest
import torch
import transformers

from mini_hf_bert import BertTokenizer
from mini_hf_bert.checkpoints.bundled import default_checkpoint_dir

TEXTS = ["Unaffable strangers were dancing joyfully.", "Tokenizers split unbelievably long words."]


@pytest.fixture(scope="module")
def tokenizers() -> tuple[BertTokenizer, transformers.PreTrainedTokenizerBase]:
    path = default_checkpoint_dir()
    return BertTokenizer.from_pretrained(path), transformers.AutoTokenizer.from_pretrained(path)


def test_is_fast_as_transformers_bert_tokenizer(tokenizers):
    ours, theirs = tokenizers
    assert ours.is_fast is theirs.is_fast is True


def test_whole_word_masking_collator_masks_as_with_transformers_tokenizer(tokenizers):
    """DataCollatorForLanguageModeling(whole_word_mask=True) reads the offsets to find words:
    with ours it masks exactly what it masks with transformers' tokenizer, for the same seed."""
    batches = []
    for tokenizer in tokenizers:
        collator = transformers.DataCollatorForLanguageModeling(tokenizer, whole_word_mask=True, mlm_probability=0.4,
                                                                seed=7)
        encoded = tokenizer(TEXTS, padding="max_length", max_length=16, return_offsets_mapping=True)
        examples = [{key: values[row] for key, values in encoded.items()} for row in range(len(TEXTS))]
        batches.append(collator(examples))
    ours, theirs = batches
    assert (ours["labels"] != -100).any()  # something was masked
    assert torch.equal(ours["input_ids"], theirs["input_ids"]) and torch.equal(ours["labels"], theirs["labels"])


def test_token_classification_pipeline_aggregates_as_with_transformers_tokenizer(tokenizers, tmp_path):
    """transformers.pipeline("token-classification", tokenizer=ours): "first" aggregation
    (which needs a fast tokenizer) finds the entities it finds with transformers' tokenizer."""
    labels = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    config = transformers.BertConfig(vocab_size=len(tokenizers[1]), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64, num_labels=len(labels),
                                     id2label=dict(enumerate(labels)), label2id={l: i for i, l in enumerate(labels)})
    torch.manual_seed(0)
    model = transformers.BertForTokenClassification(config).eval()
    found = [transformers.pipeline("token-classification", model=model, tokenizer=tokenizer,
                                   aggregation_strategy="first")(TEXTS) for tokenizer in tokenizers]
    ours, theirs = found
    assert any(ours)  # random weights still tag something
    for mine, reference in zip(ours, theirs):
        assert [(e["entity_group"], e["word"], e["start"], e["end"]) for e in mine] == \
            [(e["entity_group"], e["word"], e["start"], e["end"]) for e in reference]
        assert [e["score"] for e in mine] == pytest.approx([e["score"] for e in reference], abs=1e-6)


@pytest.mark.parametrize("case", ["a directory without weights", "a directory without a config", "no such path"])
def test_a_missing_checkpoint_is_an_oserror_as_in_transformers(case, tmp_path):
    """transformers raises OSError where a checkpoint is missing, and code written for it
    falls back with ``except OSError``: ours is that too (and still our CheckpointError)."""
    import mini_hf_bert
    from mini_hf_bert.checkpoints import CheckpointError, CheckpointNotFoundError

    path = tmp_path / "model"
    if case != "no such path":
        path.mkdir()
    if case == "a directory without weights":
        mini_hf_bert.BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                intermediate_size=64).save_pretrained(path)
    load = (lambda p: mini_hf_bert.BertConfig.from_pretrained(p)) if case == "a directory without a config" \
        else (lambda p: mini_hf_bert.BertModel.from_pretrained(p))
    if case == "a directory without a config":  # transformers 5.x returns bert-base's defaults here; we refuse
        assert transformers.BertConfig.from_pretrained(str(path)).hidden_size == 768
    else:
        with pytest.raises(OSError):
            transformers.BertModel.from_pretrained(str(path))
    with pytest.raises(OSError) as caught:
        load(str(path))
    assert isinstance(caught.value, (CheckpointNotFoundError, FileNotFoundError))
    assert isinstance(caught.value, CheckpointError) or case == "no such path"
    assert str(path) in str(caught.value)


def test_padding_without_a_pad_token_is_a_value_error_as_in_transformers(tokenizers):
    examples = [{"input_ids": [101, 7592, 102]}, {"input_ids": [101, 102]}]
    for tokenizer in tokenizers:
        tokenizer = type(tokenizer).from_pretrained(default_checkpoint_dir())
        tokenizer.pad_token = None
        with pytest.raises(ValueError, match="Asking to pad but the tokenizer does not have a padding token"):
            tokenizer.pad(examples)
        assert tokenizer.pad(examples, padding=False)["input_ids"] == [[101, 7592, 102], [101, 102]]


def test_convert_to_tensors_as_transformers_batch_encoding(tokenizers):
    converted = []
    for tokenizer in tokenizers:
        encoding = tokenizer(TEXTS, padding=True)
        assert encoding.convert_to_tensors("pt") is encoding
        converted.append(encoding)
    ours, theirs = converted
    assert ours.keys() == theirs.keys() and all(torch.equal(ours[k], theirs[k]) for k in ours)
    one = tokenizers[0]("one sentence")
    assert one.convert_to_tensors("pt", prepend_batch_axis=True)["input_ids"].shape == (1, 4)
    ragged = tokenizers[0](TEXTS)
    with pytest.raises(ValueError, match="input_ids: cannot make one tensor of rows of unequal length"):
        ragged.convert_to_tensors("pt")


@pytest.mark.parametrize("mask_kind", ["pt", "np"])
@pytest.mark.parametrize("return_tensors", [None, "pt", "np"])
def test_pad_carries_per_example_4d_attention_masks_as_transformers(tokenizers, mask_kind, return_tensors):
    """Examples that each carry a (1, seq, seq) attention mask (packed or custom attention):
    transformers' pad stacks those masks as they are and pads the rest; so do we."""
    import numpy

    def mask(seed):
        values = torch.Generator().manual_seed(seed)
        square = torch.randint(0, 2, (1, 5, 5), generator=values)
        return square if mask_kind == "pt" else square.numpy()

    padded = []
    for tokenizer in tokenizers:
        examples = [{"input_ids": [101, 7592, 102], "attention_mask": mask(1)},
                    {"input_ids": [101, 7592, 2088, 999, 102], "attention_mask": mask(2)}]
        padded.append(tokenizer.pad(examples, return_tensors=return_tensors))
        assert examples[0]["input_ids"] == [101, 7592, 102]  # the caller's examples are left as they were
    ours, theirs = padded
    assert sorted(ours) == sorted(theirs)
    expected_type = {None: type(theirs["attention_mask"]), "pt": torch.Tensor, "np": numpy.ndarray}[return_tensors]
    assert isinstance(ours["attention_mask"], expected_type) and isinstance(theirs["attention_mask"], expected_type)
    assert ours["attention_mask"].shape == theirs["attention_mask"].shape == (2, 1, 5, 5)
    assert numpy.array_equal(numpy.asarray(ours["attention_mask"]), numpy.asarray(theirs["attention_mask"]))
    to_list = lambda rows: rows.tolist() if hasattr(rows, "tolist") else rows  # noqa: E731
    assert to_list(ours["input_ids"]) == to_list(theirs["input_ids"]) == [[101, 7592, 102, 0, 0],
                                                                          [101, 7592, 2088, 999, 102]]


def test_pad_refuses_stacked_masks_of_different_shapes(tokenizers):
    examples = [{"input_ids": [101, 102], "attention_mask": torch.ones(1, 2, 2)},
                {"input_ids": [101, 7592, 102], "attention_mask": torch.ones(1, 3, 3)}]
    with pytest.raises(ValueError, match=r"attention masks have different shapes \[\(1, 2, 2\), \(1, 3, 3\)\]"):
        tokenizers[0].pad(examples)


def _tiny_masked_lm():
    import mini_hf_bert

    torch.manual_seed(0)
    return mini_hf_bert.BertForMaskedLM(mini_hf_bert.BertConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                                                                num_attention_heads=4, intermediate_size=37))


def test_a_checkpoint_without_either_end_of_the_tie_is_refused_unless_not_strict(tmp_path):
    """transformers loads a masked LM with neither the word embeddings nor the decoder
    weight, warning that the checkpoint "seem corrupted" and leaving both random. We refuse
    it: those are encoder weights, and a half-loaded encoder is never silent; strict=False
    loads the rest and says which weights kept their fresh initialisation."""
    import mini_hf_bert
    from mini_hf_bert.checkpoints import CheckpointError
    from safetensors.torch import save_file

    model = _tiny_masked_lm()
    ends = ("bert.embeddings.word_embeddings.weight", "cls.predictions.decoder.weight")
    state = {k: v.clone() for k, v in model.state_dict().items() if k not in ends}
    model.config.save_pretrained(tmp_path)
    save_file(state, str(tmp_path / "model.safetensors"))
    _, info = transformers.BertForMaskedLM.from_pretrained(str(tmp_path), output_loading_info=True)
    assert set(ends) <= set(info["missing_keys"])  # transformers: loaded, with both ends missing
    with pytest.raises(CheckpointError, match=r"weights missing: bert\.embeddings\.word_embeddings\.weight"):
        mini_hf_bert.BertForMaskedLM.from_pretrained(tmp_path)
    loaded, info = mini_hf_bert.BertForMaskedLM.from_pretrained(tmp_path, strict=False, output_loading_info=True)
    assert set(ends) <= info["missing_keys"]
    assert loaded.cls.predictions.decoder.weight is loaded.bert.embeddings.word_embeddings.weight


@pytest.mark.parametrize("variant", ["v2", "fp16"])
def test_variant_files_are_named_and_read_as_transformers_does(tmp_path, variant):
    """save_pretrained(variant=) writes transformers' file names, each library reads the
    other's, and a plain save beside it leaves the variant's files alone."""
    import mini_hf_bert

    model = _tiny_masked_lm()
    model.save_pretrained(tmp_path / "ours", variant=variant, max_shard_size="20kB")
    assert (tmp_path / "ours" / f"model.safetensors.index.{variant}.json").is_file()
    assert (tmp_path / "ours" / f"model.{variant}-00001-of-00006.safetensors").is_file()
    theirs = transformers.BertForMaskedLM.from_pretrained(str(tmp_path / "ours"), variant=variant)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), theirs.state_dict().values()))
    theirs.save_pretrained(str(tmp_path / "theirs"), variant=variant)
    again = mini_hf_bert.BertForMaskedLM.from_pretrained(tmp_path / "theirs", variant=variant)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values()))
    model.save_pretrained(tmp_path / "ours")
    assert sorted(p.name for p in (tmp_path / "ours").iterdir() if "safetensors" in p.name) == sorted(
        [f"model.{variant}-0000{i}-of-00006.safetensors" for i in range(1, 7)]
        + [f"model.safetensors.index.{variant}.json", "model.safetensors"])


@pytest.mark.parametrize("case, error, message", [
    ("a variant that is a path", ValueError, r"variant='\.\./x': expected a name"),
    ("a variant the directory lacks", OSError, r"no weights file found; expected one of model\.v3\.safetensors"),
    ("a subfolder outside the directory", ValueError, r"subfolder='\.\./elsewhere': expected a folder name"),
    ("a subfolder the directory lacks", OSError, r"no such subfolder \(subfolder='nothing'\)"),
    ("a variant of a hub id", OSError, r"variant='v2' applies to a local directory"),
    ("transformers_weights outside the directory", ValueError, r"must name a file inside"),
    ("transformers_weights of another kind", ValueError, r"must name a \.safetensors file or a \.safetensors\.index\.json"),
    ("transformers_weights naming no file", OSError, r"transformers_weights names 'absent\.safetensors'"),
])
def test_bad_variant_subfolder_and_transformers_weights_name_the_problem(tmp_path, case, error, message):
    import json

    import mini_hf_bert

    _tiny_masked_lm().save_pretrained(tmp_path / "model")
    arguments = {"pretrained_model_name_or_path": tmp_path / "model"}
    if case == "a variant that is a path":
        arguments["variant"] = "../x"
    elif case == "a variant the directory lacks":
        arguments["variant"] = "v3"
    elif case == "a subfolder outside the directory":
        arguments["subfolder"] = "../elsewhere"
    elif case == "a subfolder the directory lacks":
        arguments["subfolder"] = "nothing"
    elif case == "a variant of a hub id":
        arguments = {"pretrained_model_name_or_path": "someone/no-such-bert", "variant": "v2"}
    else:
        named = {"transformers_weights outside the directory": "../model.safetensors",
                 "transformers_weights of another kind": "pytorch_model.bin",
                 "transformers_weights naming no file": "absent.safetensors"}[case]
        values = json.loads((tmp_path / "model" / "config.json").read_text())
        values["transformers_weights"] = named
        (tmp_path / "model" / "config.json").write_text(json.dumps(values))
    with pytest.raises(error, match=message):
        mini_hf_bert.BertForMaskedLM.from_pretrained(**arguments)


def test_transformers_weights_in_a_hub_cache_snapshot_loads_as_transformers(tmp_path):
    """The hub cache's layout: each file of snapshots/<revision>/ is a link into blobs/. A
    config.json whose transformers_weights names such a file loads, as with transformers;
    the name must still stay inside the snapshot."""
    import json
    import os

    import mini_hf_bert

    model = _tiny_masked_lm()
    model.save_pretrained(tmp_path / "saved")
    blobs, snapshot = tmp_path / "repo" / "blobs", tmp_path / "repo" / "snapshots" / "abc123"
    blobs.mkdir(parents=True)
    snapshot.mkdir(parents=True)
    values = json.loads((tmp_path / "saved" / "config.json").read_text())
    (blobs / "c0nf1g").write_text(json.dumps({**values, "transformers_weights": "weights.safetensors"}))
    os.replace(tmp_path / "saved" / "model.safetensors", blobs / "w31ght5")
    os.symlink("../../blobs/c0nf1g", snapshot / "config.json")
    os.symlink("../../blobs/w31ght5", snapshot / "weights.safetensors")
    ours = mini_hf_bert.BertForMaskedLM.from_pretrained(snapshot)
    theirs = transformers.BertForMaskedLM.from_pretrained(snapshot)
    for key, value in theirs.state_dict().items():
        assert torch.equal(ours.state_dict()[key], value), key
    (blobs / "c0nf1g").write_text(json.dumps({**values, "transformers_weights": "../../blobs/x.safetensors"}))
    with pytest.raises(ValueError, match="must name a file inside"):
        mini_hf_bert.BertForMaskedLM.from_pretrained(snapshot)


def test_config_dtype_as_transformers(tmp_path):
    """BertConfig(dtype=) takes a torch dtype or its name, as transformers 5.x's; a save
    records the model's dtype in config.json as its name, and dtype="auto" reads it."""
    import json

    import mini_hf_bert

    for value in (torch.float16, "float16"):
        ours, theirs = mini_hf_bert.BertConfig(dtype=value), transformers.BertConfig(dtype=value)
        assert ours.dtype == theirs.dtype == torch.float16
        assert ours.to_dict()["dtype"] == theirs.to_dict()["dtype"] == "float16"
    with pytest.raises(ValueError, match="BertConfig.dtype must be a torch dtype or its name"):
        mini_hf_bert.BertConfig(dtype="float17")
    model = _tiny_masked_lm().to(torch.bfloat16)
    model.save_pretrained(tmp_path)
    assert json.loads((tmp_path / "config.json").read_text())["dtype"] == "bfloat16"
    assert mini_hf_bert.BertForMaskedLM.from_pretrained(tmp_path, dtype="auto").dtype == torch.bfloat16
    assert transformers.BertForMaskedLM.from_pretrained(str(tmp_path), dtype="auto").dtype == torch.bfloat16


def _per_token_rows(head: str, count: int = 8, length: int = 10) -> list[dict]:
    """Rows whose labelled tokens differ in number (1 to 8 of 10), as masking gives them."""
    generator = torch.Generator().manual_seed(3)
    rows = []
    for i in range(count):
        ids = torch.randint(5, 99, (length,), generator=generator)
        labels = (ids if head != "token" else ids % 5).clone()
        labels[1 + i:] = -100  # row i has i + 1 labelled tokens
        rows.append({"input_ids": ids, "labels": labels})
    return rows


def _per_token_model(head: str):
    import mini_hf_bert

    sizes = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                 max_position_embeddings=16, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    torch.manual_seed(0)
    if head == "masked":
        return mini_hf_bert.BertForMaskedLM(mini_hf_bert.BertConfig(**sizes))
    if head == "token":
        return mini_hf_bert.BertForTokenClassification(mini_hf_bert.BertConfig(**sizes, num_labels=5))
    return mini_hf_bert.BertLMHeadModel(mini_hf_bert.BertConfig(**sizes, is_decoder=True))


@pytest.mark.parametrize("head", ["masked", "token", "causal"])
def test_accumulated_micro_batches_give_the_whole_batchs_loss_and_gradients(head):
    """Per-token heads normalise by num_items_in_batch (the labelled tokens of all accumulated
    micro-batches): summed over the micro-batches, loss and gradients are the whole batch's,
    even when the micro-batches hold different numbers of labelled tokens (where the mean of
    the micro-batch means is not)."""
    from mini_hf_bert.parity.compare import FP32_ATOL, max_abs_diff

    model = _per_token_model(head)
    rows = _per_token_rows(head)
    batch = {key: torch.stack([row[key] for row in rows]) for key in rows[0]}
    whole = model(**batch).loss
    whole.backward()
    expected = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    labels = batch["labels"][:, 1:] if head == "causal" else batch["labels"]  # the shift drops each first label
    items = int((labels != -100).sum())
    halves = [{key: value[:4] for key, value in batch.items()}, {key: value[4:] for key, value in batch.items()}]
    accumulated = sum(model(**half, num_items_in_batch=items).loss for half in halves)
    accumulated.backward()
    assert abs(accumulated.item() - whole.item()) <= FP32_ATOL
    assert max(max_abs_diff(p.grad, expected[name]) for name, p in model.named_parameters() if name in expected) <= FP32_ATOL
    means = sum(model(**half).loss.item() for half in halves) / 2  # without it: the mean of the two means
    assert abs(means - whole.item()) > 100 * FP32_ATOL  # differs, so the comparison above means something


@pytest.mark.parametrize("head", ["masked", "token", "causal"])
def test_trainer_with_accumulation_logs_the_whole_batchs_loss(head, tmp_path):
    """transformers' Trainer passes num_items_in_batch to our per-token heads (they accept
    it: ``accepts_loss_kwargs``; the LM head's ``loss_type`` makes it count past the shift),
    so the loss it logs for 2 accumulated micro-batches is the whole batch's."""
    from mini_hf_bert.integrations import Trainer

    model = _per_token_model(head)
    rows = _per_token_rows(head)
    assert model.accepts_loss_kwargs and model.loss_type == {"masked": "ForMaskedLM", "token": "ForTokenClassification",
                                                             "causal": "ForCausalLM"}[head]
    with torch.no_grad():
        whole = model(**{key: torch.stack([row[key] for row in rows]) for key in rows[0]}).loss.item()
    args = transformers.TrainingArguments(str(tmp_path), max_steps=1, per_device_train_batch_size=4,
                                          gradient_accumulation_steps=2, learning_rate=0.0, logging_steps=1,
                                          save_strategy="no", report_to=[], use_cpu=True, disable_tqdm=True)
    trainer = Trainer(model=model, args=args, train_dataset=rows)
    trainer.remove_callback(transformers.PrinterCallback)
    trainer.train()
    logged = trainer.state.log_history[0]["loss"]
    assert logged == pytest.approx(whole, abs=1e-4)  # Trainer logs the loss rounded to 4 decimals
