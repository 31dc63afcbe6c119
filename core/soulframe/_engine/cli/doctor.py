"""``soulframe doctor``: the core's checks of a workspace, and every check plugins offer
through the ``register_doctor_checks`` hook::

    from soulframe import hookimpl
    from soulframe._engine.model import Finding

    def memory_index(agent):
        if not index_ok(agent):
            yield Finding("memory", "problem", "the memory index is stale; run soulframe memory index")

    @hookimpl
    def register_doctor_checks():
        return [memory_index]

A check receives a :class:`~soulframe.CheckedAgent` (``soulframe.Agent`` implements it:
``AgentLike`` with the memory files and status, the skills snapshot and mode, and where the
store keeps its index) and yields :class:`~soulframe._engine.model.Finding` objects; one that raises is reported as a problem of its own, so one broken check never hides
the others. A check that calls code which logs the problem it reports wraps that call in
:func:`quiet_logs`, so doctor does not say it twice.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import stat
import time
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..model import CheckedAgent, ConfigError, DoctorCheck, Finding, Fix, SoulframeError
from .state import State, echo_json, pass_state

if TYPE_CHECKING:
    from ..agent import Agent

#: files a workspace should have; HEARTBEAT.md and BOOTSTRAP.md are optional
CORE_FILES: tuple[str, ...] = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md")


@click.command("doctor")
@click.option("--fix", "fix", is_flag=True,
              help="Apply the fixes that are safe without asking (permissions, a stale index, "
              "links it flagged — the link, never its target), list each, then check again.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {healthy, findings, fixed}.")
@pass_state
def doctor_command(state: State, fix: bool, as_json: bool) -> None:
    """Check the workspace: missing, empty or oversized files, invalid UTF-8, symlinks that
    leave the workspace, loose permissions, files the prompt would truncate, sections its
    token budget leaves out, an unfinished
    first run, a heartbeat with nothing to do. Exit code 1 when there is a problem (after
    --fix: one that is left).

    \b
      soulframe doctor
      soulframe doctor --fix     # then only what needs you is left
    """
    agent = state.agent()
    findings = run_checks(agent)
    fixed: list[tuple[Finding, str, bool]] = []
    if fix:
        fixed = apply_fixes(findings)
        if fixed:
            findings = run_checks(agent)
    healthy = not any(f.level == "problem" for f in findings)
    if as_json:
        echo_json({"workspace": str(agent.root), "healthy": healthy,
                   "findings": [f.to_dict() for f in findings],
                   "fixed": [{"check": f.check, "did": did, "ok": ok} for f, did, ok in fixed]})
    else:
        click.echo(f"workspace: {agent.root}")
        for _, did, ok in fixed:
            click.secho(f"{'fixed' if ok else 'could not fix'}: {did}", fg=None if ok else "red")
        marks = {"problem": ("✗", "red"), "warning": ("!", "yellow"), "info": ("·", None)}
        for f in findings:
            mark, colour = marks[f.level]
            # the file a finding is about, when its message does not name it already
            where = f" ({f.path})" if f.path and os.path.basename(f.path.rstrip("/")) not in f.message else ""
            click.secho(f"{mark} {f.level:7} {f.check}: {f.message}{where}", fg=colour)
        problems = sum(f.level == "problem" for f in findings)
        fixable = sum(f.fix is not None for f in findings)
        if fixable and not fix:
            click.echo(f"{fixable} of these can be fixed safely: soulframe doctor --fix")
        click.echo("healthy" if healthy else f"{problems} problem{'s' if problems != 1 else ''}")
    if not healthy:
        raise SystemExit(1)


@contextlib.contextmanager
def quiet_logs() -> Iterator[None]:
    """Doctor reports through findings: soulframe's own log warnings would say it twice."""
    logger = logging.getLogger("soulframe")
    before = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(before)


def all_checks(agent: Agent) -> list[DoctorCheck]:
    """The core's checks, then every plugin's (``register_doctor_checks``), in plugin order."""
    from ..plugins import collect

    checks: list[DoctorCheck] = list(CORE_CHECKS)
    for _plugin, check in collect(agent.pm, "register_doctor_checks"):  # in plugin order
        if check not in checks:
            checks.append(check)
    return checks


def run_checks(agent: Agent) -> list[Finding]:
    findings: list[Finding] = []
    for check in all_checks(agent):
        name = getattr(check, "__name__", repr(check))
        started = time.perf_counter()
        before = len(findings)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # checks report through findings
                findings.extend(check(agent))
        except ConfigError as exc:  # the config names something wrong: say that, plainly
            findings.append(Finding(name, "problem", str(exc)))
        except Exception as exc:
            findings.append(Finding(name, "problem", f"the check failed: {type(exc).__name__}: {exc}"))
        # after the check, whose own log lines quiet_logs may have held back
        logging.getLogger("soulframe.cli").info(
            "doctor: %s: %d finding%s in %.0f ms", name, len(findings) - before,
            "" if len(findings) - before == 1 else "s", (time.perf_counter() - started) * 1000)
    return findings


def chmod_fix(path: Path, mode: int) -> Fix:
    def apply() -> str:
        os.chmod(path, mode)
        return f"chmod {mode:o} {path}"

    return Fix(f"chmod {mode:o} {path}", apply)


def unlink_fix(link: Path, shown: str) -> Fix:
    """Remove a symlink (never what it points to); refused if it is no longer a link."""
    def apply() -> str:
        if not link.is_symlink():
            raise OSError(f"{shown} is no longer a symlink; left alone")
        link.unlink()
        return f"removed the link {shown}"

    return Fix(f"rm {shown} (the link, not its target)", apply)


def apply_fixes(findings: list[Finding]) -> list[tuple[Finding, str, bool]]:
    """Apply each finding's fix once: (finding, what happened, whether it worked)."""
    done: list[tuple[Finding, str, bool]] = []
    seen: set[str] = set()
    for f in findings:
        if f.fix is None or f.fix.description in seen:
            continue
        seen.add(f.fix.description)
        try:
            done.append((f, f.fix.apply(), True))
        except (OSError, SoulframeError) as exc:
            done.append((f, f"{f.fix.description}: {exc}", False))
    return done


def _init(root: Path) -> str:
    """The init command for this workspace: a bare `soulframe init` seeds the default
    workspace, not the one `-w` named."""
    return f"soulframe init {shlex.quote(str(root))}"


def _mode(path: Path) -> int:
    # the file or directory reached: a symlink's own mode is always 777 and guards nothing
    return stat.S_IMODE(path.stat().st_mode)


def workspace_permissions(agent: CheckedAgent) -> Iterable[Finding]:
    root = agent.root
    if not root.is_dir():
        yield Finding("workspace", "problem", f"{root} does not exist; run `{_init(root)}`", str(root))
        return
    for d in (root, root / "memory"):
        if not d.is_dir():
            if d != root:
                yield Finding("workspace", "warning", f"memory/ does not exist; run `{_init(root)}`", str(d))
            continue
        mode = _mode(d)
        if mode & 0o077:
            yield Finding(
                "permissions", "problem",
                f"{d.name or d}/ is mode {mode:o}; other users can read personal memory — "
                f"chmod 700 {d}", str(d), fix=chmod_fix(d, 0o700),
            )


def config_file_secrets(agent: CheckedAgent) -> Iterable[Finding]:
    """A config file holding an API key (or a password in a DSN) must be readable by its
    owner alone, as ssh insists for a private key."""
    from ..config import Config, keys_holding_secrets

    config = agent.config
    if not isinstance(config, Config):  # settings that come from no soulframe.toml
        return
    path = config.path
    if path is None or not path.is_file():
        return
    keys = keys_holding_secrets(config)
    mode = stat.S_IMODE(path.stat().st_mode)
    if keys and mode & 0o077:
        shown = ", ".join(keys[:3]) + (" ..." if len(keys) > 3 else "")
        # a DSN's password is moved out by $SOULFRAME_DSN, a key by naming its variable
        moves = (["put the DSN in $SOULFRAME_DSN"] if "store.dsn" in keys else []) + (
            ["move the key to an environment variable with api_key_env"]
            if any(k != "store.dsn" for k in keys) else [])
        yield Finding(
            "permissions", "problem",
            f"{path} holds a secret ({shown}) and is mode {mode:o}: other users on this machine "
            f"can read it — chmod 600 {path} (or {', and '.join(moves)})", str(path),
            fix=chmod_fix(path, 0o600),
        )


def bootstrap_files(agent: CheckedAgent) -> Iterable[Finding]:
    from ..model import PathEscapeError
    from ..prompt.context import BOOTSTRAP_FILES, MEMORY_FILES

    root = agent.root
    if not root.is_dir():
        return
    max_chars = int(agent.config.get("bootstrap.max_chars_per_file"))
    names = [*BOOTSTRAP_FILES, *[m for m in MEMORY_FILES if (root / m).exists() or (root / m).is_symlink()]]
    for name in dict.fromkeys(names):
        path = root / name
        if not path.exists() and not path.is_symlink():
            if name in CORE_FILES:
                yield Finding("files", "problem", f"{name} is missing; run `{_init(root)}`", name)
            continue
        try:
            agent.workspace.resolve(name)
        except PathEscapeError as exc:
            if "symlink loop" in str(exc):
                yield Finding("files", "problem", f"{name} is a symlink loop; it is skipped — remove "
                              f"the link (rm {name}) or point it at a file", name,
                              fix=unlink_fix(path, name))
                continue
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


def truncation(agent: CheckedAgent) -> Iterable[Finding]:
    """Files the prompt of a main session would cut, and by how much."""
    from ..model import Session
    from ..prompt.context import load_merged, order_files, truncation_policy

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


def prompt_budget(agent: CheckedAgent) -> Iterable[Finding]:
    """Sections the main session's prompt shortens or leaves out to fit its token budget
    (the persona, the skills, the context files...): a small model's budget is a share of
    its window, and nothing else would say that its prompt loses them. Files over their own
    limits are the truncation check's."""
    from ..model import Session
    from ..prompt.build import build_system_prompt, section_table

    if not agent.root.is_dir():
        return
    prompt = build_system_prompt(agent, Session.main())
    sections = {s.name for s in section_table(agent).sections}
    cut = [n for n in prompt.notices if n.name in sections]
    over = [n for n in prompt.notices if n.name == "(prompt)"]
    if not cut and not over:
        return
    cfg = agent.config
    configured = int(cfg.get("prompt.budget_tokens"))
    budget = prompt.budget_tokens or configured
    if budget < configured:  # scaled down for a small window (prompt.max_window_share)
        source = (f"{budget:,} tokens: prompt.max_window_share = {cfg.get('prompt.max_window_share')} "
                  f"of model.context_window = {int(cfg.get('model.context_window')):,}")
        fix = ("set model.context_window to the model's real window if it is larger, or raise "
               "prompt.max_window_share")
    else:
        source = f"prompt.budget_tokens = {budget:,}"
        fix = "raise prompt.budget_tokens"
    if cut:
        left_out = [n.name for n in cut if not n.kept_chars]
        shortened = [n.name for n in cut if n.kept_chars]
        what = "; ".join(part for part in (
            f"left out: {', '.join(left_out)}" if left_out else "",
            f"shortened: {', '.join(shortened)}" if shortened else "",
        ) if part)
        yield Finding("prompt", "warning",
                      f"the main session's prompt is cut to fit its budget ({source}) — {what}; "
                      f"{fix}, or shorten the context files (`soulframe prompt --explain` shows "
                      "what fills it)")
    for n in over:
        yield Finding("prompt", "problem", f"the main session's prompt is {n.hint} ({source})")


def first_run_and_heartbeat(agent: CheckedAgent) -> Iterable[Finding]:
    from ..prompt.context import heartbeat_has_tasks

    boot = agent.root / "BOOTSTRAP.md"
    if boot.is_file() and boot.read_bytes().strip():
        # the docs say to delete it after filling the files in by hand; until then every main
        # session opens with the ritual asking who the agent and the user are
        yield Finding("bootstrap", "info",
                      "BOOTSTRAP.md is present: the first-run ritual has not finished (the agent "
                      "empties or deletes it when done); if you filled in SOUL.md, IDENTITY.md and "
                      f"USER.md yourself, delete it: rm {shlex.quote(str(boot))}", "BOOTSTRAP.md")
    hb = agent.root / "HEARTBEAT.md"
    if hb.is_file() and not heartbeat_has_tasks(hb.read_bytes().decode("utf-8", errors="replace")):
        yield Finding("heartbeat", "info",
                      "HEARTBEAT.md has no tasks (only headings or comments): heartbeats do nothing",
                      "HEARTBEAT.md")


def identity(agent: CheckedAgent) -> Iterable[Finding]:
    from ..prompt.identity import explain_identity

    report = explain_identity(agent)
    for w in report.warnings:
        yield Finding("identity", "warning", w, "IDENTITY.md")
    if report.sources["name"] == "default":
        yield Finding("identity", "info",
                      "no name set (IDENTITY.md, the agent's identity config or ui.assistant_name): "
                      "the agent is called 'Assistant'", "IDENTITY.md")


def timezone(agent: CheckedAgent) -> Iterable[Finding]:
    from ..model import ConfigError
    from ..prompt.context import agent_timezone

    try:
        agent_timezone(agent)
    except ConfigError as exc:
        yield Finding("config", "problem", str(exc))


#: the core's own checks, in the order they report
def workspace_text_files(root: Path) -> Iterator[Path]:
    """The Markdown files of a workspace a prompt or memory may hold: the context files at
    its root, ``memory/`` and ``bank/`` (no symlinks: those are checked elsewhere)."""
    if not root.is_dir():
        return
    yield from sorted(p for p in root.glob("*.md") if p.is_file() and not p.is_symlink())
    for folder in ("memory", "bank"):
        base = root / folder
        if base.is_dir() and not base.is_symlink():
            yield from sorted(_plain_markdown_under(base))


def _plain_markdown_under(base: Path) -> Iterator[Path]:
    """The ``*.md`` regular files under ``base``, never through a symlink: one listing per
    directory (asking each file whether any of its parents is a link cost seconds in a
    workspace of thousands of daily logs)."""
    folders = [base]
    while folders:
        try:
            with os.scandir(folders.pop()) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append(Path(entry.path))
            elif entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                yield Path(entry.path)


def secrets_in_files(agent: CheckedAgent) -> Iterable[Finding]:
    """A key or password written into a memory or context file by hand: each named with its
    file and line (never the secret). Prompts and tool results show it masked
    (``memory.mask_secrets``), the index never holds it, but the file does."""
    from ..redaction import secret_lines

    for path in workspace_text_files(agent.root):
        try:
            if path.stat().st_size > 4 << 20:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        rel = path.relative_to(agent.root).as_posix()
        for line, kind in secret_lines(text):
            yield Finding(
                "secrets", "problem",
                f"{rel} line {line}: a secret ({kind}) is written in the file; prompts and tool "
                "results show it masked, but backups and anyone reading the file get it — remove it "
                "(and rotate it if it was shared); keep keys with `soulframe keys set`", str(path))


def plugin_problems(agent: CheckedAgent) -> Iterable[Finding]:
    """Plugins that could not be loaded, and hooks that failed (what they register is
    skipped): each is a warning naming the plugin and how to disable it."""
    from ..plugins import PluginManager, what_each_registers

    pm = agent.pm
    if not isinstance(pm, PluginManager):
        return
    _, _, failures = what_each_registers(pm)  # asks every registration hook once
    for line in dict.fromkeys([*pm.load_errors, *failures]):
        yield Finding("plugins", "warning", line)


CORE_CHECKS: tuple[DoctorCheck, ...] = (
    workspace_permissions, config_file_secrets, secrets_in_files, bootstrap_files, truncation,
    prompt_budget, first_run_and_heartbeat, identity, timezone, plugin_problems,
)
