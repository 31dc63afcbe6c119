"""Agent summoning (seed 000 §7): five context files from a one-line description, in one
model call.

The model answers with one ``<file name="SOUL.md">…</file>`` block per file. The reply is
parsed leniently (code fences, single quotes, CDATA, escaped entities, any order) but
completely: all five files must be there and non-empty, else nothing from the reply is used.
When the call fails — no model configured, an HTTP error, a timeout, a reply that is not
the expected XML — the embedded templates are written instead and the result says why.

Files are written atomically. Existing files are never replaced without ``force``; a
file still byte-identical to its template counts as not yet personalised and may be
replaced. A fallback never overwrites anything: it only fills in missing files.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
from soulframe import ChatModel, SoulframeError, WorkspaceTemplate
from soulframe.kit import (
    ChatModelError,
    chat_model_for,
    ensure_private_dir,
    seed_workspace,
    system_message,
    user_message,
)
from soulframe.memorykit import context_store, is_managed

if TYPE_CHECKING:
    from soulframe import AgentLike

SUMMON_FILES: tuple[str, ...] = ("SOUL.md", "IDENTITY.md", "AGENTS.md", "TOOLS.md", "HEARTBEAT.md")
BOOTSTRAP = "BOOTSTRAP.md"

#: how long the one summoning call may take by default: five files are a long answer
DEFAULT_TIMEOUT_S = 180.0

SYSTEM_PROMPT = """\
You design the context files of a new AI agent. The files are plain Markdown that will be \
injected into the agent's system prompt; they are its soul, not its model weights.

Write these five files, each in its own block, exactly like this and with nothing outside \
the blocks:

<file name="SOUL.md">
# SOUL.md - Who You Are
(persona in the second person: who the agent is, its tone of voice, values, boundaries; \
sections "## Core Truths" (bullets) and "## Vibe")
</file>
<file name="IDENTITY.md">
# IDENTITY.md
- **Name:** (a short name)
- **Creature:** (what it is, in a few words)
- **Vibe:** (three adjectives)
- **Emoji:** (one emoji)
</file>
<file name="AGENTS.md">
# AGENTS.md
(operating instructions: how it works, how it uses memory — daily notes in \
memory/YYYY-MM-DD.md, durable facts in MEMORY.md, "if someone says remember this, write it \
to a file" — and safety rules: private things stay private, ask before acting externally)
</file>
<file name="TOOLS.md">
# TOOLS.md
(notes about the tools and environment this kind of agent is likely to use; headings \
with short bullets the user can fill in)
</file>
<file name="HEARTBEAT.md">
# HEARTBEAT.md
(a short checklist of periodic checks suited to this agent, as "- " bullets; when \
nothing needs attention it replies HEARTBEAT_OK)
</file>

Keep each file under 2,000 characters (all five must fit in one reply). Do not wrap the blocks in code fences."""


class SummonParseError(SoulframeError):
    """The model's reply is not the five-file XML we asked for."""


@attrs.frozen
class SummonResult:
    #: "model" when the files came from the model, "templates" on fallback
    source: str
    written: tuple[str, ...]
    kept: tuple[str, ...] = ()
    #: on fallback: files that already were their untouched template (right after
    #: ``soulframe init``) — the fallback's result is in place, nothing personal was kept
    unchanged: tuple[str, ...] = ()
    #: why summoning fell back to templates (None when it did not)
    reason: str | None = None
    #: "workspace" or "store"
    target: str = "workspace"
    chars: Mapping[str, int] = attrs.field(factory=dict)
    #: what became of the workspace's BOOTSTRAP.md after a summon by the model: "removed"
    #: (it was the untouched template), "kept" (edited by hand, or a link), None (none there,
    #: or the files were not summoned)
    bootstrap: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "written": list(self.written),
            "kept": list(self.kept),
            "unchanged": list(self.unchanged),
            "fallback_reason": self.reason,
            "target": self.target,
            "chars": dict(self.chars),
            "bootstrap": self.bootstrap,
        }


def summon_messages(description: str) -> list[dict[str, Any]]:
    return [system_message(SYSTEM_PROMPT), user_message(f"Summon this agent: {description.strip()}")]


#: a block whose closing tag is missing must not swallow the next block: the body may not
#: contain another opening tag
_FILE_BLOCK = re.compile(
    r"<file\s+name\s*=\s*(?P<q>[\"'])(?P<name>[^\"'<>]+)(?P=q)\s*>(?P<body>(?:(?!<file\s+name\s*=).)*?)</file\s*>",
    re.DOTALL | re.IGNORECASE,
)
_CDATA = re.compile(r"^\s*<!\[CDATA\[(.*)\]\]>\s*$", re.DOTALL)
_FENCE = re.compile(r"^\s*```[a-zA-Z]*\n(.*)\n```\s*$", re.DOTALL)


def _clean(body: str) -> str:
    cdata = _CDATA.match(body)
    if cdata:
        body = cdata.group(1)
    fenced = _FENCE.match(body)  # a file body wrapped in ```markdown fences
    if fenced:
        body = fenced.group(1)
    if "<" not in body and re.search(r"&(lt|gt|amp|quot|#\d+);", body):
        body = html.unescape(body)  # the model XML-escaped the Markdown
    return body.strip("\n").rstrip() + "\n"


def parse_files(text: str, expected: tuple[str, ...] = SUMMON_FILES) -> dict[str, str]:
    """The files in a summoning reply, by canonical name. Raises :class:`SummonParseError`
    naming what is missing when any expected file is absent or empty."""
    canonical = {name.lower(): name for name in expected}
    found: dict[str, str] = {}
    for match in _FILE_BLOCK.finditer(text):
        raw_name = match.group("name").strip().lstrip("./")
        name = canonical.get(raw_name.lower())
        if name is None or name in found:
            continue  # an extra file we did not ask for, or a repeat: the first one counts
        body = _clean(match.group("body"))
        if body.strip():
            found[name] = body
    missing = [name for name in expected if name not in found]
    if missing:
        if not found:
            preview = " ".join(text.split())[:120]
            raise SummonParseError(
                f'the model\'s reply has no <file name="..."> blocks (it began: {preview!r})'
            )
        raise SummonParseError(f"the model's reply is missing {', '.join(missing)}")
    return found


# --------------------------------------------------------------------------- templates


def templates_for(agent: AgentLike) -> dict[str, WorkspaceTemplate]:
    """The embedded templates of the five files, as plugins offer them through
    ``register_workspace_templates`` (soulframe_workspace's, or a third party's)."""
    from soulframe.kit import workspace_templates

    return {
        t.name: t for t in workspace_templates(agent.pm) if t.name in SUMMON_FILES
    }


# --------------------------------------------------------------------------- writing


@attrs.frozen
class _Target:
    """Where an agent's agent-level context files live: the workspace, or (managed mode,
    e.g. a predefined agent in PostgreSQL) the store."""

    name: str
    read: Callable[[str], str | None]
    write: Callable[[str, str], None]


def _target(agent: AgentLike) -> _Target:
    ws = agent.workspace

    def read_disk(name: str) -> str | None:
        path = ws.root / name
        if path.is_symlink() and not path.exists():
            return ""  # a dangling link is still "something there": never replace it silently
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None

    if is_managed(agent):

        def read_store(name: str) -> str | None:
            return context_store(agent).agent_files().get(name)

        def write_store(name: str, text: str) -> None:
            # seed 000 §7: summoning writes straight to the agent-level copy in the store,
            # the administrator's path (a predefined agent's shared files are read-only only
            # from chat); none of the summoned files is BOOTSTRAP.md, so no write deletes
            context_store(agent).write_agent_file(name, text)

        return _Target("store", read_store, write_store)

    def write_disk(name: str, text: str) -> None:
        ws.write_text(name, text)  # atomic, parents 0700, never through a symlink

    return _Target("workspace", read_disk, write_disk)


def _existing(target: _Target, templates: Mapping[str, WorkspaceTemplate]) -> list[str]:
    """Files that exist and hold more than their untouched template."""
    taken = []
    for name in SUMMON_FILES:
        text = target.read(name)
        template = templates.get(name)
        if text is not None and (template is None or text != template.content):
            taken.append(name)
    return taken


def _end_first_run(agent: AgentLike) -> str | None:
    """After a summon the agent knows who it is: the template BOOTSTRAP.md ("time to
    figure out who you are") would have it ask again on the first chat and overwrite the
    summoned IDENTITY.md and SOUL.md. Seed 000 §1: the file is deleted once the first run is
    done. Only the untouched template is removed; one edited by hand is the owner's to keep.
    (In a store, BOOTSTRAP.md is each user's own ritual of learning about them: not ours.)"""
    from soulframe.kit import workspace_templates

    path = agent.workspace.root / BOOTSTRAP
    if not path.exists() and not path.is_symlink():
        return None
    template = next((t.content for t in workspace_templates(agent.pm) if t.name == BOOTSTRAP), None)
    if path.is_symlink() or not path.is_file() or template is None:
        return "kept"
    if path.read_text(encoding="utf-8", errors="replace") != template:
        return "kept"
    path.unlink()
    return "removed"


def summon(
    agent: AgentLike,
    description: str,
    *,
    force: bool = False,
    model: ChatModel | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> SummonResult:
    """Summon the five files for ``agent`` from ``description``."""
    if not description.strip():
        raise SoulframeError('describe the agent to summon, e.g. "sarcastic Rust reviewer"')
    ws = agent.workspace
    target = _target(agent)
    if target.name == "workspace":
        ensure_private_dir(ws.root)
    templates = templates_for(agent)
    taken = _existing(target, templates)
    if taken and not force:
        where = "the store" if target.name == "store" else str(ws.root)
        raise SoulframeError(
            f"{', '.join(taken)} already exist in {where}; pass --force to replace them"
        )
    reason: str | None = None
    files: dict[str, str] = {}
    try:
        if model is None:
            model = chat_model_for(agent, "summon")
        reply = model.chat(summon_messages(description), timeout=timeout)
        try:
            files = parse_files(reply.text)
        except SummonParseError as exc:
            cut = reply.finish_reason in ("length", "max_tokens")
            reason = f"{exc}" + (
                "; the reply was cut at the model's token limit (raise [model] max_tokens)"
                if cut
                else ""
            )
    except ChatModelError as exc:  # includes "no chat model configured"
        reason = str(exc)

    if reason is None:
        from soulframe.memorykit import guard

        # the model wrote every word of these files, and every later prompt carries them:
        # all of them pass the write-time guard before any is written
        for name in SUMMON_FILES:
            guard(agent, files[name], target=name, via="summon")
        for name in SUMMON_FILES:
            target.write(name, files[name])
        return SummonResult(
            "model", SUMMON_FILES, (), (), None, target.name, {n: len(t) for n, t in files.items()},
            _end_first_run(agent) if target.name == "workspace" else None,
        )

    # fallback: the templates, only where there is no file yet (seeding never overwrites)
    missing_templates = [n for n in SUMMON_FILES if n not in templates]
    if missing_templates:
        raise SoulframeError(
            f"summoning failed ({reason}) and no plugin offers templates for "
            f"{', '.join(missing_templates)} (is the soulframe_workspace plugin disabled?)"
        )
    chosen = [templates[n] for n in SUMMON_FILES]
    if target.name == "workspace":
        written = seed_workspace(ws.root, agent_type="open", templates=chosen)
    else:
        written = []
        for t in chosen:
            if not (target.read(t.name) or "").strip():
                target.write(t.name, t.content)
                written.append(t.name)
    untouched = [n for n in SUMMON_FILES if n not in written and target.read(n) == templates[n].content]
    kept = tuple(n for n in SUMMON_FILES if n not in written and n not in untouched)
    return SummonResult(
        "templates",
        tuple(written),
        kept,
        tuple(untouched),
        reason,
        target.name,
        {n: len(templates[n].content) for n in written},
    )
