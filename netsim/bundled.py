"""Find a config by short name among those shipped inside a package, or by file path."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from netsim.config import not_a_regular_file
from netsim.errors import ConfigError


def bundled_names(package: str, suffixes: tuple[str, ...]) -> dict[str, Path]:
    """Short name -> file for the configs shipped in `package` (file stem is the name)."""
    names = {}
    root = resources.files(package)
    for entry in root.iterdir():
        if entry.name.endswith(suffixes) and not entry.name.startswith("_"):
            names[entry.name.rsplit(".", 1)[0]] = Path(str(entry))
    return dict(sorted(names.items()))


def find_config(what: str, name_or_path: str | Path, package: str, suffixes: tuple[str, ...]) -> Path:
    """A bundled config's file, or the file at a path; a clear error lists the bundled names, or says
    what the path is when it is no file (a folder, or a device such as /dev/zero)."""
    path = Path(name_or_path).expanduser()
    try:
        if path.is_file():
            return path
        exists, folder = path.exists(), path.is_dir()
    except OSError as exc:  # e.g. a name too long for the file system
        raise ConfigError(f"{shorten(str(name_or_path))}: not a {what} file ({exc.strerror})") from None
    available = bundled_names(package, suffixes)
    key = str(name_or_path)
    for suffix in suffixes:
        key = key[: -len(suffix)] if key.endswith(suffix) else key
    if key in available:  # (a bundled name wins over a folder of that name here)
        return available[key]
    if folder:
        raise ConfigError(f"{shorten(str(name_or_path))}: is a folder, expected a {what} file")
    if exists:
        raise not_a_regular_file(shorten(str(name_or_path)), what)
    if path.suffix or "/" in str(name_or_path):
        raise ConfigError(f"{shorten(str(name_or_path))}: {what} file not found")
    raise ConfigError(f"unknown {what} '{shorten(str(name_or_path))}': not a file, and not one of the bundled "
                      f"{what}s ({', '.join(available)})")


def shorten(text: str, limit: int = 80) -> str:
    """`text` cut to `limit` characters (with '...') for a one-line message."""
    return text if len(text) <= limit else text[:limit - 3] + "..."
