"""The kit for memory and store plugins: the rules a plugin that writes, indexes or stores
memory must share with the engine, so there is one answer to each question.

Public API (``__all__``, docs/api.md); imported on first use like :mod:`soulframe.kit`.

- **Memory files**: which files are memory and where they live: :data:`CURATED`
  (``MEMORY.md``), :data:`DAILY_LOG`, :data:`MEMORY_FILES`, :func:`daily_log_names`,
  :func:`is_curated`, :func:`day_of`, :class:`Discovery` (finds the :class:`MemoryFile` s), :data:`SKIP_DIRS`;
  the folders of private memory, :data:`PRIVATE_DIR` (saved sessions) and :data:`ENTITY_DIR`;
  :func:`confine_memory_path` refuses a path outside ``memory/`` (:class:`MemoryPathError`).
- **Safety**: :func:`guard` checks a write for injected instructions and secrets (per
  :func:`safety_mode_of`; :func:`scan_for_unsafe` only reports), :class:`Quarantine`,
  :class:`QuarantineEntry`, :class:`UnsafeWriteError`, :class:`UnsafeWriteWarning`;
  :func:`strip_controls`.
- **Provenance comments** on memory lines: :class:`Provenance`, :func:`mark_provenance`,
  :func:`mark_new_lines`, :func:`parse_provenance`, :func:`strip_provenance`,
  :func:`clean_provenance`.
- **Sessions and transcripts**: :func:`save_session`, :func:`load_messages`,
  :func:`read_transcript`, :func:`parse_messages`, :func:`loads_bounded`, :func:`release`,
  :class:`SessionLimits`.
- **Consolidation**: :func:`consolidate`, :func:`apply_reviewed`, :func:`undo_last`,
  :data:`DIARY`, :data:`UNDO_DIR`.
- **Indexing and search**: :data:`MAX_QUERY_CHARS` (the longest query), :func:`chunk_file`, :func:`passage_windows`,
  :func:`drop_superseded`, :func:`is_superseded_chunk`, :func:`query_terms`,
  :func:`term_coverage` (the share of a query's terms a text holds, as search counts them),
  :func:`without_noise`, :func:`recall_key`; the embedding cache (:class:`EmbeddingCache`,
  :class:`InMemoryCacheBackend`, keyed by :func:`text_hash`), :func:`vector_to_bytes`,
  :func:`vector_from_bytes`.
- **Users and per-user context files** (the contract every store serves):
  :class:`UserMemory`, :func:`effective_user`, :func:`check_user`,
  :func:`sees_owner_memory`, :func:`context_store`, :func:`is_managed`,
  :func:`is_context_file`, :func:`agent_level_files`, :func:`user_level_files`,
  :data:`CONTEXT_FILES`, :data:`BOOTSTRAP`, :func:`standalone_agent_id`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from soulframe._engine.reexport import lazy_exports

if TYPE_CHECKING:
    from soulframe._engine.agentstore import (
        BOOTSTRAP,
        CONTEXT_FILES,
        agent_level_files,
        context_store,
        effective_user,
        is_context_file,
        is_managed,
        sees_owner_memory,
        standalone_agent_id,
        user_level_files,
    )
    from soulframe._engine.embedding import (
        EmbeddingCache,
        InMemoryCacheBackend,
        text_hash,
        vector_from_bytes,
        vector_to_bytes,
    )
    from soulframe._engine.memory.consolidate import (
        DIARY,
        UNDO_DIR,
        apply_reviewed,
        consolidate,
        undo_last,
    )
    from soulframe._engine.memory.files import (
        CURATED,
        DAILY_LOG,
        ENTITY_DIR,
        PRIVATE_DIR,
        SKIP_DIRS,
        Discovery,
        MemoryFile,
        MemoryPathError,
        confine_memory_path,
        day_of,
        is_curated,
    )
    from soulframe._engine.memory.fusion import (
        term_coverage,
    )
    from soulframe._engine.memory.noise import (
        without_noise,
    )
    from soulframe._engine.memory.passages import passage_windows
    from soulframe._engine.memory.pipeline import (
        chunk as chunk_file,
    )
    from soulframe._engine.memory.provenance import (
        Provenance,
        mark_new_lines,
    )
    from soulframe._engine.memory.provenance import (
        clean as clean_provenance,
    )
    from soulframe._engine.memory.provenance import (
        mark as mark_provenance,
    )
    from soulframe._engine.memory.provenance import (
        parse as parse_provenance,
    )
    from soulframe._engine.memory.provenance import (
        strip as strip_provenance,
    )
    from soulframe._engine.memory.querying import (
        query_terms,
    )
    from soulframe._engine.memory.recall import (
        recall_key,
    )
    from soulframe._engine.memory.safety import (
        Quarantine,
        QuarantineEntry,
        UnsafeWriteError,
        UnsafeWriteWarning,
        guard,
    )
    from soulframe._engine.memory.safety import (
        mode_of as safety_mode_of,
    )
    from soulframe._engine.memory.safety import (
        scan as scan_for_unsafe,
    )
    from soulframe._engine.memory.sessions import (
        Limits as SessionLimits,
    )
    from soulframe._engine.memory.sessions import (
        load_messages,
        loads_bounded,
        parse_messages,
        read_transcript,
        release,
        save_session,
    )
    from soulframe._engine.memory.supersede import (
        drop_superseded,
        is_superseded_chunk,
    )
    from soulframe._engine.memory.textclean import (
        strip_controls,
    )
    from soulframe._engine.memory.users import (
        UserMemory,
    )
    from soulframe._engine.model import MAX_QUERY_CHARS, check_user
    from soulframe._engine.prompt.context import (
        MEMORY_FILES,
        daily_log_names,
    )

#: where each name lives in the engine (``module`` or ``module:attribute`` when the public
#: name differs): imported on first use, so importing this module costs nothing
_HOMES: dict[str, str] = {
    "agent_level_files": "soulframe._engine.agentstore",
    "apply_reviewed": "soulframe._engine.memory.consolidate",
    "BOOTSTRAP": "soulframe._engine.agentstore",
    "check_user": "soulframe._engine.model",
    "chunk_file": "soulframe._engine.memory.pipeline:chunk",
    "clean_provenance": "soulframe._engine.memory.provenance:clean",
    "confine_memory_path": "soulframe._engine.memory.files",
    "consolidate": "soulframe._engine.memory.consolidate",
    "CONTEXT_FILES": "soulframe._engine.agentstore",
    "context_store": "soulframe._engine.agentstore",
    "CURATED": "soulframe._engine.memory.files",
    "MAX_QUERY_CHARS": "soulframe._engine.model",
    "ENTITY_DIR": "soulframe._engine.memory.files",
    "PRIVATE_DIR": "soulframe._engine.memory.files",
    "DAILY_LOG": "soulframe._engine.memory.files",
    "daily_log_names": "soulframe._engine.prompt.context",
    "day_of": "soulframe._engine.memory.files",
    "DIARY": "soulframe._engine.memory.consolidate",
    "Discovery": "soulframe._engine.memory.files",
    "MemoryFile": "soulframe._engine.memory.files",
    "drop_superseded": "soulframe._engine.memory.supersede",
    "effective_user": "soulframe._engine.agentstore",
    "EmbeddingCache": "soulframe._engine.embedding",
    "guard": "soulframe._engine.memory.safety",
    "InMemoryCacheBackend": "soulframe._engine.embedding",
    "is_context_file": "soulframe._engine.agentstore",
    "is_curated": "soulframe._engine.memory.files",
    "is_managed": "soulframe._engine.agentstore",
    "is_superseded_chunk": "soulframe._engine.memory.supersede",
    "load_messages": "soulframe._engine.memory.sessions",
    "loads_bounded": "soulframe._engine.memory.sessions",
    "mark_new_lines": "soulframe._engine.memory.provenance",
    "mark_provenance": "soulframe._engine.memory.provenance:mark",
    "MEMORY_FILES": "soulframe._engine.prompt.context",
    "MemoryPathError": "soulframe._engine.memory.files",
    "parse_messages": "soulframe._engine.memory.sessions",
    "parse_provenance": "soulframe._engine.memory.provenance:parse",
    "passage_windows": "soulframe._engine.memory.passages",
    "Provenance": "soulframe._engine.memory.provenance",
    "Quarantine": "soulframe._engine.memory.safety",
    "QuarantineEntry": "soulframe._engine.memory.safety",
    "query_terms": "soulframe._engine.memory.querying",
    "term_coverage": "soulframe._engine.memory.fusion",
    "read_transcript": "soulframe._engine.memory.sessions",
    "recall_key": "soulframe._engine.memory.recall",
    "release": "soulframe._engine.memory.sessions",
    "safety_mode_of": "soulframe._engine.memory.safety:mode_of",
    "save_session": "soulframe._engine.memory.sessions",
    "scan_for_unsafe": "soulframe._engine.memory.safety:scan",
    "sees_owner_memory": "soulframe._engine.agentstore",
    "SessionLimits": "soulframe._engine.memory.sessions:Limits",
    "SKIP_DIRS": "soulframe._engine.memory.files",
    "standalone_agent_id": "soulframe._engine.agentstore",
    "strip_controls": "soulframe._engine.memory.textclean",
    "strip_provenance": "soulframe._engine.memory.provenance:strip",
    "text_hash": "soulframe._engine.embedding",
    "UNDO_DIR": "soulframe._engine.memory.consolidate",
    "undo_last": "soulframe._engine.memory.consolidate",
    "UnsafeWriteError": "soulframe._engine.memory.safety",
    "UnsafeWriteWarning": "soulframe._engine.memory.safety",
    "user_level_files": "soulframe._engine.agentstore",
    "UserMemory": "soulframe._engine.memory.users",
    "vector_from_bytes": "soulframe._engine.embedding",
    "vector_to_bytes": "soulframe._engine.embedding",
    "without_noise": "soulframe._engine.memory.noise",
}

__all__ = [
    "BOOTSTRAP",
    "CONTEXT_FILES",
    "CURATED",
    "DAILY_LOG",
    "DIARY",
    "Discovery",
    "ENTITY_DIR",
    "EmbeddingCache",
    "InMemoryCacheBackend",
    "MAX_QUERY_CHARS",
    "MEMORY_FILES",
    "MemoryFile",
    "MemoryPathError",
    "PRIVATE_DIR",
    "Provenance",
    "Quarantine",
    "QuarantineEntry",
    "SKIP_DIRS",
    "SessionLimits",
    "UNDO_DIR",
    "UnsafeWriteError",
    "UnsafeWriteWarning",
    "UserMemory",
    "agent_level_files",
    "apply_reviewed",
    "check_user",
    "chunk_file",
    "clean_provenance",
    "confine_memory_path",
    "consolidate",
    "context_store",
    "daily_log_names",
    "day_of",
    "drop_superseded",
    "effective_user",
    "guard",
    "is_context_file",
    "is_curated",
    "is_managed",
    "is_superseded_chunk",
    "load_messages",
    "loads_bounded",
    "mark_new_lines",
    "mark_provenance",
    "parse_messages",
    "parse_provenance",
    "passage_windows",
    "query_terms",
    "read_transcript",
    "recall_key",
    "release",
    "safety_mode_of",
    "save_session",
    "scan_for_unsafe",
    "sees_owner_memory",
    "standalone_agent_id",
    "strip_controls",
    "strip_provenance",
    "term_coverage",
    "text_hash",
    "undo_last",
    "user_level_files",
    "vector_from_bytes",
    "vector_to_bytes",
    "without_noise",
]


# hidden from type checkers, which read the names from the imports above: a module
# __getattr__ would make them accept any name, misspelt ones included
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
