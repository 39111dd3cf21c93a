"""Issue 36's "unclear" cases: each input that used to end in a deep error, a silent
acceptance or a refusal naming nothing now ends in one error (or warning) that names the
file or argument and the problem, with nothing written or left behind."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys

import pytest

import mini_hf_bert
from mini_hf_bert import modeling_bert_fast
from mini_hf_bert.checkpoints import CheckpointError
from mini_hf_bert.tokenization_utils_base import TokenizerFileError

from ..conftest import small_config_kwargs
from .test_resource_bounds import REFUSAL_SECONDS, _within

COMMIT_A, COMMIT_B = "a" * 40, "b" * 40


def _cache_repo(cache, name: str, commit: str) -> str:
    """A hub-cache repo ``org/name`` whose refs/main names ``commit``."""
    repo = cache / f"models--org--{name}"
    model = mini_hf_bert.BertModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny")))
    model.save_pretrained(repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    return repo


# ------------------------------------------------------------------ hub-cache paths

@pytest.mark.parametrize("revision", ["../../models--org--other/refs/main", "../other", "/etc/passwd", "a/../b",
                                      "refs\\main", ""])
def test_a_revision_that_would_leave_refs_is_refused(tmp_path, revision):
    _cache_repo(tmp_path, "one", COMMIT_A)
    _cache_repo(tmp_path, "other", COMMIT_B)
    for load in (mini_hf_bert.BertModel.from_pretrained, mini_hf_bert.BertTokenizer.from_pretrained):
        with pytest.raises(ValueError, match=rf"revision={revision!r}: not a branch, tag or commit name".replace("\\", "\\\\")):
            load("org/one", revision=revision, cache_dir=tmp_path, local_files_only=True)


def test_a_ref_holding_dot_dot_is_refused_naming_the_ref_file(tmp_path):
    repo = _cache_repo(tmp_path, "one", COMMIT_A)
    (repo / "refs" / "main").write_text("..")
    with pytest.raises(CheckpointError, match=rf"{repo / 'refs' / 'main'}: holds '..', not a commit hash"):
        mini_hf_bert.BertModel.from_pretrained("org/one", cache_dir=tmp_path, local_files_only=True)


def test_a_snapshot_symlinked_outside_snapshots_is_refused(tmp_path):
    repo = _cache_repo(tmp_path, "one", COMMIT_A)
    other = _cache_repo(tmp_path, "other", COMMIT_B)
    shutil.rmtree(repo / "snapshots" / COMMIT_A)
    os.symlink(other / "snapshots" / COMMIT_B, repo / "snapshots" / COMMIT_A)
    with pytest.raises(CheckpointError, match=rf"{repo / 'snapshots' / COMMIT_A}: leads outside"):
        mini_hf_bert.BertModel.from_pretrained("org/one", cache_dir=tmp_path, local_files_only=True)


def test_revision_none_reads_main_as_transformers_does(tmp_path):
    _cache_repo(tmp_path, "one", COMMIT_A)
    model = mini_hf_bert.BertModel.from_pretrained("org/one", revision=None, cache_dir=tmp_path, local_files_only=True)
    assert model.config.hidden_size == small_config_kwargs("tiny")["hidden_size"]


# ------------------------------------------------------------------ tokenizer files

def _tokenizer_dir(tmp_path, minilm_dir) -> str:
    directory = tmp_path / "tok"
    mini_hf_bert.BertTokenizer.from_pretrained(minilm_dir, do_lower_case=False).save_pretrained(directory)
    return directory


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are a POSIX feature")
def test_a_named_pipe_vocabulary_is_refused_by_name_without_blocking(tmp_path, minilm_dir):
    directory = _tokenizer_dir(tmp_path, minilm_dir)
    (directory / "vocab.txt").unlink()
    os.mkfifo(directory / "vocab.txt")
    raised = _within(REFUSAL_SECONDS, lambda: mini_hf_bert.AutoTokenizer.from_pretrained(directory))
    assert isinstance(raised, TokenizerFileError), raised
    assert str(raised).startswith(f"{directory / 'vocab.txt'}: is a named pipe, not a regular file")


def test_a_dangling_tokenizer_config_symlink_is_refused_not_ignored(tmp_path, minilm_dir):
    """Ignored, a cased model's tokenizer would lower-case its text."""
    directory = _tokenizer_dir(tmp_path, minilm_dir)
    (directory / "tokenizer_config.json").unlink()
    os.symlink("../../blobs/0123abcd", directory / "tokenizer_config.json")
    with pytest.raises(TokenizerFileError, match=rf"^{directory / 'tokenizer_config.json'}: is a symlink to "
                                                 r"\.\./\.\./blobs/0123abcd, which does not exist"):
        mini_hf_bert.BertTokenizer.from_pretrained(directory)


# ------------------------------------------------------------------ convert into a symlink

def test_convert_into_a_symlink_says_so_and_leaves_it(tmp_path, minilm_dir):
    (tmp_path / "empty").mkdir()
    os.symlink(tmp_path / "empty", tmp_path / "link")
    result = subprocess.run([sys.executable, "-m", "mini_hf_bert", "convert", minilm_dir, str(tmp_path / "link")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {tmp_path / 'link'}: is a symlink (to {tmp_path / 'empty'}), which is never written "
                      f"through; pass overwrite=True (--overwrite) to replace the link itself"]
    assert "appeared" not in result.stderr
    assert os.path.islink(tmp_path / "link") and os.listdir(tmp_path / "empty") == []
    assert sorted(os.listdir(tmp_path)) == ["empty", "link"]  # no staging directory left


# ------------------------------------------------------------------ the fast path's options

@pytest.mark.parametrize("options, error, message", [
    ({"compile": "no"}, TypeError, r"using_options: compile must be True or False, got 'no'"),
    ({"unpad": 0}, TypeError, r"using_options: unpad must be True or False, got 0"),
    ({"complie": True}, TypeError, r"using_options: no option 'complie'; the options are \["),
    ({"route": "fastest"}, ValueError, r"route='fastest' is not one of"),
])
def test_using_options_refuses_what_is_not_an_option(options, error, message):
    before = modeling_bert_fast.current_options()
    with pytest.raises(error, match=message):
        with modeling_bert_fast.using_options(**options):
            pass
    assert modeling_bert_fast.current_options() is before


def test_compile_with_an_unwritable_cache_falls_back_as_documented(tmp_path):
    """torch._inductor's config makes its cache directory on import: where that fails,
    the fast path says so once and runs uncompiled, as docs/performance.md promises."""
    cache = tmp_path / "cache"
    cache.write_text("a file where the cache directory should be")
    script = (
        "import logging, torch, mini_hf_bert\n"
        "from mini_hf_bert import modeling_bert_fast\n"
        "logging.basicConfig(level=logging.WARNING, format='%(message)s')\n"
        f"config = mini_hf_bert.BertConfig(**{small_config_kwargs('tiny')!r}, attn_implementation='fast')\n"
        "model = mini_hf_bert.BertModel(config).eval()\n"
        "ids = torch.randint(5, 90, (2, 7))\n"
        "with torch.no_grad(), modeling_bert_fast.using_options(compile=True):\n"
        "    out = model(ids).last_hidden_state\n"
        "print('shape', tuple(out.shape))\n"
    )
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache / "inductor"), TRITON_CACHE_DIR=str(cache / "triton"))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert "shape (2, 7, " in result.stdout
    assert "option compile: torch.compile cannot start (NotADirectoryError" in result.stderr, result.stderr
    assert "running uncompiled" in result.stderr


# ------------------------------------------------------------------ trust_remote_code

def test_trust_remote_code_is_taken_alike_by_every_loader(minilm_dir, caplog):
    loaders = {
        "AutoModel": lambda: mini_hf_bert.AutoModel.from_pretrained(minilm_dir, trust_remote_code=True),
        "AutoConfig": lambda: mini_hf_bert.AutoConfig.from_pretrained(minilm_dir, trust_remote_code=True),
        "AutoTokenizer": lambda: mini_hf_bert.AutoTokenizer.from_pretrained(minilm_dir, trust_remote_code=True),
        "pipeline": lambda: mini_hf_bert.pipeline("feature-extraction", model=minilm_dir, trust_remote_code=True),
    }
    for name, load in loaders.items():
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            load()
        warnings = [r.getMessage() for r in caplog.records if "trust_remote_code" in r.getMessage()]
        assert len(warnings) == 1 and "has no effect: mini_hf_bert never runs code from a checkpoint" in warnings[0], \
            (name, warnings)
    for load in (mini_hf_bert.AutoConfig.from_pretrained, mini_hf_bert.AutoTokenizer.from_pretrained):
        with pytest.raises(TypeError, match=r"trust_remote_code must be True or False, got 'yes'"):
            load(minilm_dir, trust_remote_code="yes")


# ------------------------------------------------------------------ a run killed in its first checkpoint

def _killed_in_first_checkpoint(out) -> None:
    """What a pretrain killed while staging checkpoint-1 leaves."""
    staging = out / ".checkpoint-1.partial-0123abcd"
    staging.mkdir(parents=True)
    (staging / "config.json").write_text("{}")
    (out / "log.jsonl").write_text('{"eval": {"step": 1, "loss": 9.0}}\n')
    (out / ".trainer_state.pt.0123abcd.tmp").write_bytes(b"half")


def test_a_run_killed_in_its_first_checkpoint_is_not_a_circle(tmp_path, capsys):
    from mini_hf_bert.__main__ import main
    from mini_hf_bert.training.trainer import check_output_dir, output_directory
    out = tmp_path / "out"
    _killed_in_first_checkpoint(out)
    before = sorted(os.listdir(out))
    assert main(["pretrain", "peoples-daily", str(out), "--quick", "--resume", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--resume, but there is no complete checkpoint-STEP directory to resume from; nothing complete was saved, " \
           "so run the same command without --resume to start over in this directory" in err
    assert sorted(os.listdir(out)) == before  # the refusal wrote and removed nothing
    check_output_dir(str(out), [], resume=False)  # the way out it offers is open
    with output_directory(str(out), [], resume=False):
        assert sorted(os.listdir(out)) == [".mini_hf_bert-run.lock", "log.jsonl"]  # the killed run's unfinished writes gone


def test_a_run_stopped_by_a_full_disk_before_its_first_checkpoint_can_start_over(tmp_path):
    """A full disk at the first checkpoint leaves the run's log.jsonl alone (the staging is
    removed with the error): the same command starts over; someone else's log.jsonl is
    still refused."""
    from mini_hf_bert.training.trainer import check_output_dir
    out = tmp_path / "out"
    out.mkdir()
    (out / "log.jsonl").write_text('{"eval": {"step": 30, "mlm_accuracy": 0.1}}\n')
    check_output_dir(str(out), [], resume=False)
    (out / "log.jsonl").write_text('{"level": "info", "message": "my own log"}\n')
    with pytest.raises(FileExistsError, match="exists and is not empty; pass --resume"):
        check_output_dir(str(out), [], resume=False)


def test_a_directory_with_anything_else_is_still_refused(tmp_path):
    from mini_hf_bert.training.trainer import check_output_dir
    out = tmp_path / "out"
    _killed_in_first_checkpoint(out)
    (out / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="exists and is not empty; pass --resume"):
        check_output_dir(str(out), [], resume=False)
