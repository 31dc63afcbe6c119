"""Pre-compaction memory flush (seed 000 §16, seed 003 §1.6/§6.6).

Before a host compacts a conversation, the model gets one silent, bounded turn to write
durable memories to disk: today's daily log ``memory/YYYY-MM-DD.md`` (in the agent's
timezone) and ``MEMORY.md``. It runs at most once per compaction cycle.

* :func:`~soulframe_memory.flush_cycle.should_flush` is the pure trigger (the cycle state
  lives in :mod:`soulframe_memory.flush_cycle`).
* :func:`run_flush` is the turn itself: the flush prompt, the memory-confined tools, at most
  ``flush.max_iterations`` model calls within ``flush.timeout_s``.
* :func:`maybe_flush` is what the ``before_compaction`` hook does: both of the above, with
  the cycle state kept in ``<state_dir>/flush/<agent>.json`` under a file lock, so two calls
  in one cycle (even from two processes) never flush twice.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from soulframe import ChatModel, Session, SoulframeError, ToolContext
from soulframe.kit import (
    NO_REPLY,
    LoopResult,
    ToolEvent,
    Workspace,
    agent_now,
    chat_model_for,
    is_no_reply,
    run_tool_loop,
    system_message,
    text_of,
    user_message,
)

from .flush_cycle import (
    FlushStateFile,
    advance_cycle,
    flush_threshold,
    session_key,
    should_flush,
)
from .flush_tools import MemoryFiles, file_tools

if TYPE_CHECKING:
    from soulframe import AgentLike

log = logging.getLogger("soulframe.chat")

#: the reply that means "nothing for the user to see" (seed 003 §1.6)


# --------------------------------------------------------------------------- settings


@attrs.frozen
class FlushSettings:
    enabled: bool = True
    soft_threshold_tokens: int = 4_000
    reserve_tokens_floor: int = 20_000
    max_iterations: int = 5
    timeout_s: float = 90.0
    prompt: str = "Store durable memories now."
    allow_exec: bool = False
    context_window: int = 200_000

    @classmethod
    def from_config(cls, config: Any) -> FlushSettings:
        """Read ``[flush]`` (and ``model.context_window``) from a soulframe Config or a dict."""
        if config is None:
            return cls()

        def get(key: str, default: Any) -> Any:
            if isinstance(config, Mapping):
                table, _, leaf = key.partition(".")
                value = (config.get(table) or {}).get(leaf)
            else:
                value = config.get(key)
            return default if value is None else value

        d = cls()
        return cls(
            enabled=bool(get("flush.enabled", d.enabled)),
            soft_threshold_tokens=int(get("flush.soft_threshold_tokens", d.soft_threshold_tokens)),
            reserve_tokens_floor=int(get("flush.reserve_tokens_floor", d.reserve_tokens_floor)),
            max_iterations=int(get("flush.max_iterations", d.max_iterations)),
            timeout_s=float(get("flush.timeout_s", d.timeout_s)),
            prompt=str(get("flush.prompt", d.prompt)),
            allow_exec=bool(get("flush.allow_exec", d.allow_exec)),
            context_window=int(get("model.context_window", d.context_window)),
        )


# --------------------------------------------------------------------------- the flush turn


@attrs.frozen
class FlushResult:
    """What a flush did. ``show`` is the text to show the user, ``None`` when the model
    replied ``NO_REPLY`` (or nothing): the flush is a silent turn."""

    ran: bool
    #: "done", "max_iterations", "timeout", "error", or why it did not run ("not due", ...)
    status: str
    daily_file: str = ""
    iterations: int = 0
    written: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    reply: str = ""
    show: str | None = None
    error: str | None = None
    events: tuple[ToolEvent, ...] = ()
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "ran": self.ran,
            "status": self.status,
            "daily_file": self.daily_file,
            "iterations": self.iterations,
            "written": list(self.written),
            "refused": list(self.refused),
            "show": self.show,
            # a flush that failed (exit 1): the error object every --json command answers
            "error": {"message": self.error, "code": 1} if self.error else None,
            "elapsed_s": round(self.elapsed_s, 3),
            "tool_calls": [e.to_dict() for e in self.events],
        }


def daily_file(moment: dt.datetime) -> str:
    return f"memory/{moment:%Y-%m-%d}.md"


def flush_instructions(
    moment: dt.datetime, timezone: str | None, *, allow_exec: bool, private: bool = True
) -> str:
    today = daily_file(moment)
    tools = "read_file and write_file" + (" (and exec, in the workspace)" if allow_exec else "")
    curated = (
        "- Durable facts, decisions and preferences belong in MEMORY.md (keep it concise; "
        "read it before changing it).\n"
        if private
        else "- This is not a private session: MEMORY.md is off limits; use the daily log only.\n"
    )
    files = "MEMORY.md and memory/**/*.md" if private else "memory/**/*.md"
    return (
        "## Pre-compaction memory flush\n"
        "This conversation is about to be compacted: older messages will be summarised and "
        "cut. Anything not written to a file now may be lost.\n"
        f"- Today's daily log is {today} (it is {moment:%Y-%m-%d %H:%M} in "
        f"{timezone or 'local time'}). Append notes about what happened to it: read it "
        "first, then write_file with append=true.\n"
        f"{curated}"
        f"- Use {tools}. Only {files} can be read or written.\n"
        f"- This turn is silent. When you are done, or if there is nothing worth storing, "
        f"reply with exactly {NO_REPLY}."
    )


def normalise_transcript(transcript: Any) -> list[dict[str, Any]]:
    """A saved conversation as user/assistant turns: a list of ``{role, content}`` (OpenAI
    style; tool results become notes), a ``{"messages": [...]}`` object, or plain text."""
    if transcript is None:
        return []
    if isinstance(transcript, str):
        text = transcript.strip()
        return [user_message(f"Conversation so far (transcript):\n\n{text}")] if text else []
    if isinstance(transcript, Mapping):
        transcript = transcript.get("messages", [])
    out: list[dict[str, Any]] = []
    for i, item in enumerate(transcript, 1):
        if not isinstance(item, Mapping):
            raise SoulframeError(f"transcript: message {i}: expected an object with role and content")
        role = item.get("role")
        content = text_of(item.get("content"))
        if role in ("user", "assistant"):
            if content.strip():
                out.append({"role": role, "content": content})
        elif role in ("tool", "function"):
            name = item.get("name") or "tool"
            out.append(user_message(f"[output of {name}]\n{content}"))
        elif role in ("system", "developer"):
            continue  # the flush has its own system prompt
        else:
            raise SoulframeError(
                f"transcript: message {i}: role {role!r}; expected user, assistant, tool or system"
            )
    return out


def run_flush(
    workspace: Workspace | Path | str,
    model: ChatModel,
    transcript: Any,
    *,
    settings: FlushSettings | None = None,
    timezone: str | None = None,
    now: dt.datetime | None = None,
    system_prompt: str | None = None,
    agent: AgentLike | None = None,
    session: Session | None = None,
) -> FlushResult:
    """Run one flush turn over ``transcript`` and report what was written.

    ``system_prompt`` (the agent's own prompt) is put before the flush instructions when
    given, so the model writes memories in its own voice and conventions. Never raises for
    a model failure: the result says ``status="error"``/``"timeout"``.
    """
    settings = settings or FlushSettings()
    started = time.monotonic()
    deadline = started + settings.timeout_s
    moment = agent_now(timezone, now)
    if agent is None:
        # a flush called with a bare workspace writes through the same checks (secrets,
        # injected instructions, the sandbox) and the same configuration as the agent that
        # owns it; without one, its writes would skip every write-time check
        from soulframe import Agent

        agent = Agent.open(workspace.root if isinstance(workspace, Workspace) else workspace)
    private = session is None or session.is_private
    if private and session is not None:
        from soulframe.memorykit import sees_owner_memory

        # MEMORY.md is its owner's: a user who is not the owner neither reads nor writes it
        private = sees_owner_memory(agent, session)
    from soulframe.kit import workspace_access
    from soulframe.memorykit import guard

    files = MemoryFiles(workspace, private=private, access=workspace_access(agent))
    checked: AgentLike = agent
    files.check = lambda text, target: guard(checked, text, target=target, via="memory flush")
    # the variables the configuration names as holding keys, whatever their names
    named = {str(agent.config.get(k)) for k in ("model.api_key_env", "embedding.api_key_env")
             if agent.config.get(k)}
    tools = file_tools(files, allow_exec=settings.allow_exec, deadline=deadline, secret_env=named)
    instructions = flush_instructions(
        moment, timezone, allow_exec=settings.allow_exec, private=private
    )
    system_text = f"{system_prompt}\n\n{instructions}" if system_prompt else instructions
    conversation = [
        system_message(system_text),
        *normalise_transcript(transcript),
        user_message(
            f"{settings.prompt}\n(Today's file: {daily_file(moment)}. Reply {NO_REPLY} when done.)"
        ),
    ]
    ctx = ToolContext(agent=agent, session=session or Session.main())
    outcome: LoopResult = run_tool_loop(
        model,
        conversation,
        tools,
        ctx,
        max_iterations=max(1, settings.max_iterations),
        deadline=deadline,
    )
    refused = tuple(e.result for e in outcome.events if not e.ok)
    text = outcome.text.strip()
    return FlushResult(
        ran=True,
        status=outcome.stopped,
        daily_file=daily_file(moment),
        iterations=outcome.iterations,
        written=tuple(files.written),
        refused=refused,
        reply=text,
        show=None if is_no_reply(text) else text,
        error=outcome.error,
        events=outcome.events,
        elapsed_s=time.monotonic() - started,
    )


# --------------------------------------------------------------------------- the hook's job


def _usage_value(usage: Any, *names: str) -> Any:
    for name in names:
        if isinstance(usage, Mapping):
            if name in usage:
                return usage[name]
        elif hasattr(usage, name):
            return getattr(usage, name)
    return None


def _usage_count(usage: Any, *names: str) -> int | None:
    """A token or compaction count from the host's ``usage``, ``None`` when it gives none. A
    value that is not a whole number is refused naming the key: read as 0 (or ignored) it
    would keep the flush from ever running, and the host would never hear why."""
    value = _usage_value(usage, *names)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SoulframeError(f"before_compaction: usage[{names[0]!r}] = {value!r} — expected a whole "
                             "number, 0 or more")
    return value


def maybe_flush(
    agent: AgentLike,
    session: Session | None,
    usage: Any,
    *,
    model: ChatModel | None = None,
    now: dt.datetime | None = None,
) -> FlushResult:
    """Flush if :func:`should_flush` says so, once per compaction cycle.

    ``usage`` (a mapping or an object) carries ``total_tokens``, optionally
    ``context_window`` (default: ``model.context_window``), ``compaction_count`` (the
    compactions done so far in this session; without it a drop below the threshold starts a
    new cycle) and ``messages`` (the conversation the model should remember from).
    """
    settings = FlushSettings.from_config(agent.config)
    if not settings.enabled:
        return FlushResult(False, "disabled")
    from soulframe.kit import read_only_reason, workspace_access

    access = workspace_access(agent)
    if access != "rw":  # a flush only writes memory files; the sandbox forbids that
        return FlushResult(False, read_only_reason(access))
    total = _usage_count(usage, "total_tokens", "tokens")
    if total is None:
        raise SoulframeError(
            f"before_compaction: usage has no 'total_tokens' (got {type(usage).__name__}); pass "
            "usage={'total_tokens': ..., 'messages': [...]} so the flush can tell when it is due")
    window = _usage_count(usage, "context_window") or settings.context_window
    count = _usage_count(usage, "compaction_count", "compactions")
    transcript = _usage_value(usage, "messages", "transcript")
    threshold = flush_threshold(
        window, settings.reserve_tokens_floor, settings.soft_threshold_tokens
    )
    key = session_key(session)
    store = FlushStateFile.for_agent(agent.state_dir, agent.state_key)
    with store.session_lock(key) as locked:
        if not locked:
            return FlushResult(False, "another flush of this session is running")
        before = store.load(key)
        state = advance_cycle(before, total, threshold, count)
        due = should_flush(
            total, window, settings.reserve_tokens_floor, settings.soft_threshold_tokens, state
        )
        if not due:
            if state != before:
                store.save(key, state)
            reason = "already flushed this cycle" if state.flushed_this_cycle else "not due"
            return FlushResult(False, reason)
        if not transcript:
            log.warning(
                "memory flush is due for %s but before_compaction got no messages "
                "(pass usage={'total_tokens': ..., 'messages': [...]}); skipped",
                key,
            )
            if state != before:
                store.save(key, state)
            return FlushResult(False, "no messages")
        try:
            if model is None:
                model = chat_model_for(agent, "flush")
            return run_flush(
                agent.workspace.root,
                model,
                transcript,
                settings=settings,
                timezone=agent.spec.timezone or agent.config.get("timezone"),
                now=now,
                system_prompt=_flush_system_prompt(agent, session),
                agent=agent,
                session=session,
            )
        finally:
            # marked even when there is no model or it failed: a flush that errors on every
            # call must not turn each later turn of this cycle into another failing attempt
            store.save(key, state.mark_flushed())


def _flush_system_prompt(agent: AgentLike, session: Session | None) -> str | None:
    try:
        return str(agent.system_prompt(session or Session.main()).text)
    except Exception as exc:  # the prompt is a courtesy; a flush without it still saves memories
        log.info(
            "memory flush: building the system prompt failed (%s); using the flush prompt alone",
            exc,
        )
        return None
