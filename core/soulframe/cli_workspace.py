"""``soulframe init``, ``soulframe identity`` and ``soulframe doctor``.

``doctor`` runs every function in :data:`DOCTOR_CHECKS`. A plugin adds its own check by
appending to that list when it is imported (or with the :func:`doctor_check` decorator)::

    from soulframe.cli_workspace import Finding, doctor_check

    @doctor_check
    def memory_index(agent):
        if not index_ok(agent):
            yield Finding("memory", "problem", "the memory index is stale; run soulframe memory sync")

A check receives the :class:`~soulframe.Agent` and yields :class:`Finding` objects; one that
raises is reported as a problem of its own, so one broken check never hides the others.
"""

from __future__ import annotations

import os
import stat
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs
import click

from .cli import State, echo_json, pass_state

if TYPE_CHECKING:
    from .agent import Agent

Level = Literal["problem", "warning", "info"]

#: files a workspace should have; HEARTBEAT.md and BOOTSTRAP.md are optional
CORE_FILES: tuple[str, ...] = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md")


@attrs.frozen
class Finding:
    """One thing ``doctor`` noticed. ``problem`` makes the exit code 1."""

    check: str
    level: Level
    message: str
    path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


DoctorCheck = Callable[["Agent"], Iterable[Finding]]

#: the checks ``soulframe doctor`` runs, in order; append yours
DOCTOR_CHECKS: list[DoctorCheck] = []


def doctor_check(fn: DoctorCheck) -> DoctorCheck:
    """Register ``fn`` as a doctor check (appends it to :data:`DOCTOR_CHECKS`)."""
    DOCTOR_CHECKS.append(fn)
    return fn


def add_workspace_commands(cli: click.Group) -> None:
    cli.add_command(init_command)
    cli.add_command(identity_command)
    cli.add_command(doctor_command)


# --------------------------------------------------------------------------- init


@click.command("init")
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@click.option("--type", "agent_type", type=click.Choice(["open", "predefined"]),
              help="Agent type (default: the configured one). predefined: no BOOTSTRAP.md at "
                   "agent level — each user gets their own first run.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {workspace, created, kept, skipped}.")
@pass_state
def init_command(state: State, directory: str | None, agent_type: str | None, as_json: bool) -> None:
    """Create a workspace from the templates, or add the files it is missing.

    Never overwrites a file: run it again at any time. The workspace and memory/ are
    created with mode 0700 and the files 0600, because they will hold personal memory.
    BOOTSTRAP.md, the first-run ritual, is only created in a new workspace, so running
    init again after the first run does not start it over.
    """
    from .workspace import seed_workspace, workspace_templates

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


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


# --------------------------------------------------------------------------- identity


@click.command("identity")
@click.option("--user", "user_id", metavar="ID", help="Resolve for this user's files (per-user IDENTITY.md).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: identity, sources, warnings.")
@pass_state
def identity_command(state: State, user_id: str | None, as_json: bool) -> None:
    """Show the agent's name, emoji, avatar, creature and vibe, and where each came from
    (ui.* config, the agent's identity config, IDENTITY.md with its line, or the default)."""
    from .identity import IdentityWarning, explain_identity
    from .model import Session

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


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {healthy, findings}.")
@pass_state
def doctor_command(state: State, as_json: bool) -> None:
    """Check the workspace: missing, empty or oversized files, invalid UTF-8, symlinks that
    leave the workspace, loose permissions, files the prompt would truncate, an unfinished
    first run, a heartbeat with nothing to do. Exit code 1 when there is a problem."""
    agent = state.agent()
    findings = run_checks(agent)
    healthy = not any(f.level == "problem" for f in findings)
    if as_json:
        echo_json({"workspace": str(agent.root), "healthy": healthy,
                   "findings": [f.to_dict() for f in findings]})
    else:
        click.echo(f"workspace: {agent.root}")
        marks = {"problem": ("✗", "red"), "warning": ("!", "yellow"), "info": ("·", None)}
        for f in findings:
            mark, colour = marks[f.level]
            click.secho(f"{mark} {f.level:7} {f.check}: {f.message}", fg=colour)
        problems = sum(f.level == "problem" for f in findings)
        click.echo("healthy" if healthy else f"{problems} problem{'s' if problems != 1 else ''}")
    if not healthy:
        raise SystemExit(1)


def run_checks(agent: Agent) -> list[Finding]:
    findings: list[Finding] = []
    for check in list(DOCTOR_CHECKS):
        name = getattr(check, "__name__", repr(check))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # checks report through findings
                findings.extend(check(agent))
        except Exception as exc:
            findings.append(Finding(name, "problem", f"the check failed: {type(exc).__name__}: {exc}"))
    return findings


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@doctor_check
def workspace_permissions(agent: Agent) -> Iterable[Finding]:
    root = agent.root
    if not root.is_dir():
        yield Finding("workspace", "problem", f"{root} does not exist; run `soulframe init`", str(root))
        return
    for d in (root, root / "memory"):
        if not d.is_dir():
            if d != root:
                yield Finding("workspace", "warning", "memory/ does not exist; run `soulframe init`", str(d))
            continue
        mode = _mode(d)
        if mode & 0o077:
            yield Finding(
                "permissions", "problem",
                f"{d.name or d}/ is mode {mode:o}; other users can read personal memory — "
                f"chmod 700 {d}", str(d),
            )


@doctor_check
def bootstrap_files(agent: Agent) -> Iterable[Finding]:
    from .context import BOOTSTRAP_FILES, MEMORY_FILES
    from .model import PathEscapeError

    root = agent.root
    if not root.is_dir():
        return
    max_chars = int(agent.config.get("bootstrap.max_chars_per_file"))
    names = [*BOOTSTRAP_FILES, *[m for m in MEMORY_FILES if (root / m).exists() or (root / m).is_symlink()]]
    for name in dict.fromkeys(names):
        path = root / name
        if not path.exists() and not path.is_symlink():
            if name in CORE_FILES:
                yield Finding("files", "problem", f"{name} is missing; run `soulframe init`", name)
            continue
        try:
            agent.workspace.resolve(name)
        except PathEscapeError:
            yield Finding("files", "problem",
                          f"{name} is a symlink to {os.path.realpath(path)}, outside the workspace; "
                          "it is skipped — copy the file into the workspace instead", name)
            continue
        if not path.exists():
            yield Finding("files", "problem", f"{name} is a symlink to a file that does not exist", name)
            continue
        if not path.is_file():
            yield Finding("files", "problem", f"{name} is not a regular file; it is skipped", name)
            continue
        try:
            data = path.read_bytes()
        except OSError as exc:
            yield Finding("files", "problem", f"{name} cannot be read ({exc.strerror}); it is skipped", name)
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            yield Finding("files", "problem",
                          f"{name} is not valid UTF-8 (byte offset {exc.start}, line {line}); the bad "
                          "bytes are shown as U+FFFD — re-save it as UTF-8", name)
            text = data.decode("utf-8", errors="replace")
        if not text.strip():
            if name != "BOOTSTRAP.md":
                yield Finding("files", "warning", f"{name} is empty; it is left out of the prompt", name)
            continue
        if len(text) > max_chars:
            yield Finding("files", "problem",
                          f"{name} has {len(text):,} characters, over bootstrap.max_chars_per_file = "
                          f"{max_chars:,}: {len(text) - max_chars:,}+ will be cut from the prompt", name)
        mode = _mode(path)
        if mode & 0o077 and (name in MEMORY_FILES or name == "USER.md"):
            yield Finding("permissions", "warning",
                          f"{name} is mode {mode:o}; it holds personal data — chmod 600 {path}", name)


@doctor_check
def truncation(agent: Agent) -> Iterable[Finding]:
    """Files the prompt of a main session would cut, and by how much."""
    from .context import load_merged, order_files, truncation_policy
    from .model import Session

    if not agent.root.is_dir():
        return
    files = order_files(load_merged(agent, Session.main()))
    _, notices = truncation_policy(agent).truncate_files(files, agent.config)
    cfg = agent.config
    # the notice's hint is written for the model ("read X for ..."); the user needs the fix
    fix = (f"shorten it, or raise bootstrap.max_chars_per_file "
           f"({int(cfg.get('bootstrap.max_chars_per_file')):,}) or bootstrap.total_max_chars "
           f"({int(cfg.get('bootstrap.total_max_chars')):,})")
    if len(notices) > 1 and cfg.get("bootstrap.truncation") == "head-tail":
        # the seeds' policy fills the budget in file order: later files starve
        fix += ', or set bootstrap.truncation = "fair" so one long file cannot starve the later ones'
    for n in notices:
        if n.kept_chars == 0:
            why = n.hint.split("; read ")[0].removeprefix("left out: ")
            msg = f"would be left out of the prompt entirely ({n.original_chars:,} characters): {why} — {fix}"
        else:
            msg = (f"would be truncated: {n.kept_chars:,} of {n.original_chars:,} characters kept "
                   f"({n.original_chars - n.kept_chars:,} cut) — {fix}")
        yield Finding("truncation", "problem", f"{n.name} {msg}", n.name)


@doctor_check
def first_run_and_heartbeat(agent: Agent) -> Iterable[Finding]:
    from .context import heartbeat_has_tasks

    boot = agent.root / "BOOTSTRAP.md"
    if boot.is_file() and boot.read_bytes().strip():
        yield Finding("bootstrap", "info",
                      "BOOTSTRAP.md is present: the first-run ritual has not finished (the agent "
                      "empties or deletes it when done)", "BOOTSTRAP.md")
    hb = agent.root / "HEARTBEAT.md"
    if hb.is_file() and not heartbeat_has_tasks(hb.read_bytes().decode("utf-8", errors="replace")):
        yield Finding("heartbeat", "info",
                      "HEARTBEAT.md has no tasks (only headings or comments): heartbeats do nothing",
                      "HEARTBEAT.md")


@doctor_check
def identity(agent: Agent) -> Iterable[Finding]:
    from .identity import explain_identity

    report = explain_identity(agent)
    for w in report.warnings:
        yield Finding("identity", "warning", w, "IDENTITY.md")
    if report.sources["name"] == "default":
        yield Finding("identity", "info",
                      "no name set (IDENTITY.md, the agent's identity config or ui.assistant_name): "
                      "the agent is called 'Assistant'", "IDENTITY.md")


@doctor_check
def timezone(agent: Agent) -> Iterable[Finding]:
    from .context import agent_timezone
    from .model import ConfigError

    try:
        agent_timezone(agent)
    except ConfigError as exc:
        yield Finding("config", "problem", str(exc))


@doctor_check
def soul_evil(agent: Agent) -> Iterable[Finding]:
    if not agent.config.get("soul_evil.enabled"):
        return
    name = str(agent.config.get("soul_evil.file") or "SOUL_EVIL.md")
    if not (agent.root / name).is_file():
        yield Finding("soul-evil", "problem",
                      f"soul_evil.enabled is true but {name} does not exist: no swap will happen", name)
    if agent.config.get("soul_evil.at") is None and not agent.config.get("soul_evil.chance"):
        yield Finding("soul-evil", "warning",
                      "soul_evil.enabled is true but neither a window (soul_evil.at + duration) nor "
                      "soul_evil.chance is set: the alternate persona is never used")
