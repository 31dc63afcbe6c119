"""The context files a session sees.

``collect_context(agent, session)`` runs the pipeline of seed 000 §1–2, §6 and seed 003 §2.4:

1. every context source (``register_context_sources``) loads its files;
2. merge by name: a per-user file (``scope="user"``) overrides an agent-level file of the
   same name; files only one side has are kept (seed 000 §6);
3. the ``transform_context_files`` chain (soul-evil swaps SOUL.md here);
4. the session filter — in the core, so no source or transform can leak private files:
   sub-agent and cron sessions see only AGENTS.md and TOOLS.md; MEMORY.md only a main
   private session (the agent's own only the owner's, another user their own:
   :func:`owners_memory_only`), the daily logs of today and yesterday every other session
   too (seed 003 §1.2 "Every session (today + yesterday)"); light heartbeats only HEARTBEAT.md, AGENTS.md, TOOLS.md;
   BOOT.md (the startup ritual) no session at all;
5. the truncation policy named by ``bootstrap.truncation``.
"""

from __future__ import annotations

import datetime as _dt
import re
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from ..agentcache import cache_of
from ..memory.files import CURATED, DAILY_LOG, is_memory_context_file
from ..model import (
    CONTEXT_SOURCES,
    TRUNCATION_POLICIES,
    ConfigError,
    ContextFile,
    ContextSource,
    RenderedSection,
    Session,
    SoulframeError,
    SoulframeWarning,
    TruncationNotice,
    TruncationPolicy,
)

if TYPE_CHECKING:
    from ..model import AgentLike, Settings

#: the bootstrap files, in the order they are injected (seed 000 §1), then MEMORY.md
BOOTSTRAP_FILES: tuple[str, ...] = (
    "AGENTS.md",
    "SOUL.md",
    "TOOLS.md",
    "IDENTITY.md",
    "USER.md",
    "HEARTBEAT.md",
    "BOOTSTRAP.md",
)
#: the curated memory's names, as :mod:`soulframe._engine.memory.files` (their owner) spells them
MEMORY_FILES: tuple[str, ...] = CURATED
#: more stable files seed 002 names (AGENTS.md's mode variants, CAPABILITIES.md,
#: USER_PREDEFINED.md); which mode uses which is :mod:`soulframe._engine.prompt.mode_files`
EXTRA_CONTEXT_FILES: tuple[str, ...] = ("AGENTS_CORE.md", "AGENTS_TASK.md", "CAPABILITIES.md", "USER_PREDEFINED.md")
ORDER: tuple[str, ...] = (
    "AGENTS.md", "AGENTS_CORE.md", "AGENTS_TASK.md", "CAPABILITIES.md",
    *BOOTSTRAP_FILES[1:5], "USER_PREDEFINED.md", *BOOTSTRAP_FILES[5:], "MEMORY.md",
)

#: what sub-agent and cron sessions see (seed 000 §1 "minimalAllowlist"); the lean copies of
#: AGENTS.md (AGENTS_CORE.md, AGENTS_TASK.md) count as AGENTS.md
MINIMAL_ALLOWLIST: frozenset[str] = frozenset({"AGENTS.md", "AGENTS_CORE.md", "AGENTS_TASK.md", "TOOLS.md"})
#: what a heartbeat sees with ``prompt.heartbeat_light_context``
HEARTBEAT_ALLOWLIST: frozenset[str] = frozenset({"HEARTBEAT.md", *MINIMAL_ALLOWLIST})
#: personal files kept out of group chats besides memory (seed 003 §9: the owner's profile
#: must not be shown to a room of other people)
GROUP_EXCLUDED: frozenset[str] = frozenset({"USER.md", "BOOTSTRAP.md"})

#: files that are never context: BOOT.md is the startup ritual (seed 003 §1.1), sent once as
#: the instruction of `soulframe boot`, not something every prompt should carry and re-run
NEVER_INJECTED: frozenset[str] = frozenset({"BOOT.md"})


# warnings.catch_warnings swaps process-wide state: two threads building prompts at once
# must not restore each other's filters mid-collection
_WARNINGS_LOCK = threading.RLock()


class ContextWarning(SoulframeWarning):
    """A context file could not be used as it is (unreadable, invalid UTF-8, outside the
    workspace, oversized...). The message names the file and what was done instead."""


@attrs.frozen
class ContextResult:
    """The context files of one session, ready for the prompt sections."""

    files: list[ContextFile]
    notices: list[TruncationNotice] = attrs.field(factory=list)
    #: BOOTSTRAP.md is present and non-empty: the first-run ritual is under way
    bootstrapping: bool = False
    #: every warning raised while collecting (also issued through :mod:`warnings`)
    warnings: list[str] = attrs.field(factory=list)
    #: expected files this session would see but nobody provided (only when a mode was given)
    missing: list[str] = attrs.field(factory=list)

    def file(self, name: str) -> ContextFile | None:
        for f in self.files:
            if f.name == name:
                return f
        return None

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.files]


# --------------------------------------------------------------------------- names


#: MEMORY.md (or memory.md) or a daily log ``memory/YYYY-MM-DD.md``: private memory
is_memory_file = is_memory_context_file


def visible_in_session(name: str, session: Session, config: Settings | None = None) -> bool:
    """Whether a file called ``name`` may be shown to ``session`` (the session filter).

    Plugins can ask this to avoid work for a file the session will never see (soul-evil
    does, so it records no swap for a sub-agent).
    """
    if name in NEVER_INJECTED:
        return False
    kind = session.kind
    if kind in ("subagent", "cron"):
        return name in MINIMAL_ALLOWLIST
    if kind == "heartbeat":
        light = True if config is None else bool(config.get("prompt.heartbeat_light_context"))
        if light:
            return name in HEARTBEAT_ALLOWLIST
        return name not in MEMORY_FILES and name != "BOOTSTRAP.md"
    if kind == "group":
        # daily logs are episodic and read in every session (seed 003 §1.2, §6.4); only the
        # curated MEMORY.md is private to the main session
        return name not in MEMORY_FILES and name not in GROUP_EXCLUDED
    # main, private: everything
    return True


def filter_for_session(files: Iterable[ContextFile], session: Session, config: Settings | None = None) -> list[ContextFile]:
    return [f for f in files if visible_in_session(f.name, session, config)]


def owners_memory_only(agent: AgentLike, session: Session, files: Iterable[ContextFile]) -> list[ContextFile]:
    """Curated memory follows its owner: a session of a user who is not the agent's owner
    gets that user's own MEMORY.md (``scope="user"``), never the agent's."""
    files = list(files)
    if not session.is_private or not session.user_id:
        return files
    from ..agentstore import sees_owner_memory

    if sees_owner_memory(agent, session):
        return files
    return [f for f in files if f.name not in MEMORY_FILES or f.scope == "user"]


def sort_key(f: ContextFile, index: int) -> tuple[int, str, int]:
    """Bootstrap files in seed order, MEMORY.md, then daily logs by date, then the rest
    (virtual files included) in the order their sources gave them."""
    name = "MEMORY.md" if f.name in MEMORY_FILES else f.name
    if name in ORDER:
        return (0, f"{ORDER.index(name):02d}", index)
    m = DAILY_LOG.match(f.name)
    if m:
        return (1, m.group(1), index)
    return (2, "", index)


def order_files(files: Sequence[ContextFile]) -> list[ContextFile]:
    return [f for _, f in sorted(enumerate(files), key=lambda p: sort_key(p[1], p[0]))]


def merge(groups: Iterable[Sequence[ContextFile]]) -> list[ContextFile]:
    """Merge the files of several sources (seed 000 §6).

    A per-user file overrides an agent-level one of the same name whatever the source
    order; between two files of the same scope the later source wins; names only one
    source has are kept.
    """
    merged: dict[str, ContextFile] = {}
    for files in groups:
        for f in files:
            old = merged.get(f.name)
            if old is not None and old.scope == "user" and f.scope != "user":
                continue
            merged[f.name] = f
    return list(merged.values())


# --------------------------------------------------------------------------- heartbeat

_COMMENT = re.compile(r"<!--.*?(-->|\Z)", re.S)
_EMPTY_LINE = re.compile(r"^\s*(#{1,6}(\s.*)?|[-*+](\s+\[[ xX]?\])?\s*:?|\d+[.)]\s*|[-*_]{3,}|>\s*)$")


def heartbeat_has_tasks(text: str | None) -> bool:
    """Whether HEARTBEAT.md asks for anything: a file of only headings, empty bullets,
    rules and HTML comments means "nothing to do" (the heartbeat can skip the model call)."""
    if not text:
        return False
    body = _COMMENT.sub("", text)
    return any(line.strip() and not _EMPTY_LINE.match(line) for line in body.splitlines())


# --------------------------------------------------------------------------- time


def agent_timezone(agent: AgentLike) -> _dt.tzinfo:
    """The agent's timezone: its ``timezone``, else config ``timezone``, else local time."""
    name = agent.spec.timezone or agent.config.get("timezone")
    if not name:
        tz = _dt.datetime.now().astimezone().tzinfo
        return tz if tz is not None else _dt.UTC
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(
            f"{_timezone_key(agent, name)} = {name!r} — not a known IANA timezone "
            "(e.g. 'Europe/Berlin', 'America/New_York', 'UTC')"
        ) from exc


def _timezone_key(agent: AgentLike, name: Any) -> str:
    """Where a bad timezone was set: the config file and line, or the agent's entry."""
    config = agent.config
    if name == config.get("timezone"):
        return where(config, "timezone")
    return f"agents[{agent.spec.id}].timezone"


def where(config: Settings, key: str) -> str:
    """``key`` with the file and line its value came from, when the config knows them."""
    return config.where(key)


def session_now(agent: AgentLike, session: Session) -> _dt.datetime:
    """The moment the prompt is for, in the agent's timezone (``session.now`` if set; a
    naive ``session.now`` is taken to be agent-local time)."""
    now = session.now
    if now is None:
        return agent.now()  # the agent's one clock
    tz = agent_timezone(agent)
    if now.tzinfo is None:
        return now.replace(tzinfo=tz)
    return now.astimezone(tz)


def agent_now(timezone: str | None, now: _dt.datetime | None = None) -> _dt.datetime:
    """Now (or ``now``) in the timezone named ``timezone``; the system's local zone when
    none is set. The agent routines (flush, boot, heartbeat) date their logs with it."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if timezone:
        try:
            tz: _dt.tzinfo = ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise SoulframeError(
                f"timezone {timezone!r} is not a known IANA timezone (e.g. Europe/Berlin)"
            ) from None
    else:
        tz = _dt.datetime.now().astimezone().tzinfo or _dt.UTC
    if now is None:
        return _dt.datetime.now(tz)
    if now.tzinfo is None:
        now = now.replace(tzinfo=tz)
    return now.astimezone(tz)


def daily_log_names(agent: AgentLike, session: Session) -> list[str]:
    """``memory/YYYY-MM-DD.md`` for yesterday and today, agent-local."""
    today = session_now(agent, session).date()
    return [f"memory/{d.isoformat()}.md" for d in (today - _dt.timedelta(days=1), today)]


# --------------------------------------------------------------------------- the pipeline


def sources(agent: AgentLike) -> list[ContextSource]:
    """The context sources every registered ``register_context_sources`` factory builds,
    in plugin order (built once per agent)."""
    return [src for _, src in _sources_by_plugin(agent)]


def _sources_by_plugin(agent: AgentLike) -> list[tuple[str, ContextSource]]:
    """(plugin, source) pairs: a warning about a source names the plugin to disable."""
    cache = cache_of(agent).context_sources
    if cache is not None:
        return list(cache)
    from ..plugins import PluginError, build, plugin_failed

    built = []
    for reg in agent.registry(CONTEXT_SOURCES).values():
        try:
            built.append((reg.plugin, build(agent, CONTEXT_SOURCES, reg, ContextSource)))
        except PluginError as exc:  # every source is used: a broken one must not hide the others
            plugin_failed(agent.pm, reg.plugin, CONTEXT_SOURCES.hook, str(exc), exc)
    cache_of(agent).context_sources = built
    return list(built)


def load_merged(agent: AgentLike, session: Session) -> list[ContextFile]:
    """Steps 1–2: every source's files, merged. No transform, filter or truncation: what
    is on disk (and in stores), for ``doctor`` and ``identity``."""
    groups = []
    for plugin, src in _sources_by_plugin(agent):
        try:
            files = list(src.load(agent, session))
            wrong = next((f for f in files if not isinstance(f, ContextFile)), None)
            if wrong is not None:
                raise TypeError(f"load returned a {type(wrong).__name__}, expected ContextFile objects")
            groups.append(files)
        except SoulframeError:
            raise
        except Exception as exc:  # one broken source must not hide the others
            warnings.warn(
                f"context source {src.name!r} from plugin {plugin!r} failed and was skipped: "
                f"{type(exc).__name__}: {exc}",
                ContextWarning,
                stacklevel=2,
            )
    return order_files(merge(groups))


def apply_transforms(agent: AgentLike, session: Session, files: list[ContextFile]) -> list[ContextFile]:
    """Step 3: the ``transform_context_files`` chain, soulframe's own plugins first."""
    caller = agent.pm.hook.transform_context_files
    for impl in caller.get_hookimpls():
        if impl.hookwrapper or impl.wrapper:
            continue
        kwargs = {"agent": agent, "session": session, "files": list(files)}
        try:
            # the hookspec's promise: a list of ContextFile, or None to leave them as they are
            out = impl.function(**{a: kwargs[a] for a in impl.argnames if a in kwargs})
            if out is not None:
                if isinstance(out, (str, bytes, Mapping)) or not isinstance(out, Iterable):
                    raise TypeError(f"returned {type(out).__name__}, expected a list of ContextFile or None")
                out = list(out)
                wrong = next((f for f in out if not isinstance(f, ContextFile)), None)
                if wrong is not None:
                    raise TypeError(f"returned a list holding a {type(wrong).__name__}, expected ContextFile objects")
        except SoulframeError:
            raise
        except Exception as exc:
            warnings.warn(
                f"transform_context_files in plugin {impl.plugin_name!r} failed; its change "
                f"was skipped: {type(exc).__name__}: {exc}",
                ContextWarning,
                stacklevel=2,
            )
            continue
        if out is not None:
            files = list(out)
    return files


def truncation_policy(agent: AgentLike) -> TruncationPolicy:
    """The policy ``bootstrap.truncation`` names, built once per agent."""
    name = str(agent.config.get("bootstrap.truncation"))
    cached = cache_of(agent).truncation_policy
    if cached is not None and cached[0] == name:
        return cached[1]
    from ..plugins import build

    policy = build(agent, TRUNCATION_POLICIES, agent.select(TRUNCATION_POLICIES), TruncationPolicy)
    cache_of(agent).truncation_policy = (name, policy)
    return policy


#: what a truncation policy keeps: context files, or rendered sections
Kept = TypeVar("Kept", ContextFile, RenderedSection)


def checked_cut(agent: AgentLike, name: str, method: Callable[..., Any], args: tuple[Any, ...],
                kept: type[Kept]) -> tuple[list[Kept], list[TruncationNotice]]:
    """``method(*args)``, the method ``name`` of the selected truncation policy: what it kept
    and what it says it cut. A third-party policy that raises, or answers in another shape,
    is one error naming it and its plugin, not a traceback from the middle of a prompt."""

    def who() -> str:  # only when something is wrong: a prompt build runs this every time
        reg = agent.select(TRUNCATION_POLICIES)
        return f"truncation policy {reg.name!r} (plugin {reg.plugin or '?'}): {name}"

    try:
        out, notices = method(*args)
        out, notices = list(out), list(notices)
    except SoulframeError:
        raise
    except Exception as exc:
        raise SoulframeError(f"{who()} failed: {type(exc).__name__}: {exc}") from exc
    wrong = next((x for x in out if not isinstance(x, kept)), None) or next(
        (n for n in notices if not isinstance(n, TruncationNotice)), None)
    if wrong is not None:
        raise SoulframeError(f"{who()} returned a {type(wrong).__name__} where it keeps {kept.__name__} "
                             "objects and names what it cut with TruncationNotice objects")
    return out, notices


def collect_context(agent: AgentLike, session: Session, mode: str | None = None) -> ContextResult:
    """The context files ``session`` sees, merged, transformed, filtered and truncated.

    With ``mode``, only the files that prompt mode uses are kept (before truncation, so an
    unused variant costs no budget) and the missing expected files are listed
    (:mod:`soulframe._engine.prompt.mode_files`).

    Warnings (unreadable or oversized files, invalid UTF-8, symlinks leaving the
    workspace) are issued as :class:`ContextWarning` and also listed in the result.
    """
    with _WARNINGS_LOCK, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        files = load_merged(agent, session)
        files = apply_transforms(agent, session, files)
        files = order_files(owners_memory_only(agent, session, filter_for_session(files, session, agent.config)))
        boot = next((f for f in files if f.name == "BOOTSTRAP.md"), None)
        bootstrapping = boot is not None and bool(boot.content.strip())
        if bootstrapping:
            # seed 000 §5: during the first run virtual files only cost tokens
            files = [f for f in files if f.kind != "virtual"]
        missing: list[str] = []
        if mode is not None:
            from . import mode_files

            files = mode_files.for_mode(files, mode, agent.spec.type)
            missing = mode_files.missing_expected(
                files, mode, lambda n: visible_in_session(n, session, agent.config)
            )
        policy = truncation_policy(agent)
        files, notices = checked_cut(agent, "truncate_files", policy.truncate_files, (files, agent.config),
                                     ContextFile)
    messages: list[str] = []
    for w in caught:
        messages.append(str(w.message))
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return ContextResult(
        files=list(files), notices=list(notices), bootstrapping=bootstrapping, warnings=messages,
        missing=missing,
    )
