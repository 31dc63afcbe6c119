"""``soulframe memory flush``, ``soulframe agents summon``, ``soulframe heartbeat`` and
``soulframe boot``.

The ``memory`` and ``agents`` groups may belong to other plugins; these commands join
them when they exist (our ``register_commands`` runs last) and create them otherwise.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from soulframe.cli import State, command_group, echo_json, model_option, pass_state
from soulframe.model import SoulframeError


def add_commands(cli: click.Group) -> None:
    command_group(cli, "memory", "Memory files and the memory index.").add_command(flush_command)
    command_group(cli, "agents", "Work with agents: summon their context files.").add_command(
        summon_command
    )
    cli.add_command(heartbeat_command)
    cli.add_command(boot_command)


def _agent(state: State, agent_id: str | None) -> Any:
    if agent_id is None or agent_id == state.agent_id:
        return state.agent()
    from soulframe.agent import Agent

    return Agent(state.config(), agent_id=agent_id, pm=state.pm)


# --------------------------------------------------------------------------- memory flush


def load_transcript(path: str) -> Any:
    """A saved conversation: JSON (a list of {role, content}, or {"messages": [...]}) or
    plain text. ``-`` reads standard input."""
    if path == "-":
        text = sys.stdin.read()
        where = "standard input"
    else:
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise SoulframeError(f"{path}: cannot read ({exc.strerror})") from None
        where = path
    stripped = text.lstrip()
    if stripped[:1] in ("[", "{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            if not stripped.startswith("{") or len(stripped.splitlines()) < 2:
                raise SoulframeError(f"{where} line {exc.lineno}: invalid JSON: {exc.msg}") from None
            # JSON Lines: one {role, content} object per line (a broken JSON list is
            # reported as one, above)
            from soulframe.memory.sessions import parse_messages

            return parse_messages(text, where)
        if isinstance(data, dict) and not isinstance(data.get("messages"), list):
            raise SoulframeError(
                f'{where}: expected a list of {{role, content}} or {{"messages": [...]}}'
            )
        return data
    return text


@click.command("flush")
@click.option(
    "--transcript",
    "transcript_path",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="The conversation: JSON list (or JSON Lines) of {role, content}, or plain text; - for stdin.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@model_option
@pass_state
def flush_command(state: State, transcript_path: str, as_json: bool) -> None:
    """Let the model store durable memories from a saved conversation.

    Runs the pre-compaction memory flush by hand: the model may read and write only
    MEMORY.md and memory/*.md (today's file is memory/YYYY-MM-DD.md in the agent's
    timezone), within flush.max_iterations model calls and flush.timeout_s seconds.
    Exits 1 if the model failed or timed out.
    """
    from .flush import FlushSettings, _flush_system_prompt, run_flush
    from .models import chat_model_for

    agent = state.agent()
    transcript = load_transcript(transcript_path)
    model = chat_model_for(agent)
    result = run_flush(
        agent.workspace,
        model,
        transcript,
        settings=FlushSettings.from_config(agent.config),
        timezone=agent.spec.timezone or agent.config.get("timezone"),
        system_prompt=_flush_system_prompt(agent, None),
        agent=agent,
    )
    if as_json:
        echo_json(result.to_dict())
    else:
        wrote = ", ".join(result.written) or "nothing"
        calls = f"{result.iterations} model call{'s' if result.iterations != 1 else ''}"
        click.echo(f"memory flush: {result.status} after {calls}; wrote {wrote}")
        for refusal in result.refused:
            click.echo(f"  refused: {refusal.removeprefix('error: ')}")
        if result.show:
            click.echo(result.show)
        if result.error:
            click.secho(f"error: {result.error}", fg="red", err=True)
    if result.status in ("error", "timeout"):
        sys.exit(1)


# --------------------------------------------------------------------------- summon


@click.command("summon")
@click.argument("description")
@click.option(
    "--agent",
    "agent_id",
    metavar="ID",
    help="The [[agents]] entry to summon (default: the selected agent).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace existing SOUL.md, IDENTITY.md, AGENTS.md, TOOLS.md, HEARTBEAT.md.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=None,
    help="Seconds for the model call (default 180).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@model_option
@pass_state
def summon_command(
    state: State,
    description: str,
    agent_id: str | None,
    force: bool,
    timeout: float | None,
    as_json: bool,
) -> None:
    """Create an agent's five context files from a description, in one model call.

    \b
    Example:
      soulframe agents summon "sarcastic Rust reviewer"

    The model writes SOUL.md, IDENTITY.md, AGENTS.md, TOOLS.md and HEARTBEAT.md. If no
    model is configured, the call fails or the reply is not the expected XML, the
    embedded templates are written instead (existing files are never replaced by them)
    and the reason is printed; exit 1 if that left every file as it was and some of them
    are your own (files still identical to their template, as after `soulframe init`, count
    as templates in place, and are replaced by a successful summon without --force).
    """
    from .summon import DEFAULT_TIMEOUT_S, summon

    agent = _agent(state, agent_id)
    result = summon(agent, description, force=force, timeout=timeout or DEFAULT_TIMEOUT_S)
    if as_json:
        echo_json({"agent": agent.id, "workspace": str(agent.workspace.root), **result.to_dict()})
        if result.source != "model" and not result.written and not result.unchanged:
            sys.exit(1)
        return
    where = "the store" if result.target == "store" else str(agent.workspace.root)
    if result.source == "model":
        click.echo(f"Summoned agent {agent.id!r}: wrote {', '.join(result.written)} to {where}")
        return
    click.secho(f"Could not summon with the model: {result.reason}", fg="yellow", err=True)
    if result.written:
        click.echo(f"Wrote the embedded templates instead: {', '.join(result.written)} to {where}")
    if result.unchanged:
        click.echo(f"The embedded templates are already in place: {', '.join(result.unchanged)}")
    if result.kept:
        click.echo(f"Kept existing: {', '.join(result.kept)}")
        click.echo("Edit the files by hand, or fix the model and run summon again with --force.")
    else:
        click.echo("Edit the files by hand, or fix the model and run summon again.")
    if not result.written and not result.unchanged:
        # nothing changed on disk: a script must not take this for a summoned agent
        sys.exit(1)


# --------------------------------------------------------------------------- heartbeat


@click.command("heartbeat")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--force", is_flag=True, help="Call the model even if HEARTBEAT.md has no tasks.")
@click.option(
    "--timeout", type=click.FloatRange(min=1), default=None, help="Seconds for the model call."
)
@model_option
@pass_state
def heartbeat_command(state: State, as_json: bool, force: bool, timeout: float | None) -> None:
    """Send the agent a health check; exit 0 only if it answers HEARTBEAT_OK.

    The agent works through HEARTBEAT.md in a heartbeat session. Exit codes: 0 HEARTBEAT_OK
    (or nothing to do: HEARTBEAT.md has only headings and empty items, so no model call is
    made; --force calls it anyway), 1 the agent reported something that needs attention,
    2 the model could not be called (none configured in [model], no key, HTTP error,
    timeout). Each run the model answered is logged as a line in memory/YYYY-MM-DD.md;
    a failed run is not logged, only reported on stderr and by the exit status.

    \b
    From cron:
      */30 * * * * soulframe -w ~/agent heartbeat || notify-send "agent needs attention"
    """
    from .heartbeat import run_heartbeat

    result = run_heartbeat(state.agent(), force=force, timeout=timeout)
    if as_json:
        echo_json(result.to_dict())
    if result.status == "error":
        click.echo(result.line(), err=True)
    elif not as_json:
        click.echo(result.line())
    sys.exit(result.exit_code)


# --------------------------------------------------------------------------- boot


@click.command("boot")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=None,
    help="Seconds for the whole run, tool calls included (default 180).",
)
@click.option(
    "--max-iterations",
    type=click.IntRange(min=1),
    default=None,
    help="Model calls at most (default 10).",
)
@model_option
@pass_state
def boot_command(
    state: State, as_json: bool, timeout: float | None, max_iterations: int | None
) -> None:
    """Run the startup ritual in BOOT.md once; print the agent's summary.

    The agent gets BOOT.md as its instruction in a main session, with its own system
    prompt and tools, and replies with a summary starting BOOT_OK (or BOOT_FAILED).
    BOOT.md is optional and never part of an ordinary prompt. Exit codes: 0 BOOT_OK (or
    nothing to do: no BOOT.md, or only headings and empty items — no model call), 1 the
    agent reported a problem (BOOT_FAILED, no BOOT_OK, or out of model calls), 2 the boot
    could not run (no model configured, no key, HTTP error, timeout, unreadable BOOT.md).
    Each run is logged as a line in memory/YYYY-MM-DD.md.

    \b
    From systemd, after the gateway starts:
      ExecStartPost=/usr/bin/soulframe -w /home/me/agent boot
    """
    from .boot import run_boot

    result = run_boot(state.agent(), timeout=timeout, max_iterations=max_iterations)
    if as_json:
        echo_json(result.to_dict())
    else:
        click.echo(result.line())
        for event in result.failed_tools:
            click.echo(f"  tool error: {event.name}: {event.result.removeprefix('error: ')}")
        if result.summary:
            click.echo(result.summary)
    sys.exit(result.exit_code)
