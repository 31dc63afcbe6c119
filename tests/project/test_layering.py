"""The core never imports a default plugin, no plugin imports another plugin, and every
default plugin is registered the one way a third party's is: an entry point in
pyproject.toml."""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def plugin_dirs() -> set[str]:
    return {p.name for p in (REPO / "plugins").iterdir() if p.is_dir() and p.name.startswith("soulframe_")}


def test_core_never_imports_a_plugin() -> None:
    offenders = []
    for path in (REPO / "core" / "soulframe").rglob("*.py"):
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            if re.match(r"\s*(from|import)\s+soulframe_\w+", line):
                offenders.append(f"{path.relative_to(REPO)}:{lineno}: {line.strip()}")
    assert not offenders, "the core must not import default plugins:\n" + "\n".join(offenders)


def test_plugin_dirs_entry_points_and_wheel_packages_agree() -> None:
    entry_points = set(PYPROJECT["project"]["entry-points"]["soulframe"])
    wheel = {Path(p).name for p in PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
             if p.startswith("plugins/")}
    assert plugin_dirs() == entry_points == wheel
    for name, target in PYPROJECT["project"]["entry-points"]["soulframe"].items():
        assert target == name, "entry-point name = the plugin's import name (STYLE.md §7.1)"


def test_installed_metadata_matches_pyproject() -> None:
    installed = {ep.name for ep in md.entry_points(group="soulframe")
                 if ep.dist is not None and ep.dist.name == "soulframe"}
    assert installed == plugin_dirs(), "reinstall: pip install -e ."


def test_every_package_is_typed() -> None:
    assert (REPO / "core" / "soulframe" / "py.typed").exists()
    for name in plugin_dirs():
        assert (REPO / "plugins" / name / "py.typed").exists(), name


def test_import_linter_contract_lists_every_plugin_and_passes() -> None:
    contracts = PYPROJECT["tool"]["importlinter"]["contracts"]
    forbidden = set(contracts[0]["forbidden_modules"])
    assert forbidden == plugin_dirs()
    lint = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run([str(lint), "--config", str(REPO / "pyproject.toml")], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def foreign_plugin_imports(source: str, own: str) -> list[tuple[int, str]]:
    """(line, module) of every import in ``source`` of a ``soulframe_*`` package other than
    ``own``: import statements anywhere (TYPE_CHECKING blocks and functions included) and
    ``importlib.import_module("soulframe_...")`` / ``__import__`` calls with a literal name."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                names = [node.args[0].value]
        for name in names:
            top = name.split(".")[0]
            if top.startswith("soulframe_") and top != own:
                found.append((node.lineno, name))
    return found


def test_the_cross_plugin_import_check_catches_every_form() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import soulframe_memory.tools\n"
        "from soulframe._engine.model import Session\n"
        "from . import rules\n"
        "if TYPE_CHECKING:\n"
        "    from soulframe_sqlite import default_path\n"
        "def f():\n"
        "    import importlib\n"
        "    importlib.import_module('soulframe_chat.models')\n"
        "    from soulframe_routines.boot import run_boot\n"
    )
    found = sorted(foreign_plugin_imports(source, "soulframe_routines"))
    assert found == [(2, "soulframe_memory.tools"), (6, "soulframe_sqlite"),
                     (9, "soulframe_chat.models")]


def test_no_plugin_imports_another_plugin() -> None:
    """Plugins talk through the core's hooks and contracts only, so any one of them can be
    disabled or replaced by a third party's without breaking the others."""
    offenders = []
    for name in sorted(plugin_dirs()):
        for path in sorted((REPO / "plugins" / name).rglob("*.py")):
            for lineno, module in foreign_plugin_imports(path.read_text(), name):
                offenders.append(f"{path.relative_to(REPO)}:{lineno}: imports {module}")
    assert not offenders, "plugins must not import each other:\n" + "\n".join(offenders)
