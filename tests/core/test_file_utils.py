"""``file_utils``: the one way mini_hf_bert writes and reads a file, and its locks.

Each promise of docs/reliability.md about a single file or lock is tested here with real
processes and real file systems (no mocks of the kernel): a failure half-way leaves the
old file, a symlink is replaced and never written through, concurrent writers never share
a temporary file, a device or a pipe is never read, the directory lock excludes another
process, and a training run's lock names the holder's pid and dies with it."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from mini_hf_bert.file_utils import (
    RUN_LOCK_NAME,
    LockTimeoutError,
    RunLock,
    RunLockedError,
    atomic_write,
    directory_lock,
    interrupts_deferred,
    not_a_regular_file,
    read_file,
    replace_directory,
    staged_directory,
    staged_file,
    write_text,
)


def test_a_failure_half_way_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "config.json"
    target.write_text("old")
    with pytest.raises(RuntimeError, match="disk full"):
        with atomic_write(target) as f:
            f.write("new, half")
            raise RuntimeError("disk full")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"]


def test_a_symlink_target_is_replaced_never_written_through(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("not ours")
    link = tmp_path / "vocab.txt"
    link.symlink_to(precious)
    write_text(link, "[PAD]\n")
    assert precious.read_text() == "not ours"
    assert not link.is_symlink() and link.read_text() == "[PAD]\n"


def test_permissions_of_an_existing_file_are_kept_and_new_files_follow_the_umask(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("x")
    os.chmod(target, 0o640)
    write_text(target, "y")
    assert target.stat().st_mode & 0o777 == 0o640
    fresh = tmp_path / "b.txt"
    write_text(fresh, "z")
    mask = os.umask(0)
    os.umask(mask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_directory_at_the_target_is_refused_by_name(tmp_path):
    (tmp_path / "model.safetensors").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        write_text(tmp_path / "model.safetensors", "x")
    assert info.value.filename == str(tmp_path / "model.safetensors")


def test_threads_writing_one_file_each_leave_one_whole_version(tmp_path):
    """The bug of a shared ``.tmp`` name: 8 writers of 200 KB each; the file ends as one
    writer's whole text, and no temporary is left."""
    target = tmp_path / "pytorch_model.bin"
    texts = [str(i) * 200_000 for i in range(8)]
    errors = []

    def write(text):
        try:
            for _ in range(5):
                write_text(target, text)
        except Exception as e:  # noqa: BLE001 - collected and asserted on below
            errors.append(e)

    threads = [threading.Thread(target=write, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert target.read_text() in texts
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pytorch_model.bin"]


def test_staged_file_gives_each_writer_its_own_temporary(tmp_path):
    with staged_file(tmp_path / "w.bin") as a, staged_file(tmp_path / "w.bin") as b:
        assert a != b and os.path.dirname(a) == str(tmp_path)
        open(a, "w").write("a")
        open(b, "w").write("b")
    assert (tmp_path / "w.bin").read_text() == "a"  # the last to finish wins, whole


def test_a_staged_directory_appears_whole_or_not_at_all(tmp_path):
    dst = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        with staged_directory(str(dst), ".converting-") as staging:
            open(os.path.join(staging, "config.json"), "w").write("{}")
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []
    with staged_directory(str(dst), ".converting-") as staging:
        open(os.path.join(staging, "config.json"), "w").write("{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and (dst / "config.json").read_text() == "{}"


def test_replace_directory_without_overwrite_leaves_a_directory_another_writer_filled(tmp_path):
    new, dst = tmp_path / "new", tmp_path / "dst"
    new.mkdir()
    dst.mkdir()
    (dst / "theirs.txt").write_text("another writer's")
    with pytest.raises(FileExistsError, match="appeared while this was being written"):
        replace_directory(str(new), str(dst), overwrite=False)
    assert (dst / "theirs.txt").read_text() == "another writer's"


# ------------------------------------------------------------------------- reading


def test_read_file_refuses_what_could_never_end_and_names_it(tmp_path):
    with pytest.raises(OSError, match="not a regular file") as info:
        read_file("/dev/zero")
    assert info.value.filename == "/dev/zero"
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(OSError, match="not a regular file"):
        read_file(fifo)  # opening a pipe with no writer must not block
    assert time.monotonic() - started < 5
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2000)
    with pytest.raises(OSError, match="2000 bytes, more than the 1000") as info:
        read_file(big, max_bytes=1000)
    assert info.value.filename == str(big)
    with pytest.raises(IsADirectoryError):
        read_file(tmp_path)
    assert read_file(big) == b" " * 2000


# --------------------------------------------------------------------------- locks

_HOLD = textwrap.dedent("""
    import sys, time
    from mini_hf_bert.file_utils import directory_lock
    with directory_lock(sys.argv[1], exclusive=sys.argv[2] == "x"):
        print("held", flush=True)
        time.sleep(float(sys.argv[3]))
""")


def _hold_lock(directory, exclusive: bool, seconds: float) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-c", _HOLD, str(directory), "x" if exclusive else "s", str(seconds)],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "held"
    return process


def test_the_directory_lock_excludes_another_process_and_times_out_by_name(tmp_path):
    holder = _hold_lock(tmp_path, exclusive=True, seconds=30)
    try:
        with pytest.raises(LockTimeoutError, match=f"{tmp_path}: another process has been writing here"):
            with directory_lock(tmp_path, exclusive=False, timeout=0.3):
                pass
    finally:
        holder.kill()
        holder.wait()
    with directory_lock(tmp_path, exclusive=True, timeout=5):  # released with the killed process
        pass


def test_readers_share_the_directory_lock(tmp_path):
    reader = _hold_lock(tmp_path, exclusive=False, seconds=30)
    try:
        with directory_lock(tmp_path, exclusive=False, timeout=0.5):
            pass
        with pytest.raises(LockTimeoutError):
            with directory_lock(tmp_path, exclusive=True, timeout=0.3):
                pass
    finally:
        reader.kill()
        reader.wait()


def test_the_directory_lock_is_reentrant_within_a_thread(tmp_path):
    with directory_lock(tmp_path, exclusive=True):
        with directory_lock(tmp_path, exclusive=True):
            with directory_lock(tmp_path, exclusive=False):
                pass
    with directory_lock(tmp_path, exclusive=False):
        with pytest.raises(RuntimeError, match="cannot write here while this thread is reading"):
            with directory_lock(tmp_path, exclusive=True):
                pass


_RUN = textwrap.dedent("""
    import sys, time
    from mini_hf_bert.file_utils import RunLock
    with RunLock(sys.argv[1]):
        print("held", flush=True)
        time.sleep(60)
""")


def test_a_second_run_is_refused_with_the_first_ones_pid_and_a_killed_run_leaves_no_lock(tmp_path):
    out = tmp_path / "out"
    first = subprocess.Popen([sys.executable, "-c", _RUN, str(out)], stdout=subprocess.PIPE, text=True)
    assert first.stdout.readline().strip() == "held"
    try:
        with pytest.raises(RunLockedError, match=f"{out}: another run \\(pid {first.pid}\\) is writing here"):
            with RunLock(out):
                pass
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    assert (out / RUN_LOCK_NAME).exists()  # the dead run's file is left ...
    with RunLock(out):  # ... but holds no lock: the next run takes it
        assert (out / RUN_LOCK_NAME).read_text().strip() == str(os.getpid())
    assert not (out / RUN_LOCK_NAME).exists()


def test_a_run_lock_removes_the_directory_it_created_when_nothing_was_written(tmp_path):
    with RunLock(tmp_path / "new" / "out"):
        pass
    assert not (tmp_path / "new" / "out").exists()
    (tmp_path / "kept").mkdir()
    with RunLock(tmp_path / "kept"):
        pass
    assert (tmp_path / "kept").is_dir()


def test_a_planted_symlink_at_the_lock_file_is_refused_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / RUN_LOCK_NAME).symlink_to(victim)
    with pytest.raises(OSError, match="cannot create the run's lock file"):
        with RunLock(tmp_path / "out"):
            pass
    assert victim.read_text() == "keep me"


#: How long a process of the test below waits for the others (a bound, not a pace: on a
#: loaded machine they arrive late, and the barrier waits for them).
_WAIT_S = 120


def _take(directory, start, everyone_tried, queue):
    start.wait(_WAIT_S)  # every process tries at the same moment
    try:
        with RunLock(directory):
            queue.put("took")
            everyone_tried.wait(_WAIT_S)  # held until every other process has tried
    except RunLockedError:
        queue.put("refused")


def test_of_many_runs_started_at_once_exactly_one_holds_the_directory(tmp_path):
    """Six processes released by one barrier try to take the directory; the one that took
    it holds it until all six have answered, so a late one can never find it free."""
    context = multiprocessing.get_context("fork")
    queue, start, everyone_tried = context.Queue(), context.Barrier(6), context.Event()
    processes = [context.Process(target=_take, args=(str(tmp_path / "out"), start, everyone_tried, queue))
                 for _ in range(6)]
    for p in processes:
        p.start()
    try:
        results = sorted(queue.get(timeout=_WAIT_S) for _ in processes)
    finally:
        everyone_tried.set()
        for p in processes:
            p.join(_WAIT_S)
    assert results == ["refused"] * 5 + ["took"]
    assert all(p.exitcode == 0 for p in processes)


def test_a_name_holding_a_nul_byte_is_no_file_not_a_valueerror(tmp_path):
    """os.stat raises ValueError ("embedded null byte") for such a name, naming nothing; every
    reader asks not_a_regular_file first, whose answer the caller puts beside the path."""
    assert not_a_regular_file(str(tmp_path / "model\0.safetensors")) == "no such file (the name holds a NUL byte)"
    (tmp_path / "model.safetensors").write_bytes(b"x")
    assert not_a_regular_file(str(tmp_path / "model.safetensors")) is None


@pytest.mark.usefixtures("python_ctrl_c")
def test_ctrl_c_inside_interrupts_deferred_is_raised_when_the_block_ends():
    done = []
    handler = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        with interrupts_deferred():
            signal.raise_signal(signal.SIGINT)
            done.append("rest of the block")  # not cut short
            with interrupts_deferred():  # nested: the inner block's end hands it to the outer one
                signal.raise_signal(signal.SIGINT)
            done.append("after the inner block")
    assert done == ["rest of the block", "after the inner block"]
    assert signal.getsignal(signal.SIGINT) is handler  # restored
    with interrupts_deferred():
        pass  # nothing received: nothing raised


def test_interrupts_deferred_outside_the_main_thread_just_runs_the_block():
    ran, errors = [], []

    def body():
        try:
            with interrupts_deferred():  # signal.signal would raise ValueError here
                ran.append(True)
        except BaseException as error:  # noqa: BLE001 - handed to the test
            errors.append(error)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert ran == [True] and not errors
