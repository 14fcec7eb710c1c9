"""The `netsim` command as it starts: the console script's entry point, and `python -m netsim`.

A stop signal (Ctrl-C, SIGTERM) is answered from the moment this module runs: while netsim is
still importing (a few tenths of a second) it ends the command in one line, "netsim: interrupted",
with 128 + the signal's number (130, 143), not a traceback or a death by the signal; from then on
netsim.app.cli.main answers it the same way, and a run under way stops as netsim.app.progress describes.
(Only a signal during Python's own start-up, before this module, is Python's to report.)

numpy's OpenBLAS is held to one thread (unless OPENBLAS_NUM_THREADS says otherwise): at import it
starts one per core, which cost a small run 0.15 s of CPU (a sixth of it) for linear algebra
netsim never does.

The cyclic garbage collector runs rarely for the whole command, import included (netsim.collector).

When the command is done, every object is frozen out of the garbage collector's reach: the
collection Python runs as it exits traced (and freed, cycle by cycle) a 1024-NPU packet network
for 0.6 s; the operating system reclaims the memory at once.
"""

from __future__ import annotations

import gc
import os
import signal
import sys

from netsim.collector import collect_rarely
from netsim.errors import STOP_SIGNALS, interrupted_status, raise_interrupted


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # (before numpy is imported: see above)
    collect_rarely()  # (see above)
    for signum in STOP_SIGNALS:
        signal.signal(signum, raise_interrupted)
    try:
        from netsim.app.cli import main as run_command
    except KeyboardInterrupt as exc:
        return interrupted_status(exc)
    status = run_command(argv)
    gc.freeze()  # the command is done: the interpreter's last collection need not trace the run's objects
    return status


if __name__ == "__main__":
    sys.exit(main())
