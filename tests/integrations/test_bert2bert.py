"""bert2bert: transformers' EncoderDecoderModel over our BertModel and BertLMHeadModel, against
the same model over transformers' own: the loss, greedy and beam-search generation (which
pass transformers' EncoderDecoderCache through our decoder), and Seq2SeqTrainer with
predict_with_generate. EncoderDecoderModel gives both halves transformers' BertConfig, so
this also holds our layers to reading only what such a config has."""

from __future__ import annotations

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert.parity.compare import FP32_ATOL

from ..conftest import small_config_kwargs

START, PAD, EOS = 2, 0, 3


def _pairs():
    """(ours, theirs): EncoderDecoderModels whose halves hold the same seeded weights."""
    kwargs = small_config_kwargs("tiny")
    torch.manual_seed(0)
    encoder = transformers.BertModel(transformers.BertConfig(**kwargs))
    decoder = transformers.BertLMHeadModel(transformers.BertConfig(**kwargs, is_decoder=True, add_cross_attention=True))
    ours_encoder = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**kwargs))
    ours_decoder = mini_hf_bert.BertLMHeadModel(mini_hf_bert.BertConfig(**kwargs, is_decoder=True, add_cross_attention=True))
    ours_encoder.load_state_dict(encoder.state_dict())
    ours_decoder.load_state_dict(decoder.state_dict())
    models = []
    for enc, dec in ((ours_encoder, ours_decoder), (encoder, decoder)):
        model = transformers.EncoderDecoderModel(encoder=enc, decoder=dec)
        for config in (model.config, model.generation_config):
            config.decoder_start_token_id, config.pad_token_id, config.eos_token_id = START, PAD, EOS
        models.append(model.eval())
    assert isinstance(models[0].decoder, mini_hf_bert.BertLMHeadModel)
    assert type(models[0].decoder.config) is transformers.BertConfig  # what EncoderDecoderModel does to both halves
    return models


def _inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(4, 211, (3, 9), generator=g)
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0
    return ids, mask, torch.randint(4, 211, (3, 5), generator=g)


def test_loss_and_logits_equal_transformers():
    ours, theirs = _pairs()
    ids, mask, labels = _inputs()
    with torch.no_grad():
        a = ours(input_ids=ids, attention_mask=mask, labels=labels)
        b = theirs(input_ids=ids, attention_mask=mask, labels=labels)
    assert (a.logits - b.logits).abs().max() < FP32_ATOL and abs(a.loss - b.loss) < FP32_ATOL


@pytest.mark.parametrize("options", [dict(num_beams=1), dict(num_beams=3), dict(num_beams=3, num_return_sequences=2),
                                     dict(num_beams=1, use_cache=False), dict(do_sample=True, top_k=20, temperature=0.8)],
                         ids=["greedy", "beam", "beam-2-returned", "greedy-no-cache", "sampling"])
def test_generate_equals_transformers(options):
    ours, theirs = _pairs()
    ids, mask, _ = _inputs()
    generated = []
    for model in (ours, theirs):
        torch.manual_seed(3)
        generated.append(model.generate(ids, attention_mask=mask, max_new_tokens=7, **options))
    assert torch.equal(generated[0], generated[1]), generated


def test_our_decoder_takes_and_updates_transformers_encoder_decoder_cache():
    """Given an EncoderDecoderCache, the decoder fills it in place and returns it, as
    transformers' own does: the second step reads the cross-attention keys from it."""
    ours, theirs = _pairs()
    ids, mask, labels = _inputs()
    with torch.no_grad():
        states = theirs.encoder(ids, attention_mask=mask).last_hidden_state
        logits = []
        for model in (ours.decoder, theirs.decoder):
            cache = transformers.EncoderDecoderCache(transformers.DynamicCache(), transformers.DynamicCache())
            first = model(labels[:, :3], encoder_hidden_states=states, encoder_attention_mask=mask,
                          past_key_values=cache, use_cache=True)
            assert first.past_key_values is cache and cache.get_seq_length() == 3 and cache.is_updated[0]
            second = model(labels[:, 3:], encoder_hidden_states=states, encoder_attention_mask=mask,
                           past_key_values=cache, use_cache=True)
            assert cache.get_seq_length() == 5
            logits.append(torch.cat([first.logits, second.logits], dim=1))
    assert (logits[0] - logits[1]).abs().max() < FP32_ATOL


def test_seq2seq_trainer_predicts_with_generate(tmp_path):
    """Seq2SeqTrainer trains both for two steps and predicts with generate: the same losses
    and the same generated tokens."""
    ids, mask, labels = _inputs()
    rows = [{"input_ids": ids[i], "attention_mask": mask[i], "labels": labels[i]} for i in range(3)]
    results = []
    for name, model in zip(("ours", "theirs"), _pairs()):
        arguments = transformers.Seq2SeqTrainingArguments(
            str(tmp_path / name), max_steps=2, per_device_train_batch_size=3, per_device_eval_batch_size=3,
            predict_with_generate=True, generation_max_length=6, report_to=[], use_cpu=True, disable_tqdm=True,
            save_strategy="no", logging_steps=1, seed=7)
        trainer = transformers.Seq2SeqTrainer(model=model, args=arguments, train_dataset=rows, eval_dataset=rows)
        trainer.train()
        losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
        results.append((losses, trainer.predict(rows).predictions))
    (our_losses, ours), (their_losses, theirs) = results
    assert our_losses == pytest.approx(their_losses, abs=FP32_ATOL) and len(our_losses) == 2
    assert ours.shape == theirs.shape and (ours == theirs).all() and (ours[:, 0] == START).all()
