"""The memory index of one agent: a small front over syncing the Markdown memory files into
the store (:mod:`.sync`), searching them (:mod:`.search`), reading them (:mod:`.reading`),
appending to them (:mod:`.journal`) and reporting on them (:mod:`.status`). It holds what
those share: the agent, its store and embedder, and two collaborators that own the state kept
between calls: a :class:`~.syncer.Syncer` (the sync lock, warnings given, what the last
sync saw) and a :class:`~.searcher.Searcher` (the calibrator, the keyword channel's thread,
the query-vector cache).

>>> agent.memory.append_daily("Prefers dark-mode screenshots")    # doctest: +SKIP
>>> agent.memory.search("screenshot appearance")[0].citation      # doctest: +SKIP
'memory/2026-11-21.md#L3-L3'

Pipeline (seed 000 §14-15): discover files -> fast path on mtime+size -> SHA-256 (first 16
bytes) -> unchanged: skip -> chunk (<= memory.chunk_max_chars) -> embed through
``agent.embedder``, batched, cached by (model, text hash) in the store -> replace the
file's chunks in ONE transaction. Deleted files' chunks are removed.

Embedding granularity: see :mod:`.passages`.
"""

from __future__ import annotations

import datetime as _dt
import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..model import FileRecord, RecallStat, Session, SoulframeError, UnknownNameError
from .files import ENTITY_DIR, PRIVATE_DIR, Discovery, MemoryFile
from .results import MemoryDisabledError, MemoryExcerpt, MemoryStatus, SearchResults, SyncReport
from .searcher import Searcher
from .syncer import Syncer

if TYPE_CHECKING:
    from ..model import AgentLike, EmbeddingProvider, Store
    from .consolidate import ConsolidationResult
    from .sessions import SavedSession

log = logging.getLogger("soulframe.memory")

#: how long a search waits for another process building its index from nothing before it
#: answers from what is there (and says so)
EMPTY_INDEX_WAIT_S = 10.0

#: more changed paths than this at once (a checkout, a restore) are synced by a walk: it
#: costs about the same, and the store is asked about every file in one query
NAMED_MAX = 256


# --------------------------------------------------------------------------- the index


class MemoryIndex:
    """The memory of one :class:`~soulframe.Agent` (``agent.memory``)."""

    def __init__(self, agent: AgentLike) -> None:
        self.agent = agent
        self.config = agent.config
        self._lock = threading.RLock()
        self.syncer = Syncer(agent)
        self.searcher = Searcher()
        self.skipped_paths: list[tuple[str, str]] = []
        self.narrowed_paths: list[tuple[str, str]] = []
        self._embedder_checked = False
        self._embedder: EmbeddingProvider | None = None
        self._embedder_problem: str | None = None
        self._last_sync: SyncReport | None = None
        self.progress: Callable[[int, int], None] | None = None
        #: set by a long-lived process whose file watcher syncs after every change
        #: (``soulframe serve``): a search then skips its own sync, a walk of every file
        self.follows_changes = False

    # ------------------------------------------------------------------ parts

    def check_enabled(self) -> None:
        """Raise :class:`MemoryDisabledError` when ``memory.enabled`` is off."""
        if not self.config.get("memory.enabled"):
            raise MemoryDisabledError(
                "memory is disabled (memory.enabled = false); enable it in soulframe.toml"
            )

    @property
    def store(self) -> Store:
        return self.agent.store

    @property
    def discovery(self) -> Discovery:
        extra = list(self.config.get("memory.extra_paths") or ())
        if self.config.get("memory.consolidate.entities") and (self.agent.root / ENTITY_DIR).is_dir():
            # entity pages consolidation maintains are memory too (private, like MEMORY.md)
            extra.append(ENTITY_DIR)
        if _is_private_dir(self.agent.workspace, PRIVATE_DIR):
            # the owner's saved private sessions: private memory, like MEMORY.md
            extra.append(PRIVATE_DIR)
        return Discovery(self.agent.workspace, extra)

    @property
    def embedder(self) -> EmbeddingProvider | None:
        """The embedding provider, or ``None`` (then :attr:`embedder_problem` says why)."""
        if not self._embedder_checked:
            from ..embedding import NO_PROVIDER_MESSAGE, caller_reports_unavailability

            try:
                # the index says it itself, once: in each result's notice and status
                with caller_reports_unavailability():
                    self._embedder = self.agent.embedder
                if self._embedder is None:
                    off = str(self.config.get("embedding.provider")) == "none"
                    self._embedder_problem = (
                        "semantic search is off (embedding.provider = none): keyword-only"
                        if off else NO_PROVIDER_MESSAGE
                    )
            except UnknownNameError:
                # a misspelt provider is a config error like a misspelt key, never a quiet
                # fall back to keyword-only search the user did not ask for
                raise
            except SoulframeError as exc:
                self._embedder = None
                self._embedder_problem = f"{exc} — memory search runs keyword-only"
            self._embedder_checked = True
        return self._embedder

    @property
    def embedder_problem(self) -> str | None:
        _ = self.embedder
        return self._embedder_problem

    def model_key(self) -> str | None:
        p = self.embedder
        if p is None:
            return None
        return f"{p.name}:{p.model_id}:{p.dimensions}"

    def files(self) -> list[MemoryFile]:
        """The memory files discovered in the workspace now (:attr:`skipped_paths` names the
        ones left out: symlinks leading astray or looping, names that are not UTF-8)."""
        discovery = self.discovery
        found = discovery.files()
        self.skipped_paths = list(discovery.skipped)
        self.narrowed_paths = list(discovery.narrowed)
        self.syncer.walked(discovery.dirs, links=discovery.links)
        return found

    # ------------------------------------------------------------------ sync

    def sync(
        self,
        *,
        force: bool = False,
        progress: Callable[[int, int], None] | None = None,
        blocking: bool = True,
    ) -> SyncReport:
        """Bring the index up to date with the files. Cheap when nothing changed: a stat
        per file and one query. ``force`` re-reads and re-chunks every file (vectors still
        come from the embedding cache).

        Syncs of one agent are serialised across processes by a lock file
        (``<state_dir>/memory/<agent>.sync.lock``), so two indexers never write an older
        reading of a file over a newer one. With ``blocking=False`` (what a search does)
        a sync that would wait is skipped: the process holding the lock is indexing.
        """
        self.check_enabled()
        with self._lock:
            report = self._sync_locked(force, progress, blocking, 0.0)
            if report is None and self._last_sync is None and self.store.stats().files == 0:
                # another process is building this index from nothing (a first index, a
                # corrupted one replaced): an answer now would be an empty one, so wait a
                # little for it
                report = self._sync_locked(force, progress, blocking, EMPTY_INDEX_WAIT_S)
            if report is None:
                # another process is indexing this agent right now: it will bring the index
                # up to date; a search must not wait for it, but says how far it got
                return attrs.evolve(self._last_sync or SyncReport(),
                                    indexing_elsewhere=self.syncer.indexing_elsewhere())
        self._last_sync = report
        if report.changed_anything or report.recovered_from:
            from ..plugins import notify

            notify(self.agent.pm, "memory_indexed", agent=self.agent, report=report)
        return report

    def sync_paths(self, paths: Iterable[str | Path], *, blocking: bool = True) -> SyncReport:
        """Sync the memory files at ``paths`` alone (absolute, or relative to the workspace),
        for a caller that knows what changed: soulframe's own write, a file watcher's events.
        Each is read and hashed; one gone is dropped from the index; a path that is not a
        memory file is ignored. Whenever the paths cannot tell the whole change (no full
        sync yet in this process, a tree with links, a path outside the workspace or under
        ``memory.extra_paths``) this is a full :meth:`sync`. With ``blocking=False`` a sync
        another process holds the lock for is not waited for (that one indexes the files)."""
        self.check_enabled()
        rels = self._relative(paths)
        from .sync import named_files

        if rels is None or len(rels) > NAMED_MAX or named_files(self, rels) is None:
            return self.sync(blocking=blocking)
        with self._lock:
            with self.syncer.lock(blocking=blocking) as locked:
                if not locked:
                    return SyncReport(indexing_elsewhere=self.syncer.indexing_elsewhere())
                from .sync import sync_files

                report = sync_files(self, force=False, progress=None, named=rels)
        if report.changed_anything:
            from ..plugins import notify

            notify(self.agent.pm, "memory_indexed", agent=self.agent, report=report)
        return report

    def _relative(self, paths: Iterable[str | Path]) -> list[str] | None:
        """``paths`` relative to the workspace with forward slashes, or None when one is
        outside it (or names it through another spelling: only a walk is sure then)."""
        root = str(self.agent.root).rstrip("/")
        out: list[str] = []
        for p in paths:
            text = str(p).replace("\\", "/")
            if not text.startswith("/"):
                text = f"{root}/{text}"
            if not text.startswith(root + "/"):
                return None
            rel = text[len(root) + 1:]
            if not rel or any(part in ("", ".", "..") for part in rel.split("/")):
                return None
            out.append(rel)
        return out

    def _sync_locked(self, force: bool, progress: Callable[[int, int], None] | None,
                     blocking: bool, wait_s: float) -> SyncReport | None:
        """A sync under the agent's sync lock; None when another process holds it."""
        with self.syncer.lock(blocking=blocking, wait_s=wait_s) as locked:
            if not locked:
                return None
            from .sync import sync_files

            shown = progress or self.progress

            def told(done: int, total: int) -> None:
                self.syncer.indexing(done, total)
                if shown is not None:
                    shown(done, total)

            return sync_files(self, force=force, progress=told)

    def sync_if_stale(self) -> SyncReport:
        """What a search calls: a sync only when the files may have changed since the last
        one (:mod:`.freshness`: directory mtimes and the recently changed files, a few
        dozen ``stat`` calls whatever the workspace's size), else nothing."""
        if self.syncer.unchanged(float(self.config.get("memory.rescan_s"))):
            return self._last_sync or SyncReport()
        return self.sync(blocking=False)

    def changed(self) -> None:
        """The files were just written here: the next search syncs first."""
        self.syncer.forget()

    @property
    def last_sync(self) -> SyncReport | None:
        """What the last sync of this index did (None: none ran in this process)."""
        return self._last_sync

    def embed_and_write(
        self,
        pending: list[tuple[FileRecord, list[Any], bool]],
        provider: EmbeddingProvider | None,
        model: str | None,
        report: SyncReport,
    ) -> None:
        """Embed and store documents (the path the agent's files and a user's memory
        documents share): see :func:`.sync.embed_and_write`."""
        from .sync import embed_and_write

        embed_and_write(self, pending, provider, model, report)

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Drop the index and build it again from the files (embeddings come from the cache)."""
        self.check_enabled()
        with self._lock, self.syncer.lock(blocking=True):
            self.store.clear()
            from .users import USER_MARKS_KEY

            # the users' documents left the index with the rest: the next search of each
            # user indexes them again
            self.store.set_meta(USER_MARKS_KEY, "{}")
            return self.sync(force=True, progress=progress)

    # ------------------------------------------------------------------ search

    def search(
        self,
        query: str,
        k: int | None = None,
        session: Session | None = None,
        *,
        min_score: float | None = None,
        channels: str = "hybrid",
        sync: bool = True,
        track: bool = True,
        history: bool = False,
    ) -> SearchResults:
        """Search memory. ``session`` decides visibility: only a main, private session (or
        ``None``, the owner calling the API) sees MEMORY.md and other private files.

        :param k: results wanted (default ``memory.max_results``).
        :param min_score: drop hits below this fused score (default ``memory.min_score``).
        :param channels: ``"hybrid"`` (default), ``"keyword"`` or ``"vector"``.
        :param track: count the returned hits for recall tracking (``memory.recall_tracking``).
        :param history: also return superseded entries, ranked below their successors.
        """
        from .search import search

        return search(self, query, k, session, min_score=min_score, channels=channels, sync=sync,
                      track=track, history=history)

    # ------------------------------------------------------------------ get

    def get(
        self,
        path: str,
        from_line: int | None = None,
        lines: int | None = None,
        session: Session | None = None,
    ) -> MemoryExcerpt:
        """Read ``lines`` lines of a memory file from ``from_line`` (1-based). ``path`` may
        be a citation (``memory/2026-08-01.md#L3-L7``). Refuses any path outside the memory
        files, and private files in a session that is not private."""
        from .reading import read

        return read(self, path, from_line, lines, session)

    # ------------------------------------------------------------------ writing

    def append_daily(
        self, text: str, *, when: _dt.datetime | None = None, via: str = "memory remember"
    ) -> Path:
        """Append ``- text`` to today's log ``memory/YYYY-MM-DD.md`` (agent time zone),
        creating it with a ``# YYYY-MM-DD`` heading. Atomic against concurrent writers:
        lock, append, fsync. Text that looks like a prompt injection or holds a secret is
        refused and quarantined (``memory.write_safety``, :mod:`soulframe._engine.memory.safety`);
        ``via`` names the caller in that message."""
        from .journal import append_daily

        self.changed()
        return append_daily(self, text, when=when, via=via)

    def remember(self, text: str, *, curated: bool = False, via: str = "memory remember") -> Path:
        """Append to today's log, or with ``curated`` to MEMORY.md (``- text (added
        YYYY-MM-DD)``), the curated long-term memory (seed 003 §5.2), in its ``## Notes``
        section (:mod:`soulframe._engine.memory.curated`)."""
        from .journal import remember

        self.changed()
        return remember(self, text, curated=curated, via=via)

    def append_to(self, relative: str, text: str, *, heading: str) -> Path:
        """Append ``text`` to a workspace file (through ``Workspace.resolve``: no path out of
        the workspace), under the same lock as memory writes; ``heading`` starts a new file.
        No safety check here: callers (consolidation, quarantine release) decide."""
        from .journal import _append_locked

        path = self.agent.workspace.resolve(relative)
        self.changed()
        _append_locked(path, text, heading=heading)
        return path

    def consolidate(self, *, dry_run: bool = False, use_model: bool = True) -> ConsolidationResult:
        """Promote well-recalled daily-log entries into MEMORY.md (a routine a host or the
        heartbeat can call; :func:`soulframe._engine.memory.consolidate.consolidate`)."""
        from .consolidate import consolidate

        self.changed()
        return consolidate(self.agent, dry_run=dry_run, use_model=use_model)

    def save_session(self, messages: Any, *, slug: str | None = None, use_model: bool = True,
                     session: Session | None = None) -> SavedSession:
        """Save a conversation (``[{role, content}, ...]``) — a chat-model summary, or the
        last turns — and index it: a group's in ``memory/``, any other's (``session``
        ``None`` is the owner's main session) as private memory in
        ``sessions/YYYY-MM-DD-<slug>.md`` (:func:`soulframe._engine.memory.sessions.save_session`)."""
        from .sessions import save_session

        self.changed()
        return save_session(self.agent, messages, slug=slug, use_model=use_model, session=session)

    # ------------------------------------------------------------------ status

    def most_recalled(self, limit: int = 10) -> list[RecallStat]:
        """The entries search returned most often that are still in their files, at the
        line each is on now (``memory status --deep``); empty when the store does not count
        recalls."""
        from ..model import TracksRecalls
        from .candidates import still_there

        store = self.store
        if not isinstance(store, TracksRecalls):
            return []
        # rows of edited or deleted entries are skipped: ask for more than will be shown
        return still_there(self.agent, store.recalls(max(limit * 5, 50)), limit)

    def status(self, *, deep: bool = False, sync: bool = False,
               files: list[MemoryFile] | None = None) -> MemoryStatus:
        """Files, chunks, provider, model, dimensions, vector backend, stale files and health.
        ``files``: the walk :meth:`files` just made, so a caller that shows the files as
        well (the web inspector) walks the tree once, not twice."""
        from .status import status

        return status(self, deep=deep, sync=sync, files=files)


def _is_private_dir(workspace: Any, name: str) -> bool:
    """Whether ``name`` is a directory inside the workspace (a link out of it is never
    indexed; writing there is refused with the reason)."""
    from ..model import PathEscapeError

    if not (workspace.root / name).is_dir():
        return False
    try:
        workspace.resolve(name)
    except PathEscapeError:
        return False
    return True
