"""Every extension point of soulframe, as pluggy hookspecs.

A plugin is any module or object with functions named after these hooks and decorated with
``@soulframe.hookimpl``; it is found through the ``soulframe`` entry-point group::

    [project.entry-points.soulframe]
    soulframe_weather = "soulframe_weather"

soulframe's own default plugins register through that same group, first; third-party
plugins follow, sorted by distribution name. "Later wins" below means: for the same name, a
plugin loaded later (or marked ``tryfirst``) replaces one loaded earlier, and the core warns
naming both. Implementations may accept fewer arguments than a spec lists (pluggy's opt-in
arguments), so a spec can grow without breaking plugins.

Hooks fall into four groups:

* **registries** (``register_*``) return named things; the core picks one by name from config;
* **collections** (sections, context sources, skill sources, tools, commands) are all used;
* **chains** (``transform_context_files``) pass a value through every plugin in turn;
* **observers** (``prompt_built``, ``memory_indexed``, ``before_compaction``, ``session_ended``,
  ``workspace_initialized``) are told about an event, soulframe's own first; their return
  values are ignored, and one that raises is named in a warning while the others are still
  told (the conversation is saved, the prompt built, ``init`` succeeds).

One module, over the usual size, because it is the whole contract in one place (as
pytest's and pluggy's hookspecs are): a plugin author reads this file and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import click

    from soulframe._engine.config import Key
    from soulframe._engine.memory.results import SyncReport
    from soulframe._engine.model import (
        AgentLike,
        ChatModel,
        Chunker,
        ContextFile,
        ContextSource,
        DoctorCheck,
        EmbeddingProvider,
        Registration,
        Reranker,
        Section,
        Session,
        Settings,
        SkillSource,
        StoreRegistration,
        SystemPrompt,
        ToolSpec,
        TruncationPolicy,
        WorkspaceTemplate,
    )

hookspec = pluggy.HookspecMarker("soulframe")
hookimpl = pluggy.HookimplMarker("soulframe")


# --------------------------------------------------------------------------- the prompt


@hookspec
def register_prompt_sections() -> Iterable[Section]:
    """Offer sections of the system prompt.

    Called once per :class:`~soulframe.Agent` when its first prompt is built.

    :returns: :class:`~soulframe.Section` objects. ``order`` places the section (the
        seeds' numbering: identity 1, persona 1.7, tooling 2, safety 3, skills 4, workspace 6,
        time 8, project context 11, memory recall 12.5, runtime 15, recency 16); ``modes`` the
        prompt modes it appears in; ``zone`` whether it sits above the prompt-cache boundary
        (``"stable"``) or below it (``"dynamic"``); ``truncate_priority`` how early it is cut
        when the prompt is over budget (lower first, ``None`` never); ``render(ctx)`` returns
        the text or ``None`` to be left out.

    Combined: every plugin's sections are collected and sorted by ``(order, name)``. A
    section with the name of an existing one replaces it (later wins, with a warning naming
    both plugins); to remove one, return a same-named section whose ``render`` returns
    ``None``, or list its name in ``prompt.disabled_sections``.
    """


@hookspec
def register_context_sources() -> Iterable[Registration[ContextSource]]:
    """Offer sources of context files (the workspace on disk, a store's per-user files,
    virtual files such as DELEGATION.md and TEAM.md).

    Called once per :class:`~soulframe.Agent`.

    :returns: :class:`~soulframe.Registration` objects whose ``factory(agent)``
        returns a :class:`~soulframe.ContextSource`: an object with ``name`` and
        ``load(agent, session) -> Sequence[ContextFile]``.

    Combined: every source is used. Their files are merged by name: a per-user file
    (``scope="user"``) overrides an agent-level file of the same name, and files only one
    source has are kept. Between two agent-level files of the same name, the later plugin wins.

    A virtual file (``ContextFile(kind="virtual")``) is left out of the prompt while
    BOOTSTRAP.md holds the first-run ritual, as it is right after ``soulframe init``: delete
    BOOTSTRAP.md (or finish the ritual) to see it.
    """


@hookspec
def transform_context_files(
    agent: AgentLike, session: Session, files: list[ContextFile]
) -> list[ContextFile] | None:
    """Change the merged context files before they are filtered for the session and truncated.

    Called on every prompt build, after sources are merged. soul-evil lives here: it swaps
    SOUL.md's content in memory.

    :param agent: the :class:`~soulframe.Agent`.
    :param session: the :class:`~soulframe.Session` the prompt is for.
    :param files: the files as the previous plugin in the chain left them.
    :returns: a new list, or ``None`` to leave the files unchanged. Do not mutate ``files``.

    Combined: chained in plugin load order (soulframe's own first); each implementation
    receives the previous one's output.
    """


@hookspec
def register_workspace_templates() -> Iterable[WorkspaceTemplate]:
    """Offer the files ``soulframe init`` (and :func:`soulframe.kit.seed_workspace`)
    creates in a workspace when they are missing.

    Called when a workspace is seeded.

    :returns: :class:`~soulframe.WorkspaceTemplate` objects: ``name`` is the
        workspace-relative path (ending in ``/`` for a directory), ``content`` the text,
        ``agent_types`` the agent types whose workspace gets it, ``per_user`` the agent types
        for which a store seeds it per user (seed 000 §3–4).

    Combined: every template is used, in plugin order; for the same ``name`` the later
    plugin wins (a third party can ship its own SOUL.md), with a warning naming both.
    Seeding never overwrites an existing file.
    """


@hookspec
def workspace_initialized(config: Settings | None, root: Path, download: bool, echo: Callable[[str], None]) -> None:
    """Finish the set-up after ``soulframe init`` created or completed a workspace: fetch
    what soulframe needs to work at its default settings.

    Called once per ``soulframe init``, after the files are seeded.

    soulframe's embeddings plugin downloads the offline embedding model here (once per
    user, checked against a pinned SHA-256), so memory search is semantic from the start.

    :param config: the effective :class:`~soulframe.Config` (``None`` when the
        configuration could not be read).
    :param root: the workspace directory.
    :param download: ``False`` when the user asked for nothing to be downloaded
        (``soulframe init --no-download`` or ``$SOULFRAME_NO_DOWNLOAD=1``).
    :param echo: prints one line for the user (on stderr: ``--json`` output stays clean).

    Combined: every implementation is called; return values are ignored. Report a
    failure through ``echo``: it must not make ``init`` fail.
    """


@hookspec
def register_truncation_policies() -> Iterable[Registration[TruncationPolicy]]:
    """Offer policies that fit context files and sections into their budgets.

    Called when an :class:`~soulframe.Agent` first builds a prompt.

    :returns: :class:`~soulframe.Registration` objects whose ``factory(agent)``
        returns a :class:`~soulframe.TruncationPolicy`: a ``name`` and two methods, each
        returning ``(what it kept, notices)``. ``truncate_files(files, config)`` fits the
        context files (:class:`~soulframe.ContextFile`) into the bootstrap budget, read
        from ``config`` (``bootstrap.max_chars_per_file``, ``bootstrap.total_max_chars``);
        ``enforce_budget(sections, budget_tokens, estimate)`` is given the
        :class:`~soulframe.RenderedSection` objects when the prompt is over
        ``prompt.budget_tokens`` (``estimate(text)`` counts tokens) and must not cut a
        section whose ``truncate_priority`` is ``None``. What is shortened is returned
        with ``truncated=True``; everything cut or left out gets a
        :class:`~soulframe.TruncationNotice`, so nothing is cut silently.

    Combined: a named registry; ``bootstrap.truncation`` in config selects one (default
    ``"head-tail"``, the seeds' pipeline). Same name: later wins, with a warning. A policy
    that raises or answers in another shape makes the prompt fail with an error naming it.
    """


@hookspec
def register_token_estimators() -> Iterable[Registration[Callable[[str], int]]]:
    """Offer token counters used for budgets and ``prompt --explain``.

    Called when an :class:`~soulframe.Agent` first counts tokens.

    :returns: :class:`~soulframe.Registration` objects whose ``factory(agent)``
        returns a callable ``estimate(text) -> int``.

    Combined: a named registry; ``prompt.tokenizer`` selects one (default ``"estimate"``:
    per-script rates fitted to cl100k, no download).
    """


# --------------------------------------------------------------------------- storage and search


@hookspec
def register_stores() -> Iterable[StoreRegistration]:
    """Offer storage backends for the memory index and per-user context files.

    Called once per :class:`~soulframe.Agent`, before the store is opened.

    :returns: :class:`~soulframe.Registration` objects; ``factory(agent)`` must return
        an object satisfying :class:`~soulframe.Store`. Import heavy drivers inside
        the factory, not at module level. Set ``extra`` to the pip extra that installs the
        driver (``"postgres"``) so the unknown-name error can say what to install. A store
        that is one local file declares ``location(agent) -> Path``, so ``agents list`` and
        ``doctor`` find it without opening the store.

    Combined: a named registry; ``store.backend`` selects one (default ``"sqlite"``). If two
    plugins offer the same name, the later one wins and a warning names both.
    """


@hookspec
def register_embedding_providers() -> Iterable[Registration[EmbeddingProvider]]:
    """Offer embedding providers for memory and skill search.

    Called when memory or skill search first needs an embedder, and by ``soulframe models``.

    :returns: :class:`~soulframe.Registration` objects whose ``factory(agent)``
        returns a :class:`~soulframe.EmbeddingProvider`.

    Combined: a named registry; ``embedding.provider`` selects one. ``"auto"`` is resolved by
    the core: the first provider in ``embedding.auto_order`` whose ``available()`` is true;
    when none is, search runs keyword-only and says so.
    """


@hookspec
def memory_indexed(agent: AgentLike, report: SyncReport) -> None:
    """Observe a finished memory sync.

    Called after every sync that changed the index (``memory index``, the sync a search
    starts, a watcher's re-sync): a file added, changed or removed, or an index recovered.
    A sync that found nothing to do does not call it.

    :param agent: the :class:`~soulframe.Agent`.
    :param report: the :class:`~soulframe.SyncReport` (files added, changed, removed,
        skipped, chunks embedded, seconds, warnings).

    Combined: every implementation is called; return values are ignored.
    """



@hookspec
def register_chunkers() -> Iterable[Registration[Chunker]]:
    """Offer ways to cut memory files into chunks for the index.

    Called when a memory sync first needs a chunker.

    :returns: :class:`~soulframe.Registration` objects whose ``factory(agent)``
        returns a :class:`~soulframe.Chunker`: a ``name`` and ``chunk(text, path) ->
        list[Chunk]`` (:class:`~soulframe.Chunk`: path, 1-based inclusive
        ``start_line``/``end_line`` of the lines the chunk's text came from, text).

    Combined: a named registry; ``memory.chunker`` selects one (default ``"lines"``: up to
    ``memory.chunk_max_chars`` per chunk, preferring a blank line past the half). Changing
    the chunker re-indexes every file on the next sync.
    """


@hookspec
def register_rerankers() -> Iterable[Registration[Reranker]]:
    """Offer re-rankers for memory search.

    Called when a search first needs the re-ranker that ``memory.reranker`` names.

    :returns: :class:`~soulframe.Registration` objects whose ``factory(agent)``
        returns a :class:`~soulframe.Reranker`: ``rerank(query, candidates) ->
        list[float]``, one score in [0, 1] per candidate (a :class:`~soulframe.Candidate`:
        path, lines, text, fused score), higher is better.

    Combined: a named registry; ``memory.reranker`` selects one (default ``"none"``). The
    re-ranker sees the best ``memory.rerank_candidates`` fused candidates, before
    ``min_score`` and the cut to ``max_results``; its score replaces the fused one and shows
    in each hit's breakdown. If it raises or takes longer than ``memory.rerank_timeout_s``
    the search goes on with the fused order and says so in its notice (fail open).
    """


# --------------------------------------------------------------------------- skills and tools


@hookspec
def register_skill_sources(agent: AgentLike) -> Iterable[SkillSource]:
    """Offer roots that skills are discovered in.

    Called when an :class:`~soulframe.Agent` first loads its skills, and again after a hot
    reload.

    :param agent: the :class:`~soulframe.Agent`, for its workspace and config.
    :returns: :class:`~soulframe.SkillSource` objects with a ``tier`` (1 = workspace
        ``skills/``, the highest; 5 = built-in, the lowest).

    Combined: every source is used; for a skill name found in several sources the lowest
    tier number wins, and the skill records what it shadowed. A ``load()``-backed source's
    skills are held to a SKILL.md's rules: a name with a line break, markup (``< > & "``),
    a path separator, a control or an invisible character is left out with a problem
    naming the source, and a description is put on one line.
    """


@hookspec
def register_tools() -> Iterable[ToolSpec]:
    """Offer tools the agent can call (``memory_search``, ``memory_get``, ``skill_search``...).

    Called when the Tooling section is rendered, by ``soulframe serve`` when it starts, and by
    ``soulframe tools``.

    :returns: :class:`~soulframe.ToolSpec` objects: name, description, a JSON Schema for
        the arguments and a ``handler(ctx, arguments)``.

    Combined: every tool is collected; the same name from two plugins: later wins, with a
    warning. The tools appear in the Tooling section, are served by ``soulframe serve`` and
    exported by ``soulframe tools export``.
    """


@hookspec
def register_chat_models() -> Iterable[Registration[ChatModel]]:
    """Offer chat-model clients (used by memory flush, summoning and heartbeat).

    Called when a routine first needs a chat model, and by ``soulframe models``.

    :returns: :class:`~soulframe.Registration` objects whose ``factory(agent)``
        returns a :class:`~soulframe.ChatModel`.

    Combined: a named registry; ``model.provider`` selects one.
    """


# --------------------------------------------------------------------------- command line


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add commands to the ``soulframe`` command line.

    Called once when the CLI starts, on a fresh click group.

    :param cli: the top-level :class:`click.Group`; add commands with ``@cli.command()`` or
        ``cli.add_command(...)``. Import heavy modules inside the command function so other
        commands stay fast.

    Combined: every implementation is called. A name already taken (a core command, or an
    earlier plugin's) keeps its command: the plugin's is left out with a warning naming
    both. To add a subcommand to a group (``soulframe memory ...``), use
    :func:`soulframe.cli.command_group`.
    """


# --------------------------------------------------------------------------- configuration


@hookspec
def register_config_keys() -> Mapping[str, Key]:
    """Declare this plugin's own configuration keys.

    Called once per config load (before the file is validated), so every key a plugin reads
    gets the same checks as the core's: an unknown key, a wrong type or a value out of range
    is an error naming the file, the line and the key.

    :returns: a mapping of dotted key (``"quiet_hours.start"``) to
        :class:`~soulframe.Key`, built with :func:`soulframe.K`:
        ``K(default, help, types=..., choices=..., min=..., max=...)``. Use your own table
        (a prefix no other plugin uses). The keys appear in ``soulframe config show`` and in
        the generated configuration reference.

    Combined: every plugin's keys are collected. A key the core or an earlier plugin already
    declares is an error naming both (two owners of one key would disagree on its meaning).
    Free-form settings still go under ``[plugins.config.<name>]``.
    """


# --------------------------------------------------------------------------- doctor


@hookspec
def register_doctor_checks() -> Iterable[DoctorCheck]:
    """Offer checks that ``soulframe doctor`` runs.

    Called once per ``soulframe doctor`` run.

    :returns: callables ``check(agent) -> Iterable[Finding]``, ``agent`` a
        :class:`~soulframe.CheckedAgent` (``AgentLike`` with the memory files and status, the
        skills snapshot and mode, and ``store_location()``): each yields
        :class:`~soulframe.Finding` objects (``check``, the area checked; ``level`` one of ``"problem"``,
        ``"warning"``, ``"info"``, ``message`` saying what is wrong and how to fix it, and the
        ``path`` concerned). The function's name is the check's name in the report.

    Combined: every check runs, in plugin order. A check that raises is reported as a
    problem naming it; the other checks still run.
    """


# --------------------------------------------------------------------------- lifecycle


@hookspec
def prompt_built(agent: AgentLike, prompt: SystemPrompt) -> None:
    """Observe a system prompt after it is assembled.

    Called at the end of every :meth:`~soulframe.Agent.system_prompt` build.

    :param agent: the :class:`~soulframe.Agent`.
    :param prompt: the finished :class:`~soulframe.SystemPrompt` (text, sections,
        truncation notices).

    Combined: every implementation is called; return values are ignored.
    """


@hookspec
def before_compaction(agent: AgentLike, session: Session, usage: object) -> None:
    """Observe that a host is about to compact a session's history.

    Called when a host calls ``agent.before_compaction(session, usage)``; the memory-flush plugin uses
    this moment to let the model write durable memories first (seed 000 §16).

    :param agent: the :class:`~soulframe.Agent`.
    :param session: the session being compacted.
    :param usage: a mapping (or object) describing the session now: ``total_tokens``,
        optionally ``context_window`` (default ``model.context_window``),
        ``compaction_count`` (compactions done so far in the session: it tells the
        memory flush which cycle it is in) and ``messages`` (the conversation as a list of
        ``{role, content}``: what the flush asks the model to remember from).

    Combined: every implementation is called; return values are ignored.
    """


@hookspec
def session_ended(agent: AgentLike, session: Session, messages: Sequence[Mapping[str, object]]) -> None:
    """Observe that a host ended (or reset) a session.

    Called when a host calls ``agent.end_session(session, messages)`` at the end of a conversation; the
    memory plugin saves it (a model summary, or the last turns without a model) and indexes
    it, unless ``memory.session.save_on_end`` is off: a group's to ``memory/``, any other's
    as private memory (``sessions/YYYY-MM-DD-<slug>.md``, or the user's own).

    :param agent: the :class:`~soulframe.Agent`.
    :param session: the session that ended.
    :param messages: the conversation, a list of ``{role, content}``.

    Combined: every implementation is called; return values are ignored.
    """


HOOK_NAMES: tuple[str, ...] = (
    "register_prompt_sections",
    "register_context_sources",
    "transform_context_files",
    "register_workspace_templates",
    "workspace_initialized",
    "register_truncation_policies",
    "register_token_estimators",
    "register_stores",
    "register_embedding_providers",
    "memory_indexed",
    "register_chunkers",
    "register_rerankers",
    "register_skill_sources",
    "register_tools",
    "register_chat_models",
    "register_commands",
    "register_config_keys",
    "register_doctor_checks",
    "prompt_built",
    "before_compaction",
    "session_ended",
)
__all__ = ["hookimpl", "hookspec", "HOOK_NAMES", *HOOK_NAMES]
