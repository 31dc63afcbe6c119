"""What an MCP client may ask of a server started for one session: it may narrow what the
server serves, never widen it (its session kind, its user and its prompt mode).

``soulframe serve --session group --user bob`` is launched by a host that decided who is on
the other end. A client's prompt arguments are the other end talking, so they may pick a
session kind that sees *less* (a group server may build a sub-agent prompt) but never one
that sees more (a group server never builds a main-session prompt with MEMORY.md), and never
another user's files.
"""

from __future__ import annotations

#: for each server session kind, the kinds a prompt argument may ask for: those whose
#: context files are a subset of its own (see soulframe.context.visible_in_session).
#: Sub-agent and cron sessions see the same two files, so each may ask for the other;
#: a heartbeat may see USER.md, which a group never does, so neither narrows the other.
NARROWER: dict[str, tuple[str, ...]] = {
    "main": ("main", "group", "heartbeat", "subagent", "cron"),
    "group": ("group", "subagent", "cron"),
    "heartbeat": ("heartbeat", "subagent", "cron"),
    "subagent": ("subagent", "cron"),
    "cron": ("cron", "subagent"),
}


class ScopeError(ValueError):
    """A prompt argument asked for more than the server serves."""


def prompt_kind(server_kind: str, asked: str | None) -> str:
    """The session kind a prompt is built for: ``asked`` when it narrows ``server_kind``."""
    if not asked:
        return server_kind
    allowed = NARROWER.get(server_kind, (server_kind,))
    if asked not in NARROWER:
        raise ScopeError(f"session {asked!r}: expected one of {', '.join(allowed)}")
    if asked not in allowed:
        raise ScopeError(
            f"session {asked!r}: this server serves {server_kind} sessions (soulframe serve "
            f"--session {server_kind}); a prompt may only narrow that, to {', '.join(allowed)}"
        )
    return asked


def prompt_user(server_user: str | None, asked: str | None) -> str | None:
    """The user a prompt is built for: only the server's own ``--user``."""
    if not asked or asked == server_user:
        return server_user
    if server_user is None:
        raise ScopeError(
            f"user {asked!r}: this server serves no user's files (started without --user); "
            "a per-user prompt needs its own server, `soulframe serve --user ID`"
        )
    raise ScopeError(
        f"user {asked!r}: this server serves user {server_user!r} only (soulframe serve "
        f"--user {server_user}); leave `user` out"
    )


#: prompt modes from the one that shows least: a ``mode`` argument may pick the server
#: session's own mode or one before it (``full`` adds the owner's ids to a sub-agent prompt)
MODES: tuple[str, ...] = ("none", "minimal", "task", "full")


def prompt_mode(server_kind: str, server_mode: str, asked: str | None) -> str | None:
    """The mode a prompt is forced to: ``asked`` when it shows no more than ``server_mode``,
    the mode the server's own session runs."""
    if not asked or asked == server_mode:
        return asked
    if asked not in MODES:
        raise ScopeError(f"mode {asked!r}: expected one of {', '.join(MODES)}")
    allowed = MODES[: MODES.index(server_mode) + 1] if server_mode in MODES else (server_mode,)
    if asked not in allowed:
        raise ScopeError(
            f"mode {asked!r}: this server's {server_kind} sessions run {server_mode} mode; a "
            f"prompt may only narrow that, to {', '.join(reversed(allowed))}"
        )
    return asked
