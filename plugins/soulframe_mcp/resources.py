"""The workspace as MCP resources: the context files a session's prompt shows
(``soulframe://workspace/SOUL.md``) and the memory files its memory tools may read
(``memory://MEMORY.md``, ``memory://memory/2026-11-26.md``), each with its size and
modification time, listed and read under the same session rules as the tools.

Privacy follows the file reached, not the path used. A served name is judged by the file it
reaches (device and inode, symlinks followed): in a session that may not see MEMORY.md,
USER.md or private memory, no other name reaching one of those files is served — not a
symlink (``SOUL.md -> MEMORY.md``) and not a hard link (``ln USER.md AGENTS.md``). A public
memory file with more than one hard link is not served to such a session either: its other
name may be anywhere on the disk, so nothing says the file is meant to be public. The check
is made again on the open file when it is read, so a file swapped between the listing and
the read is judged as what is read.

A context file is the one the session's prompt shows: for a server started with ``--user``
(and in managed mode), the copy the prompt takes from the store, in place of the workspace's
file of that name (:meth:`ResourceView._own`).
"""

from __future__ import annotations

import datetime as _dt
import os
import stat as _stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

import attrs
from soulframe import PathEscapeError, Session
from soulframe.memorykit import CURATED

if TYPE_CHECKING:
    from soulframe import AgentLike, ContextFile
    from soulframe.memorykit import MemoryFile

CONTEXT_PREFIX = "soulframe://workspace/"
MEMORY_PREFIX = "memory://"
CONTEXT_TEMPLATE = CONTEXT_PREFIX + "{name}"
MEMORY_TEMPLATE = MEMORY_PREFIX + "{path}"
CONTEXT_FILES = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md",
                 "BOOTSTRAP.md", "MEMORY.md")
#: root files whose content is never public: judged by identity wherever else they appear
PRIVATE_ROOT = (*CURATED, "USER.md")
#: most bytes one read returns (a runaway log must not fill the client's context)
MAX_READ_BYTES = 1_000_000

Identity = tuple[int, int]


class NotServed(LookupError):
    """The URI names nothing this server serves to its session."""


@attrs.frozen
class Served:
    uri: str
    rel: str  # workspace-relative path as named
    kind: str  # "context" or "memory"
    size: int
    #: None for a copy kept in the store, which records no modification time
    mtime_ns: int | None
    #: the content of a copy kept in the store (None: a file, read when asked for)
    text: str | None = None

    @property
    def signature(self) -> tuple[int, int]:
        """What changes when the resource does (for the change notifications)."""
        return (self.size, self.mtime_ns if self.mtime_ns is not None else hash(self.text))

    @property
    def last_modified(self) -> str | None:
        if self.mtime_ns is None:
            return None
        when = _dt.datetime.fromtimestamp(self.mtime_ns / 1e9, tz=_dt.UTC)
        return when.isoformat(timespec="seconds").replace("+00:00", "Z")


def memory_uri(rel: str) -> str:
    return MEMORY_PREFIX + quote(rel, safe="/")


class ResourceView:
    """What one server (one session kind and user) serves as resources."""

    def __init__(self, agent: AgentLike, session: Session) -> None:
        from soulframe.memorykit import sees_owner_memory

        self.agent = agent
        self.session = session
        #: MEMORY.md, USER.md and private memory are the owner's: a private session with no
        #: user or an owner's (a --user server for anyone else gets none of them)
        self.owner = sees_owner_memory(agent, session)
        #: whether the last listing met a symlink or hard link among the memory files
        #: (None: no listing yet): then a change to one file changes another name's too
        self._links: bool | None = None

    def _visible(self, name: str) -> bool:
        """Whether the session may see the workspace's file ``name``."""
        from soulframe.kit import visible_in_session

        if name in PRIVATE_ROOT and not self.owner:
            return False
        return visible_in_session(name, self.session, self.agent.config)

    def _own(self) -> dict[str, ContextFile]:
        """The context files this session's prompt takes from elsewhere than the workspace
        on disk (a user's own copies, kept in the store; in managed mode the agent's files
        in its database), by name. Each is served in place of the workspace's file of that
        name, as the prompt shows it; an empty one hides it (a user who finished
        BOOTSTRAP.md). Without them a --user server served the workspace's SOUL.md while
        its prompt showed the user's own, and not the user's own USER.md at all."""
        from soulframe.memorykit import effective_user, is_managed

        if not effective_user(self.agent, self.session.user_id) and not is_managed(self.agent):
            return {}  # the owner's standalone agent: every context file is the workspace's
        from soulframe.kit import load_merged

        return {f.name: f for f in load_merged(self.agent, self.session)
                if f.name in CONTEXT_FILES and f.source != "workspace" and f.kind == "file"}

    def _shows(self, f: ContextFile) -> bool:
        """The session filter, as the prompt applies it to ``f``: the owner's USER.md and
        MEMORY.md only to the owner, whatever their source; a user's own copies to that user."""
        from soulframe.kit import visible_in_session

        if f.name in PRIVATE_ROOT and not self.owner and f.scope != "user":
            return False
        return visible_in_session(f.name, self.session, self.agent.config)

    # ------------------------------------------------------------------ judging files

    def _hidden(self, files: list[MemoryFile] | None = None) -> set[Identity]:
        """Identities of the files this session must not see, under whatever name
        (``files``: the memory files, when the caller has them already)."""
        root = self.agent.workspace.root
        names = [n for n in (*CONTEXT_FILES, *PRIVATE_ROOT) if not self._visible(n)]
        hidden = {ident for n in names if (ident := _identity(root / n)) is not None}
        if not self.owner and self._memory_on():
            hidden |= {ident for f in (self._memory_files() if files is None else files) if f.private
                       if (ident := _identity(f.abspath)) is not None}
        return hidden

    def _allowed(self, st: os.stat_result, hidden: set[Identity], *, memory: bool) -> bool:
        if not _stat.S_ISREG(st.st_mode):
            return False
        if self.owner:
            return True
        if (st.st_dev, st.st_ino) in hidden:
            return False
        # a public memory file with another name somewhere: nothing says it is public
        return not (memory and st.st_nlink > 1)

    def _memory_on(self) -> bool:
        return bool(self.agent.config.get("memory.enabled"))

    def _memory_files(self) -> list[MemoryFile]:
        from soulframe.memorykit import Discovery

        extra = list(self.agent.config.get("memory.extra_paths") or ())
        discovery = Discovery(self.agent.workspace, extra)
        found = discovery.files()
        self._links = discovery.links
        return found

    def memory_files_named(self, rels: Iterable[str]) -> dict[str, Served | None] | None:
        """The memory resources at ``rels`` (workspace-relative) as served now, by URI
        (None: not served, a file deleted or never memory), for the change feed to compare
        without listing 20,000 files; or None when only a whole listing can tell: a
        session that is not the owner's (what it may see depends on the other files), a
        context file or a file at the root (MEMORY.md and its second spelling), a link, a
        last listing that met links."""
        if not self.owner or self._links is not False or not self._memory_on():
            return None
        root = self.agent.workspace.root
        out: dict[str, Served | None] = {}
        for rel in rels:
            if "/" not in rel or not rel.startswith("memory/") or (root / rel).is_symlink():
                if rel.lower().endswith(".md") or rel.startswith("memory/"):
                    return None
                continue  # not a resource: an extra path's non-Markdown file is listed again below
            out[memory_uri(rel)] = self._one_memory_file(rel, set())
        return out

    # ------------------------------------------------------------------ listing

    def served(self) -> list[Served]:
        """Everything this session may list: context files first, then memory files."""
        files = self._memory_files() if self._memory_on() else []
        hidden = self._hidden(files)
        return [*self._context(hidden, self._own()), *self._memory(hidden, files)]

    def _context(self, hidden: set[Identity], own: dict[str, ContextFile]) -> Iterable[Served]:
        for name in CONTEXT_FILES:
            if name in own:  # never the workspace's file under this name: the prompt shows this one
                f = own[name]
                if f.content.strip() and self._shows(f):
                    yield Served(CONTEXT_PREFIX + name, name, "context", len(f.content.encode()), None, f.content)
                continue
            if not self._visible(name):
                continue
            st = self._stat(name)
            if st is not None and self._allowed(st, hidden, memory=False):
                yield Served(CONTEXT_PREFIX + name, name, "context", st.st_size, st.st_mtime_ns)

    def _memory(self, hidden: set[Identity], files: list[MemoryFile]) -> Iterable[Served]:
        for f in files:
            if f.private and not self.owner:
                continue
            try:
                st = os.stat(f.abspath)
            except OSError:
                continue
            if self._allowed(st, hidden, memory=True):
                yield Served(memory_uri(f.path), f.path, "memory", st.st_size, st.st_mtime_ns)

    def _stat(self, rel: str) -> os.stat_result | None:
        try:
            return os.stat(self.agent.workspace.resolve(rel))
        except (PathEscapeError, OSError, RuntimeError):  # outside, missing, a loop
            return None

    # ------------------------------------------------------------------ reading

    def find(self, uri: str, hidden: set[Identity] | None = None) -> Served:
        """The served resource ``uri`` names; :class:`NotServed` otherwise."""
        hidden = self._hidden() if hidden is None else hidden
        if uri.startswith(CONTEXT_PREFIX):
            name = uri[len(CONTEXT_PREFIX):]
            if name in CONTEXT_FILES:
                for s in self._context(hidden, self._own()):
                    if s.rel == name:
                        return s
        elif uri.startswith(MEMORY_PREFIX) and self._memory_on():
            rel = unquote(uri[len(MEMORY_PREFIX):])
            served = self._one_memory_file(rel, hidden)
            if served is not None:
                return served
        raise NotServed(f"{uri}: not a served resource; resources/list and resources/templates/list "
                        "show what is available")

    def _one_memory_file(self, rel: str, hidden: set[Identity]) -> Served | None:
        from soulframe.memorykit import Discovery

        discovery = Discovery(self.agent.workspace, list(self.agent.config.get("memory.extra_paths") or ()))
        try:
            self.agent.workspace.resolve(rel)
        except PathEscapeError:
            return None
        if not discovery.is_memory_path(rel):
            return None
        private = discovery.privacy(rel)
        if private is None or (private and not self.owner):
            return None
        st = self._stat(rel)
        if st is None or not self._allowed(st, hidden, memory=True):
            return None
        return Served(memory_uri(rel), rel, "memory", st.st_size, st.st_mtime_ns)

    def read(self, uri: str) -> tuple[Served, str]:
        """The resource's text. The file is judged again as opened: a name swapped for a
        link to a private file after :meth:`find` is refused, not read."""
        hidden = self._hidden()
        served = self.find(uri, hidden)
        if served.text is not None:  # a copy in the store, judged as the prompt shows it
            data = served.text.encode()[:MAX_READ_BYTES + 1]
        else:
            data = self._read_file(uri, served, hidden)
        text = data[:MAX_READ_BYTES].decode("utf-8", errors="replace")
        if len(data) > MAX_READ_BYTES:
            text += f"\n[… cut at {MAX_READ_BYTES:,} bytes; read the rest with memory_get]\n"
        if served.kind == "memory":
            from soulframe.kit import neutralise

            # as memory_get returns it: no wrapper tag or boundary marker survives
            text = neutralise(text)
        from soulframe.kit import mask_for_model

        # on its way to a model: secrets masked unless memory.mask_secrets = false
        return served, mask_for_model(text, self.agent.config)

    def _read_file(self, uri: str, served: Served, hidden: set[Identity]) -> bytes:
        path = self.agent.workspace.resolve(served.rel)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NONBLOCK", 0))
        try:
            st = os.fstat(fd)
            if not self._allowed(st, hidden, memory=served.kind == "memory"):
                raise NotServed(f"{uri}: not a served resource; resources/list shows what is available")
            with os.fdopen(os.dup(fd), "rb") as fh:
                return fh.read(MAX_READ_BYTES + 1)
        finally:
            os.close(fd)


def _identity(path: Path) -> Identity | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)
