"""``soulframe memory flush``, ``memory logs`` and ``memory prune`` (and, from
:mod:`.upkeep_commands`, ``quarantine``, ``save-session`` and ``consolidate``).

``memory`` is the core's group; these commands join it when it exists (our
``register_commands`` runs last) and create it otherwise.
"""

from __future__ import annotations

import datetime as _dt
import sys
from typing import TYPE_CHECKING, Any

import click
from soulframe.cli import State, command_group, echo_json, model_option, pass_state

if TYPE_CHECKING:
    from soulframe.memorykit import SessionLimits as Limits


def add_commands(cli: click.Group) -> None:
    memory = command_group(cli, "memory", "Memory files and the memory index.")
    memory.add_command(flush_command)
    memory.add_command(memory_logs)
    memory.add_command(memory_prune)
    from .upkeep_commands import add_upkeep_commands

    add_upkeep_commands(cli)


# --------------------------------------------------------------------------- memory flush


def load_transcript(path: str, limits: Limits | None = None) -> Any:
    """A saved conversation: JSON (a list of {role, content}, or {"messages": [...]}) or
    plain text. ``-`` reads standard input. Bounded in size and nesting depth
    (``memory.session.max_transcript_bytes`` / ``max_transcript_depth``)."""
    from soulframe.memorykit import SessionLimits as Limits
    from soulframe.memorykit import parse_messages, read_transcript

    limits = limits or Limits()
    text, where = read_transcript(path, limits)
    if text.lstrip()[:1] in ("[", "{"):
        # read as save-session reads it: the same errors, naming the file, counting from 1
        return parse_messages(text, where, limits)
    return text


@click.command("flush")
@click.option(
    "--transcript",
    "transcript_path",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="The conversation: JSON list (or JSON Lines) of {role, content}, or plain text; - for stdin.",
)
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {ran, status, daily_file, iterations, written, refused, show, error: {message, code} or null, "
                   "elapsed_s, tool_calls: [{tool, arguments, ok, result}]}.")
@model_option
@pass_state
def flush_command(state: State, transcript_path: str, as_json: bool) -> None:
    """Let the model store durable memories from a saved conversation.

    Runs the pre-compaction memory flush by hand: the model may read and write only
    MEMORY.md and memory/*.md (today's file is memory/YYYY-MM-DD.md in the agent's
    timezone), within flush.max_iterations model calls and flush.timeout_s seconds.
    Exits 1 if the model failed or timed out.

    \b
      soulframe -w ~/agent memory flush --transcript chat.json
      soulframe -w ~/agent memory flush --transcript - --json < chat.jsonl
    """
    from soulframe.kit import chat_model_for
    from soulframe.memorykit import SessionLimits as Limits

    from .flush import FlushSettings, _flush_system_prompt, run_flush

    agent = state.agent()
    transcript = load_transcript(transcript_path, Limits.of(agent.config))
    model = chat_model_for(agent, "flush")
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


# --------------------------------------------------------------------------- memory logs


@click.command("logs")
@click.option("--all", "include_archived", is_flag=True, help="Include memory/archive/.")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON list of {path, date, bytes, chars, lines, archived, at_bootstrap}.")
@pass_state
def memory_logs(state: State, include_archived: bool, as_json: bool) -> None:
    """List the daily logs (memory/YYYY-MM-DD.md): date, size and line count, oldest first.

    \b
      soulframe -w ~/agent memory logs
      soulframe -w ~/agent memory logs --all --json
    """
    from .daily import bootstrap_logs, list_logs

    agent = state.agent()
    logs = list_logs(agent, include_archived=include_archived)
    loaded = bootstrap_logs(agent)
    limit = int(agent.config.get("bootstrap.max_chars_per_file"))
    rows = [d.to_dict() | {"at_bootstrap": d.path in loaded} for d in logs]
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo(f"no daily logs in {agent.root / 'memory'}")
        return
    click.echo(f"{'date':10}  {'chars':>8}  {'lines':>6}  path")
    for r in rows:
        notes = []
        if r["at_bootstrap"]:
            notes.append("loaded at bootstrap")
        if r["chars"] > limit:
            notes.append(f"over {limit:,}: truncated at bootstrap")
        tail = f"  ({'; '.join(notes)})" if notes else ""
        click.echo(f"{r['date']:10}  {r['chars']:>8,}  {r['lines']:>6,}  {r['path']}{tail}")
    total = sum(r["chars"] for r in rows)
    click.echo(f"{len(rows)} log{'s' if len(rows) != 1 else ''}, {total:,} characters")


@click.command("prune")
@click.option("--before", required=True, type=click.DateTime(formats=["%Y-%m-%d"]),
              metavar="YYYY-MM-DD", help="Archive the logs dated before this day.")
@click.option("--dry-run", is_flag=True, help="Only say what would be moved.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {dry_run, moved: [{from, to}], kept: [{path, reason}]}.")
@pass_state
def memory_prune(state: State, before: _dt.datetime, dry_run: bool, as_json: bool) -> None:
    """Move old daily logs into memory/archive/ — never deletes. Archived logs stay
    searchable (memory search covers memory/**) but are out of memory/'s listing; today's
    and yesterday's logs, loaded at bootstrap, are never moved.

    \b
      soulframe -w ~/agent memory prune --before 2026-01-01 --dry-run
      soulframe -w ~/agent memory prune --before 2026-01-01
    """
    from .daily import prune

    result = prune(state.agent(), before.date(), dry_run=dry_run)
    if as_json:
        echo_json(result.to_dict())
        return
    verb = "would move" if dry_run else "moved"
    for src, dst in result.moved:
        click.echo(f"{verb} {src} -> {dst}")
    for path, reason in result.kept:
        click.echo(f"kept {path}: {reason}")
    n = len(result.moved)
    if not n and not result.kept:
        click.echo(f"no daily logs before {before.date().isoformat()}")
    elif not dry_run and n:
        click.echo(f"{n} log{'s' if n != 1 else ''} archived; still searchable "
                   "(the next search re-indexes them under memory/archive/)")
