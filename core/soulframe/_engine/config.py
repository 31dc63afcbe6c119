"""Configuration: the core's keys, the keys plugins declare (``register_config_keys``), TOML
(or JSON) files, validation with errors that name the file, the line, the key and what was
expected.

The core's table (:data:`DEFAULTS`) holds only the keys the core reads; every plugin declares
its own through the hook, default plugins exactly as a third party does, and gets the same
checks. :func:`key_catalogue` merges them.

Lookup order for the config file (the first that exists is used):
``--config PATH`` > ``$SOULFRAME_CONFIG`` > ``<workspace>/soulframe.toml`` (or ``.json``) >
the user config dir (``platformdirs.user_config_dir("soulframe")/soulframe.toml``) > (when no
workspace is given) the default workspace's ``soulframe.toml``.

One module, over the usual size, because loading, validating and locating a value are one
job over one table of keys; the key table is most of its length.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .model import PROMPT_MODES, AgentSpec, ConfigError


@attrs.frozen
class Key:
    """One configuration key: its default, accepted types, allowed values, range and help."""

    default: Any
    types: tuple[type, ...]
    help: str = ""
    choices: tuple[Any, ...] | None = None
    #: the seed the default comes from, shown by `config show`
    seed: str = ""
    #: inclusive bounds of a number (``None``: unbounded on that side)
    min: float | None = None
    max: float | None = None
    #: a path: a relative one in a config file is relative to that file
    path: bool = False
    #: the plugin that declared it ("" for the core), set when the catalogue is built
    plugin: str = ""
    #: the accepted types of a list's items or a table's values (``None``: not checked)
    items: tuple[type, ...] | None = None


def K(
    default: Any,
    help: str = "",
    *,
    types: tuple[type, ...] | None = None,
    choices: tuple[Any, ...] | None = None,
    seed: str = "",
    min: float | None = None,
    max: float | None = None,
    path: bool = False,
    items: tuple[type, ...] | None = None,
) -> Key:
    """A :class:`Key`; ``types`` defaults to the type of ``default`` (an int default accepts
    only ints, a float default floats and ints); ``items``, the types a list's items or a
    table's values must have."""
    if types is None:
        if isinstance(default, bool):
            types = (bool,)
        elif isinstance(default, int):
            types = (int,)
        elif isinstance(default, float):
            types = (float, int)
        elif isinstance(default, str):
            types = (str,)
        elif isinstance(default, list):
            types = (list,)
        elif isinstance(default, dict):
            types = (dict,)
        else:
            types = (str,)
    return Key(default, types, help, choices, seed, min, max, path, items=items)


NONE = type(None)

# Every default lives here. Where the seeds disagree the chosen value is documented in help.
DEFAULTS: dict[str, Key] = {
    # ----------------------------------------------------------------- workspace and state
    "workspace": K("~/.soulframe/workspace", "workspace of the default agent", path=True),
    "state_dir": K("~/.soulframe/state", "where indexes, audit logs and caches live", path=True),
    "timezone": K(None, "IANA timezone for dates and daily logs; empty = system local", types=(str, NONE)),
    "agent_type": K("open", "type of the default agent", choices=("open", "predefined"), seed="000 §4"),
    # ----------------------------------------------------------------- plugins
    "plugins.disabled": K([], "plugin names to block before loading (see `soulframe plugins`)", items=(str,)),
    # ----------------------------------------------------------------- bootstrap files
    "bootstrap.max_chars_per_file": K(20_000, "per-file limit before head/tail truncation", seed="000 §2, 001, 003"),
    "bootstrap.total_max_chars": K(
        24_000,
        "total chars of all context files; 000 uses 24,000, 001 150,000: the smaller keeps "
        "prompts cheap and prompt.budget_tokens still governs the whole prompt",
        seed="000 §2",
    ),
    "bootstrap.min_file_budget": K(64, "stop adding files once less than this remains", seed="000 §2"),
    "bootstrap.head_ratio": K(0.70, "share of a truncated file kept from its start", seed="000 §2"),
    "bootstrap.tail_ratio": K(0.20, "share of a truncated file kept from its end", seed="000 §2"),
    "bootstrap.truncation": K("head-tail", "truncation policy: head-tail (the seeds') or fair"),
    # ----------------------------------------------------------------- prompt
    "prompt.budget_tokens": K(24_000, "token budget for the whole system prompt", seed="002"),
    "prompt.max_window_share": K(
        0.25, "the prompt never takes more than this share of model.context_window (a 8K-token "
        "local model gets a 2,000-token prompt); 0 turns the scaling off", seed="002"),
    "prompt.mode": K(None, "default prompt mode for agents that set none", types=(str, NONE), choices=(None, *PROMPT_MODES)),
    "prompt.tokenizer": K("estimate", "token estimator: estimate (per-script rates fitted to cl100k, no download) or tiktoken"),
    "prompt.disabled_sections": K([], "section names to leave out of every prompt", items=(str,)),
    "prompt.cache_boundary": K("<!-- SOULFRAME_CACHE_BOUNDARY -->", "marker between the cached prefix and the dynamic suffix", seed="002"),
    "prompt.extra": K("", "extra system prompt text (section 10, <extra_context>)"),
    "prompt.heartbeat_light_context": K(True, "heartbeat sessions get only HEARTBEAT.md, AGENTS.md and TOOLS.md"),
    "prompt.channel_hints": K({}, "channel name -> formatting hint (section 9.5)", items=(str,)),
    "prompt.group_title_max_chars": K(100, "group chat titles are sanitised and cut to this", seed="002"),
    "prompt.stable_files": K(
        ["AGENTS.md", "AGENTS_CORE.md", "AGENTS_TASK.md", "CAPABILITIES.md", "USER_PREDEFINED.md", "TOOLS.md", "HEARTBEAT.md"],
        "context files shown above the cache boundary; the others (USER.md, BOOTSTRAP.md, MEMORY.md, daily logs) go below it",
        seed="002", items=(str,),
    ),
    "model.aliases": K({}, "short names for chat models, used by -m: {fast = \"openai/gpt-4o-mini\"}", items=(str,)),
    "model.context_window": K(200_000, "the chat model's context window in tokens: the prompt budget scales down to fit a small one", min=1),
    # ----------------------------------------------------------------- identity
    "ui.assistant_name": K(None, "display name override (highest in the identity chain)", types=(str, NONE), seed="003 §1.3"),
    "ui.assistant_avatar": K(None, "avatar override", types=(str, NONE), seed="003 §1.3"),
    "ui.assistant_emoji": K(None, "emoji override", types=(str, NONE)),
    # ----------------------------------------------------------------- sandbox
    "sandbox.enabled": K(False, "the agent runs tools in a container", seed="002"),
    "sandbox.container_dir": K("/workspace", "workdir inside the container", seed="002"),
    "sandbox.access": K("rw", "workspace access from the sandbox", choices=("none", "ro", "rw"), seed="002"),
    # ----------------------------------------------------------------- skills
    "skills.mode": K("auto", "inline, search, or auto (inline while small enough)", choices=("auto", "inline", "search"), seed="000 §9"),
    "skills.inline_max_count": K(20, "inline mode only up to this many skills", seed="000 §9"),
    "skills.inline_max_tokens": K(3_500, "inline mode only up to this many tokens of names+descriptions", seed="000 §9"),
    "skills.max_in_prompt": K(150, "at most this many skills listed in a prompt", seed="001 §4"),
    "skills.max_prompt_bytes": K(30 * 1024, "at most this many bytes of skills block", seed="001 §4"),
    "skills.max_skill_file_bytes": K(256 * 1024, "a larger SKILL.md is skipped with a warning", seed="001 §4"),
    "skills.bm25_k1": K(1.2, "BM25 k1", seed="000 §10"),
    "skills.bm25_b": K(0.75, "BM25 b", seed="000 §10"),
    "skills.max_results": K(5, "skill_search results", seed="000 §10"),
    "logs.enabled": K(True, "log every chat-model call (when, model, tokens, outcome; never the text) for `soulframe logs`"),
    "logs.retention_days": K(90, "days a logged chat-model call is kept", min=1),
    "skills.min_score": K(0.2, "a skill no query word matches is returned only when its calibrated vector score (as memory.min_score) reaches this", min=0, max=1),
    "skills.text_weight": K(0.3, "BM25 weight in hybrid skill search", seed="000 §11"),
    "skills.vector_weight": K(0.7, "vector weight in hybrid skill search", seed="000 §11"),
    "skills.watch_debounce_ms": K(500, "hot-reload debounce", seed="000 §13"),
    "skills.personal_dir": K("~/.agents/skills", "tier 3: personal agent skills", seed="000 §8", path=True),
    "skills.global_dir": K("~/.soulframe/skills", "tier 4: global skills", seed="000 §8", path=True),
    "skills.extra_dirs": K([], "more skill roots, searched at tier 4", items=(str,)),
    "skills.pinned": K([], "skill names listed in minimal-mode (sub-agent) prompts", seed="002", items=(str,)),
    # ----------------------------------------------------------------- memory
    "memory.enabled": K(True, "index memory files and offer the memory tools"),
    "memory.extra_paths": K([], "more files or directories (inside the workspace) to index", items=(str,)),
    "memory.chunk_max_chars": K(1_000, "chunk size", seed="000 §14"),
    "memory.text_weight": K(0.6, "keyword weight in hybrid search (the seeds' 0.3 lost to the keyword channel alone on real conversations: docs/memory.md)", seed="000 §15, 001"),
    "memory.vector_weight": K(0.4, "vector weight in hybrid search", seed="000 §15, 001"),
    "memory.max_results": K(6, "results per search", seed="001 §3"),
    "memory.min_score": K(0.35, "drop results below this fused score (vector scores calibrated per model, see memory.calibration)", seed="001 §3"),
    "memory.calibration": K("background", "vector scores: background (calibrated against the model's own similarity of unrelated text, so min_score means the same for every model; see docs/memory.md) or raw (the cosine)", choices=("background", "raw")),
    "memory.fusion": K("coverage", "how keyword and vector scores merge: coverage (the weighted sum, the keyword weight scaled by how much of the question the keyword channel finds; measured best, see docs/memory.md), weighted (the seeds' plain weighted sum), anchored, rrf, minmax", choices=("anchored", "weighted", "coverage", "rrf", "minmax")),
    "memory.vector_share": K(0.33, "in hybrid search, this share of the results (2 of 6) is kept for the vector channel's best candidates not already ranked above them, so a question whose words fill every place with turns that merely say them still shows the best answer by meaning (0: by fused score alone; see docs/memory.md)", types=(int, float), min=0, max=1),
    "memory.hit_chars": K(1_400, "a hit cites the lines around its chunk too, up to this many characters (0: the chunk alone; see docs/memory.md)", min=0),
    "memory.embed_window_chars": K(160, "a chunk is embedded as passages of about this many characters; its vector score is its best passage's"),
    "memory.chunk_context": K(0.5, "a vector hit's score blends its best passage's similarity with its whole chunk's (the mean of its passages) at this weight, so a short turn is scored with the conversation around it (0: the best passage alone; a chunk holding list items, such as remembered notes, always scores by its best passage; see docs/memory.md)", types=(int, float), min=0, max=1),
    "memory.query_focus": K(0.6, "the vector channel embeds the question as asked and without the names most chunks hold (see memory.common_names), and mixes the two at this weight: a name every chunk of a conversation holds no longer pulls the question towards the turns that merely say it (0: the question as asked; see docs/memory.md)", types=(int, float), min=0, max=1),
    "memory.common_names": K(0.3, "a name in a question (a word with a capital letter inside a sentence) held by more than this share of the chunks a search sees is left out of the focused question (memory.query_focus); the store counts the chunks", types=(int, float), min=0, max=1),
    "memory.user_scope_boost": K(1.2, "boost of a user's own memories over the agent's", seed="000 §15"),
    "memory.citations": K("auto", "cite path#lines in answers", choices=("on", "off", "auto"), seed="001 §3"),
    "memory.watch_debounce_ms": K(1_500, "watcher debounce", seed="000 §13"),
    "memory.sync_interval_s": K(300.0, "a long-lived `serve` syncs memory at start and every this many seconds (0: only at start and on search)", types=(int, float), min=0, seed="001"),
    "memory.rescan_s": K(30.0, "a search walks the memory files at most this often unless a directory or a recently changed file moved (see docs/memory.md; 0: walk before every search)", types=(int, float), min=0),
    "memory.mmr": K(False, "diversify results with maximal marginal relevance"),
    "memory.mmr_lambda": K(0.7, "MMR relevance/diversity trade-off"),
    "memory.temporal_decay": K(False, "dated daily logs decay with age; MEMORY.md is evergreen"),
    "memory.half_life_days": K(60.0, "age at which a daily log's score is halved"),
    "memory.max_file_bytes": K(5 * 1024 * 1024, "larger memory files are skipped with a warning"),
    "memory.chunker": K("lines", "how memory files are cut into chunks (see `soulframe plugins`); changing it re-indexes"),
    "memory.reranker": K("none", "re-ranker run on the fused candidates before min_score (see `soulframe plugins`)"),
    "memory.rerank_candidates": K(30, "how many fused candidates the re-ranker sees", min=1, max=1000),
    "memory.rerank_timeout_s": K(5.0, "a slower re-ranker is skipped (the fused order is kept, and the result says so)", min=0),
    "memory.mask_secrets": K(True, "mask secrets (API keys, tokens, passwords) found in memory and context files in what reaches a model: the prompt, memory_get and memory_search results; false shows them as written (the search index never holds them either way)"),
    "memory.write_safety": K("refuse", "text that looks like a prompt injection or holds a secret, on its way into a memory or context file: refuse (quarantine it), warn (write it, keep a copy in quarantine) or allow", choices=("refuse", "warn", "allow")),
    "memory.recall_tracking": K(True, "count the hits search returns (recalls, distinct queries, last recalled) for consolidation"),
    "memory.consolidate.min_recalls": K(3, "a daily-log entry is a consolidation candidate after this many recalls"),
    "memory.consolidate.min_queries": K(3, "... by at least this many distinct queries"),
    "memory.consolidate.min_age_days": K(1, "... when its daily log is at least this many days old"),
    "memory.consolidate.min_score": K(0.0, "... and its best search score reached this"),
    "memory.consolidate.max_candidates": K(20, "candidates sent to the model per run"),
    "memory.consolidate.max_removed_share": K(0.25, "refuse a run that would remove (or supersede) more than this share of MEMORY.md's entries"),
    "memory.consolidate.dedupe_similarity": K(0.9, "not used any more (still accepted, so a config that sets it loads): a run without a model removes only entries that repeat an earlier one word for word, since entries merely similar can differ in a time or a code"),
    "memory.consolidate.on_heartbeat": K(False, "run consolidation after each heartbeat that reached the model (seed 003 §2.5); off by default: it edits MEMORY.md and may call the model"),
    "memory.consolidate.entities": K(False, "let consolidation maintain bank/entities/<name>.md pages (asks the model for entities)"),
    "memory.session.save_on_end": K(True, "save a conversation to memory when a host ends a session (agent.end_session; a main session's as private memory)"),
    "memory.session.turns": K(12, "turns save-session keeps when there is no model to summarise"),
    "memory.session.max_transcript_bytes": K(16 * 1024 * 1024, "a transcript save-session reads may be at most this big (an endless input stops here)"),
    "memory.session.max_transcript_depth": K(32, "... and nest JSON lists/objects at most this deep"),
    # ----------------------------------------------------------------- store
    "store.backend": K("sqlite", "storage backend (see `soulframe plugins`); postgres when only $SOULFRAME_DSN is set"),
    "store.path": K(None, "SQLite file; default <state_dir>/memory/<agent>.sqlite", types=(str, NONE), path=True),
    "store.dsn": K(None, "PostgreSQL DSN (or $SOULFRAME_DSN)", types=(str, NONE)),
    # ----------------------------------------------------------------- embeddings
    "embedding.provider": K("auto", "local, openai, gemini, openai-compatible, none, or auto"),
    "embedding.auto_order": K(["local", "openai", "gemini"], "providers tried by auto, in order", items=(str,)),
}

#: keys under these prefixes are free-form (a plugin's own settings)
FREEFORM_PREFIXES = ("plugins.config.",)

AGENT_KEYS: dict[str, Key] = {
    "id": K("default", "agent id"),
    "workspace": K(None, "the agent's workspace", types=(str, NONE)),
    "type": K("open", "open or predefined", choices=("open", "predefined")),
    "identity": K({}, "name / emoji / avatar overrides", items=(str,)),
    "prompt_mode": K(None, "default prompt mode", types=(str, NONE), choices=(None, *PROMPT_MODES)),
    "self_evolve": K(False, "predefined agents may update SOUL.md"),
    "timezone": K(None, "IANA timezone", types=(str, NONE)),
    "owner_ids": K([], "owner ids (section 7)", items=(str, int)),
    "extra_prompt": K(None, "extra system prompt", types=(str, NONE)),
    "options": K({}, "free-form settings plugins read (team, delegation, ...)"),
}

def _tables(keys: Mapping[str, Key]) -> set[str]:
    """Dotted prefixes that are tables, e.g. "memory", "embedding", "embedding.local"."""
    return {k.rsplit(".", i)[0] for k in keys for i in range(1, k.count(".") + 1)} | {"plugins"}


def key_catalogue(pm: Any = None, disabled: Sequence[str] = ()) -> dict[str, Key]:
    """Every key: the core's, then each plugin's (``register_config_keys``), in plugin order.

    :param pm: the plugin manager to ask; by default one is built for ``disabled``.
    :raises ConfigError: when two owners declare one key.
    """
    from .plugins import call_in_order, make_plugin_manager, plugin_failed

    if pm is None:
        pm = make_plugin_manager(disabled)

    keys = dict(DEFAULTS)
    for plugin_name, declared in call_in_order(pm, "register_config_keys"):
        if declared is not None and not isinstance(declared, Mapping):
            plugin_failed(pm, plugin_name, "register_config_keys",
                          f"returned {type(declared).__name__}, expected a dict of name -> K(...)")
            continue
        for name, spec in (declared or {}).items():
            if not isinstance(spec, Key):
                plugin_failed(pm, plugin_name, "register_config_keys",
                              f"config key {name!r} is a {type(spec).__name__}, not a key: declare it "
                              "with soulframe.K(default, help)")
                continue
            if name in keys:
                # the first owner keeps it: commands, `plugins` and `doctor` still run
                owner = keys[name].plugin or "the core"
                plugin_failed(pm, plugin_name, "register_config_keys",
                              f"config key {name!r} is declared already by {owner}; name it "
                              f"'{plugin_name}.…'")
                continue
            keys[name] = attrs.evolve(spec, plugin=plugin_name)
    return keys


ENV_OVERRIDES = {"store.dsn": "SOULFRAME_DSN"}


def user_config_dir() -> Path:
    from .paths import config_dir

    return config_dir()


def _flatten(data: Mapping[str, Any], keys: Mapping[str, Key], prefix: str = "",
             tables: set[str] | None = None) -> dict[str, Any]:
    tables = _tables(keys) if tables is None else tables
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        if key == "agents":
            out[key] = v
        elif isinstance(v, Mapping) and key in tables and key not in keys:
            out.update(_flatten(v, keys, key + ".", tables))
        else:
            out[key] = v
    return out


def _locate(text: str, dotted: str) -> int | None:
    """Best-effort line number of a dotted key in a TOML or JSON text (1-based)."""
    parts = dotted.split(".")
    leaf = parts[-1]
    table: list[str] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        m = re.match(r"^\[\[?\s*([^\]]+?)\s*\]\]?$", s)
        if m:
            table = [p.strip().strip('"') for p in m.group(1).split(".")]
            if table == parts:  # the key is a whole table ([memroy]): its header line
                return lineno
            continue
        m = re.match(r'^"?([A-Za-z0-9_.\-]+)"?\s*[=:]', s)
        if m:
            key = [p.strip('"') for p in m.group(1).split(".")]
            full = table + key
            if full == parts or (not table and key[-1] == leaf and len(parts) >= 1 and key == parts[-len(key):]):
                return lineno
    return None


def _locate_in_agent(text: str, index: int, key: str | None = None) -> int | None:
    """Best-effort line number of ``key`` in the ``index``-th ``[[agents]]`` table of a TOML
    text (its header line when ``key`` is None or not written there); None for other forms."""
    seen = -1
    header: int | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if re.match(r"^\[\[\s*agents\s*\]\]", s):
            seen += 1
            if seen == index:
                header = lineno
            elif seen > index:
                break
            continue
        if seen != index:
            continue
        if re.match(r"^\[(?!\s*agents\s*\.)", s):  # another table: this agent's entry ended
            break
        if key is not None and re.match(rf'^"?{re.escape(key)}"?\s*=', s):
            return lineno
    return header


@attrs.frozen
class Config:
    """The effective configuration. ``get("memory.max_results")`` reads a value;
    ``origin(key)`` says where it came from."""

    values: Mapping[str, Any]
    origins: Mapping[str, str]
    path: Path | None = None
    agents: tuple[AgentSpec, ...] = ()
    plugin_settings: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    #: every known key (the core's and the loaded plugins'), see :func:`key_catalogue`
    keys: Mapping[str, Key] = attrs.field(factory=lambda: dict(DEFAULTS), repr=False, eq=False)
    #: the plugin manager the keys came from; an :class:`~soulframe.Agent` built from this
    #: config uses it, so the plugins are loaded (and a broken one reported) once
    pm: Any = attrs.field(default=None, repr=False, eq=False)

    def get(self, key: str) -> Any:
        """The value of ``key``: the user's, else the default declared with the key (the one
        place it is written; there is no per-call fallback). A key no loaded plugin
        declares (its plugin is disabled) reads as ``None``."""
        if key in self.values:
            return self.values[key]
        spec = self.keys.get(key)
        return None if spec is None else spec.default

    def __getitem__(self, key: str) -> Any:
        if key not in self.values and key not in self.keys:
            raise KeyError(key)
        return self.get(key)

    def section(self, prefix: str) -> dict[str, Any]:
        """All keys under ``prefix.`` with the prefix stripped."""
        p = prefix + "."
        return {k[len(p):]: v for k, v in self.values.items() if k.startswith(p)}

    def origin(self, key: str) -> str:
        return self.origins.get(key, "default")

    def where(self, key: str) -> str:
        """``key`` prefixed with where its value came from (``soulframe.toml:3: key``), for
        errors about a value that only a plugin can validate."""
        origin = self.origin(key)
        return key if origin == "default" else f"{origin}: {key}"

    def plugin_config(self, plugin_name: str) -> Mapping[str, Any]:
        """A plugin's own settings: ``[plugins.config.<name>]``."""
        return self.plugin_settings.get(plugin_name, {})

    def agent(self, agent_id: str | None = None) -> AgentSpec:
        if agent_id is None:
            return self.agents[0]
        for a in self.agents:
            if a.id == agent_id:
                return a
        ids = ", ".join(a.id for a in self.agents)
        raise ConfigError(f"no agent {agent_id!r} in {self.path or 'the config'}; agents: {ids}")

    def evolve(self, **overrides: Any) -> Config:
        """A copy with some keys changed (for tests and the Python API)."""
        values = dict(self.values)
        origins = dict(self.origins)
        for k, v in overrides.items():
            key = k.replace("__", ".")
            _check_override_key(key, self.keys)  # a typo would change nothing, silently
            _check_value(key, v, self.keys.get(key), "override")
            values[key] = v
            origins[key] = "override"
        pm = None if "plugins.disabled" in values and values.get("plugins.disabled") != \
            self.values.get("plugins.disabled") else self.pm
        return attrs.evolve(self, values=values, origins=origins, pm=pm)

    def to_dict(self) -> dict[str, Any]:
        return {k: self.get(k) for k in self.keys} | {
            k: v for k, v in self.values.items() if k not in self.keys
        }


def _check_value(key: str, value: Any, spec: Key | None, where: str, line: int | None = None) -> None:
    problem = _value_problem(key, value, spec)
    if problem is not None:
        loc = f"{where}{f' line {line}' if line else ''}"
        raise ConfigError(f"{loc}: {problem}", file=None if where == "override" else where, line=line,
                          key=key)


def _value_problem(key: str, value: Any, spec: Key | None) -> str | None:
    """What is wrong with ``value`` for ``key``, said after its place; None when it is fine."""
    from .config_ranges import range_problem

    if spec is None:
        return None
    ok_types = spec.types
    if isinstance(value, bool) and bool not in ok_types:
        ok = False
    else:
        ok = isinstance(value, ok_types)
    if not ok:
        expected = " or ".join("null" if t is NONE else t.__name__ for t in ok_types)
        return f"{key} = {shown_value(key, value)} — expected {expected}"
    if spec.items is not None and isinstance(value, (list, dict)):
        members = value.items() if isinstance(value, dict) else enumerate(value)
        for at, item in members:
            if not isinstance(item, spec.items) or (isinstance(item, bool) and bool not in spec.items):
                expected = " or ".join("null" if t is NONE else t.__name__ for t in spec.items)
                return (f"{key}[{at!r}] = {shown_value(key, item)} — expected {expected}"
                        + (" (quote it)" if str in spec.items else ""))
    if key == "prompt.cache_boundary" and isinstance(value, str) and value:
        text = value.strip()
        if len(text) < 8 or "\n" in text or "\r" in text or not any(c.isalnum() for c in text):
            # every copy of the marker in a file or a section is replaced (a prompt holds one):
            # "---" would take every Markdown rule, " " every space
            return (
                f"{key} = {shown_value(key, value)} — expected \"\" (no marker) or one line of "
                "at least 8 characters with a letter or digit that no file would hold, like the "
                "default '<!-- SOULFRAME_CACHE_BOUNDARY -->': every copy of the marker in the "
                "prompt's text is replaced")
    if (key == "timezone" or key.endswith(".timezone")) and isinstance(value, str) and value:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            return (f"{key} = {shown_value(key, value)} — not a known IANA timezone "
                    "(e.g. 'Europe/Berlin', 'America/New_York', 'UTC')")
    if spec.choices is not None and value not in spec.choices:
        allowed = ", ".join(repr(c) for c in spec.choices if c is not None)
        return f"{key} = {shown_value(key, value)} — expected one of {allowed}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if spec.min is not None and value < spec.min:
            return f"{key} = {shown_value(key, value)} — expected a number ≥ {spec.min:g}"
        if spec.max is not None and value > spec.max:
            return f"{key} = {shown_value(key, value)} — expected a number ≤ {spec.max:g}"
        problem = range_problem(key, value)
        if problem:
            return f"{key} = {shown_value(key, value)} — {problem}"
    return None


#: how much of a value an error message quotes
_SHOWN_CHARS = 60


def shown_value(key: str, value: Any) -> str:
    """``value`` as an error message or ``config show`` may quote it: a secret-named key's
    value (``api_key``, ``token``, ``password`` ...) or a value shaped like a credential is
    never shown, only its type; URLs lose their credentials; long values are cut."""
    from .redaction import is_secret_name, mask_secret_values

    if value is not None and is_secret_name(key.rsplit(".", 1)[-1]):
        return f"(a {_type_name(value)}, hidden: the key holds a secret)"
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, str):
        if mask_secret_values(value) != value:
            return f"(a {_type_name(value)}, hidden: it looks like a secret)"
        shown = repr(_masked_string(key, value))
        return shown if len(shown) <= _SHOWN_CHARS else shown[: _SHOWN_CHARS - 2] + "…'"
    shown = repr(mask_secrets(key, value))
    return shown if len(shown) <= _SHOWN_CHARS else shown[: _SHOWN_CHARS - 1] + "…"


def keys_holding_secrets(cfg: Config) -> list[str]:
    """The keys of ``cfg``'s config file whose values are or carry a secret (an API key, a
    token, a password in a URL or DSN), for ``doctor``'s permission check."""
    found = []
    from_file = str(cfg.path) if cfg.path else None
    for key, value in cfg.values.items():
        if from_file and cfg.origin(key).startswith(from_file) and mask_secrets(key, value) != value:
            found.append(key)
    for name, settings in cfg.plugin_settings.items():
        for key, value in settings.items():
            if mask_secrets(f"plugins.config.{name}.{key}", value) != value:
                found.append(f"plugins.config.{name}.{key}")
    return found


def _type_name(value: Any) -> str:
    return {str: "string", list: "list", dict: "table", int: "number", float: "number"}.get(
        type(value), type(value).__name__)


def mask_secrets(key: str, value: Any) -> Any:
    """``value`` of ``key`` with every secret in it masked, for ``config show``: the whole
    value of a secret-named key (``api_key``, ``token`` ...), the credentials of URLs and
    DSNs, anything shaped like a credential; tables and lists masked item by item."""
    from .redaction import MASK, is_secret_name

    leaf = key.rsplit(".", 1)[-1]
    if isinstance(value, dict):
        return {k: mask_secrets(f"{key}.{k}", v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [mask_secrets(key, v) for v in value]
    if isinstance(value, str):
        if value and is_secret_name(leaf):
            return MASK
        return _masked_string(key, value)
    if value is not None and not isinstance(value, bool) and is_secret_name(leaf):
        return MASK
    return value


def _masked_string(key: str, value: str) -> str:
    """A string value as shown: an endpoint (``*url``, ``*dsn``, ``*endpoint``) loses its
    userinfo and every query value, any other string the credentials of its URLs."""
    from .redaction import redact_endpoint, redact_urls

    leaf = key.rsplit(".", 1)[-1].lower()
    if leaf.endswith(("url", "dsn", "endpoint")) and "://" in value:
        return redact_endpoint(value.strip())
    return redact_urls(value)


def _check_override_key(key: str, keys: Mapping[str, Key]) -> None:
    if key not in keys and not key.startswith(FREEFORM_PREFIXES):
        raise ConfigError(f"override: unknown key {key!r}{_did_you_mean(key, list(keys))}")


def _did_you_mean(key: str, known: list[str]) -> str:
    if "." not in key:
        # a misspelt [section] is compared with the sections, not with their keys: [memroy]
        # is [memory], not memory.mmr
        known = sorted({k.split(".")[0] for k in known})
    import difflib  # only for a "did you mean": kept off the start-up path

    m = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f" (did you mean {m[0]!r}?)" if m else ""


def discover_workspace(start: Path) -> Path | None:
    """The workspace the current directory is in, as git finds a repository: the nearest
    of ``start`` and its parents holding a ``soulframe.toml``, or both ``AGENTS.md`` and
    ``SOUL.md``. ``None`` outside any workspace (the configured one is used then)."""
    try:
        here = start.resolve()
    except OSError:
        return None
    for d in (here, *here.parents):
        try:
            if (d / "soulframe.toml").is_file() or ((d / "AGENTS.md").is_file() and (d / "SOUL.md").is_file()):
                return d
        except OSError:  # an unreadable parent ends the search
            return None
    return None


def find_config_file(explicit: str | os.PathLike[str] | None, workspace: Path | None) -> Path | None:
    if explicit:
        p = Path(explicit).expanduser()
        if not p.exists():
            raise ConfigError(f"--config {p}: no such file")
        return p
    env = os.environ.get("SOULFRAME_CONFIG")
    if env:
        p = Path(env).expanduser()
        if not p.exists():
            raise ConfigError(f"$SOULFRAME_CONFIG={p}: no such file")
        return p
    if workspace is not None:
        for c in (workspace / "soulframe.toml", workspace / "soulframe.json"):
            if c.is_file():
                return c
    # looked up only when the workspace has no config: finding the user config dir
    # imports platformdirs, a measurable part of `soulframe -w WS prompt`'s start-up
    ucd = user_config_dir()
    candidates = [ucd / "soulframe.toml", ucd / "soulframe.json"]
    if workspace is None:
        # no -w: the default workspace is the workspace, and `soulframe init` puts users
        # there, so its soulframe.toml must not be silently ignored
        from .paths import default_workspace

        default_ws = default_workspace()
        candidates += [default_ws / "soulframe.toml", default_ws / "soulframe.json"]
    for c in candidates:
        if c.is_file():
            return c
    return None


def _read_file(path: Path) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})", file=str(path)) from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})", file=str(path)) from exc
    try:
        if path.suffix == ".json":
            data = json.loads(text)
        else:
            data = tomllib.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} line {exc.lineno}: invalid JSON: {exc.msg}", file=str(path),
                          line=exc.lineno) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}", file=str(path)) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a table/object", file=str(path))
    return data, text


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    workspace: str | os.PathLike[str] | None = None,
    agent_id: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    search: bool = True,
    pm: Any = None,
) -> Config:
    """Load and validate the effective configuration.

    :param path: an explicit config file (``--config``).
    :param workspace: the workspace given on the command line (``--workspace``); it wins
        over the config's ``workspace`` for the selected agent, and is where
        ``soulframe.toml`` is looked for.
    :param overrides: dotted keys set programmatically (highest priority).
    :param search: look for a config file when ``path`` is not given.
    :param pm: the plugin manager whose ``register_config_keys`` declare the plugins' keys
        (default: the installed plugins less ``plugins.disabled``).
    """
    ws = Path(workspace).expanduser() if workspace else None
    if ws is None and os.environ.get("SOULFRAME_WORKSPACE"):
        ws = Path(os.environ["SOULFRAME_WORKSPACE"]).expanduser()
    if ws is None and search and not path:
        ws = discover_workspace(Path.cwd())
    cfg_path = find_config_file(path, ws) if (path or search) else None
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    plugin_settings: dict[str, dict[str, Any]] = {}
    raw_agents: list[Any] = []
    text = ""
    data: dict[str, Any] = {}
    if cfg_path is not None:
        data, text = _read_file(cfg_path)
    if pm is None:
        from .plugins import make_plugin_manager

        pm = make_plugin_manager(_disabled_in(data, cfg_path, text))
    keys = key_catalogue(pm)
    if cfg_path is not None:
        flat = _flatten(data, keys)
        for key, value in flat.items():
            line = _locate(text, key)
            where = f"{cfg_path}"
            if key == "agents":
                if not isinstance(value, list):
                    raise ConfigError(f"{where}: agents — expected a list of tables ([[agents]])")
                raw_agents = value
                continue
            if key.startswith(FREEFORM_PREFIXES):
                rest = key[len("plugins.config."):]
                name, _, sub = rest.partition(".")
                plugin_settings.setdefault(name, {})[sub] = value
                continue
            if key == "plugins.config" and isinstance(value, dict):
                for name, settings in value.items():
                    plugin_settings.setdefault(name, {}).update(settings)
                continue
            spec = keys.get(key)
            if spec is None:
                loc = f"{where}{f' line {line}' if line else ''}"
                if any(k.startswith(key + ".") for k in keys):
                    # "memory = 5": a table's name given a value
                    raise ConfigError(f"{loc}: {key} = {shown_value(key, value)} — {key} is a table of "
                                      f"settings: write them under [{key}]", file=where, line=line, key=key)
                raise ConfigError(f"{loc}: unknown key {key!r}{_did_you_mean(key, list(keys))}",
                                  file=where, line=line, key=key)
            _check_value(key, value, spec, where, line)
            if spec.path and isinstance(value, str) and value and not value.startswith("~") \
                    and not Path(value).is_absolute():
                # a relative path in a config file means relative to that file, not to
                # wherever the command happens to run
                value = str((cfg_path.parent / value).resolve())
            values[key] = value
            origins[key] = f"{cfg_path}{f':{line}' if line else ''}"
    for key, env in ENV_OVERRIDES.items():
        if os.environ.get(env):
            values[key] = os.environ[env]
            origins[key] = f"${env}"
    if os.environ.get("SOULFRAME_DSN") and "store.backend" not in values:
        # a DSN alone means PostgreSQL (what `db start` suggests); a backend set in a
        # config file, or by an override below, still wins
        values["store.backend"] = "postgres"
        origins["store.backend"] = "$SOULFRAME_DSN"
    for key, value in (overrides or {}).items():
        _check_override_key(key, keys)
        _check_value(key, value, keys.get(key), "override")
        values[key] = value
        origins[key] = "override"

    from . import paths

    home = paths.override()
    if home is not None:
        for key, folder in paths.HOME_DEFAULTS.items():
            if key not in values:
                values[key] = str(home / folder)
                origins[key] = f"${paths.ENV}"
    _check_together(values, origins)
    agents = _build_agents(raw_agents, values, cfg_path, text, ws)
    if agent_id is not None and agent_id not in {a.id for a in agents}:
        ids = ", ".join(a.id for a in agents)
        raise ConfigError(f"--agent {agent_id!r}: no such agent in {cfg_path or 'the config'}; agents: {ids}")
    if agent_id is not None:
        agents = sorted(agents, key=lambda a: a.id != agent_id)
    if ws is not None:
        first = agents[0]
        if ws.resolve() != first.workspace.resolve():
            agents[0] = attrs.evolve(first, workspace=ws, configured_workspace=first.workspace)
    return Config(values=values, origins=origins, path=cfg_path, agents=tuple(agents),
                  plugin_settings=plugin_settings, keys=keys, pm=pm)


def _disabled_in(data: Mapping[str, Any], cfg_path: Path | None, text: str) -> list[str]:
    """``plugins.disabled`` read ahead of the rest: it decides whose keys exist."""
    plugins = data.get("plugins")
    value = plugins.get("disabled", []) if isinstance(plugins, Mapping) else []
    _check_value("plugins.disabled", value, DEFAULTS["plugins.disabled"], str(cfg_path),
                 _locate(text, "plugins.disabled"))
    return [str(v) for v in value]


def _check_together(values: Mapping[str, Any], origins: Mapping[str, str]) -> None:
    """Rules between keys, which no single key's check can see."""

    def get(key: str) -> Any:
        return values.get(key, DEFAULTS[key].default)

    def at(key: str) -> str:
        return f"{origins[key]}: " if key in origins else ""

    head, tail = get("bootstrap.head_ratio"), get("bootstrap.tail_ratio")
    if head + tail > 1:
        key = "bootstrap.tail_ratio" if "bootstrap.tail_ratio" in origins else "bootstrap.head_ratio"
        raise ConfigError(
            f"{at(key)}bootstrap.head_ratio + bootstrap.tail_ratio = {head} + {tail} > 1 — "
            "a truncated file keeps head_ratio of its budget from the start and tail_ratio from "
            "the end; together they must leave room for the marker (the seeds use 0.70 + 0.20)"
        )


def _build_agents(
    raw: list[Any], values: Mapping[str, Any], cfg_path: Path | None, text: str, ws: Path | None
) -> list[AgentSpec]:
    default_ws = Path(str(values.get("workspace", DEFAULTS["workspace"].default))).expanduser()
    default_type = values.get("agent_type", DEFAULTS["agent_type"].default)
    default_mode = values.get("prompt.mode")
    if not raw:
        return [AgentSpec(id="default", workspace=default_ws, type=default_type,
                          prompt_mode=default_mode, timezone=values.get("timezone"))]
    agents: list[AgentSpec] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        header = _locate_in_agent(text, i)
        where = f"{cfg_path}{f' line {header}' if header else ''} agents[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: expected a table")
        for key, value in entry.items():
            spec = AGENT_KEYS.get(key)
            line = _locate_in_agent(text, i, key)
            if spec is None:
                raise ConfigError(f"{cfg_path}{f' line {line}' if line else ''}: agents[{i}]: unknown key "
                                  f"{key!r}{_did_you_mean(key, list(AGENT_KEYS))}",
                                  file=str(cfg_path), line=line, key=f"agents[{i}].{key}")
            _check_value(f"agents[{i}].{key}", value, spec, str(cfg_path), line)
        agent_id = str(entry.get("id", "default" if i == 0 else f"agent{i}"))
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}", agent_id):
            line = _locate_in_agent(text, i, "id")
            raise ConfigError(f"{cfg_path}{f' line {line}' if line else ''}: agents[{i}].id = {agent_id!r} "
                              "— expected letters, digits, '-', '_' or '.'")
        if agent_id in seen:
            raise ConfigError(f"{where}: duplicate agent id {agent_id!r}")
        seen.add(agent_id)
        identity = entry.get("identity", {})
        for k in identity:
            if k not in ("name", "emoji", "avatar", "creature", "vibe"):
                raise ConfigError(f"{where}: identity.{k} — unknown; expected name, emoji, avatar, creature or vibe")
        wsp = entry.get("workspace")
        workspace = Path(wsp).expanduser() if wsp else (
            default_ws if i == 0 else default_ws.parent / f"workspace-{agent_id}"
        )
        if wsp and not workspace.is_absolute() and cfg_path is not None:
            workspace = (cfg_path.parent / workspace).resolve()
        agents.append(AgentSpec(
            id=agent_id,
            workspace=workspace,
            type=entry.get("type", default_type),
            identity=dict(identity),
            prompt_mode=entry.get("prompt_mode", default_mode),
            self_evolve=bool(entry.get("self_evolve", False)),
            timezone=entry.get("timezone", values.get("timezone")),
            owner_ids=tuple(str(x) for x in entry.get("owner_ids", [])),
            extra_prompt=entry.get("extra_prompt"),
            options=dict(entry.get("options", {})),
        ))
    return agents
