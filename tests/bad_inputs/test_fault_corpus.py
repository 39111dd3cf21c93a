"""The fault corpus (``fault_corpus.py``): every case is clear or rightly accepted, none
unclear, unsafe or losing data. The run ends with the corpus's one-line report
(``tests/conftest.py`` prints it): cases tried / clear / rightly accepted / unclear /
unsafe / data loss."""

from __future__ import annotations

import os
import shutil

import pytest
import torch

import mini_hf_bert
from mini_hf_bert.__main__ import main
from tools.testing_utils import write_head_checkpoint
from mini_hf_bert.companion.visualize import AttentionMaps, attention_html

from .fault_corpus import CASES, TRAIN_ARGS, ZH, Accept, Context, parse_markup, run_case, summary_line

#: Each case's outcome, for the report at the end of the session.
OUTCOMES: dict[str, str] = {}


@pytest.fixture(scope="module")
def shared(tmp_path_factory, minilm_dir):
    root = tmp_path_factory.mktemp("fault-corpus")
    good = str(root / "good")
    torch.manual_seed(0)
    config = mini_hf_bert.BertConfig(vocab_size=30522, hidden_size=32, num_attention_heads=2, num_hidden_layers=1,
                                     intermediate_size=64, max_position_embeddings=64)
    mini_hf_bert.BertModel(config).save_pretrained(good)
    shutil.copy(os.path.join(minilm_dir, "vocab.txt"), good)
    trained = str(root / "trained")
    assert main(["pretrain", ZH, trained, *TRAIN_ARGS]) == 0
    mlm = str(root / "mlm")
    mini_hf_bert.BertForMaskedLM(config).save_pretrained(mlm)
    shutil.copy(os.path.join(minilm_dir, "vocab.txt"), mlm)
    notes = {
        "qa": write_head_checkpoint(root / "qa", minilm_dir, "BertForQuestionAnswering"),
        "mlm": mlm,
        # what a page about ordinary tokens is made of: the markup the template makes
        "benign_tags": parse_markup(attention_html(AttentionMaps(["[CLS]", "hello", "[SEP]"], [torch.rand(2, 3, 3)]),
                                                   "hello")).tags,
    }
    return dict(good=good, trained=trained, minilm=minilm_dir, notes=notes, canary=str(root / "CODE-RAN"))


@pytest.mark.parametrize("name", list(CASES))
def test_fault_corpus_case(name, shared, tmp_path):
    ctx = Context(directory=str(tmp_path), good=shared["good"], trained=shared["trained"], minilm=shared["minilm"],
                  canary=shared["canary"], notes=shared["notes"])
    outcome, detail = run_case(CASES[name], ctx)
    OUTCOMES[name] = outcome
    expected = "accepted" if isinstance(CASES[name][1], Accept) else "clear"
    assert outcome == expected, f"{name}: {outcome}: {detail}"


def test_the_report_line_counts_every_kind():
    line = summary_line({"a": "clear", "b": "accepted", "c": "clear", "d": "unsafe"})
    assert line == ("fault corpus: 4 cases tried / 2 clear / 1 rightly accepted / 0 unclear / 1 unsafe / "
                    "0 data loss")


def test_the_corpus_catches_what_it_is_for(tmp_path, shared):
    """The checks themselves can fail: an unclear error, a wrongly accepted input, a
    changed watched file, a ran payload and foreign markup are each reported as such."""
    from .fault_corpus import Refuse

    ctx = Context(directory=str(tmp_path), good=shared["good"], trained=shared["trained"], minilm=shared["minilm"],
                  canary=str(tmp_path / "canary"), notes=shared["notes"])
    assert run_case((lambda c: [][1], Refuse("model.safetensors")), ctx)[0] == "unclear"  # an error naming nothing
    assert run_case((lambda c: None, Refuse("model.safetensors")), ctx)[0] == "unclear"  # accepted, should refuse
    assert run_case((lambda c: open(c.precious("p.txt"), "w").write("changed"), Accept()), ctx)[0] == "data loss"
    ctx.watched.clear()
    assert run_case((lambda c: open(c.canary, "w").close(), Accept()), ctx)[0] == "unsafe"
    os.remove(ctx.canary)

    def page_with_img(c):
        with open(c.path("a.html"), "w") as f:
            f.write("<html><body><img src=x onerror=alert(1)></body></html>")

    from .fault_corpus import _page_is_inert

    assert run_case((page_with_img, Accept(_page_is_inert())), ctx)[0] == "unsafe"
