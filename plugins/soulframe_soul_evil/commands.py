"""``soulframe soul-evil log`` and ``soulframe soul-evil status``."""

from __future__ import annotations

import click
from soulframe.cli import State, echo_json, pass_state


@click.group("soul-evil")
def soul_evil_group() -> None:
    """The alternate persona (SOUL_EVIL.md): its schedule and every recorded swap.

    \b
      soulframe -w ~/agent soul-evil status
      soulframe -w ~/agent soul-evil log --limit 5
    """


@soul_evil_group.command("log")
@click.option("--limit", type=click.IntRange(min=0), default=20, show_default=True,
              help="Show the last N swaps (0: none).")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON list, oldest first, of {time, agent, session_kind, session_key, "
                   "user_id, persona, reason}.")
@pass_state
def log_command(state: State, limit: int, as_json: bool) -> None:
    """Every time SOUL_EVIL.md replaced SOUL.md: when, for which session, and why.

    \b
      soulframe -w ~/agent soul-evil log
      soulframe -w ~/agent soul-evil log --limit 100 --json
    """
    from .audit import audit_path, read

    agent = state.agent()
    entries, bad = read(agent, limit)
    for line in bad:
        click.secho(f"warning: {line}", fg="yellow", err=True)
    if as_json:
        echo_json(entries)
        return
    if not entries:
        click.echo(f"no swaps recorded ({audit_path(agent)})")
        return
    for e in entries:
        who = e.get("session_kind") or "?"
        if e.get("session_key"):
            who += f" {e['session_key']}"
        click.echo(f"{e.get('time')}  {who}  {e.get('persona')}  ({e.get('reason')})")


@soul_evil_group.command("status")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {enabled, file, file_exists, now, active_window, next_window, chance}.")
@pass_state
def status_command(state: State, as_json: bool) -> None:
    """Whether the alternate persona is configured, active now, and when it is next.

    \b
      soulframe -w ~/agent soul-evil status
      soulframe -w ~/agent soul-evil status --json
    """
    from soulframe import Session
    from soulframe.kit import session_now

    from .schedule import Schedule

    agent = state.agent()
    schedule = Schedule.from_config(agent.config)
    now = session_now(agent, Session.main())
    window = schedule.window_containing(now) if schedule.enabled else None
    upcoming = schedule.next_window(now) if schedule.enabled else None
    exists = (agent.workspace.root / schedule.file).is_file()
    data = {
        "enabled": schedule.enabled,
        "file": schedule.file,
        "file_exists": exists,
        "now": now.isoformat(timespec="seconds"),
        "active_window": [t.isoformat(timespec="minutes") for t in window] if window else None,
        "next_window": [t.isoformat(timespec="minutes") for t in upcoming] if upcoming else None,
        "chance": schedule.chance,
    }
    if as_json:
        echo_json(data)
        return
    if not schedule.enabled:
        click.echo("soul-evil is disabled (soul_evil.enabled = false)")
        return
    click.echo(f"persona file: {schedule.file}" + ("" if exists else "  (missing: no swap will happen)"))
    if window:
        click.echo(f"active now: window {window[0]:%H:%M}–{window[1]:%H:%M} ({now.tzinfo})")
    else:
        click.echo("active now: no window")
    if upcoming:
        click.echo(f"next window: {upcoming[0]:%Y-%m-%d %H:%M}–{upcoming[1]:%H:%M}")
    if schedule.chance:
        click.echo(f"outside windows: chance {schedule.chance:g} per session and day")
