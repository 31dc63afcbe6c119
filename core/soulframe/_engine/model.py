"""Value types shared by the core and every plugin.

Everything here is a plain attrs class (frozen where the value never changes after it is
built) or a :class:`typing.Protocol` a plugin implements. Nothing here imports a heavy
dependency: numpy arrays appear only in type annotations.

One module, over the usual size, because it is a catalogue: every value type and protocol
the core and the plugins share, and nothing else, so a plugin imports its types from one
place.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    Literal,
    Protocol,
    TypedDict,
    TypeVar,
    Unpack,
    runtime_checkable,
)

import attrs

if TYPE_CHECKING:
    import uuid

    import numpy as np
    import numpy.typing as npt
    import pluggy

    from .memory.results import MemoryExcerpt, MemoryStatus, SearchResults, SyncReport

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


class SoulframeWarning(UserWarning):
    """Something a user should hear about that did not stop the call: a file cut from a
    prompt, a skill skipped, a memory flush that failed. Every warning soulframe and its
    default plugins issue is one, so a host filters or escalates them by this one category
    (``warnings.simplefilter("error", SoulframeWarning)``)."""


class ConfigError(SoulframeError):
    """Bad configuration: the message names the file, the key and what was expected.

    ``file``, ``line`` and ``key``, when the check knew them, say the same for a program
    (``--json`` errors on the command line): None when unknown."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 key: str | None = None) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.key = key


class UnknownNameError(ConfigError):
    """A configured name (store, provider, policy, model) that no installed plugin offers."""


def _default_workspace() -> Path:
    from .paths import default_workspace

    return default_workspace()


class WorkspaceNotFoundError(SoulframeError):
    """The agent's workspace directory does not exist (a typo, or not created yet)."""


class PathEscapeError(SoulframeError):
    """A path that would leave the workspace (``..``, absolute, or through a symlink)."""


# --------------------------------------------------------------------------- sessions


class SessionFields(TypedDict, total=False):
    """The keywords of ``Session.main(...)`` and the other kinds' factories: every field
    of :class:`Session` but ``kind``."""

    user_id: str | None
    channel: str | None
    chat_title: str | None
    mode: PromptMode | None
    key: str | None
    extra_prompt: str | None
    now: _dt.datetime | None


def _check_session_now(_session: object, _attribute: object, now: _dt.datetime | None) -> None:
    if now is not None and not isinstance(now, _dt.datetime):
        raise TypeError(f"Session: now = {now!r} — expected a datetime (naive: in the agent's "
                        "time zone) or None for the moment the prompt is built")


def check_user(user_id: str) -> str:
    """``user_id`` as a string, refused when empty, over 256 characters or with a NUL."""
    user = str(user_id)
    if not user or len(user) > 256 or "\x00" in user:
        raise SoulframeError(f"user id {user_id!r} — expected 1 to 256 characters")
    return user


def _check_session_user(_session: object, _attribute: object, user_id: str | None) -> None:
    if user_id is None:
        return
    try:
        check_user(user_id)  # a numeric id passes as its digits and is kept as the host gave it
    except SoulframeError as exc:
        raise SoulframeError(f"Session: {exc} (None for the agent's owner)") from None


@attrs.frozen
class Session:
    """One conversation the prompt is built for.

    ``kind`` decides which context files are visible (sub-agent and cron sessions see only
    AGENTS.md and TOOLS.md; MEMORY.md only in a main private session) and, unless
    ``mode`` overrides it, which prompt mode is used.
    """

    #: one of SESSION_KINDS: an unknown kind would see what the code's defaults let through
    kind: SessionKind = attrs.field(default="main", validator=attrs.validators.in_(SESSION_KINDS))
    #: ``None`` is the agent's owner; an empty id is refused here, where it is made: read as
    #: "no user" it would show an unknown sender the owner's MEMORY.md
    user_id: str | None = attrs.field(default=None, validator=_check_session_user)
    channel: str | None = None
    #: display name of a group chat; untrusted, sanitised before it reaches the prompt
    chat_title: str | None = None
    #: runtime override of the prompt mode (highest priority in mode resolution)
    mode: PromptMode | None = None
    key: str | None = None
    extra_prompt: str | None = None
    #: the moment the prompt is built for; ``None`` means now (naive: the agent's time zone).
    #: Checked here: a string would fail deep inside the prompt build
    now: _dt.datetime | None = attrs.field(default=None, validator=_check_session_now)

    # typed keywords: a type checker catches Session.main(titel=...) in a host's code
    @classmethod
    def main(cls, **kw: Unpack[SessionFields]) -> Session:
        return cls(kind="main", **kw)

    @classmethod
    def subagent(cls, **kw: Unpack[SessionFields]) -> Session:
        return cls(kind="subagent", **kw)

    @classmethod
    def cron(cls, **kw: Unpack[SessionFields]) -> Session:
        return cls(kind="cron", **kw)

    @classmethod
    def heartbeat(cls, **kw: Unpack[SessionFields]) -> Session:
        return cls(kind="heartbeat", **kw)

    @classmethod
    def group(cls, **kw: Unpack[SessionFields]) -> Session:
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
    workspace: Path = attrs.field(factory=lambda: _default_workspace())
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
    #: the workspace the config names, when ``-w`` (or the current directory) chose another
    configured_workspace: Path | None = None


# --------------------------------------------------------------------------- context files


@attrs.frozen
class ContextFile:
    """A context file as it will be injected into a prompt.

    ``kind`` is ``"file"`` for a real file (workspace or store) and ``"virtual"`` for one
    generated at runtime (DELEGATION.md, TEAM.md); virtual files are wrapped in
    ``<system_context>`` rather than ``<context_file>`` so the model does not try to edit them.
    While BOOTSTRAP.md holds the first-run ritual (right after ``soulframe init``) virtual
    files are left out of the prompt: they would only cost tokens then (seed 000 §5).
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


def _as_frozenset(value: Iterable[str]) -> frozenset[str]:
    """Any collection (of prompt modes, of session kinds) as a frozenset; a bare string is
    left for the field's check to refuse (``"full"`` is not ``{"full"}``)."""
    if isinstance(value, Iterable) and not isinstance(value, str):
        return frozenset(value)
    return value  # type: ignore[return-value]  # refused by the field's validator


def _plugin_field(kind: str, ok: Callable[[Any], bool], expected: str) -> Callable[[Any, Any, Any], None]:
    """A validator for what a plugin builds, whose message its author reads in one warning
    line (attrs' own repeats the whole attribute definition): which section (or skill
    source), which field, what it got."""

    def check(obj: Any, attribute: Any, value: Any) -> None:
        if not ok(value):
            # attrs runs validators once every field is set: `name` is there, checked or not
            raise TypeError(f"{kind} {obj.name!r}: {attribute.name} must be "
                            f"{expected}, not {value!r}")

    return check


def _section_field(ok: Callable[[Any], bool], expected: str) -> Callable[[Any, Any, Any], None]:
    return _plugin_field("section", ok, expected)


@attrs.frozen
class Section:
    """A prompt section offered by a plugin through ``register_prompt_sections``.

    ``order`` uses the seeds' numbering (1, 1.5, 1.7, 2, ... 16) so a third party can fit a
    section between any two; ties sort by name. ``render(ctx)`` returns the section's text,
    or ``None``/``""`` to leave it out of this prompt.
    """

    # every field is checked here, where a plugin builds the section, so a mistake is one
    # warning naming the plugin, not a section silently missing or a failure when prompts
    # sort or cut sections
    name: str = attrs.field(validator=_section_field(lambda v: isinstance(v, str), "a str"))
    order: float = attrs.field(validator=_section_field(lambda v: isinstance(v, (int, float)), "a number"))
    render: Callable[[PromptContext], str | None] = attrs.field(validator=_section_field(callable, "callable"))
    #: a misspelt mode ("ful") would leave the section silently out of every prompt
    modes: frozenset[str] = attrs.field(default=ALL_MODES, converter=_as_frozenset, validator=_section_field(
        lambda v: isinstance(v, frozenset) and v <= ALL_MODES, f"a set of prompt modes ({', '.join(PROMPT_MODES)})"))
    zone: Zone = attrs.field(default="stable", validator=_section_field(
        lambda v: v in ("stable", "dynamic"), "'stable' or 'dynamic'"))
    #: lower is cut first when the prompt is over budget; ``None`` = never cut
    truncate_priority: int | None = attrs.field(default=None, validator=_section_field(
        lambda v: v is None or isinstance(v, int), "an int or None"))
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

    def to_dict(self) -> dict[str, Any]:
        """The prompt as JSON-able data (what ``soulframe prompt --json`` prints), for a host
        that sends it over the wire: the text, its cacheable prefix, the sections and what
        was cut."""
        return {
            "text": self.text,
            "stable_prefix": self.stable_prefix,
            "dynamic_suffix": self.dynamic_suffix,
            "mode": self.mode,
            "session": self.session.kind,
            "budget_tokens": self.budget_tokens,
            "tokens": self.tokens,
            "sections": [
                {"name": s.name, "order": s.order, "zone": s.zone, "plugin": s.plugin,
                 "chars": s.chars, "tokens": s.tokens, "truncated": s.truncated}
                for s in self.sections
            ],
            "notices": [
                {"name": n.name, "original_chars": n.original_chars, "kept_chars": n.kept_chars,
                 "hint": n.hint}
                for n in self.notices
            ],
        }


@attrs.define
class PromptContext:
    """What a section's ``render(ctx)`` can see. Built once per prompt by the core."""

    agent: AgentLike
    spec: AgentSpec
    session: Session
    mode: PromptMode
    config: Settings
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
    #: the re-ranker's score (``None`` when no re-ranker ran on this hit)
    rerank_score: float | None = None
    #: where the hit's lines came from (their provenance notes, ``chatgpt conv=… at=…``;
    #: empty for hand-written lines), see :mod:`soulframe._engine.memory.provenance`
    provenance: tuple[str, ...] = ()

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
        } | ({} if self.rerank_score is None else {"rerank_score": round(self.rerank_score, 4)}) | (
            {"provenance": list(self.provenance)} if self.provenance else {})


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
    #: the body's Markdown headings, searched together with the name and description
    headings: tuple[str, ...] = ()
    #: sha256 (hex) of the SKILL.md bytes: a cheap "did it change" and a cache key
    digest: str = ""

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def to_dict(self) -> dict[str, Any]:
        """JSON-able, for a host that sends the catalogue elsewhere; ``metadata`` is left
        out: front matter may hold values JSON has no type for (a YAML date)."""
        return {
            "name": self.name,
            "description": self.description,
            "location": str(self.path),
            "tier": self.tier,
            "tier_name": self.tier_name,
            "shadowed": list(self.shadowed),
            "digest": self.digest,
        }


@attrs.frozen
class SkillSource:
    """A root that skills are loaded from, offered through ``register_skill_sources``.

    ``tier`` 1 is the highest (workspace ``skills/``), 5 the lowest (built-in). ``load()``
    returns the skills under the root; when ``root`` is a directory the core may watch it for
    hot reload.
    """

    name: str = attrs.field(validator=_plugin_field("skill source", lambda v: isinstance(v, str), "a str"))
    #: checked here: a tier that is not a number failed when skills were sorted by it
    tier: int = attrs.field(validator=_plugin_field(
        "skill source", lambda v: isinstance(v, int) and not isinstance(v, bool), "an int (1 highest ... 5 lowest)"))
    root: Path | None = None
    load: Callable[[], Sequence[Skill]] | None = None
    #: for a ``load``-backed source (a database, a remote store): returns a value that
    #: changes whenever its skills do, so the skill set knows to reload without a watcher
    version: Callable[[], object] | None = None
    #: the skills as one user's session sees them (managed mode: the skills private to that
    #: user or granted to them, seed 000 §12); ``load`` is the view without a user
    load_user: Callable[[str], Sequence[Skill]] | None = None
    #: a store-backed tier that *replaces* the filesystem tier of the same number (seed 000
    #: §12: "in managed mode, global skills are loaded from the skills table instead of the
    #: filesystem") rather than sitting beside it
    replaces_filesystem_tier: bool = False
    #: the directory ``root`` must stay inside (the workspace, for the workspace tiers): a
    #: root that is a symlink leading out of it is refused with a problem naming the link,
    #: as a symlinked skill directory inside a root is
    within: Path | None = None


@attrs.frozen
class SkillHit:
    """One ``skill_search`` result. ``score`` is the final score (BM25, or the 0.3/0.7
    fusion when embeddings are on); ``text_score``/``vector_score`` are the channels'."""

    name: str
    description: str
    location: str
    tier: int
    tier_name: str
    score: float
    text_score: float | None = None
    vector_score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 4)

        return {
            "name": self.name,
            "description": self.description,
            "location": self.location,
            "tier": self.tier,
            "tier_name": self.tier_name,
            "score": r(self.score),
            "text_score": r(self.text_score),
            "vector_score": r(self.vector_score),
        }


# --------------------------------------------------------------------------- tools


#: a tool name every chat API (OpenAI, Anthropic) and MCP client takes
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


@attrs.frozen
class ToolContext:
    """What a tool handler receives besides its arguments."""

    agent: AgentLike
    session: Session


@attrs.frozen
class ToolSpec:
    """A tool offered to the model (through the Tooling section, MCP and schema export).

    ``name`` is 1 to 64 letters, digits, ``_`` or ``-``; ``parameters`` is a JSON Schema of
    type object. ``handler(ctx, arguments)`` returns a JSON-able value; it raises :class:`SoulframeError` (or ``ValueError``) for bad arguments, which is
    reported to the model as a tool error.
    """

    # checked here, where a plugin builds it: a schema that is not an object broke the MCP
    # server's whole tools/list (every tool gone, not only this one), a name a chat API
    # refuses broke `tools export` for all, and a misspelt session kind hid the tool
    name: str = attrs.field(validator=_plugin_field(
        "tool", lambda v: isinstance(v, str) and _TOOL_NAME.fullmatch(v) is not None,
        "1 to 64 letters, digits, _ or - (what chat APIs and MCP clients accept)"))
    description: str = attrs.field(validator=_plugin_field("tool", lambda v: isinstance(v, str), "a str"))
    parameters: Mapping[str, Any] = attrs.field(validator=_plugin_field(
        "tool", lambda v: isinstance(v, Mapping) and v.get("type") == "object",
        "a JSON Schema of type object ({'type': 'object', 'properties': {...}})"))
    handler: Callable[[ToolContext, dict[str, Any]], Any] = attrs.field(
        validator=_plugin_field("tool", callable, "callable"))
    #: session kinds the tool is offered in; private-memory tools narrow this
    sessions: frozenset[str] = attrs.field(
        default=frozenset(SESSION_KINDS), converter=_as_frozenset, validator=_plugin_field(
            "tool", lambda v: isinstance(v, frozenset) and v <= frozenset(SESSION_KINDS),
            f"a set of session kinds ({', '.join(SESSION_KINDS)})"))
    summary: str = ""
    #: the tool changes files or memory; ``soulframe serve --read-only`` leaves it out
    writes: bool = False
    #: JSON Schema (type object) of the handler's result; MCP clients get it as the tool's
    #: ``outputSchema`` and the result as ``structuredContent``
    output_schema: Mapping[str, Any] | None = None
    #: a write that replaces or deletes what was there (not only adds to it)
    destructive: bool = False
    #: calling it again with the same arguments changes nothing more
    idempotent: bool = False


# --------------------------------------------------------------------------- named registries


T = TypeVar("T", covariant=True)


@attrs.frozen
class Registration(Generic[T]):
    """A named thing a plugin offers: a store, an embedding provider, a truncation policy,
    a token estimator, a chunker, a re-ranker, a chat model or a context source.

    ``factory(agent)`` builds the object when it is selected, for that agent (its
    ``config``, workspace and id): one signature for every registry, and nothing heavy is
    imported at plugin load time. ``T`` is what it builds (``Registration[EmbeddingProvider]``),
    so a type checker holds the factory to that protocol (and the contract suites in
    :mod:`soulframe.testing` check the object at run time). ``extra`` names the pip extra
    that provides its dependencies, which the unknown-name error shows to the user. A store
    registers a :class:`StoreRegistration`, which says more.
    """

    name: str
    factory: Callable[[AgentLike], T]
    description: str = ""
    extra: str | None = None
    #: set by the core
    plugin: str = ""


@attrs.frozen
class StoreRegistration(Registration["Store"]):
    """A store's registration (``register_stores``): what the core needs to know of a store
    without opening it."""

    #: agent-level context files live in this store, not on disk (managed mode)
    managed: bool = False
    #: ``context_files(agent)`` reaches the per-user (and, when managed, agent-level)
    #: context files without opening the memory index, which may load numpy and a vector
    #: extension that per-user files do not need
    context_files: Callable[[AgentLike], ContextFileStore] | None = None
    #: ``location(agent)`` is the file the store keeps an agent's memory in, known without
    #: opening it (``agents list`` and ``doctor`` look there before an index exists);
    #: ``None`` for a store that is not a local file
    location: Callable[[AgentLike], Path] | None = None


# --------------------------------------------------------------------------- doctor


@attrs.frozen
class Fix:
    """What ``soulframe doctor --fix`` may do about a finding, safely and without asking:
    ``description`` says it in a few words ("chmod 700 memory/"), ``apply()`` does it and
    returns what it did (raising :class:`SoulframeError` or ``OSError`` if it could not)."""

    description: str
    apply: Callable[[], str]


@attrs.frozen
class Finding:
    """One thing ``soulframe doctor`` found: ``level`` is ``"problem"`` (exit 1),
    ``"warning"`` or ``"info"``; ``message`` says what is wrong and how to fix it; ``fix``,
    when set, is a fix safe enough for ``doctor --fix`` to apply."""

    #: what was checked: "files", "permissions", "memory", ...
    check: str
    level: Literal["problem", "warning", "info"]
    message: str
    path: str | None = None
    fix: Fix | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "level": self.level, "message": self.message, "path": self.path,
                "fix": self.fix.description if self.fix is not None else None}


#: a doctor check: ``check(agent) -> Iterable[Finding]`` (see ``register_doctor_checks``);
#: it receives a :class:`CheckedAgent`: ``AgentLike`` and the engine state a check reads
DoctorCheck = Callable[["CheckedAgent"], "Iterable[Finding]"]


# --------------------------------------------------------------------------- protocols


@runtime_checkable
class ContextSource(Protocol):
    """Yields context files for one agent and session (workspace files, store, virtual)."""

    @property
    def name(self) -> str: ...

    def load(self, agent: AgentLike, session: Session) -> Sequence[ContextFile]: ...


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


# Optional provider capabilities: the core checks them with ``isinstance`` and does without
# when a provider lacks one (soulframe.testing.EmbeddingProviderContract checks each one a
# provider declares).


@runtime_checkable
class CountsTokens(Protocol):
    """A provider whose model sees at most ``max_tokens`` word pieces of a text: longer
    passages are split before embedding, measured with ``count_tokens``."""

    @property
    def max_tokens(self) -> int: ...

    def count_tokens(self, text: str) -> int: ...


@runtime_checkable
class ExplainsUnavailability(Protocol):
    """A provider that says why ``available()`` is False (no key, no weights), or ``None``."""

    def unavailable_reason(self) -> str | None: ...


@runtime_checkable
class Describes(Protocol):
    """A provider with more to show in ``soulframe models list`` (weights, endpoint): a
    JSON-able mapping merged into its row."""

    def describe(self) -> Mapping[str, Any]: ...


@attrs.frozen
class FileRecord:
    """What the memory index remembers about one indexed file.

    ``hash`` is the content hash (sha256, first 16 bytes, hex); ``mtime_ns`` and ``size``
    are the fast path that lets an unchanged file be skipped without reading it.
    ``private`` files (MEMORY.md, ``memory.extra_paths``) are only ever returned to a main,
    private session. ``day`` is the date of a daily log (``memory/2026-08-01.md``), used by
    temporal decay; ``None`` for evergreen files. ``model`` is the embedding model the
    file's chunks were embedded with (``None``: not embedded).
    """

    path: str
    hash: str
    mtime_ns: int = 0
    size: int = 0
    private: bool = False
    day: str | None = None
    model: str | None = None
    scope: str | None = None


@attrs.frozen
class ChunkInput:
    """A chunk handed to :meth:`Store.replace_file`: its lines, text, content hash and the
    vectors embedding it (one per window the model saw whole; empty when not embedded)."""

    start_line: int
    end_line: int
    text: str
    hash: str
    vectors: tuple[Vector, ...] = ()


@attrs.frozen
class StoredChunk:
    """A chunk as a store returns it from a search: ``score`` is the channel's raw score
    (text: BM25 relevance, larger is better, > 0; vector: cosine similarity)."""

    id: int
    path: str
    start_line: int
    end_line: int
    text: str
    score: float = 0.0
    private: bool = False
    day: str | None = None
    scope: str | None = None


@attrs.frozen
class Recall:
    """One memory entry search returned: ``line`` (1-based) of ``path``, its ``text``."""

    path: str
    line: int
    text: str
    score: float = 0.0
    scope: str | None = None


@attrs.frozen
class RecallStat:
    """How often search returned one memory entry: ``count`` hits, by ``queries`` distinct
    queries, on ``days`` distinct days; ``last_recalled`` in seconds since the epoch."""

    path: str
    line: int
    text: str
    count: int
    queries: int
    days: int
    best_score: float
    first_recalled: float
    last_recalled: float
    scope: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


@runtime_checkable
class Store(Protocol):
    """Persistent storage for the memory index and per-user context files.

    The SQLite and PostgreSQL stores implement this same contract; ``soulframe.testing``
    holds the contract test suite both run (``StoreContract``). Memory methods take a
    ``scope`` (the user id for per-user memory, ``None`` for the agent's own).

    Visibility is enforced *in the store query*: a search with ``include_private=False``
    never returns a chunk of a private file, whatever the caller does with the result.
    Writes of one file are atomic: a crash leaves the file's old chunks or its new ones.
    """

    name: str
    #: where the store keeps its data, for ``memory status`` (a path or a DSN without secrets)
    location: str

    # -- bookkeeping ------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        """A value from the store's key/value metadata, or ``None``."""
        ...

    def set_meta(self, key: str, value: str) -> None: ...

    def files(self, scope: str | None = None) -> dict[str, FileRecord]:
        """Every indexed file of ``scope``, by workspace-relative path."""
        ...

    # -- writes -----------------------------------------------------------------------
    def replace_file(self, record: FileRecord, chunks: Sequence[ChunkInput]) -> None:
        """Replace a file's chunks (and their vectors) and its record in ONE transaction."""
        ...

    def touch_file(self, record: FileRecord) -> None:
        """Update a file's ``mtime_ns``/``size`` (its content hash did not change)."""
        ...

    def remove_files(self, paths: Sequence[str], scope: str | None = None) -> int:
        """Drop files and their chunks; returns how many files were removed."""
        ...

    def clear(self) -> None:
        """Drop every file, chunk and vector (the embedding cache is kept)."""
        ...

    # -- search -----------------------------------------------------------------------
    def search_text(
        self, terms: Sequence[str], limit: int, *, include_private: bool,
        scope: str | None = None,
    ) -> list[StoredChunk]:
        """Full-text search for chunks containing ANY of ``terms`` (already lower-cased,
        stopwords dropped; an emoji is a term of its own), best first, ``score`` > 0 growing
        with relevance (BM25). A store over a tokenizing index stores
        :func:`soulframe.kit.index_grams` beside each chunk and matches each term's
        :func:`soulframe.kit.search_tokens` too (other forms of Greek and Cyrillic words,
        emoji, which tokenizers drop)."""
        ...

    def search_vector(
        self, vector: Vector, limit: int, *, include_private: bool,
        scope: str | None = None,
    ) -> list[StoredChunk]:
        """The chunks most similar to the unit ``vector`` (cosine; for a chunk embedded as
        several windows, its best window), best first."""
        ...

    def chunk_vectors(self, ids: Sequence[int]) -> dict[int, Vector]:
        """One unit vector per chunk id (the normalised mean of its windows); absent ids
        have no vector. Every vector search asks for its ~100 candidates' (their score
        blends in the chunk's mean, ``memory.chunk_context``) and MMR for its hits', so
        answer from an index, not a scan of every vector."""
        ...

    # -- embedding cache (soulframe._engine.embedding.CacheBackend) ----------------------------
    def get_many(self, model_id: str, hashes: Sequence[str]) -> Mapping[str, Vector]: ...

    def put_many(self, model_id: str, items: Mapping[str, Vector]) -> None: ...

    # -- health -----------------------------------------------------------------------
    def stats(self) -> StoreStats:
        """Counts and backends (:class:`StoreStats`)."""
        ...

    def check(self, deep: bool = False) -> list[str]:
        """Problems found (empty when healthy); ``deep`` runs a full integrity check."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class ErasingStore(Store, Protocol):
    """A store that can erase forgotten text for good (``soulframe forget``), a declared
    capability checked with ``isinstance``."""

    def erase(self, texts: Sequence[str], cache: Mapping[str, Sequence[str]]) -> dict[str, int]:
        """Erase every trace of ``texts`` the store keeps beyond what a sync already
        replaced: chunks (any scope) and recall-tracking rows whose text contains one of
        ``texts`` (ignoring case), and the embedding-cache entries listed in ``cache``
        (model id -> text hashes). Then make the deleted bytes unrecoverable from the
        store's own files: no free page, index segment or log still holding them (SQLite:
        ``secure_delete``, an FTS rebuild, ``VACUUM``, the WAL checkpointed and truncated;
        PostgreSQL: ``VACUUM FULL`` of the memory tables and a ``CHECKPOINT``). Returns
        counts: ``chunks``, ``recalls``, ``cached_embeddings``."""
        ...


@attrs.frozen
class CommonWords:
    """What :meth:`CountingStore.common_words` found: how many chunks the search can see
    (``chunks``), and which of the asked words more than the given share of them hold."""

    chunks: int
    words: frozenset[str] = frozenset()


@runtime_checkable
class CountingStore(Store, Protocol):
    """A store that can say which words are common among the chunks a search sees, a
    declared capability checked with ``isinstance``. Memory search asks it about the names
    in a question, to embed the question with and without the ones most chunks hold
    (``memory.query_focus``); a store without it is searched with the question as asked."""

    def common_words(
        self, words: Sequence[str], share: float, *, include_private: bool,
        scope: str | None = None,
    ) -> CommonWords:
        """How many chunks a search with these visibility arguments (as for
        :meth:`Store.search_text`) sees, and which of ``words`` (lower-cased, one word
        each) more than ``share`` of those chunks hold, a word matched as the keyword
        search matches a term (the same tokenizer and stemming). Count only visible chunks:
        a private file must not shape another session's search. A search calls it before
        the vector scan: keep it to an index lookup per word, remembered until the index
        changes."""
        ...


@runtime_checkable
class ContextFileStore(Protocol):
    """Context files of ONE agent in a store. ``managed`` is True when agent-level files
    live in the store too (PostgreSQL); standalone stores keep per-user files only and the
    agent-level methods then raise.

    Every write method is one transaction. ``seed_*`` insert a file only where the row is
    missing or empty and return the names written.
    """

    managed: bool
    agent_id: uuid.UUID
    agent_key: str
    agent_type: AgentType

    def agent_files(self) -> dict[str, str]: ...

    def write_agent_file(self, name: str, content: str) -> None: ...

    def delete_agent_file(self, name: str) -> bool: ...

    def seed_agent_files(self, files: Mapping[str, str]) -> list[str]: ...

    def user_files(self, user_id: str) -> dict[str, str]:
        """Every stored per-user file of ``user_id`` (empty ones included)."""
        ...

    def write_user_file(self, user_id: str, name: str, content: str) -> None: ...

    def append_user_file(self, user_id: str, name: str, text: str, *, heading: str = "") -> None:
        """Append ``text`` to a per-user file atomically (creating it with ``heading``
        first when missing or empty), starting on a new line."""
        ...

    def delete_user_file(self, user_id: str, name: str) -> bool:
        """Delete a per-user file; deleting BOOTSTRAP.md records that the user finished
        the first-run ritual, so seeding never brings it back."""
        ...

    def seed_user_files(self, user_id: str, files: Mapping[str, str]) -> list[str]:
        """Insert missing/empty files; BOOTSTRAP.md only if the user has not finished it."""
        ...

    def bootstrap_completed(self, user_id: str) -> bool: ...

    def users(self) -> list[str]: ...


# Optional store capabilities, each checked with ``isinstance``; soulframe.testing holds a
# contract suite for each (ContextFileContract, RecallLogContract).


@runtime_checkable
class MarksUserFiles(Protocol):
    """Per-user context files that tell cheaply whether a user's files changed: a search
    as that user then re-reads and re-hashes their memory documents only when the mark
    moved (one query instead of every document, each search); without it they are read
    at every search."""

    def user_files_mark(self, user_id: str) -> str:
        """A text that changes whenever any of the user's files is written, appended to,
        seeded or deleted (by any process or server sharing the store)."""
        ...


@runtime_checkable
class ServesContextFiles(Protocol):
    """A store that keeps per-user context files (and, when managed, the agent's own):
    needed by every session with a ``user_id`` that is not the workspace's owner. A store's
    :class:`StoreRegistration` may offer the same callable as ``context_files`` so the files are
    reached without opening the store."""

    def context_files(self, agent: AgentLike) -> ContextFileStore: ...


@runtime_checkable
class TracksRecalls(Protocol):
    """A store that counts how often memory search returned each entry (the evidence
    ``memory consolidate`` promotes on, and ``memory status --deep`` shows)."""

    def record_recalls(self, recalls: Sequence[Recall], query_hash: str, day: str) -> None:
        """Count one recall of each entry for ``query_hash`` on ``day`` (ISO date); an
        entry is keyed by its normalised text and scope, not its line."""
        ...

    def recalls(
        self, limit: int = 20, *, scope: str | None = None, path_prefix: str | None = None,
    ) -> list[RecallStat]:
        """The most recalled entries of ``scope``, most first."""
        ...


@runtime_checkable
class FindsFiles(Protocol):
    """A store that returns the records of a few named files without listing them all:
    a sync of the paths a write or a file watcher named then costs what those files cost,
    not a read of 20,000 records; without it :meth:`Store.files` is read whole."""

    def files_named(self, paths: Sequence[str], scope: str | None = None) -> dict[str, FileRecord]:
        """The records of those of ``paths`` that are indexed (in ``scope``), by path."""
        ...


@runtime_checkable
class MovesRecalls(Protocol):
    """A store whose recall counts follow a memory file that was renamed or moved (``memory
    prune`` archiving a log, an ``mv``): without it the counts stay under the old path and
    ``memory consolidate`` no longer sees them."""

    def move_recalls(self, moves: Sequence[tuple[str, str]]) -> None:
        """Put the agent's counts under each ``(old, new)`` path pair's new path, merged
        with any already there."""
        ...


@runtime_checkable
class RebuildsWhenCorrupt(Protocol):
    """A store that moves a corrupted index aside and starts empty: ``recovered_from`` says
    where the old one went until the next sync reports it (and sets it back to ``None``)."""

    recovered_from: Any


@attrs.frozen
class Candidate:
    """A fused memory-search candidate as a re-ranker sees it: where it is, its text and the
    fused score it has so far (larger is better)."""

    path: str
    start_line: int
    end_line: int
    text: str
    score: float


@runtime_checkable
class Chunker(Protocol):
    """Cuts a memory file's text into chunks (``register_chunkers``). ``name`` is recorded in
    the index: a different chunker re-indexes every file."""

    name: str

    def chunk(self, text: str, path: str) -> Sequence[Chunk]: ...


@runtime_checkable
class Reranker(Protocol):
    """Re-scores memory-search candidates (``register_rerankers``): one score in [0, 1] per
    candidate, in the candidates' order."""

    name: str

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> Sequence[float]: ...


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


# --------------------------------------------------------------------------- the agent, as plugins see it
#
# What plugins and the engine's own modules need of an agent, as protocols: the concrete
# ``soulframe.Agent`` implements them, and nothing below it imports it, so the prompt,
# memory and skills code is not tied, even for type checking, to the class that ties them
# together. Each protocol names only what callers use.


class Settings(Protocol):
    """The configuration, read by key (``soulframe.Config`` implements it). Every
    key's default is declared once, with the key; a read passes no default of its own."""

    def get(self, key: str) -> Any:
        """The value of ``key`` (the user's, or the declared default)."""
        ...

    def origin(self, key: str) -> str:
        """Where the value came from: a file path, ``"env"``, ``"override"`` or ``"default"``."""
        ...

    def plugin_config(self, plugin_name: str) -> Mapping[str, Any]:
        """A plugin's own settings: ``[plugins.config.<name>]``."""
        ...

    def where(self, key: str) -> str:
        """``key`` with the file and line its value came from, for an error message."""
        ...


class WorkspaceLike(Protocol):
    """The agent's workspace directory (``soulframe.kit.Workspace`` implements it):
    every path a plugin takes from a user, a tool or a config value goes through
    :meth:`resolve`, which refuses a path leaving the workspace."""

    @property
    def root(self) -> Path: ...

    def resolve(self, relative: str | os.PathLike[str], *, must_exist: bool = False) -> Path: ...

    def locate(self, relative: str | os.PathLike[str], *, must_exist: bool = False) -> tuple[Path, Path]: ...

    def relative(self, path: Path) -> str: ...

    def contains(self, path: Path) -> bool: ...

    def read_text(self, relative: str | os.PathLike[str]) -> str: ...

    def write_text(self, relative: str | os.PathLike[str], text: str) -> Path: ...


#: the longest query ``memory.search`` takes: a question, not a document (a tool's schema
#: states it too)
MAX_QUERY_CHARS = 2_000


class MemoryLike(Protocol):
    """The agent's memory index, as plugins use it (``soulframe._engine.memory.MemoryIndex``)."""

    @property
    def store(self) -> Store: ...

    @property
    def embedder(self) -> EmbeddingProvider | None: ...

    @property
    def embedder_problem(self) -> str | None: ...

    def search(
        self, query: str, k: int | None = None, session: Session | None = None, *,
        min_score: float | None = None, channels: str = "hybrid", sync: bool = True,
        track: bool = True, history: bool = False,
    ) -> SearchResults: ...

    def get(
        self, path: str, from_line: int | None = None, lines: int | None = None,
        session: Session | None = None,
    ) -> MemoryExcerpt: ...

    def sync(
        self, *, force: bool = False, progress: Callable[[int, int], None] | None = None,
        blocking: bool = True,
    ) -> SyncReport: ...

    def sync_paths(self, paths: Iterable[str | Path], *, blocking: bool = True) -> SyncReport:
        """Sync the memory files at ``paths`` alone (what a write or a file watcher names);
        a full :meth:`sync` when the paths cannot tell the whole change."""
        ...

    def append_daily(self, text: str, *, when: _dt.datetime | None = None, via: str = "memory remember") -> Path: ...

    def append_to(self, relative: str, text: str, *, heading: str) -> Path: ...

    def remember(self, text: str, *, curated: bool = False, via: str = "memory remember") -> Path: ...


class SkillsLike(Protocol):
    """The agent's skills, as plugins use them (``soulframe._engine.skills.SkillSet``)."""

    def for_session(self, session: Session) -> SkillsLike: ...

    def names(self) -> list[str]: ...

    def all(self) -> list[Skill]: ...

    def get(self, name: str) -> Skill | None: ...

    def read(self, name: str) -> str: ...

    def search(self, query: str, k: int | None = None, *, semantic: bool | None = None) -> list[SkillHit]: ...

    def prompt_block(self, ctx: PromptContext) -> str | None: ...


class AgentLike(Protocol):
    """What plugins and the engine need of an agent: its identity, configuration, workspace,
    local state, memory, skills, plugin hooks and clock. ``soulframe.Agent`` implements it;
    hooks, sections (``PromptContext.agent``) and tools (``ToolContext.agent``) receive one."""

    @property
    def id(self) -> str: ...

    @property
    def spec(self) -> AgentSpec: ...

    @property
    def config(self) -> Settings: ...

    @property
    def root(self) -> Path: ...

    @property
    def workspace(self) -> WorkspaceLike: ...

    @property
    def state_dir(self) -> Path:
        """Where the agent's local state (indexes, audit logs) lives, created 0700."""
        ...

    @property
    def state_key(self) -> str:
        """The name the agent's local state is kept under (see ``Agent.state_key``)."""
        ...

    @property
    def pm(self) -> pluggy.PluginManager:
        """The plugin manager: ``agent.pm.hook.<name>(...)`` calls a hook."""
        ...

    @property
    def memory(self) -> MemoryLike: ...

    @property
    def skills(self) -> SkillsLike: ...

    @property
    def store(self) -> Store:
        """The storage backend ``store.backend`` names (opened on first use)."""
        ...

    @property
    def store_is_open(self) -> bool: ...

    @property
    def embedder(self) -> EmbeddingProvider | None: ...

    def now(self) -> _dt.datetime:
        """The agent's current moment: aware, in its time zone (``agents.timezone``)."""
        ...

    def registry(self, which: Registry[R]) -> dict[str, R]:
        """Every registration of ``which`` (e.g. :data:`STORES`), later plugins winning."""
        ...

    def select(self, which: Registry[R], name: str | None = None) -> R:
        """The registration ``name`` (default: the one ``which.key`` configures names)."""
        ...

    def tools(self, session: Session | None = None) -> list[ToolSpec]: ...

    def system_prompt(self, session: Session | None = None, *, mode: str | None = None,
                      budget_tokens: int | None = None) -> SystemPrompt: ...


# --------------------------------------------------------------------------- named registries, typed


R = TypeVar("R", bound="Registration[object]")


@attrs.frozen
class Registry(Generic[R]):
    """One named registry: the hook plugins register through, the config key that names
    the one chosen (``""``: every registration is used), what it is called in messages, and
    the registration type it holds (``agent.registry(STORES)`` is a
    ``dict[str, StoreRegistration]``)."""

    hook: str
    key: str
    kind: str
    type: type[R]


CONTEXT_SOURCES: Registry[Registration[ContextSource]] = Registry(
    "register_context_sources", "", "context source", Registration)
TRUNCATION_POLICIES: Registry[Registration[TruncationPolicy]] = Registry(
    "register_truncation_policies", "bootstrap.truncation", "truncation policy", Registration)
TOKEN_ESTIMATORS: Registry[Registration[Callable[[str], int]]] = Registry(
    "register_token_estimators", "prompt.tokenizer", "token estimator", Registration)
STORES: Registry[StoreRegistration] = Registry("register_stores", "store.backend", "store", StoreRegistration)
EMBEDDING_PROVIDERS: Registry[Registration[EmbeddingProvider]] = Registry(
    "register_embedding_providers", "embedding.provider", "embedding provider", Registration)
CHUNKERS: Registry[Registration[Chunker]] = Registry("register_chunkers", "memory.chunker", "chunker", Registration)
RERANKERS: Registry[Registration[Reranker]] = Registry("register_rerankers", "memory.reranker", "re-ranker", Registration)
CHAT_MODELS: Registry[Registration[ChatModel]] = Registry(
    "register_chat_models", "model.provider", "chat model", Registration)


# --------------------------------------------------------------------------- a store's counts


@attrs.frozen(kw_only=True)
class StoreStats:
    """What ``Store.stats()`` reports: counts, the vector dimension and how the store searches.
    ``memory status`` shows them; ``extra`` holds what only this store knows (SQLite: its
    ``path``; PostgreSQL: ``users``, ``agent_id``, ``location``), for a person to read."""

    files: int
    chunks: int
    #: passage vectors (a chunk has one or more)
    vectors: int
    #: chunks with at least one vector
    embedded_chunks: int
    #: the dimension most vectors have; ``None`` when there are none
    dimensions: int | None
    cached_embeddings: int
    #: how vectors are scanned, in words (e.g. "sqlite-vec v0.1.6 vec0 KNN")
    vector_backend: str
    #: how keyword search runs, in words
    text_backend: str
    schema_version: int
    #: the size on disk (or of the database); ``None`` when the store cannot tell
    bytes: int | None = None
    extra: Mapping[str, object] = attrs.field(factory=dict)

    def to_dict(self) -> dict[str, object]:
        """The counts as the mapping ``stats()`` returned before it was typed: the fields
        above, then ``extra``."""
        out: dict[str, object] = attrs.asdict(self, recurse=False)
        extra = out.pop("extra")
        return out | dict(self.extra) if extra else out


# --------------------------------------------------------------------------- what a doctor check reads


class SkillProblemLike(Protocol):
    """A SKILL.md that was skipped or cut: ``path`` names the file, ``message`` says why."""

    @property
    def path(self) -> str: ...

    @property
    def message(self) -> str: ...


class SkillsSnapshotLike(Protocol):
    """The skills as loaded now: the winners and every problem found."""

    @property
    def skills(self) -> Sequence[Skill]: ...

    @property
    def problems(self) -> Sequence[SkillProblemLike]: ...


class CheckedSkills(SkillsLike, Protocol):
    """The skills, as a doctor check inspects them."""

    def snapshot(self) -> SkillsSnapshotLike: ...

    def mode(self, prompt_mode: str | None = None) -> Literal["inline", "search"]: ...


class CheckedMemory(MemoryLike, Protocol):
    """The memory index, as a doctor check inspects it."""

    def files(self) -> Sequence[object]:
        """The memory files discovered in the workspace now."""
        ...

    def status(self, *, deep: bool = False, sync: bool = False) -> MemoryStatus: ...


class CheckedAgent(AgentLike, Protocol):
    """What a doctor check (:data:`DoctorCheck`) receives: ``AgentLike``, with the memory and
    skills a check inspects and where the store keeps the index. ``soulframe.Agent``
    implements it."""

    @property
    def memory(self) -> CheckedMemory: ...

    @property
    def skills(self) -> CheckedSkills: ...

    def store_location(self) -> Path | None:
        """The file the selected store keeps the index in, without opening it (``None``
        for a database server)."""
        ...
