"""``soulframe install`` / ``uninstall`` run pip in soulframe's own environment and report the
plugins that appeared or went; ``soulframe plugins`` lists the same plugins in text and JSON.

The install test uses a throwaway virtual environment that sees this one's packages through
a ``.pth`` file, so pip changes that environment and never the one the suite runs in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

PLUGIN = '''\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "soulframe-fresh-plugin"
version = "0.1.0"

[project.entry-points.soulframe]
soulframe_fresh = "soulframe_fresh"
'''


@pytest.fixture(scope="module")
def throwaway_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("env")
    venv.create(root / "venv", with_pip=False)
    py = root / "venv" / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # this environment's packages (soulframe, pip, its dependencies) are visible there too;
    # what pip installs goes into the throwaway one
    (site / "outer.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    return py


def _setuptools_builds_wheels() -> bool:
    # asked of the metadata, not by importing setuptools: its distutils shim refuses to load in
    # a process where another test already imported the standard library's distutils (via pip)
    from importlib import metadata

    try:
        version = metadata.version("setuptools")
    except metadata.PackageNotFoundError:
        return False
    major, minor = (int(x) for x in version.split(".")[:2])
    return (major, minor) >= (70, 1)


def _soulframe(py: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONNOUSERSITE": "1"}
    return subprocess.run([str(py), "-m", "soulframe", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_install_and_uninstall_report_the_plugins(throwaway_env: Path, tmp_path: Path) -> None:
    src = tmp_path / "fresh"
    src.mkdir()
    (src / "pyproject.toml").write_text(PLUGIN)
    (src / "soulframe_fresh.py").write_text(
        "from soulframe import Section, hookimpl\n\n@hookimpl\ndef register_prompt_sections():\n"
        "    return [Section(name='fresh', order=8.7, zone='dynamic', render=lambda ctx: '## Fresh\\nhello')]\n")
    before = json.loads(_soulframe(throwaway_env, "plugins", "--json").stdout)
    assert "soulframe_fresh" not in {r["name"] for r in before}

    # setuptools >= 70.1 builds wheels itself: then no build environment is downloaded
    offline = _setuptools_builds_wheels()
    out = _soulframe(throwaway_env, "install", str(src), *(["--no-build-isolation"] if offline else []), "--json")
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert report["added"] == [{"plugin": "soulframe_fresh", "dist": "soulframe-fresh-plugin"}]
    rows = json.loads(_soulframe(throwaway_env, "plugins", "--json").stdout)
    assert "soulframe_fresh" in {r["name"] for r in rows}

    gone = _soulframe(throwaway_env, "uninstall", "soulframe-fresh-plugin", "-y")
    assert gone.returncode == 0, gone.stderr[-3000:]
    assert "- plugin soulframe_fresh (was from soulframe-fresh-plugin)" in gone.stdout
    rows = json.loads(_soulframe(throwaway_env, "plugins", "--json").stdout)
    assert "soulframe_fresh" not in {r["name"] for r in rows}


def test_uninstall_without_a_terminal_asks_for_yes_instead_of_crashing(cli) -> None:
    out = cli("uninstall", "soulframe-quiet-hours")  # stdin is not a terminal here
    assert out.returncode == 2 and "-y" in out.stderr
    assert "Traceback" not in out.stderr and "EOFError" not in out.stderr


def test_uninstall_refuses_soulframe_itself(cli) -> None:
    out = cli("uninstall", "soulframe", "-y")
    assert out.returncode == 2 and "remove soulframe itself" in out.stderr


@pytest.mark.parametrize("all_flag", [[], ["--all"]])
def test_plugins_lists_the_same_plugins_in_text_and_json(cli, all_flag: list[str]) -> None:
    rows = json.loads(cli("plugins", "--json", *all_flag, check=True).stdout)
    text = cli("plugins", *all_flag, check=True).stdout
    listed = {line.split()[0] for line in text.splitlines() if line and not line.startswith((" ", "("))
              and not line.startswith("no third-party")}
    assert listed == {r["name"] for r in rows}
    assert ("soulframe_memory" in listed) == bool(all_flag)


def test_install_needs_a_package(cli) -> None:
    out = cli("install")
    assert out.returncode == 2 and "at least one package" in out.stderr


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip(reason="the throwaway environment uses bin/python")


def test_shell_completion_completes_commands_and_plugin_subcommands(tmp_path: Path) -> None:
    env = {**os.environ, "_SOULFRAME_COMPLETE": "bash_source"}
    script = subprocess.run([sys.executable, "-m", "soulframe"], env=env, capture_output=True,
                            text=True, timeout=60, cwd=tmp_path)
    assert "_soulframe_completion" in script.stdout
    env = {**os.environ, "_SOULFRAME_COMPLETE": "bash_complete", "COMP_WORDS": "soulframe memory se",
           "COMP_CWORD": "2"}
    done = subprocess.run([sys.executable, "-m", "soulframe"], env=env, capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    assert "plain,search" in done.stdout.splitlines()


def test_without_pip_uv_is_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.util

    from soulframe._engine.cli import install

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pip" else real(name, *a))
    fake_uv = tmp_path / "uv"
    fake_uv.write_text("#!/bin/sh\n")
    fake_uv.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert install.pip_command(["install", "x"]) == [str(fake_uv), "pip", "install", "--python", sys.executable, "x"]
    assert install.pip_command(["uninstall", "x", "-y"]) == [str(fake_uv), "pip", "uninstall", "--python", sys.executable, "x"]
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(Exception, match="uv is not on PATH"):
        install.pip_command(["install", "x"])
