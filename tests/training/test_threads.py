"""How many threads the training commands compute with: torch's own number, one on a busy
machine (said in one line), --threads when given; and torch's number given back after."""

from __future__ import annotations

import pytest
import torch

from mini_hf_bert import cpu_capability
from mini_hf_bert.__main__ import main
from mini_hf_bert.cpu_capability import busy_machine_threads, training_threads


@pytest.fixture
def four_threads(monkeypatch):
    """torch as on a 4-core machine, OMP_NUM_THREADS unset."""
    before = torch.get_num_threads()
    torch.set_num_threads(4)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    yield
    torch.set_num_threads(before)


def _load(monkeypatch, load: float) -> None:
    monkeypatch.setattr(cpu_capability.os, "getloadavg", lambda: (load, load, load))


def test_a_quiet_machine_keeps_torchs_threads(four_threads, monkeypatch):
    _load(monkeypatch, 3.9)
    assert busy_machine_threads(None) == (4, None)


def test_a_busy_machine_gets_one_thread_and_is_told_why(four_threads, monkeypatch):
    _load(monkeypatch, 8.0)
    assert busy_machine_threads(None) == (1, "threads: 1, not 4: the machine is busy (load average 8.0 on 4 cores), "
                                              "and threads that wait for one another slow every step; --threads 4 "
                                              "uses them all")


def test_threads_given_win_and_omp_num_threads_is_obeyed(four_threads, monkeypatch):
    _load(monkeypatch, 8.0)
    assert busy_machine_threads(3) == (3, "threads: 3 (--threads)")
    assert busy_machine_threads(4) == (4, None)
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    assert busy_machine_threads(None) == (4, None)
    with pytest.raises(ValueError, match="--threads must be at least 1, got 0"):
        busy_machine_threads(0)


def test_the_block_computes_with_them_and_gives_torch_its_number_back(four_threads, monkeypatch):
    _load(monkeypatch, 8.0)
    with training_threads(None) as sentence:
        assert torch.get_num_threads() == 1 and sentence.startswith("threads: 1, not 4")
    assert torch.get_num_threads() == 4
    with pytest.raises(RuntimeError), training_threads(2):
        assert torch.get_num_threads() == 2
        raise RuntimeError("a failed run")
    assert torch.get_num_threads() == 4


def test_pretrain_says_it_and_restores_them(four_threads, monkeypatch, tmp_path, capsys):
    _load(monkeypatch, 8.0)
    assert main(["pretrain", "peoples-daily", str(tmp_path / "out"), "--quick", "--max-steps", "2",
                 "--eval-every", "2", "--save-every", "2", "--max-documents", "40", "--no-progress"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("threads: 1, not 4: the machine is busy (load average 8.0 on 4 cores)")
    assert torch.get_num_threads() == 4
