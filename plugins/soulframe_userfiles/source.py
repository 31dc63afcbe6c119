"""The ``store`` context source: a session user's own context files and, in managed mode,
the agent-level files, from whichever store is selected."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from soulframe import ContextFile, Session, SoulframeError
from soulframe.kit import visible_in_session
from soulframe.memorykit import (
    BOOTSTRAP,
    CONTEXT_FILES,
    MEMORY_FILES,
    check_user,
    context_store,
    effective_user,
    is_managed,
    user_level_files,
)

from .rules import seed_to_store, seed_user_files

#: a user's curated memory, kept in the store by :class:`soulframe.memorykit.UserMemory`
CURATED = MEMORY_FILES[0]

if TYPE_CHECKING:
    from soulframe import AgentLike


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

    def __init__(self, agent: AgentLike) -> None:
        self.agent = agent
        self._seeded: set[str] = set()
        self._agent_seeded = False
        self._lock = threading.Lock()

    def load(self, agent: AgentLike, session: Session) -> list[ContextFile]:
        user_id = effective_user(agent, session.user_id)
        managed = is_managed(agent)
        if not user_id and not managed:
            return []  # standalone without a user: the workspace source has everything
        try:
            return self._load(agent, session, user_id, managed)
        except SoulframeError:
            raise
        except Exception as exc:
            # fail closed: a source that fails is left out of the merge, and the workspace's
            # files would show in place of these: the owner's USER.md in another user's
            # prompt, a predefined agent's files from whatever disk this process has
            whose = f"user {user_id!r}" if user_id else f"agent {agent.id!r}"
            raise SoulframeError(
                f"the context files of {whose} could not be read from the store "
                f"({type(exc).__name__}: {exc}); no prompt is built without them, as the "
                "workspace's own (the owner's USER.md) would show in their place") from exc

    def _load(self, agent: AgentLike, session: Session, user_id: str | None, managed: bool) -> list[ContextFile]:
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
            user = check_user(user_id)
            with self._lock:
                if user not in self._seeded:
                    seed_user_files(agent, user, files=store)
                    self._seeded.add(user)
            mine = store.user_files(user)
            for name, content in mine.items():
                if name in user_level_files(store.agent_type):
                    out.append(ContextFile(name=name, content=content, source="store", scope="user"))
            if mine.get(CURATED, "").strip() and visible_in_session(CURATED, session, agent.config):
                # the user's own curated memory, in place of the owner's (which the core's
                # session filter keeps from every user who is not an owner)
                out.append(ContextFile(name=CURATED, content=mine[CURATED], source="store", scope="user"))
            if BOOTSTRAP not in mine and BOOTSTRAP in user_level_files(store.agent_type):
                out.append(ContextFile(name=BOOTSTRAP, content="", source="store", scope="user"))
        return out
