"""The log of chat-model calls soulframe made (``soulframe logs``), as ``llm logs`` keeps one.

Every call through :func:`soulframe._engine.toolloop.chat_model_for` — heartbeat, boot, flush,
summon, consolidate, save-session — appends one JSON line to ``<state_dir>/model-calls.jsonl``:
when, which agent, what for, which provider and model, tokens in and out as the provider
reported them, how long it took, and the outcome (an error's message with secrets masked).
Never the prompt or the reply: those hold the agent's memory, and the log is for cost and
failures, not a second copy of it. Lines older than ``logs.retention_days`` are dropped, at
most once a day; ``logs.enabled = false`` writes nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .model import ChatModel, ChatReply, SoulframeError, ToolSpec

if TYPE_CHECKING:
    from .model import AgentLike

FILE_NAME = "model-calls.jsonl"


def log_path(agent: AgentLike) -> Path:
    return Path(str(agent.config.get("state_dir"))).expanduser() / FILE_NAME


class LoggedChatModel:
    """A chat model whose every call is logged; otherwise the model it wraps, held to the
    contract the routines rely on: a failure is an ``error`` (the core's ``ChatModelError``,
    which :func:`~soulframe._engine.toolloop.chat_model_for` owns and passes in), an answer a
    :class:`ChatReply`. ``plugin`` names the plugin that registered the model, for errors."""

    def __init__(self, model: ChatModel, agent: AgentLike, purpose: str, plugin: str = "",
                 error: type[SoulframeError] = SoulframeError) -> None:
        self.inner = model
        self.name = model.name
        self.model_id = model.model_id
        self._agent = agent
        self._purpose = purpose
        self._plugin = plugin
        self._error = error

    def __getattr__(self, attr: str) -> Any:  # a client's own extras (max_tokens, ...)
        return getattr(self.inner, attr)

    def chat(self, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[ToolSpec] = (),
             timeout: float | None = None) -> ChatReply:
        started = time.monotonic()
        try:
            reply = self.inner.chat(messages, tools=tools, timeout=timeout)
        except self._error as exc:
            self._record(started, None, exc)
            raise
        except Exception as exc:
            # the routines catch ChatModelError alone, as every client promises to raise: a
            # third-party client letting out anything else would end a cron heartbeat or a
            # host's compaction with a traceback, so it becomes one error naming the plugin
            error = self._broken(f"failed: {type(exc).__name__}: {exc}")
            self._record(started, None, error)
            raise error from exc
        if not isinstance(reply, ChatReply):
            error = self._broken(f"returned a {type(reply).__name__}, not a ChatReply")
            self._record(started, None, error)
            raise error
        self._record(started, reply, None)
        return reply

    def _broken(self, what: str) -> Exception:
        from .logs import mask_secrets

        return self._error(
            mask_secrets(f"chat model {self.name!r} (plugin {self._plugin or '?'}) {what}")
        )

    def _record(self, started: float, reply: ChatReply | None, error: BaseException | None) -> None:
        config = self._agent.config
        if not config.get("logs.enabled"):
            return
        from .logs import mask_secrets

        usage = dict(reply.usage) if reply is not None else {}
        entry = {
            "time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "agent": self._agent.id,
            "purpose": self._purpose,
            "provider": self.name,
            "model": mask_secrets(str(self.model_id)),
            "input_tokens": _tokens(usage, "input_tokens", "prompt_tokens"),
            "output_tokens": _tokens(usage, "output_tokens", "completion_tokens"),
            "duration_s": round(time.monotonic() - started, 3),
            "outcome": "ok" if error is None else "error",
            "error": None if error is None else mask_secrets(str(error))[:500],
            "tool_calls": len(reply.tool_calls) if reply is not None else 0,
        }
        try:
            append(log_path(self._agent), entry, int(config.get("logs.retention_days")))
        except OSError:
            pass  # a log that cannot be written never fails the call it describes


def _tokens(usage: Mapping[str, Any], *names: str) -> int | None:
    for name in names:
        value = usage.get(name)
        if isinstance(value, int):
            return value
    return None


def append(path: Path, entry: Mapping[str, Any], retention_days: int) -> None:
    """Append one line (one ``O_APPEND`` write, so concurrent runs do not interleave), after
    dropping lines older than the retention when the oldest line is a day past it."""
    from .workspace import ensure_private_dir

    ensure_private_dir(path.parent)
    _prune(path, retention_days)
    line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _prune(path: Path, retention_days: int) -> None:
    try:
        with path.open(encoding="utf-8") as f:
            first = f.readline()
    except OSError:
        return
    cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(days=retention_days)
    if _when(first) is None or _when(first) >= cutoff - dt.timedelta(days=1):  # type: ignore[operator]
        return
    kept = [line for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
            if (_when(line) or cutoff) >= cutoff]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(kept), encoding="utf-8")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def _when(line: str) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(json.loads(line)["time"])
    except (ValueError, KeyError, TypeError):
        return None


def entries(path: Path) -> Iterator[dict[str, Any]]:
    """The logged calls, oldest first (a damaged line is skipped)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            yield item
