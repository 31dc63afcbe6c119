"""``Agent``: the public entry point tying config, plugins, workspace, prompt, memory and
skills together for one agent. Everything heavy is built lazily, on first use."""

from __future__ import annotations

import datetime as _dt
import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import attrs

from . import plugins as _plugins
from .agentcache import AgentCache
from .config import Config, load_config
from .model import (
    EMBEDDING_PROVIDERS,
    STORES,
    AgentSpec,
    ConfigError,
    R,
    Registration,
    Registry,
    Session,
    SystemPrompt,
    ToolSpec,
    WorkspaceNotFoundError,
)
from .workspace import Workspace, ensure_private_dir

if TYPE_CHECKING:
    from .memory import MemoryIndex
    from .model import EmbeddingProvider, Store
    from .skills import SkillSet


class Agent:
    """One agent: its configuration, plugins and workspace. Implements
    :class:`soulframe._engine.model.AgentLike`, which is what plugins and the engine rely on.

    >>> agent = Agent.open("~/clawd")                      # doctest: +SKIP
    >>> agent.system_prompt(Session.main()).text            # doctest: +SKIP
    """

    def __init__(
        self,
        config: Config,
        *,
        agent_id: str | None = None,
        pm: _plugins.PluginManager | None = None,
    ) -> None:
        self.config = config
        self.spec: AgentSpec = config.agent(agent_id)
        if pm is None:
            pm = config.pm if config.pm is not None else _plugins.make_plugin_manager(
                config.get("plugins.disabled") or ()
            )
        self.pm: _plugins.PluginManager = pm
        self.workspace = Workspace(self.spec.workspace)
        self.cache = AgentCache()

    @classmethod
    def open(
        cls,
        workspace: str | os.PathLike[str] | None = None,
        *,
        config: str | os.PathLike[str] | Config | None = None,
        agent_id: str | None = None,
        pm: _plugins.PluginManager | None = None,
        create: bool = False,
        **overrides: Any,
    ) -> Agent:
        """Open an agent.

        :param workspace: the workspace directory (default: the configured one). It must
            exist: a mistyped path is :class:`WorkspaceNotFoundError`, never an empty agent.
        :param create: create the workspace directory (private, 0700) when it is missing;
            ``soulframe init`` also seeds the template files.
        :param config: a config file path or a :class:`Config`; by default the file is
            looked up (``$SOULFRAME_CONFIG``, ``<workspace>/soulframe.toml``, user dir).
        :param agent_id: which ``[[agents]]`` entry to use.
        :param overrides: config keys to set, with ``__`` for dots
            (``memory__max_results=3``).
        """
        dotted = {k.replace("__", "."): v for k, v in overrides.items()}
        if isinstance(config, Config):
            cfg = config.evolve(**overrides) if overrides else config
            if workspace is not None:
                agents = list(cfg.agents)
                idx = next((i for i, a in enumerate(agents) if a.id == agent_id), 0)
                chosen = Path(workspace).expanduser()
                if chosen.resolve() != agents[idx].workspace.expanduser().resolve():
                    agents[idx] = attrs.evolve(agents[idx], workspace=chosen,
                                               configured_workspace=agents[idx].workspace)
                cfg = attrs.evolve(cfg, agents=tuple(agents))
        else:
            cfg = load_config(config, workspace=workspace, agent_id=agent_id, overrides=dotted, pm=pm)
        agent = cls(cfg, agent_id=agent_id, pm=pm)
        agent.require_workspace(create=create)
        return agent

    def require_workspace(self, *, create: bool = False) -> None:
        """Raise :class:`WorkspaceNotFoundError` when the workspace directory is missing (or
        create it, private, with ``create=True``)."""
        root = self.workspace.root
        if root.is_dir():
            return
        if create and not root.exists():
            ensure_private_dir(root)
            return
        what = "is not a directory" if root.exists() else "does not exist"
        raise WorkspaceNotFoundError(
            f"the workspace {root} {what}; create one with `soulframe init {root}`")

    # ------------------------------------------------------------------ identity and paths

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def root(self) -> Path:
        return self.workspace.root

    @property
    def state_key(self) -> str:
        """The name this agent's local state (memory index, per-user files, flush and audit
        records) is kept under: its id for the workspace its config names, and the id plus a
        hash of the path for any other workspace (``-w``, or the one you stand in), so two
        workspaces never share, and overwrite, one index."""
        configured = self.spec.configured_workspace
        if configured is None or Path(configured).expanduser().resolve() == self.root:
            return self.id
        import hashlib

        return f"{self.id}-{hashlib.sha256(str(self.root).encode()).hexdigest()[:8]}"

    def now(self) -> _dt.datetime:
        """The agent's current moment, aware, in its time zone (its ``timezone``, else the
        config's, else the machine's): the one clock prompts, memory writes and
        consolidation read."""
        from .prompt.context import agent_timezone

        return _dt.datetime.now(agent_timezone(self))

    @functools.cached_property
    def state_dir(self) -> Path:
        """Per-agent state (indexes, audit logs): ``<state_dir>/``, created 0700."""
        return ensure_private_dir(Path(str(self.config.get("state_dir"))).expanduser())

    # ------------------------------------------------------------------ named registries

    def registry(self, which: Registry[R]) -> dict[str, R]:
        """The registrations of ``which`` (e.g. :data:`soulframe._engine.model.STORES`), later
        plugins winning. A plain :class:`Registration` offered where a richer type is
        expected (a store's) becomes one with the extra fields at their defaults; anything
        else is a plugin error naming the plugin."""
        # cached on the instance: a functools.cache on the method would keep every Agent
        # (its store and connection pool with it) alive until the interpreter exits
        cache: dict[str, dict[str, Registration[object]]] = self.__dict__.setdefault("_registries", {})
        if which.hook not in cache:
            found: dict[str, Registration[object]] = {}
            for name, item in _plugins.collect_named(self.pm, which.hook).items():
                if not isinstance(item, Registration):
                    raise ConfigError(
                        f"{which.hook}: a plugin offered {item!r} (a {type(item).__name__}), not a "
                        "soulframe.Registration")
                if not isinstance(item, which.type):
                    item = which.type(**attrs.asdict(item, recurse=False))
                found[name] = item
            cache[which.hook] = found
        return cast("dict[str, R]", cache[which.hook])

    def select(self, which: Registry[R], name: str | None = None) -> R:
        """Pick the registration ``config[which.key]`` names (or ``name``), with a helpful
        error if none does."""
        chosen = name if name is not None else str(self.config.get(which.key))
        origin = self.config.origin(which.key)
        return _plugins.select(self.registry(which), chosen, key=which.key, kind=which.kind,
                               origin=origin if origin != "default" else "")

    @functools.cached_property
    def store(self) -> Store:
        """The storage backend named by ``store.backend`` (opened on first use)."""
        from .model import Store

        reg = self.select(STORES)
        return _plugins.build(self, STORES, reg, Store)

    @functools.cached_property
    def embedder(self) -> EmbeddingProvider | None:
        """The embedding provider named by ``embedding.provider`` (``auto``: the first
        available one), or ``None`` when semantic search is off."""
        from .embedding import resolve_provider

        return resolve_provider(self, self.registry(EMBEDDING_PROVIDERS))

    # ------------------------------------------------------------------ capabilities

    def tools(self, session: Session | None = None) -> list[ToolSpec]:
        """Every tool plugins offer, filtered to those allowed in ``session``."""
        named: dict[str, ToolSpec] = _plugins.collect_named(self.pm, "register_tools")
        tools = list(named.values())
        if session is not None:
            tools = [t for t in tools if session.kind in t.sessions]
        from .sandbox import workspace_access

        if workspace_access(self) != "rw":  # a read-only sandbox offers no tool that writes
            tools = [t for t in tools if not t.writes]
        return tools

    def system_prompt(self, session: Session | None = None, *, mode: str | None = None,
                      budget_tokens: int | None = None) -> SystemPrompt:
        """Build the system prompt for ``session`` (default: a main session); ``mode`` forces a
        prompt mode, ``budget_tokens`` overrides ``prompt.budget_tokens`` for this build."""
        from .prompt.build import build_system_prompt

        return build_system_prompt(self, session or Session.main(), mode=mode, budget_tokens=budget_tokens)

    @functools.cached_property
    def memory(self) -> MemoryIndex:
        """The memory index (:class:`soulframe._engine.memory.MemoryIndex`)."""
        from .memory.index import MemoryIndex

        return MemoryIndex(self)

    @functools.cached_property
    def skills(self) -> SkillSet:
        """The skill set (:class:`soulframe._engine.skills.SkillSet`)."""
        from .skills.skillset import SkillSet

        return SkillSet(self)

    @property
    def store_is_open(self) -> bool:
        """Whether :attr:`store` was opened already (asking does not open it)."""
        return "store" in self.__dict__

    def store_location(self) -> Path | None:
        """The file the selected store keeps this agent's memory in, as its registration
        declares it (``StoreRegistration.location``), without opening the store; ``None`` for a
        store that declares none (a database server) or an unknown backend."""
        from .model import SoulframeError

        try:
            reg = self.select(STORES)
        except SoulframeError:
            return None
        if reg.location is None:
            return None
        return Path(reg.location(self))

    def before_compaction(self, session: Session, usage: Any) -> None:
        """Tell plugins a host is about to compact ``session`` (memory flush runs here)."""
        _plugins.notify(self.pm, "before_compaction", agent=self, session=session, usage=usage)

    def end_session(self, session: Session, messages: Any) -> None:
        """Tell plugins a host ended or reset ``session`` (the conversation is saved to
        memory here, see ``memory.session.save_on_end``)."""
        if isinstance(messages, Iterator):  # every plugin told reads it, not only the first
            messages = list(messages)
        _plugins.notify(self.pm, "session_ended", agent=self, session=session, messages=messages)

    def close(self) -> None:
        # cached_property keeps what it built in the instance dict: close only what was opened
        if "skills" in self.__dict__:  # stops the hot-reload watcher, if one runs
            self.__dict__["skills"].close()
        if "store" in self.__dict__:
            self.__dict__.pop("store").close()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Agent {self.id!r} workspace={str(self.root)!r}>"
