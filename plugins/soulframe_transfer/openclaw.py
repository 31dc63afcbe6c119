"""An OpenClaw home brought in: its workspace files as they are, and its configuration
(``openclaw.json``, JSON5; ``moltbot.json`` / ``clawdbot.json`` from older releases) mapped to
``soulframe.toml``. Every key without an equivalent is listed in the report with its line,
never silently dropped; secrets (API keys, tokens) are never copied nor printed.

The mapping is :data:`MAPPING` (docs/moving.md shows it as a table).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from soulframe import ConfigError, SoulframeError
from soulframe.kit import looks_secret

from . import json5
from .history import HistoryWriter
from .report import ImportReport

CONFIG_NAMES = ("openclaw.json", "moltbot.json", "clawdbot.json")
#: OpenClaw's memorySearch lived at the top level before it moved under agents.defaults
_PREFIXES = ("agents.defaults.memorySearch.", "memorySearch.")

Transform = Callable[[Any], Any]


def _same(v: Any) -> Any:
    return v


def _provider(v: Any) -> Any:
    return {"local": "local", "openai": "openai", "gemini": "gemini", "auto": "auto"}.get(str(v), v)


def _tokens_to_chars(v: Any) -> Any:
    return int(v) * 4  # OpenClaw chunks by tokens; soulframe by characters (~4 per token)


#: OpenClaw key (dotted) -> (soulframe key, transform, note)
MAPPING: dict[str, tuple[str, Transform, str]] = {
    "agents.defaults.bootstrapMaxChars": ("bootstrap.max_chars_per_file", _same, ""),
    "agents.defaults.bootstrapTotalMaxChars": ("bootstrap.total_max_chars", _same, ""),
    "agents.defaults.userTimezone": ("timezone", _same, ""),
    "agents.defaults.compaction.memoryFlush.enabled": ("flush.enabled", _same, ""),
    "agents.defaults.compaction.memoryFlush.softThresholdTokens": ("flush.soft_threshold_tokens", _same, ""),
    "agents.defaults.compaction.memoryFlush.prompt": ("flush.prompt", _same, ""),
    "agents.defaults.compaction.reserveTokensFloor": ("flush.reserve_tokens_floor", _same, ""),
    "agents.defaults.contextTokens": ("model.context_window", _same, ""),
    "memorySearch.enabled": ("memory.enabled", _same, ""),
    "memorySearch.provider": ("embedding.provider", _provider, ""),
    "memorySearch.model": ("embedding.model", _same, ""),
    "memorySearch.remote.baseUrl": ("embedding.base_url", _same, ""),
    "memorySearch.extraPaths": ("memory.extra_paths", _same, ""),
    "memorySearch.chunking.tokens": ("memory.chunk_max_chars", _tokens_to_chars, "tokens x 4 characters"),
    "memorySearch.query.maxResults": ("memory.max_results", _same, ""),
    "memorySearch.query.minScore": ("memory.min_score", _same, ""),
    "memorySearch.query.hybrid.vectorWeight": ("memory.vector_weight", _same, ""),
    "memorySearch.query.hybrid.textWeight": ("memory.text_weight", _same, ""),
    "memorySearch.sync.watchDebounceMs": ("memory.watch_debounce_ms", _same, ""),
    "memorySearch.sync.intervalMinutes": ("memory.sync_interval_s", lambda v: float(v) * 60, "minutes x 60"),
    "hooks.internal.entries.soul-evil.enabled": ("soul_evil.enabled", _same, ""),
    "hooks.internal.entries.soul-evil.file": ("soul_evil.file", _same, ""),
    "hooks.internal.entries.soul-evil.chance": ("soul_evil.chance", _same, ""),
}

#: keys read by the import itself (not configuration soulframe keeps)
_USED = {"agents.defaults.workspace": "the workspace imported"}
#: why whole families have no equivalent
_WHY = (
    ("agents.defaults.model", "choose the chat model with model.provider / model.name (`soulframe models`)"),
    ("agents.defaults.heartbeat", "soulframe runs the heartbeat when your scheduler calls `soulframe heartbeat`"),
    ("memorySearch.store", "soulframe keeps its own index in state_dir (rebuilt from the Markdown)"),
    ("memorySearch.cache", "soulframe always caches embeddings by text hash"),
    ("memorySearch.chunking.overlap", "soulframe's chunks do not overlap (windows are embedded apart)"),
    ("memorySearch.query.hybrid", "soulframe always fuses both channels (memory.fusion)"),
    ("models.providers", "set providers with model.* / embedding.* and keys with `soulframe keys set`"),
    ("channels", "soulframe is not a gateway: channels stay with your host"),
    ("gateway", "soulframe is not a gateway"),
    ("agents.list", "add agents with `soulframe agents add`"),
)
#: a leaf named like this holds a secret ("apiKey", "botToken", "password"; not "maxTokens")
_SECRET = re.compile(r"(?i)(api_?key|secret|password|passwd|credential|(?:^|[a-z_])token$)")


def find_config(home: Path) -> Path | None:
    for name in CONFIG_NAMES:
        if (home / name).is_file():
            return home / name
    return None


def _leaves(data: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(data, Mapping) and data:
        for k, v in data.items():
            yield from _leaves(v, f"{prefix}{k}.")
    else:
        yield prefix[:-1], data


def _canonical(key: str) -> str:
    for p in _PREFIXES:
        if key.startswith(p):
            return "memorySearch." + key[len(p):]
    return key


def map_config(path: Path, report: ImportReport) -> tuple[dict[str, Any], dict[str, Any]]:
    """Read ``path`` (JSON5) and map it: returns (soulframe keys -> values, the raw data).
    Fills ``report.mapped`` and ``report.unmapped``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    data = json5.loads(text, str(path))
    if not isinstance(data, dict):
        raise ConfigError(f"{path} line 1: the top level must be an object")
    lines = json5.key_lines(text)
    out: dict[str, Any] = {}
    origin: dict[str, str] = {}  # our key -> theirs it was mapped from
    for key, value in _leaves(data):
        canon = _canonical(key)
        line = lines.get(key)
        if _SECRET.search(key.rsplit(".", 1)[-1]) or (isinstance(value, str) and looks_secret(value)):
            report.unmapped.append((key, line, "a secret: not copied; store it with `soulframe keys set`"))
            continue
        if key in _USED:
            continue
        if canon in MAPPING:
            ours, fn, _note = MAPPING[canon]
            try:
                converted = fn(value)
            except (TypeError, ValueError):
                report.unmapped.append((key, line, f"value {value!r} cannot be converted for {ours}"))
                continue
            before = origin.get(ours)
            if before is not None and before.startswith(_PREFIXES[0]) and not key.startswith(_PREFIXES[0]):
                # the current location wins over a leftover of the old one, wherever it is
                report.unmapped.append((key, line, f"an older release's place: {before} sets {ours}"))
                continue
            if before is not None:
                report.mapped = [m for m in report.mapped if m[0] != before]
                report.unmapped.append((before, lines.get(before), f"an older release's place: {key} sets {ours}"))
            out[ours] = converted
            origin[ours] = key
            report.mapped.append((key, ours, converted))
            continue
        why = next((w for p, w in _WHY if canon == p or canon.startswith(p + ".")), "no soulframe equivalent")
        report.unmapped.append((key, line, why))
    return out, data


def to_toml(values: Mapping[str, Any], source: Path) -> str:
    """Dotted keys as TOML, grouped by table, with a header saying where they came from."""
    lines = [f"# Mapped from {source.name} by `soulframe import openclaw`.",
             "# Keys with no soulframe equivalent are listed in the import report.", ""]
    tables: dict[str, list[str]] = {}
    for key in sorted(values):
        table, _, leaf = key.rpartition(".")
        tables.setdefault(table, []).append(f"{leaf} = {_toml_value(values[key])}")
    for table, rows in sorted(tables.items(), key=lambda kv: (kv[0] != "", kv[0])):
        if table:
            lines.append(f"[{table}]")
        lines += rows
        lines.append("")
    return "\n".join(lines)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("inf" if v > 0 else "-inf") if not math.isnan(v) else "nan"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    s = str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{s}"'


#: what an OpenClaw workspace holds at its top (OpenClaw seeds the files on its first run)
_WORKSPACE_MARKS = ("AGENTS.md", "SOUL.md", "MEMORY.md", "memory")


def their_workspace(home: Path, data: Mapping[str, Any]) -> Path | None:
    """``<home>/workspace``, else ``agents.defaults.workspace``, else ``home`` itself when it
    holds workspace files. Each must look like a workspace: every regular file of the one
    chosen is copied, and an export from someone else may name any folder (``workspace: "~"``,
    or a ``workspace`` link to ``/``), which would copy your own files in by the thousand.

    :raises SoulframeError: when the folder named is no workspace, saying which and why.
    """
    named = ((data.get("agents") or {}).get("defaults") or {}).get("workspace") if isinstance(data, Mapping) else None
    candidates: list[tuple[Path, str]] = []
    if (home / "workspace").is_dir():
        candidates.append((home / "workspace", f"{home / 'workspace'}"))
    elif isinstance(named, str) and named:
        p = Path(named).expanduser()
        p = p if p.is_absolute() else home / p
        if p.is_dir():
            candidates.append((p, f"agents.defaults.workspace = {named!r} ({p})"))
    candidates.append((home, str(home)))
    for path, said in candidates:
        if any((path / n).exists() for n in _WORKSPACE_MARKS):
            return path
        if path != home:
            raise SoulframeError(f"import openclaw: {said} has none of {', '.join(_WORKSPACE_MARKS)}: "
                                 "no OpenClaw workspace, nothing imported")
    return None


_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv"}


def copy_workspace(src: Path, writer: HistoryWriter, report: ImportReport, max_bytes: int) -> None:
    """Every regular file of their workspace into ours, at the same path. Hidden entries and
    symbolic links are left (a link could lead out of it); a file we already have with other
    content is kept, and theirs, when Markdown, saved under ``memory/imports/openclaw/`` so
    nothing is lost and it stays searchable."""
    for root, dirs, files in os.walk(src, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS
                         and not Path(root, d).is_symlink())
        for name in sorted(files):
            p = Path(root, name)
            rel = p.relative_to(src).as_posix()
            if name.startswith("."):
                continue
            if p.is_symlink():
                report.notes.append(f"{rel}: a symbolic link, not followed")
                continue
            try:
                if p.stat().st_size > max_bytes:
                    report.unreadable.append((rel, f"larger than {max_bytes:,} bytes"))
                    continue
                data = p.read_bytes()
            except OSError as exc:
                report.unreadable.append((rel, exc.strerror or str(exc)))
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = ""  # not text: nothing a prompt would read
            target = writer.ws.resolve(rel)
            if target.exists() and target.read_bytes() != data \
                    and target.read_bytes() == _less_forgotten(text, writer).encode("utf-8"):
                # ours is theirs less what `forget` removed since the last import: here already
                report.duplicates += 1
                continue
            if target.exists() and target.read_bytes() != data and rel.endswith(".md"):
                aside = f"memory/imports/openclaw/{rel}"
                if writer.copy_bytes(aside, data, text, via="import openclaw"):
                    report.notes.append(f"{rel}: you have your own: kept yours; theirs is in {aside}")
                continue
            writer.copy_bytes(rel, data, text, via="import openclaw")


def _less_forgotten(text: str, writer: HistoryWriter) -> str:
    """``text`` without its lines a tombstone keeps out, as :meth:`HistoryWriter.copy_bytes`
    writes it."""
    return "".join(line for line in text.splitlines(keepends=True)
                   if not (line.strip() and line in writer.tombstones))
