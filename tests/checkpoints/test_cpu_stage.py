"""The committed CPU training stage (stages/chinese_bert/stage8): a model to continue from,
not the shipped one. Its run.json is the run that made it; its weights are stored in fp16,
computed in fp32, and read by transformers to the same logits."""

from __future__ import annotations

import json
import os

import torch
import transformers

from mini_hf_bert import BertForPreTraining, BertTokenizer, chinese_checkpoint_dir
from mini_hf_bert.parity.compare import FP32_ATOL
from tools.provenance import problems

from ..paths import ROOT

STAGE = os.path.join(ROOT, "stages", "chinese_bert", "stage8")


def _record() -> dict:
    with open(os.path.join(STAGE, "run.json"), encoding="utf-8") as f:
        return json.load(f)


def test_the_stage_is_the_run_its_record_describes():
    record = _record()
    assert problems(record["provenance"]) == [] and record["complete"]
    assert not record["provenance"]["uncommitted_changes"]
    with open(os.path.join(STAGE, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    assert {k: config[k] for k in record["config"]} == record["config"]
    # stage7 continued with a seed of its own (stage2, 8 layers stacked from a 4-layer continuation of the shipped
    # model, then 3 to 6, then 7: the first stage whose parts drew their own batches and masks)
    assert "--init-checkpoint stages/chinese_bert/stage7" in record["provenance"]["command"]
    assert "--seed 9" in record["provenance"]["command"]
    assert config["num_hidden_layers"] == 8
    with open(os.path.join(STAGE, "vocab.txt"), encoding="utf-8") as a, \
            open(os.path.join(chinese_checkpoint_dir(), "vocab.txt"), encoding="utf-8") as b:
        assert a.read() == b.read()
    assert record["evaluations"][-1]["step"] == record["steps"] > 0


def test_it_is_stored_in_fp16_and_both_libraries_read_it_to_the_same_logits():
    from safetensors import safe_open

    with safe_open(os.path.join(STAGE, "model.safetensors"), framework="pt") as f:
        assert {f.get_tensor(k).dtype for k in f.keys()} == {torch.float16}
    ours = BertForPreTraining.from_pretrained(STAGE).eval()
    theirs = transformers.BertForPreTraining.from_pretrained(STAGE).eval()
    assert ours.dtype == theirs.dtype == torch.float32
    assert sum(p.numel() for p in ours.parameters()) == _record()["parameters"]
    encoded = BertTokenizer.from_pretrained(STAGE)("春节是农历的正月初[MASK]。", return_tensors="pt")
    with torch.no_grad():
        mine, reference = ours(**encoded), theirs(**encoded)
    torch.testing.assert_close(mine.prediction_logits, reference.prediction_logits, atol=FP32_ATOL, rtol=0)
    torch.testing.assert_close(mine.seq_relationship_logits, reference.seq_relationship_logits, atol=FP32_ATOL,
                               rtol=0)
