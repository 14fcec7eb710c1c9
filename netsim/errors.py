"""User-facing errors: each carries a one-line message the CLI prints before exiting non-zero."""


class NetsimError(Exception):
    """Base class of errors caused by the user's input or scenario, not by a bug in netsim."""

    exit_code = 2


class ConfigError(NetsimError):
    """A config, workload or command-line value is missing, unknown or malformed."""


class DeadlockError(NetsimError):
    """The simulation cannot progress; the message says who waits on whom."""

    exit_code = 3


class NetsimWarning(UserWarning):
    """Input netsim reads but treats differently from what it may seem to ask; the CLI prints it as one line."""
