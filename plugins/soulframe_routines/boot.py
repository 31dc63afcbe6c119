"""The startup ritual (seed 003 §1.1): ``BOOT.md`` holds what the agent should do each time
it is started or restarted — "one-time or restart actions", run at gateway startup.

BOOT.md is optional and never part of a prompt (the core's session filter keeps it out of
every session). :func:`run_boot` sends its content, once, as the instruction of a main
session: the agent's own system prompt, the agent's tools (each call goes through
:func:`soulframe.kit.dispatch`, so arguments are checked against the tool's schema), at
most ``max_iterations`` model calls within ``timeout`` seconds. The model ends with a short
summary that starts with ``BOOT_OK`` — or ``BOOT_FAILED`` when a step could not be done.

Like the heartbeat there is no scheduler here: a host calls :func:`run_boot` when it starts,
or a service manager runs ``soulframe boot`` (``ExecStartPost=`` in systemd). A BOOT.md with
only headings, comments and empty bullets is "nothing to do": no model call (the model must
still be configured). Each run that reaches the model is one line in today's daily log.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs
from soulframe import (
    ChatModel,
    Session,
    Settings,
    SoulframeError,
    ToolContext,
    ToolSpec,
    WorkspaceLike,
)
from soulframe.kit import (
    ChatModelError,
    ToolEvent,
    agent_now,
    chat_model_for,
    heartbeat_has_tasks,
    mask_for_model,
    neutralise,
    run_tool_loop,
    system_message,
    user_message,
)

from .heartbeat import log_run

if TYPE_CHECKING:
    from soulframe import AgentLike

BOOT_FILE = "BOOT.md"
BOOT_OK = "BOOT_OK"
BOOT_FAILED = "BOOT_FAILED"

#: model calls per boot: enough to read a few files and act on them
DEFAULT_MAX_ITERATIONS = 10
#: seconds for the whole boot, every model call and tool call included
DEFAULT_TIMEOUT_S = 180.0
#: BOOT.md is a short checklist; a bigger file is a mistake, not a ritual to send the model
MAX_BOOT_CHARS = 20_000

#: exit codes of `soulframe boot` (those of `soulframe heartbeat`)
EXIT_OK, EXIT_PROBLEM, EXIT_ERROR = 0, 1, 2

INSTRUCTIONS = (
    "Startup. You have just been started (or restarted). Carry out the startup checklist in "
    "BOOT.md below, step by step, using your tools. Do only what it asks, and do not repeat "
    "tasks from earlier conversations. When you are done, reply with a short summary for the "
    f"operator: begin it with {BOOT_OK} if every step was done, or with {BOOT_FAILED} if a "
    "step could not be done, and say which one and why."
)


def boot_message(content: str, config: Settings | None = None) -> str:
    """The user message of a boot: the instructions, then BOOT.md in a tag (a file that
    contains the closing tag cannot end the block early), its secrets masked unless
    ``memory.mask_secrets = false`` in ``config``."""
    body = neutralise(mask_for_model(content.strip("\n"), config))
    return f'{INSTRUCTIONS}\n\n<boot_file name="{BOOT_FILE}">\n{body}\n</boot_file>'


def has_tasks(text: str | None) -> bool:
    """True when BOOT.md asks for anything: headings, HTML comments, empty bullets and
    rules alone are "nothing to do" (the rule HEARTBEAT.md follows)."""
    return heartbeat_has_tasks(text)


def parse_reply(text: str) -> tuple[bool, str]:
    """``(ok, summary)``: ok only when the reply starts with ``BOOT_OK`` (markdown emphasis
    or quotes around it allowed); the summary is the reply without the marker."""
    stripped = text.strip()
    head = stripped.lstrip("*_`\"' ")
    for marker, ok in ((BOOT_OK, True), (BOOT_FAILED, False)):
        if head.startswith(marker):
            rest = head[len(marker):].lstrip("*_`\"'").lstrip(" \t:.—–-").strip()
            return ok, rest
    return False, stripped


@attrs.frozen
class BootResult:
    #: "ok", "problem", "error" or "nothing to do"
    status: str
    #: the model's summary, without the BOOT_OK / BOOT_FAILED marker
    summary: str = ""
    reply: str = ""
    error: str | None = None
    detail: str = ""
    #: how the tool loop ended: "done", "max_iterations", "timeout", "error" ("" if not run)
    stopped: str = ""
    iterations: int = 0
    events: tuple[ToolEvent, ...] = ()
    logged_to: str | None = None
    elapsed_s: float = 0.0

    @property
    def exit_code(self) -> int:
        if self.status in ("ok", "nothing to do"):
            return EXIT_OK
        return EXIT_PROBLEM if self.status == "problem" else EXIT_ERROR

    @property
    def failed_tools(self) -> tuple[ToolEvent, ...]:
        return tuple(e for e in self.events if not e.ok)

    def line(self) -> str:
        """The status line `soulframe boot` prints before the summary."""
        calls = len(self.events)
        stats = f"{self.elapsed_s:.1f}s, {calls} tool call{'s' if calls != 1 else ''}"
        if self.status == "ok":
            return f"{BOOT_OK} ({stats})"
        if self.status == "nothing to do":
            return f"nothing to do: {self.detail}"
        if self.status == "problem":
            return f"PROBLEM ({stats}): {self.detail or _first_line(self.summary)}"
        return f"Error: {self.error}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "ok": self.exit_code == EXIT_OK,
            "exit_code": self.exit_code,
            "summary": self.summary,
            "reply": self.reply,
            # a run that failed as a whole: the error object every --json command answers
            "error": {"message": self.error, "code": self.exit_code} if self.error else None,
            "detail": self.detail,
            "stopped": self.stopped,
            "iterations": self.iterations,
            "tool_calls": [e.to_dict() for e in self.events],
            "logged_to": self.logged_to,
            "elapsed_s": round(self.elapsed_s, 3),
        }


def _first_line(text: str, limit: int = 200) -> str:
    line = next((x.strip() for x in text.strip().splitlines() if x.strip()), "(empty reply)")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def read_boot_file(ws: WorkspaceLike) -> str | None:
    """BOOT.md's text, or None when there is none. A BOOT.md that leads out of the
    workspace (symlink), cannot be read or is too big is an error naming the file."""
    path = ws.resolve(BOOT_FILE)  # PathEscapeError for a symlink out of the workspace
    if not path.exists():
        return None
    if not path.is_file():
        raise SoulframeError(f"{path}: not a regular file")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SoulframeError(f"{path}: cannot read ({exc.strerror})") from None
    text = raw.decode("utf-8", errors="replace")
    if len(text) > MAX_BOOT_CHARS:
        raise SoulframeError(
            f"{path}: {len(text):,} characters; a startup checklist should stay under "
            f"{MAX_BOOT_CHARS:,} (move reference material to a file BOOT.md points to)"
        )
    return text


def dispatching(agent: AgentLike, tools: Sequence[ToolSpec], session: Session) -> list[ToolSpec]:
    """``tools`` with handlers that go through :func:`soulframe.kit.dispatch`: the model's
    arguments are checked against each schema, and a refusal is a message it can read."""
    from soulframe.kit import dispatch

    offered = list(tools)

    def wrap(tool: ToolSpec) -> ToolSpec:
        def handler(ctx: ToolContext, arguments: dict[str, Any]) -> Any:
            return dispatch(ctx.agent, tool.name, arguments, session=session, tools=offered)

        return attrs.evolve(tool, handler=handler)

    return [wrap(t) for t in offered]


def run_boot(
    agent: AgentLike,
    model: ChatModel | None = None,
    *,
    session: Session | None = None,
    timeout: float | None = None,
    max_iterations: int | None = None,
    now: dt.datetime | None = None,
    log: bool = True,
) -> BootResult:
    """Run the startup ritual once. Never raises for a model failure or a bad BOOT.md: the
    result says ``status="error"`` (exit code 2).

    :param model: the chat model; default: the one ``[model]`` configures.
    :param session: the session to boot in (default: a main session — the agent's own
        prompt with MEMORY.md and USER.md, as when its owner talks to it).
    :param timeout: seconds for the whole run (default 180).
    :param max_iterations: model calls at most (default 10).
    """
    started = time.monotonic()
    ws = agent.workspace
    timezone = agent.spec.timezone or agent.config.get("timezone")
    deadline = started + (timeout if timeout is not None else DEFAULT_TIMEOUT_S)
    try:
        if model is None:
            # built even when there is nothing to do, as the heartbeat does: a service that
            # runs `soulframe boot` must not read exit 0 from an agent with no model
            model = chat_model_for(agent, "boot")
        text = read_boot_file(ws)
        if text is None:
            return BootResult("nothing to do", detail=f"no {BOOT_FILE} in {ws.root}")
        if not has_tasks(text):
            return BootResult(
                "nothing to do", detail=f"{BOOT_FILE} has only headings and empty items"
            )
        moment = agent_now(timezone, now)
        session = session or Session.main(now=moment)
        prompt = agent.system_prompt(session).text
        tools = dispatching(agent, agent.tools(session), session)
        outcome = run_tool_loop(
            model,
            [system_message(prompt), user_message(boot_message(text, agent.config))],
            tools,
            ToolContext(agent=agent, session=session),
            max_iterations=max(1, max_iterations or DEFAULT_MAX_ITERATIONS),
            deadline=deadline,
        )
    except (ChatModelError, SoulframeError) as exc:
        result = BootResult("error", error=str(exc), elapsed_s=time.monotonic() - started)
        entry = f"boot: failed — {_first_line(str(exc))}"
    else:
        common: dict[str, Any] = {
            "reply": outcome.text.strip(),
            "stopped": outcome.stopped,
            "iterations": outcome.iterations,
            "events": outcome.events,
            "elapsed_s": time.monotonic() - started,
        }
        if outcome.stopped in ("error", "timeout"):
            error = outcome.error or (
                f"no answer within {timeout if timeout is not None else DEFAULT_TIMEOUT_S:g}s"
            )
            result = BootResult("error", error=error, **common)
            entry = f"boot: failed — {_first_line(error)}"
        elif outcome.stopped == "max_iterations":
            detail = (
                f"not finished after {outcome.iterations} model calls (the limit); "
                "raise --max-iterations or shorten BOOT.md"
            )
            result = BootResult("problem", summary=outcome.text.strip(), detail=detail, **common)
            entry = f"boot: problem — {detail}"
        else:
            ok, summary = parse_reply(outcome.text)
            if ok:
                result = BootResult("ok", summary=summary, **common)
                entry = f"boot: OK — {_first_line(summary)}" if summary else "boot: OK"
            else:
                # BOOT_FAILED, or a reply without the marker: the operator should look
                unmarked = summary == outcome.text.strip()
                detail = f"the reply did not start with {BOOT_OK}" if unmarked else ""
                result = BootResult("problem", summary=summary, detail=detail, **common)
                entry = f"boot: problem — {_first_line(summary)}"
    if not log or not ws.root.is_dir():  # no workspace yet: nowhere to log, and not ours to create
        return result
    try:
        logged = log_run(agent, agent_now(timezone, now), entry, via="boot")
    except (SoulframeError, OSError):  # a boot that ran must not be reported failed by its log
        logged = None
    return attrs.evolve(result, logged_to=logged)
