"""Which files are memory (seed 000 §14 "Memory Paths"), and reading them safely.

* ``MEMORY.md`` (or ``memory.md`` when there is no ``MEMORY.md``) at the workspace root —
  curated, **private**: only a main, private session ever sees it;
* ``memory/**/*.md``, recursively — the daily logs and other notes, visible to every
  session (seed 003 §1.2). Hidden files and directories, ``.git`` and ``node_modules``
  are skipped;
* ``memory.extra_paths`` — more files or directories inside the workspace; private, since
  soulframe cannot know who they are meant for.

Privacy follows the file reached, not the path used. A file reached through a symlink (the
file itself or any directory on the way) is judged by its real path: it is kept only when
that real path is inside the workspace and is itself a memory path, and it is private when
either path is. A public ``memory/`` path never reaches a file outside ``memory/``, so
``memory/x.md -> ../SOUL.md``, ``memory/all -> ..`` (MEMORY.md, USER.md through a directory
link) and ``-> /etc/passwd`` never enter the index. Symlink loops, dangling links and file
names that are not valid UTF-8 are skipped too. Every skipped file is named in
:attr:`Discovery.skipped`, which ``memory index`` prints and ``soulframe doctor`` reports.

A hard link is the same file under another name, so privacy follows the inode (device and
inode number, from the ``lstat`` discovery takes anyway). A public file in ``memory/`` whose
inode is also a root file (USER.md, MEMORY.md, SOUL.md ...) is skipped. One with more names
(``st_nlink``) than discovery saw inside the public tree — ``ln ~/secret.md memory/x.md``, a
link of a private entity page or of a hidden file — has a name soulframe cannot see, so
nothing says it is meant to be shared: it is kept **private** (only a main session sees it)
and named once in :attr:`Discovery.narrowed`. A file whose every name is public memory
stays public.

:func:`is_memory_path` and :func:`confine_memory_path` are the one definition of these paths:
the index, ``memory_get`` and the memory flush's file tools all check through them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

import attrs

from ..model import ConfigError, PathEscapeError, SoulframeError, WorkspaceLike

SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".hg", ".svn"})
_DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})")


@attrs.frozen
class MemoryFile:
    path: str  # workspace-relative, forward slashes
    #: the absolute path as a string (a :class:`Path` per file costs more than its lstat)
    location: str = attrs.field(converter=str)
    private: bool
    day: str | None = None
    #: the file reached, as discovery saw it (a sync needs no second ``stat``)
    stat: os.stat_result | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def abspath(self) -> Path:
        return Path(self.location)


def day_of(path: str) -> str | None:
    """``2026-08-01`` for ``memory/2026-08-01.md`` (or ``memory/2026-08-01-trip.md``)."""
    m = _DAY.match(path.rpartition("/")[2])
    if not m:
        return None
    y, mo, d = (int(x) for x in m.group(1).split("-"))
    if not (1 <= mo <= 12 and 1 <= d <= 31):
        return None
    return m.group(1)


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


#: the curated long-term memory; ``memory.md`` is accepted as its lower-case spelling. This
#: module is the one place that knows the memory files' names and rules: the prompt, the
#: sections, the tools and the checks ask it.
CURATED: tuple[str, ...] = ("MEMORY.md", "memory.md")
#: a daily log, ``memory/YYYY-MM-DD.md``: the dated journal a prompt shows today's and
#: yesterday's of
DAILY_LOG = re.compile(r"^memory/(\d{4}-\d{2}-\d{2})\.md$")
#: the workspace folder a private session's capture is kept in: private memory (indexed
#: like ``memory.extra_paths``), out of ``memory/``, which every session searches
PRIVATE_DIR = "sessions"
#: the entity pages consolidation writes: private memory too
ENTITY_DIR = "bank/entities"


def is_curated(name: str) -> bool:
    """``MEMORY.md`` (or ``memory.md``), the curated long-term memory."""
    return name in CURATED


def is_memory_context_file(name: str) -> bool:
    """Whether a context file is private memory: the curated file or a daily log."""
    return name in CURATED or DAILY_LOG.match(name) is not None


def is_memory_path(rel: str) -> bool:
    """Whether a workspace-relative path (forward slashes) names a standard memory file by
    its name alone: ``MEMORY.md``/``memory.md`` or ``memory/**/*.md``, hidden files and
    skipped directories (``.git``, ``node_modules`` ...) excepted."""
    if rel in CURATED:
        return True
    parts = PurePosixPath(rel).parts
    if len(parts) >= 2 and parts[0] == "memory" and rel.lower().endswith(".md"):
        return not any(_is_hidden(p) or p in SKIP_DIRS for p in parts[:-1]) and not _is_hidden(parts[-1])
    return False


class MemoryPathError(SoulframeError):
    """A path that is not a memory file, or leaves the workspace (the message says which)."""


def without_dot_slash(path: str) -> str:
    """``path`` without a leading ``./`` (``././x`` and ``.//x`` too: relative all the same)."""
    while path.startswith("./"):
        path = path[2:].lstrip("/")
    return path


def confine_memory_path(workspace: WorkspaceLike, raw: object) -> tuple[str, str, Path]:
    """Check a path a model or a user gave for a memory file, which may not exist yet.

    Checked twice: as written (no absolute paths, no ``..``, no backslashes, a memory path)
    and as it really resolves (``memory/x.md`` being a symlink to ``SOUL.md`` or out of the
    workspace is refused too). Returns (relative path as written, relative path it resolves
    to, absolute path); raises :class:`MemoryPathError`.
    """
    if not isinstance(raw, str) or not raw.strip():
        raise MemoryPathError("path is required (e.g. memory/2026-01-31.md or MEMORY.md)")
    text = raw.strip()
    if "\\" in text:
        raise MemoryPathError(f"{text}: use forward slashes")
    text = without_dot_slash(text)
    try:
        full = workspace.resolve(text)
    except PathEscapeError as exc:
        raise MemoryPathError(f"{exc}; only MEMORY.md and memory/*.md can be used here") from None
    relative = PurePosixPath(text).as_posix()
    if not is_memory_path(relative):
        raise MemoryPathError(
            f"{relative}: not a memory file; only MEMORY.md and memory/**/*.md can be read or written here"
        )
    real_relative = full.resolve().relative_to(workspace.root).as_posix()
    if not is_memory_path(real_relative):
        raise MemoryPathError(f"{relative}: is a link to {real_relative}, which is not a memory file")
    return relative, real_relative, full


class Discovery:
    """Finds the memory files of one workspace.

    Cost: one ``lstat`` per memory file (its result travels in :attr:`MemoryFile.stat`, so a
    sync needs no second one), one ``stat`` and one listing per directory, and a
    ``resolve()`` only for what can lead elsewhere: each directory reached through a link,
    each file that is a symlink. A plain file in a plain directory is where its path says.
    """

    def __init__(self, workspace: WorkspaceLike, extra_paths: Sequence[str] = ()) -> None:
        self.workspace = workspace
        self.root = workspace.root
        #: (path, why) for each file or directory link :meth:`files` skipped
        self.skipped: list[tuple[str, str]] = []
        #: (path, why) for each file kept but made private (a hard link with unknown names)
        self.narrowed: list[tuple[str, str]] = []
        #: every directory :meth:`files` listed -> its mtime (ns) just before the listing:
        #: a file created, deleted or renamed in it changes that (see :mod:`.freshness`)
        self.dirs: dict[str, int] = {}
        self._root_inodes: dict[tuple[int, int], str] | None = None
        self._mem_real: Path | None | bool = False  # False: not computed yet
        #: (dev, inode) of each hard-linked public file -> the real paths naming it in the
        #: public tree (files with st_nlink > 1 only)
        self._public_names: dict[tuple[int, int], set[str]] = {}
        #: whether the last :meth:`files` met a symlink or a hard link: a change to a file
        #: then reaches the index under another name too, so a sync of the paths a watcher
        #: named is not enough (:func:`~soulframe._engine.memory.sync.named_files`)
        self.links = False
        self.extra: list[tuple[str, Path]] = []
        for raw in extra_paths:
            try:
                full = workspace.resolve(str(raw))
            except PathEscapeError as exc:
                raise ConfigError(f"memory.extra_paths: {exc}") from exc
            self.extra.append((str(raw).strip("/"), full))

    def root_memory(self) -> Path | None:
        for name in CURATED:
            p = self.root / name
            if p.is_file() and self._inside(p):
                return p
        return None

    def _inside(self, path: Path) -> bool:
        real = real_path(path)
        return real is not None and (real == self.root or self.root in real.parents)

    def is_memory_path(self, rel: str) -> bool:
        """Whether a workspace-relative path names a memory file (by its name alone):
        a standard one (:func:`is_memory_path`) or one under ``memory.extra_paths``."""
        if is_memory_path(rel):
            return True
        for extra, full in self.extra:
            if rel == extra or rel.startswith(extra + "/"):
                return full.is_file() or rel.lower().endswith(".md")
        return False

    def is_private(self, rel: str) -> bool:
        if rel in CURATED:
            return True
        return not (rel.startswith("memory/") and len(rel) > 7)

    def _skip(self, rel: str, why: str) -> None:
        self.skipped.append((shown(rel), why))

    @property
    def warnings(self) -> list[str]:
        """One line per skipped (or narrowed) file, naming it and why."""
        return ([f"{path}: skipped: {why}" for path, why in self.skipped]
                + [f"{path}: {why}" for path, why in self.narrowed])

    def _classify(self, path: Path, rel: str, real: Path | None = None) -> bool | None:
        """Whether the memory file at ``rel`` is private, or ``None`` when it is not memory
        at all (with a warning naming it, for a file a symlink leads astray). ``real`` is
        its real path when the caller knows it (then nothing is resolved)."""
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:
            self._skip(rel, "the file name is not valid UTF-8; rename it")
            return None
        if real is None:
            real = real_path(path)
        if real is None:
            if not path.is_symlink():
                return None  # vanished meanwhile
            if _is_loop(path):
                self._skip(rel, "a symlink loop; remove the link or point it at a file")
            else:
                self._skip(rel, "a symlink to a file that does not exist")
            return None
        if real != self.root and self.root not in real.parents:
            self._skip(rel, f"reached through a symlink to {real}, outside the workspace")
            return None
        target = self._memory_relative(real)
        if target != rel and not self.is_memory_path(target):
            self._skip(rel, f"reached through a symlink to {target}, which is not a memory file")
            return None
        if not self.is_private(rel) and self.is_private(target):
            # memory/ is public: it must not become a way to read private memory
            self._skip(rel, f"reached through a symlink to {target}, which is private memory; "
                            "a link inside memory/ may only lead to another file in memory/")
            return None
        return self.is_private(rel) or self.is_private(target)

    def _memory_real(self) -> Path | None:
        """The real path of ``memory/`` (resolved once per discovery); ``None`` when it is a
        link to a folder that holds private memory (then files reached through it are
        judged by where they really are)."""
        if self._mem_real is False:
            real = real_path(self.root / "memory")
            if real is not None and self._private_folder(real) is not None:
                real = None
            self._mem_real = real
        return self._mem_real  # type: ignore[return-value]

    def _private_folder(self, real: Path) -> str | None:
        """The private place (saved sessions, entity pages, an extra path, a hidden folder)
        that the directory ``real`` is, lies in or holds, if any: ``memory/`` may be a link
        to a folder of the workspace, never to one that would make private memory public."""
        try:
            parts = real.relative_to(self.root).parts
        except ValueError:
            return None
        if any(_is_hidden(p) for p in parts):
            return "/".join(parts)
        for place in (self.root / PRIVATE_DIR, self.root / ENTITY_DIR, *(full for _, full in self.extra)):
            there = real_path(place) or place
            if there == real or there in real.parents or real in there.parents:
                try:
                    return there.relative_to(self.root).as_posix()
                except ValueError:
                    return str(there)
        return None

    def _memory_relative(self, real: Path) -> str:
        """``real`` as a workspace-relative path; a file under the real ``memory/`` (which
        may itself be a link to a directory inside the workspace) as ``memory/...``."""
        mem = self._memory_real()
        if mem is not None and mem != self.root and mem in real.parents:
            return "memory/" + real.relative_to(mem).as_posix()
        return real.relative_to(self.root).as_posix()

    def privacy(self, rel: str) -> bool | None:
        """Whether the memory file at ``rel`` is private, or ``None`` when privacy-following
        rules refuse it (the reason is the last of :attr:`skipped`): for a reader that names
        one file, as the prompt does for today's daily log."""
        path = self.root / rel
        private = self._classify(path, rel)
        if private is False:
            try:
                st = path.stat()
            except OSError:
                return private
            if st.st_nlink > 1:
                skipped = self.skipped
                self._public_names = {}
                self.skipped = []
                mem = self.root / "memory"
                if mem.is_dir():
                    self._walk(mem, "memory", confine=self._memory_real(), found={})
                self.skipped = skipped
                self.narrowed = []
                return self._judge_hard_link(rel, st)
        return private

    def _judge_hard_link(self, rel: str, st: os.stat_result) -> bool | None:
        """A public memory file whose inode has other names (``st_nlink > 1``). Privacy
        follows the file, and the file is the inode: it stays public only when every one
        of its names is a public memory file. A name that is a root file (USER.md,
        MEMORY.md) skips it; a name soulframe cannot see (outside ``memory/``, outside the
        workspace, a private page) keeps it private: only a main session sees it."""
        twin = self._hard_link_twin(st)
        if twin is not None:
            self._skip(rel, f"a hard link to {twin}, which is not public memory; copy the "
                            "part you mean to share instead")
            return None
        names = self._public_names.get((st.st_dev, st.st_ino), set())
        if len(names) >= st.st_nlink:
            return False
        self.narrowed.append((shown(rel), (
            f"kept private: a hard link with {st.st_nlink - len(names)} other name(s) outside "
            "memory/ (another file, perhaps outside the workspace, shares its content); "
            "copy it into memory/ to make it public memory")))
        return True

    def _hard_link_twin(self, st: os.stat_result) -> str | None:
        """The root file (MEMORY.md, USER.md, ...) that the file with stat ``st`` is a hard
        link of, if any: a hard link is the same file under another name."""
        if self._root_inodes is None:
            self._root_inodes = {}
            try:
                entries = list(os.scandir(self.root))
            except OSError:
                entries = []
            for entry in entries:
                try:
                    if entry.is_file(follow_symlinks=False):
                        est = entry.stat(follow_symlinks=False)
                        self._root_inodes[(est.st_dev, est.st_ino)] = entry.name
                except OSError:
                    continue
        return self._root_inodes.get((st.st_dev, st.st_ino))

    def _walk(self, top: Path, top_rel: str, *, confine: Path | None,
              found: dict[str, MemoryFile]) -> None:
        """Add the ``*.md`` files under ``top`` to ``found``. A directory symlink whose real
        path leaves ``confine`` (the real ``memory/`` for the public tree) or the workspace,
        loops or dangles is not entered, with one warning naming the link."""
        top_real = real_path(top)
        if top_real is None or (top_real != self.root and self.root not in top_real.parents):
            return
        root = str(self.root)
        seen: set[str] = set()
        stack: list[tuple[Path, str, Path]] = [(top, top_rel, top_real)]
        while stack:
            d, drel, dreal = stack.pop()
            key = str(dreal)
            if key in seen:
                continue
            seen.add(key)
            try:
                self.dirs[str(d)] = os.stat(d).st_mtime_ns
                with os.scandir(d) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:
                continue
            # a directory reached by its own path: each plain file in it is where its path
            # says, so it needs no resolve() and shares the directory's verdict
            prefix = f"{drel}/" if drel else ""
            direct = key == f"{root}/{drel}" if drel else key == root
            private = self.is_private(f"{prefix}x.md")
            subdirs: list[tuple[Path, str, Path]] = []
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                link = True  # unless the entry says otherwise: the careful path
                try:
                    link = entry.is_symlink()
                    is_dir = entry.is_dir() if link else entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False  # a looping link: judged (and named) as a file below
                self.links = self.links or link
                rel = prefix + name
                if is_dir:
                    if name in SKIP_DIRS:
                        continue
                    child = d / name
                    if link:
                        if not self._dir_link_ok(child, confine):
                            continue
                        child_real = real_path(child)
                        if child_real is not None:
                            subdirs.append((child, rel, child_real))
                    else:
                        subdirs.append((child, rel, dreal / name))
                    continue
                if not name.lower().endswith(".md") or rel in found:
                    continue
                if "<" in rel or ">" in rel:
                    # a path is returned to the model as it is (to be read back with
                    # memory_get): it must not be able to pose as a tag of the prompt
                    self._skip(rel, "a path with '<' or '>'; rename it")
                    continue
                if link:
                    path = d / name
                    verdict = self._classify(path, rel)
                    if verdict is None:
                        continue
                    try:
                        st = path.stat()
                    except OSError:
                        continue
                    if not stat.S_ISREG(st.st_mode):
                        continue
                else:
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if not stat.S_ISREG(st.st_mode):
                        continue  # a FIFO or a device named *.md
                    if direct:
                        try:
                            rel.encode("utf-8")
                        except UnicodeEncodeError:
                            self._skip(rel, "the file name is not valid UTF-8; rename it")
                            continue
                        verdict = private
                    else:
                        verdict = self._classify(d / name, rel, dreal / name)
                        if verdict is None:
                            continue
                    if not verdict and st.st_nlink > 1:
                        self._public_names.setdefault((st.st_dev, st.st_ino), set()).add(f"{dreal}/{name}")
                found[rel] = MemoryFile(rel, f"{d}/{name}", verdict,
                                        day_of(rel) if rel.startswith("memory/") else None, st)
            stack.extend(reversed(subdirs))

    def _dir_link_ok(self, link: Path, confine: Path | None) -> bool:
        rel = link.relative_to(self.root).as_posix()
        real = real_path(link)
        fix = (f"remove the link (rm {shown(rel)}) or move the files it should bring into memory/"
               if rel != "memory" else "make memory/ a directory inside the workspace")
        if real is None:
            self._skip(rel, "a directory symlink loop" if _is_loop(link) else
                       "a symlink to a directory that does not exist")
            return False
        if real != self.root and self.root not in real.parents:
            self._skip(rel, f"a symlink to {real}, outside the workspace; {fix}")
            return False
        if rel == "memory" and real != self.root:
            private = self._private_folder(real)
            if private is not None:
                target = real.relative_to(self.root).as_posix()
                self._skip(rel, f"a symlink to {target}, which is or holds private memory "
                                f"({private}); files reached through it would become public "
                                f"memory; {fix}")
                return False
        if confine is not None and real != confine and confine not in real.parents:
            target = real.relative_to(self.root).as_posix() or "."
            where = "the workspace root" if real == self.root else target
            self._skip(rel, f"a symlink to {where}, outside memory/: files reached through it "
                            f"would become public memory; {fix}")
            return False
        return True

    def files(self) -> list[MemoryFile]:
        """The memory files, each once; :attr:`warnings` names every file skipped."""
        self.skipped = []
        self.narrowed = []
        self.dirs = {}
        self._root_inodes = None
        self._mem_real = False
        self._public_names = {}
        self.links = False
        out: dict[str, MemoryFile] = {}

        def add(path: Path) -> None:
            try:
                rel = path.relative_to(self.root).as_posix()
            except ValueError:
                return
            if rel in out:
                return
            self.links = self.links or path.is_symlink()
            private = self._classify(path, rel)
            if private is None:
                return
            try:
                st = path.stat()
            except OSError:
                return
            if stat.S_ISREG(st.st_mode):
                out[rel] = MemoryFile(rel, path, private, day_of(rel) if rel.startswith("memory/") else None, st)

        with contextlib.suppress(OSError):
            self.dirs[str(self.root)] = os.stat(self.root).st_mtime_ns  # MEMORY.md, memory/ appear here
        top = self.root_memory()
        if top is not None:
            add(top)
        mem = self.root / "memory"
        self.links = self.links or mem.is_symlink()
        if mem.is_symlink() and not self._dir_link_ok(mem, None):
            pass  # named in the warnings: a memory/ that loops, dangles or leaves the workspace
        elif mem.is_dir() and self._inside(mem):
            self._walk(mem, "memory", confine=self._memory_real(), found=out)
        for _raw, full in self.extra:
            if full.is_dir():
                top_rel = full.relative_to(self.root).as_posix()
                self._walk(full, "" if top_rel == "." else top_rel, confine=None, found=out)
            elif full.is_file():
                add(full)
        for rel, mf in list(out.items()):
            if mf.stat is not None and mf.stat.st_nlink > 1:
                self.links = True
            if not mf.private and mf.stat is not None and mf.stat.st_nlink > 1:
                verdict = self._judge_hard_link(rel, mf.stat)
                if verdict is None:
                    del out[rel]
                elif verdict:
                    out[rel] = attrs.evolve(mf, private=True)
        return sorted(out.values(), key=lambda f: f.path)


def real_path(path: Path) -> Path | None:
    """The real path of ``path``, or ``None`` when a symlink on the way dangles or loops
    (``Path.resolve`` raises ``RuntimeError`` for a loop, which no caller expects)."""
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None


def _is_loop(path: Path) -> bool:
    try:
        path.resolve(strict=True)
    except RuntimeError:
        return True
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def shown(rel: str) -> str:
    """A path as it can be printed on one line: bytes that are not UTF-8 as ``\\xNN``
    escapes, control characters (a newline in a file name) as ``\\n``-style escapes."""
    text = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
