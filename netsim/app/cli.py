"""The `netsim` command: parse, run the command by its name, and answer every error in the user's
input with one line and exit 2, never a traceback."""

from __future__ import annotations

import os
import signal
import sys
import warnings

from netsim.app.commands import COMMANDS, command_name
from netsim.app.parser import build_parser
from netsim.errors import NetsimError, NetsimWarning, interrupted_status

def print_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line on stderr (netsim's own without the source location they were raised at)."""
    text = str(message) if issubclass(category, NetsimWarning) else f"{category.__name__}: {message}"
    print(f"netsim: warning: {text}", file=sys.stderr)


class LazyConsole:
    """The console a command prints on: rich's Console with these options, made (and rich imported)
    when first used, so that a --quiet or --json run starts without rich."""

    def __init__(self, **options):
        self.options = options
        self.console = None

    def __getattr__(self, name: str):
        if self.console is None:
            from rich.console import Console

            self.console = Console(**self.options)
        return getattr(self.console, name)


def main(argv: list[str] | None = None) -> int:
    warnings.showwarning = print_warning
    try:
        args = build_parser().parse_args(argv)
        console = LazyConsole(stderr=args.json, quiet=args.quiet)
        return COMMANDS[command_name(args)](args, console) or 0
    except NetsimError as exc:
        print(f"netsim: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:  # netsim.errors.Interrupted says which signal
        return interrupted_status(exc)
    except BrokenPipeError:  # stdout's reader went away (`netsim ... --json | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
