"""Training runs that are killed, interrupted, damaged, doubled or resumed wrongly
(docs/reliability.md). Every run here is a real process: a kill is a real SIGKILL (or a
real SIGINT), sent while a chosen file is being written (``killed_run.py``) or at an
arbitrary moment from outside; ``--resume`` must then end with weights ``torch.equal`` to
an uninterrupted run, the same evaluations in ``log.jsonl``, and the vocabulary untouched.
A refused command must leave the output directory as it found it."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest
import torch
from safetensors.torch import load_file, save_file

import mini_hf_bert
from mini_hf_bert.__main__ import main
from mini_hf_bert.file_utils import RUN_LOCK_NAME
from mini_hf_bert.training.trainer import COMPLETE_MARKER, TRAINER_STATE, latest_checkpoint

from ..paths import FIXTURES

HERE = os.path.dirname(os.path.abspath(__file__))
ZH = os.path.join(FIXTURES, "pretraining", "corpus_zh.txt")
KILLED_RUN = os.path.join(HERE, "killed_run.py")
#: 6 steps, checkpoints at 3 and 6, one evaluation (at 6): a run of a few seconds.
RUN = ["--no-progress", "--max-seq-length", "32", "--dupe-factor", "1", "--eval-every", "100", "--batch-size", "8",
       "--max-steps", "6", "--save-every", "3"]
#: One thread in every run of this module: the same summation order in each process, so
#: runs can be compared bit for bit.
ENV = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")


def _run(out, kill_at="none", signal_name="KILL", extra=()) -> subprocess.CompletedProcess:
    """A run in its own process, killed at ``kill_at`` (``killed_run.py``)."""
    return subprocess.run([sys.executable, KILLED_RUN, kill_at, signal_name, "pretrain", ZH, str(out), *RUN, *extra],
                          capture_output=True, text=True, env=ENV, timeout=600, cwd=HERE)


class _Run:
    def __init__(self, returncode: int, stderr: str) -> None:
        self.returncode, self.stderr = returncode, stderr


def _resume(out, extra=()) -> _Run:
    """``pretrain ... --resume`` in this process, on one thread as the killed runs were (the
    same sums in the same order: equal to a run in a fresh process with OMP_NUM_THREADS=1,
    and seconds faster). Its errors and warnings, as the command line prints them."""
    import contextlib
    import io
    import logging

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setLevel(logging.WARNING)
    threads = torch.get_num_threads()
    logging.getLogger().addHandler(handler)
    torch.set_num_threads(1)
    try:
        with contextlib.redirect_stderr(stream), contextlib.redirect_stdout(io.StringIO()):
            code = main(["pretrain", ZH, str(out), *RUN, *extra, "--resume"])
    finally:
        torch.set_num_threads(threads)
        logging.getLogger().removeHandler(handler)
    return _Run(code, stream.getvalue())


def _weights(directory) -> dict[str, torch.Tensor]:
    return load_file(os.path.join(directory, "model.safetensors"))


def _snapshot(directory) -> dict[str, str]:
    """Every file under ``directory`` (symlinks as their target), by content."""
    found = {}
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            path = os.path.join(root, name)
            relative = os.path.relpath(path, directory)
            if os.path.islink(path):
                found[relative] = "-> " + os.readlink(path)
            elif os.path.isfile(path):
                with open(path, "rb") as f:
                    found[relative] = hashlib.sha256(f.read()).hexdigest()
    return found


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """The uninterrupted run every interrupted one must end equal to."""
    out = tmp_path_factory.mktemp("whole") / "out"
    result = _run(out)
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def _assert_same_end(out, whole) -> None:
    ours, reference = _weights(out), _weights(whole)
    assert ours.keys() == reference.keys()
    assert all(torch.equal(ours[k], reference[k]) for k in reference)
    assert (out / "vocab.txt").read_bytes() == (whole / "vocab.txt").read_bytes()
    assert (out / "log.jsonl").read_text() == (whole / "log.jsonl").read_text()  # the same evaluations, once each
    history = json.loads((out / "training_history.json").read_text())
    assert [s["loss"] for s in history["steps"]] == \
        [s["loss"] for s in json.loads((whole / "training_history.json").read_text())["steps"]]
    assert not (out / RUN_LOCK_NAME).exists()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no staging directory or temporary left


#: (where the kill lands, KILL_AT, signal): the checkpoint at step 6 and the files after it.
KILL_POINTS = [
    ("trainer_state.pt of checkpoint-6, half written", r"\.checkpoint-6\.partial-\w+/trainer_state\.pt$#1", "KILL"),
    ("model.safetensors of checkpoint-6, half written", r"\.checkpoint-6\.partial-\w+/model\.safetensors$#1", "KILL"),
    ("checkpoint-6 complete, its marker written, not yet renamed", "dir:/checkpoint-6#1", "KILL"),
    ("log.jsonl, half written at the step-6 evaluation", r"/out/log\.jsonl$#1", "KILL"),
    ("training_history.json of OUT after checkpoint-6", r"/out/training_history\.json$#2", "KILL"),
    ("the final model.safetensors in OUT, half written", r"/out/model\.safetensors$#1", "KILL"),
    ("Ctrl-C while trainer_state.pt of checkpoint-6 is written", r"\.checkpoint-6\.partial-\w+/trainer_state\.pt$#1", "INT"),
    ("SIGTERM while model.safetensors of checkpoint-6 is written", r"\.checkpoint-6\.partial-\w+/model\.safetensors$#1",
     "TERM"),
]
#: What the command exits with, per signal: killed outright, or 128 + the signal after unwinding.
KILLED_STATUS = {"KILL": -signal.SIGKILL, "INT": 128 + signal.SIGINT, "TERM": 128 + signal.SIGTERM}


@pytest.fixture(scope="module")
def killed_runs(tmp_path_factory):
    """Every run of KILL_POINTS, started at once, each in its own process on one thread:
    the machine's cores run them side by side rather than one after another (each kill
    lands at a file it names, not at a time, so running together changes no outcome).
    {where: (its OUTPUT_DIR, its finished process)}."""
    started = {}
    for where, kill_at, signal_name in KILL_POINTS:
        out = tmp_path_factory.mktemp("killed") / "out"
        started[where] = out, subprocess.Popen(
            [sys.executable, KILLED_RUN, kill_at, signal_name, "pretrain", ZH, str(out), *RUN],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=HERE)
    finished = {}
    for where, (out, process) in started.items():
        stdout, stderr = process.communicate(timeout=600)
        finished[where] = out, subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    return finished


@pytest.mark.parametrize("where,kill_at,signal_name", KILL_POINTS, ids=[p[0] for p in KILL_POINTS])
def test_a_run_killed_while_writing_resumes_to_the_uninterrupted_result(where, kill_at, signal_name, whole,
                                                                        killed_runs):
    out, killed = killed_runs[where]
    assert killed.returncode == KILLED_STATUS[signal_name], killed.stderr[-2000:]
    if signal_name != "KILL":  # it unwound: said so and what to do, released its lock, left no staging behind
        assert killed.stderr.strip().splitlines()[-1] == (
            f"interrupted by SIG{signal_name}: {out} keeps its checkpoints up to the last complete one; the same "
            f"command with --resume continues from it")
        assert not (out / RUN_LOCK_NAME).exists()
        assert not [p for p in out.iterdir() if p.name.startswith(".")]
    assert (out / "checkpoint-3" / COMPLETE_MARKER).is_file()
    vocab = (out / "vocab.txt").read_bytes()
    resumed = _resume(out)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert (out / "vocab.txt").read_bytes() == vocab  # --resume never writes the vocabulary
    _assert_same_end(out, whole)


def test_a_kill_from_outside_at_an_arbitrary_moment_resumes_to_the_same_result(whole, tmp_path):
    """SIGKILL from another process, at a moment after the first checkpoint that this test
    does not choose: wherever it lands, --resume ends where the uninterrupted run does. A kill
    that would come after the run ended tests nothing: the moment is then drawn again, earlier,
    until one lands while the run is running (its exit status says so)."""
    latest = random.Random(os.getpid()).uniform(0, 0.3)
    for attempt in range(6):
        out = tmp_path / f"out-{attempt}"
        process = subprocess.Popen([sys.executable, "-m", "mini_hf_bert", "pretrain", ZH, str(out), *RUN],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        deadline = time.monotonic() + 300
        while not (out / "checkpoint-3").exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(random.Random(attempt).uniform(0, latest))
        process.send_signal(signal.SIGKILL)
        process.wait()
        if process.returncode == -signal.SIGKILL:
            break
        assert process.returncode == 0, f"the run failed before the kill (exit {process.returncode})"
        latest /= 4
    else:
        pytest.fail("every kill came after the run had ended")
    assert (out / "checkpoint-3" / COMPLETE_MARKER).is_file()
    resumed = _resume(out)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    _assert_same_end(out, whole)


def _finished_copy(whole, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(whole, out, symlinks=True)
    return out


def _damage_and_reseal(checkpoint, damage) -> None:
    """Damage a file of a complete checkpoint and record the new sizes in its marker, so the
    damage reaches the reader of that file instead of the marker's size check."""
    damage(checkpoint)
    marker = json.loads((checkpoint / COMPLETE_MARKER).read_text())
    marker["files"] = {name: os.path.getsize(checkpoint / name) for name in marker["files"]}
    (checkpoint / COMPLETE_MARKER).write_text(json.dumps(marker))


def _truncate(name, size):
    def damage(checkpoint):
        with open(checkpoint / name, "r+b") as f:
            f.truncate(size)
    return damage


def _torch_save(value):
    return lambda checkpoint: torch.save(value, checkpoint / TRAINER_STATE)


def _state_with(**changes):
    def damage(checkpoint):
        state = torch.load(checkpoint / TRAINER_STATE, weights_only=True)
        state.update(changes)
        torch.save(state, checkpoint / TRAINER_STATE)
    return damage


DAMAGED_CHECKPOINTS = {
    # damage, whether the marker is resealed, what the warning says about checkpoint-6
    "trainer_state.pt cut to 0 bytes (killed before the fix)": (_truncate(TRAINER_STATE, 0), False,
                                                                "trainer_state.pt: 0 bytes, but"),
    "trainer_state.pt cut to 692 bytes": (_truncate(TRAINER_STATE, 692), False, "trainer_state.pt: 692 bytes, but"),
    "no completion marker (an unfinished or older checkpoint)": (lambda c: os.remove(c / COMPLETE_MARKER), False,
                                                                  "checkpoint_complete.json: missing"),
    "trainer_state.pt cut, marker resealed": (_truncate(TRAINER_STATE, 692), True,
                                              "trainer_state.pt: not a trainer state this trainer can read"),
    "a state without its optimizer": (_torch_save({"step": 6, "scheduler": {}, "config": {}, "history": {}}), True,
                                      "missing or wrong optimizer (dict)"),
    "a state claiming step 10**12": (_state_with(step=10**12), True,
                                     "holds step 1000000000000, but its directory is checkpoint-6"),
    "a state that is a list": (_torch_save([1, 2]), True, "expected a dict of trainer state, found a list"),
    "model.safetensors truncated, marker resealed": (_truncate("model.safetensors", 1000), True,
                                                     "model.safetensors: not a valid safetensors file"),
    "model.safetensors of another shape": (lambda c: save_file({"x": torch.zeros(2)}, c / "model.safetensors"), True,
                                           "model.safetensors: does not fit this model"),
    "a marker that is not JSON": (lambda c: (c / COMPLETE_MARKER).write_text("{"), False, "not a readable marker"),
}


@pytest.mark.parametrize("case", list(DAMAGED_CHECKPOINTS))
def test_resume_skips_a_damaged_checkpoint_by_name_and_goes_back_to_the_last_good_one(case, whole, tmp_path, capsys):
    damage, reseal, fragment = DAMAGED_CHECKPOINTS[case]
    out = _finished_copy(whole, tmp_path)
    checkpoint = out / "checkpoint-6"
    if reseal:
        _damage_and_reseal(checkpoint, damage)
    else:
        damage(checkpoint)
    for name in ("model.safetensors", "log.jsonl", "training_history.json"):
        os.remove(out / name)  # as if killed after checkpoint-6
    resumed = _resume(out)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    warnings = [line for line in resumed.stderr.splitlines() if "skipping" in line]
    assert warnings and str(checkpoint) in warnings[0] and fragment in warnings[0], resumed.stderr[-3000:]
    _assert_same_end(out, whole)


def test_resume_with_no_usable_checkpoint_says_why_in_one_line(whole, tmp_path, capsys):
    out = _finished_copy(whole, tmp_path)
    for step in (3, 6):
        _truncate(TRAINER_STATE, 10)(out / f"checkpoint-{step}")
    before = _snapshot(out)
    assert main(["pretrain", ZH, str(out), *RUN, "--resume"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(err) == 1 and "no complete checkpoint-STEP directory" in err[0] and "trainer_state.pt: 10 bytes" in err[0]
    assert _snapshot(out) == before


def test_a_symlinked_checkpoint_is_refused_and_never_written_through(whole, tmp_path, capsys):
    out = _finished_copy(whole, tmp_path)
    victim = tmp_path / "elsewhere"
    victim.mkdir()
    (victim / "keep.txt").write_text("not ours")
    shutil.rmtree(out / "checkpoint-6")
    (out / "checkpoint-6").symlink_to(victim, target_is_directory=True)
    before = _snapshot(out)
    assert main(["pretrain", ZH, str(out), *RUN, "--resume"]) == 2
    err = capsys.readouterr().err
    assert f"{out / 'checkpoint-6'}: is a symbolic link" in err
    assert _snapshot(out) == before and sorted(os.listdir(victim)) == ["keep.txt"]


def test_a_checkpoint_path_taken_during_a_run_is_moved_aside_not_written_through(tmp_path, caplog):
    """Something appears at checkpoint-STEP while the run is going (a planted symlink):
    the save moves it aside, with a warning naming both paths, and writes a real directory."""
    from mini_hf_bert.training.pretraining import pretraining_task, prepare_pretraining
    from mini_hf_bert.training.trainer import Trainer, TrainingConfig

    setup = prepare_pretraining(ZH, max_seq_length=32, dupe_factor=1)
    out = tmp_path / "out"
    out.mkdir()
    trainer = Trainer(setup.model, pretraining_task(setup, 1), TrainingConfig(str(out), max_steps=2, batch_size=4,
                                                                               progress=False))
    victim = tmp_path / "victim"
    victim.mkdir()
    (out / "checkpoint-1").symlink_to(victim, target_is_directory=True)
    trainer.train_step()
    trainer.save_checkpoint()
    assert os.listdir(victim) == []
    assert (out / "checkpoint-1").is_dir() and not (out / "checkpoint-1").is_symlink()
    assert latest_checkpoint(str(out)) == str(out / "checkpoint-1")
    aside = [p for p in out.iterdir() if p.name.startswith("checkpoint-1.replaced-")]
    assert len(aside) == 1 and aside[0].is_symlink()  # moved, not deleted: it was not ours
    assert any("was already there; moved it aside" in r.message for r in caplog.records)


# ------------------------------------------------------------------ refused before anything is written


def test_resume_into_a_checkpoint_without_runs_keeps_its_vocabulary(tmp_path, minilm_dir, capsys):
    """Finding 4: OUT holds a model and a 30,522-line vocabulary but no checkpoint-STEP:
    --resume is refused, and nothing in OUT changes."""
    out = tmp_path / "out"
    shutil.copytree(minilm_dir, out)
    before = _snapshot(out)
    assert len((out / "vocab.txt").read_text(encoding="utf-8").splitlines()) == 30522
    assert main(["pretrain", "peoples-daily", str(out), "--quick", "--resume", "--no-progress"]) == 2
    assert "--resume, but there is no complete checkpoint-STEP directory" in capsys.readouterr().err
    assert _snapshot(out) == before


@pytest.mark.parametrize("change,fragment", [
    (["--seed", "7"], "--seed: 7 now, 12345 in the checkpoint"),
    (["--max-documents", "100"], "--max-documents: 100 now, None in the checkpoint"),
    (["--learning-rate", "0.01"], "--learning-rate: 0.01 now, 0.001 in the checkpoint"),
    (["CORPUS"], "the corpus is not the one the checkpoint was trained on"),
])
def test_resume_with_other_arguments_is_refused_before_anything_is_written(change, fragment, whole, tmp_path, capsys):
    out = _finished_copy(whole, tmp_path)
    shutil.rmtree(out / "checkpoint-6")
    corpus = ZH
    if change == ["CORPUS"]:  # the same path, other text
        corpus = str(tmp_path / "corpus.txt")
        shutil.copyfile(ZH, corpus)
        with open(corpus, "a", encoding="utf-8") as f:
            f.write("\n新的一段。\n")
        change = []
        marker = json.loads((out / "checkpoint-3" / COMPLETE_MARKER).read_text())
        marker["arguments"]["corpus"] = corpus
        (out / "checkpoint-3" / COMPLETE_MARKER).write_text(json.dumps(marker))  # the run's corpus: this path
    before = _snapshot(out)
    assert main(["pretrain", corpus, str(out), *RUN, *change, "--resume"]) == 2
    err = capsys.readouterr().err
    assert "--resume with other arguments than the run that wrote it" in err and fragment in err, err
    assert _snapshot(out) == before  # vocab.txt included


def test_a_refused_max_steps_writes_nothing_so_the_corrected_command_runs(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["pretrain", ZH, str(out), *RUN, "--max-steps", "0"]) == 2
    assert "max_steps must be a positive int, got 0" in capsys.readouterr().err
    assert not out.exists()
    assert main(["pretrain", ZH, str(out), *RUN, "--max-steps", "2"]) == 0


def _open_when_read(fifo, process: subprocess.Popen) -> int:
    """The write end of ``fifo``, once ``process`` has opened its read end (until then the
    open fails with ENXIO); a failure if the process ends first."""
    import errno

    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            if e.errno != errno.ENXIO:
                raise
        if process.poll() is not None:
            pytest.fail(f"the run ended (exit {process.returncode}) before it reached the barrier: "
                        f"{process.stderr.read()[-2000:]}")
        time.sleep(0.01)


def test_a_second_run_into_the_same_directory_is_refused_with_the_first_ones_pid(tmp_path, capsys):
    """Finding 5: two pretrain runs into one OUT both exited 0 and mixed their logs."""
    out = tmp_path / "out"
    hold = tmp_path / "hold"
    os.mkfifo(hold)
    # The first run waits at its first evaluation's log write (killed_run.py's HOLD), holding
    # its lock with files written, until the pipe is opened and closed: a barrier, so the
    # other two runs meet it running, whatever the machine's speed.
    first = subprocess.Popen([sys.executable, KILLED_RUN, r"/out/log\.jsonl$#1", f"HOLD:{hold}", "pretrain", ZH,
                              str(out), *RUN, "--max-steps", "40", "--save-every", "40", "--eval-every", "10"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=HERE)
    release = _open_when_read(hold, first)
    second = main(["pretrain", ZH, str(out), *RUN, "--resume"])
    third = main(["pretrain", ZH, str(out), *RUN])
    os.close(release)
    err = capsys.readouterr().err
    stdout, stderr = first.communicate(timeout=600)
    assert first.returncode == 0, stderr[-2000:]
    assert second == 2 and f"another run (pid {first.pid}) is writing here" in err
    # a fresh run is refused too: the directory it would start in holds the first run's files
    assert third == 2 and err.count("error:") == 2 and "exists and is not empty; pass --resume" in err
    log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert [r["eval"]["step"] for r in log] == [10, 20, 30, 40]  # one run's evaluations, once each


def test_finetune_holds_its_directory_and_refuses_a_changed_resume(tmp_path, capsys):
    from mini_hf_bert.training.trainer import CHECKPOINT_PREFIX

    checkpoint = tmp_path / "ckpt"
    torch.manual_seed(0)
    config = mini_hf_bert.BertConfig(vocab_size=30522, hidden_size=32, num_attention_heads=2, num_hidden_layers=1,
                                     intermediate_size=64, max_position_embeddings=64)
    mini_hf_bert.BertModel(config).save_pretrained(checkpoint)
    from mini_hf_bert.checkpoints.bundled import default_checkpoint_dir

    shutil.copy(os.path.join(default_checkpoint_dir(), "vocab.txt"), checkpoint)
    out = tmp_path / "out"
    base = ["finetune", "sentiment", str(checkpoint), str(out), "--max-steps", "2", "--save-every", "1",
            "--batch-size", "4", "--max-examples", "40", "--no-progress", "--no-scratch-baseline"]
    assert main(base) == 0
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(CHECKPOINT_PREFIX)) == ["checkpoint-1", "checkpoint-2"]
    before = _snapshot(out)
    assert main([*base, "--resume", "--learning-rate", "0.1"]) == 2
    assert "--learning-rate: 0.1 now, 0.0005 in the checkpoint" in capsys.readouterr().err
    assert _snapshot(out) == before
