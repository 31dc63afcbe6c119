"""The commands: ``agents list|add`` and ``backup init|commit|status|restore``.

``agents`` may already exist (soulframe_routines adds ``agents summon`` to it): the
commands join it when it exists and create it otherwise.
"""

from __future__ import annotations

import datetime as _dt
import shlex
from pathlib import Path
from typing import Any

import click
from soulframe import SoulframeError
from soulframe.cli import State, command_group, echo_json, pass_state

AGENTS_HELP = "Several agents on one host: list and add them, summon their context files."


def add_commands(cli: click.Group) -> None:
    agents = command_group(cli, "agents", AGENTS_HELP)
    agents.add_command(agents_list)
    agents.add_command(agents_add)
    cli.add_command(backup_group)


# --------------------------------------------------------------------------- agents


@click.command("list")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {config, agents: [{id, type, workspace, exists, initialised, "
                   "identity, memory, ...}]}.")
@pass_state
def agents_list(state: State, as_json: bool) -> None:
    """Every configured agent ([[agents]] in soulframe.toml): its workspace, whether it is
    initialised, its resolved identity and its memory index. Builds nothing.

    \b
      soulframe agents list
      soulframe --config ~/agents/soulframe.toml agents list --json
    """
    from .agents import describe_agents

    cfg = state.config()
    rows = describe_agents(cfg, state.pm)
    if as_json:
        echo_json({"config": str(cfg.path) if cfg.path else None, "agents": rows})
        return
    click.echo(f"config: {cfg.path or '(none: the default agent only)'}")
    for row in rows:
        ident = row["identity"] or {}
        label = " ".join(x for x in (ident.get("emoji"), ident.get("name")) if x) or "?"
        default = ", default" if row["default"] else ""
        click.secho(f"\n{row['id']}", bold=True, nl=False)
        click.echo(f"  ({row['type']}{default})")
        if not row["exists"]:
            state_text = "does not exist — run `soulframe agents add` or `soulframe init`"
        elif not row["initialised"]:
            state_text = f"not initialised: missing {', '.join(row['missing'])}"
        else:
            state_text = "initialised"
        click.echo(f"  workspace  {row['workspace']}  ({state_text})")
        if row["identity"] is not None:
            click.echo(f"  identity   {label}  (name from {row['identity_source']})")
        mem = row["memory"]
        if mem is not None:
            click.echo(f"  memory     {_memory_text(mem)}")
        for p in row["problems"]:
            click.secho(f"  problem    {p}", fg="red")


def _memory_text(mem: dict[str, Any]) -> str:
    if mem["index"] == "disabled":
        return "disabled"
    files = f"{mem['files']} file{'s' if mem['files'] != 1 else ''}"
    if mem["index"] == "ok":
        stale = f", {mem['stale']} stale" if mem["stale"] else ""
        return f"{files}; index: {mem['indexed_files']} indexed, {mem['chunks']} chunks{stale}"
    if mem["index"] == "not built":
        return f"{files}; index not built yet (the first search builds it)"
    return f"{files}; index in {mem['backend']} (see `soulframe memory status`)"


@click.command("add")
@click.argument("agent_id", metavar="ID")
@click.option("--workspace", "workspace_dir", type=click.Path(file_okay=False),
              help="The agent's workspace (default: workspace-ID next to the default workspace).")
@click.option("--type", "agent_type", type=click.Choice(["open", "predefined"]),
              help="Agent type (default: agent_type from the config, open).")
@click.option("--name", help="Display name (identity.name; wins over IDENTITY.md).")
@click.option("--emoji", help="Emoji (identity.emoji).")
@click.option("--no-seed", is_flag=True, help="Only edit the config; do not create the workspace files.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {id, workspace, type, config, created_config, wrote_default, seeded}.")
@pass_state
def agents_add(state: State, agent_id: str, workspace_dir: str | None, agent_type: str | None,
               name: str | None, emoji: str | None, no_seed: bool, as_json: bool) -> None:
    """Add an agent: append an [[agents]] block to the config file in use (--config PATH,
    <workspace>/soulframe.toml, or the user config dir's soulframe.toml, created when there
    is none) and seed its workspace.

    \b
      soulframe agents add aria --name Aria --emoji 🌿
      soulframe agents add devbot --workspace ~/devbot-workspace --type predefined
    """
    from soulframe.kit import find_config_file, seed_workspace, workspace_templates

    from .agents import AddResult, add_agent, choose_config_file

    known = state.config()  # an explicit --config must exist (an empty file will do)
    path, exists = choose_config_file(known.path)
    if workspace_dir:
        workspace = Path(workspace_dir).expanduser().resolve()
    else:
        workspace = (Path(str(known.get("workspace"))).expanduser().parent
                     / f"workspace-{agent_id}").resolve()
    identity = {k: v for k, v in (("name", name), ("emoji", emoji)) if v}
    default_ws = Path(state.workspace).expanduser().resolve() if state.workspace else None
    path, wrote_default = add_agent(
        path, exists=exists, agent_id=agent_id, workspace=workspace, agent_type=agent_type,
        identity=identity, known=known, default_workspace=default_ws)
    kind = agent_type or str(known.get("agent_type"))
    seeded: list[str] = []
    if not no_seed:
        templates = [t for t in workspace_templates(state.pm) if kind in t.agent_types]
        seeded = seed_workspace(workspace, agent_type=kind, templates=templates)
    result = AddResult(agent_id, workspace, kind, path.resolve(), not exists, wrote_default, seeded)
    if as_json:
        echo_json(result.to_dict())
        return
    click.echo(f"{'created' if not exists else 'updated'} {result.config_path}: added agent {agent_id!r}")
    if wrote_default:
        click.echo("  (also wrote an explicit [[agents]] id = \"default\" first, so the default "
                   "agent stays the default)")
    click.echo(f"workspace: {workspace} ({kind} agent)")
    for n in seeded:
        click.echo(f"  created  {n}")
    try:
        found = find_config_file(None, None)
    except SoulframeError:
        found = None
    select = (f"soulframe --agent {agent_id}" if found is not None and found.resolve() == result.config_path
              else f"soulframe --config {result.config_path} --agent {agent_id}")
    click.echo(f"\nNext: edit {workspace / 'SOUL.md'} and IDENTITY.md, then:\n"
               f"  {select} prompt\n  soulframe agents list")


# --------------------------------------------------------------------------- backup


@click.group("backup")
def backup_group() -> None:
    """Keep the workspace in a private git repository (soulframe never pushes).

    \b
      soulframe backup init            git init, .gitignore, first commit
      soulframe backup commit          commit today's changes ("memory update YYYY-MM-DD")
      soulframe backup status          uncommitted files, last commit, remotes
      soulframe backup restore URL DIR clone a backup on a new machine, made private
    """


def _backup_root(state: State) -> Path:
    return Path(state.agent().root)


@backup_group.command("init")
@click.option("--exclude-daily", is_flag=True,
              help="Keep the daily logs (memory/*.md and memory/archive/) out of git.")
@click.option("--no-commit", is_flag=True, help="Do not make the initial commit.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {workspace, created_repo, parent_repo, gitignore_added, commit, notes}.")
@pass_state
def backup_init(state: State, exclude_daily: bool, no_commit: bool, as_json: bool) -> None:
    """Make the workspace a git repository (if it is in none), add a .gitignore that keeps
    indexes, databases and temporary files out, and commit everything ("initial workspace").

    \b
      soulframe -w ~/agent backup init
      soulframe -w ~/agent backup init --exclude-daily --no-commit
    """
    from . import backup

    root = _backup_root(state)
    cfg = state.config()
    extra = [Path(str(cfg.get("state_dir")))]
    if cfg.get("store.path"):
        extra.append(Path(str(cfg.get("store.path"))))
    result = backup.init(root, exclude_daily=exclude_daily, commit=not no_commit, extra_dirs=extra)
    if as_json:
        echo_json(result.to_dict())
        return
    root = result.workspace
    if result.created_repo:
        click.echo(f"initialised a git repository in {root}")
    else:
        click.echo(f"{root} is already a git repository")
    for note in result.notes:
        click.secho(f"note: {note}", fg="yellow")
    if result.gitignore_added:
        click.echo(f".gitignore: added {', '.join(result.gitignore_added)}")
    if result.commit:
        click.echo(f"committed: initial workspace ({result.commit[:7]})")
    click.echo("\nsoulframe never pushes. To keep a copy elsewhere, add a PRIVATE remote and push:\n"
               f"  git -C {shlex.quote(str(root))} remote add origin git@github.com:you/agent-workspace.git\n"
               f"  git -C {shlex.quote(str(root))} push -u origin HEAD\n"
               "Then after changes: soulframe backup commit")


@backup_group.command("commit")
@click.option("-m", "--message", help='Commit message (default: "memory update YYYY-MM-DD").')
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {committed, message, sha, files}.")
@pass_state
def backup_commit(state: State, message: str | None, as_json: bool) -> None:
    """Commit every change in the workspace (git add -A + commit). Nothing to commit is not
    an error.

    \b
      soulframe -w ~/agent backup commit
      soulframe -w ~/agent backup commit -m "new skill: triage" --json
    """
    from soulframe.kit import agent_timezone

    from . import backup

    agent = state.agent()
    if message is None:
        message = backup.default_message(_dt.datetime.now(agent_timezone(agent)).date())
    result = backup.commit_all(Path(agent.root), message)
    if as_json:
        echo_json(result.to_dict())
        return
    if not result.committed:
        click.echo("nothing to commit: the workspace has no changes since the last commit")
        return
    n = len(result.files)
    click.echo(f"committed {n} file{'s' if n != 1 else ''}: {message} ({(result.sha or '')[:7]})")


@backup_group.command("status")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {workspace, repo, inside, branch, dirty: [{status, path}], "
                   "last_commit: {sha, date, message}, remotes: [{name, url}], upstream, ahead; problem if the workspace is missing}.")
@pass_state
def backup_status(state: State, as_json: bool) -> None:
    """Is the workspace in a git repository, what is uncommitted, the last commit, the
    remotes (without passwords) and commits not pushed yet.

    \b
      soulframe -w ~/agent backup status
      soulframe -w ~/agent backup status --json
    """
    from . import backup

    st = backup.status(_backup_root(state))
    if as_json:
        echo_json(st)
        return
    click.echo(f"workspace    {st['workspace']}")
    if st.get("problem"):
        click.echo(f"repository   none: {st['problem']} (`soulframe init` creates it)")
        return
    if not st["repo"]:
        inside = f" of its own (it is inside {st['inside']})" if st["inside"] else ""
        click.echo(f"repository   none{inside} — run `soulframe backup init`")
        return
    click.echo(f"repository   yes, branch {st['branch'] or '(detached)'}")
    last = st["last_commit"]
    click.echo(f"last commit  {last['date']}  {last['message']}  ({last['sha'][:7]})" if last
               else "last commit  none yet — run `soulframe backup commit`")
    dirty = st["dirty"]
    click.echo(f"uncommitted  {len(dirty)} file{'s' if len(dirty) != 1 else ''}"
               + (" — run `soulframe backup commit`" if dirty else ""))
    for d in dirty[:20]:
        click.echo(f"  {d['status']:2} {d['path']}")
    if len(dirty) > 20:
        click.echo(f"  ... and {len(dirty) - 20} more")
    if st["remotes"]:
        for r in st["remotes"]:
            click.echo(f"remote       {r['name']}  {r['url']}")
        if st["ahead"]:
            click.echo(f"unpushed     {st['ahead']} commit{'s' if st['ahead'] != 1 else ''} "
                       f"(push them yourself: git -C {shlex.quote(str(st['workspace']))} push)")
    else:
        click.echo("remote       none (a local history only; add one with `git remote add origin URL`)")


@backup_group.command("restore")
@click.argument("source")
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {workspace, missing}.")
@pass_state
def backup_restore(state: State, source: str, directory: str | None, as_json: bool) -> None:
    """Clone a workspace backup (SOURCE: any git URL or path) into DIRECTORY (default: the
    configured workspace, which must not exist yet or be empty), made private again.

    \b
      soulframe backup restore git@github.com:you/agent-workspace.git ~/agent
      soulframe backup restore /mnt/usb/agent-workspace   # into the configured workspace
    """
    from . import backup

    dest = Path(directory).expanduser() if directory else Path(state.config().agent(state.agent_id).workspace)
    missing = backup.restore(source, dest)
    dest = dest.resolve()
    if as_json:
        echo_json({"workspace": str(dest), "missing": missing})
        return
    click.echo(f"restored {source} into {dest} (directories 0700, files 0600)")
    if missing:
        click.secho(f"missing: {', '.join(missing)} — `soulframe -w {dest} init` adds them from templates",
                    fg="yellow")
    click.echo("The memory index lives outside the workspace: the first search rebuilds it.\n"
               f"Next: soulframe -w {dest} doctor")
