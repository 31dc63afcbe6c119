"""``soulframe memory quarantine|save-session|consolidate``: the upkeep commands, added to
the shared ``memory`` group by :func:`soulframe_memory.commands.add_commands`."""

from __future__ import annotations

from typing import Any

import click
from soulframe import SESSION_KINDS, Session
from soulframe.cli import State, command_group, echo_json, model_option, pass_state, user_option


def add_upkeep_commands(cli: click.Group) -> None:
    group = command_group(cli, "memory", "Memory files and the memory index.")
    group.add_command(quarantine_group)
    group.add_command(save_session_command)
    group.add_command(consolidate_command)


# --------------------------------------------------------------------------- quarantine


@click.group("quarantine")
def quarantine_group() -> None:
    """Writes refused because they looked like a prompt injection or held a secret.

    They are kept in <state_dir>/quarantine/<agent>.jsonl (0600, outside the workspace,
    never indexed or put in a prompt) until you release or drop them.

    \b
      soulframe memory quarantine list
      soulframe memory quarantine show q20261121-101500-a1b2c3
      soulframe memory quarantine release q20261121-101500-a1b2c3
    """


def _quarantine(state: State) -> Any:
    from soulframe.memorykit import Quarantine

    return Quarantine.for_agent(state.agent())


@quarantine_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of {id, at, agent, target, via, action, findings: [{kind, name, preview}], "
                   "workspace} (without the texts).")
@pass_state
def quarantine_list(state: State, as_json: bool) -> None:
    """The quarantined writes: id, when, where it was going, what was found.

    \b
      soulframe -w ~/agent memory quarantine list
      soulframe -w ~/agent memory quarantine list --json
    """
    q = _quarantine(state)
    entries = q.mine()
    if as_json:
        echo_json([e.to_dict(with_text=False) for e in entries])
        return
    if not entries:
        click.echo(f"the quarantine is empty ({q.path})")
        return
    for e in entries:
        what = ", ".join(f"{f.get('kind')} {f.get('name')}" for f in e.findings)
        click.echo(f"{e.id}  {e.at}  {e.via} -> {e.target}  [{e.action}]  {what}")


@quarantine_group.command("show")
@click.argument("entry_id")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {id, at, agent, target, via, action, findings, text, workspace}.")
@pass_state
def quarantine_show(state: State, entry_id: str, as_json: bool) -> None:
    """Print a quarantined text (it may hold a secret: mind where you print it).

    \b
      soulframe -w ~/agent memory quarantine show q20261121-101500-a1b2c3
      soulframe -w ~/agent memory quarantine show q20261121-101500-a1b2c3 --json
    """
    e = _quarantine(state).get(entry_id)
    if as_json:
        echo_json(e.to_dict())
        return
    click.echo(e.text, nl=not e.text.endswith("\n"))


@quarantine_group.command("release")
@click.argument("entry_id")
@click.option("--json", "as_json", is_flag=True, help="Print {id, path} as JSON.")
@pass_state
def quarantine_release(state: State, entry_id: str, as_json: bool) -> None:
    """Write a quarantined text where it was going after all, and drop it from quarantine.

    Works for the agent's memory files (MEMORY.md, memory/*.md): the text is appended.
    A context file or a user's memory is yours to edit: `quarantine show` prints the text.

    \b
      soulframe -w ~/agent memory quarantine release q20261121-101500-a1b2c3
    """
    from soulframe.memorykit import release

    agent = state.agent()
    rel = release(agent, entry_id)
    if as_json:
        echo_json({"id": entry_id, "path": rel})
        return
    click.echo(f"released {entry_id} into {rel}")


@quarantine_group.command("drop")
@click.argument("entry_id")
@click.option("--json", "as_json", is_flag=True, help="Print the dropped entry as JSON: {id, at, agent, target, via, action, findings, "
                   "workspace} (without its text).")
@pass_state
def quarantine_drop(state: State, entry_id: str, as_json: bool) -> None:
    """Delete a quarantined text for good.

    \b
      soulframe -w ~/agent memory quarantine drop q20261121-101500-a1b2c3
    """
    e = _quarantine(state).drop(entry_id)
    if as_json:
        echo_json(e.to_dict(with_text=False))
        return
    click.echo(f"dropped {e.id} (was going to {e.target})")


# --------------------------------------------------------------------------- save-session


@click.command("save-session")
@click.option("--transcript", "transcript_path", required=True,
              type=click.Path(dir_okay=False, allow_dash=True),
              help="The conversation: a JSON list (or JSON Lines) of {role, content}; - for stdin.")
@click.option("--slug", help="Name part of the file (default: from the first user message).")
@click.option("--no-model", is_flag=True, help="Keep the last turns instead of asking the chat model for a summary.")
@click.option("--session", "session_kind", type=click.Choice(SESSION_KINDS), default="main", show_default=True,
              help="The kind of session the conversation was: only a group's is public memory.")
@user_option("The user it was with: kept in that user's own memory unless they own the workspace.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {path, model, turns, chars, warnings, private, user}.")
@model_option
@pass_state
def save_session_command(state: State, transcript_path: str, slug: str | None, no_model: bool,
                         session_kind: str, user_id: str | None, as_json: bool) -> None:
    """Save a finished conversation and index it.

    A conversation is private memory, found only by the owner's main sessions:
    sessions/YYYY-MM-DD-<slug>.md, or with --user (not an owner) that user's own memory.
    Only a group's (--session group), which the room heard already, goes to
    memory/YYYY-MM-DD-<slug>.md, which every session searches.

    With a chat model configured ([model] provider) the file holds the model's summary;
    without one (or with --no-model) the last memory.session.turns user/assistant turns.
    A transcript over memory.session.max_transcript_bytes (16 MiB), or nested deeper than
    memory.session.max_transcript_depth (32), is refused.

    \b
      soulframe memory save-session --transcript chat.jsonl
      soulframe memory save-session --transcript room.json --session group
      cat chat.json | soulframe memory save-session --transcript -
    """
    from soulframe.memorykit import SessionLimits as Limits
    from soulframe.memorykit import load_messages, save_session

    agent = state.agent()
    messages = load_messages(transcript_path, Limits.of(agent.config))
    saved = save_session(agent, messages, slug=slug, use_model=not no_model,
                         session=Session(kind=session_kind, user_id=user_id))  # type: ignore[arg-type]
    if as_json:
        echo_json(saved.to_dict())
        return
    for w in saved.warnings:
        click.secho(f"warning: {w}", fg="yellow", err=True)
    how = f"summary by {saved.model}" if saved.model else f"last {saved.turns} turns"
    where = f"{saved.user}'s " if saved.user else ""
    kept = "private memory" if saved.private else "memory every session searches"
    click.echo(f"saved {where}{saved.path} ({how}; {kept})")


# --------------------------------------------------------------------------- consolidate


@click.command("consolidate")
@click.option("--dry-run", is_flag=True, help="Print the diff; change nothing (with --undo: what it would restore).")
@click.option("--undo", is_flag=True, help="Restore MEMORY.md as it was before the last applied run.")
@click.option("--no-model", is_flag=True, help="Only remove entries that repeat an earlier one word for word.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {status, diff, operations, candidates, messages, refused, model, diary, "
                   "base_sha256}.")
@model_option
@pass_state
def consolidate_command(state: State, dry_run: bool, undo: bool, no_model: bool, as_json: bool) -> None:
    """Promote well-recalled daily-log entries into MEMORY.md, with citations.

    Candidates pass the gates in [memory.consolidate] (recalled >= 3 times by >= 3
    distinct queries, old enough, scored well enough). The chat model proposes add /
    update / supersede / no-op operations; soulframe applies them itself, refuses a run
    that would remove more than max_removed_share of MEMORY.md's entries, keeps a diary in
    memory/.diary/consolidation.md and can undo the last run (--undo). A run is refused
    when MEMORY.md changed while the model answered; --undo refuses when MEMORY.md changed
    since the run (a note or an edit would be lost).

    \b
      soulframe memory consolidate --dry-run
      soulframe memory consolidate
      soulframe memory consolidate --undo --dry-run
      soulframe memory consolidate --undo
    """
    from soulframe.memorykit import consolidate, undo_last

    agent = state.agent()
    if undo:
        result = undo_last(agent, dry_run=dry_run)
    else:
        result = consolidate(agent, dry_run=dry_run, use_model=not no_model)
    if as_json:
        echo_json(result.to_dict())
        if result.refused:  # a script reads the exit status: a refused run changed nothing
            raise click.exceptions.Exit(1)
        return
    if result.diff:
        click.echo(result.diff, nl=not result.diff.endswith("\n"))
    for line in result.messages:
        click.echo(line)
    if result.refused:
        raise click.ClickException(result.refused)
