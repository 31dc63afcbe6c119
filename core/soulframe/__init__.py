"""soulframe — the identity, memory and skills layer of personal AI agents.

Plugins write ``from soulframe import hookimpl``. The rest of the public API is imported
lazily so that ``import soulframe`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .hookspecs import hookimpl
from .model import (
    CHAT_MODELS,
    CHUNKERS,
    CONTEXT_SOURCES,
    EMBEDDING_PROVIDERS,
    RERANKERS,
    STORES,
    TOKEN_ESTIMATORS,
    TRUNCATION_POLICIES,
    AgentLike,
    AgentSpec,
    ChatModel,
    CheckedAgent,
    Chunk,
    Chunker,
    ChunkInput,
    ContextFile,
    ContextFileStore,
    ContextSource,
    CountsTokens,
    Describes,
    EmbeddingProvider,
    ErasingStore,
    ExplainsUnavailability,
    FileRecord,
    Identity,
    MemoryLike,
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
    Store,
    StoredChunk,
    StoreRegistration,
    StoreStats,
    SystemPrompt,
    ToolContext,
    ToolSpec,
    TracksRecalls,
    TruncationPolicy,
    WorkspaceLike,
    WorkspaceNotFoundError,
)

if TYPE_CHECKING:
    from .agent import Agent
    from .config import Config

__all__ = [
    "Agent",
    "AgentLike",
    "AgentSpec",
    "CHAT_MODELS",
    "CHUNKERS",
    "CONTEXT_SOURCES",
    "ChatModel",
    "CheckedAgent",
    "Chunk",
    "ChunkInput",
    "Chunker",
    "Config",
    "ContextFile",
    "ContextFileStore",
    "ContextSource",
    "CountsTokens",
    "Describes",
    "EMBEDDING_PROVIDERS",
    "EmbeddingProvider",
    "ErasingStore",
    "ExplainsUnavailability",
    "FileRecord",
    "Identity",
    "MemoryLike",
    "PromptContext",
    "RERANKERS",
    "RebuildsWhenCorrupt",
    "Recall",
    "RecallStat",
    "Registration",
    "Registry",
    "RenderedSection",
    "Reranker",
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
    "Store",
    "StoreRegistration",
    "StoreStats",
    "StoredChunk",
    "SystemPrompt",
    "TOKEN_ESTIMATORS",
    "TRUNCATION_POLICIES",
    "ToolContext",
    "ToolSpec",
    "TracksRecalls",
    "TruncationPolicy",
    "WorkspaceLike",
    "WorkspaceNotFoundError",
    "hookimpl",
]


def __getattr__(name: str) -> Any:
    # Agent pulls in config and plugin loading; keep `import soulframe` for plugins light.
    if name == "Agent":
        from .agent import Agent

        return Agent
    if name == "Config":
        from .config import Config

        return Config
    raise AttributeError(f"module 'soulframe' has no attribute {name!r}")
