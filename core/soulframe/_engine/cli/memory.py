"""``soulframe memory``: index, search, read, remember, watch and evaluate memory."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from ..model import SESSION_KINDS, Session, SoulframeError
from .state import State, echo_json, pass_state, user_option

log = logging.getLogger("soulframe.cli")

if TYPE_CHECKING:
    from ..memory.index import MemoryIndex
    from ..memory.results import SyncReport


@click.group("memory")
def memory_group() -> None:
    """Search and maintain the agent's memory (MEMORY.md and memory/*.md).

    \b
      soulframe memory remember "Prefers dark-mode screenshots"
      soulframe memory search "screenshot appearance"
      soulframe memory get memory/2026-11-21.md --from 3 --lines 5
      soulframe memory status
    """


def _index(state: State) -> MemoryIndex:
    memory: MemoryIndex = state.agent().memory
    return memory


#: a sync that must read more files than this shows a progress bar
FEW_FILES = 5


@contextmanager
def _progress(label: str) -> Iterator[Callable[[int, int], None] | None]:
    """A click progress bar on stderr while indexing, only when stderr is a terminal and
    only once more than :data:`FEW_FILES` files had to be read (the sync reports only the
    files it reads, so a no-change sync never shows one)."""
    if not sys.stderr.isatty():
        yield None
        return
    bar_holder: dict[str, Any] = {"calls": 0}

    def update(done: int, total: int) -> None:
        bar_holder["calls"] += 1
        if "bar" not in bar_holder:
            if bar_holder["calls"] <= FEW_FILES or done >= total:  # not worth a bar
                return
            bar = click.progressbar(length=total, label=label, file=sys.stderr)
            bar.__enter__()
            bar_holder["bar"] = bar
            bar_holder["done"] = 0
        bar = bar_holder["bar"]
        bar.update(done - bar_holder["done"])
        bar_holder["done"] = done

    try:
        yield update
    finally:
        if "bar" in bar_holder:
            bar_holder["bar"].__exit__(None, None, None)


@contextmanager
def _warnings_in_report() -> Iterator[None]:
    """A sync's warnings are printed from its report, once: not also by ``warnings``."""
    import warnings

    from ..memory.results import MemoryWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MemoryWarning)
        yield


def _print_report(report: SyncReport, *, verbose: bool = True) -> None:
    for w in report.warnings:
        click.secho(f"warning: {w}", fg="yellow", err=True)
    if not verbose:
        return
    click.echo(
        f"{report.files} files: {len(report.added)} added, {len(report.changed)} changed, "
        f"{len(report.removed)} removed, {report.unchanged} unchanged"
        + (f", {len(report.skipped)} skipped" if report.skipped else "")
        + f"; {report.chunks} chunks "
        f"indexed, {report.embedded} embedded ({report.cached} from cache) in {report.seconds:.2f}s"
    )
    if report.model is None:
        click.secho("keyword-only: no embedding provider (see `soulframe memory status`)",
                    fg="yellow", err=True)


@memory_group.command("index")
@click.option("--force", is_flag=True, help="Re-read and re-chunk every file (embeddings come from the cache).")
@click.option("--json", "as_json", is_flag=True, help="Print the sync report as JSON: {files, added, changed, removed, unchanged, "
              "chunks, embedded, cached, skipped, warnings, seconds, model, ...}.")
@pass_state
def memory_index(state: State, force: bool, as_json: bool) -> None:
    """Bring the index up to date with the memory files (only changed files are read).

    Prints what changed (files indexed, removed, chunks embedded); a progress bar on a
    terminal. Stopped part way (Ctrl-C), it keeps what it indexed and the next run goes on.
    `memory search` indexes changed files first anyway: run this ahead of time, or from cron.

    \b
      soulframe memory index
      soulframe memory index --json | jq .changed
    """
    mem = _index(state)
    with _progress("indexing") as progress, _warnings_in_report():
        report = mem.sync(force=force, progress=progress)
    log_sync(report)
    if as_json:
        echo_json(report.to_dict())
        return
    _print_report(report)


@memory_group.command("rebuild")
@click.option("--json", "as_json", is_flag=True, help="Print the sync report as JSON: {files, added, changed, removed, unchanged, "
              "chunks, embedded, cached, skipped, warnings, seconds, model, ...}.")
@pass_state
def memory_rebuild(state: State, as_json: bool) -> None:
    """Drop the index and rebuild it from the Markdown files.

    For a damaged or confusing index; the files are not touched and embeddings come from
    the cache, so nothing is re-embedded. A plain `memory index` is enough after edits.

    \b
      soulframe -w ~/agent memory rebuild
      soulframe -w ~/agent memory rebuild --json
    """
    mem = _index(state)
    with _progress("rebuilding") as progress, _warnings_in_report():
        report = mem.rebuild(progress=progress)
    if as_json:
        echo_json(report.to_dict())
        return
    _print_report(report)


@memory_group.command("search")
@click.argument("query")
@click.option("-k", "--max-results", "k", type=click.IntRange(min=1), default=None,
              help="Results (default memory.max_results, 6).")
@click.option("--min-score", type=click.FloatRange(0.0, 1.0), default=None, help="Drop results below this score (default memory.min_score, 0.35).")
@click.option("--channel", type=click.Choice(["hybrid", "keyword", "vector"]), default="hybrid",
              show_default=True, help="Search one channel alone (for comparing).")
@click.option("--session", "session_kind", type=click.Choice(SESSION_KINDS), default="main", show_default=True,
              help="Search as this kind of session (group/subagent sessions see no private memory).")
@user_option("Search as this user: the agent's memory and that user's own (never another user's).")
@click.option("--history", is_flag=True, help="Also show superseded entries (~~old~~ (superseded ...)), ranked last.")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON list of {path, start_line, end_line, score, snippet, text_score, vector_score, citation, mode, notice, focused (the question also embedded without its common names, or null), provenance}.")
@pass_state
def memory_search(state: State, query: str, k: int | None, min_score: float | None, channel: str,
                  session_kind: str, user_id: str | None, history: bool, as_json: bool) -> None:
    """Search memory by meaning and keywords (hybrid), best first.

    Ask in plain words: a result needs no exact word of the QUERY. Each result shows its
    score, a citation (path#Lstart-Lend, readable with `memory get`), the two channels'
    scores and the matching lines. Files changed since the last index are indexed first.

    \b
      soulframe memory search "what did we decide about the lease?"
      soulframe memory search "INC-4821" -k 3 --json
    """
    import os
    import warnings

    # one query in a short-lived process: starting BLAS worker threads (when numpy loads)
    # costs more than they could save on a single small forward pass and vector scan
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    mem = _index(state)
    started = time.perf_counter()
    # the first search after many changes (or ever) indexes them first: show it
    with warnings.catch_warnings(), _progress("indexing memory") as progress:
        mem.progress = progress
        warnings.simplefilter("ignore")  # reported below, once, in the output itself
        results = mem.search(query, k, Session(kind=session_kind, user_id=user_id),  # type: ignore[arg-type]
                             min_score=min_score, channels=channel, history=history)
    elapsed = time.perf_counter() - started
    report = mem.last_sync
    if report is not None:
        log_sync(report)
    keyword = sum(h.text_score is not None for h in results)
    vector = sum(h.vector_score is not None for h in results)
    log.info("search: %s (%s), %d hits (%d matched by keyword, %d by vector) in %.0f ms",
             results.mode, channel, len(results), keyword, vector, elapsed * 1000)
    for h in results:
        log.debug("  %.3f %s keyword=%s vector=%s", h.score, h.citation,
                  _score(h.text_score), _score(h.vector_score))
    if report is not None:
        _print_report(report, verbose=False)
    if as_json:
        rows = [h.to_dict() | {"mode": results.mode, "notice": results.notice, "focused": results.focused}
                for h in results]
        echo_json(rows)
        if results.notice:
            click.secho(f"warning: {results.notice}", fg="yellow", err=True)
        return
    if results.notice:
        click.secho(f"warning: {results.notice}", fg="yellow", err=True)
        click.secho(f"[{results.mode}]", fg="yellow", err=True)
    if not results:
        if not mem.files():
            click.echo(f"no results: {mem.agent.root} has no memory files yet (MEMORY.md, "
                       "memory/*.md); add one with `soulframe memory remember TEXT`")
        else:
            click.echo("no results (a lower --min-score shows weaker matches)")
        return
    citations = str(state.config().get("memory.citations"))
    for h in results:
        where = h.citation if citations != "off" else h.path
        channels = []
        if h.text_score is not None:
            channels.append(f"keyword {h.text_score:.2f}")
        if h.vector_score is not None:
            channels.append(f"vector {h.vector_score:.2f}")
        click.secho(f"{h.score:.3f}  {where}", bold=True, nl=False)
        click.echo(f"  ({', '.join(channels)})")
        for line in h.snippet.splitlines():
            click.echo(f"    {line}")
        if h.provenance:
            more = f" (+{len(h.provenance) - 2} more)" if len(h.provenance) > 2 else ""
            click.secho(f"    from: {'; '.join(h.provenance[:2])}{more}", dim=True)


@memory_group.command("get")
@click.argument("path")
@click.option("--from", "from_line", type=click.IntRange(min=1), default=None, help="First line (1-based).")
@click.option("--lines", type=click.IntRange(min=1), default=None, help="How many lines (default: to the end).")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {path, start_line, end_line, text, total_lines, citation}.")
@pass_state
def memory_get(state: State, path: str, from_line: int | None, lines: int | None, as_json: bool) -> None:
    """Print lines of a memory file (PATH may be a citation such as memory/2026-08-01.md#L3-L7).

    Reads MEMORY.md, memory/**/*.md and memory.extra_paths only; a line past the end is an
    error (exit 1).

    \b
      soulframe memory get memory/2026-08-01.md#L3-L7
      soulframe memory get MEMORY.md --from 10 --lines 5
    """
    ex = _index(state).get(path, from_line, lines)
    if as_json:
        echo_json(ex.to_dict())
        return
    click.echo(ex.text)


@memory_group.command("remember")
@click.argument("text")
@click.option("--curated", is_flag=True, help="Write to MEMORY.md (curated long-term memory) instead of today's log.")
@user_option("Remember it in this user's own memory (kept in the store, found only in their sessions).")
@click.option("--json", "as_json", is_flag=True, help="Print {path, sync} as JSON.")
@pass_state
def memory_remember(state: State, text: str, curated: bool, user_id: str | None, as_json: bool) -> None:
    """Append TEXT to today's daily log (memory/YYYY-MM-DD.md), or to MEMORY.md, and
    index it, so the next search finds it.

    TEXT "-" reads the note from standard input.

    \b
      soulframe memory remember "Prefers dark-mode screenshots"
      soulframe memory remember --curated "Lease renewed until 2027-10"
      pbpaste | soulframe memory remember -
    """
    from ..agentstore import effective_user

    if text == "-":
        text = _note_from_stdin(int(state.config().get("memory.max_file_bytes")))
    if not text.strip():
        raise click.UsageError("nothing to remember: TEXT is empty")

    user = effective_user(state.agent(), user_id)
    if user:
        from ..memory.users import UserMemory

        name = UserMemory(state.agent(), user).remember(text, curated=curated)
        if as_json:
            echo_json({"path": name, "user": user})
        else:
            click.echo(f"remembered in {user}'s {name}")
        return
    mem = _index(state)
    path = mem.remember(text, curated=curated)
    rel = path.relative_to(state.agent().root).as_posix()
    with _warnings_in_report(), _saved_but_not_indexed(rel):
        report = mem.sync()
    if as_json:
        echo_json({"path": rel, "sync": report.to_dict()})
        return
    _print_report(report, verbose=False)
    click.echo(f"remembered in {rel}")


def _note_from_stdin(limit: int) -> str:
    """The note piped in: bounded (a pipe that never ends stops at the size the index would
    still read), and text (an archive piped by mistake was written into the log as is)."""
    from ..memory.textclean import BINARY, looks_binary

    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        raise click.UsageError(f"standard input: over memory.max_file_bytes ({limit:,} bytes); "
                               "a note that large would not be indexed")
    if looks_binary(data):
        raise click.UsageError(f"standard input: not a note: a {BINARY}")
    return data.decode("utf-8", errors="replace").strip()


@contextmanager
def _saved_but_not_indexed(rel: str) -> Iterator[None]:
    """A full disk after the note was written: say it is safe, and how to index it later."""
    from ..workspace import storage_full

    try:
        yield
    except Exception as exc:
        why = storage_full(exc)
        if why is not None:
            raise SoulframeError(f"remembered in {rel}, but {why}; free some space and run "
                                 "`soulframe memory index`") from exc
        # the note is safe in the Markdown whatever the index did (locked by another
        # process, not writable): say so, so nobody writes it twice by retrying
        raise SoulframeError(f"remembered in {rel}, but the index was not updated "
                             f"({type(exc).__name__}: {exc}); `soulframe memory index` catches up "
                             "when it can") from exc


def log_sync(report: Any) -> None:
    """``-v``: what the sync did and how long it took; ``-vv``: each file."""
    log.info("sync: %d files, %d added, %d changed, %d removed, %d unchanged; %d chunks, "
             "%d embedded (%d from the cache) in %.2f s", report.files, len(report.added),
             len(report.changed), len(report.removed), report.unchanged, report.chunks,
             report.embedded, report.cached, report.seconds)
    for kind, paths in (("added", report.added), ("changed", report.changed),
                        ("removed", report.removed)):
        for path in paths:
            log.debug("  %s %s", kind, path)
    for path, why in report.skipped:
        log.debug("  skipped %s: %s", path, why)


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _probe(mem: Any) -> str:
    """Embed one short query with the provider: whether semantic search works right now."""
    if mem.embedder is None:
        return f"none ({mem.embedder_problem or 'no embedding provider'})"
    started = time.perf_counter()
    try:
        vector = mem.embedder.embed_query("soulframe status probe")
    except SoulframeError as exc:
        return f"failed: {exc}"
    return f"ok: {len(vector)} dimensions in {(time.perf_counter() - started) * 1000:.0f} ms"


@memory_group.command("status")
@click.option("--deep", is_flag=True, help="Run a full integrity check of the index, probe the "
              "embedding provider with one query, and list the most recalled entries.")
@click.option("--index", "reindex", is_flag=True,
              help="Bring the index up to date first (as `memory index`), then report.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {files, indexed_files, chunks, embedded_chunks, provider, model, mode, "
                   "vector_backend, fusion, stale_files, health, problems, ...}.")
@pass_state
def memory_status(state: State, deep: bool, reindex: bool, as_json: bool) -> None:
    """Files, chunks, embedding provider, model, vector backend, stale files, health.

    \b
      soulframe memory status
      soulframe memory status --deep --index    # as OpenClaw's: check, probe, re-index
    """
    mem = _index(state)
    with _progress("indexing") as progress:
        synced = mem.sync(progress=progress) if reindex else None
    st = mem.status(deep=deep)
    probe = _probe(mem) if deep else None
    if as_json:
        out = st.to_dict()
        if synced is not None:
            out["reindexed"] = {"added": len(synced.added), "changed": len(synced.changed),
                                "removed": len(synced.removed), "chunks": synced.chunks}
        if probe is not None:
            out["provider_probe"] = probe
        echo_json(out)
        return
    if synced is not None:
        click.echo(f"{'re-indexed':16} {len(synced.added)} added, {len(synced.changed)} changed, "
                   f"{len(synced.removed)} removed")
    if probe is not None:
        click.echo(f"{'provider probe':16} {probe}")
    rows = [
        ("agent", st.agent),
        ("workspace", st.workspace),
        ("store", f"{st.store} ({st.location})"),
        ("files", f"{st.files} found, {st.indexed_files} indexed"),
        ("chunks", f"{st.chunks} ({st.embedded_chunks} with vectors)"),
        ("search", st.mode),
        ("provider", st.provider or "none"),
        ("model", st.model or "-"),
        ("dimensions", st.dimensions or "-"),
        ("vector backend", st.vector_backend),
        ("text backend", st.text_backend),
        ("fusion", st.fusion),
        ("embedding cache", st.cached_embeddings),
        ("stale files", len(st.stale_files)),
        ("skipped files", len(st.skipped_files)),
        ("health", st.health),
    ]
    for key, value in rows:
        click.echo(f"{key:16} {value}")
    for p in st.stale_files[:20]:
        click.echo(f"  stale: {p}")
    for sk in st.skipped_files[:20]:
        click.secho(f"  skipped: {sk.path}: {sk.reason}", fg="yellow")
    for p in st.problems:
        click.secho(f"  problem: {p}", fg="red")
    if st.most_recalled:
        click.echo("most recalled   (recalls / distinct queries / days, last)")
        for r in st.most_recalled:
            when = time.strftime("%Y-%m-%d", time.localtime(r.last_recalled))
            click.echo(f"  {r.count:4} / {r.queries:3} / {r.days:2}  {when}  "
                       f"{r.path}#L{r.line}  {r.text[:70]}")
    if st.notice:
        click.secho(f"WARNING: {st.notice}", fg="yellow", bold=True, err=True)


@memory_group.command("watch")
@click.option("--debounce-ms", type=int, default=None, help="Default memory.watch_debounce_ms (1,500).")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object per sync (JSON Lines), as `memory index --json` does.")
@pass_state
def memory_watch(state: State, debounce_ms: int | None, as_json: bool) -> None:
    """Re-index whenever a memory file changes (Ctrl-C to stop).

    \b
      soulframe -w ~/agent memory watch
      soulframe -w ~/agent memory watch --debounce-ms 500 --json
    """
    from ..memory.watch import RETRY_S, watch
    from .errors import error_line

    mem = _index(state)
    debounce = (debounce_ms if debounce_ms is not None else int(state.config().get("memory.watch_debounce_ms"))) / 1000
    with _warnings_in_report():
        first = mem.sync()
    if as_json:
        click.echo(json.dumps(first.to_dict(), ensure_ascii=False, default=str), nl=True)
    else:
        _print_report(first)

    def on_sync(report: SyncReport) -> None:
        if as_json:
            if report.changed_anything or report.warnings:
                click.echo(json.dumps(report.to_dict(), ensure_ascii=False, default=str))
                sys.stdout.flush()
            return
        if report.changed_anything or report.warnings:
            stamp = time.strftime("%H:%M:%S")
            click.echo(f"[{stamp}] ", nl=False)
            _print_report(report)

    def on_ready() -> None:
        click.echo(f"watching {mem.agent.root} (debounce {debounce * 1000:.0f} ms); Ctrl-C to stop",
                   err=True)

    def on_error(exc: Exception) -> None:
        # a watch left running for weeks outlives a full disk or a deleted state dir: it
        # says so and tries again, instead of ending and leaving every later note unindexed
        said = error_line(exc, when_full="free some space") or f"{type(exc).__name__}: {exc}"
        log.debug("memory watch: sync failed", exc_info=exc)
        if as_json:
            # the error object of every --json command, without a "code": the watch exits not
            click.echo(json.dumps({"error": {"message": said}, "retry_s": RETRY_S}, ensure_ascii=False))
            sys.stdout.flush()
            return
        click.secho(f"[{time.strftime('%H:%M:%S')}] sync failed: {said} — still watching; trying again "
                    f"in {RETRY_S:.0f} s or at the next change", fg="red", err=True)

    try:
        with _warnings_in_report():
            watch(mem, debounce_s=debounce, on_sync=on_sync, on_ready=on_ready, on_error=on_error)
    except KeyboardInterrupt:
        pass


# `memory eval` (golden questions and public conversations) lives in .memory_eval


# `soulframe doctor` reports the memory index (keyword-only search, health, stale files)
# through soulframe_memory's checks, which read MemoryIndex.status().

__all__ = ["memory_group"]
