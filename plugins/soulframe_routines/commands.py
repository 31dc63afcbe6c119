"""``soulframe agents summon``, ``soulframe heartbeat`` and ``soulframe boot``.

The ``agents`` group may belong to another plugin; ``summon`` joins it when it exists (our
``register_commands`` runs last) and creates it otherwise.
"""

from __future__ import annotations

import sys
from typing import Any

import click
from soulframe.cli import State, command_group, echo_json, model_option, pass_state


def add_commands(cli: click.Group) -> None:
    # the same words as soulframe_workflows' (whichever loads first writes the group's help)
    agents_help = "Several agents on one host: list and add them, summon their context files."
    command_group(cli, "agents", agents_help).add_command(summon_command)
    cli.add_command(heartbeat_command)
    cli.add_command(boot_command)


def _agent(state: State, agent_id: str | None) -> Any:
    if agent_id is None or agent_id == state.agent_id:
        return state.agent()
    from soulframe import Agent

    return Agent(state.config(), agent_id=agent_id, pm=state.pm)


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
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {agent, workspace, source, written, kept, unchanged, "
                   "fallback_reason, target, chars, bootstrap}.")
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
      soulframe --agent devbot agents summon "terse release manager" --force --json

    The model writes SOUL.md, IDENTITY.md, AGENTS.md, TOOLS.md and HEARTBEAT.md. If no
    model is configured, the call fails or the reply is not the expected XML, the
    embedded templates are written instead (existing files are never replaced by them),
    the reason is printed, and the exit status is 1: the agent was not summoned. Files
    still identical to their template, as after `soulframe init`, count as templates in
    place, and are replaced by a successful summon without --force. A successful summon
    also removes BOOTSTRAP.md while it is the untouched template: the agent knows who it
    is, so the first-run ritual is over (one edited by hand is kept).

    Exit codes: 0 summoned by the model, 1 not (templates written or kept instead).
    """
    from .summon import DEFAULT_TIMEOUT_S, summon

    agent = _agent(state, agent_id)
    result = summon(agent, description, force=force, timeout=timeout or DEFAULT_TIMEOUT_S)
    if as_json:
        echo_json({"agent": agent.id, "workspace": str(agent.workspace.root), **result.to_dict()})
        # a script reads the status: templates written in place of a summon are not one
        sys.exit(0 if result.source == "model" else 1)
    where = "the store" if result.target == "store" else str(agent.workspace.root)
    if result.source == "model":
        click.echo(f"Summoned agent {agent.id!r}: wrote {', '.join(result.written)} to {where}")
        if result.bootstrap == "removed":
            click.echo("Removed BOOTSTRAP.md: the agent knows who it is, so its first-run ritual is over.")
        elif result.bootstrap == "kept":
            click.echo("BOOTSTRAP.md was edited by hand and is kept: the next chat still runs the first-run "
                       "ritual; delete it if the summoned files already say who the agent is.")
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
    sys.exit(1)


# --------------------------------------------------------------------------- heartbeat


@click.command("heartbeat")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {status, ok, exit_code, reply, error: {message, code} or null, detail, logged_to, "
                   "elapsed_s, consolidation}.")
@click.option("--force", is_flag=True, help="Call the model even if HEARTBEAT.md has no tasks.")
@click.option(
    "--timeout", type=click.FloatRange(min=1), default=None, help="Seconds for the model call."
)
@model_option
@pass_state
def heartbeat_command(state: State, as_json: bool, force: bool, timeout: float | None) -> None:
    """Send the agent a health check; exit 0 only if it answers HEARTBEAT_OK.

    The agent works through HEARTBEAT.md in a heartbeat session. Exit codes: 0 HEARTBEAT_OK
    (or nothing to do: HEARTBEAT.md is missing or has only headings and empty items, so no
    model call is made and none needs to be configured; --force calls it anyway), 1 the
    agent reported something that needs attention, 2 the model could not be called (none
    configured in [model], no key, HTTP error, timeout). Each run the model answered is logged as a line in memory/YYYY-MM-DD.md;
    a failed run is not logged, only reported on stderr and by the exit status.

    \b
      soulframe -w ~/agent heartbeat
      soulframe -w ~/agent heartbeat --force --json
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
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {status, ok, exit_code, summary, reply, error: {message, code} or null, detail, stopped, "
                   "iterations, tool_calls: [{tool, arguments, ok, result}], logged_to, elapsed_s}.")
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
    nothing to do: no BOOT.md, or only headings and empty items — no model call, though
    one must be configured), 1 the
    agent reported a problem (BOOT_FAILED, no BOOT_OK, or out of model calls), 2 the boot
    could not run (no model configured, no key, HTTP error, timeout, unreadable BOOT.md).
    Each run is logged as a line in memory/YYYY-MM-DD.md.

    \b
      soulframe -w ~/agent boot
      soulframe -w ~/agent boot --max-iterations 5 --timeout 60 --json
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
