"""One's own labelled data for ``finetune``: the CSV/TSV and CoNLL readers, the held-out
split, a corpus of bad files (each refused naming the file and the line), and
``finetune`` end to end on files written here."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mini_hf_bert.__main__ import main
from mini_hf_bert.training.labelled_files import (
    LabelledFileError,
    check_held_out_labels,
    check_training_labels,
    read_labelled_file,
    split_held_out,
)

REVIEWS = ("text,label\n"
           "这家店的菜很好吃,pos\n"
           "服务太差了，再也不来,neg\n"
           "\n"
           '"价格便宜, 味道也不错",pos\n'
           '"第一行\n第二行",neg\n'
           "环境干净，服务员热情,pos\n")
ENTITIES = ("-DOCSTART- -X- O O\n\n"
            "北 B-LOC\n京 I-LOC\n很 O\n大 O\n\n"
            "李 NR NP B-PER\n明 NR NP I-PER\n去 VV VP O\n上 NR NP B-LOC\n海 NR NP I-LOC\n")


def write(directory, name: str, text: str | bytes) -> str:
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def test_a_csv_reads_as_classification(tmp_path):
    data = read_labelled_file(write(tmp_path, "r.csv", "\ufeff" + REVIEWS))  # Excel's byte-order mark too
    assert data.kind == "classification" and data.labels == ["neg", "pos"]
    assert data.examples == [("这家店的菜很好吃", None, "pos"), ("服务太差了，再也不来", None, "neg"),
                             ("价格便宜, 味道也不错", None, "pos"), ("第一行\n第二行", None, "neg"),
                             ("环境干净，服务员热情", None, "pos")]
    assert data.lines == [2, 3, 5, 6, 8]  # the blank line and the two-line quoted text counted


def test_the_header_names_the_columns_in_any_order(tmp_path):
    data = read_labelled_file(write(tmp_path, "r.csv", "text,label\n好吃,pos\n难吃,neg\n"))
    assert read_labelled_file(write(tmp_path, "l.csv", "label,text\npos,好吃\nneg,难吃\n")).examples == data.examples
    pairs = read_labelled_file(write(tmp_path, "p.tsv", "label\ttext_pair\tText\n1\t我同意\t他说好\n0\t不\t好\n"))
    assert pairs.examples == [("他说好", "我同意", "1"), ("好", "不", "0")]


def test_a_tsv_has_no_quoting_and_pairs_have_a_middle_column(tmp_path):
    data = read_labelled_file(write(tmp_path, "p.tsv", 'text\ttext_pair\tlabel\n他说"好"\t我同意\t1\n天很蓝\t下雨了\t0\n'
                                                       "甲\t乙\t10\n甲\t丙\t2\n"))
    assert data.examples[0] == ('他说"好"', "我同意", "1")
    assert data.labels == ["0", "1", "2", "10"]  # numbers in numeric order


def test_a_conll_file_reads_as_tagging(tmp_path):
    data = read_labelled_file(write(tmp_path, "e.bio", ENTITIES))
    assert data.kind == "tagging" and data.labels == ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    assert data.examples == [(["北", "京", "很", "大"], ["B-LOC", "I-LOC", "O", "O"]),
                             (["李", "明", "去", "上", "海"], ["B-PER", "I-PER", "O", "B-LOC", "I-LOC"])]
    assert data.lines == [3, 8]
    assert read_labelled_file(write(tmp_path, "e.data", ENTITIES), "conll").examples == data.examples


def test_the_held_out_split_is_seeded_and_partitions_the_file(tmp_path):
    rows = "".join(f"句子{i},{i % 3}\n" for i in range(40))
    data = read_labelled_file(write(tmp_path, "r.csv", "text,label\n" + rows))
    train, held = split_held_out(data, 0.1, seed=7)
    assert len(held) == 4 and len(train) == 36 and sorted(train + held) == sorted(data.examples)
    assert split_held_out(data, 0.1, seed=7) == (train, held) and split_held_out(data, 0.1, seed=8)[1] != held
    two = read_labelled_file(write(tmp_path, "two.csv", "text,label\n好,1\n坏,0\n"))
    assert [len(part) for part in split_held_out(two, 0.9, seed=1)] == [1, 1]  # one of each, whatever the share


#: Bad files: (file name, content, fragment the error must hold). Every error names the file.
BAD_FILES = {
    "empty": ("e.csv", "", "the file is empty"),
    "blank lines only": ("e.bio", "\n \n\t\n", "the file is empty; expected one token and its BIO label"),
    "no header": ("h.csv", "这家店很好,pos\n", "line 1: the header must be text,label"),
    "tsv header with commas": ("h.tsv", "text,label\n好\t1\n", "line 1: the header must be text\\tlabel"),
    "header only": ("h.csv", "text,label\n\n", "a header and no examples"),
    "a missing column": ("m.csv", "text,label\n好,1\n坏\n", "line 3: 1 field(s) where the header has 2"),
    "an unquoted comma": ("c.csv", "text,label\n好,1\n价格便宜,味道好,1\n", "line 3: 3 field(s) where the header has 2 "
                          "(text,label); a text that holds a comma must be in double quotes"),
    "full-width commas": ("w.csv", "text,label\n好，1\n", "line 2: 1 field(s) where the header has 2 (text,label); "
                          "this line separates with the full-width comma '，' (U+FF0C, as a Chinese input method "
                          "types it): a CSV's fields are separated by the ASCII comma ','"),
    "a full-width header": ("x.csv", "text，label\n好，1\n", "line 1: the header must be text,label or "
                            "text,text_pair,label (in any order), got 'text，label'; this line separates with the full-width comma"),
    "an empty text": ("t.csv", "text,label\n好,1\n  ,0\n", "line 3: the text is empty"),
    "an empty label": ("l.csv", "text,label\n好,1\n坏,\n", "line 3: the label is empty"),
    "an empty pair": ("p.csv", "text,text_pair,label\n好,,1\n", "line 2: the text_pair is empty"),
    "an unterminated quote": ("q.csv", 'text,label\n好,1\n"坏,0\n', "unexpected end of data"),
    "GBK bytes": ("g.csv", "text,label\n好,1\n坏,0\n".encode("gbk"), "line 2: not UTF-8 (byte 11: "
                  "invalid start byte); it reads as GBK (GB18030), as Chinese Windows and Excel save it: convert it "
                  "with iconv -f GBK -t UTF-8 "),
    "UTF-8 and GBK mixed": ("m.csv", "text,label\n好,1\n".encode() + "坏,0\n".encode("gbk"), "line 3: not UTF-8 "
                            "(byte 17: invalid start byte); save the file as UTF-8"),
    "bytes that are not GBK either": ("b.csv", b"text,label\n\xff\xff,1\n", "line 2: not UTF-8 (byte 11: invalid "
                                      "start byte); save the file as UTF-8"),
    "a header naming a column twice": ("d.csv", "text,label,label\n好,1,1\n", "line 1: the header must be "
                                       "text,label or text,text_pair,label (in any order), got 'text,label,label'"),
    "one label": ("o.csv", "text,label\n好,1\n妙,1\n", "every example has the label '1'; classification needs two"),
    "a token without a label": ("n.bio", "北 B-LOC\n京\n", "line 2: '京' has no label"),
    "a label that is not BIO": ("b.conll", "北 LOC\n", "line 1: the label 'LOC' is not BIO"),
    "no entity": ("o.bio", "北 O\n京 O\n", "every token is labelled O"),
    "an unknown extension": ("data.json", "{}", "cannot tell its format from its name"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_file_is_refused_naming_the_file_and_the_line(case, tmp_path):
    name, content, fragment = BAD_FILES[case]
    path = write(tmp_path, name, content)
    with pytest.raises(LabelledFileError) as caught:
        check_training_labels(read_labelled_file(path))
    assert str(caught.value).startswith(path) and fragment in str(caught.value)


def test_missing_files_directories_and_formats_are_refused(tmp_path):
    for path, fragment in ((tmp_path / "none.csv", "no such file"), (tmp_path, "cannot be read")):
        with pytest.raises(LabelledFileError, match=fragment):
            read_labelled_file(path, "csv")
    with pytest.raises(LabelledFileError, match="format='json': expected one of csv, tsv, conll"):
        read_labelled_file(write(tmp_path, "r.csv", REVIEWS), "json")


def test_a_dev_file_with_a_label_the_training_file_lacks_is_refused_at_its_line(tmp_path):
    train = read_labelled_file(write(tmp_path, "train.csv", REVIEWS))
    dev = read_labelled_file(write(tmp_path, "dev.csv", "text,label\n好,pos\n\n一般,neutral\n"))
    with pytest.raises(LabelledFileError) as caught:
        check_held_out_labels(train, dev)
    assert str(caught.value) == (f"{dev.path}, line 4: the label 'neutral' never occurs in the training file "
                                 f"{train.path} (its labels: neg, pos)")
    tags = read_labelled_file(write(tmp_path, "dev.bio", "北 B-LOC\n\n张 B-PER\n三 I-ORG\n"))
    with pytest.raises(LabelledFileError, match="dev.bio, line 3: the label 'I-ORG' never occurs"):
        check_held_out_labels(read_labelled_file(write(tmp_path, "t.bio", ENTITIES)), tags)
    with pytest.raises(LabelledFileError, match="dev.bio: a tagging file, but the training file .* classification"):
        check_held_out_labels(train, tags)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(st.binary(max_size=300), st.text(alphabet='好,"\t\n\r -BIO文x1', max_size=200)),
       name=st.sampled_from(["f.csv", "f.tsv", "f.bio"]))
def test_any_bytes_read_or_are_refused_with_a_labelled_file_error(tmp_path, content, name):
    path = write(tmp_path, name, content)
    try:
        data = read_labelled_file(path)
        check_training_labels(data)
    except LabelledFileError as e:
        assert str(e).startswith(path)
    else:
        assert data.examples and len(data.lines) == len(data.examples) and len(data.labels) >= 2


# ------------------------------------------------------------------------------------------
# finetune on one's own files
# ------------------------------------------------------------------------------------------
TRAINING = ["--max-steps", "4", "--batch-size", "4", "--eval-every", "2", "--save-every", "2", "--no-progress"]


def test_finetune_trains_on_ones_own_csv_with_a_dev_file(tiny_checkpoint, tmp_path, capsys):
    rows = "".join(f"第{i}条评论,{'好评' if i % 3 else '差评'}\n" for i in range(30))
    train = write(tmp_path, "train.csv", "text,label\n" + rows)
    dev = write(tmp_path, "dev.csv", "text,label\n很好,好评\n很差,差评\n一般,好评\n")
    out = tmp_path / "out"
    assert main(["finetune", train, tiny_checkpoint, str(out), "--dev", dev, *TRAINING]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{train}: held-out accuracy on 3 examples after 4 steps on 30; {out} holds the best "
                               f"evaluation's weights, step ")
    assert lines[3].split() == [f"{2 / 3:.4f}", "majority", "class"]  # 好评 is the commoner: 2 of the 3 dev rows
    with open(out / "config.json", encoding="utf-8") as f:
        config = json.load(f)
    assert config["id2label"] == {"0": "好评", "1": "差评"}  # sorted: 好 U+597D before 差 U+5DEE
    assert config["architectures"] == ["BertForSequenceClassification"]
    # Resuming over edited data is refused, naming it.
    write(tmp_path, "train.csv", "text,label\n" + rows + "新的一条,好评\n")
    assert main(["finetune", train, tiny_checkpoint, str(out), "--dev", dev, *TRAINING, "--resume"]) == 2
    assert "the data is not the one the checkpoint was trained on" in capsys.readouterr().err


def test_finetune_tags_ones_own_bio_file_holding_a_part_out(tiny_checkpoint, tmp_path, capsys):
    sentences = "".join(f"{a} B-PER\n{b} I-PER\n去 O\n北 B-LOC\n京 I-LOC\n\n" for a, b in ("张三", "李四", "王五") * 4)
    path = write(tmp_path, "people.bio", sentences)
    assert main(["finetune", path, tiny_checkpoint, str(tmp_path / "out"), "--dev-fraction", "0.25",
                 "--no-scratch-baseline", *TRAINING]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{path}: held-out entity_f1 on 3 examples after 4 steps on 9; ")
    with open(tmp_path / "out" / "config.json", encoding="utf-8") as f:
        assert json.load(f)["id2label"] == {"0": "O", "1": "B-LOC", "2": "I-LOC", "3": "B-PER", "4": "I-PER"}


def test_finetune_refuses_what_a_learner_may_mistype(tiny_checkpoint, tmp_path, capsys):
    data = write(tmp_path, "my_labels.csv", "text,label\n好,1\n坏,0\n")
    cases = [
        (["sentiment", data, str(tmp_path / "o1")], f"{data}: labelled data where the checkpoint goes; one's own data "
                                                    f"takes the task's place: finetune {data} CHECKPOINT OUTPUT_DIR"),
        (["sentiment", tiny_checkpoint, str(tmp_path / "o2"), "--dev", data], "a dev file goes with one's own data"),
        ([str(tmp_path / "nothing.csv"), tiny_checkpoint, str(tmp_path / "o3")], "expected sentiment or ner, or a "
                                                                                   "labelled file (no such file)"),
        ([write(tmp_path, "one.csv", "text,label\n好,1\n坏,0\n"), tiny_checkpoint, str(tmp_path / "o4"), "--dev",
          write(tmp_path, "d.csv", "text,label\n中,2\n")], "d.csv, line 2: the label '2' never occurs"),
    ]
    for argv, fragment in cases:
        assert main(["finetune", *argv, "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and fragment in err and err.count("\n") == 1
        assert not os.path.exists(argv[2])  # refused before anything was written


def test_the_example_files_training_md_walks_through(tiny_checkpoint, tmp_path, capsys):
    """docs/examples/: the sizes training.md quotes (12 dev examples; 8 of 32 sentences held
    out), and each file fine-tunes as the page's command runs it."""
    from mini_hf_bert.training.finetuning import task_data
    from ..paths import ROOT

    examples = os.path.join(ROOT, "docs", "examples")
    topics, dev = os.path.join(examples, "my_topics.csv"), os.path.join(examples, "my_topics_dev.csv")
    entities = os.path.join(examples, "my_entities.bio")
    assert len(task_data(topics, 12345, None, dev).held_out) == 12
    assert len(read_labelled_file(entities).examples) == 32
    assert len(task_data(entities, 12345, None, dev_fraction=0.25).held_out) == 8
    for argv in ([topics, tiny_checkpoint, str(tmp_path / "a"), "--dev", dev],
                 [entities, tiny_checkpoint, str(tmp_path / "b"), "--dev-fraction", "0.25"]):
        assert main(["finetune", *argv, "--max-steps", "2", "--batch-size", "16", "--eval-every", "2",
                     "--no-progress", "--no-scratch-baseline"]) == 0
    with open(os.path.join(ROOT, "docs", "training.md"), encoding="utf-8") as f:
        page = f.read()
    assert "(12 examples, from the dev\nfile; 8 sentences, a quarter of the 32)" in page


def test_the_command_line_defaults_are_the_librarys():
    """The CLI writes its defaults out, so that --help loads no torch: they must be the
    library's."""
    from mini_hf_bert.__main__ import build_parser
    from mini_hf_bert.training.finetuning import DEV_FRACTION

    finetune = build_parser()._subparsers._group_actions[0].choices["finetune"]
    assert {a.dest: a.default for a in finetune._actions}["dev_fraction"] == DEV_FRACTION
