"""Value types shared by the core and every plugin.

Everything here is a plain attrs class (frozen where the value never changes after it is
built) or a :class:`typing.Protocol` a plugin implements. Nothing here imports a heavy
dependency: numpy arrays appear only in type annotations.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]
else:  # keep numpy out of the import path of `soulframe prompt`
    Vector = Any

SessionKind = Literal["main", "subagent", "cron", "heartbeat", "group"]
PromptMode = Literal["full", "task", "minimal", "none"]
Zone = Literal["stable", "dynamic"]
AgentType = Literal["open", "predefined"]

SESSION_KINDS: tuple[str, ...] = ("main", "subagent", "cron", "heartbeat", "group")
PROMPT_MODES: tuple[str, ...] = ("full", "task", "minimal", "none")
ALL_MODES: frozenset[str] = frozenset(PROMPT_MODES)


class SoulframeError(Exception):
    """An error a user can act on. The CLI prints its message without a traceback."""


class ConfigError(SoulframeError):
    """Bad configuration: the message names the file, the key and what was expected."""


class UnknownNameError(SoulframeError):
    """A configured name (store, provider, policy, model) that no installed plugin offers."""


class PathEscapeError(SoulframeError):
    """A path that would leave the workspace (``..``, absolute, or through a symlink)."""


# --------------------------------------------------------------------------- sessions


@attrs.frozen
class Session:
    """One conversation the prompt is built for.

    ``kind`` decides which context files are visible (sub-agent and cron sessions see only
    AGENTS.md and TOOLS.md; MEMORY.md only in a main private session) and, unless
    ``mode`` overrides it, which prompt mode is used.
    """

    kind: SessionKind = "main"
    user_id: str | None = None
    channel: str | None = None
    #: display name of a group chat; untrusted, sanitised before it reaches the prompt
    chat_title: str | None = None
    #: runtime override of the prompt mode (highest priority in mode resolution)
    mode: PromptMode | None = None
    key: str | None = None
    extra_prompt: str | None = None
    #: the moment the prompt is built for; ``None`` means now
    now: _dt.datetime | None = None

    @classmethod
    def main(cls, **kw: Any) -> Session:
        return cls(kind="main", **kw)

    @classmethod
    def subagent(cls, **kw: Any) -> Session:
        return cls(kind="subagent", **kw)

    @classmethod
    def cron(cls, **kw: Any) -> Session:
        return cls(kind="cron", **kw)

    @classmethod
    def heartbeat(cls, **kw: Any) -> Session:
        return cls(kind="heartbeat", **kw)

    @classmethod
    def group(cls, **kw: Any) -> Session:
        return cls(kind="group", **kw)

    @property
    def is_private(self) -> bool:
        """True only for a main, one-to-one session: the only kind that sees private memory."""
        return self.kind == "main"


@attrs.frozen
class Identity:
    """The agent's resolved display identity (seed 003 §1.3)."""

    name: str = "Assistant"
    emoji: str | None = None
    avatar: str | None = None
    creature: str | None = None
    vibe: str | None = None
    #: where ``name`` came from: "ui", "config", "IDENTITY.md" or "default"
    source: str = "default"


@attrs.frozen
class AgentSpec:
    """One agent as configured (``[[agents]]`` in soulframe.toml)."""

    id: str = "default"
    workspace: Path = attrs.field(factory=lambda: Path("~/.soulframe/workspace").expanduser())
    type: AgentType = "open"
    #: identity overrides from config (name, emoji, avatar); IDENTITY.md fills the rest
    identity: Mapping[str, str] = attrs.field(factory=dict)
    prompt_mode: PromptMode | None = None
    self_evolve: bool = False
    timezone: str | None = None
    owner_ids: tuple[str, ...] = ()
    extra_prompt: str | None = None
    #: free-form per-agent settings plugins read (team, delegation targets, sandbox, ...)
    options: Mapping[str, Any] = attrs.field(factory=dict)


# --------------------------------------------------------------------------- context files


@attrs.frozen
class ContextFile:
    """A context file as it will be injected into a prompt.

    ``kind`` is ``"file"`` for a real file (workspace or store) and ``"virtual"`` for one
    generated at runtime (DELEGATION.md, TEAM.md); virtual files are wrapped in
    ``<system_context>`` rather than ``<context_file>`` so the model does not try to edit them.
    """

    name: str
    content: str
    source: str = "workspace"
    kind: Literal["file", "virtual"] = "file"
    #: "agent" for agent-level files, "user" for per-user copies
    scope: Literal["agent", "user"] = "agent"
    path: Path | None = None
    #: set by the truncation policy
    truncated: bool = False
    original_chars: int | None = None

    @property
    def chars(self) -> int:
        return len(self.content)


@attrs.frozen
class WorkspaceTemplate:
    """A file (or, when ``name`` ends in ``/``, a directory) seeded into a workspace when
    it is missing (``register_workspace_templates``; seed 000 §3)."""

    name: str
    content: str = ""
    #: agent types whose own workspace (agent level) gets it
    agent_types: frozenset[str] = frozenset({"open", "predefined"})
    #: agent types for which a store seeds it per user (open: all 7; predefined: USER.md,
    #: BOOTSTRAP.md — seed 000 §4)
    per_user: frozenset[str] = frozenset()
    #: set by the core: the plugin that offered it
    plugin: str = ""

    @property
    def is_dir(self) -> bool:
        return self.name.endswith("/")


@attrs.frozen
class TruncationNotice:
    """What a truncation policy cut, so it is never silent."""

    name: str
    original_chars: int
    kept_chars: int
    hint: str = ""


# --------------------------------------------------------------------------- prompt


@attrs.frozen
class Section:
    """A prompt section offered by a plugin through ``register_prompt_sections``.

    ``order`` uses the seeds' numbering (1, 1.5, 1.7, 2, ... 16) so a third party can fit a
    section between any two; ties sort by name. ``render(ctx)`` returns the section's text,
    or ``None``/``""`` to leave it out of this prompt.
    """

    name: str
    order: float
    render: Callable[[PromptContext], str | None]
    modes: frozenset[str] = ALL_MODES
    zone: Zone = "stable"
    #: lower is cut first when the prompt is over budget; ``None`` = never cut
    truncate_priority: int | None = None
    title: str = ""
    #: set by the core: the plugin that registered the section
    plugin: str = ""


@attrs.frozen
class RenderedSection:
    name: str
    order: float
    zone: Zone
    text: str
    tokens: int
    plugin: str = ""
    truncated: bool = False
    original_tokens: int | None = None
    #: copied from the Section: lower is cut first by the budget, ``None`` = never cut
    truncate_priority: int | None = None

    @property
    def chars(self) -> int:
        return len(self.text)


@attrs.frozen
class SystemPrompt:
    """The assembled prompt. ``text`` = ``stable_prefix`` + boundary marker + ``dynamic_suffix``."""

    text: str
    stable_prefix: str
    dynamic_suffix: str
    mode: PromptMode
    session: Session
    sections: tuple[RenderedSection, ...] = ()
    context_files: tuple[ContextFile, ...] = ()
    notices: tuple[TruncationNotice, ...] = ()
    budget_tokens: int | None = None

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.sections)


@attrs.define
class PromptContext:
    """What a section's ``render(ctx)`` can see. Built once per prompt by the core."""

    agent: Any  # soulframe.agent.Agent (not imported here to keep model.py import-free)
    spec: AgentSpec
    session: Session
    mode: PromptMode
    config: Any  # soulframe.config.Config
    files: list[ContextFile]
    tools: list[ToolSpec]
    identity: Identity
    now: _dt.datetime
    #: BOOTSTRAP.md is present: the first-run ritual is under way
    bootstrapping: bool = False
    #: scratch space sections may share (e.g. the skills block decided once)
    extras: dict[str, Any] = attrs.field(factory=dict)

    def file(self, name: str) -> ContextFile | None:
        for f in self.files:
            if f.name == name:
                return f
        return None


# --------------------------------------------------------------------------- memory


@attrs.frozen
class Chunk:
    """A span of a memory file, as indexed."""

    path: str
    start_line: int
    end_line: int
    text: str
    hash: str = ""


@attrs.frozen
class SearchHit:
    """One memory search result.

    ``path`` is relative to the workspace; lines are 1-based and inclusive. ``score`` is the
    final fused score; ``text_score``/``vector_score`` are the normalised channel scores
    (``None`` when that channel did not find this chunk).
    """

    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    text_score: float | None = None
    vector_score: float | None = None
    scope: str = "agent"

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.start_line}-L{self.end_line}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "score": round(self.score, 4),
            "snippet": self.snippet,
            "text_score": None if self.text_score is None else round(self.text_score, 4),
            "vector_score": None if self.vector_score is None else round(self.vector_score, 4),
            "citation": self.citation,
            "scope": self.scope,
        }


# --------------------------------------------------------------------------- skills


@attrs.frozen
class Skill:
    """A skill discovered from a SKILL.md (front matter ``name`` and ``description``)."""

    name: str
    description: str
    path: Path
    tier: int
    tier_name: str = ""
    #: names of the lower-tier sources this skill shadowed
    shadowed: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def base_dir(self) -> Path:
        return self.path.parent


@attrs.frozen
class SkillSource:
    """A root that skills are loaded from, offered through ``register_skill_sources``.

    ``tier`` 1 is the highest (workspace ``skills/``), 5 the lowest (built-in). ``load()``
    returns the skills under the root; when ``root`` is a directory the core may watch it for
    hot reload.
    """

    name: str
    tier: int
    root: Path | None = None
    load: Callable[[], Sequence[Skill]] | None = None


# --------------------------------------------------------------------------- tools


@attrs.frozen
class ToolContext:
    """What a tool handler receives besides its arguments."""

    agent: Any  # soulframe.agent.Agent
    session: Session


@attrs.frozen
class ToolSpec:
    """A tool offered to the model (through the Tooling section, MCP and schema export).

    ``parameters`` is a JSON Schema object. ``handler(ctx, arguments)`` returns a JSON-able
    value; it raises :class:`SoulframeError` (or ``ValueError``) for bad arguments, which is
    reported to the model as a tool error.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    handler: Callable[[ToolContext, dict[str, Any]], Any]
    #: session kinds the tool is offered in; private-memory tools narrow this
    sessions: frozenset[str] = frozenset(SESSION_KINDS)
    summary: str = ""


# --------------------------------------------------------------------------- named registries


@attrs.frozen
class Registration:
    """A named thing a plugin offers: a store, an embedding provider, a truncation policy,
    a chat model or a context source.

    ``factory`` builds the object when it is selected (so nothing heavy is imported at
    plugin load time). ``extra`` names the pip extra that provides its dependencies, which
    the unknown-name error shows to the user.
    """

    name: str
    factory: Callable[..., Any]
    description: str = ""
    extra: str | None = None
    #: set by the core
    plugin: str = ""


# --------------------------------------------------------------------------- protocols


@runtime_checkable
class ContextSource(Protocol):
    """Yields context files for one agent and session (workspace files, store, virtual)."""

    name: str

    def load(self, agent: Any, session: Session) -> Sequence[ContextFile]: ...


@runtime_checkable
class TruncationPolicy(Protocol):
    """Fits context files into the bootstrap budget (seed 000 §2) and, over a whole prompt,
    decides which sections to cut (seed 002)."""

    name: str

    def truncate_files(
        self, files: Sequence[ContextFile], config: Any
    ) -> tuple[list[ContextFile], list[TruncationNotice]]: ...

    def enforce_budget(
        self,
        sections: Sequence[RenderedSection],
        budget_tokens: int,
        estimate: Callable[[str], int],
    ) -> tuple[list[RenderedSection], list[TruncationNotice]]: ...


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns text into unit-length float32 vectors."""

    name: str
    model_id: str
    dimensions: int

    def available(self) -> bool: ...

    def embed_documents(self, texts: Sequence[str]) -> Vector: ...

    def embed_query(self, text: str) -> Vector: ...


@runtime_checkable
class Store(Protocol):
    """Persistent storage for the memory index and per-user context files.

    The SQLite and PostgreSQL stores implement this same contract; ``soulframe.testing``
    holds the contract test suite both run. Memory methods take a ``scope`` (the user id
    for per-user memory, ``None`` for the agent's own).
    """

    name: str

    def close(self) -> None: ...


@runtime_checkable
class ChatModel(Protocol):
    """A chat-completion client with tool calling (used by memory flush and summoning)."""

    name: str
    model_id: str

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[ToolSpec] = (),
        timeout: float | None = None,
    ) -> ChatReply: ...


@attrs.frozen
class ToolCall:
    id: str
    name: str
    arguments: Mapping[str, Any]


@attrs.frozen
class ChatReply:
    """One assistant turn: text and/or tool calls."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    usage: Mapping[str, int] = attrs.field(factory=dict)
