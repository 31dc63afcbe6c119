"""The plugin author's kit: the helpers a plugin calls beyond the value types and protocols
in :mod:`soulframe`.

Everything here is public API (listed in ``__all__`` and on the generated API page,
docs/api.md); the modules the names come from are the engine's and may change. Names are
imported on first use, so ``from soulframe.kit import post_json`` costs no more than the one
helper it needs, and ``soulframe prompt`` stays light.

What is here:

- **HTTP with secret masking**: :func:`post_json` (retries per :class:`RetryPolicy`, the key
  never in an error or a log), :class:`Secret`, :func:`resolve_api_key`, :func:`key_source`,
  :func:`redact_endpoint`, :class:`RequestError`.
- **Redaction**: :func:`mask_for_model` (what a model may see of a text),
  :func:`looks_secret`, :func:`secret_lines`, :func:`redact_url`, :func:`redact_urls`.
- **The tool loop**: :func:`run_tool_loop` with :func:`chat_model_for`, :class:`LoopResult`,
  :class:`ToolEvent`, :class:`ChatModelError`, :class:`ChatConfigError`; :func:`dispatch`
  runs one tool, :func:`export_tools` gives a chat API the tool schemas, :class:`ToolError` is a tool's answer to bad input.
- **Conversation text** (OpenAI-style message dicts): :func:`system_message`,
  :func:`user_message`, :func:`assistant_message`, :func:`tool_result_message`,
  :func:`text_of`, :func:`tool_calls_of`, :func:`parse_arguments`, :func:`check_conversation`;
  a silent reply: :data:`NO_REPLY`, :func:`is_no_reply`.
- **Neutralising** text a model did not write before it enters a prompt: :func:`neutralise`,
  :func:`one_line`.
- **Workspace and files**: :class:`Workspace`, :func:`atomic_write`, :func:`directory_identity`, :func:`locked`,
  :func:`update_locked`, :func:`ensure_private_dir`, :func:`seed_workspace`,
  :func:`workspace_templates`, :func:`storage_full`, :class:`StorageFullError`; the sandbox's
  :func:`workspace_access`, :func:`read_only_reason`, :func:`sandbox_settings`; the user
  directories :func:`data_dir`, :func:`cache_dir`; configuration files
  :func:`load_config`, :func:`find_config_file`, :func:`user_config_dir`.
- **Prompt helpers**: the agent's clock (:func:`agent_now`, :func:`session_now`,
  :func:`agent_timezone`), which context files a session sees (:func:`visible_in_session`,
  :func:`load_merged`, :func:`where`, :data:`BOOTSTRAP_FILES`, :data:`EXTRA_CONTEXT_FILES`,
  :class:`Reached`, :data:`OWNERS_FILES`, :class:`ContextWarning`),
  :func:`heartbeat_has_tasks`, :func:`explain_identity`, :func:`section_table`.
- **Skills**: :func:`parse_skill_text`, :class:`SkillProblem`, :func:`render_skills_inline`,
  :class:`SkillLimits`.
- **Text for search indexes**: :func:`index_grams`, :func:`search_tokens` (the index words
  a query term matches besides itself: Greek and Cyrillic stems, emoji), :func:`raw_words`,
  :data:`MARKS`, :data:`UNSPACED_CLASS`.
- **Cutting text** without splitting a character as a reader sees one (a grapheme
  cluster): :func:`is_safe_cut`, :func:`safe_cut_before`, :func:`safe_cut_after`.
- **Comparing words** in every script: :func:`caseless` (ignoring case),
  :func:`search_spelling` (as keyword search spells them), :func:`fold_diacritics`.
- **Embedding errors**: :class:`EmbeddingError`, :class:`EmbeddingUnavailableError`.
- **Plugins**: :func:`make_plugin_manager` (a plugin's own tests build the CLI on it),
  :func:`collect_named` (what a named registry holds),
  :class:`PluginManager`, :func:`list_plugins`, :func:`what_each_registers` (the inspector's
  plugin page).

Store and memory plugins find their helpers in :mod:`soulframe.memorykit`, command-line
plugins theirs in :mod:`soulframe.cli`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from soulframe._engine.reexport import lazy_exports

if TYPE_CHECKING:
    from soulframe._engine.config import (
        find_config_file,
        load_config,
        user_config_dir,
    )
    from soulframe._engine.conversation import (
        NO_REPLY,
        check_conversation,
        is_no_reply,
        parse_arguments,
        text_of,
        tool_calls_of,
    )
    from soulframe._engine.conversation import (
        assistant as assistant_message,
    )
    from soulframe._engine.conversation import (
        system as system_message,
    )
    from soulframe._engine.conversation import (
        tool_result as tool_result_message,
    )
    from soulframe._engine.conversation import (
        user as user_message,
    )
    from soulframe._engine.embedding import (
        EmbeddingError,
        EmbeddingUnavailableError,
    )
    from soulframe._engine.graphemes import (
        is_safe_cut,
        safe_cut_after,
        safe_cut_before,
    )
    from soulframe._engine.http import (
        RequestError,
        RetryPolicy,
        Secret,
        key_source,
        post_json,
        resolve_api_key,
    )
    from soulframe._engine.neutralise import (
        neutralise,
        one_line,
    )
    from soulframe._engine.paths import (
        cache_dir,
        data_dir,
    )
    from soulframe._engine.plugins import (
        PluginManager,
        collect_named,
        list_plugins,
        make_plugin_manager,
        what_each_registers,
    )
    from soulframe._engine.prompt.build import (
        section_table,
    )
    from soulframe._engine.prompt.context import (
        BOOTSTRAP_FILES,
        EXTRA_CONTEXT_FILES,
        ContextWarning,
        agent_now,
        agent_timezone,
        heartbeat_has_tasks,
        load_merged,
        session_now,
        visible_in_session,
        where,
    )
    from soulframe._engine.prompt.identity import (
        explain_identity,
    )
    from soulframe._engine.prompt.reached import (
        OWNERS_FILES,
        Reached,
    )
    from soulframe._engine.redaction import (
        looks_secret,
        mask_for_model,
        redact_endpoint,
        redact_url,
        redact_urls,
        secret_lines,
    )
    from soulframe._engine.sandbox import (
        read_only_reason,
        sandbox_settings,
        workspace_access,
    )
    from soulframe._engine.skills.loader import (
        SkillProblem,
        parse_skill_text,
    )
    from soulframe._engine.skills.prompt import (
        Limits as SkillLimits,
    )
    from soulframe._engine.skills.prompt import (
        render_inline as render_skills_inline,
    )
    from soulframe._engine.textsplit import (
        MARKS,
        UNSPACED_CLASS,
        caseless,
        fold_diacritics,
        index_grams,
        raw_words,
        search_spelling,
        search_tokens,
    )
    from soulframe._engine.toolloop import (
        ChatConfigError,
        ChatModelError,
        LoopResult,
        ToolEvent,
        chat_model_for,
        run_tool_loop,
    )
    from soulframe._engine.tools import (
        ToolError,
        dispatch,
        export_tools,
    )
    from soulframe._engine.workspace import (
        StorageFullError,
        Workspace,
        atomic_write,
        directory_identity,
        ensure_private_dir,
        locked,
        seed_workspace,
        storage_full,
        update_locked,
        workspace_templates,
    )

#: where each name lives in the engine (``module`` or ``module:attribute`` when the public
#: name differs): imported on first use, so importing this module costs nothing
_HOMES: dict[str, str] = {
    "agent_now": "soulframe._engine.prompt.context",
    "agent_timezone": "soulframe._engine.prompt.context",
    "assistant_message": "soulframe._engine.conversation:assistant",
    "atomic_write": "soulframe._engine.workspace",
    "directory_identity": "soulframe._engine.workspace",
    "BOOTSTRAP_FILES": "soulframe._engine.prompt.context",
    "cache_dir": "soulframe._engine.paths",
    "caseless": "soulframe._engine.textsplit",
    "chat_model_for": "soulframe._engine.toolloop",
    "ChatConfigError": "soulframe._engine.toolloop",
    "ChatModelError": "soulframe._engine.toolloop",
    "check_conversation": "soulframe._engine.conversation",
    "collect_named": "soulframe._engine.plugins",
    "ContextWarning": "soulframe._engine.prompt.context",
    "data_dir": "soulframe._engine.paths",
    "dispatch": "soulframe._engine.tools",
    "EmbeddingError": "soulframe._engine.embedding",
    "EmbeddingUnavailableError": "soulframe._engine.embedding",
    "ensure_private_dir": "soulframe._engine.workspace",
    "explain_identity": "soulframe._engine.prompt.identity",
    "export_tools": "soulframe._engine.tools",
    "EXTRA_CONTEXT_FILES": "soulframe._engine.prompt.context",
    "find_config_file": "soulframe._engine.config",
    "fold_diacritics": "soulframe._engine.textsplit",
    "heartbeat_has_tasks": "soulframe._engine.prompt.context",
    "index_grams": "soulframe._engine.textsplit",
    "is_safe_cut": "soulframe._engine.graphemes",
    "key_source": "soulframe._engine.http",
    "list_plugins": "soulframe._engine.plugins",
    "load_config": "soulframe._engine.config",
    "load_merged": "soulframe._engine.prompt.context",
    "locked": "soulframe._engine.workspace",
    "looks_secret": "soulframe._engine.redaction",
    "LoopResult": "soulframe._engine.toolloop",
    "make_plugin_manager": "soulframe._engine.plugins",
    "MARKS": "soulframe._engine.textsplit",
    "mask_for_model": "soulframe._engine.redaction",
    "neutralise": "soulframe._engine.neutralise",
    "one_line": "soulframe._engine.neutralise",
    "OWNERS_FILES": "soulframe._engine.prompt.reached",
    "parse_arguments": "soulframe._engine.conversation",
    "parse_skill_text": "soulframe._engine.skills.loader",
    "PluginManager": "soulframe._engine.plugins",
    "post_json": "soulframe._engine.http",
    "raw_words": "soulframe._engine.textsplit",
    "Reached": "soulframe._engine.prompt.reached",
    "read_only_reason": "soulframe._engine.sandbox",
    "redact_endpoint": "soulframe._engine.redaction",
    "redact_url": "soulframe._engine.redaction",
    "redact_urls": "soulframe._engine.redaction",
    "render_skills_inline": "soulframe._engine.skills.prompt:render_inline",
    "RequestError": "soulframe._engine.http",
    "resolve_api_key": "soulframe._engine.http",
    "RetryPolicy": "soulframe._engine.http",
    "run_tool_loop": "soulframe._engine.toolloop",
    "safe_cut_after": "soulframe._engine.graphemes",
    "safe_cut_before": "soulframe._engine.graphemes",
    "sandbox_settings": "soulframe._engine.sandbox",
    "search_spelling": "soulframe._engine.textsplit",
    "search_tokens": "soulframe._engine.textsplit",
    "Secret": "soulframe._engine.http",
    "secret_lines": "soulframe._engine.redaction",
    "section_table": "soulframe._engine.prompt.build",
    "seed_workspace": "soulframe._engine.workspace",
    "session_now": "soulframe._engine.prompt.context",
    "SkillLimits": "soulframe._engine.skills.prompt:Limits",
    "SkillProblem": "soulframe._engine.skills.loader",
    "storage_full": "soulframe._engine.workspace",
    "StorageFullError": "soulframe._engine.workspace",
    "system_message": "soulframe._engine.conversation:system",
    "text_of": "soulframe._engine.conversation",
    "NO_REPLY": "soulframe._engine.conversation",
    "is_no_reply": "soulframe._engine.conversation",
    "tool_calls_of": "soulframe._engine.conversation",
    "tool_result_message": "soulframe._engine.conversation:tool_result",
    "ToolError": "soulframe._engine.tools",
    "ToolEvent": "soulframe._engine.toolloop",
    "UNSPACED_CLASS": "soulframe._engine.textsplit",
    "update_locked": "soulframe._engine.workspace",
    "user_config_dir": "soulframe._engine.config",
    "user_message": "soulframe._engine.conversation:user",
    "visible_in_session": "soulframe._engine.prompt.context",
    "what_each_registers": "soulframe._engine.plugins",
    "where": "soulframe._engine.prompt.context",
    "Workspace": "soulframe._engine.workspace",
    "workspace_access": "soulframe._engine.sandbox",
    "workspace_templates": "soulframe._engine.workspace",
}

__all__ = [
    "BOOTSTRAP_FILES",
    "ChatConfigError",
    "ChatModelError",
    "ContextWarning",
    "EXTRA_CONTEXT_FILES",
    "EmbeddingError",
    "EmbeddingUnavailableError",
    "LoopResult",
    "MARKS",
    "NO_REPLY",
    "OWNERS_FILES",
    "PluginManager",
    "Reached",
    "RequestError",
    "RetryPolicy",
    "Secret",
    "SkillLimits",
    "SkillProblem",
    "StorageFullError",
    "ToolError",
    "ToolEvent",
    "UNSPACED_CLASS",
    "Workspace",
    "agent_now",
    "agent_timezone",
    "assistant_message",
    "atomic_write",
    "cache_dir",
    "caseless",
    "chat_model_for",
    "check_conversation",
    "collect_named",
    "data_dir",
    "directory_identity",
    "dispatch",
    "ensure_private_dir",
    "explain_identity",
    "export_tools",
    "find_config_file",
    "fold_diacritics",
    "heartbeat_has_tasks",
    "index_grams",
    "is_no_reply",
    "is_safe_cut",
    "key_source",
    "list_plugins",
    "load_config",
    "load_merged",
    "locked",
    "looks_secret",
    "make_plugin_manager",
    "mask_for_model",
    "neutralise",
    "one_line",
    "parse_arguments",
    "parse_skill_text",
    "post_json",
    "raw_words",
    "read_only_reason",
    "redact_endpoint",
    "redact_url",
    "redact_urls",
    "render_skills_inline",
    "resolve_api_key",
    "run_tool_loop",
    "safe_cut_after",
    "safe_cut_before",
    "sandbox_settings",
    "search_spelling",
    "search_tokens",
    "secret_lines",
    "section_table",
    "seed_workspace",
    "session_now",
    "storage_full",
    "system_message",
    "text_of",
    "tool_calls_of",
    "tool_result_message",
    "update_locked",
    "user_config_dir",
    "user_message",
    "visible_in_session",
    "what_each_registers",
    "where",
    "workspace_access",
    "workspace_templates",
]


# hidden from type checkers, which read the names from the imports above: a module
# __getattr__ would make them accept any name, misspelt ones included
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
