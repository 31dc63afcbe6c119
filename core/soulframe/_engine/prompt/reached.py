"""Privacy follows the file reached, for context files.

A context file is judged by the file its name reaches, not by the name: ``SOUL.md`` that is
a symlink to ``MEMORY.md`` is MEMORY.md, and a group session may not see it; ``AGENTS.md``
hard-linked to ``USER.md`` is USER.md, and a sub-agent may not see it; a file whose hard
links are not all context files of this workspace may be any file of the machine
(``ln /elsewhere/notes.md SOUL.md``) and is never served. A symlink into a folder of private
memory (``sessions/``, ``bank/``, ``memory.extra_paths``) is private memory.

Cheap by construction: a plain file with one link (the common case) is its own file and
costs no extra system call; a symlink is judged by the real path the workspace check
already resolved (:meth:`soulframe._engine.workspace.Workspace.locate`); only a file with several
hard links makes :class:`Reached` look at the other names (once per prompt build), with the
``stat`` the reader already has.
The workspace context source and the per-user seeding (which copies the workspace's files
into every user's) both judge through it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..workspace import FileIdentities
from .context import BOOTSTRAP_FILES, EXTRA_CONTEXT_FILES, MEMORY_FILES, visible_in_session

if TYPE_CHECKING:
    from ..model import AgentLike, Session

#: every name at the workspace root a prompt or a seed reads
ROOT_NAMES: tuple[str, ...] = (*BOOTSTRAP_FILES, *EXTRA_CONTEXT_FILES, *MEMORY_FILES, "BOOT.md")
#: the owner's own files: never another user's (their profile and curated memory)
OWNERS_FILES: frozenset[str] = frozenset({"USER.md", *MEMORY_FILES})


def hidden_names(agent: AgentLike, session: Session) -> frozenset[str]:
    """The root files ``session`` may not see: the session filter's, and the owner's own
    files for a user who is not the owner."""
    from ..agentstore import effective_user, sees_owner_memory

    hidden = {n for n in ROOT_NAMES if n != "BOOT.md" and not visible_in_session(n, session, agent.config)}
    if session.user_id and effective_user(agent, session.user_id) is not None:
        hidden |= OWNERS_FILES
    elif not sees_owner_memory(agent, session):
        hidden |= set(MEMORY_FILES)
    return frozenset(hidden)


class Reached:
    """Judges files read from one workspace, for readers who may not see ``hidden``;
    ``agent`` names its folders of private memory (looked up only for a symlink)."""

    def __init__(self, root: Path, hidden: Collection[str] | Callable[[], Collection[str]],
                 agent: AgentLike | None = None) -> None:
        self.root = root
        self._hidden = hidden
        self.agent = agent
        self._ids: FileIdentities | None = None

    @classmethod
    def for_session(cls, agent: AgentLike, session: Session) -> Reached:
        # what the session may not see is worked out only when a file needs judging
        return cls(agent.root, lambda: hidden_names(agent, session), agent)

    @functools.cached_property
    def hidden(self) -> frozenset[str]:
        return frozenset(self._hidden() if callable(self._hidden) else self._hidden)

    def problem(self, name: str, st: os.stat_result, *, linked: bool, real: Path | None = None) -> str | None:
        """Why ``name`` (read with ``st``; ``linked`` when a symlink was on the way, ``real``
        the path it reaches when the caller has it) may not be served, or ``None``."""
        if not linked and st.st_nlink < 2:
            return None  # its own file: no other name can reach it
        target = None
        if linked:
            try:
                reached = real if real is not None else Path(os.path.realpath(self.root / name))
                target = reached.relative_to(self.root).as_posix()
            except (OSError, ValueError):
                return None  # the reader has refused it already
            if st.st_nlink < 2:  # the file has one name, its real path: judge by that
                return self._hidden_twin(name, [target], "a symlink") or self._private_memory(name, target)
        # several hard links: which names reach this file?
        if self._ids is None:
            self._ids = FileIdentities.of(self.root, ROOT_NAMES)
        twins = [*self._ids.names_of(st), *([target] if target is not None else [])]
        problem = self._hidden_twin(name, twins, "a symlink" if linked else "a hard link")
        if problem is not None:
            return problem
        # a symlink's target is one hard link the root names may not account for
        elsewhere = self._ids.links_elsewhere(st) - (1 if target is not None and target not in ROOT_NAMES else 0)
        if elsewhere > 0:
            return (f"{name}: skipped — the file has {st.st_nlink} hard links, {elsewhere} of them "
                    "outside this workspace's context files (a file from elsewhere); a context "
                    "file must be a file of its own: replace the link with a copy")
        return self._private_memory(name, target) if target is not None else None

    def _hidden_twin(self, name: str, names: list[str], how: str) -> str | None:
        for twin in names:
            if twin != name and twin in self.hidden:
                return (f"{name}: skipped — it is {twin} under another name ({how}), and this "
                        f"session may not see {twin}: privacy follows the file reached")
        return None

    def _private_memory(self, name: str, target: str) -> str | None:
        if self.agent is None or "MEMORY.md" not in self.hidden:
            return None
        for d in private_memory_dirs(self.agent):
            if target == d or target.startswith(d + "/"):
                return (f"{name}: skipped — a symlink to {target}, private memory, which this "
                        "session may not see: privacy follows the file reached")
        return None


def private_memory_dirs(agent: AgentLike) -> tuple[str, ...]:
    """The workspace folders of private memory: saved private sessions, entity pages and
    ``memory.extra_paths``."""
    from ..memory.files import ENTITY_DIR, PRIVATE_DIR

    extra: Any = agent.config.get("memory.extra_paths") or ()
    return tuple(d.strip("/") for d in (PRIVATE_DIR, ENTITY_DIR, *(str(x) for x in extra)) if d.strip("/"))
