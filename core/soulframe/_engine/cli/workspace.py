"""``soulframe init`` and ``soulframe identity``: creating a workspace and showing who the
agent is."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .state import State, echo_json, pass_state, user_option

if TYPE_CHECKING:
    pass



def add_workspace_commands(cli: click.Group) -> None:
    cli.add_command(init_command)
    cli.add_command(identity_command)


# --------------------------------------------------------------------------- init


@click.command("init")
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@click.option("--type", "agent_type", type=click.Choice(["open", "predefined"]),
              help="Agent type (default: the configured one). predefined: no BOOTSTRAP.md at "
                   "agent level — each user gets their own first run.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {workspace, created, kept, skipped}.")
@click.option("--no-download", is_flag=True, envvar="SOULFRAME_NO_DOWNLOAD",
              help="Download nothing (the offline embedding model is otherwise fetched once, "
                   "~84 MB, if it is not installed). Also $SOULFRAME_NO_DOWNLOAD=1.")
@pass_state
def init_command(state: State, directory: str | None, agent_type: str | None, as_json: bool,
                 no_download: bool) -> None:
    """Create a workspace from the templates, or add the files it is missing.

    Never overwrites a file: run it again at any time. The workspace and memory/ are
    created with mode 0700 and the files 0600, because they will hold personal memory.
    BOOTSTRAP.md, the first-run ritual, is only created in a new workspace, so running
    init again after the first run does not start it over.

    Then plugins finish the set-up: the offline embedding model (all-MiniLM-L6-v2) is
    downloaded once per user, checked against a pinned SHA-256, so memory search is
    semantic from the start (--no-download to skip).

    \b
      soulframe init ~/agent
      soulframe init ~/agent --type predefined --no-download
    """
    from ..workspace import seed_workspace, workspace_templates

    if directory is not None:
        root = Path(directory).expanduser()
        kind = agent_type or "open"
        if agent_type is None:
            try:
                kind = state.config().agent(state.agent_id).type
            except Exception:  # no usable config: the default type
                kind = "open"
    else:
        spec = state.config().agent(state.agent_id)
        root, kind = spec.workspace, agent_type or spec.type
    templates = [t for t in workspace_templates(state.pm) if kind in t.agent_types]
    created = seed_workspace(root, agent_type=kind, templates=templates)
    root = root.resolve()
    kept = [t.name for t in templates if t.name not in created and _exists(root / t.name)]
    # not created and not there: BOOTSTRAP.md once the first run is over
    skipped = [t.name for t in templates if t.name not in created and t.name not in kept]
    if as_json:
        echo_json({"workspace": str(root), "agent_type": kind, "created": created, "kept": kept,
                   "skipped": skipped})
        _finish_setup(state, root, download=not no_download)
        return
    click.echo(f"workspace: {root} ({kind} agent)")
    for name in created:
        click.echo(f"  created  {name}")
    for name in kept:
        click.echo(f"  kept     {name}")
    for name in skipped:
        why = ("the first run is over (it is only created in a new workspace)"
               if name == "BOOTSTRAP.md" else "see the warning above")
        click.echo(f"  skipped  {name}: {why}")
    if created and "BOOTSTRAP.md" in created:
        click.echo("\nNext: edit SOUL.md, IDENTITY.md and USER.md, or let the agent's first run "
                   "(BOOTSTRAP.md) fill them in.")
    elif not created:
        click.echo("nothing to create: every template file already exists")
    _finish_setup(state, root, download=not no_download)


def _finish_setup(state: State, root: Path, *, download: bool) -> None:
    """The ``workspace_initialized`` hook (the offline model's download lives there)."""
    if state.pm is None:
        return
    try:
        config: Any = state.config()
    except Exception:  # init works without a usable config; plugins get the defaults
        config = None

    def echo(line: str) -> None:
        click.echo(line, err=True)

    from ..plugins import notify

    notify(state.pm, "workspace_initialized", config=config, root=root, download=download, echo=echo)


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


# --------------------------------------------------------------------------- identity


@click.command("identity")
@user_option("Resolve for this user's files (per-user IDENTITY.md).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: identity, sources, warnings.")
@pass_state
def identity_command(state: State, user_id: str | None, as_json: bool) -> None:
    """Show the agent's name, emoji, avatar, creature and vibe, and where each came from
    (ui.* config, the agent's identity config, IDENTITY.md with its line, or the default).

    \b
      soulframe -w ~/agent identity
      soulframe -w ~/agent identity --user alice --json
    """
    from ..model import Session
    from ..prompt.identity import IdentityWarning, explain_identity

    agent = state.agent()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentityWarning)  # listed in the report instead
        report = explain_identity(agent, session=Session.main(user_id=user_id))
    if as_json:
        echo_json(report.to_dict())
        return
    for field, value in report.to_dict()["identity"].items():
        shown = "—" if value is None else value
        click.echo(f"{field:9} {shown}   ({report.sources[field]})")
    for w in report.warnings:
        click.secho(f"warning: {w}", fg="yellow", err=True)


# --------------------------------------------------------------------------- doctor
