"""What default plugins may import of the core is declared, so it cannot grow silently.

``[tool.soulframe.plugin-surface]`` in pyproject.toml lists the public API: ``soulframe``,
``soulframe.hookspecs``, ``soulframe.kit``, ``soulframe.memorykit``, ``soulframe.cli`` and
``soulframe.testing``; every other core module is the engine's. This test reads every
plugin's imports (including those under ``TYPE_CHECKING`` and inside functions, which
import-linter counts too) and fails on one outside the list; the import-linter contract
beside it forbids the rest in ``lint-imports``.
"""

from __future__ import annotations

import ast
import importlib
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
SURFACE = set(PYPROJECT["tool"]["soulframe"]["plugin-surface"]["modules"])
CONTRACT = next(c for c in PYPROJECT["tool"]["importlinter"]["contracts"]
                if c["name"].startswith("Default plugins import only"))
PUBLIC = ["soulframe", "soulframe.hookspecs", "soulframe.kit", "soulframe.memorykit",
          "soulframe.cli", "soulframe.testing"]
#: the public modules that re-export the engine's names, imported on first use
FACADES = ["soulframe.kit", "soulframe.memorykit", "soulframe.cli"]


def forbidden(module: str) -> bool:
    """import-linter forbids a listed package's submodules too."""
    return any(module == f or module.startswith(f + ".") for f in CONTRACT["forbidden_modules"])


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
        "soulframe.hookspecs, soulframe.kit, soulframe.memorykit, soulframe.cli, "
        "soulframe.testing; docs/api.md) or add the name to one of them")


def test_a_new_private_import_is_caught(tmp_path: Path) -> None:
    """The check reads the files themselves: a plugin module that imports the engine, at the
    top, in a function or for type checking only, is reported by path and module."""
    plugin = tmp_path / "plugins" / "soulframe_chat" / "settings.py"
    plugin.parent.mkdir(parents=True)
    plugin.write_text((REPO / "plugins" / "soulframe_chat" / "settings.py").read_text()
                      + "\n\ndef later():\n    from soulframe._engine.memory.index import MemoryIndex\n"
                      + "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                      + "    import soulframe._engine.skills.skillset\n")
    found = {line.split(" imports ")[1] for line in private_imports_under(tmp_path, [plugin])}
    assert found == {"soulframe._engine.memory.index", "soulframe._engine.skills.skillset"}
    assert all(forbidden(m) for m in found)


def private_imports_under(root: Path, files: list[Path]) -> list[str]:
    return sorted(f"{path.relative_to(root)} imports {mod}"
                  for path in files for mod in core_modules(str(path), path.read_text())
                  if mod not in SURFACE)


def test_the_surface_is_the_public_api() -> None:
    """At most six public modules, and they are the ones docs/api.md documents."""
    assert sorted(SURFACE) == sorted(PUBLIC)
    assert len(SURFACE) <= 6


def test_plugins_need_no_agent_class() -> None:
    """Plugins are typed against ``soulframe.AgentLike``; the engine's ``Agent`` class is not
    part of what they may import (they build one, where they must, through ``soulframe.Agent``)."""
    assert "soulframe._engine.agent" not in SURFACE
    agent_module = type(importlib.import_module("soulframe").Agent.__module__)
    assert agent_module is str
    assert forbidden(importlib.import_module("soulframe").Agent.__module__)


def test_the_surface_and_the_import_linter_contract_agree() -> None:
    """Every core module is either public or forbidden to plugins: a new engine module is
    private without anyone listing it."""
    core = all_core_modules()
    assert SURFACE <= core, f"declared but gone: {sorted(SURFACE - core)}"
    listed = set(CONTRACT["forbidden_modules"])
    assert listed <= core, f"forbidden but gone: {sorted(listed - core)}"
    assert not any(forbidden(m) for m in SURFACE)
    unclaimed = sorted(m for m in core - SURFACE if not forbidden(m))
    assert not unclaimed, f"neither public nor forbidden to plugins: {unclaimed}"
    plugins = {p.name for p in (REPO / "plugins").iterdir() if (p / "__init__.py").is_file()}
    assert set(CONTRACT["source_modules"]) == plugins
    assert CONTRACT.get("allow_indirect_imports") is True  # the surface itself imports the engine


def type_checking_names(module: str) -> dict[str, str]:
    """public name -> ``module`` or ``module:attr`` as the facade's TYPE_CHECKING imports say."""
    path = REPO / "core" / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = path.with_suffix("") / "__init__.py"
    out: dict[str, str] = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module
                for alias in imp.names:
                    public = alias.asname or alias.name
                    out[public] = imp.module if public == alias.name else f"{imp.module}:{alias.name}"
    return out


@pytest.mark.parametrize("module", FACADES)
def test_a_facade_declares_each_name_once_for_readers_and_type_checkers(module: str) -> None:
    """The lazy table and the imports type checkers read name the same objects, and every
    declared name resolves."""
    facade = importlib.import_module(module)
    assert type_checking_names(module) == facade._HOMES
    assert facade.__all__ == sorted(facade._HOMES)
    for name in facade.__all__:
        assert getattr(facade, name) is not None, name
    with pytest.raises(AttributeError, match="no_such_helper"):
        facade.no_such_helper  # noqa: B018


@pytest.mark.parametrize("module", ["soulframe", *FACADES])
def test_type_checkers_reject_a_misspelt_public_name(module: str) -> None:
    """A module-level ``__getattr__`` makes mypy accept any name imported from the module, so
    ``from soulframe.kit import post_jsno`` would type-check and fail only when run: the lazy
    lookup must sit under ``if not TYPE_CHECKING``."""
    path = REPO / "core" / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = path.with_suffix("") / "__init__.py"
    visible: list[str] = []
    for node in ast.parse(path.read_text()).body:  # top level only: an `if` block is not visible
        if isinstance(node, ast.FunctionDef):
            visible.append(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                visible += [n.id for n in names if isinstance(n, ast.Name)]
    assert "__getattr__" not in visible, f"{path.relative_to(REPO)}: module __getattr__ visible to type checkers"


def test_public_names_do_not_clash() -> None:
    """One name means one thing across the public modules."""
    seen: dict[str, object] = {}
    for module in PUBLIC:
        mod = importlib.import_module(module)
        for name in mod.__all__:
            value = getattr(mod, name)
            assert seen.setdefault(name, value) is value, f"{module}.{name} means two things"
