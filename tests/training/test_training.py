"""Train mode against transformers 5.x: with the same seed, dropout draws the same masks
in the same order, so one training step gives the same loss and the same gradient for
every parameter; gradient checkpointing changes memory, not gradients."""

from __future__ import annotations

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert.parity.compare import ParityRow, max_abs_diff

from ..conftest import small_config_kwargs

B, T = 2, 12


def _pair(class_name: str, **extra):
    torch.manual_seed(0)
    kwargs = dict(small_config_kwargs("tiny"), **extra)
    theirs = getattr(transformers, class_name)(transformers.BertConfig(**kwargs))
    theirs.set_attn_implementation("eager")  # sdpa's fused dropout draws its own random numbers
    ours = getattr(mini_hf_bert, class_name)(mini_hf_bert.BertConfig(attn_implementation="eager", **kwargs))
    ours.load_state_dict(theirs.state_dict(), strict=True)
    ours.tie_weights()
    return ours.train(), theirs.train()


def _batch(class_name: str, vocab: int, seed: int = 1) -> dict:
    g = torch.Generator().manual_seed(seed)
    mask = torch.ones(B, T, dtype=torch.long)
    mask[1, 9:] = 0
    batch = dict(input_ids=torch.randint(0, vocab, (B, T), generator=g), attention_mask=mask,
                 token_type_ids=torch.randint(0, 2, (B, T), generator=g))
    if class_name == "BertForPreTraining":
        labels = torch.randint(0, vocab, (B, T), generator=g)
        labels[torch.rand(B, T, generator=g) < 0.85] = -100  # BERT predicts ~15% of tokens
        batch.update(labels=labels, next_sentence_label=torch.tensor([0, 1]))
    else:
        batch.update(labels=torch.tensor([2, 0]))
    return batch


def _step(model, batch, seed: int = 1234):
    model.zero_grad(set_to_none=True)
    torch.manual_seed(seed)
    loss = model(**batch).loss
    loss.backward()
    return loss.detach(), {n: p.grad for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("class_name,extra", [("BertForPreTraining", {}), ("BertForSequenceClassification", {"num_labels": 3})])
def test_training_step_gradients_match_transformers(class_name, extra, record_parity):
    ours, theirs = _pair(class_name, **extra)
    batch = _batch(class_name, ours.config.vocab_size)
    loss_a, grads_a = _step(ours, batch)
    loss_b, grads_b = _step(theirs, batch)
    assert set(grads_a) == set(grads_b) and len(grads_a) == len(list(ours.parameters()))
    rows = [ParityRow("loss", max_abs_diff(loss_a, loss_b))]
    rows += [ParityRow(f"grad {n}", max_abs_diff(grads_a[n], grads_b[n])) for n in grads_a]
    record_parity(f"train mode: loss + every parameter gradient, dropout on ({class_name})", rows)
    assert all(r.ok for r in rows), [(r.name, r.max_abs_diff) for r in rows if not r.ok]
    # dropout really acted: another seed gives another loss
    loss_c, _ = _step(ours, batch, seed=99)
    assert not torch.equal(loss_a, loss_c)


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
def test_gradient_checkpointing_gives_the_same_gradients(implementation):
    kwargs = dict(small_config_kwargs("tiny"), attn_implementation=implementation)
    torch.manual_seed(0)
    model = mini_hf_bert.BertForPreTraining(mini_hf_bert.BertConfig(**kwargs)).train()
    batch = _batch("BertForPreTraining", model.config.vocab_size)
    loss_a, grads_a = _step(model, batch)
    model.gradient_checkpointing_enable()
    assert model.is_gradient_checkpointing
    loss_b, grads_b = _step(model, batch)
    assert torch.equal(loss_a, loss_b)
    for name in grads_a:  # the recomputation runs the same ops on the same inputs: bit-identical
        assert torch.equal(grads_a[name], grads_b[name]), name
    model.gradient_checkpointing_disable()
    assert not model.is_gradient_checkpointing
