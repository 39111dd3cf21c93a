"""Run ``python -m mini_hf_bert ARGS`` in this process and kill it at one chosen moment of
its writing: a real signal, sent by the process to itself at a point the test names, so
the moment is exact and the outcome repeatable. Used by ``test_training_faults.py``.

    python tests/training/killed_run.py KILL_AT SIGNAL ARGS...

KILL_AT:
    ``none``          run to the end;
    ``REGEX#N``       at the N-th ``os.replace`` of a file whose destination matches REGEX
                      (every file mini_hf_bert writes goes through ``file_utils``, which
                      renames a finished temporary file into place), cut the temporary
                      file to half its size and send SIGNAL before the rename: as if the
                      kill came while that file was being written;
    ``dir:NAME#N``    at the N-th time a staged directory is about to be renamed to a path
                      ending in NAME (a checkpoint, complete, marker written), send SIGNAL.
SIGNAL: ``KILL``, ``INT`` (Ctrl-C) or ``TERM``; or ``HOLD:PATH``, which at that moment
sends nothing and, instead of cutting the file, waits on the named pipe PATH until the test
has opened it and closed it again: a barrier at which the test knows where the run stands.
"""

from __future__ import annotations

import os
import re
import signal
import sys


def main() -> int:
    kill_at, signal_name, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    hold = signal_name[len("HOLD:"):] if signal_name.startswith("HOLD:") else None
    number = None if hold else getattr(signal, f"SIG{signal_name}")
    # Ctrl-C raises KeyboardInterrupt even where this process was started with SIGINT
    # ignored (a shell starts background jobs so, and Python then keeps it ignored).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if kill_at != "none":
        pattern, count = kill_at.rsplit("#", 1)
        seen = [0]

        def due() -> bool:
            seen[0] += 1
            return seen[0] == int(count)

        if pattern.startswith("dir:"):
            from mini_hf_bert import file_utils

            replace_directory = file_utils.replace_directory

            def dying_replace_directory(new, dst, overwrite=True):
                if dst.endswith(pattern[len("dir:"):]) and due():
                    os.kill(os.getpid(), number)
                return replace_directory(new, dst, overwrite)

            file_utils.replace_directory = dying_replace_directory
        else:
            replace = os.replace
            regex = re.compile(pattern)

            def dying_replace(src, dst, *rest, **kwargs):
                if regex.search(os.fspath(dst)) and due():
                    if hold:
                        with open(hold, "rb") as barrier:  # returns when the test opens the pipe to write,
                            barrier.read()  # and this (at end of file) when it closes it
                    else:
                        size = os.path.getsize(src)
                        with open(src, "r+b") as f:
                            f.truncate(size // 2)
                        os.kill(os.getpid(), number)
                return replace(src, dst, *rest, **kwargs)

            os.replace = dying_replace
    from mini_hf_bert.__main__ import main as cli

    return cli(args)


if __name__ == "__main__":
    sys.exit(main())
