"""The conversion tool: Google TF checkpoint -> an HF directory that transformers' own
from_pretrained loads with nothing missing and the same outputs; round trips; the CLI,
HF's script name and arguments, --inspect; the source never modified."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest
import torch
import transformers

import mini_hf_bert
from mini_hf_bert.checkpoints.convert import convert, infer_architecture, inspect_checkpoint
from mini_hf_bert.parity.compare import FP32_ATOL, max_abs_diff
from ..paths import FIXTURES, ROOT

TF_FIXTURES = os.path.join(FIXTURES, "tf")
GOOGLE_DIR = os.path.join(TF_FIXTURES, "bert_pretraining")
INPUTS = dict(input_ids=torch.tensor([[2, 7, 12, 19, 3, 25, 30, 3]]), token_type_ids=torch.tensor([[0, 0, 0, 0, 0, 1, 1, 1]]))


def _digest(directory: str) -> dict[str, str]:
    return {f: hashlib.sha256(open(os.path.join(directory, f), "rb").read()).hexdigest() for f in sorted(os.listdir(directory))}


def test_converted_directory_loads_in_transformers_with_nothing_missing(tmp_path):
    before = _digest(GOOGLE_DIR)
    report = convert(GOOGLE_DIR, tmp_path / "hf", progress=False)
    assert _digest(GOOGLE_DIR) == before  # the source is only read
    assert report.architecture == "BertForPreTraining" and report.skipped_training_state == 93
    assert sorted(os.listdir(tmp_path / "hf")) == [
        "config.json", "model.safetensors", "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt"]
    theirs, info = transformers.BertForPreTraining.from_pretrained(tmp_path / "hf", output_loading_info=True, dtype=torch.float32)
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"]
    ours = mini_hf_bert.BertForPreTraining.from_pretrained(GOOGLE_DIR)
    with torch.no_grad():
        a, b = ours(**INPUTS), theirs.eval()(**INPUTS)
    assert max_abs_diff(a.prediction_logits, b.prediction_logits) <= FP32_ATOL
    assert max_abs_diff(a.seq_relationship_logits, b.seq_relationship_logits) <= FP32_ATOL


def test_round_trip_google_to_hf_to_mini_is_bit_identical(tmp_path):
    convert(GOOGLE_DIR, tmp_path / "hf", progress=False)
    direct = mini_hf_bert.BertForPreTraining.from_pretrained(GOOGLE_DIR)
    through_hf = mini_hf_bert.BertForPreTraining.from_pretrained(tmp_path / "hf")
    for (n1, p1), (n2, p2) in zip(direct.state_dict().items(), through_hf.state_dict().items()):
        assert n1 == n2 and torch.equal(p1, p2), n1
    convert(tmp_path / "hf", tmp_path / "again", progress=False)  # an HF directory converts too
    again = mini_hf_bert.BertForPreTraining.from_pretrained(tmp_path / "again")
    assert all(torch.equal(a, b) for a, b in zip(direct.state_dict().values(), again.state_dict().values()))


def test_existing_destination_is_not_clobbered(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="out: exists and is not empty"):
        convert(GOOGLE_DIR, tmp_path / "out", progress=False)
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"
    convert(GOOGLE_DIR, tmp_path / "out", overwrite=True, progress=False)
    assert not (tmp_path / "out" / "keep.txt").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".converting-")]  # no staging left behind


def test_architecture_is_inferred_from_the_names():
    assert infer_architecture({"bert.pooler.dense.weight", "cls.predictions.bias", "cls.seq_relationship.weight"}) == "BertForPreTraining"
    assert infer_architecture({"bert.embeddings.word_embeddings.weight", "cls.predictions.bias"}) == "BertForMaskedLM"
    assert infer_architecture({"bert.pooler.dense.weight", "classifier.weight"}) == "BertForSequenceClassification"
    assert infer_architecture({"qa_outputs.weight"}) == "BertForQuestionAnswering"
    assert infer_architecture({"embeddings.word_embeddings.weight"}) == "BertModel"


def test_inspect_lists_every_tensor_and_where_it_goes():
    rows = {r.name: r for r in inspect_checkpoint(GOOGLE_DIR)}
    assert len(rows) == 46 + 93
    assert rows["bert/encoder/layer_0/attention/self/query/kernel"].maps_to == "bert.encoder.layer.0.attention.self.query.weight (transposed)"
    assert rows["bert/encoder/layer_0/attention/self/query/kernel"].shape == (16, 16)
    assert rows["global_step"].maps_to == "skipped (training state)" and rows["global_step"].dtype == "int64"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_cli_convert_and_inspect(tmp_path):
    result = _run("-m", "mini_hf_bert", "convert", os.path.join(TF_FIXTURES, "bert_model.ckpt.zip"), str(tmp_path / "out"), "--inspect")
    assert result.returncode == 0, result.stderr
    assert "cls/seq_relationship/output_weights" in result.stdout and "cls.seq_relationship.weight" in result.stdout
    assert "wrote " in result.stdout and "BertForPreTraining" in result.stdout
    assert os.path.isfile(tmp_path / "out" / "model.safetensors")
    result = _run("-m", "mini_hf_bert", "convert", str(tmp_path / "missing"), str(tmp_path / "x"))
    assert result.returncode == 2 and result.stderr.startswith("error: ") and "Traceback" not in result.stderr


@pytest.mark.parametrize("dump", ["pytorch_model.bin", "hf_dir"])
def test_hf_script_arguments(tmp_path, dump):
    result = _run(os.path.join("tools", "convert_bert_original_tf_checkpoint_to_pytorch.py"),
                  "--tf_checkpoint_path", os.path.join(GOOGLE_DIR, "bert_model.ckpt"),
                  "--bert_config_file", os.path.join(GOOGLE_DIR, "bert_config.json"),
                  "--pytorch_dump_path", str(tmp_path / dump))
    assert result.returncode == 0, result.stderr
    if dump.endswith(".bin"):
        state = torch.load(tmp_path / dump, weights_only=True)
        reference = mini_hf_bert.BertForPreTraining.from_pretrained(GOOGLE_DIR).state_dict()
        assert state.keys() == reference.keys() and all(torch.equal(state[k], reference[k]) for k in state)
    else:
        assert transformers.BertForPreTraining.from_pretrained(tmp_path / dump) is not None


# ------------------------------------------------ the source is never altered


def _tree_digest(root) -> dict[str, str]:
    """Every file under ``root`` (not following symlinked directories), by content."""
    out = {}
    for directory, _, files in os.walk(root):
        for name in files:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                out[os.path.relpath(path, root)] = hashlib.sha256(open(path, "rb").read()).hexdigest()
    return out


@pytest.fixture
def google_copy(tmp_path):
    """A private copy of the Google fixture, at tmp/area/src, with a bystander file beside it."""
    import shutil

    area = tmp_path / "area"
    shutil.copytree(GOOGLE_DIR, area / "src")
    (area / "bystander.txt").write_text("not part of the checkpoint")
    return area / "src"


def _arrangements(src):
    """(SRC, DST) pairs where writing DST would destroy the source: DST is SRC, holds it, lies
    inside it -- directly, and through symlinks on either side."""
    area = src.parent
    os.symlink(src, area / "link-to-src")
    os.symlink(area, area.parent / "link-to-area")
    prefix = src / "bert_model.ckpt"
    return {
        "dst is src": (src, src),
        "dst holds src": (src, area),
        "dst inside src": (src, src / "out"),
        "dst deep inside src": (src, src / "a" / "b"),
        "dst is a symlink to src": (src, area / "link-to-src"),
        "dst inside src through a symlink": (src, area / "link-to-src" / "out"),
        "src through a symlink, dst is its target": (area / "link-to-src", src),
        "dst holds src, through a symlinked parent": (src, area.parent / "link-to-area"),
        "prefix: dst is its directory": (prefix, src),
        "prefix: dst is its data file": (prefix, src / "bert_model.ckpt.data-00000-of-00001"),
        "index file: dst holds it": (src / "bert_model.ckpt.index", area),
        "dst is relative and equals src": (os.path.relpath(src), os.path.relpath(src)),
    }


@pytest.mark.parametrize("case", [
    "dst is src", "dst holds src", "dst inside src", "dst deep inside src",
    "dst is a symlink to src", "dst inside src through a symlink", "src through a symlink, dst is its target",
    "dst holds src, through a symlinked parent", "prefix: dst is its directory", "prefix: dst is its data file",
    "index file: dst holds it", "dst is relative and equals src",
])
def test_convert_refuses_any_destination_that_would_destroy_its_source(google_copy, case):
    area = google_copy.parent
    before = _tree_digest(area)
    src, dst = _arrangements(google_copy)[case]
    with pytest.raises(FileExistsError, match=r"(is|holds|lies inside) the source"):
        convert(src, dst, overwrite=True, progress=False)
    assert _tree_digest(area) == before
    assert not [p for p in area.rglob(".converting-*")] and not [p for p in area.rglob(".replaced-*")]


def test_cli_refuses_dst_equal_to_src_and_leaves_everything(google_copy):
    area = google_copy.parent
    before = _tree_digest(area)
    for dst in (google_copy, area, google_copy / "sub"):
        result = _run("-m", "mini_hf_bert", "convert", str(google_copy), str(dst), "--overwrite", "--no-progress")
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert result.stderr.startswith(f"error: {dst}: ") and "the source" in result.stderr
    assert _tree_digest(area) == before


def test_config_file_inside_dst_is_refused(google_copy, tmp_path):
    import shutil

    (tmp_path / "out").mkdir()
    shutil.copy(google_copy / "bert_config.json", tmp_path / "out" / "my_config.json")
    with pytest.raises(FileExistsError, match="holds the source .*my_config.json"):
        convert(google_copy / "bert_model.ckpt", tmp_path / "out", config_file=tmp_path / "out" / "my_config.json",
                overwrite=True, progress=False)
    assert (tmp_path / "out" / "my_config.json").is_file()


def test_a_failed_conversion_leaves_the_old_destination_whole(google_copy, tmp_path, monkeypatch):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("old output")

    def fail_half_way(self, directory, **kwargs):
        open(os.path.join(directory, "config.json"), "w").close()
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(mini_hf_bert.BertForPreTraining, "save_pretrained", fail_half_way)
    with pytest.raises(OSError, match="No space left"):
        convert(google_copy, tmp_path / "out", overwrite=True, progress=False)
    assert sorted(os.listdir(tmp_path / "out")) == ["keep.txt"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_failed_swap_puts_the_old_destination_back(google_copy, tmp_path, monkeypatch):
    """Where the system cannot swap two directories in one step (not Linux), the old
    destination is renamed aside first; a failed second rename puts it back."""
    import mini_hf_bert.file_utils as file_utils

    monkeypatch.setattr(file_utils, "_exchange", lambda a, b: False)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("old output")
    real_rename = os.rename

    def rename(a, b):
        if os.path.basename(a).startswith(".converting-"):
            raise OSError(18, "Invalid cross-device link")
        return real_rename(a, b)

    monkeypatch.setattr(file_utils.os, "rename", rename)
    with pytest.raises(OSError, match="cross-device"):
        convert(google_copy, tmp_path / "out", overwrite=True, progress=False)
    assert (tmp_path / "out" / "keep.txt").read_text() == "old output"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_symlink_destination_is_replaced_not_followed(google_copy, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "keep.txt").write_text("not ours to delete")
    os.symlink(tmp_path / "elsewhere", tmp_path / "out")
    convert(google_copy, tmp_path / "out", overwrite=True, progress=False)
    assert not os.path.islink(tmp_path / "out") and (tmp_path / "out" / "model.safetensors").is_file()
    assert (tmp_path / "elsewhere" / "keep.txt").read_text() == "not ours to delete"


def test_output_has_the_permissions_of_a_plain_mkdir(google_copy, tmp_path):
    old = os.umask(0o027)
    try:
        convert(google_copy, tmp_path / "out", progress=False)
    finally:
        os.umask(old)
    assert (os.stat(tmp_path / "out").st_mode & 0o777) == 0o750
    for name in os.listdir(tmp_path / "out"):
        assert (os.stat(tmp_path / "out" / name).st_mode & 0o777) == 0o640, name


def test_hf_script_refuses_to_write_over_its_source(google_copy):
    before = _tree_digest(google_copy.parent)
    for dump in (google_copy, google_copy.parent, google_copy / "bert_model.ckpt.index.bin"):
        result = _run(os.path.join("tools", "convert_bert_original_tf_checkpoint_to_pytorch.py"),
                      "--tf_checkpoint_path", str(google_copy), "--bert_config_file", str(google_copy / "bert_config.json"),
                      "--pytorch_dump_path", str(dump))
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert "the source" in result.stderr.splitlines()[-1]
    assert _tree_digest(google_copy.parent) == before


# ------------------------------------------------------- tokenizer settings kept


CASED_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "Hello", "hello", "World", "world", "!", "##s"]


@pytest.mark.parametrize("name,flag,lower", [
    ("cased_L-2_H-16_A-4", None, False),        # Google's release name says cased
    ("uncased_L-2_H-16_A-4", None, True),
    ("my_model", None, False),                  # no known name: the vocabulary is cased
    ("uncased_L-2_H-16_A-4", False, False),     # the flag wins
    ("cased_L-2_H-16_A-4", True, True),
])
def test_casing_is_recorded_so_both_tokenizers_agree_with_the_original(tmp_path, name, flag, lower):
    import shutil

    src = tmp_path / name
    shutil.copytree(GOOGLE_DIR, src)
    (src / "vocab.txt").write_text("\n".join(CASED_VOCAB) + "\n")
    report = convert(src, tmp_path / "out", progress=False, do_lower_case=flag)
    assert report.do_lower_case is lower
    text = "Hello World!"
    expected = ["hello", "world", "!"] if lower else ["Hello", "World", "!"]
    theirs = transformers.AutoTokenizer.from_pretrained(tmp_path / "out")
    ours = mini_hf_bert.BertTokenizer.from_pretrained(tmp_path / "out")
    assert theirs.tokenize(text) == ours.tokenize(text) == expected
    assert theirs(text)["input_ids"] == ours(text)["input_ids"]
    assert ours.model_max_length == theirs.model_max_length == 32  # the checkpoint's max_position_embeddings


def test_hf_source_tokenizer_files_are_copied_as_they_are(tmp_path, minilm_dir):
    convert(minilm_dir, tmp_path / "out", progress=False)
    for name in ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.json"):
        if os.path.isfile(os.path.join(minilm_dir, name)):
            assert open(os.path.join(minilm_dir, name), "rb").read() == (tmp_path / "out" / name).read_bytes(), name
