"""soulframe — the identity, memory and skills layer of personal AI agents.

This package is the front door: the value types and protocols every plugin shares
(``Session``, ``ContextFile``, ``Registration``, ``Store``, ``EmbeddingProvider``,
``AgentLike``, …), the engine's ``Agent`` and ``Config``, the configuration keys ``K`` and
``Key``, the errors, and ``hookimpl``. Plugins write ``from soulframe import hookimpl``.

The public API is six modules, listed with what each holds in docs/api.md:

- ``soulframe`` (this package),
- ``soulframe.hookspecs`` (every hook a plugin can implement),
- ``soulframe.kit`` (helpers: HTTP with secret masking, redaction, the tool loop,
  conversation text, neutralising, workspace files, prompt helpers),
- ``soulframe.memorykit`` (the rules memory and store plugins share with the engine),
- ``soulframe.cli`` (extending the ``soulframe`` command line),
- ``soulframe.testing`` (contract suites and ``make_agent`` for a plugin's tests).

Everything else is the engine's and may change. ``Agent``, ``Config``, ``K``, ``Key`` and
``SyncReport`` are imported on first use so that ``import soulframe`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from soulframe._engine.model import (
    CHAT_MODELS,
    CHUNKERS,
    CONTEXT_SOURCES,
    EMBEDDING_PROVIDERS,
    PROMPT_MODES,
    RERANKERS,
    SESSION_KINDS,
    STORES,
    TOKEN_ESTIMATORS,
    TRUNCATION_POLICIES,
    AgentLike,
    AgentSpec,
    AgentType,
    Candidate,
    ChatModel,
    ChatReply,
    CheckedAgent,
    Chunk,
    Chunker,
    ChunkInput,
    CommonWords,
    ConfigError,
    ContextFile,
    ContextFileStore,
    ContextSource,
    CountingStore,
    CountsTokens,
    Describes,
    DoctorCheck,
    EmbeddingProvider,
    ErasingStore,
    ExplainsUnavailability,
    FileRecord,
    Finding,
    FindsFiles,
    Fix,
    Identity,
    MarksUserFiles,
    MemoryLike,
    MovesRecalls,
    PathEscapeError,
    PromptContext,
    RebuildsWhenCorrupt,
    Recall,
    RecallStat,
    Registration,
    Registry,
    RenderedSection,
    Reranker,
    SearchHit,
    Section,
    ServesContextFiles,
    Session,
    Settings,
    Skill,
    SkillHit,
    SkillsLike,
    SkillSource,
    SoulframeError,
    SoulframeWarning,
    Store,
    StoredChunk,
    StoreRegistration,
    StoreStats,
    SystemPrompt,
    ToolCall,
    ToolContext,
    ToolSpec,
    TracksRecalls,
    TruncationNotice,
    TruncationPolicy,
    Vector,
    WorkspaceLike,
    WorkspaceNotFoundError,
    WorkspaceTemplate,
)

from .hookspecs import hookimpl

if TYPE_CHECKING:
    from soulframe._engine.agent import Agent
    from soulframe._engine.config import Config, K, Key
    from soulframe._engine.memory.results import SyncReport

__all__ = [
    "Agent",
    "AgentLike",
    "AgentSpec",
    "AgentType",
    "CHAT_MODELS",
    "CHUNKERS",
    "Candidate",
    "CONTEXT_SOURCES",
    "ChatModel",
    "ChatReply",
    "CheckedAgent",
    "Chunk",
    "ChunkInput",
    "Chunker",
    "CommonWords",
    "Config",
    "ConfigError",
    "ContextFile",
    "ContextFileStore",
    "ContextSource",
    "CountingStore",
    "CountsTokens",
    "Describes",
    "DoctorCheck",
    "EMBEDDING_PROVIDERS",
    "EmbeddingProvider",
    "ErasingStore",
    "ExplainsUnavailability",
    "FileRecord",
    "Finding",
    "FindsFiles",
    "Fix",
    "Identity",
    "K",
    "Key",
    "MarksUserFiles",
    "MemoryLike",
    "MovesRecalls",
    "PROMPT_MODES",
    "PathEscapeError",
    "PromptContext",
    "RERANKERS",
    "RebuildsWhenCorrupt",
    "Recall",
    "RecallStat",
    "Registration",
    "Registry",
    "RenderedSection",
    "Reranker",
    "SESSION_KINDS",
    "STORES",
    "SearchHit",
    "Section",
    "ServesContextFiles",
    "Session",
    "Settings",
    "Skill",
    "SkillHit",
    "SkillSource",
    "SkillsLike",
    "SoulframeError",
    "SoulframeWarning",
    "Store",
    "SyncReport",
    "StoreRegistration",
    "StoreStats",
    "StoredChunk",
    "SystemPrompt",
    "TOKEN_ESTIMATORS",
    "TRUNCATION_POLICIES",
    "ToolCall",
    "ToolContext",
    "ToolSpec",
    "TracksRecalls",
    "TruncationNotice",
    "TruncationPolicy",
    "Vector",
    "WorkspaceLike",
    "WorkspaceNotFoundError",
    "WorkspaceTemplate",
    "hookimpl",
]


# hidden from type checkers (they read the TYPE_CHECKING imports above): a module
# __getattr__ would make them accept any name from soulframe, misspelt ones included
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        # Agent pulls in config and plugin loading; keep `import soulframe` for plugins light.
        if name == "Agent":
            from soulframe._engine.agent import Agent

            return Agent
        if name in ("Config", "K", "Key"):
            from soulframe._engine import config

            return getattr(config, name)
        if name == "SyncReport":  # what memory_indexed observers receive
            from soulframe._engine.memory.results import SyncReport

            return SyncReport
        raise AttributeError(f"module 'soulframe' has no attribute {name!r}")
