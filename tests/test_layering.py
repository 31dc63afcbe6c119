"""The core never imports a default plugin, and every default plugin is registered the one
way a third party's is: an entry point in pyproject.toml."""

from __future__ import annotations

import importlib.metadata as md
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
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
