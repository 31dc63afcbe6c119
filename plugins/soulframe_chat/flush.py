"""Pre-compaction memory flush (seed 000 §16, seed 003 §1.6/§6.6).

Before a host compacts a conversation, the model gets one silent, bounded turn to write
durable memories to disk: today's daily log ``memory/YYYY-MM-DD.md`` (in the agent's
timezone) and ``MEMORY.md``. It runs at most once per compaction cycle.

* :func:`should_flush` is the pure trigger: ``total_tokens`` has reached
  ``context_window - reserve_floor - soft_threshold`` and this cycle has not flushed yet.
* :func:`run_flush` is the turn itself: the flush prompt, the memory-confined tools, at most
  ``flush.max_iterations`` model calls within ``flush.timeout_s``.
* :func:`maybe_flush` is what the ``before_compaction`` hook does: both of the above, with
  the cycle state kept in ``<state_dir>/flush/<agent>.json`` under a file lock, so two calls
  in one cycle (even from two processes) never flush twice.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import attrs
from soulframe.model import ChatModel, Session, SoulframeError, ToolContext
from soulframe.workspace import Workspace, atomic_write, ensure_private_dir

from . import messages as m
from .loop import LoopResult, ToolEvent, run_tool_loop
from .memory_tools import MemoryFiles, memory_tools

log = logging.getLogger("soulframe.chat")

#: the reply that means "nothing for the user to see" (seed 003 §1.6)
NO_REPLY = "NO_REPLY"


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


# --------------------------------------------------------------------------- the trigger


@attrs.frozen
class CycleState:
    """Where a session is in its compaction cycles.

    ``compaction_count`` counts the compactions so far (from the host when it says, else
    inferred); ``flushed_at`` is the count at which the last flush ran. A cycle has been
    flushed when the two are equal.
    """

    compaction_count: int = 0
    flushed_at: int | None = None

    @property
    def flushed_this_cycle(self) -> bool:
        return self.flushed_at == self.compaction_count

    def mark_flushed(self) -> CycleState:
        return attrs.evolve(self, flushed_at=self.compaction_count)

    def to_dict(self) -> dict[str, Any]:
        return {"compaction_count": self.compaction_count, "flushed_at": self.flushed_at}

    @classmethod
    def from_dict(cls, data: Any) -> CycleState:
        if not isinstance(data, Mapping):
            return cls()
        count = data.get("compaction_count", 0)
        flushed = data.get("flushed_at")
        return cls(
            compaction_count=count if isinstance(count, int) else 0,
            flushed_at=flushed if isinstance(flushed, int) else None,
        )


def flush_threshold(context_window: int, reserve_floor: int, soft_threshold: int) -> int:
    """The token count at which a flush is due: ``context_window - reserve_floor - soft_threshold``."""
    return context_window - reserve_floor - soft_threshold


def should_flush(
    total_tokens: int,
    context_window: int,
    reserve_floor: int,
    soft_threshold: int,
    cycle_state: CycleState,
) -> bool:
    """Is a memory flush due? Pure: no I/O.

    True when ``total_tokens`` has reached the threshold and this compaction cycle has not
    flushed yet. A context window too small to leave a positive threshold never flushes
    (there is no room for a flush turn to be useful).
    """
    threshold = flush_threshold(context_window, reserve_floor, soft_threshold)
    if threshold <= 0 or total_tokens <= 0:
        return False
    return total_tokens >= threshold and not cycle_state.flushed_this_cycle


def advance_cycle(
    state: CycleState, total_tokens: int, threshold: int, compaction_count: int | None = None
) -> CycleState:
    """Move ``state`` to the cycle the host is in now.

    A host that reports ``compaction_count`` is believed. Otherwise a usage that fell below
    the threshold after a flush means a compaction happened in between: a new cycle starts
    (the flush re-arms), so the next time the threshold is reached it flushes again.
    """
    if compaction_count is not None:
        if compaction_count != state.compaction_count:
            return attrs.evolve(state, compaction_count=compaction_count)
        return state
    if state.flushed_this_cycle and total_tokens < threshold:
        return attrs.evolve(state, compaction_count=state.compaction_count + 1)
    return state


# --------------------------------------------------------------------------- state file


@contextlib.contextmanager
def _flock(path: Path, *, blocking: bool) -> Iterator[bool]:
    """Hold an exclusive ``flock`` on ``path``: yields False when ``blocking`` is off and
    someone else holds it. flock (not lockf) so two threads of one process exclude each
    other too. Where fcntl does not exist (Windows) it yields True: the state file still
    prevents a second flush in a cycle, only not two racing ones."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            import fcntl
        except ImportError:
            yield True
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


class FlushStateFile:
    """``<state_dir>/flush/<agent>.json``: the cycle state of each session, 0600, written
    atomically under a lock. :meth:`session_lock` is held through a whole flush, so two
    calls for one session never flush at once while other sessions are not held up."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_agent(cls, state_dir: Path, agent_id: str) -> FlushStateFile:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", agent_id) or "default"
        return cls(ensure_private_dir(Path(state_dir) / "flush") / f"{safe}.json")

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            # a damaged state file costs at most one extra flush: say so and start over
            log.warning("memory flush: ignoring unreadable state file %s (%s)", self.path, exc)
            return {}
        return data if isinstance(data, dict) else {}

    def load(self, session_key: str) -> CycleState:
        with _flock(self.path.with_suffix(".lock"), blocking=True):
            return CycleState.from_dict((self._read().get("sessions") or {}).get(session_key))

    def save(self, session_key: str, state: CycleState) -> None:
        with _flock(self.path.with_suffix(".lock"), blocking=True):
            data = self._read()
            sessions = data.setdefault("sessions", {})
            entry = state.to_dict()
            entry["updated_at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            sessions[session_key] = entry
            atomic_write(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def session_lock(self, session_key: str) -> contextlib.AbstractContextManager[bool]:
        """Non-blocking: yields False when another flush of this session is running."""
        digest = hashlib.sha256(session_key.encode("utf-8")).hexdigest()[:16]
        locks = ensure_private_dir(self.path.parent / "locks")
        return _flock(locks / f"{self.path.stem}-{digest}.lock", blocking=False)


def session_key(session: Session | None) -> str:
    if session is None:
        return "main"
    if session.key:
        return session.key
    return ":".join([session.kind, session.user_id or "-", session.channel or "-"])


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
            "error": self.error,
            "elapsed_s": round(self.elapsed_s, 3),
            "tool_calls": [e.to_dict() for e in self.events],
        }


def agent_now(timezone: str | None, now: dt.datetime | None = None) -> dt.datetime:
    """Now (or ``now``) in the agent's timezone; the system's local zone when none is set."""
    if timezone:
        try:
            tz: dt.tzinfo = ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise SoulframeError(
                f"timezone {timezone!r} is not a known IANA timezone (e.g. Europe/Berlin)"
            ) from None
    else:
        tz = dt.datetime.now().astimezone().tzinfo or dt.UTC
    if now is None:
        return dt.datetime.now(tz)
    if now.tzinfo is None:
        now = now.replace(tzinfo=tz)
    return now.astimezone(tz)


def daily_file(moment: dt.datetime) -> str:
    return f"memory/{moment:%Y-%m-%d}.md"


def is_no_reply(text: str) -> bool:
    """``NO_REPLY`` alone, allowing markdown emphasis, quotes and a trailing period."""
    return text.strip().strip("*_`\"'.").strip() == NO_REPLY or not text.strip()


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
        return [m.user(f"Conversation so far (transcript):\n\n{text}")] if text else []
    if isinstance(transcript, Mapping):
        transcript = transcript.get("messages", [])
    out: list[dict[str, Any]] = []
    for i, item in enumerate(transcript):
        if not isinstance(item, Mapping):
            raise SoulframeError(f"transcript item {i}: expected an object with role and content")
        role = item.get("role")
        content = m.text_of(item.get("content"))
        if role in ("user", "assistant"):
            if content.strip():
                out.append({"role": role, "content": content})
        elif role == "tool":
            name = item.get("name") or "tool"
            out.append(m.user(f"[output of {name}]\n{content}"))
        elif role == "system":
            continue  # the flush has its own system prompt
        else:
            raise SoulframeError(
                f"transcript item {i}: role {role!r}; expected user, assistant, tool or system"
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
    agent: Any = None,
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
    private = session is None or session.is_private
    from soulframe.sandbox import workspace_access

    files = MemoryFiles(workspace, private=private,
                        access=workspace_access(agent) if agent is not None else "rw")
    if agent is not None:
        from soulframe.memory.safety import guard

        files.check = lambda text, target: guard(agent, text, target=target, via="memory flush")
    tools = memory_tools(files, allow_exec=settings.allow_exec, deadline=deadline)
    instructions = flush_instructions(
        moment, timezone, allow_exec=settings.allow_exec, private=private
    )
    system_text = f"{system_prompt}\n\n{instructions}" if system_prompt else instructions
    conversation = [
        m.system(system_text),
        *normalise_transcript(transcript),
        m.user(
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


def maybe_flush(
    agent: Any,
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
    from soulframe.sandbox import read_only_reason, workspace_access

    access = workspace_access(agent)
    if access != "rw":  # a flush only writes memory files; the sandbox forbids that
        return FlushResult(False, read_only_reason(access))
    total = int(_usage_value(usage, "total_tokens", "tokens") or 0)
    window = int(_usage_value(usage, "context_window") or settings.context_window)
    count = _usage_value(usage, "compaction_count", "compactions")
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
        state = advance_cycle(before, total, threshold, count if isinstance(count, int) else None)
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
        if model is None:
            from .models import chat_model_for

            model = chat_model_for(agent)
        result = run_flush(
            agent.workspace,
            model,
            transcript,
            settings=settings,
            timezone=agent.spec.timezone or agent.config.get("timezone"),
            now=now,
            system_prompt=_flush_system_prompt(agent, session),
            agent=agent,
            session=session,
        )
        # marked even when the model failed: a flush that errors on every call must not turn
        # each later turn of this cycle into another slow, failing attempt
        store.save(key, state.mark_flushed())
        return result


def _flush_system_prompt(agent: Any, session: Session | None) -> str | None:
    try:
        return str(agent.system_prompt(session or Session.main()).text)
    except Exception as exc:  # the prompt is a courtesy; a flush without it still saves memories
        log.info(
            "memory flush: building the system prompt failed (%s); using the flush prompt alone",
            exc,
        )
        return None
