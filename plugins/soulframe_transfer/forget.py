"""``soulframe forget``: memory entries removed from the Markdown and from everything derived
from them.

An entry is a line. :func:`select` finds them (by text, by a search query, a whole file, a
date range); :func:`forget` removes them from the workspace's Markdown, then from every copy
soulframe made: the consolidation diary and undo snapshots (``memory/.diary/``), the
quarantine and the other JSON Lines files in ``state_dir``, the index (a sync replaces the
changed files' chunks; :meth:`~soulframe.ErasingStore.erase` drops chunks, recall
rows and cached embeddings and compacts the store so the bytes are gone), and leaves a
tombstone (a hash) so an import does not bring the entry back. What it cannot reach (the git
history of ``soulframe backup``, the export the entry came from) is said, with the command
that would rewrite it.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shlex
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from soulframe import ErasingStore, SoulframeError
from soulframe.kit import (
    atomic_write,
    caseless,
    fold_diacritics,
    search_spelling,
    search_tokens,
    update_locked,
)
from soulframe.memorykit import (
    DAILY_LOG,
    ENTITY_DIR,
    PRIVATE_DIR,
    SKIP_DIRS,
    Discovery,
    Provenance,
    confine_memory_path,
    day_of,
    parse_provenance,
    query_terms,
    strip_provenance,
    term_coverage,
)

from .tombstones import Tombstones, normalise

if TYPE_CHECKING:
    from soulframe import AgentLike

#: a removed line shorter than this is not searched for elsewhere (``- ok`` would match
#: half the diary); its own line is still removed
MIN_NEEDLE = 8
DIARY_DIR = "memory/.diary"
#: the heading an imported conversation starts each new day with
_DAY_HEADING = re.compile(r"## (\d{4}-\d{2}-\d{2})")


@attrs.frozen
class Entry:
    path: str
    line: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "text": self.text}


@attrs.frozen
class UserEntry:
    """A line of one user's own memory or USER.md, kept in the store (not the workspace)."""

    user: str
    path: str
    line: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"user": self.user, "path": self.path, "line": self.line, "text": self.text}


@attrs.define
class Plan:
    entries: list[Entry] = attrs.field(factory=list)
    #: the matching lines of users' own files: listed, so a dry run shows what goes there too
    user_entries: list[UserEntry] = attrs.field(factory=list)
    #: whole files to remove
    files: list[str] = attrs.field(factory=list)
    #: the text asked for, searched for in every copy besides the entries' own lines
    texts: list[str] = attrs.field(factory=list)
    #: matching lines outside memory (the agent's instructions, identity, skills), left as
    #: they are unless forgetting ``everywhere``
    kept: list[Entry] = attrs.field(factory=list)

    def needles(self) -> list[str]:
        """The texts searched for in every copy, in NFC as the index holds them (a line
        saved decomposed on macOS is found there too)."""
        out: list[str] = [unicodedata.normalize("NFC", t) for t in self.texts if t.strip()]
        for e in self.entries:
            core = unicodedata.normalize("NFC", core_text(e.text))
            if len(core) >= MIN_NEEDLE and core not in out:
                out.append(core)
        return out

    def __bool__(self) -> bool:
        return bool(self.entries or self.files or self.texts)


@attrs.define
class Result:
    entries: int = 0
    files_changed: list[str] = attrs.field(factory=list)
    files_removed: list[str] = attrs.field(factory=list)
    #: place -> how many records or lines went
    scrubbed: dict[str, int] = attrs.field(factory=dict)
    store: dict[str, int] = attrs.field(factory=dict)
    tombstones: int = 0
    unreachable: list[str] = attrs.field(factory=list)

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def core_text(line: str) -> str:
    """A line's entry text: no provenance, no list marker, outer space trimmed."""
    from .tombstones import _MARKER

    return _MARKER.sub("", strip_provenance(line), count=1).strip()


# --------------------------------------------------------------------------- selecting


def markdown_files(agent: AgentLike) -> Iterator[tuple[str, Path]]:
    """Every Markdown file of the workspace (hidden folders and links left out: the diary
    is handled on its own, a link may lead elsewhere)."""
    root = agent.workspace.root
    for dirpath, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(files):
            p = Path(dirpath, name)
            if name.endswith(".md") and not name.startswith(".") and not p.is_symlink():
                yield p.relative_to(root).as_posix(), p


def memory_or_personal(agent: AgentLike) -> Callable[[str], bool]:
    """Whether a workspace path is memory (``MEMORY.md``, ``memory/``, ``memory.extra_paths``,
    saved sessions, entity pages) or the owner's ``USER.md``: what forget edits by default.
    The agent's instructions and identity (``AGENTS.md``, ``SOUL.md`` ...) and skills are not
    memory: a line there that happens to hold the text is listed, not removed."""
    discovery = Discovery(agent.workspace, list(agent.config.get("memory.extra_paths") or ()))

    def check(rel: str) -> bool:
        if rel == "USER.md" or discovery.is_memory_path(rel):
            return True
        return any(rel.startswith(d + "/") for d in (PRIVATE_DIR, ENTITY_DIR))

    return check


def _plain(text: str) -> str:
    """``text`` as a search query's words are matched against a hit's lines: case, accents
    and the other spellings memory search ignores (Greek accents, ß ...) dropped, so
    ``--query Muller`` takes the line the search found for it ("Müller")."""
    return fold_diacritics(search_spelling(caseless(text)))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def select(agent: AgentLike, *, text: str | None = None, query: str | None = None,
           file: str | None = None, since: _dt.date | None = None, until: _dt.date | None = None,
           limit: int = 6, everywhere: bool = False) -> Plan:
    """What to forget. Lines outside memory and ``USER.md`` (:func:`memory_or_personal`) go
    to :attr:`Plan.kept` unless ``everywhere``."""
    plan = Plan()
    seen: set[tuple[str, int]] = set()
    editable = memory_or_personal(agent)

    def take(rel: str, i: int, line: str) -> None:
        if (rel, i) not in seen and line.strip():
            seen.add((rel, i))
            (plan.entries if everywhere or editable(rel) else plan.kept).append(Entry(rel, i, line))

    if text is not None:
        # bytes a shell passed through undecoded: remember wrote them as U+FFFD, so match that
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        needle = caseless(text).strip()
        if len(needle) < 3:
            raise SoulframeError("forget: give at least three characters of the text to forget")
        plan.texts.append(text.strip())
        for rel, p in markdown_files(agent):
            for i, line in enumerate(_lines(p), 1):
                if needle in caseless(line):
                    take(rel, i, line)
        plan.user_entries = list(_user_lines(agent, [needle]))
    if query is not None:
        words = query_terms(query)
        terms = [_plain(t) for t in words]
        # a Greek or Cyrillic word is found in its other forms (Москва, в Москву): its
        # lines are those the search's own rule says hold it
        inflected = tuple(t for t in words if search_tokens(t))
        for hit in agent.memory.search(query, k=limit, track=False):
            if hit.scope != "agent":
                continue
            lines = _lines(agent.workspace.resolve(hit.path))
            for i in range(hit.start_line, min(hit.end_line, len(lines)) + 1):
                low = _plain(lines[i - 1])
                if not lines[i - 1].lstrip().startswith("#") and (
                        any(t in low for t in terms)
                        or (inflected and term_coverage(lines[i - 1], inflected) > 0)):
                    take(hit.path, i, lines[i - 1])
    whole: list[str] = []
    if file is not None:
        rel, _real, abspath = confine_memory_path(agent.workspace, file)
        if not abspath.is_file() and not rel.isascii():
            # named in NFD on disk (synced from macOS), typed in NFC, or the other way round
            wanted = unicodedata.normalize("NFC", rel)
            rel = next((r for r, _p in markdown_files(agent) if unicodedata.normalize("NFC", r) == wanted), rel)
            rel, _real, abspath = confine_memory_path(agent.workspace, rel)
        if not abspath.is_file():
            raise SoulframeError(f"forget --file {rel}: no such file")
        whole.append(rel)
    if since is not None or until is not None:
        from soulframe.kit import agent_timezone

        lo, hi = since or _dt.date.min, until or _dt.date.max
        tz = agent_timezone(agent)  # a stamp is UTC; the days asked for are the agent's
        for rel, p in markdown_files(agent):
            log = DAILY_LOG.match(rel)
            if log is not None:  # a daily log is one day, whatever its lines say
                if _in_range(log.group(1), lo, hi):
                    whole.append(rel)
                continue
            # any other file line by line: an imported conversation is named for its first
            # day but runs over many. A line goes by its stamp; in dated history one without
            # a stamp by the `## YYYY-MM-DD` heading it is under, else the file's own day
            dated = rel.startswith("memory/") and day_of(rel) is not None
            day = day_of(rel) if dated else None
            lines = _lines(p)
            hits: list[tuple[int, str]] = []
            for i, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                heading = _DAY_HEADING.fullmatch(line.strip())
                if dated and heading is not None:
                    day = heading.group(1)
                at = (parse_provenance(line) or Provenance("")).fields.get("at", "")
                when = _local_day(at, tz) if at else day
                if when and _in_range(when, lo, hi):
                    hits.append((i, line))
            if dated and len(hits) == sum(1 for x in lines if x.strip()) > 0:
                whole.append(rel)  # every line of it: the file goes, not an empty shell
                continue
            for i, line in hits:
                take(rel, i, line)
    for rel in whole:
        if rel not in plan.files:
            plan.files.append(rel)
            for i, line in enumerate(_lines(agent.workspace.resolve(rel)), 1):
                take(rel, i, line)
    return plan


def _local_day(at: str, tz: _dt.tzinfo) -> str:
    """The agent-local day (YYYY-MM-DD) of a provenance stamp (UTC, ``...Z``); a stamp
    without a time is its own day."""
    if len(at) <= 10:
        return at
    try:
        when = _dt.datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        return at[:10]
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.UTC)
    return when.astimezone(tz).date().isoformat()


def _in_range(day: str, lo: _dt.date, hi: _dt.date) -> bool:
    try:
        return lo <= _dt.date.fromisoformat(day) <= hi
    except ValueError:
        return False


# --------------------------------------------------------------------------- forgetting


def forget(agent: AgentLike, plan: Plan) -> Result:
    result = Result(entries=len(plan.entries))
    needles = plan.needles()
    low = [caseless(n) for n in needles]
    by_file: dict[str, set[str]] = {}
    for e in plan.entries:
        by_file.setdefault(e.path, set()).add(e.text)
    cache = _cache_hashes(agent, by_file, plan, low)
    # 0. the tombstones first: a forget stopped part way (killed, a full disk) has already
    # said what must not come back, and running it again finds the rest. A refused write
    # scrubbed from the quarantine gets one too, or the next import refuses it again and
    # puts it back there
    refused = _quarantined_lines(Path(agent.state_dir), low) if low else []
    result.tombstones = Tombstones.for_agent(agent).add([*(e.text for e in plan.entries), *refused])
    # 1. the Markdown, each file under its lock: a note remembered meanwhile is kept
    for rel, texts in by_file.items():
        path = agent.workspace.resolve(rel)
        if rel in plan.files:
            _shred(path)
            result.files_removed.append(rel)
            continue

        def without(data: bytes, texts: set[str] = texts) -> bytes:
            lines = data.decode("utf-8", errors="surrogateescape").splitlines(keepends=True)
            kept = [x for x in lines if x.rstrip("\r\n") not in texts]
            return "".join(kept).encode("utf-8", "surrogateescape")

        update_locked(path, without)
        result.files_changed.append(rel)
    # 2. copies soulframe made: diary, undo snapshots, quarantine and other JSON Lines, and
    # what a write killed part way left beside its file
    if low:
        _scrub_leftovers(agent.workspace.root, low, result)
        _scrub_diary(agent, low, result)
        _scrub_state(Path(agent.state_dir), low, result)
        for model, keys in _scrub_user_files(agent, low, result).items():
            cache[model] = sorted({*cache.get(model, ()), *keys})
    # 3. the index
    agent.memory.sync()
    store = agent.memory.store
    if isinstance(store, ErasingStore):
        result.store = store.erase(needles, cache)
    else:
        result.unreachable.append(
            f"the {store.name} store cannot erase (no ErasingStore.erase): its files may keep "
            "deleted text until it compacts them; `soulframe memory rebuild` rewrites the index")
    # 4. what is out of reach
    ws = agent.workspace.root
    if (ws / ".git").exists():
        at = shlex.quote(str(ws))  # a command to paste: a path with spaces stays one word
        result.unreachable.append(
            f"the git history of {ws} (soulframe backup) still holds it: rewrite it with "
            f"`git -C {at} filter-repo --replace-text FILE` (FILE lists the text, one line each; "
            f"git-filter-repo is a separate tool), then `git -C {at} reflog expire --expire=now --all "
            f"&& git -C {at} gc --prune=now`, and force-push every remote")
    result.unreachable.append(
        "copies outside soulframe: the export or transcript it was imported from, other "
        "backups, and blocks the file system or an SSD keeps after a file is rewritten")
    return result


def _shred(path: Path) -> None:
    """Overwrite a file before removing it: on most file systems the old blocks are reused
    in place (not on copy-on-write ones or SSDs, which the report says)."""
    try:
        size = path.stat().st_size
        with open(path, "r+b") as fh:
            fh.write(b"\0" * size)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError:
        pass
    path.unlink(missing_ok=True)


def _embedder(agent: AgentLike) -> Any:
    """The agent's embedding provider, or ``None`` (then nothing was ever cached)."""
    try:
        return agent.memory.embedder
    except Exception:  # no model: nothing was embedded by this run either
        return None


def _passage_keys(agent: AgentLike, provider: Any, text: str, rel: str, low: list[str] | None) -> set[str]:
    """The embedding-cache keys of ``text``'s passages (with ``low``, only of those holding
    forgotten text): what indexing ``rel`` looks up in the cache."""
    from soulframe.memorykit import chunk_file as chunk
    from soulframe.memorykit import (
        passage_windows,
        text_hash,  # the embedding cache's key (not the chunk hash)
    )

    keys: set[str] = set()
    for c in chunk(agent, text, rel):
        if low is None or any(n in caseless(c.text) for n in low):
            keys.update(text_hash(w) for w in passage_windows(agent.config, c.text, provider))
    return keys


def _cache_hashes(agent: AgentLike, by_file: dict[str, set[str]], plan: Plan, low: list[str]) -> dict[str, list[str]]:
    """The embedding-cache keys of the passages that held forgotten text (computed from the
    files before they change), less those the files still use afterwards."""
    provider = _embedder(agent) if low else None
    if provider is None:
        return {}
    gone: set[str] = set()
    kept: set[str] = set()
    for rel, texts in by_file.items():
        text = agent.workspace.resolve(rel).read_text(encoding="utf-8", errors="replace")
        after = "" if rel in plan.files else "".join(
            x for x in text.splitlines(keepends=True) if x.rstrip("\r\n") not in texts)
        gone |= _passage_keys(agent, provider, text, rel, low)
        kept |= _passage_keys(agent, provider, after, rel, None)
    return {provider.model_id: sorted(gone - kept)}


#: a temporary file younger than this may be a write in progress: left alone
LEFTOVER_AGE_S = 60.0


def _scrub_leftovers(root: Path, low: list[str], result: Result) -> None:
    """The temporary copies a write killed before its rename left (``.NAME.xxxx.tmp``, in
    the file's folder): shredded when they hold forgotten text."""
    import time

    now = time.time()
    for dirpath, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for name in files:
            if not (name.startswith(".") and name.endswith(".tmp")):
                continue
            p = Path(dirpath, name)
            try:
                if p.is_symlink() or now - p.stat().st_mtime < LEFTOVER_AGE_S:
                    continue
                text = p.read_bytes().decode("utf-8", errors="replace")
            except OSError:
                continue
            if any(_has(line, low) for line in text.splitlines()):
                _shred(p)
                _count(result, "leftover temporary files", 1)


def _scrub_diary(agent: AgentLike, low: list[str], result: Result) -> None:
    try:
        root = agent.workspace.resolve(DIARY_DIR)
    except SoulframeError:
        return
    if not root.is_dir():
        return
    for p in sorted(root.rglob("*")):
        if p.is_symlink() or not p.is_file():
            continue
        if p.suffix == ".json":  # an undo snapshot: {"path", "content": the file before}
            try:
                data = json.loads(p.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            content = str(data.get("content", ""))
            kept = [x for x in content.splitlines(keepends=True) if not _has(x, low)]
            if len(kept) != len(content.splitlines(keepends=True)):
                data["content"] = "".join(kept)
                atomic_write(p, json.dumps(data), mode=0o600)
                _count(result, "undo snapshots", len(content.splitlines()) - len(kept))
        else:
            _drop_lines(p, lambda line: _has(line, low), result, "consolidation diary")


def _scrub_state(state: Path, low: list[str], result: Result) -> None:
    """JSON Lines records (quarantine, logs) in ``state_dir`` holding forgotten text."""
    if not state.is_dir():
        return
    for p in sorted(state.rglob("*.jsonl")):
        if p.is_symlink() or not p.is_file():
            continue
        place = "quarantine" if p.parent.name == "quarantine" else p.relative_to(state).as_posix()
        _drop_lines(p, lambda line: _json_has(line, low), result, place)


def _quarantined_lines(state: Path, low: list[str]) -> list[str]:
    """The lines of refused writes in the quarantine that hold forgotten text: an import
    compares what it would write line by line."""
    out: list[str] = []
    for p in sorted((state / "quarantine").glob("*.jsonl")):
        if p.is_symlink() or not p.is_file():
            continue
        for row in p.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                text = json.loads(row).get("text")
            except (ValueError, AttributeError):
                continue
            if isinstance(text, str):
                out += [line for line in text.splitlines() if _has(line, low)]
    return out


def _user_lines(agent: AgentLike, low: list[str]) -> Iterator[UserEntry]:
    """The lines of users' own files (in the store) that :func:`_scrub_user_files` removes."""
    from soulframe.memorykit import context_store

    try:
        files = context_store(agent)
        users = files.users()
    except SoulframeError:
        return
    for user in users:
        for name, content in sorted(files.user_files(user).items()):
            for i, line in enumerate(content.splitlines(), 1):
                if _has(line, low):
                    yield UserEntry(user, name, i, line)


def _scrub_user_files(agent: AgentLike, low: list[str], result: Result) -> dict[str, list[str]]:
    """Lines of per-user files (each user's MEMORY.md, daily logs, USER.md) kept in the
    store's context-file table, rewritten through its API. Returns the embedding-cache keys
    of their passages that held forgotten text (as :func:`_cache_hashes` does for the
    workspace): a user's memory is embedded into the same cache."""
    from soulframe.memorykit import context_store

    try:
        files = context_store(agent)
        users = files.users()
    except SoulframeError:
        return {}
    provider = _embedder(agent)
    gone: set[str] = set()
    for user in users:
        for name, content in files.user_files(user).items():
            lines = content.splitlines(keepends=True)
            kept = [x for x in lines if not _has(x, low)]
            if len(kept) != len(lines):
                if provider is not None:
                    gone |= (_passage_keys(agent, provider, content, name, low)
                             - _passage_keys(agent, provider, "".join(kept), name, None))
                files.write_user_file(user, name, "".join(kept))
                _count(result, "per-user files", len(lines) - len(kept))
    if users:
        result.unreachable.append(
            "per-user files were rewritten through the store; the old rows' bytes in its "
            "database (agents.sqlite, or PostgreSQL) are freed but not compacted by forget")
    return {provider.model_id: sorted(gone)} if provider is not None and gone else {}


def _drop_lines(path: Path, hit: Any, result: Result, place: str) -> None:
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return
    lines = text.splitlines(keepends=True)
    kept = [x for x in lines if not hit(x)]
    if len(kept) != len(lines):
        atomic_write(path, "".join(kept).encode("utf-8", "surrogateescape"), mode=path.stat().st_mode & 0o777)
        _count(result, place, len(lines) - len(kept))


def _count(result: Result, place: str, n: int) -> None:
    result.scrubbed[place] = result.scrubbed.get(place, 0) + n


def _has(text: str, low: list[str]) -> bool:
    t = caseless(normalise(text))
    return any(" ".join(n.split()) in t for n in low) or any(n in caseless(text) for n in low)


def _json_has(line: str, low: list[str]) -> bool:
    if _has(line, low):
        return True
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return _has(" ".join(_strings(obj)), low)


def _strings(obj: Any) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)
