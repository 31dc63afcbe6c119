"""The documentation cannot go stale: generated pages match the code, every Python example
in docs/ runs, and the site builds with --strict."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from soulframe import _docgen, hookspecs

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
UPDATE = os.environ.get("SOULFRAME_UPDATE_DOCS") == "1"


def check_generated(path: Path, expected: str) -> None:
    if UPDATE:
        path.write_text(expected)
    assert path.read_text() == expected, f"{path} is stale: rerun with SOULFRAME_UPDATE_DOCS=1"


def test_hook_reference_is_generated_from_the_hookspecs() -> None:
    check_generated(DOCS / "plugins" / "hooks.md", _docgen.hooks_reference())


def test_api_page_is_generated_from_the_public_modules() -> None:
    check_generated(DOCS / "api.md", _docgen.api_reference())


def test_api_page_lists_exactly_the_public_surface() -> None:
    """docs/api.md documents the six modules plugins may import (pyproject's plugin-surface)
    and each name in their ``__all__``, no more and no fewer."""
    import importlib
    import tomllib

    surface = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["soulframe"]["plugin-surface"]["modules"]
    page = (DOCS / "api.md").read_text()
    assert re.findall(r"^## `([\w.]+)`$", page, re.M) == list(_docgen.PUBLIC_MODULES)
    assert sorted(_docgen.PUBLIC_MODULES) == sorted(surface)
    listed = re.findall(r"^\| `(\w+)` \|", page, re.M)
    expected = [n for m in _docgen.PUBLIC_MODULES for n in sorted(importlib.import_module(m).__all__, key=str.lower)
                if not (m == "soulframe.hookspecs" and n in hookspecs.HOOK_NAMES)]
    assert listed == expected


def test_hook_reference_renders_as_prose_not_code_blocks() -> None:
    """Every docstring line after the first is indented in the source; left as it was,
    Markdown showed each hook's description as a code block."""
    import markdown

    html = markdown.markdown((DOCS / "plugins" / "hooks.md").read_text(), extensions=["admonition", "toc"])
    assert "<pre>" not in html
    assert "<p>Called once per" in html


def test_every_hook_is_documented_with_its_signature() -> None:
    text = (DOCS / "plugins" / "hooks.md").read_text()
    from soulframe._engine.plugins import make_plugin_manager

    pm = make_plugin_manager(load_entrypoints=False)
    hooks = [name for name in dir(pm.hook) if not name.startswith("_")]
    assert sorted(hooks) == sorted(hookspecs.HOOK_NAMES)
    for name in hooks:
        args = ", ".join(getattr(pm.hook, name).spec.argnames)
        assert f"## {name}({args})" in text


def test_configuration_keys_table_is_current() -> None:
    path = DOCS / "configuration.md"
    text = path.read_text()
    start, end = "<!-- keys: generated from core/soulframe/_engine/config.py by tests/project/test_docs.py -->\n", "<!-- end keys -->"
    head, rest = text.split(start)
    _, tail = rest.split(end)
    expected = head + start + _docgen.configuration_reference() + end + tail
    check_generated(path, expected)


def python_blocks() -> list[tuple[str, int, str]]:
    blocks = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text()
        for m in re.finditer(r"^```python\n(.*?)^```", text, re.M | re.S):
            line = text[: m.start()].count("\n") + 1
            blocks.append((str(page.relative_to(REPO)), line, m.group(1)))
    return blocks


@pytest.mark.parametrize("page,line,code", python_blocks(), ids=lambda v: str(v) if not isinstance(v, str) or "\n" not in v else "")
def test_python_examples_in_docs_run(page: str, line: int, code: str, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"{page}:{line} failed:\n{out.stderr}"


def test_site_builds_strict(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).with_name("mkdocs")
    out = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
