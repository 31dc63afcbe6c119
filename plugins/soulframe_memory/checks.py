"""``soulframe doctor`` checks for memory (seed 003 §8.4), offered through
``register_doctor_checks``.

Each one is cheap — no embedding is computed, no model is loaded, no index is created — and
reports through findings; one that raises is shown by doctor as a problem of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from soulframe import ConfigError, Finding, Fix, SoulframeError
from soulframe.cli import quiet_logs as _quiet_logs
from soulframe.memorykit import CURATED

if TYPE_CHECKING:
    from soulframe import CheckedAgent

#: a memory file this full (of bootstrap.max_chars_per_file) gets a "prune soon" warning
NEAR_LIMIT = 0.8


def memory_index(agent: CheckedAgent) -> Iterable[Finding]:
    """Can the index open, is it up to date, does search run with vectors."""
    if not agent.config.get("memory.enabled"):
        yield Finding("memory", "info", "memory is disabled (memory.enabled = false): no index, "
                      "no memory tools")
        return
    if not agent.root.is_dir():
        return
    mem = agent.memory
    try:
        with _quiet_logs():
            _ = mem.embedder
    except ConfigError as exc:  # a misspelt provider: the config is what to fix
        yield Finding("memory", "problem", str(exc))
        return
    path = agent.store_location()
    if path is not None and not path.is_file():
        n = len(mem.files())
        yield Finding("memory", "info",
                      f"no memory index yet ({n} memory file{'s' if n != 1 else ''}): the first "
                      "search builds it, or run `soulframe memory index`", str(path),
                      fix=_index_fix(agent))
    else:
        try:
            with _quiet_logs():
                st = mem.status()
        except SoulframeError as exc:  # a newer soulframe's index: the message says what to do
            yield Finding("memory", "problem", str(exc), None if path is None else str(path))
            return
        for problem in st.problems:
            yield Finding("memory", "problem", f"index at {st.location}: {problem}", st.location)
        stale = st.stale_files
        if stale:
            shown = ", ".join(stale[:5]) + (" ..." if len(stale) > 5 else "")
            yield Finding("memory", "info",
                          f"{len(stale)} memory file{'s' if len(stale) != 1 else ''} changed since "
                          f"the last index ({shown}): the next search re-indexes them, or run "
                          "`soulframe memory index`", fix=_index_fix(agent))
        yield from _not_indexed(agent, st.skipped_files)
    yield from _semantic(agent)


def _not_indexed(agent: CheckedAgent, skipped: Iterable[Any]) -> Iterable[Finding]:
    """Memory files the index leaves out for what they hold or allow (too big, binary,
    unreadable): a note that is never found, named with why. Links leading astray are
    :func:`~soulframe_memory.memory_links.memory_files`'s to report, with their fix."""
    from soulframe.memorykit import Discovery

    skipped = list(skipped)
    if not skipped:  # the usual case: no second walk of every memory file to name none
        return
    links = Discovery(agent.workspace, list(agent.config.get("memory.extra_paths") or ()))
    links.files()
    named = {path for path, _ in links.skipped}
    for sk in skipped:
        if sk.path not in named:
            yield Finding("memory", "warning", f"{sk.path} is not searchable: {sk.reason}", sk.path)


def _index_fix(agent: CheckedAgent) -> Fix:
    def apply() -> str:
        report = agent.memory.sync()
        return (f"indexed memory: {len(report.added)} added, {len(report.changed)} changed, "
                f"{len(report.removed)} removed, {report.chunks} chunks")

    return Fix("soulframe memory index", apply)


def _semantic(agent: CheckedAgent) -> Iterable[Finding]:
    provider_name = str(agent.config.get("embedding.provider"))
    mem = agent.memory
    with _quiet_logs():  # resolving the provider logs the same advice this finding gives
        if mem.embedder is not None:
            return
    problem = mem.embedder_problem or "no embedding provider"
    if provider_name == "none":
        yield Finding("memory", "info", "semantic search is off (embedding.provider = none): "
                      "memory search is keyword-only")
    elif provider_name == "auto":
        yield Finding("memory", "warning", problem)
    else:  # a provider asked for by name that cannot run
        yield Finding("memory", "problem", problem)


def memory_size(agent: CheckedAgent) -> Iterable[Finding]:
    """MEMORY.md and the daily logs loaded at bootstrap growing towards the per-file limit
    (seed 003 §8.4: keep each well under 20,000 characters). Files already over it are
    reported by the files and truncation checks."""
    from .daily import bootstrap_logs, list_logs

    root = agent.root
    if not root.is_dir():
        return
    limit = int(agent.config.get("bootstrap.max_chars_per_file"))
    names = [n for n in CURATED if (root / n).is_file()][:1]
    try:
        loaded = bootstrap_logs(agent)
    except ConfigError:  # a bad timezone: the timezone check reports it
        loaded = set()
    names += sorted(n for n in loaded if (root / n).is_file())
    for name in names:
        try:
            path = agent.workspace.resolve(name)
            chars = len(path.read_bytes().decode("utf-8", errors="replace"))
        except Exception:  # unreadable or outside: the files check says why
            continue
        if NEAR_LIMIT * limit <= chars <= limit:
            how = ("move stale or superseded entries out of it" if not name.startswith("memory/")
                   else "keep today's notes short; details can go into other memory/ files, "
                        "which are searched but not loaded")
            yield Finding("memory-size", "warning",
                          f"{name} has {chars:,} characters, {chars / limit:.0%} of "
                          f"bootstrap.max_chars_per_file = {limit:,}: past that it is truncated "
                          f"at bootstrap — {how}", name)
    old_big = [log.path for log in list_logs(agent) if log.path not in names and log.chars > limit]
    if old_big:
        many = len(old_big) != 1
        yield Finding("memory-size", "info",
                      f"{len(old_big)} older daily log{'s' if many else ''} over {limit:,} "
                      f"characters ({', '.join(old_big[:3])}{' ...' if len(old_big) > 3 else ''}): "
                      f"{'they are' if many else 'it is'} searched in full but {'were' if many else 'was'} "
                      "truncated at bootstrap on the day; `soulframe memory logs` lists sizes")


def _memory_files(agent: CheckedAgent) -> Iterable[Finding]:
    from .memory_links import memory_files

    return memory_files(agent)


_memory_files.__name__ = "memory_files"
CHECKS = (_memory_files, memory_index, memory_size)

