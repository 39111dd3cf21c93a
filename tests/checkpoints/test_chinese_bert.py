"""The Chinese BERT that mini_hf_bert ships (``chinese_checkpoint_dir()``, ``--checkpoint zh``):
the file is the one its recipe made, transformers reads it to the same logits, it fills
ordinary Chinese sentences, and the commands reach it by name and by default."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert import BertForPreTraining, BertTokenizer, chinese_checkpoint_dir, pipeline
from mini_hf_bert.checkpoints.bundled import CHINESE_CHECKPOINT, default_checkpoint_dir
from mini_hf_bert.__main__ import build_parser, main
from mini_hf_bert.commands.arguments import checkpoint_source
from mini_hf_bert.companion.languages import text_language
from mini_hf_bert.parity.compare import FP32_ATOL
from ..paths import FIXTURES, ROOT

#: The issue's targets for the model: top-1 at a [MASK] on held-out text >= 0.35, and
#: top-5 >= 0.60 on held-out sentences with one masked character. The hand-written set
#: below is held to the same two bars.
FILL_MASK_TOP1, FILL_MASK_TOP5 = 0.35, 0.60
#: A trained NSP head: the true next sentence at least this many times as likely as a random
#: one, and held-out accuracy this far above always answering the majority label.
NSP_ODDS, NSP_MARGIN = 5.0, 0.2
SENTENCES = ["北京是中国的[MASK]都。", "今天天[MASK]很好，我们出去走走吧。", "这本书我看[MASK]三遍了。"]


def _recipe_tool():
    spec = importlib.util.spec_from_file_location("pretrain_chinese", os.path.join(ROOT, "tools", "pretrain_chinese.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_model_is_the_one_its_recipe_made():
    path = chinese_checkpoint_dir()
    with open(os.path.join(path, "recipe.json"), encoding="utf-8") as f:
        recipe = json.load(f)
    with open(os.path.join(path, "model.safetensors"), "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == recipe["model_safetensors_sha256"]
    tool = _recipe_tool()
    for phase in tool.PHASES:  # the commands recorded are the tool's, which the docs print
        assert recipe["phases"][phase]["command"] == "python " + " ".join(tool.command(phase, "runs/zh-bert"))
        assert recipe["phases"][phase]["seconds"] > 0
    for phase, stage in tool.STAGES.items():  # a committed stage: the weights the next phase started from
        with open(os.path.join(ROOT, stage, "stage.json"), encoding="utf-8") as f:
            recorded = json.load(f)
        with open(os.path.join(ROOT, stage, "model.safetensors"), "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == recorded["model_safetensors_sha256"], stage
        assert recipe["phases"][phase] == {k: v for k, v in recorded.items() if k != "model_safetensors_sha256"}
        assert any(tool.command(p, "runs/zh-bert")[-2:] == ["--init-checkpoint", stage] for p in tool.PHASES)
    with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    assert config["architectures"] == ["BertForPreTraining"]
    assert (config["num_hidden_layers"], config["hidden_size"], config["num_attention_heads"]) == (4, 256, 4)
    assert sum(os.path.getsize(os.path.join(path, n)) for n in tool.SHIPPED_FILES) <= tool.MAX_SHIPPED_BYTES
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        assert '"mini_hf_bert.checkpoints" = ["chinese_bert/*"]' in f.read()  # so a wheel carries it
    assert os.path.samefile(path, CHINESE_CHECKPOINT)
    from mini_hf_bert.companion import demo

    assert demo.chinese_checkpoint_dir is chinese_checkpoint_dir


def _vocabulary_share_of_unk(tokenizer: BertTokenizer, text: str) -> float:
    ids = tokenizer(text)["input_ids"][1:-1]
    return sum(i == tokenizer.unk_token_id for i in ids) / len(ids)


def test_both_heads_are_trained_and_read_ordinary_chinese():
    path = chinese_checkpoint_dir()
    tokenizer = BertTokenizer.from_pretrained(path)
    text = "我们今天下午去图书馆借了几本关于历史的书，然后在公园里散步。"
    assert _vocabulary_share_of_unk(tokenizer, text) == 0.0
    model = BertForPreTraining.from_pretrained(path)  # strict: every weight, both heads, is in the file
    pair = tokenizer("北京是中国的首都。", "它有三千多年的历史。", return_tensors="pt")
    random_pair = tokenizer("北京是中国的首都。", "这款手机的电池很耐用。", return_tensors="pt")
    with torch.no_grad():
        is_next = [torch.softmax(model(**p).seq_relationship_logits[0], -1)[0].item() for p in (pair, random_pair)]
    # A trained next-sentence head tells the two apart by far (an untrained one gives both
    # about the same), and beats the majority label on held-out pairs by a wide margin. One
    # pair's probability is not held to 0.5: this model gives the true pair 0.475.
    assert is_next[0] > NSP_ODDS * is_next[1], is_next
    with open(os.path.join(path, "recipe.json"), encoding="utf-8") as f:
        held_out = json.load(f)["phases"]["phase2"]["final_evaluation"]
    assert held_out["nsp_accuracy"] >= held_out["nsp_majority_accuracy"] + NSP_MARGIN, held_out


@pytest.mark.parametrize("name", ["BertForPreTraining", "BertForMaskedLM"])
def test_transformers_loads_it_to_the_same_logits(name):
    path = chinese_checkpoint_dir()
    ours = getattr(mini_hf_bert, name).from_pretrained(path)
    theirs = getattr(transformers, name).from_pretrained(path).eval()
    tokenizer = BertTokenizer.from_pretrained(path)
    batch = tokenizer(SENTENCES, ["它有三千多年的历史。"] * len(SENTENCES), padding=True, return_tensors="pt")
    with torch.no_grad():
        mine, reference = ours(**batch), theirs(**batch)
    fields = ["prediction_logits", "seq_relationship_logits"] if name == "BertForPreTraining" else ["logits"]
    for field in fields:
        assert (getattr(mine, field) - getattr(reference, field)).abs().max().item() <= FP32_ATOL, field


def test_transformers_fill_mask_pipeline_agrees_with_ours():
    path = chinese_checkpoint_dir()
    ours, theirs = pipeline("fill-mask", model=path), transformers.pipeline("fill-mask", model=path)
    for mine, reference in zip(ours(SENTENCES, top_k=5), theirs(SENTENCES, top_k=5)):
        assert [r["token_str"] for r in mine] == [r["token_str"] for r in reference]
        assert max(abs(a["score"] - b["score"]) for a, b in zip(mine, reference)) <= FP32_ATOL


def _fill_mask_set() -> list[tuple[str, set[str]]]:
    rows = []
    with open(os.path.join(FIXTURES, "chinese", "fill_mask.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                sentence, answers = line.rstrip("\n").split("\t")
                rows.append((sentence, set(answers)))
    return rows


def test_fill_mask_completes_ordinary_sentences():
    """Sentences written for this test, in no corpus here: the share whose masked character
    comes first, and in the top five, against the issue's bars."""
    from mini_hf_bert.training.corpora import chinese_documents

    rows = _fill_mask_set()
    assert len(rows) >= 30 and all(s.count("[MASK]") == 1 for s, _ in rows)
    read = "".join(s for d in chinese_documents("train") for s in d)
    unread = [s for s, answers in rows if all(s.replace("[MASK]", a) not in read for a in answers)]
    assert len(unread) == len(rows), [s for s, _ in rows if s not in unread]
    assert "中国的首都" not in read  # as the Chinese walk-through says
    fill = transformers.pipeline("fill-mask", model=chinese_checkpoint_dir())
    predictions = fill([s for s, _ in rows], top_k=5)
    top1 = sum(p[0]["token_str"] in answers for p, (_, answers) in zip(predictions, rows)) / len(rows)
    top5 = sum(any(c["token_str"] in answers for c in p) for p, (_, answers) in zip(predictions, rows)) / len(rows)
    assert top1 >= FILL_MASK_TOP1 and top5 >= FILL_MASK_TOP5, (top1, top5)


def test_every_command_that_takes_a_checkpoint_takes_zh():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    taking = {name: [a for a in sub._actions if a.type is checkpoint_source] for name, sub in commands.items()}
    taking = {name: actions for name, actions in taking.items() if actions}
    assert {"demo", "parity", "trace", "tokenize", "attention", "show-instances", "finetune", "pretrain",
            "convert"} <= set(taking), sorted(taking)
    assert checkpoint_source("zh") == chinese_checkpoint_dir()


def test_chinese_text_gets_the_chinese_model_by_default(capsys, tmp_path, monkeypatch):
    assert main(["tokenize", "北京是中国的首都。"]) == 0
    assert "[UNK]" not in capsys.readouterr().out
    assert main(["tokenize", "北京是中国的首都。", "--checkpoint", "zh", "--explain"]) == 0
    explained = capsys.readouterr().out
    shou = BertTokenizer.from_pretrained(chinese_checkpoint_dir()).convert_tokens_to_ids("首")
    assert shou != BertTokenizer.from_pretrained(chinese_checkpoint_dir()).unk_token_id  # 首 has an id of its own
    assert "北 | 京 | 是 | 中 | 国 | 的 | 首 | 都 | 。" in explained and f" {shou} " in explained
    assert main(["tokenize", "Paris is the capital."]) == 0  # English text keeps the English vocabulary
    assert "capital" in capsys.readouterr().out
    main(["trace", "北京是中国的首都。", "--match", "^embeddings$"])
    out = capsys.readouterr().out
    assert f"Checkpoint: {chinese_checkpoint_dir()}" in out and "Tokens [0]: [CLS] 北 京 是 中 国 的 首 都 。 [SEP]" in out
    from mini_hf_bert.companion import visualize

    loaded = []
    original = visualize.BertModel.from_pretrained.__func__
    monkeypatch.setattr(visualize.BertModel, "from_pretrained",
                        classmethod(lambda cls, path, **kw: loaded.append(path) or original(cls, path, **kw)))
    assert main(["attention", "北京是中国的首都。", "--out", str(tmp_path / "a.png")]) == 0
    assert loaded == [chinese_checkpoint_dir()] and os.path.getsize(tmp_path / "a.png") > 0
    commands = build_parser()._subparsers._group_actions[0].choices
    for name in ("attention", "trace", "tokenize"):
        assert "Chinesetextgetszh" in "".join(commands[name].format_help().split()), name  # wrapped anywhere


@pytest.mark.parametrize("text", ["我用iPhone拍照", "我用Python写程序", "He said 是 twice"])
def test_mixed_text_the_english_vocabulary_cannot_spell_gets_the_chinese_model_and_says_so(text, capsys):
    english = BertTokenizer.from_pretrained(default_checkpoint_dir())
    missing = [c for c in text if "\u4e00" <= c <= "\u9fff" and english.convert_tokens_to_ids(c) == english.unk_token_id]
    assert missing  # the English vocabulary would turn these into [UNK]
    assert main(["tokenize", text]) == 0
    first, *table = capsys.readouterr().out.splitlines()
    assert first.startswith("checkpoint: zh, the Chinese BERT") and first.endswith(f"({chinese_checkpoint_dir()})")
    assert "[UNK]" not in "\n".join(table)


def test_mostly_english_text_with_a_chinese_word_says_what_each_model_loses_and_how_to_choose(capsys):
    text = "My favorite food is 饺子."
    assert main(["tokenize", text]) == 0
    first, *table = capsys.readouterr().out.splitlines()
    assert first == (f"checkpoint: zh, the Chinese BERT: all-MiniLM-L6-v2's English vocabulary lacks 饺 of this text. "
                     f"The text is mostly English, and the Chinese vocabulary spells English words letter by letter; "
                     f"--checkpoint en keeps them whole but reads 饺 as [UNK] ({chinese_checkpoint_dir()})")
    assert [row.split()[1] for row in table[2:5]] == ["m", "##y", "f"]  # what the message warns of
    assert main(["tokenize", text, "--checkpoint", "en"]) == 0  # the choice it offers
    first, _, *rows = capsys.readouterr().out.splitlines()
    assert first == f"checkpoint: {default_checkpoint_dir()}, as given"  # a given checkpoint is named too
    tokens = [row.split()[1] for row in rows]
    assert tokens[:7] == ["[CLS]", "my", "favorite", "food", "is", "[UNK]", "子"]


@pytest.mark.parametrize("text,language", [("我用iPhone拍照", "zh"), ("我用Python写程序", "zh"), ("He said 是 twice", "en"),
                                           ("My favorite food is 饺子.", "en"), ("it's 好", "en"), ("好 OK", "zh")])
def test_a_text_is_mostly_chinese_by_characters_against_english_words(text, language, capsys):
    assert text_language(text) == language  # iPhone is one word against four characters, not six letters
    assert main(["tokenize", text]) == 0
    said = capsys.readouterr().out.splitlines()[0]
    assert ("the text is mostly Chinese" in said) == (language == "zh")


def test_en_names_the_english_default_as_zh_names_the_chinese_model():
    assert checkpoint_source("en") == default_checkpoint_dir()
    assert checkpoint_source("zh") == chinese_checkpoint_dir()


def test_english_text_keeps_the_english_model_and_says_so(capsys):
    assert main(["tokenize", "I write programs in Python"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (f"checkpoint: all-MiniLM-L6-v2 (English): the text is not "
                                                       f"Chinese ({default_checkpoint_dir()})")


def test_a_pipeline_takes_zh_as_the_command_line_does():
    answers = pipeline("fill-mask", model="zh")("北京是中国的首[MASK]。")
    assert answers[0]["sequence"].replace(" ", "").startswith("北京是中国的首")


def test_show_instances_on_a_chinese_corpus_uses_the_chinese_vocabulary(capsys):
    assert main(["show-instances", "peoples-daily", "--count", "3"]) == 0
    segments = " ".join(line[3:] for line in capsys.readouterr().out.splitlines() if line.startswith(("A: ", "B: ")))
    tokens = segments.split()
    assert len(tokens) > 100 and sum("[UNK]" in token for token in tokens) <= 0.01 * len(tokens), segments
    assert sum("\u4e00" <= c <= "\u9fff" for c in segments) > 100
    replaced = re.findall(r"~(.+?)~→", segments)  # random replacements come from the vocabulary: no English words
    assert not any(re.search("[A-Za-z]{3}", token) for token in replaced), replaced
