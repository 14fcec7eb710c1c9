"""The README stays short and points at the reference in docs/, whose generated pages are current
and which MkDocs builds (issue 29, item 7; CI builds the site with --strict: .ci/run)."""

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUP_COMMANDS = [
    'python3 -m venv .venv && . .venv/bin/activate && python -m pip install . && netsim run',
    'python3 -m venv .venv && . .venv/bin/activate && python -m pip install -e ".[test,plot,dask]" && python -m pytest tests',
]


def generator():
    spec = importlib.util.spec_from_file_location("generate_docs", ROOT / "scripts" / "generate_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_pages_are_current():
    for path, text in generator().generated_pages().items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name} is not current: python scripts/generate_docs.py"


def test_the_config_keys_page_lists_every_packet_backend_key():
    from netsim.config import settings_of, toml_key
    from netsim.garnet.config import GarnetConfig

    page = (ROOT / "docs" / "config-keys.md").read_text()
    section = page.split("## garnet", 1)[1].split("\n## ", 1)[0]
    for field in settings_of(GarnetConfig):
        assert f"| `{toml_key(field)}` |" in section
    assert "| `buffer_flits` | flits | unset |" in section


def test_readme_is_short_and_starts_with_the_two_set_up_commands():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 200
    blocks = re.findall(r"```bash\n(.*?)```", readme, re.S)
    assert [block.strip() for block in blocks[:2]] == SETUP_COMMANDS
    assert max(len(line) for line in readme.splitlines()) <= 120


def test_readme_links_resolve_and_every_docs_page_is_in_the_site():
    readme = (ROOT / "README.md").read_text()
    for target in re.findall(r"\]\(([^)#]+)\)", readme):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), f"README links to {target}, which is not there"
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in (ROOT / "docs").glob("*.md"):
        assert f": {page.name}" in nav, f"docs/{page.name} is not in mkdocs.yml's nav"
