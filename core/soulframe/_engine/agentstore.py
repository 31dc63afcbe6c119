"""The contract for agent-level and per-user context files in a store (seed 000 §3–4, §6).

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
:class:`ContextFileStore`. This module is only the contract every store and plugin shares:
the protocol, the accessors :func:`context_store` and :func:`is_managed`, the table of
which files each agent type keeps per agent and per user (stores need it to migrate rows),
and :func:`effective_user`, which the core's own user memory calls. The rules on top —
seeding, the read/write interceptor, the ``store`` context source — belong to the
``soulframe_userfiles`` plugin, so a third party can replace them.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from .agentcache import cache_of
from .model import STORES, ServesContextFiles, SoulframeError
from .model import ContextFileStore as ContextFileStore  # its home before model.py held it

if TYPE_CHECKING:
    from .model import AgentLike, Session

#: the namespace of standalone agent ids; never change it (ids are stored in SQLite rows)
STANDALONE_NAMESPACE = uuid.UUID("5d0f6c1e-8a43-5b7e-9a1c-50f1f4a3e0d2")

#: the seven template context files, in prompt order (seed 000 §1)
CONTEXT_FILES: tuple[str, ...] = (
    "AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md",
)
BOOTSTRAP = "BOOTSTRAP.md"
#: a predefined agent keeps these per user; everything else is shared
PREDEFINED_USER_FILES: tuple[str, ...] = ("USER.md", "BOOTSTRAP.md")


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


# --------------------------------------------------------------------------- the store side


def context_store(agent: AgentLike) -> ContextFileStore:
    """The selected store's context files for ``agent``.

    A store offers them with a ``context_files(agent)`` method. Its registration may declare
    the same callable (``StoreRegistration.context_files``), so they are reached without opening
    the store itself (the SQLite memory index loads sqlite-vec and numpy; per-user files
    need neither).
    """
    cached = cache_of(agent).context_store
    if cached is not None:
        return cached
    get = None
    if not agent.store_is_open:
        try:
            get = agent.select(STORES).context_files
        except SoulframeError:
            get = None
    if get is None:
        store = agent.store
        if not isinstance(store, ServesContextFiles):
            raise SoulframeError(
                f"store {store.name!r} keeps no per-user context files, so it cannot serve a "
                "session with a user_id (it has no context_files(agent) method: see "
                "soulframe.ServesContextFiles)"
            )
        get = store.context_files
    files: ContextFileStore = get(agent)
    cache_of(agent).context_store = files
    return files


def is_managed(agent: AgentLike) -> bool:
    """Whether agent-level files live in the store (managed mode) rather than on disk.

    Decided without opening the store: its registration declares it (``StoreRegistration.managed``).
    """
    try:
        return agent.select(STORES).managed
    except SoulframeError:
        return False


def effective_user(agent: AgentLike, user_id: str | None) -> str | None:
    """The user whose per-user copies apply. In a standalone workspace the owner (listed in
    the agent's ``owner_ids``) *is* the workspace: their files are the workspace's own, so
    they get no per-user layer (and no first-run ritual of their own).

    In the core, not with the rules in ``soulframe_userfiles``, because the core's own
    per-user memory (``soulframe memory remember --user``, ``memory_remember``) must apply
    the same owner rule without depending on a plugin.
    """
    if user_id and not is_managed(agent) and user_id in tuple(agent.spec.owner_ids):
        return None
    return user_id


def sees_owner_memory(agent: AgentLike, session: Session | None) -> bool:
    """Whether ``session`` may see the agent's own private memory: MEMORY.md, the owner's
    saved sessions, entity pages, ``memory.extra_paths``. Curated memory follows its owner:
    only a private session with no user (the owner at the keyboard, or the Python API) or
    with a user listed in the agent's ``owner_ids``. Any other user has memory of their own
    (:class:`soulframe.memorykit.UserMemory`) and never sees the owner's.
    """
    if session is None:
        return True
    if not session.is_private:
        return False
    return not session.user_id or session.user_id in tuple(agent.spec.owner_ids)
