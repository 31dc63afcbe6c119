"""What default plugins may import of the core is declared, so it cannot grow silently.

``[tool.soulframe.plugin-surface]`` in pyproject.toml lists the core modules the default
plugins import today; every other core module is private to the core. This test reads every
plugin's imports (including those under ``TYPE_CHECKING`` and inside functions, which
import-linter counts too) and fails on one outside the list; the import-linter contract
beside it forbids today's private modules in ``lint-imports``.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
SURFACE = set(PYPROJECT["tool"]["soulframe"]["plugin-surface"]["modules"])
CONTRACT = next(c for c in PYPROJECT["tool"]["importlinter"]["contracts"]
                if c["name"].startswith("Default plugins import only"))


def core_modules(name: str, source: str) -> set[str]:
    """The ``soulframe`` modules ``source`` imports (``from soulframe.x import y`` -> ``soulframe.x``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {n for n in names if n == "soulframe" or n.startswith("soulframe.")}
    return found


def private_imports(files: list[Path]) -> list[str]:
    return sorted(f"{path.relative_to(REPO)} imports {mod}"
                  for path in files for mod in core_modules(str(path), path.read_text())
                  if mod not in SURFACE)


def all_core_modules() -> set[str]:
    out = set()
    for path in (REPO / "core").rglob("*.py"):
        parts = list(path.relative_to(REPO / "core").with_suffix("").parts)
        out.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def test_default_plugins_import_only_the_declared_surface() -> None:
    files = sorted((REPO / "plugins").rglob("*.py"))
    assert files
    assert private_imports(files) == [], (
        "a default plugin imports a private core module: use the public API (soulframe, "
        "soulframe.hookspecs, soulframe.testing) or declare it in pyproject.toml "
        "[tool.soulframe.plugin-surface]")


def test_a_new_private_import_is_caught(tmp_path: Path) -> None:
    plugin = REPO / "plugins" / "soulframe_chat" / "settings.py"
    source = plugin.read_text() + "\n\ndef later():\n    from soulframe.memory.index import MemoryIndex\n"
    assert core_modules("x", source) - SURFACE == {"soulframe.memory.index"}
    hidden = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import soulframe.skills.skillset\n"
    assert core_modules("y", hidden) - SURFACE == {"soulframe.skills.skillset"}


def test_the_surface_lists_only_what_plugins_import() -> None:
    """The list shrinks with the plugins: a module no plugin imports any more leaves it (the
    public three stay, whether or not a default plugin needs them)."""
    used: set[str] = set()
    for path in (REPO / "plugins").rglob("*.py"):
        used |= core_modules(str(path), path.read_text())
    stale = SURFACE - used - {"soulframe", "soulframe.hookspecs", "soulframe.testing"}
    assert not stale, f"no default plugin imports these any more, drop them from the surface: {sorted(stale)}"


def test_plugins_need_no_agent_class() -> None:
    """Plugins are typed against ``soulframe.AgentLike``; the engine's ``Agent`` class is not
    part of what they may import (they build one, where they must, through ``soulframe.Agent``)."""
    assert "soulframe.agent" not in SURFACE
    assert "soulframe.agent" in CONTRACT["forbidden_modules"]


def test_the_surface_and_the_import_linter_contract_agree() -> None:
    core = all_core_modules()
    forbidden = set(CONTRACT["forbidden_modules"])
    assert SURFACE <= core, f"declared but gone: {sorted(SURFACE - core)}"
    assert forbidden <= core, f"forbidden but gone: {sorted(forbidden - core)}"
    assert not SURFACE & forbidden
    assert {"soulframe", "soulframe.hookspecs", "soulframe.testing"} <= SURFACE
    plugins = {p.name for p in (REPO / "plugins").iterdir() if (p / "__init__.py").is_file()}
    assert set(CONTRACT["source_modules"]) == plugins
    assert CONTRACT.get("allow_indirect_imports") is True  # the surface itself imports the engine
