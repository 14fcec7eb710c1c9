"""Write the generated reference pages of docs/ from the code's declarations:
docs/config-keys.md, every config key with its unit, default and meaning (netsim.app.config_keys).

    python scripts/generate_docs.py           # rewrite the pages
    python scripts/generate_docs.py --check   # exit 1 if a page is not current (tests/app/test_docs.py)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def generated_pages() -> dict[Path, str]:
    """Each generated page's path and its current text."""
    from netsim.app.commands import declared_tables
    from netsim.app.config_keys import config_keys, keys_markdown

    return {DOCS / "config-keys.md": keys_markdown(config_keys(declared_tables()))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the pages are current")
    args = parser.parse_args()
    stale = []
    for path, text in generated_pages().items():
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        if args.check:
            stale.append(path)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    for path in stale:
        print(f"{path} is not current: run python scripts/generate_docs.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
