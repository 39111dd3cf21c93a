"""Task heads against transformers 5.x: state-dict layout, logits and loss of every head,
weight tying through from_pretrained / save_pretrained / resize_token_embeddings, the
hub's legacy pre-training layout, and clear errors for wrong labels."""

from __future__ import annotations

import logging

import pytest
import torch
import transformers
from transformers.models.bert import modeling_bert as hf_modeling

import mini_hf_bert
from mini_hf_bert import modeling_bert
from mini_hf_bert.parity.compare import FP32_ATOL, ParityRow, max_abs_diff

from ..conftest import small_config_kwargs

B, T, K = 3, 10, 4  # batch, sequence, multiple-choice candidates
HEAD_MODULES = ["BertPredictionHeadTransform", "BertLMPredictionHead", "BertOnlyMLMHead", "BertOnlyNSPHead",
                "BertPreTrainingHeads"]


def _config_kwargs(**extra) -> dict:
    return dict(small_config_kwargs("h96-3heads-relu"), **extra)


def _pair(class_name: str, implementation: str = "eager", seed: int = 0, **extra):
    """transformers' task model with random weights and ours holding them (strict load)."""
    torch.manual_seed(seed)
    theirs = getattr(transformers, class_name)(transformers.BertConfig(**_config_kwargs(**extra)))
    theirs.set_attn_implementation(implementation)
    ours = getattr(mini_hf_bert, class_name)(mini_hf_bert.BertConfig(attn_implementation=implementation, **_config_kwargs(**extra)))
    missing, unexpected = ours.load_state_dict(theirs.state_dict(), strict=True)
    assert not missing and not unexpected
    ours.tie_weights()  # load_state_dict copies values; the Parameters stay tied
    return ours.eval(), theirs.eval()


def _inputs(vocab: int, seed: int = 0) -> dict:
    g = torch.Generator().manual_seed(seed)
    mask = torch.ones(B, T, dtype=torch.long)
    mask[1, 6:] = 0
    return dict(input_ids=torch.randint(0, vocab, (B, T), generator=g), attention_mask=mask,
                token_type_ids=torch.randint(0, 2, (B, T), generator=g))


def _labels(class_name: str, vocab: int, num_labels: int, seed: int = 0, problem: str | None = None) -> dict:
    g = torch.Generator().manual_seed(seed + 100)
    if class_name in ("BertForPreTraining", "BertForMaskedLM", "BertLMHeadModel"):
        labels = torch.randint(0, vocab, (B, T), generator=g)
        labels[torch.rand(B, T, generator=g) < 0.5] = -100  # only some positions are predicted
        extra = {"next_sentence_label": torch.randint(0, 2, (B,), generator=g)} if class_name == "BertForPreTraining" else {}
        return dict(labels=labels, **extra)
    if class_name == "BertForNextSentencePrediction":
        return dict(labels=torch.randint(0, 2, (B,), generator=g))
    if class_name == "BertForSequenceClassification":
        if problem == "regression":
            return dict(labels=torch.randn(B, generator=g))
        if problem == "multi_label_classification":
            return dict(labels=(torch.rand(B, num_labels, generator=g) > 0.5).float())
        return dict(labels=torch.randint(0, num_labels, (B,), generator=g))
    if class_name == "BertForMultipleChoice":
        return dict(labels=torch.randint(0, K, (B,), generator=g))
    if class_name == "BertForTokenClassification":
        labels = torch.randint(0, num_labels, (B, T), generator=g)
        labels[1, 6:] = -100
        return dict(labels=labels)
    if class_name == "BertForQuestionAnswering":
        # One answer beyond the sequence: clamped and ignored on both sides.
        return dict(start_positions=torch.tensor([1, 4, T + 3]), end_positions=torch.tensor([2, 5, T + 7]))
    raise AssertionError(class_name)


LOGIT_FIELDS = {
    "BertForPreTraining": ["prediction_logits", "seq_relationship_logits"],
    "BertForQuestionAnswering": ["start_logits", "end_logits"],
}
CASES = [
    ("BertForPreTraining", {}),
    ("BertForMaskedLM", {}),
    ("BertLMHeadModel", {"is_decoder": True}),
    ("BertForNextSentencePrediction", {}),
    ("BertForSequenceClassification", {"num_labels": 3}),
    ("BertForSequenceClassification", {"num_labels": 1, "problem": "regression"}),
    ("BertForSequenceClassification", {"num_labels": 4, "problem": "multi_label_classification"}),
    ("BertForSequenceClassification", {"num_labels": 3, "classifier_dropout": 0.3}),
    ("BertForMultipleChoice", {}),
    ("BertForTokenClassification", {"num_labels": 5}),
    ("BertForQuestionAnswering", {}),
]


@pytest.mark.parametrize("class_name,options", CASES, ids=[f"{c}-{'-'.join(map(str, o.values())) or 'default'}" for c, o in CASES])
@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
def test_head_logits_and_loss_match_transformers(class_name, options, implementation, record_parity):
    options = dict(options)
    problem = options.pop("problem", None)
    ours, theirs = _pair(class_name, implementation, **options)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    # Dropout is identity in eval mode, so check its probabilities directly (classifier_dropout fallback).
    ours_p = {n: m.p for n, m in ours.named_modules() if isinstance(m, torch.nn.Dropout)}
    theirs_p = {n: m.p for n, m in theirs.named_modules() if isinstance(m, torch.nn.Dropout)}
    assert ours_p == theirs_p
    vocab, num_labels = ours.config.vocab_size, ours.config.num_labels
    inputs = _inputs(vocab)
    if class_name == "BertForMultipleChoice":
        inputs = {k: v[:, None, :].expand(B, K, T).clone() for k, v in inputs.items()}
        inputs["input_ids"] = torch.randint(0, vocab, (B, K, T), generator=torch.Generator().manual_seed(7))
    labels = _labels(class_name, vocab, num_labels, problem=problem)
    want_attentions = implementation == "eager"  # only eager returns them (sdpa falls back)
    with torch.no_grad():
        a = ours(**inputs, **labels, output_hidden_states=True, output_attentions=want_attentions)
        b = theirs(**inputs, **labels, output_hidden_states=True, output_attentions=want_attentions)
    fields = LOGIT_FIELDS.get(class_name, ["logits"])
    rows = [ParityRow(f, max_abs_diff(getattr(a, f), getattr(b, f))) for f in fields]
    rows.append(ParityRow("loss", max_abs_diff(a.loss, b.loss)))
    rows += [ParityRow(f"hidden_states[{i}]", max_abs_diff(x, y)) for i, (x, y) in enumerate(zip(a.hidden_states, b.hidden_states))]
    if want_attentions:
        assert len(a.attentions) == ours.config.num_hidden_layers
        rows += [ParityRow(f"attentions[{i}]", max_abs_diff(x, y)) for i, (x, y) in enumerate(zip(a.attentions, b.attentions))]
    record_parity(f"task heads: logits + loss + hidden states (+ attentions), 8 heads ({implementation})", rows)
    assert a.loss is not None and torch.isfinite(a.loss)
    assert all(r.ok for r in rows), [(r.name, r.max_abs_diff) for r in rows if not r.ok]
    # return_dict=False: the same values in transformers' positions (loss first).
    with torch.no_grad():
        as_tuple = ours(**inputs, **labels, return_dict=False)
    assert torch.equal(as_tuple[0], a.loss) and torch.equal(as_tuple[1], getattr(a, fields[0]))


@pytest.mark.parametrize("class_name", HEAD_MODULES)
def test_head_modules_have_transformers_keys(class_name):
    kwargs = _config_kwargs()
    ours = getattr(modeling_bert, class_name)(mini_hf_bert.BertConfig(**kwargs))
    theirs = getattr(hf_modeling, class_name)(transformers.BertConfig(**kwargs))
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {k: tuple(v.shape) for k, v in theirs.state_dict().items()}


@pytest.mark.parametrize("class_name", HEAD_MODULES + [c for c, _ in CASES])
def test_every_head_class_is_annotated(class_name):
    doc = getattr(modeling_bert, class_name).__doc__
    assert f"transformers: ``{class_name}``" in doc and "\n    Google TF: " in doc and "->" in doc


# --------------------------------------------------------------------------- ties


def _tied(model) -> bool:
    return (model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight
            and model.cls.predictions.decoder.bias is model.cls.predictions.bias)


@pytest.mark.parametrize("class_name", ["BertForPreTraining", "BertForMaskedLM", "BertLMHeadModel"])
def test_tying_survives_save_and_load(class_name, tmp_path):
    model = getattr(mini_hf_bert, class_name)(mini_hf_bert.BertConfig(**_config_kwargs()))
    assert _tied(model)
    model.save_pretrained(tmp_path)
    from safetensors.torch import load_file

    saved = load_file(tmp_path / "model.safetensors")
    assert "cls.predictions.decoder.weight" not in saved and "cls.predictions.bias" in saved  # stored once
    loaded = getattr(mini_hf_bert, class_name).from_pretrained(tmp_path)
    assert _tied(loaded)
    for (n1, p1), (n2, p2) in zip(model.state_dict().items(), loaded.state_dict().items()):
        assert n1 == n2 and torch.equal(p1, p2)
    # transformers reads it with nothing missing, and computes the same logits.
    theirs, info = getattr(transformers, class_name).from_pretrained(tmp_path, output_loading_info=True, dtype=torch.float32)
    assert not info["missing_keys"] and not info["mismatched_keys"] and not info["unexpected_keys"]
    inputs = _inputs(model.config.vocab_size)
    with torch.no_grad():
        a, b = loaded(**inputs), theirs.eval()(**inputs)
    field = "prediction_logits" if class_name == "BertForPreTraining" else "logits"
    assert max_abs_diff(getattr(a, field), getattr(b, field)) <= FP32_ATOL


def test_untied_config_keeps_separate_decoder(tmp_path):
    model = mini_hf_bert.BertForMaskedLM(mini_hf_bert.BertConfig(tie_word_embeddings=False, **_config_kwargs()))
    assert model.cls.predictions.decoder.weight is not model.bert.embeddings.word_embeddings.weight
    assert model.cls.predictions.decoder.bias is model.cls.predictions.bias  # the bias tie is structural
    model.save_pretrained(tmp_path)
    loaded = mini_hf_bert.BertForMaskedLM.from_pretrained(tmp_path)
    assert torch.equal(loaded.cls.predictions.decoder.weight, model.cls.predictions.decoder.weight)
    assert loaded.cls.predictions.decoder.weight is not loaded.bert.embeddings.word_embeddings.weight


def test_resize_token_embeddings_keeps_ties_and_values():
    model = mini_hf_bert.BertForPreTraining(mini_hf_bert.BertConfig(**_config_kwargs()))
    old_emb = model.bert.embeddings.word_embeddings.weight.detach().clone()
    with torch.no_grad():
        model.cls.predictions.bias.uniform_()
    old_bias = model.cls.predictions.bias.detach().clone()
    model.resize_token_embeddings(old_emb.shape[0] + 9)
    assert _tied(model) and model.config.vocab_size == old_emb.shape[0] + 9
    assert torch.equal(model.bert.embeddings.word_embeddings.weight[: old_emb.shape[0]], old_emb)
    assert torch.equal(model.cls.predictions.bias[: old_bias.shape[0]], old_bias)
    assert torch.count_nonzero(model.cls.predictions.bias[old_bias.shape[0]:]) == 0
    out = model(torch.full((1, 4), old_emb.shape[0] + 8))  # a new token id works end to end
    assert out.prediction_logits.shape == (1, 4, old_emb.shape[0] + 9)
    model.resize_token_embeddings(50)
    assert _tied(model) and torch.equal(model.bert.embeddings.word_embeddings.weight, old_emb[:50])
    with pytest.raises(ValueError, match="would drop the padding row"):
        mini_hf_bert.BertForMaskedLM(mini_hf_bert.BertConfig(**_config_kwargs(pad_token_id=40))).resize_token_embeddings(30)


def test_resize_matches_transformers():
    ours, theirs = _pair("BertForMaskedLM")
    ours.resize_token_embeddings(250)
    theirs.resize_token_embeddings(250, mean_resizing=False)
    inputs = _inputs(211)  # old ids only: new rows are random on both sides
    with torch.no_grad():
        a, b = ours(**inputs).logits, theirs(**inputs).logits
    assert a.shape == b.shape == (B, T, 250)
    assert max_abs_diff(a[..., :211], b[..., :211]) <= FP32_ATOL


# -------------------------------------------------------------- the hub's layout


def test_bert_base_legacy_layout_loads_into_pretraining_model(bert_base_legacy_dir, record_parity, caplog):
    """bert-base-uncased's pytorch_model.bin has cls.predictions.decoder.weight (a copy of the
    embeddings) but no decoder.bias: both come from their tie sources, nothing is missing."""
    with caplog.at_level(logging.WARNING, logger="mini_hf_bert"):
        ours, info = mini_hf_bert.BertForPreTraining.from_pretrained(bert_base_legacy_dir, output_loading_info=True)
    assert info["missing_keys"] == set() and info["unexpected_keys"] == set() and info["mismatched_keys"] == set()
    assert "differs" not in caplog.text
    assert all(record.getMessage().startswith(bert_base_legacy_dir) for record in caplog.records)  # each names the file
    assert _tied(ours)
    theirs = transformers.BertForPreTraining.from_pretrained(bert_base_legacy_dir, dtype=torch.float32).eval()
    inputs = _inputs(30522)
    labels = _labels("BertForPreTraining", 30522, 2)
    with torch.no_grad():
        a, b = ours(**inputs, **labels), theirs(**inputs, **labels)
    rows = [ParityRow(f, max_abs_diff(getattr(a, f), getattr(b, f))) for f in ("prediction_logits", "seq_relationship_logits", "loss")]
    record_parity("bert-base legacy layout into BertForPreTraining: logits + loss", rows)
    assert all(r.ok for r in rows), rows


def test_a_tied_copy_that_disagrees_is_untied_as_in_transformers(tmp_path, caplog):
    """A checkpoint whose decoder weight differs from the word embeddings it is tied to:
    both are kept, untied, with a warning, and the masked-LM logits are transformers' own
    for the same file (tying would have replaced the decoder the file holds)."""
    model = mini_hf_bert.BertForMaskedLM(mini_hf_bert.BertConfig(**_config_kwargs()))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    state["cls.predictions.decoder.weight"] += 1.0
    model.config.save_pretrained(tmp_path)
    torch.save(state, tmp_path / "pytorch_model.bin")
    with caplog.at_level(logging.WARNING, logger="mini_hf_bert"):
        loaded = mini_hf_bert.BertForMaskedLM.from_pretrained(tmp_path)
    assert (f"{tmp_path / 'pytorch_model.bin'}: the model ties cls.predictions.decoder.weight to "
            "bert.embeddings.word_embeddings.weight, but both are present in the checkpoints with different values, "
            "so we will NOT tie them") in caplog.text
    assert loaded.cls.predictions.decoder.weight is not loaded.bert.embeddings.word_embeddings.weight
    assert torch.equal(loaded.bert.embeddings.word_embeddings.weight, state["bert.embeddings.word_embeddings.weight"])
    assert torch.equal(loaded.cls.predictions.decoder.weight, state["cls.predictions.decoder.weight"])
    assert loaded.config.tie_word_embeddings is False
    reference = transformers.BertForMaskedLM.from_pretrained(str(tmp_path)).eval()
    input_ids = torch.tensor([[1, 5, 7, 2]])
    assert max_abs_diff(loaded(input_ids).logits, reference(input_ids).logits) <= FP32_ATOL
    loaded.save_pretrained(tmp_path / "again")  # both ends are written, and read back untied without a warning
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="mini_hf_bert"):
        again = mini_hf_bert.BertForMaskedLM.from_pretrained(tmp_path / "again")
    assert "NOT tie" not in caplog.text
    assert torch.equal(again.cls.predictions.decoder.weight, state["cls.predictions.decoder.weight"])


def test_a_checkpoint_holding_only_the_decoder_end_of_the_tie_loads_and_ties(tmp_path):
    """transformers 5.x loads a tie saved under its other end (the decoder weight, no word
    embeddings) into both ends; so do we, and the models agree."""
    model = mini_hf_bert.BertForMaskedLM(mini_hf_bert.BertConfig(**_config_kwargs()))
    state = {k: v.clone() for k, v in model.state_dict().items() if k != "bert.embeddings.word_embeddings.weight"}
    model.config.save_pretrained(tmp_path)
    torch.save(state, tmp_path / "pytorch_model.bin")
    loaded, info = mini_hf_bert.BertForMaskedLM.from_pretrained(tmp_path, output_loading_info=True)
    assert info["missing_keys"] == set()
    assert loaded.cls.predictions.decoder.weight is loaded.bert.embeddings.word_embeddings.weight
    assert torch.equal(loaded.bert.embeddings.word_embeddings.weight, state["cls.predictions.decoder.weight"])
    reference = transformers.BertForMaskedLM.from_pretrained(str(tmp_path)).eval()
    input_ids = torch.tensor([[1, 5, 7, 2]])
    assert max_abs_diff(loaded(input_ids).logits, reference(input_ids).logits) <= FP32_ATOL


def test_base_checkpoint_into_a_head_model_reports_the_new_head(tmp_path, caplog):
    """Fine-tuning starts this way: BertModel weights, a fresh classifier, initialised with
    transformers' warning naming it, strict or not (the encoder is whole)."""
    mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**_config_kwargs())).save_pretrained(tmp_path)
    for strict in (True, False):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="mini_hf_bert"):
            model, info = mini_hf_bert.BertForSequenceClassification.from_pretrained(
                tmp_path, num_labels=3, strict=strict, output_loading_info=True)
        assert model.classifier.out_features == 3
        assert info["missing_keys"] == info["newly_initialized_keys"] == {"classifier.weight", "classifier.bias"}
        assert ("Some weights of BertForSequenceClassification were not initialized from the model checkpoint at "
                f"{tmp_path / 'model.safetensors'} and are newly initialized: classifier.weight, classifier.bias") in caplog.text


# ------------------------------------------------------------------ wrong labels


@pytest.mark.parametrize(
    "class_name,options,kwargs,error,message",
    [
        ("BertForMaskedLM", {}, dict(labels=torch.zeros(B, T + 1, dtype=torch.long)), ValueError,
         r"labels must have shape \(3, 10\) to match the logits, got \(3, 11\)"),
        ("BertForMaskedLM", {}, dict(labels=torch.zeros(B, T)), TypeError, "labels must hold integer class ids, got dtype torch.float32"),
        ("BertForMaskedLM", {}, dict(labels=torch.full((B, T), 211)), ValueError, r"labels must be in \[0, 211\) or -100 \(ignored\), got 211"),
        ("BertForSequenceClassification", {"num_labels": 3}, dict(labels=torch.tensor([0, 1, 3])), ValueError, r"in \[0, 3\)"),
        ("BertForSequenceClassification", {"num_labels": 3}, dict(labels=torch.zeros(B, 2)), ValueError,
         r"labels must have shape \(3, 3\)"),
        ("BertForSequenceClassification", {"num_labels": 1}, dict(labels=torch.zeros(B, dtype=torch.long)), TypeError,
         "labels for regression must be floats"),
        ("BertForPreTraining", {}, dict(labels=torch.zeros(B, T, dtype=torch.long), next_sentence_label=torch.tensor([0, 2, 1])),
         ValueError, r"next_sentence_label must be in \[0, 2\)"),
        ("BertForQuestionAnswering", {}, dict(start_positions=torch.zeros(B + 1, dtype=torch.long), end_positions=torch.zeros(B, dtype=torch.long)),
         ValueError, r"start_positions must have shape \(3,\)"),
        ("BertForTokenClassification", {"num_labels": 5}, dict(labels=torch.zeros(B, dtype=torch.long)), ValueError,
         r"labels must have shape \(3, 10\)"),
    ],
)
def test_wrong_labels_get_a_clear_error(class_name, options, kwargs, error, message):
    model = getattr(mini_hf_bert, class_name)(mini_hf_bert.BertConfig(**_config_kwargs(**options))).eval()
    with pytest.raises(error, match=message):
        model(**_inputs(211), **kwargs)


def test_multiple_choice_wants_three_dimensions():
    model = mini_hf_bert.BertForMultipleChoice(mini_hf_bert.BertConfig(**_config_kwargs())).eval()
    with pytest.raises(ValueError, match=r"input_ids must be \(batch, num_choices, seq\), got shape \(3, 10\)"):
        model(**_inputs(211))


def test_pretraining_checkpoint_into_masked_lm_reports_unused_heads_by_file(tmp_path, caplog):
    mini_hf_bert.BertForPreTraining(mini_hf_bert.BertConfig(**_config_kwargs())).save_pretrained(tmp_path)
    with caplog.at_level(logging.INFO, logger="mini_hf_bert"):
        mlm, info = mini_hf_bert.BertForMaskedLM.from_pretrained(tmp_path, output_loading_info=True)
    assert sorted(info["unexpected_keys"]) == ["bert.pooler.dense.bias", "bert.pooler.dense.weight",
                                               "cls.seq_relationship.bias", "cls.seq_relationship.weight"]
    said = [r for r in caplog.records
            if f"{tmp_path / 'model.safetensors'}: 4 checkpoint weights are not used by BertForMaskedLM" in r.message]
    assert [r.levelname for r in said] == ["INFO"]  # the heads of pre-training only: expected
    assert _tied(mlm) and info["missing_keys"] == set()
