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
