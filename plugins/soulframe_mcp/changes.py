"""Telling clients that a resource changed, in both protocol revisions' forms.

One watcher (watchdog) follows the workspace. When a context or memory file changes — an
edit, a ``memory remember`` from another process, a file created or deleted — and the
changes have settled (``DEBOUNCE_S``), the served resources are listed again and compared
with the last listing (size, modification time, identity). Each resource that changed is
announced as ``notifications/resources/updated`` and a resource that appeared or went as
``notifications/resources/list_changed``:

* 2026-07-28: on the ``subscriptions/listen`` streams that asked for them (the SDK's
  :class:`~mcp.server.subscriptions.ListenHandler` filters per stream);
* 2025-11-25 over stdio: to the connection that sent ``resources/subscribe`` for that URI,
  and the list change to every connection that subscribed or listed resources. Stateless
  HTTP has no channel back to a 2025-11-25 client, so there it offers no subscription.

The comparison uses the same :class:`~soulframe_mcp.resources.ResourceView` as the listing,
so a client is never told about a file its session may not see.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp.types as types
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
)
from mcp.shared.exceptions import MCPError

# the SDK re-exports this from its mcp_types dependency without listing it in __all__
from mcp.shared.inbound import MODERN_PROTOCOL_VERSIONS  # type: ignore[attr-defined]
from soulframe.kit import directory_identity

from .resources import NotServed, ResourceView

log = logging.getLogger("soulframe.serve")

#: changes settle for this long before clients are told (an editor's save is a burst)
DEBOUNCE_S = 0.25
#: how often a quiet watcher checks that the workspace is still the directory it watches
ROOT_CHECK_S = 1.0
#: more files named by one burst of events than this (a checkout, a restore) are compared
#: by listing everything: it costs about the same
NAMED_MAX = 256
_SKIPPED_PARTS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".hg", ".svn"})

Snapshot = dict[str, tuple[int, int]]


class ChangeFeed:
    """The watcher and the fan-out of one server."""

    def __init__(self, view: ResourceView, *, legacy_push: bool,
                 on_change: Callable[[frozenset[str] | None], None] | None = None) -> None:
        self.view = view
        self.legacy_push = legacy_push
        self.on_change = on_change
        self.bus = InMemorySubscriptionBus()
        self._listen = ListenHandler(self.bus)
        #: connection -> (a session to send through, the URIs it subscribed to)
        self._legacy: dict[int, tuple[Any, set[str]]] = {}
        self._token: Any = None
        self._snapshot: Snapshot = {}
        self._dirty = threading.Event()
        self._last_event = 0.0
        #: the files the events since the last comparison named; None: an event that names
        #: no file alone (a directory created, moved or deleted; the workspace replaced)
        self._changed: set[str] | None = set()
        self._changed_lock = threading.Lock()
        self._stop = threading.Event()
        self._observer: Any = None
        self._worker: threading.Thread | None = None
        self._extra: set[str] = set()
        self._root = ""
        #: (device, inode) of the workspace directory the watch was put on, and how to put
        #: it on the directory the workspace path names now
        self._watched_id: tuple[int, int] | None = None
        self._rewatch: Callable[[], Any] | None = None
        self._starting = threading.Lock()
        self._closing = False
        #: changes announced so far (for the logs and the tests)
        self.announced = 0

    # ------------------------------------------------------------------ lifecycle

    def attach(self) -> None:
        """Called on the server's event loop (its lifespan): changes found from a thread
        are published on this loop."""
        self._token = anyio.lowlevel.current_token()

    def start_watching(self) -> None:
        """Take the first listing and start the watcher (on any thread; ``serve`` does it
        once the first request is answered, so it never delays that answer)."""
        with self._starting:
            if self._stop.is_set() or self._observer is not None:
                return
            self._start_watching()

    def _start_watching(self) -> None:
        self._snapshot = self._take()
        root = self.view.agent.workspace.root
        self._root = str(root).replace("\\", "/").rstrip("/")
        # memory.extra_paths may name files that are not Markdown
        self._extra = {str(root / str(p).strip("/")) for p in self.view.agent.config.get("memory.extra_paths") or ()}
        if not root.is_dir():
            return
        try:
            from watchdog.events import (
                DirCreatedEvent,
                DirDeletedEvent,
                DirMovedEvent,
                FileClosedEvent,
                FileCreatedEvent,
                FileDeletedEvent,
                FileModifiedEvent,
                FileMovedEvent,
                FileSystemEventHandler,
            )
            from watchdog.observers import Observer

            feed = self

            class Handler(FileSystemEventHandler):
                def on_any_event(self, event: Any) -> None:
                    feed._event(event)

            observer: Any = Observer()
            # only the events _event acts on, asked of the kernel: every search opens and
            # reads memory files, and each open and close, reported, cost the server's
            # watcher threads Python work (a fifth of the front's interpreter time with 8
            # clients searching)
            events = [FileCreatedEvent, DirCreatedEvent, FileDeletedEvent, DirDeletedEvent, FileModifiedEvent,
                      FileMovedEvent, DirMovedEvent, FileClosedEvent]
            handler = Handler()
            self._watched_id = directory_identity(root)
            observer.schedule(handler, str(root), recursive=True, event_filter=events)
            self._rewatch = lambda: observer.schedule(handler, str(root), recursive=True, event_filter=events)
            observer.daemon = True
            observer.start()
            self._observer = observer
        except Exception as exc:  # no inotify watches left: serve anyway, without notifications
            log.warning("change notifications are off: %s", exc)
            return
        self._worker = threading.Thread(target=self._run, name="soulframe-mcp-changes", daemon=True)
        self._worker.start()

    def close_streams(self) -> None:
        """End every listen stream, and refuse new ones (on the server's event loop, as it
        starts to stop): a client's stream lasts as long as the server keeps it."""
        self._closing = True
        self._listen.close()

    def stop(self) -> None:
        self._stop.set()
        self._dirty.set()
        self.close_streams()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        if self._worker is not None:
            self._worker.join(timeout=5)

    # ------------------------------------------------------------------ watching

    def _event(self, event: Any) -> None:
        if event.event_type not in ("created", "deleted", "modified", "moved", "closed"):
            return  # opens and reads (ours among them) change nothing
        if event.event_type == "modified" and event.is_directory:
            return
        paths = [str(event.src_path), str(getattr(event, "dest_path", "") or "")]
        if any(self._matters(p, event.is_directory) for p in paths if p):
            with self._changed_lock:
                if event.is_directory:
                    self._changed = None  # its files may send no events of their own
                elif self._changed is not None:
                    self._changed.update(p for p in paths if p)
            self._last_event = time.monotonic()
            self._dirty.set()

    def _matters(self, path: str, is_directory: bool) -> bool:
        # only the parts inside the workspace are judged: a workspace may itself sit in a
        # hidden folder (~/.openclaw/workspace) or under one named venv, and every event in
        # it was ignored
        given = path.replace("\\", "/")
        inside = given[len(self._root) + 1:] if self._root and given.startswith(self._root + "/") else given
        if any(p in _SKIPPED_PARTS or (p.startswith(".") and p not in (".", "..")) for p in inside.split("/")):
            return False
        return is_directory or path.lower().endswith(".md") or path in self._extra

    @property
    def watching(self) -> bool:
        return self._observer is not None and not self._stop.is_set()

    def _run(self) -> None:
        while not self._stop.is_set():
            if not self._dirty.wait(ROOT_CHECK_S):
                self._check_root()
                continue
            if self._stop.is_set():
                return
            while time.monotonic() - self._last_event < DEBOUNCE_S and not self._stop.is_set():
                time.sleep(0.05)
            self._dirty.clear()
            try:
                self._compare()
            except Exception as exc:  # a bad moment on disk; the next change compares again
                log.warning("comparing resources failed: %s: %s", type(exc).__name__, exc)

    def _check_root(self) -> None:
        """A workspace moved away and made again (restored from a backup, cloned afresh)
        leaves the watch on the old directory: no change would reach the clients or the
        index again. Watch the directory the workspace path names now, and compare."""
        now = directory_identity(self.view.agent.workspace.root)
        if now is None or now == self._watched_id or self._rewatch is None or self._stop.is_set():
            return
        self._watched_id = now
        try:
            self._observer.unschedule_all()
            self._rewatch()
        except Exception as exc:  # no inotify watches left: the periodic sync still runs
            log.warning("watching the new workspace directory failed: %s: %s", type(exc).__name__, exc)
            return
        self._last_event = 0.0
        with self._changed_lock:
            self._changed = None
        self._dirty.set()

    def _take(self) -> Snapshot:
        return {s.uri: s.signature for s in self.view.served()}

    def _compare(self) -> None:
        with self._changed_lock:
            changed, self._changed = self._changed, set()
        rels = self._relative(changed)
        named = None if rels is None else self.view.memory_files_named(rels)
        before = self._snapshot
        if named is None:
            now = self._take()
        else:
            # the logs the events named, judged alone: a listing stats every memory file
            now = dict(before)
            for uri, served in named.items():
                if served is None:
                    now.pop(uri, None)
                else:
                    now[uri] = served.signature
        self._snapshot = now
        updated = [uri for uri, sig in now.items() if uri in before and before[uri] != sig]
        listed = set(now) != set(before)
        if self.on_change is not None:
            try:  # the index first: a client told of a change searches next
                self.on_change(None if changed is None else frozenset(changed))
            except Exception as exc:  # the periodic sync and the next change try again
                log.warning("sync after a change failed: %s: %s", type(exc).__name__, exc)
        if not updated and not listed:
            return
        self.announced += len(updated) + int(listed)
        if self._token is not None:
            anyio.from_thread.run(self._publish, updated, listed, token=self._token)

    def _relative(self, paths: set[str] | None) -> list[str] | None:
        """``paths`` relative to the workspace, or None when one is outside it (or there
        are none to go by, or too many)."""
        if paths is None or not self._root or len(paths) > NAMED_MAX:
            return None
        out = []
        for p in paths:
            given = p.replace("\\", "/")
            if not given.startswith(self._root + "/") or "/../" in given or "/./" in given:
                return None
            out.append(given[len(self._root) + 1:])
        return out

    async def _publish(self, updated: list[str], listed: bool) -> None:
        for uri in updated:
            await self.bus.publish(ResourceUpdated(uri))
        if listed:
            await self.bus.publish(ResourcesListChanged())
        for key, (session, uris) in list(self._legacy.items()):
            try:
                for uri in updated:
                    if uri in uris:
                        await session.send_resource_updated(uri)
                if listed:
                    await session.send_resource_list_changed()
            except Exception:  # the client went away: forget it
                self._legacy.pop(key, None)

    async def listen(self, ctx: Any, params: Any) -> Any:
        """``subscriptions/listen`` (2026-07-28): the watcher runs before the stream is
        acknowledged, so no change after the acknowledgement goes unseen."""
        await anyio.to_thread.run_sync(self.start_watching)
        if self._closing:  # no await from here until the stream is registered to be closed
            raise MCPError(code=types.INTERNAL_ERROR, message="the server is stopping")
        wanted = params.notifications.resource_subscriptions if params.notifications is not None else None
        if wanted:
            # acknowledge only what this server serves (a group server: no MEMORY.md), as
            # resources/subscribe refuses the rest
            served = [uri for uri in wanted if self._serves(str(uri))]
            if len(served) != len(wanted):
                notifications = params.notifications.model_copy(update={"resource_subscriptions": served})
                params = params.model_copy(update={"notifications": notifications})
        return await self._listen(ctx, params)

    def _serves(self, uri: str) -> bool:
        try:
            self.view.find(uri)
        except NotServed:
            return False
        return True

    # ------------------------------------------------------------------ 2025-11-25

    def seen(self, session: Any) -> None:
        """A 2025-11-25 connection that listed resources: told when the list changes."""
        if self.legacy_push and session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._legacy.setdefault(_key(session), (session, set()))

    async def subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        self.view.find(str(params.uri))  # NotServed: nothing to subscribe to
        await anyio.to_thread.run_sync(self.start_watching)
        self.seen(ctx.session)
        entry = self._legacy.get(_key(ctx.session))
        if entry is not None:
            entry[1].add(str(params.uri))
        return types.EmptyResult()

    async def unsubscribe(self, ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        entry = self._legacy.get(_key(ctx.session))
        if entry is not None:
            entry[1].discard(str(params.uri))
        return types.EmptyResult()


def _key(session: Any) -> int:
    # one entry per connection: the SDK builds a session object per request over it
    return id(getattr(session, "_connection", session))
