"""Per-user memory (seed 000 §15 "Scope: per-agent + per-user").

An agent's own memory is its workspace Markdown (``MEMORY.md``, ``memory/*.md``), indexed by
:class:`~soulframe._engine.memory.MemoryIndex` with ``scope=None``. A *user's* memory lives in the
store next to that user's context files (rows named ``MEMORY.md`` and
``memory/YYYY-MM-DD.md`` of :class:`~soulframe._engine.agentstore.ContextFileStore`) - in SQLite for a
standalone agent, in PostgreSQL in managed mode, where several app servers share it - and is
indexed into the same memory store with ``scope=<user id>``.

A search for a user covers the agent's memory and that user's only (never another
user's); the user's hits are boosted by ``memory.user_scope_boost`` and a user's copy of a
passage wins over the agent's (done by ``MemoryIndex.search`` for a session with a user).

>>> mem = UserMemory(agent, "alice")                          # doctest: +SKIP
>>> mem.remember("Alice prefers dark-mode screenshots")       # doctest: +SKIP
>>> mem.search("screenshot appearance")[0].scope              # doctest: +SKIP
'user'
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from typing import TYPE_CHECKING, Any

from ..agentstore import context_store
from ..model import FileRecord, MarksUserFiles, Session, SoulframeError, check_user
from .hashing import bytes_hash
from .indexview import index_of
from .journal import entry_line
from .pipeline import INDEXED_TEXT_KEY, chunk, chunker_signature, indexed_text_signature

if TYPE_CHECKING:
    from ..model import AgentLike, Store

#: the index's note, per user, of the mark of the documents it holds (``MarksUserFiles``);
#: a rebuild empties it, since it empties the index
USER_MARKS_KEY = "user_files_marks"

DAILY = re.compile(r"^memory/(\d{4}-\d{2}-\d{2})\.md$")
CURATED = "MEMORY.md"
#: the user's private sessions, saved (``sessions/YYYY-MM-DD-<slug>.md``, as in a workspace)
SESSION = re.compile(r"^sessions/(\d{4}-\d{2}-\d{2})-[a-z0-9-]+\.md$")


def user_marks(store: Store) -> dict[str, str]:
    """The note of :data:`USER_MARKS_KEY`: user id -> the mark of their indexed documents
    (empty when there is none or it is unreadable: then every user's documents are read)."""
    try:
        marks = json.loads(store.get_meta(USER_MARKS_KEY) or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in marks.items()} if isinstance(marks, dict) else {}


def is_user_memory_name(name: str) -> bool:
    return name == CURATED or DAILY.match(name) is not None or SESSION.match(name) is not None


def is_private_user_memory(name: str) -> bool:
    """The user's curated memory and saved private sessions: only that user's main
    sessions see them (the daily log is read in every session of the user, as an agent's)."""
    return name == CURATED or SESSION.match(name) is not None


class UserMemory:
    """The memory of one user of one agent."""

    def __init__(self, agent: AgentLike, user_id: str) -> None:
        self.agent = agent
        self.user_id = check_user(user_id)

    @property
    def files(self) -> Any:
        return context_store(self.agent)

    # ------------------------------------------------------------------ documents

    def documents(self) -> dict[str, str]:
        """The user's memory documents, by name."""
        return {n: c for n, c in self.files.user_files(self.user_id).items() if is_user_memory_name(n)}

    def read(self, name: str) -> str | None:
        if not is_user_memory_name(name):
            raise SoulframeError(f"{name}: not a memory document (MEMORY.md, memory/YYYY-MM-DD.md "
                                 "or sessions/YYYY-MM-DD-<slug>.md)")
        return self.documents().get(name)

    def append_daily(self, text: str, *, when: _dt.datetime | None = None,
                     via: str = "memory remember") -> str:
        """Append ``- text`` to the user's ``memory/YYYY-MM-DD.md`` and index it."""
        from .safety import guard

        day = (when.date() if when is not None else self.agent.now().date()).isoformat()
        name = f"memory/{day}.md"
        guard(self.agent, text, target=f"{name} of user {self.user_id}", via=via)
        self.files.append_user_file(self.user_id, name, entry_line(text), heading=f"# {day}\n\n")
        self.sync()
        return name

    def remember(self, text: str, *, curated: bool = False) -> str:
        """Append to the user's daily log, or with ``curated`` to the user's MEMORY.md."""
        from .safety import guard

        if not curated:
            return self.append_daily(text)
        entry = entry_line(text).rstrip("\n") + f" (added {self.agent.now().date().isoformat()})\n"
        guard(self.agent, entry, target=f"{CURATED} of user {self.user_id}", via="memory remember")
        self.files.append_user_file(self.user_id, CURATED, entry, heading="# MEMORY.md\n\n")
        self.sync()
        return CURATED

    def save_session(self, stem: str, content: str, *, via: str = "memory save-session") -> str:
        """Keep a private session's capture as the user's ``sessions/<stem>.md`` (a new
        name, ``-2``, ``-3`` ... when taken) and index it. Returns the document's name."""
        from .safety import guard

        taken = set(self.documents())
        name, n = f"sessions/{stem}.md", 2
        while name in taken:
            name, n = f"sessions/{stem}-{n}.md", n + 1
        guard(self.agent, content, target=f"{name} of user {self.user_id}", via=via)
        # seeding inserts only where no document is: another process saving a session of
        # the same name meanwhile keeps its own, and this one takes the next name
        while not self.files.seed_user_files(self.user_id, {name: content}):
            name, n = f"sessions/{stem}-{n}.md", n + 1
        self.sync()
        return name

    # ------------------------------------------------------------------ index

    def sync(self) -> int:
        """Index the user's documents that changed (and drop deleted ones) into the memory
        store with ``scope=<user id>``. Returns how many documents were (re)indexed.

        One query when nothing changed, with context files that mark changes
        (:class:`~soulframe._engine.model.MarksUserFiles`): the mark read before the
        documents, kept in the index once they are indexed, is compared first."""
        from .results import SyncReport

        index = index_of(self.agent.memory)
        store = index.store
        provider = index.embedder
        model = index.model_key() if provider is not None else None
        # documents cut by another chunker, or indexed by an older release (a secret it
        # did not mask), are cut again, as the agent's own files are
        made_key = f"{INDEXED_TEXT_KEY}:{self.user_id}"
        made = f"{indexed_text_signature()} {chunker_signature(self.agent)}"
        recut = store.get_meta(made_key) != made
        files = self.files
        # read before the documents: a write in between moves it again, so the next
        # search reads them again (never the other way round)
        mark = f"{files.user_files_mark(self.user_id)} {model}" if isinstance(files, MarksUserFiles) else None
        if mark is not None and not recut and user_marks(store).get(self.user_id) == mark:
            return 0
        docs = self.documents()
        stored = store.files(self.user_id)
        pending = []
        for name, text in docs.items():
            data = text.encode("utf-8")
            digest = bytes_hash(data)
            old = stored.get(name)
            if (old is not None and old.hash == digest and not recut
                    and (provider is None or old.model == model)):
                continue
            m = DAILY.match(name) or SESSION.match(name)
            record = FileRecord(path=name, hash=digest, mtime_ns=0, size=len(data),
                                private=is_private_user_memory(name), day=m.group(1) if m else None,
                                model=model, scope=self.user_id)
            pending.append((record, chunk(self.agent, text, name), old is None))
        report = SyncReport()
        if pending:
            # the same embedding path as the agent's own files (windows, cache, one
            # transaction per document)
            index.embed_and_write(pending, provider, model, report)
        gone = sorted(set(stored) - set(docs))
        if gone:
            store.remove_files(gone, self.user_id)
        if recut:
            store.set_meta(made_key, made)
        if mark is not None and not report.warnings:  # a failed embedding is tried again
            marks = user_marks(store)
            marks[self.user_id] = mark
            store.set_meta(USER_MARKS_KEY, json.dumps(marks, sort_keys=True))
        return len(pending)

    def search(self, query: str, k: int | None = None, *, min_score: float | None = None,
               channels: str = "hybrid", session: Session | None = None) -> Any:
        """Search the agent's memory and this user's (a main session of the user by
        default, which may see private files). The search indexes the user's changed
        documents first."""
        sess = session or Session.main(user_id=self.user_id)
        if sess.user_id != self.user_id:
            raise SoulframeError("UserMemory.search: the session belongs to another user")
        return self.agent.memory.search(query, k, sess, min_score=min_score, channels=channels)
