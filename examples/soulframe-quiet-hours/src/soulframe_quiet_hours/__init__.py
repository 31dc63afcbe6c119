"""Quiet hours: a prompt section at order 8.5 and a `soulframe quiet-hours` command.

Everything a soulframe plugin needs is here: ``@hookimpl`` functions named after hooks in
``soulframe.hookspecs``, and one entry point in pyproject.toml.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import click
from soulframe import PromptContext, Section, hookimpl

PLUGIN = "soulframe_quiet_hours"
DEFAULT_START = "22:00"
DEFAULT_END = "07:00"


def _parse(value: str, key: str) -> dt.time:
    try:
        hours, minutes = value.split(":")
        return dt.time(int(hours), int(minutes))
    except ValueError as exc:
        raise ValueError(
            f"[plugins.config.{PLUGIN}] {key} = {value!r} — expected HH:MM, e.g. 22:00"
        ) from exc


def window(settings: Any) -> tuple[dt.time, dt.time]:
    start = _parse(str(settings.get("start", DEFAULT_START)), "start")
    end = _parse(str(settings.get("end", DEFAULT_END)), "end")
    return start, end


def is_quiet(now: dt.time, start: dt.time, end: dt.time) -> bool:
    """True inside the window; a window such as 22:00-07:00 crosses midnight."""
    if start <= end:
        return start <= now < end
    return now >= start or now < end


def render(ctx: PromptContext) -> str | None:
    if ctx.mode == "minimal" and ctx.session.kind != "heartbeat":
        return None  # a sub-agent messages no one; a heartbeat (minimal too) may report
    start, end = window(ctx.config.plugin_config(PLUGIN))
    quiet = is_quiet(ctx.now.time(), start, end)
    state = "It is quiet hours now." if quiet else "It is not quiet hours now."
    return (
        "## Quiet Hours\n"
        f"The user does not want unprompted messages between {start:%H:%M} and {end:%H:%M}. "
        f"{state} During quiet hours, answer when asked but do not start conversations, "
        "send reminders or report heartbeat findings; keep them for the morning."
    )


@hookimpl
def register_prompt_sections() -> list[Section]:
    return [
        Section(
            name="quiet_hours",
            order=8.5,  # right after the seeds' Time section (8)
            render=render,
            modes=frozenset({"full", "task", "minimal"}),
            zone="dynamic",  # depends on the clock, so below the prompt-cache boundary
            truncate_priority=30,
            title="Quiet Hours",
        )
    ]


@hookimpl
def register_commands(cli: click.Group) -> None:
    @cli.command("quiet-hours")
    @click.pass_context
    def quiet_hours(ctx: click.Context) -> None:
        """Say whether quiet hours are on right now, by the agent's clock.

        \b
          soulframe -w ~/agent quiet-hours
        """
        agent = ctx.obj.agent()
        start, end = window(agent.config.plugin_config(PLUGIN))
        # the agent's clock (its timezone), as the prompt section reads it
        quiet = is_quiet(agent.now().time(), start, end)
        click.echo(f"quiet hours {start:%H:%M}-{end:%H:%M}: {'on' if quiet else 'off'} now")
