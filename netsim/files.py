"""Files netsim writes are whole or absent, never torn: every writer goes through here.

A file is written to a temporary file beside it and renamed into place once all of it is on disk
(`whole_file`, `write_whole`); a failure (a full disk, an unwritable place, Ctrl-C) leaves the old
file as it was and no temporary file, and an OSError becomes one line naming the file and the
cause ("No space left on device"). A file that grows line by line (a sweep's results) appends each
line whole or not at all (`append_whole`).
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path

from netsim.errors import ConfigError

NAME_LIMIT = 100  # characters of a folder name made from a run's name (folder_name)


def cannot_write(path, exc: OSError, what: str = "") -> ConfigError:
    """The one-line error of a write that failed: 'PATH: cannot write[ WHAT] (CAUSE)'."""
    return ConfigError(f"{path}: cannot write{' ' + what if what else ''} ({exc.strerror or exc})")


@contextmanager
def whole_file(path: Path, binary: bool = False, what: str = ""):
    """A stream to write `path` through (text, UTF-8, unless `binary`): it reaches `path` by a rename
    when the block ends without error; otherwise nothing is left. `what` names the file in errors."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") if binary else open(temporary, "w", encoding="utf-8") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        raise cannot_write(path, exc, what) from None
    finally:
        temporary.unlink(missing_ok=True)


def write_whole(path: Path, data: str | bytes, what: str = "") -> None:
    """Write `data` (text or bytes) to `path` whole or not at all (see `whole_file`)."""
    with whole_file(path, binary=isinstance(data, bytes), what=what) as out:
        out.write(data)


def append_whole(stream, text: str, what: str = "") -> None:
    """Append `text` to the file `stream` (opened unbuffered for appending: "ab", buffering=0), on
    disk before returning; when it cannot all be written, the file is cut back to where it was, so
    no torn line is left."""
    size = os.fstat(stream.fileno()).st_size
    try:
        rest = memoryview(text.encode("utf-8"))
        while rest:
            rest = rest[stream.write(rest):]
        os.fsync(stream.fileno())
    except OSError as exc:
        os.ftruncate(stream.fileno(), size)
        raise cannot_write(stream.name, exc, what) from None

def folder_name(name: str) -> str:
    """`name` (a run's name, from a config file the user may not have written) as one harmless
    path component: no separators, no leading dots, printable, at most NAME_LIMIT characters."""
    safe = re.sub(r"[^A-Za-z0-9._+=-]+", "_", name).lstrip(".")[:NAME_LIMIT]
    return safe or "run"
