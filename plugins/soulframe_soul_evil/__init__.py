"""soul-evil: an alternate persona (SOUL_EVIL.md) in place of SOUL.md, during a daily window
or by chance (seed 003 §1.5, §5.3, §8.8).

The swap happens in memory, in the ``transform_context_files`` chain: nothing on disk
changes, and the next prompt after the window uses SOUL.md again. Unlike the original,
every swap is recorded (time, session, persona, reason) in
``<state_dir>/agents/<agent id>/soul_evil.jsonl``; ``soulframe soul-evil log`` shows them and
``soulframe soul-evil status`` says whether a window is active and when the next one starts.

Config (all under ``soul_evil.``): ``enabled``, ``file`` (default SOUL_EVIL.md), ``at``
(HH:MM, agent timezone), ``duration`` (``30m``, ``1h``, ``90s``), ``chance`` (0..1).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING

import click
from soulframe import ContextFile, DoctorCheck, Finding, K, Key, Session, SoulframeWarning, hookimpl

if TYPE_CHECKING:
    from soulframe import AgentLike


class SoulEvilWarning(SoulframeWarning):
    """The alternate persona was due but could not be used (missing or empty file)."""


@hookimpl
def transform_context_files(agent: AgentLike, session: Session, files: list[ContextFile]) -> list[ContextFile] | None:
    if not agent.config.get("soul_evil.enabled"):
        return None
    from soulframe.kit import session_now, visible_in_session

    from .schedule import Schedule

    if not visible_in_session("SOUL.md", session, agent.config):
        return None  # a sub-agent or cron session never sees SOUL.md: nothing to swap
    schedule = Schedule.from_config(agent.config)
    now = session_now(agent, session)
    reason = schedule.decide(now, session.key)
    if reason is None:
        return None
    evil = _read_alternate(agent, schedule.file)
    if evil is None:
        return None
    from .audit import record

    out: list[ContextFile] = []
    swapped = False
    for f in files:
        if f.name == "SOUL.md" and not swapped:
            out.append(ContextFile(
                name="SOUL.md", content=evil, source=f"soul-evil:{schedule.file}",
                kind=f.kind, scope=f.scope, path=f.path,
            ))
            swapped = True
        else:
            out.append(f)
    if not swapped:
        out.append(ContextFile(name="SOUL.md", content=evil, source=f"soul-evil:{schedule.file}"))
    record(agent, {
        "time": now.isoformat(timespec="seconds"),
        "agent": agent.id,
        "session_kind": session.kind,
        "session_key": session.key,
        "user_id": session.user_id,
        "persona": schedule.file,
        "reason": reason,
    })
    return out


def _read_alternate(agent: AgentLike, name: str) -> str | None:
    from soulframe import PathEscapeError

    try:
        path = agent.workspace.resolve(name)
    except PathEscapeError as exc:
        warnings.warn(f"soul-evil: {exc}; SOUL.md is used", SoulEvilWarning, stacklevel=3)
        return None
    if not path.is_file():
        warnings.warn(
            f"soul-evil: {name} not found in {agent.workspace.root}; SOUL.md is used "
            f"(create {name} or set soul_evil.enabled = false)",
            SoulEvilWarning, stacklevel=3,
        )
        return None
    try:
        text: str = path.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        warnings.warn(f"soul-evil: cannot read {name} ({exc.strerror}); SOUL.md is used",
                      SoulEvilWarning, stacklevel=3)
        return None
    if not text.strip():
        warnings.warn(f"soul-evil: {name} is empty; SOUL.md is used", SoulEvilWarning, stacklevel=3)
        return None
    return text


@hookimpl
def register_commands(cli: click.Group) -> None:
    from .commands import soul_evil_group

    cli.add_command(soul_evil_group)


@hookimpl
def register_config_keys() -> dict[str, Key]:
    return {
        "soul_evil.enabled": K(False, "swap SOUL.md for SOUL_EVIL.md in memory", seed="003 §1.5"),
        "soul_evil.file": K("SOUL_EVIL.md", "the alternate persona file", seed="003 §5.3"),
        "soul_evil.at": K(None, "daily window start, HH:MM", types=(str, type(None)), seed="003 §5.3"),
        "soul_evil.duration": K(None, "window length, e.g. 30m or 1h", types=(str, type(None)), seed="003 §5.3"),
        "soul_evil.chance": K(0.0, "probability of the swap outside a window (0..1)", seed="003 §1.5"),
    }


def soul_evil(agent: AgentLike) -> Iterable[Finding]:
    """The alternate persona is enabled but can never be used."""
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


@hookimpl
def register_doctor_checks() -> list[DoctorCheck]:
    return [soul_evil]
