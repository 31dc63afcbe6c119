"""Skills: discovery over tiers, limits, inline vs search mode, BM25 + hybrid search, hot
reload (seed 000 §8–13, seed 001 §4).

``agent.skills`` is a :class:`SkillSet`. Plugins offer skill roots through
``register_skill_sources(agent)``; the default ``soulframe_skills`` plugin offers the five
tiers (workspace ``skills/``, workspace ``.agents/skills/``, ``skills.personal_dir``,
``skills.global_dir`` + ``skills.extra_dirs``, the built-in skills). For a name found in
several tiers the lowest tier number wins and records what it shadowed.

Freshness. The loaded skills are a snapshot with a version. A watcher (:meth:`SkillSet.watch`)
bumps the version when a SKILL.md changes, so a prompt build with a watcher running costs
one integer comparison. Without a watcher every access stats the roots, skill directories
and SKILL.md files it loaded from (about 1.5 µs each) so a CLI or library user still sees
edits at once; only the files that changed are parsed again. Past 1,000 paths (about 500
skills), where that check costs milliseconds, it runs at most every ten times its cost
(capped at one second): an edit still shows within a second. Long-running hosts should call
:meth:`SkillSet.watch`.

Nothing here imports numpy or watchdog at module level: a prompt build needs
none of them. The prompt block lives in :mod:`soulframe._engine.skills.prompt`, search in
:mod:`soulframe._engine.skills.search`, watching in :mod:`soulframe._engine.skills.watch`; what stays here,
over the usual module size, is one responsibility: the versioned snapshot of the skills and
keeping it fresh (load, staleness, reload, per-user views, reload notices).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import unicodedata
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from .. import plugins as _plugins
from ..model import Skill, SkillSource, SoulframeError
from .loader import (
    FileSig,
    SkillFileCache,
    SkillProblem,
    SkillWarning,
    is_racy,
    name_problem,
    read_skill,
    scan_root,
    sig_of,
)
from .prompt import BlockCache, SkillMode, choose_mode

if TYPE_CHECKING:
    from pathlib import Path

    from ..model import AgentLike, PromptContext, Session, SkillHit
    from .search import SkillSearch
    from .watch import SkillWatcher

log = logging.getLogger("soulframe.skills")


__all__ = [
    "SkillMode",
    "SkillProblem",
    "SkillReload",
    "SkillSet",
    "SkillWarning",
    "Snapshot",
    "choose_mode",
]


@attrs.frozen
class SkillReload:
    """What a hot reload changed (passed to :meth:`SkillSet.watch` listeners)."""

    version: int
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


@attrs.frozen
class Snapshot:
    """The skills as loaded at one version: the winners (sorted by name), what each one
    shadowed, and every problem found."""

    version: int
    skills: tuple[Skill, ...]
    by_name: Mapping[str, Skill]
    shadowed: Mapping[str, tuple[Skill, ...]]
    problems: tuple[SkillProblem, ...]
    sources: tuple[SkillSource, ...]
    #: path -> stat signature at load time, for the no-watcher staleness check
    watched: tuple[tuple[str, FileSig | None], ...]
    #: (source name, version()) of load-backed sources that report a version
    source_versions: tuple[tuple[str, object], ...]
    #: a file changed so recently that a second write might not change its signature
    racy: bool = False


class SkillSet:
    """The skills of one agent. Thread-safe; loads lazily; reloads when stale.

    >>> agent.skills.names()                         # doctest: +SKIP
    ['heartbeat-checklist', 'memory-maintenance', 'write-a-skill']
    >>> agent.skills.search("tidy up my daily notes")[0].name   # doctest: +SKIP
    'memory-maintenance'
    """

    def __init__(self, agent: AgentLike, user_id: str | None = None) -> None:
        self.agent = agent
        self.config = agent.config
        #: the user whose view this is (see :meth:`for_user`); None: the agent's own view
        self.user_id = user_id
        self._views: dict[str, SkillSet] = {}
        self._lock = threading.RLock()
        #: bumped by the watcher and by reload(); a snapshot of another version is stale
        self._generation = 0
        self._snap: Snapshot | None = None
        self._files = SkillFileCache()
        self._warned: set[str] = set()
        self._watcher: SkillWatcher | None = None
        self._listeners: list[Callable[[SkillReload], None]] = []
        #: the rendered prompt block per version and mode (:mod:`.prompt`)
        self.blocks = BlockCache()
        self._searcher: SkillSearch | None = None
        self._next_disk_check = 0.0

    # ------------------------------------------------------------------ loading

    def sources(self) -> list[SkillSource]:
        """Every source plugins offer, highest tier (lowest number) first; within a tier,
        in registration order."""
        found = []
        for plugin, source in _plugins.collect(self.agent.pm, "register_skill_sources", agent=self.agent):
            if isinstance(source, SkillSource):
                found.append(source)
            else:
                _plugins.plugin_failed(self.agent.pm, plugin, "register_skill_sources",
                                       f"returned a {type(source).__name__}, expected SkillSource objects")
        replaced = {s.tier for s in found if s.replaces_filesystem_tier}
        if replaced:  # managed mode: the store's tier instead of the directory, not beside it
            found = [s for s in found if s.replaces_filesystem_tier or s.root is None or s.tier not in replaced]
        return sorted(found, key=lambda s: s.tier)  # stable: registration order within a tier

    def for_user(self, user_id: str | None) -> SkillSet:
        """The skills as ``user_id``'s sessions see them: with the skills private to that user
        or granted to them (a source's ``load_user``, managed mode) instead of the agent-level
        view. The same set when no source is per-user, or for no user. Views are kept (one
        per user) so their snapshots and search indexes are reused."""
        if not user_id or self.user_id is not None:
            return self
        if not any(s.load_user is not None for s in self.snapshot().sources):
            return self
        with self._lock:
            view = self._views.get(user_id)
            if view is None:
                if len(self._views) >= 256:  # bounded: a busy server meets many users
                    self._views.pop(next(iter(self._views)))
                view = self._views[user_id] = SkillSet(self.agent, user_id)
            return view

    def for_session(self, session: Session) -> SkillSet:
        """:meth:`for_user` for the session's user (the owner of a standalone workspace is
        the agent itself, as for per-user files)."""
        from ..agentstore import effective_user

        user = session.user_id
        return self.for_user(effective_user(self.agent, user) if user else None)

    def snapshot(self) -> Snapshot:
        """The current skills, reloaded first if anything changed."""
        snap = self._snap
        if snap is not None and snap.version == self._generation and not self._stale(snap):
            return snap
        with self._lock:
            snap = self._snap
            if snap is not None and snap.version == self._generation and not self._stale(snap):
                return snap
            if snap is not None and snap.version == self._generation:
                self._generation += 1  # changed on disk, found without a watcher
            return self._load()

    def _stale(self, snap: Snapshot) -> bool:
        watcher = self._watcher
        if snap.source_versions and any(
            _source_version(s) != v
            for s, (_, v) in zip(
                (s for s in snap.sources if s.load is not None and s.version is not None),
                snap.source_versions,
                strict=False,
            )
        ):
            return True
        if watcher is not None and watcher.complete and watcher.running:
            return False
        if snap.racy:
            return True
        now = time.monotonic()
        if now < self._next_disk_check:
            return False
        for path, sig in snap.watched:
            if sig_of(path) != sig:
                return True
        # a large tree (thousands of skills, a check of several ms): look again only after
        # about ten times what a look costs (~1.5 µs a path), at most a second, so checking
        # takes about a tenth of the time and an edit still shows within a second. Counted
        # from the number of paths, not timed, so it is the same on every run.
        n = len(snap.watched)
        self._next_disk_check = now + min(n * 15e-6, 1.0) if n > _THROTTLE_ABOVE_PATHS else 0.0
        return False

    def _load(self) -> Snapshot:
        version = self._generation
        started = time.time_ns()
        sources = self.sources()
        memo = self._files.memo
        if memo is None:  # front matter parsed by earlier processes (see frontcache)
            from .frontcache import FILE_NAME, FrontMatterMemo

            try:
                where: Path | None = self.agent.state_dir / FILE_NAME
            except OSError:  # a state dir that cannot be created: parse, as without the memo
                where = None
            memo = self._files.memo = FrontMatterMemo(where)
        max_bytes = int(self.config.get("skills.max_skill_file_bytes"))
        winners: dict[str, Skill] = {}
        shadowed: dict[str, list[Skill]] = {}
        problems: list[SkillProblem] = []
        watched: dict[str, FileSig | None] = {}
        source_versions: list[tuple[str, object]] = []
        seen_files: list[str] = []
        for source in sources:
            found: Sequence[Skill]
            if source.load is not None:
                if source.version is not None:
                    source_versions.append((source.name, _source_version(source)))
                load = source.load
                if self.user_id is not None and source.load_user is not None:
                    load = functools.partial(source.load_user, self.user_id)
                try:
                    found = self._checked(source, load(), problems)
                except Exception as exc:  # a broken source must not hide the other tiers
                    problems.append(SkillProblem(
                        f"skill source {source.name!r}", f"failed to load: {type(exc).__name__}: {exc}"))
                    continue
            elif source.root is not None:
                scanned = scan_root(source.root, tier=source.tier, tier_name=source.name,
                                    max_bytes=max_bytes, cache=self._files, within=source.within)
                found = scanned.skills
                problems.extend(scanned.problems)
                watched.update(scanned.watched)
                seen_files.extend(p for p in scanned.watched if p.endswith("SKILL.md"))
            else:
                continue
            for skill in found:
                if skill.name in winners:
                    shadowed.setdefault(skill.name, []).append(skill)
                else:
                    winners[skill.name] = skill
        self._files.forget_missing(seen_files)
        memo.save()
        final = {
            name: attrs.evolve(s, shadowed=tuple(x.tier_name for x in shadowed.get(name, ())))
            for name, s in winners.items()
        }
        ordered = tuple(sorted(final.values(), key=lambda s: (s.name.casefold(), s.name)))
        snap = Snapshot(
            version=version,
            skills=ordered,
            by_name={s.name: s for s in ordered},
            shadowed={k: tuple(v) for k, v in shadowed.items()},
            problems=tuple(problems),
            sources=tuple(sources),
            watched=tuple(watched.items()),
            source_versions=tuple(source_versions),
            racy=any(is_racy(sig, started) for sig in watched.values()),
        )
        previous = self._snap
        self._snap = snap
        self.blocks.clear()
        self._warn(problems)
        if previous is not None and self._listeners:
            self._notify(previous, snap, ())
        return snap

    @staticmethod
    def _checked(source: SkillSource, loaded: Iterable[Skill], problems: list[SkillProblem]) -> list[Skill]:
        """A ``load()``-backed source's skills held to the rules a scanned SKILL.md is: a
        name the prompt, ``skill_read`` and a directory can all carry, and a description on
        one line (a skill with a bad name is left out, with a problem naming the source)."""
        out = []
        for s in loaded:
            name = _nfc(s.name)
            bad = name_problem(name)
            if bad is not None:
                problems.append(SkillProblem(f"skill source {source.name!r}", f"skill name {bad}"))
                continue
            out.append(attrs.evolve(s, name=name, description=" ".join(s.description.split()),
                                    tier=source.tier, tier_name=s.tier_name or source.name))
        return out

    def _warn(self, problems: Sequence[SkillProblem]) -> None:
        current = {str(p) for p in problems}
        for text in sorted(current - self._warned):
            warnings.warn(text, SkillWarning, stacklevel=4)
            # info, not warning: Python's last-resort handler prints unhandled warnings-
            # level records to stderr, so a CLI user would read every problem twice
            log.info("skills: %s", text)
        # a problem fixed and then made again is reported again
        self._warned = current

    def reload(self) -> Snapshot:
        """Drop the snapshot and load again (the watcher does this by itself)."""
        with self._lock:
            self._generation += 1
            return self._load()

    def invalidate(self) -> int:
        """Mark the snapshot stale; the next access reloads. Returns the new version."""
        self._generation += 1
        return self._generation

    # ------------------------------------------------------------------ reading

    @property
    def version(self) -> int:
        """Changes whenever the skills may have changed (reload, watcher event, edit)."""
        return self.snapshot().version

    def all(self) -> list[Skill]:
        """The effective skills (one per name, the highest tier), sorted by name."""
        return list(self.snapshot().skills)

    def names(self) -> list[str]:
        return [s.name for s in self.snapshot().skills]

    def get(self, name: str) -> Skill | None:
        """The effective skill named ``name`` (either Unicode form: names are kept NFC)."""
        return self.snapshot().by_name.get(_nfc(name))

    def shadowed(self, name: str) -> list[Skill]:
        """The lower-tier skills of the same name that ``name`` overrides, highest first."""
        return list(self.snapshot().shadowed.get(_nfc(name), ()))

    @property
    def problems(self) -> list[SkillProblem]:
        """Everything skipped, with the file and the reason."""
        return list(self.snapshot().problems)

    def __len__(self) -> int:
        return len(self.snapshot().skills)

    def __iter__(self) -> Iterator[Skill]:
        return iter(self.snapshot().skills)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _nfc(name) in self.snapshot().by_name

    def read(self, name: str) -> str:
        """The SKILL.md of ``name`` with ``{baseDir}`` replaced by its absolute directory."""
        skill = self.get(name)
        if skill is None:
            raise SoulframeError(_unknown(name, self.names()))
        return read_skill(skill, max_bytes=int(self.config.get("skills.max_skill_file_bytes")))

    # ------------------------------------------------------------------ prompt

    def mode(self, prompt_mode: str | None = None) -> SkillMode:
        """Inline or search for a prompt in ``prompt_mode`` (see :func:`choose_mode`)."""
        return choose_mode(self.snapshot().skills, self.config, prompt_mode)

    def prompt_block(self, ctx: PromptContext) -> str | None:
        """The skills section for ``ctx`` (heading included), or ``None`` when there are
        no skills to show (see :func:`soulframe._engine.skills.prompt.skills_block`)."""
        from .prompt import skills_block

        return skills_block(self, ctx)

    # ------------------------------------------------------------------ search

    def search(self, query: str, k: int | None = None, *, semantic: bool | None = None) -> list[SkillHit]:
        """The best skills for ``query``: BM25 (seed 000 §10), fused 0.3/0.7 with cosine
        similarity when an embedding provider is available (§11). ``k`` defaults to
        ``skills.max_results`` (5). ``semantic=False`` forces keyword-only."""
        return self.searcher.search(query, k, semantic=semantic)

    @property
    def searcher(self) -> SkillSearch:
        """What search keeps between searches (:class:`~soulframe._engine.skills.search.SkillSearch`),
        made at the first search: its module imports numpy, which a prompt build does not need."""
        if self._searcher is None:
            from .search import SkillSearch

            with self._lock:
                if self._searcher is None:
                    self._searcher = SkillSearch(self, self._lock)
        return self._searcher

    # ------------------------------------------------------------------ hot reload

    @property
    def watching(self) -> bool:
        return self._watcher is not None and self._watcher.running

    def watch(self, on_reload: Callable[[SkillReload], None] | None = None) -> SkillWatcher:
        """Start watching every skill root (idempotent); returns the running watcher.

        ``on_reload(SkillReload)`` is called from the watcher's thread after each debounced
        change that added, changed or removed a skill, with the skills already reloaded
        (a file touched without a change reports nothing). Stop with :meth:`stop_watching` (or use
        the watcher as a context manager).
        """
        from .watch import SkillWatcher

        with self._lock:
            if on_reload is not None:
                self._listeners.append(on_reload)
            if self._watcher is not None and self._watcher.running:
                return self._watcher
            snap = self.snapshot()
            roots = [s.root for s in snap.sources if s.root is not None and s.load is None]
            debounce = float(self.config.get("skills.watch_debounce_ms")) / 1000
            self._watcher = SkillWatcher(roots, self._on_change, debounce_s=debounce,
                                         known=dict(snap.watched)).start()
            # anything written between our load and the watches starting is caught here
            self.invalidate()
            return self._watcher

    def stop_watching(self) -> None:
        with self._lock:
            watcher, self._watcher = self._watcher, None
            self._listeners.clear()
        if watcher is not None:
            watcher.stop()

    def _on_change(self, paths: list[str]) -> None:
        with self._lock:
            previous = self._snap
            self._generation += 1
            if not self._listeners or previous is None:
                return
            current = self._load_quietly()
        self._notify(previous, current, tuple(paths))

    def _load_quietly(self) -> Snapshot:
        listeners, self._listeners = self._listeners, []
        try:
            return self._load()
        finally:
            self._listeners = listeners

    def _notify(self, before: Snapshot, after: Snapshot, paths: tuple[str, ...]) -> None:
        old, new = before.by_name, after.by_name
        event = SkillReload(
            version=after.version,
            added=tuple(sorted(set(new) - set(old))),
            removed=tuple(sorted(set(old) - set(new))),
            changed=tuple(sorted(n for n in set(old) & set(new) if _differs(old[n], new[n]))),
            paths=paths,
        )
        if event.empty:  # e.g. a file touched but not changed: nothing to report
            return
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("skills: reload listener failed")

    def close(self) -> None:
        self.stop_watching()

    def __repr__(self) -> str:
        snap = self._snap
        n = "?" if snap is None else len(snap.skills)
        return f"<SkillSet {n} skills version={self._generation} watching={self.watching}>"


_MISSING = object()
#: a no-watcher staleness check over more paths than this is throttled (SkillSet._stale)
_THROTTLE_ABOVE_PATHS = 1000


def _differs(a: Skill, b: Skill) -> bool:
    return (a.digest, a.path, a.tier, a.description) != (b.digest, b.path, b.tier, b.description)


def _source_version(source: SkillSource) -> object:
    try:
        return source.version() if source.version is not None else None
    except Exception as exc:  # an unreachable store: treat as "changed" so it is retried
        return ("error", str(exc), time.monotonic())


def _nfc(name: str) -> str:
    """One spelling per name, as the loader reads them: "café" typed on macOS (NFD) and
    elsewhere (NFC) name the same skill."""
    return unicodedata.normalize("NFC", name) if not name.isascii() else name


def _unknown(name: str, names: Sequence[str]) -> str:
    import difflib

    hint = difflib.get_close_matches(name, list(names), n=1)
    return (
        f"no skill named {name!r}"
        + (f" (did you mean {hint[0]!r}?)" if hint else "")
        + ("; see `soulframe skills list`" if names else "; no skills are installed")
    )
