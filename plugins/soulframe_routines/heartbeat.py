"""The heartbeat (seed 001 §5, seed 003 §6.7/§8.9): a health-check message sent to the
agent in a heartbeat session; the agent works through HEARTBEAT.md and answers exactly
``HEARTBEAT_OK`` when nothing needs attention.

There is no timer here: a scheduler (cron, systemd, a monitoring probe) runs
``soulframe heartbeat`` and reads its exit code. Each run the model answered is logged as
one line in today's daily log, ``memory/YYYY-MM-DD.md``; a failed run (no model, no key, an
HTTP error, a timeout) is not — it is reported on stderr and by the exit status. A HEARTBEAT.md with nothing but
headings, comments and empty bullets is "nothing to do" (seed 003: an empty HEARTBEAT.md
skips the call): exit 0, no model call, no tokens spent, and no model needed; the status line
says when none is configured, so a monitor's log shows it before the first real task.
"""

from __future__ import annotations

import datetime as dt
import re
import time
import warnings
from typing import TYPE_CHECKING, Any

import attrs
from soulframe import ChatModel, Session, SoulframeError, SoulframeWarning
from soulframe.kit import ChatModelError, agent_now, chat_model_for, system_message, user_message

if TYPE_CHECKING:
    from soulframe import AgentLike

HEARTBEAT_OK = "HEARTBEAT_OK"
HEARTBEAT_FILE = "HEARTBEAT.md"

DEFAULT_MESSAGE = (
    "Heartbeat check. Work through the checklist in HEARTBEAT.md (it is in your context) and "
    "follow it strictly; do not repeat old tasks from earlier conversations. If nothing "
    f"needs attention, reply with exactly {HEARTBEAT_OK}. Otherwise reply with what needs "
    "attention, in one or two short lines."
)

#: exit codes of `soulframe heartbeat`
EXIT_OK, EXIT_ATTENTION, EXIT_ERROR = 0, 1, 2

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_EMPTY_LINE = re.compile(
    r"""^\s*(
        \#{1,6}(\s.*)?        # a heading
      | [-*+](\s+\[[ xX]?\])?  # an empty bullet, or an empty checkbox
      | \d+[.)]               # an empty numbered item
      | (-{3,}|\*{3,}|_{3,})  # a rule
      | >                     # an empty quote
    )?\s*$""",
    re.VERBOSE,
)


def has_tasks(text: str) -> bool:
    """True when HEARTBEAT.md holds anything but headings, comments and empty bullets."""
    body = _COMMENT.sub("", text)
    return any(not _EMPTY_LINE.match(line) for line in body.splitlines())


def is_heartbeat_ok(text: str) -> bool:
    """The reply is ``HEARTBEAT_OK`` alone (markdown emphasis, quotes, a period allowed)."""
    return text.strip().strip("*_`\"'.!").strip() == HEARTBEAT_OK


@attrs.frozen
class HeartbeatResult:
    #: "ok", "attention", "error" or "nothing to do"
    status: str
    reply: str = ""
    error: str | None = None
    detail: str = ""
    logged_to: str | None = None
    elapsed_s: float = 0.0
    #: what the consolidation after the run did (``memory.consolidate.on_heartbeat``)
    consolidation: str | None = None

    @property
    def exit_code(self) -> int:
        if self.status in ("ok", "nothing to do"):
            return EXIT_OK
        return EXIT_ATTENTION if self.status == "attention" else EXIT_ERROR

    def line(self) -> str:
        """The one-line status `soulframe heartbeat` prints."""
        if self.status == "ok":
            return f"{HEARTBEAT_OK} ({self.elapsed_s:.1f}s)"
        if self.status == "nothing to do":
            return f"nothing to do: {self.detail}"
        if self.status == "attention":
            return f"ATTENTION: {_first_line(self.reply)}"
        return f"Error: {self.error}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "ok": self.exit_code == EXIT_OK,
            "exit_code": self.exit_code,
            "reply": self.reply,
            # a run that failed as a whole: the error object every --json command answers
            "error": {"message": self.error, "code": self.exit_code} if self.error else None,
            "detail": self.detail,
            "logged_to": self.logged_to,
            "elapsed_s": round(self.elapsed_s, 3),
            "consolidation": self.consolidation,
        }


def _first_line(text: str, limit: int = 200) -> str:
    line = next((x.strip() for x in text.strip().splitlines() if x.strip()), "(empty reply)")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def log_run(agent: AgentLike, moment: dt.datetime, entry: str, via: str = "heartbeat") -> str | None:
    """Append ``- HH:MM entry`` to the daily log through the core's memory API (locked,
    fsynced, ``# YYYY-MM-DD`` heading on a new file), its provenance naming the routine
    (``via``). Returns the workspace-relative path, or None when memory is disabled
    (``memory.enabled = false``): then nothing is written."""
    from soulframe.memorykit import UnsafeWriteError

    try:
        path = agent.memory.append_daily(f"{moment:%H:%M} {entry}", when=moment, via=via)
    except UnsafeWriteError as exc:
        # the reply waits in quarantine; the log still says the run happened, and why the
        # reply is not there
        warnings.warn(f"the reply was not written to the daily log: {exc}", SoulframeWarning, stacklevel=2)
        try:
            path = agent.memory.append_daily(
                f"{moment:%H:%M} {via}: needs attention (the reply was withheld by the "
                "write-time checks; `soulframe memory quarantine` shows it)", when=moment, via=via)
        except SoulframeError:
            return None
    except SoulframeError:
        return None
    return str(agent.workspace.relative(path))


def _model_note(agent: AgentLike, model: ChatModel | None) -> str:
    """A clause for the "nothing to do" line when no chat model could answer a real task."""
    if model is not None:
        return ""
    try:
        chat_model_for(agent)
    except (ChatModelError, SoulframeError) as exc:
        return f" (no model call needed; a task would fail: {exc})"
    return ""


def run_heartbeat(
    agent: AgentLike,
    *,
    model: ChatModel | None = None,
    message: str = DEFAULT_MESSAGE,
    force: bool = False,
    timeout: float | None = None,
    now: dt.datetime | None = None,
    log: bool = True,
) -> HeartbeatResult:
    """One heartbeat run. ``force`` calls the model even when HEARTBEAT.md has no tasks
    (a pure liveness probe of the model)."""
    started = time.monotonic()
    ws = agent.workspace
    path = ws.root / HEARTBEAT_FILE
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
    idle: str | None = None
    if not force:
        if text is None:
            idle = f"no {HEARTBEAT_FILE} in {ws.root}"
        elif not has_tasks(text):
            idle = f"{HEARTBEAT_FILE} has only headings and empty items"
    timezone = agent.spec.timezone or agent.config.get("timezone")
    if idle is not None:
        return HeartbeatResult("nothing to do", detail=idle + _model_note(agent, model))
    try:
        if model is None:
            model = chat_model_for(agent, "heartbeat")
        prompt = agent.system_prompt(Session.heartbeat()).text
        reply = model.chat([system_message(prompt), user_message(message)], timeout=timeout)
    except (ChatModelError, SoulframeError) as exc:
        # not logged: the daily log is loaded into every prompt, and a cron job whose model
        # is missing or down would fill it (and the next prompts) with the same error line;
        # the exit status and stderr are where a scheduler looks for failures
        return HeartbeatResult("error", error=str(exc), elapsed_s=time.monotonic() - started)
    else:
        status = "ok" if is_heartbeat_ok(reply.text) else "attention"
        result = HeartbeatResult(
            status, reply=reply.text.strip(), elapsed_s=time.monotonic() - started
        )
        entry = (
            "heartbeat: OK"
            if status == "ok"
            else f"heartbeat: needs attention — {_first_line(reply.text)}"
        )
    if not log or not ws.root.is_dir():  # no workspace yet: nowhere to log, and not ours to create
        return result
    result = attrs.evolve(result, logged_to=log_run(agent, agent_now(timezone, now), entry))
    if agent.config.get("memory.consolidate.on_heartbeat") and agent.config.get("memory.enabled"):
        result = attrs.evolve(result, consolidation=_consolidate(agent, model))
    return result


def _consolidate(agent: Any, model: ChatModel) -> str:
    """Seed 003 §2.5: the heartbeat is when memory is consolidated. A failure is reported in
    the result, never as a failed heartbeat: the agent itself is fine."""
    from soulframe.memorykit import consolidate

    try:
        done = consolidate(agent, model=model)
    except (ChatModelError, SoulframeError) as exc:
        return f"failed: {exc}"
    if done.status == "failed":  # the model's reply could not be read, the model not reached
        return f"failed: {done.refused}"
    if done.status == "refused":  # a guard said no: which one, and that nothing changed
        why = done.refused or "refused"
        return why if why.startswith("refused") else f"refused: {why}"
    return done.status
