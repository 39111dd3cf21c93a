"""How mini_hf_bert writes files: the one way every writer uses (docs/reliability.md).

* ``staged_file(path)`` / ``atomic_write(path)``: the bytes go to a temporary file with a
  unique name in the target's directory, are flushed to disk (fsync), and only then
  renamed over the target. A crash, a kill or an exception leaves the old file or the new
  one, never a part of either; two writers never share a temporary file; a symlink at the
  target is replaced by the new file, never written through.
* ``staged_directory(dst)``: a directory of several files is built beside ``dst`` and
  renamed into place whole (on Linux swapped in with one ``renameat2`` call), so it
  appears whole or not at all.
* ``directory_lock(directory)``: an advisory lock (``flock``) on the directory itself.
  Writers of a model directory hold it exclusively, readers shared, so a reader never sees
  half of one save and half of another, and two saves into one directory run one after
  the other: the last complete save wins.
* ``save_png(figure, path)``: a matplotlib figure written as ``staged_file`` writes, then
  closed: the one way the training curves and the attention pictures are saved.
* ``interrupts_deferred()``: Ctrl-C (SIGINT) and SIGTERM wait until a short step that
  must not stop half-way has finished (renaming a save's files into place), then act as
  usual.
* ``RunLock``: a training run's hold on its output directory, a lock file naming the pid;
  a second run into the same directory is refused while the first is alive. A killed run
  leaves no lock behind (the kernel drops ``flock`` locks with the process).

transformers: none (``save_pretrained`` there writes in place, with fixed names)
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import logging
import os
import re
import secrets
import shutil
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

try:
    import resource
except ImportError:  # Windows
    resource = None

try:
    import fcntl
except ImportError:  # Windows: no flock; locking is skipped there (docs/reliability.md)
    fcntl = None

logger = logging.getLogger(__name__)

#: How often a waiter tries the lock again: from 5 ms, doubling up to 20 ms. A reader that
#: loads in a loop leaves the lock free for moments only; a longer wait would starve a writer
#: (measured: 20 rounds of two writers beside such a reader took 58 s at a 100 ms cap, 14 s at 20 ms).
_FIRST_RETRY_SECONDS, _LAST_RETRY_SECONDS = 0.005, 0.02
#: The hidden staging directory of a save_pretrained, beside a new directory or inside an existing one.
SAVING_PREFIX = ".saving-"
#: A staging directory's full name: the prefix and ``make_directory_in``'s 8 hex digits.
SAVING_NAME = re.compile(re.escape(SAVING_PREFIX) + r"[0-9a-f]{8}")
#: Present in a model directory while a save moves its files in: a save killed (SIGKILL, a
#: crash, power) between its renames leaves it, and loaders refuse that directory by name.
MOVING_IN_MARKER = ".mini_hf_bert-moving-in"
#: The signals ``interrupts_deferred`` holds back: Ctrl-C and a polite kill.
DEFERRED_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: The training run's lock file, in its output directory while the run is alive.
RUN_LOCK_NAME = ".mini_hf_bert-run.lock"
# The two bounds every reader and writer of files shares; the others are in limits.py,
# which, like this module, imports nothing of the package, so both stay at the bottom of
# every import chain.
#: A JSON file (config, tokenizer files, index, checkpoint marker) or a vocabulary: BERT's
#: are kilobytes to a few megabytes; a wrong path (a weights file) is refused, not parsed.
METADATA_BYTES = 64 * 1024**2
#: The largest JSON file or vocabulary read (METADATA_BYTES, by the name readers use).
MAX_METADATA_BYTES = METADATA_BYTES
#: How long a reader or writer waits for another process's save in the same directory
#: before giving up with an error naming the directory. A save of bert-large takes seconds.
LOCK_TIMEOUT_SECONDS = 300.0
#: A temporary name keeps at most this much of the target's name (file names are <= 255 bytes).
_MAX_STEM = 100


class LockTimeoutError(TimeoutError):
    """Another process held a directory's lock for longer than ``LOCK_TIMEOUT_SECONDS``."""


class RunLockedError(FileExistsError):
    """Another training run holds the output directory."""


# --------------------------------------------------------------------------- files


def current_umask() -> int:
    """The process's umask, read without changing it where the system allows (Linux
    /proc), so no other thread ever sees a zero umask."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def fsync_directory(directory: str) -> None:
    """Make a rename inside ``directory`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then act on them as they would have
    acted (Ctrl-C raises KeyboardInterrupt as the block exits; SIGTERM's default ends the
    process). For steps that take milliseconds and must not stop half-way: the renames that
    move a save's files into place. Python runs signal handlers in the main thread only, so
    elsewhere the block simply runs (a signal interrupts the main thread, not this one); a
    signal whose handler was not set from Python is left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = {}
    for number in DEFERRED_SIGNALS:
        handler = signal.getsignal(number)
        if handler is not None:
            previous[number] = handler
            signal.signal(number, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        for number in dict.fromkeys(received):
            signal.raise_signal(number)  # now, under the handler that was there before


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _mode_for(path: str) -> int:
    """The permissions the new file gets: the old file's, else what ``open`` would give."""
    try:
        info = os.lstat(path)
    except OSError:
        return 0o666 & ~current_umask()
    if stat.S_ISREG(info.st_mode):
        return info.st_mode & 0o7777
    return 0o666 & ~current_umask()


#: The temporary files ``staged_file`` makes: ``.NAME.XXXXXXXX.tmp`` (mkstemp's 8 characters).
TEMPORARY_NAME = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")


def _temporary_name(directory: str, name: str) -> str:
    handle, staged = tempfile.mkstemp(prefix=f".{name[:_MAX_STEM]}.", suffix=".tmp", dir=directory)
    os.close(handle)
    return staged


@contextlib.contextmanager
def staged_file(path: str | os.PathLike, make_parents: bool = True) -> Iterator[str]:
    """A unique temporary path beside ``path`` for a writer that takes a path (torch.save,
    safetensors, savefig); on a clean exit it is fsynced and renamed over ``path``.

    Raises:
        IsADirectoryError: ``path`` is a directory (a symlink is fine: it is replaced).
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path) and not os.path.islink(path):
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", path)
    if make_parents:
        _make_parents(directory, path)
    mode = _mode_for(path)
    staged = _temporary_name(directory, os.path.basename(path))
    try:
        yield staged
        _fsync_file(staged)
        os.chmod(staged, mode)  # mkstemp (and safetensors) create files private (0600)
        os.replace(staged, path)
    except BaseException as error:
        cause = _no_room(error, directory, staged)
        with contextlib.suppress(FileNotFoundError):
            os.remove(staged)
        if cause:  # the writers' own words name no file (safetensors, torch.save's "unexpected pos")
            raise DiskFullError(errno.ENOSPC, f"could not be written: {cause}; nothing was left half-written",
                                path) from None
        raise
    fsync_directory(directory)


class DiskFullError(OSError):
    """A file could not be written for want of room: the disk, a quota or ``ulimit -f``.

    transformers: none (its writers raise the OS's or the library's error as it comes)
    """


#: Free space below this, after a writer failed without saying why, means the disk filled.
_NEARLY_FULL_BYTES = 1024**2


def _no_room(error: BaseException, directory: str, staged: str) -> str | None:
    """Why ``error``, raised while writing ``staged``, is a lack of room, in words, or None
    when it is something else."""
    code = getattr(error, "errno", None)
    if code == errno.ENOSPC or "No space left on device" in str(error):
        return "No space left on device (the disk is full)"
    if code == errno.EDQUOT or "Disk quota exceeded" in str(error):
        return "Disk quota exceeded (the disk quota is used up)"
    if code == errno.EFBIG or "File too large" in str(error):
        return "File too large (larger than this process may write: ulimit -f)"
    if isinstance(error, (RuntimeError, OSError)):  # torch.save: "[enforce fail at inline_container.cc] unexpected pos"
        with contextlib.suppress(OSError):
            if shutil.disk_usage(directory).free < _NEARLY_FULL_BYTES:
                return "No space left on device (the disk is full)"
            largest = resource.getrlimit(resource.RLIMIT_FSIZE)[0] if resource is not None else None
            if largest not in (None, resource.RLIM_INFINITY) and os.path.getsize(staged) >= largest:
                return "File too large (larger than this process may write: ulimit -f)"
    return None


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """``open(path, mode)`` that replaces ``path`` only once the block has finished writing."""
    if mode not in ("w", "wb"):
        raise ValueError(f"mode={mode!r}: atomic_write writes a whole file, 'w' or 'wb'")
    with staged_file(path) as staged, open(staged, mode, encoding=None if "b" in mode else encoding) as f:
        yield f


def write_text(path: str | os.PathLike, text: str) -> str:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns the path."""
    with atomic_write(path) as f:
        f.write(text)
    return os.fspath(path)


def write_json(path: str | os.PathLike, value: Any, indent: int | None = 2, sort_keys: bool = False) -> str:
    """Write ``value`` as JSON (UTF-8, non-ASCII kept) to ``path`` atomically, a newline at the end."""
    return write_text(path, json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=False) + "\n")


def _make_parents(directory: str, path: str) -> None:
    existing = directory
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise NotADirectoryError(errno.ENOTDIR, f"{existing} is a file, not a directory", path)
    os.makedirs(directory, exist_ok=True)


def not_a_regular_file(path: str) -> str | None:
    """Why ``path`` is not a regular file a reader may open, or None when it is one: it
    is missing, a symlink to nothing (a pruned cache), or a named pipe, device, socket or
    directory (a pipe or device could block a reader forever). Nothing is opened."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            return f"is a symlink to {os.readlink(path)}, which does not exist (a cache pruned of its file?)"
        return "no such file"
    except OSError as e:
        return f"cannot read it ({e.strerror})"
    except ValueError:  # os.stat's answer to a NUL byte, which no file name holds
        return "no such file (the name holds a NUL byte)"
    if stat.S_ISREG(mode):
        return None
    kind = "a directory" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode) else \
        "a socket" if stat.S_ISSOCK(mode) else "a device"
    return f"is {kind}, not a regular file (refused without reading it: it could block forever)"


def read_file(path: str | os.PathLike, max_bytes: int | None = None) -> bytes:
    """A regular file's bytes, whole: the one way mini_hf_bert reads a config, a
    vocabulary, an index or a corpus a user names.

    Raises:
        OSError (with ``filename`` set, so a message can name it): no such file, a
        directory, not a regular file (a device such as /dev/zero or a pipe: reading
        one could never end), more than ``max_bytes``, or an I/O error.
    """
    path = os.fspath(path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a pipe must not block the open
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "a directory, not a file", path)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file but a device, a pipe or a socket", path)
        if max_bytes is not None and info.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"{info.st_size} bytes, more than the {max_bytes} such a file may have", path)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
            if max_bytes is not None and total > max_bytes:  # a file that grows, or a /proc file of size 0
                raise OSError(errno.EFBIG, f"more than the {max_bytes} bytes such a file may have", path)
    except OSError as e:
        if e.filename is None:
            raise OSError(e.errno, e.strerror, path) from None
        raise
    finally:
        os.close(fd)


# --------------------------------------------------------------------- directories


def no_remote_code(trust_remote_code: bool | None, what: str) -> None:
    """``trust_remote_code``, accepted from transformers code by every loader alike: True
    draws one warning saying that nothing runs; None (transformers' default) is False;
    anything else is a TypeError.

    transformers: none (its loaders import a checkpoint's ``auto_map`` modules when it is True)
    """
    if trust_remote_code is None:  # transformers' own default, where it pops the keyword
        return
    if not isinstance(trust_remote_code, bool):
        raise TypeError(f"trust_remote_code must be True or False, got {trust_remote_code!r}")
    if trust_remote_code:
        logger.warning("trust_remote_code=True has no effect: mini_hf_bert never runs code from a checkpoint; "
                       "%s is built from this library's own classes", what)


def read_json(path: str | os.PathLike, error: type[Exception], what: str,
              missing: type[Exception] | None = None) -> Any:
    """The JSON value in the file at ``path`` (at most ``MAX_METADATA_BYTES``): the one way
    a config, a tokenizer file or an index is read. Each way it can fail is one ``error``
    whose message names the file and ``what`` it should be ("config file"); a missing file
    is ``missing`` (default ``error``).
    """
    path = os.fspath(path)
    try:
        return json.loads(read_file(path, MAX_METADATA_BYTES).decode("utf-8"))
    except FileNotFoundError:
        raise (missing or error)(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not a {what}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise error(f"{path}: not valid JSON ({e})") from None
    except RecursionError:
        raise error(f"{path}: JSON nested too deeply to be a {what}") from None
    except OSError as e:
        raise error(f"{path}: cannot be read as a {what} ({e.strerror})") from None


def make_sibling_directory(path: str, prefix: str) -> str:
    """A new, empty directory beside ``path`` (the same file system, so it can be renamed
    into place), with the permissions a plain ``mkdir`` gives under the user's umask
    (``tempfile.mkdtemp`` would make it private, 0700)."""
    parent = os.path.dirname(os.path.abspath(path))
    try:
        _make_parents(parent, path)
    except NotADirectoryError:
        raise
    except OSError as e:
        raise PermissionError(errno.EACCES, f"cannot create the directory {parent} ({e.strerror})", path) from None
    return make_directory_in(parent, prefix)


def make_directory_in(parent: str, prefix: str) -> str:
    """A new, empty directory ``parent/PREFIXxxxxxxxx`` (8 random hex digits), with the
    permissions of a plain ``mkdir``."""
    for _ in range(100):
        candidate = os.path.join(parent, prefix + secrets.token_hex(4))
        try:
            os.mkdir(candidate)
            return candidate
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"could not create a fresh {prefix}* directory", parent)


def _fsync_tree(root: str) -> None:
    for directory, _, files in os.walk(root):
        for name in files:
            full = os.path.join(directory, name)
            if os.path.isfile(full) and not os.path.islink(full):
                _fsync_file(full)
        fsync_directory(directory)


#: renameat2's flag that swaps two paths in one step (Linux >= 3.15).
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: str, b: str) -> bool:
    """Swap the directory entries ``a`` and ``b`` atomically; False where not supported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False  # a kernel or file system without RENAME_EXCHANGE
    raise OSError(code, os.strerror(code), a, None, b)


def replace_directory(new: str, dst: str, overwrite: bool = True) -> None:
    """Put the complete directory ``new`` at ``dst``. An existing ``dst`` is swapped out in
    one step where the system can (Linux), else renamed aside first; it is deleted only once
    ``new`` is in place, and a failure puts it back. A symlink at ``dst`` is replaced,
    never followed. Without ``overwrite`` only a missing or empty ``dst`` is replaced (one
    that another writer filled meanwhile is left as it is: FileExistsError)."""
    if not overwrite or not os.path.lexists(dst):
        try:
            os.rename(new, dst)  # over an empty directory at most
        except OSError as e:
            if e.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
                found = ("is a symlink, which is never written through; it was left as it is (replace it with "
                         "overwrite)" if os.path.islink(dst) else
                         "appeared while this was being written; it was left as it is")
                raise FileExistsError(errno.EEXIST, found, dst) from None
            raise
        fsync_directory(os.path.dirname(os.path.abspath(dst)))
        return
    if _exchange(new, dst):
        old = new  # the exchange left the old dst where new was
    else:
        old = make_sibling_directory(dst, ".replaced-")
        os.rmdir(old)  # only its unique name is wanted
        os.rename(dst, old)
        try:
            os.rename(new, dst)
        except BaseException:
            os.rename(old, dst)
            raise
    fsync_directory(os.path.dirname(os.path.abspath(dst)))
    if os.path.isdir(old) and not os.path.islink(old):
        shutil.rmtree(old)
    else:
        os.remove(old)


def move_files_in(staging: str, directory: str, names: list[str], finish: Callable[[], None] | None = None) -> None:
    """Rename the files ``names``, each written whole into ``staging``, into ``directory`` in
    that order; then run ``finish`` (a save removes there the files its own supersede).

    From the first rename to the end of ``finish`` the directory holds files of two saves.
    So Ctrl-C and SIGTERM wait for the end of this step (``interrupts_deferred``; it takes
    milliseconds), and ``MOVING_IN_MARKER`` stands in the directory throughout, naming the
    files: a save killed outright leaves it, and loaders refuse the directory by name
    (``unfinished_move_in``) until a save into it finishes."""
    marker = os.path.join(directory, MOVING_IN_MARKER)
    write_json(os.path.join(staging, MOVING_IN_MARKER), {"pid": os.getpid(), "files": names})
    with interrupts_deferred():
        os.replace(os.path.join(staging, MOVING_IN_MARKER), marker)
        fsync_directory(directory)
        for name in names:
            os.replace(os.path.join(staging, name), os.path.join(directory, name))
        if finish is not None:
            finish()
        fsync_directory(directory)
        os.remove(marker)
        fsync_directory(directory)
        with contextlib.suppress(OSError):  # staging, now empty: gone too, should a SIGTERM end the process here
            os.rmdir(staging)


def remove_abandoned_staging(directory: str) -> None:
    """Remove the staging directories (``.saving-xxxxxxxx``) of earlier saves into
    ``directory`` that were stopped before they could remove their own. Called under the
    directory's exclusive lock, which every save holds while its staging directory lives:
    one found then belongs to no running save."""
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if SAVING_NAME.fullmatch(name) and os.path.isdir(path) and not os.path.islink(path):
            logger.info("%s: removing %s, left by a save that was stopped", directory, name)
            shutil.rmtree(path, ignore_errors=True)


def unfinished_move_in(directory: str) -> str | None:
    """Why ``directory`` cannot be read as one save: a save into it stopped while moving its
    files in (``move_files_in``'s marker is there), so it may hold files of two saves; None
    where none did. The caller raises its own error, naming the directory."""
    marker = os.path.join(directory, MOVING_IN_MARKER)
    if not os.path.lexists(marker):
        return None
    try:
        files = json.loads(read_file(marker, MAX_METADATA_BYTES))["files"]
        which = f" ({', '.join(map(str, files))})"
    except (OSError, ValueError, KeyError, TypeError):
        which = ""
    return (f"a save into this directory was stopped while it moved its files in{which}, so it may hold files of two "
            f"different saves; save into it again (that removes {MOVING_IN_MARKER})")


@contextlib.contextmanager
def naming_final_paths(staging: str, final: str) -> Iterator[None]:
    """A ``DiskFullError`` for a file written into the hidden ``staging`` directory names
    the file where it was going, under ``final``: the path a user knows."""
    try:
        yield
    except DiskFullError as error:
        name, root = os.path.abspath(str(error.filename)), os.path.abspath(staging)
        if os.path.commonpath([name, root]) == root:
            error.filename = os.path.join(final, os.path.relpath(name, root))
        raise


@contextlib.contextmanager
def staged_directory(dst: str, prefix: str, overwrite: bool = True) -> Iterator[str]:
    """A fresh directory beside ``dst`` to write into; on a clean exit its files are
    fsynced and it replaces ``dst`` whole (``replace_directory``); on an error it is removed."""
    staging = make_sibling_directory(dst, prefix)
    try:
        with naming_final_paths(staging, dst):
            yield staging
        _fsync_tree(staging)
        replace_directory(staging, dst, overwrite)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


# --------------------------------------------------------------------------- locks

_held = threading.local()  # (st_dev, st_ino) of a directory -> [fd, exclusive, depth], per thread


def _wait_for_flock(fd: int, operation: int, what: str, timeout: float) -> bool:
    """flock with a deadline; False where the file system has no locks."""
    deadline = time.monotonic() + timeout
    delay = _FIRST_RETRY_SECONDS
    while True:
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockTimeoutError(
                    f"{what}: another process has been writing here for over {timeout:.0f} s; "
                    f"wait for it to finish, or stop it"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, _LAST_RETRY_SECONDS)
        except OSError as e:
            if e.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL, errno.EBADF):
                logger.debug("%s: no file locks on this file system (%s)", what, e.strerror)
                return False
            raise


@contextlib.contextmanager
def directory_lock(directory: str | os.PathLike, exclusive: bool, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Hold ``directory``'s lock while the block runs: ``exclusive`` for a writer, shared for
    a reader. Re-entrant within a thread (``save_pretrained`` saves the config under the
    lock it already holds). Nothing happens where there is no such directory, no ``flock``
    (Windows), or a file system without locks."""
    directory = os.fspath(directory)
    if fcntl is None or not os.path.isdir(directory):
        yield
        return
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield  # unreadable: whatever reads or writes next reports it, naming the path
        return
    info = os.fstat(fd)
    key = (info.st_dev, info.st_ino)
    held = _held.__dict__.setdefault("locks", {})
    if key in held:
        os.close(fd)
        entry = held[key]
        if exclusive and not entry[1]:
            raise RuntimeError(f"{directory}: cannot write here while this thread is reading the same directory")
        entry[2] += 1
        try:
            yield
        finally:
            entry[2] -= 1
        return
    try:
        locked = _wait_for_flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH, directory, timeout)
    except BaseException:
        os.close(fd)
        raise
    held[key] = [fd, exclusive, 1]
    try:
        yield
    finally:
        del held[key]
        if locked:
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


class RunLock:
    """A training run's hold on its output directory: ``OUT/.mini_hf_bert-run.lock``, locked
    (``flock``) and holding the run's pid, removed when the run ends. Re-entrant within a
    process (``finetune`` locks OUT, then runs its baseline inside it).

    Args:
        directory: the output directory; created (with its parents) if missing.

    Raises:
        RunLockedError: another live process holds it; the message names its pid.
    """

    _open: dict[str, list] = {}  # realpath -> [lock, depth], this process's held run locks

    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = os.fspath(directory)
        self.created_directory = False
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        real = os.path.realpath(self.directory)
        if real in RunLock._open:
            RunLock._open[real][1] += 1
            self._fd = -1  # re-entered: the outer holder releases
            return self
        if not os.path.lexists(self.directory):
            _make_parents(os.path.dirname(os.path.abspath(self.directory)), self.directory)
            with contextlib.suppress(FileExistsError):
                os.mkdir(self.directory)
                self.created_directory = True
        path = os.path.join(self.directory, RUN_LOCK_NAME)
        while True:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
            except OSError as e:
                raise OSError(e.errno, f"cannot create the run's lock file ({e.strerror})", path) from None
            if fcntl is None:
                break
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                with open(fd, encoding="utf-8", errors="replace", closefd=True) as f:
                    owner = f.read().strip() or "unknown"
                raise RunLockedError(
                    f"{self.directory}: another run (pid {owner}) is writing here; wait for it to end, "
                    f"or choose another output directory"
                ) from None
            except OSError as e:
                if e.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL):
                    os.close(fd)
                    raise
                break  # a file system without locks: the pid file alone
            try:  # the previous holder may have removed the file between our open and lock
                same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        RunLock._open[real] = [self, 1]
        return self

    def __exit__(self, *exc: object) -> None:
        real = os.path.realpath(self.directory)
        entry = RunLock._open.get(real)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] or self._fd == -1:
            return
        del RunLock._open[real]
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(self.directory, RUN_LOCK_NAME))  # while still locked: no one else holds this file
        os.close(self._fd)
        self._fd = None
        if self.created_directory:
            with contextlib.suppress(OSError):
                os.rmdir(self.directory)  # only if the run wrote nothing: rmdir refuses a non-empty directory


#: Dots per inch of every PNG this package writes (training curves, attention pictures).
PNG_DPI = 100
#: The white margin around everything drawn, in inches: the picture is cut to its drawing
#: plus this (``bbox_inches="tight"``), so that no label lies outside it, as an axis label
#: below rotated tick labels did under ``tight_layout`` alone.
PNG_PAD_INCHES = 0.1


def save_png(figure: Any, path: str, dpi: int = PNG_DPI) -> str:
    """Write the matplotlib ``figure`` to ``path`` as a PNG, whole (``staged_file``), and
    close it, written or not (pyplot keeps every open figure alive until then); ``path``."""
    import matplotlib.pyplot as plt

    try:
        with staged_file(path) as staged:
            figure.savefig(staged, dpi=dpi, format="png", bbox_inches="tight", pad_inches=PNG_PAD_INCHES)
    finally:
        plt.close(figure)
    return path


def same_or_inside(path: str, ancestor: str) -> bool:
    """Whether ``path`` is ``ancestor`` or lies inside it, symlinks resolved; compared by
    device and inode, so another spelling of the same directory (a bind mount, a
    case-insensitive file system) is caught too."""
    try:
        target = os.stat(ancestor)
    except OSError:
        return False
    current = os.path.realpath(path)
    while True:
        try:
            info = os.stat(current)
            if (info.st_dev, info.st_ino) == (target.st_dev, target.st_ino):
                return True
        except OSError:
            pass  # a part of DST that does not exist yet
        parent = os.path.dirname(current)
        if parent == current:
            return False
        current = parent


def check_destination(dst: str, sources: list[str]) -> None:
    """Refuse a ``dst`` whose replacement could destroy what the command writing it reads
    (a conversion's checkpoint, a training run's data):
    ``dst`` is one of ``sources``, holds one, or lies inside one (symlinks resolved)."""
    for source in sources:
        if not os.path.exists(source):
            continue
        if same_or_inside(dst, source):
            where = "is" if same_or_inside(source, dst) else "lies inside"
            raise FileExistsError(f"{dst}: {where} the source {source}; the output must be a separate directory")
        if same_or_inside(source, dst):
            raise FileExistsError(
                f"{dst}: holds the source {source}; writing there could destroy what the command reads"
            )
