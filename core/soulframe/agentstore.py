"""Agents, agent-level and per-user context files in a store (seed 000 §3–4, §6).

Two agent types decide where the seven context files live:

==============  =================================  ================================
agent type      agent-level files                  per-user files
==============  =================================  ================================
``open``        none (in managed mode)             all seven
``predefined``  six, shared by every user          USER.md and BOOTSTRAP.md
==============  =================================  ================================

*Standalone* (``store.backend = "sqlite"``): agent-level files are the workspace on disk;
per-user files live in SQLite (``<state_dir>/agents.sqlite``), keyed by a deterministic
UUID v5 of the agent's key (:func:`standalone_agent_id`), so rows survive restarts and need
no coordination. *Managed* (``store.backend = "postgres"``): both levels live in the
database (``agent_context_files``, ``user_context_files``).

A store offers these files through ``store.context_files(agent)`` returning a
:class:`ContextFileStore`; this module holds the rules on top of it:

* seeding (:func:`seed_to_store`, :func:`seed_user_files`): idempotent, never overwriting
  content, one transaction per call; a user's BOOTSTRAP.md is seeded only until that user
  finished the ritual;
* the context-file interceptor (:func:`read_context_file`, :func:`write_context_file`): how
  a host's ``read_file``/``write_file`` tools reach the right copy; writing an empty
  BOOTSTRAP.md deletes it, checked *before* the rule that predefined agents' agent-level
  files are read-only from chat (otherwise the ritual could never end);
* :class:`StoreContextSource`, the context source that yields a session user's files
  (``scope="user"``) and, in managed mode, the agent-level files from the store.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

import attrs

from .model import AgentType, ContextFile, Session, SoulframeError

if TYPE_CHECKING:
    from .agent import Agent

#: the namespace of standalone agent ids; never change it (ids are stored in SQLite rows)
STANDALONE_NAMESPACE = uuid.UUID("5d0f6c1e-8a43-5b7e-9a1c-50f1f4a3e0d2")

#: the seven template context files, in prompt order (seed 000 §1)
CONTEXT_FILES: tuple[str, ...] = (
    "AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md",
)
BOOTSTRAP = "BOOTSTRAP.md"
#: a predefined agent keeps these per user; everything else is shared
PREDEFINED_USER_FILES: tuple[str, ...] = ("USER.md", "BOOTSTRAP.md")
#: never copied from the agent's own files into a user's: each user starts from the template
#: (the workspace USER.md describes the owner; it must not reach other users)
PERSONAL_FILES: frozenset[str] = frozenset({"USER.md"})


class ContextFileReadOnlyError(SoulframeError):
    """A write the interceptor refuses (a predefined agent's shared file, from chat)."""


def standalone_agent_id(agent_key: str) -> uuid.UUID:
    """The deterministic id of a standalone agent: ``uuid5(NS, "soulframe-standalone:{key}")``."""
    return uuid.uuid5(STANDALONE_NAMESPACE, f"soulframe-standalone:{agent_key}")


def agent_level_files(agent_type: str, *, managed: bool = True) -> tuple[str, ...]:
    """Files kept once per agent: predefined - six (never BOOTSTRAP.md); open - none in a
    store (a standalone open agent's own files are its workspace)."""
    if agent_type == "predefined":
        return tuple(n for n in CONTEXT_FILES if n != BOOTSTRAP)
    return () if managed else CONTEXT_FILES


def user_level_files(agent_type: str) -> tuple[str, ...]:
    """Files each user gets a copy of: open - all seven; predefined - USER.md, BOOTSTRAP.md."""
    return CONTEXT_FILES if agent_type == "open" else PREDEFINED_USER_FILES


def is_context_file(name: str) -> bool:
    return name in CONTEXT_FILES


def _check_type(agent_type: str) -> None:
    if agent_type not in ("open", "predefined"):
        raise SoulframeError(f"agent type {agent_type!r} — expected 'open' or 'predefined'")


def _check_user(user_id: str) -> str:
    user = str(user_id)
    if not user or len(user) > 256 or "\x00" in user:
        raise SoulframeError(f"user id {user_id!r} — expected 1 to 256 characters")
    return user


# --------------------------------------------------------------------------- the store side


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


def context_store(agent: Agent) -> ContextFileStore:
    """The selected store's context files for ``agent``.

    A store offers them with a ``context_files(agent)`` method. Its registration may declare
    the same callable (``Registration.context_files``), so they are reached without opening
    the store itself (the SQLite memory index loads sqlite-vec and numpy; per-user files
    need neither).
    """
    cached = agent.cache.context_store
    if cached is not None:
        return cached
    get = None
    if not agent.store_is_open:
        try:
            reg = agent.select("register_stores", "store.backend", "store")
            get = reg.context_files
        except SoulframeError:
            get = None
    if get is None:
        store = agent.store
        get = getattr(store, "context_files", None)
        if get is None:
            raise SoulframeError(
                f"store {getattr(store, 'name', store)!r} keeps no per-user context files "
                "(it has no context_files(agent) method)"
            )
    files: ContextFileStore = get(agent)
    agent.cache.context_store = files
    return files


def is_managed(agent: Agent) -> bool:
    """Whether agent-level files live in the store (managed mode) rather than on disk.

    Decided without opening the store when it is not open yet: the store's registration
    declares it (``Registration.managed``).
    """
    if agent.store_is_open:
        return bool(getattr(agent.store, "managed", False))
    try:
        reg = agent.select("register_stores", "store.backend", "store")
    except SoulframeError:
        return False
    return reg.managed


# --------------------------------------------------------------------------- seeding


def templates(agent: Agent) -> dict[str, str]:
    """Name -> content of the context-file templates plugins offer (3a's
    ``register_workspace_templates``)."""
    from .workspace import workspace_templates

    return {t.name: t.content for t in workspace_templates(agent.pm)
            if not t.is_dir and t.name in CONTEXT_FILES}


def seed_to_store(agent: Agent, *, files: ContextFileStore | None = None) -> list[str]:
    """SeedToStore (managed mode): a predefined agent's six agent-level files, where
    missing or empty; open agents get none. Returns the names written.

    Each file starts from the agent's own workspace copy when it has a non-empty one (so
    switching a customised agent to managed mode keeps its SOUL.md), else the template.
    After that the database is the agent's copy: the workspace files are not read again.
    """
    store = files or context_store(agent)
    if not store.managed:
        return []
    wanted = agent_level_files(store.agent_type, managed=True)
    tpl = templates(agent)
    own = _workspace_content(agent, wanted)
    content = {n: own.get(n) or tpl.get(n, "") for n in wanted}
    return store.seed_agent_files({n: c for n, c in content.items() if c.strip()})


def _workspace_content(agent: Agent, names: Sequence[str]) -> dict[str, str]:
    """The non-empty workspace copies of ``names`` on disk."""
    out: dict[str, str] = {}
    for n in names:
        try:
            text = agent.workspace.read_text(n)
        except (SoulframeError, OSError):
            continue
        if text.strip():
            out[n] = text
    return out


def _agent_level_content(agent: Agent, store: ContextFileStore, names: Sequence[str]) -> dict[str, str]:
    """The agent's own current copy of ``names``: in managed mode the store's, else (an
    open agent keeps none there) the workspace's; in standalone mode the workspace's."""
    if store.managed:
        have = store.agent_files()
        found = {n: have[n] for n in names if have.get(n, "").strip()}
        rest = [n for n in names if n not in found]
        return {**_workspace_content(agent, rest), **found} if rest else found
    return _workspace_content(agent, names)


def seed_user_files(agent: Agent, user_id: str, *, files: ContextFileStore | None = None) -> list[str]:
    """SeedUserFiles: a user's copies (open: all seven; predefined: USER.md and
    BOOTSTRAP.md), where missing or empty, in one transaction. Idempotent.

    A copy starts from the agent's own version of the file when it has one (so an open
    agent's customised SOUL.md carries over to its users), else from the template; USER.md
    always starts from the template (the agent's USER.md describes its owner).
    """
    user = _check_user(user_id)
    store = files or context_store(agent)
    wanted = user_level_files(store.agent_type)
    tpl = templates(agent)
    own = _agent_level_content(agent, store, [n for n in wanted if n not in PERSONAL_FILES])
    content = {n: own.get(n) or tpl.get(n, "") for n in wanted}
    return store.seed_user_files(user, {n: c for n, c in content.items() if c.strip()})


# --------------------------------------------------------------------------- the interceptor


@attrs.frozen
class WriteOutcome:
    """What :func:`write_context_file` did."""

    name: str
    action: Literal["written", "deleted", "unchanged"]
    scope: Literal["agent", "user"]
    where: str


def _routes_to_user(store: ContextFileStore | None, user_id: str | None, name: str) -> bool:
    return store is not None and bool(user_id) and name in user_level_files(store.agent_type)


def effective_user(agent: Agent, user_id: str | None) -> str | None:
    """The user whose per-user copies apply. In a standalone workspace the owner (listed in
    the agent's ``owner_ids``) *is* the workspace: their files are the workspace's own, so
    they get no per-user layer (and no first-run ritual of their own)."""
    if user_id and not is_managed(agent) and user_id in tuple(agent.spec.owner_ids):
        return None
    return user_id


def _store_or_none(agent: Agent, user_id: str | None) -> ContextFileStore | None:
    if user_id or is_managed(agent):
        return context_store(agent)
    return None


def read_context_file(agent: Agent, user_id: str | None, name: str) -> str | None:
    """The content a ``read_file`` of context file ``name`` returns for ``user_id``:
    the user's copy first, else the agent-level copy (store in managed mode, workspace
    otherwise); ``None`` when there is none."""
    if not is_context_file(name):
        raise SoulframeError(f"{name}: not a context file ({', '.join(CONTEXT_FILES)})")
    user_id = effective_user(agent, user_id)
    store = _store_or_none(agent, user_id)
    if store is not None and _routes_to_user(store, user_id, name):
        assert user_id is not None
        mine = store.user_files(_check_user(user_id))
        if name in mine:
            return mine[name]
        if name == BOOTSTRAP and store.bootstrap_completed(user_id):
            return None  # finished: the agent's own copy must not restart the ritual
    if store is not None and store.managed:
        return store.agent_files().get(name)
    try:
        return str(agent.workspace.read_text(name))
    except (SoulframeError, OSError):
        return None


def write_context_file(
    agent: Agent, user_id: str | None, name: str, content: str, *, from_chat: bool = True
) -> WriteOutcome:
    """Route a write of context file ``name`` to the right copy (seed 000 §3, §7).

    Order matters: an empty BOOTSTRAP.md is a deletion and is handled first, then the
    rule that a predefined agent's shared files cannot be changed from chat (except
    SOUL.md when the agent has ``self_evolve``); admin paths pass ``from_chat=False``.
    """
    if not is_context_file(name):
        raise SoulframeError(f"{name}: not a context file ({', '.join(CONTEXT_FILES)})")
    user_id = effective_user(agent, user_id)
    store = _store_or_none(agent, user_id)
    to_user = _routes_to_user(store, user_id, name)
    scope: Literal["agent", "user"] = "user" if to_user else "agent"
    managed = store is not None and store.managed

    # 1. an empty BOOTSTRAP.md ends the first-run ritual: delete it, wherever it lives
    if name == BOOTSTRAP and not content.strip():
        if to_user:
            assert store is not None and user_id is not None
            store.delete_user_file(_check_user(user_id), name)
            return WriteOutcome(name, "deleted", "user", "store")
        if managed:
            assert store is not None
            store.delete_agent_file(name)
            return WriteOutcome(name, "deleted", "agent", "store")
        path = agent.workspace.resolve(name)
        try:
            path.unlink()
        except FileNotFoundError:
            return WriteOutcome(name, "unchanged", "agent", "workspace")
        return WriteOutcome(name, "deleted", "agent", "workspace")

    # 2. a predefined agent's shared files are read-only from chat
    agent_type = store.agent_type if store is not None else getattr(agent.spec, "type", "open")
    if from_chat and not to_user and agent_type == "predefined":
        if not (name == "SOUL.md" and getattr(agent.spec, "self_evolve", False)):
            raise ContextFileReadOnlyError(
                f"{name} is shared by every user of the predefined agent "
                f"{getattr(agent, 'id', '?')!r} and cannot be changed from chat"
                + ("; only USER.md and BOOTSTRAP.md are yours" if user_id else "")
            )

    # 3. write, once the text is known not to carry an injection or a secret into every
    # later prompt (memory.write_safety)
    from .memory.safety import guard

    where = f"{name} of user {user_id}" if to_user else name
    guard(agent, content, target=where, via="context_write" if from_chat else "context set")
    if to_user:
        assert store is not None and user_id is not None
        store.write_user_file(_check_user(user_id), name, content)
        return WriteOutcome(name, "written", scope, "store")
    if managed:
        assert store is not None
        store.write_agent_file(name, content)
        return WriteOutcome(name, "written", "agent", "store")
    agent.workspace.write_text(name, content)
    return WriteOutcome(name, "written", "agent", "workspace")


# --------------------------------------------------------------------------- context source


class StoreContextSource:
    """Context files from the store: the session user's copies (``scope="user"``; seeded
    on the user's first session) and, in managed mode, the agent-level files.

    In managed mode a predefined agent's seven context files come from the database only
    (every app server shows the same prompt); the workspace on disk served once, as the
    seed. An open agent keeps no shared files in the database: its workspace files are its
    defaults - each user's copies start from them, and a session without a user sees them.

    A user who finished BOOTSTRAP.md gets an empty per-user BOOTSTRAP.md, so an
    agent-level copy cannot show through the merge and restart the ritual; empty files
    are dropped by the truncation policy.
    """

    name = "store"

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self._seeded: set[str] = set()
        self._agent_seeded = False
        self._lock = threading.Lock()

    def load(self, agent: Agent, session: Session) -> list[ContextFile]:
        user_id = effective_user(agent, session.user_id)
        managed = is_managed(agent)
        if not user_id and not managed:
            return []  # standalone without a user: the workspace source has everything
        store = context_store(agent)
        out: list[ContextFile] = []
        if store.managed:
            with self._lock:
                if not self._agent_seeded:
                    seed_to_store(agent, files=store)
                    self._agent_seeded = True
            shared = store.agent_files()
            for name, content in shared.items():
                if name in CONTEXT_FILES:
                    out.append(ContextFile(name=name, content=content, source="store", scope="agent"))
            if store.agent_type == "predefined":
                # the database is a predefined agent's only copy: a file missing there (an
                # administrator deleted it; BOOTSTRAP.md is never shared) must not show
                # through from whatever workspace this process happens to have on disk.
                # Empty files are dropped by the truncation policy.
                for name in CONTEXT_FILES:
                    if name not in shared:
                        out.append(ContextFile(name=name, content="", source="store", scope="agent"))
        if user_id:
            user = _check_user(user_id)
            with self._lock:
                if user not in self._seeded:
                    seed_user_files(agent, user, files=store)
                    self._seeded.add(user)
            mine = store.user_files(user)
            for name, content in mine.items():
                if name in user_level_files(store.agent_type):
                    out.append(ContextFile(name=name, content=content, source="store", scope="user"))
            if BOOTSTRAP not in mine and BOOTSTRAP in user_level_files(store.agent_type):
                out.append(ContextFile(name=BOOTSTRAP, content="", source="store", scope="user"))
        return out
