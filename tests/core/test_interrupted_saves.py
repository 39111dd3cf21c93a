"""A save stopped part-way, into a directory that holds another model (docs/reliability.md,
"Under load"): after Ctrl-C, SIGTERM or a kill at any moment, the directory loads as the
old model whole or the new one whole, or is refused with an error naming it. Never as a
mixture.

Models A and B have the same shapes and different weights and ``layer_norm_eps``, so A's
config.json beside B's weights (or half of A's shards and half of B's) would load without
an error: each load is compared with both, tensor for tensor and config for config. The moments are not timed: the save is stopped
right after each of its renames in turn (every ``os.replace`` it makes), which is where a
signal changes what the directory holds. ``tools/interrupt_soak.py`` adds interrupts at
random moments, from outside.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

import mini_hf_bert
from mini_hf_bert.checkpoints import CheckpointError
from mini_hf_bert.file_utils import MOVING_IN_MARKER, SAVING_NAME
from mini_hf_bert.tokenization_utils_base import TokenizerFileError

from tools.interrupt_soak import model as _model
from tools.interrupt_soak import tokenizers, which_model, which_tokenizer

from ..paths import ROOT

#: Layouts: one file, and shards (an index and several files, 30 KB each).
LAYOUTS = {"one file": "50GB", "sharded": "30KB"}


def _which(directory) -> str:
    """"A" or "B": the model ``directory`` loads as, exactly; fails on a mixture."""
    name = which_model(str(directory), [_model(1), _model(2)])
    assert name != "mixture", f"{directory} loads as neither model: a mixture"
    return name


def _leftovers(directory) -> list[str]:
    return [n for n in os.listdir(directory) if n == MOVING_IN_MARKER or SAVING_NAME.fullmatch(n)]


def _renames_in(save) -> int:
    """How many ``os.replace`` calls ``save`` makes."""
    count = 0
    real = os.replace

    def counting(*args, **kwargs):
        nonlocal count
        count += 1
        return real(*args, **kwargs)

    os.replace = counting
    try:
        save()
    finally:
        os.replace = real
    return count


def _stopped_after(stop, save, send=lambda: signal.raise_signal(signal.SIGINT)) -> None:
    """Run ``save``, signalling this process right after one of its ``os.replace`` calls:
    the ``stop``-th, or the first whose destination ``stop(destination)`` accepts."""
    count = 0
    real = os.replace

    def signalling(source, destination, *args, **kwargs):
        nonlocal count
        real(source, destination, *args, **kwargs)
        count += 1
        if (count == stop) if isinstance(stop, int) else stop(os.fspath(destination)):
            send()

    os.replace = signalling
    try:
        save()
    finally:
        os.replace = real


@pytest.mark.usefixtures("python_ctrl_c")
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_ctrl_c_after_any_rename_leaves_the_old_model_or_the_new_one_whole(layout, tmp_path):
    models = {"A": _model(1), "B": _model(2)}
    directory = tmp_path / "model"
    models["A"].save_pretrained(directory, max_shard_size=LAYOUTS[layout])
    def save_b_for_counting():
        models["B"].save_pretrained(tmp_path / "count", max_shard_size=LAYOUTS[layout])

    save_b_for_counting()  # makes the directory
    renames = _renames_in(save_b_for_counting)  # into an existing one, as below
    outcomes = []
    for stop in range(1, renames + 1):
        models["A"].save_pretrained(directory, max_shard_size=LAYOUTS[layout])
        with pytest.raises(KeyboardInterrupt):  # answered as Ctrl-C, at once or when the renames are done
            _stopped_after(stop, lambda: models["B"].save_pretrained(directory, max_shard_size=LAYOUTS[layout]))
        outcomes.append(_which(directory))
        assert not _leftovers(directory), (stop, _leftovers(directory))
    # stopped before its files moved in: A; once they had begun to: B, all of it
    assert outcomes[0] == "A" and outcomes[-1] == "B" and outcomes == sorted(outcomes), outcomes


@pytest.mark.usefixtures("python_ctrl_c")
def test_ctrl_c_inside_a_tokenizer_save_leaves_one_save_s_files(tmp_path):
    """vocab.txt, tokenizer_config.json, special_tokens_map.json and tokenizer.json of one
    save: a lower-casing tokenizer's config beside a cased one's longer vocabulary would load."""
    new, old = tokenizers(str(tmp_path))  # cased with one token more; uncased
    directory = tmp_path / "tokenizer"
    new.save_pretrained(tmp_path / "count")  # makes the directory
    renames = _renames_in(lambda: new.save_pretrained(tmp_path / "count"))  # into an existing one, as below
    seen = []
    for stop in range(1, renames + 1):
        old.save_pretrained(directory)
        with pytest.raises(KeyboardInterrupt):
            _stopped_after(stop, lambda: new.save_pretrained(directory))
        seen.append(which_tokenizer(str(directory), new, old))
        assert seen[-1] != "mixture", stop
        assert not _leftovers(directory)
    assert seen[0] == "uncased" and seen[-1] == "cased"


_CHILD = textwrap.dedent("""
    import os, signal, sys, torch
    sys.path.insert(0, {root!r})
    from tests.core.test_interrupted_saves import _stopped_after
    from tools.interrupt_soak import model as _model
    import mini_hf_bert
    directory, what, how = sys.argv[1], sys.argv[2], getattr(signal, sys.argv[3])
    send = lambda: os.kill(os.getpid(), how)
    # right after the first of the save's files (not the marker) is renamed into the directory
    stop = lambda destination: os.path.dirname(destination) == directory and {marker!r} not in destination
    if what == "model":
        _stopped_after(stop, lambda: _model(2).save_pretrained(directory, max_shard_size="30KB"), send)
    else:
        tokenizer = mini_hf_bert.BertTokenizer.from_pretrained(mini_hf_bert.chinese_checkpoint_dir(), do_lower_case=False)
        _stopped_after(stop, lambda: tokenizer.save_pretrained(directory), send)
    print("not stopped")
""")


def _save_in_a_child(directory, what: str, how: str) -> subprocess.CompletedProcess:
    """Save B (or a cased tokenizer) into ``directory`` in another process, signalled with
    ``how`` right after the save's first file is renamed into the directory."""
    return subprocess.run([sys.executable, "-c", _CHILD.format(root=ROOT, marker=MOVING_IN_MARKER), str(directory),
                           what, how], capture_output=True, text=True, timeout=300)


def test_sigterm_while_the_files_move_in_waits_for_them(tmp_path):
    models = {"A": _model(1), "B": _model(2)}
    directory = tmp_path / "model"
    models["A"].save_pretrained(directory, max_shard_size="30KB")
    done = _save_in_a_child(directory, "model", "SIGTERM")
    assert done.returncode == -signal.SIGTERM, done.stderr
    assert _which(directory) == "B"
    assert not _leftovers(directory)


@pytest.mark.parametrize("what", ["model", "tokenizer"])
def test_a_save_killed_while_its_files_move_in_is_refused_by_name_until_saved_again(what, tmp_path):
    directory = tmp_path / what
    tokenizer = mini_hf_bert.BertTokenizer.from_pretrained(mini_hf_bert.chinese_checkpoint_dir())
    if what == "model":
        _model(1).save_pretrained(directory, max_shard_size="30KB")
    else:
        tokenizer.save_pretrained(directory)
    done = _save_in_a_child(directory, what, "SIGKILL")
    assert done.returncode == -signal.SIGKILL, done.stdout + done.stderr
    assert os.path.exists(directory / MOVING_IN_MARKER)
    message = rf"^{directory}: a save into this directory was stopped while it moved its files in \(.*\), so it may hold"
    if what == "model":
        with pytest.raises(CheckpointError, match=message):
            mini_hf_bert.BertModel.from_pretrained(directory)
        _model(2).save_pretrained(directory, max_shard_size="30KB")
        assert _which(directory) == "B"
    else:
        with pytest.raises(TokenizerFileError, match=message):
            mini_hf_bert.BertTokenizer.from_pretrained(directory)
        tokenizer.save_pretrained(directory)
        assert mini_hf_bert.BertTokenizer.from_pretrained(directory).do_lower_case == tokenizer.do_lower_case
    assert not _leftovers(directory)  # the marker, and the killed save's staging directory, are gone
