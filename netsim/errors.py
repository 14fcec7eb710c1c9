"""User-facing errors: each carries a one-line message the CLI prints before exiting non-zero; and
the stop signals (Ctrl-C, SIGTERM), which end a command with one line and 128 + the signal's number."""

import signal
import sys

MESSAGE_LIMIT = 1000  # characters of an error message; a longer one (a huge value echoed) is cut in the middle


def clipped(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """`text`, or when longer than `limit` its start and end with the count of characters left out
    between them (the file, key and what was expected stay readable)."""
    if len(text) <= limit:
        return text
    keep = limit // 2
    return f"{text[:keep]}...[{len(text) - 2 * keep:,} characters left out]...{text[-keep:]}"


class NetsimError(Exception):
    """Base class of errors caused by the user's input or scenario, not by a bug in netsim. The
    message is kept to MESSAGE_LIMIT characters (`clipped`), whatever value it echoes."""

    exit_code = 2

    def __init__(self, message: str = ""):
        super().__init__(clipped(str(message)))


class ConfigError(NetsimError):
    """A config, workload or command-line value is missing, unknown or malformed."""


class DeadlockError(NetsimError):
    """The simulation cannot progress; the message says who waits on whom."""

    exit_code = 3


class InvariantError(AssertionError):
    """A flow-control invariant of the packet backend was broken: a bug in netsim, never the user's
    fault (so not a NetsimError)."""


class MirrorMismatch(Exception):
    """The copies of one message that stands for others (a symmetric collective's, a lockstep run's)
    arrived in different cycles on the packet backend (netsim.garnet.shortcuts.mirrored): not an error, the
    signal to simulate the run again per message."""


class PartitionConflict(Exception):
    """A message started through ports that the packet backend's fast-forward per partition had moved
    ahead of the clock (netsim.garnet.shortcuts.partitions): not an error, the signal to simulate the run again
    with the whole-network fast-forward."""


class QuotientConflict(Exception):
    """Traffic the packet backend cannot run on the quotient it folded a symmetric run onto (netsim.garnet.shortcuts.quotient):
    not an error, the signal to simulate the run again with every copy sent (`garnet.symmetry = "copies"`)."""


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A stop signal that ends the command at once; it exits 128 + `signum` (130 Ctrl-C, 143 SIGTERM)."""

    def __init__(self, signum: int):
        super().__init__()
        self.signum = signum


def raise_interrupted(signum: int, frame) -> None:
    """A signal handler: the signal ends the command at once (`Interrupted`)."""
    raise Interrupted(signum)


def interrupted_status(exc: KeyboardInterrupt) -> int:
    """Say in one line that the command was stopped; its exit status (130 for Ctrl-C, 143 for SIGTERM)."""
    print("netsim: interrupted", file=sys.stderr)
    return 128 + getattr(exc, "signum", signal.SIGINT)


class NetsimWarning(UserWarning):
    """Input netsim reads but treats differently from what it may seem to ask; the CLI prints it as one line."""
