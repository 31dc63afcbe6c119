"""Reading conversations out of other assistants' exports, each into the same
:class:`Conversation`: the ChatGPT and Claude.ai data exports (``conversations.json``) and
the Claude Code and Codex session transcripts (JSON Lines). A reader yields conversations
and :class:`Unreadable` notes (a broken record is reported, never fatal) and streams: one
conversation in memory at a time.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from .streaming import JsonStreamError, iter_array

Progress = Callable[[int, int], None] | None


@attrs.frozen
class Message:
    speaker: str
    text: str
    time: _dt.datetime | None = None
    id: str | None = None


@attrs.frozen
class Conversation:
    source: str
    id: str
    title: str
    created: _dt.datetime | None
    messages: tuple[Message, ...]
    #: the file (and line) it was read from
    origin: str = ""


@attrs.frozen
class Unreadable:
    where: str
    why: str


@attrs.frozen
class MemoryFileIn:
    """A memory file of the other tool (CLAUDE.md, AGENTS.md) to bring in as it is."""

    source: str
    path: Path
    name: str


Item = Conversation | Unreadable | MemoryFileIn

SPEAKERS = {"user": "User", "human": "User", "assistant": "Assistant", "model": "Assistant"}


def when(value: Any) -> _dt.datetime | None:
    """An epoch number or an ISO 8601 string as an aware UTC datetime (``None`` if neither)."""
    if value is None or value == "":
        return None
    try:
        if isinstance(value, int | float):
            return _dt.datetime.fromtimestamp(float(value), _dt.UTC)
        text = str(value).strip().replace("Z", "+00:00")
        parsed = _dt.datetime.fromisoformat(text)
    except (ValueError, OverflowError, OSError):
        return None
    return parsed.replace(tzinfo=_dt.UTC) if parsed.tzinfo is None else parsed.astimezone(_dt.UTC)


def _text_parts(content: Any) -> str:
    """The text of a message's content: a string, or the text blocks of a list (images,
    tool calls and attachments are left out). ChatGPT's voice mode puts what was said in
    ``audio_transcription`` parts beside the audio: that transcript is the conversation."""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        if "parts" in content:
            return "\n".join(t for p in content["parts"] or () if (t := _part_text(p)))
        return str(content.get("text") or "")
    if isinstance(content, list):
        out = []
        for block in content:
            if isinstance(block, str):
                out.append(block)
            elif isinstance(block, Mapping) and block.get("type") in ("text", "input_text", "output_text"):
                out.append(str(block.get("text") or ""))
        return "\n".join(out)
    return ""


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping) and part.get("content_type") in ("audio_transcription", "text"):
        return str(part.get("text") or "")
    return ""  # an image, the audio itself


# --------------------------------------------------------------------------- ChatGPT


def chatgpt(path: Path, progress: Progress = None) -> Iterator[Item]:
    """ChatGPT's data export: ``conversations.json`` (or the folder holding it). Each
    conversation's ``mapping`` is a tree of message nodes (an edited prompt or a regenerated
    answer opens a branch); only the branch ending at ``current_node`` — what the user saw
    last — is read."""
    file = _export_file(path)
    try:
        for line, conv in iter_array(file, progress):
            where = f"{file.name} line {line}"
            try:
                yield _chatgpt_conversation(conv, where)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                yield Unreadable(where, f"not a ChatGPT conversation ({exc.__class__.__name__}: {exc})")
    except JsonStreamError as exc:
        yield Unreadable(str(file), _without_path(exc, file))


def _chatgpt_conversation(conv: Mapping[str, Any], where: str) -> Conversation | Unreadable:
    mapping = conv["mapping"]
    node_id = conv.get("current_node")
    if node_id is None or node_id not in mapping:
        # no current node: the deepest leaf of the first children is what was shown
        roots = [k for k, n in mapping.items() if not n.get("parent")]
        node_id = roots[0] if roots else None
        while node_id is not None and mapping[node_id].get("children"):
            node_id = mapping[node_id]["children"][-1]
    chain: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    while node_id is not None and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = mapping[node_id]
        chain.append(node)
        node_id = node.get("parent")
    messages = []
    for node in reversed(chain):
        msg = node.get("message")
        if not msg:
            continue
        role = (msg.get("author") or {}).get("role")
        if role not in SPEAKERS:
            continue  # system prompts, tool output
        if msg.get("recipient") not in (None, "all"):
            continue  # a tool call (code for the python tool, a browsing query), not said to the user
        content = msg.get("content")
        if isinstance(content, Mapping) and content.get("content_type") not in (None, "text", "multimodal_text"):
            continue  # code, execution output, thoughts, custom instructions: not the conversation
        meta = msg.get("metadata") or {}
        if meta.get("is_visually_hidden_from_conversation"):
            continue
        text = _text_parts(content)
        if text.strip():
            messages.append(Message(SPEAKERS[role], text, when(msg.get("create_time")), msg.get("id")))
    conv_id = str(conv.get("conversation_id") or conv.get("id") or "")
    if not conv_id:
        return Unreadable(where, "the conversation has no id")
    return Conversation("chatgpt", conv_id, str(conv.get("title") or ""), when(conv.get("create_time")),
                        tuple(messages), where)


# --------------------------------------------------------------------------- Claude.ai


def claude(path: Path, progress: Progress = None) -> Iterator[Item]:
    """The Claude.ai data export's ``conversations.json``: ``chat_messages`` in order, each
    with ``sender`` (``human`` / ``assistant``) and ``text`` (or ``content`` blocks)."""
    file = _export_file(path)
    try:
        for line, conv in iter_array(file, progress):
            where = f"{file.name} line {line}"
            try:
                messages = []
                for m in conv["chat_messages"]:
                    speaker = SPEAKERS.get(str(m.get("sender")))
                    text = m.get("text") or _text_parts(m.get("content"))
                    if speaker and text and str(text).strip():
                        messages.append(Message(speaker, str(text), when(m.get("created_at")), m.get("uuid")))
                conv_id = str(conv.get("uuid") or "")
                if not conv_id:
                    yield Unreadable(where, "the conversation has no uuid")
                    continue
                yield Conversation("claude", conv_id, str(conv.get("name") or ""),
                                   when(conv.get("created_at")), tuple(messages), where)
            except (KeyError, TypeError, AttributeError) as exc:
                yield Unreadable(where, f"not a Claude.ai conversation ({exc.__class__.__name__}: {exc})")
    except JsonStreamError as exc:
        yield Unreadable(str(file), _without_path(exc, file))


def _without_path(exc: Exception, file: Path) -> str:
    """The stream error's reason, without the file it already names (the report does)."""
    return str(exc).removeprefix(str(file)).lstrip(": ") or str(exc)


def _export_file(path: Path) -> Path:
    return path / "conversations.json" if path.is_dir() else path


# --------------------------------------------------------------------------- JSON Lines transcripts


def claude_code(path: Path, progress: Progress = None) -> Iterator[Item]:
    """Claude Code: ``~/.claude`` (or a project folder, or one ``.jsonl``): every session
    transcript (``projects/*/*.jsonl``; sub-agent side chains left out) and every
    ``CLAUDE.md`` memory file."""
    yield from _transcripts(path, "claude-code", "CLAUDE.md", _claude_code_session, progress,
                            where="~/.claude, a project folder under ~/.claude/projects, or one session .jsonl")


def codex(path: Path, progress: Progress = None) -> Iterator[Item]:
    """Codex: ``~/.codex`` (or its ``sessions/`` folder, or one rollout ``.jsonl``): every
    session transcript and every ``AGENTS.md`` memory file."""
    yield from _transcripts(path, "codex", "AGENTS.md", _codex_session, progress,
                            where="~/.codex, its sessions/ folder, or one rollout .jsonl")


def _transcripts(path: Path, source: str, memory_name: str,
                 parse: Callable[[Path], list[Item]], progress: Progress, *, where: str) -> Iterator[Item]:
    if path.is_file():
        files = [path] if path.suffix == ".jsonl" else []
        memory = [path] if path.name == memory_name else []
    else:
        files = sorted(p for p in path.rglob("*.jsonl") if p.is_file() and not p.is_symlink())
        memory = sorted(p for p in path.rglob(memory_name) if p.is_file() and not p.is_symlink())
    if not files and not memory:
        # a wrong folder or file read as "imported 0" and exit 0: as if there were no history
        yield Unreadable(str(path), f"no {source} session transcripts (.jsonl) or {memory_name} here; "
                         f"pass {where}")
        return
    for m in memory:
        rel = m.relative_to(path).as_posix() if path.is_dir() else m.name
        yield MemoryFileIn(source, m, rel)
    for i, f in enumerate(files):
        if progress is not None:
            progress(i, len(files))
        yield from parse(f)
    if progress is not None:
        progress(len(files), len(files))


def _jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError:
                yield lineno, None


def _bad_lines(path: Path, bad: list[int], what: str = "are not JSON") -> list[Item]:
    if not bad:
        return []
    shown = ", ".join(str(n) for n in bad[:5]) + (" ..." if len(bad) > 5 else "")
    return [Unreadable(str(path), f"{len(bad)} line(s) {what} (line {shown}); the rest was read")]


#: a record of the right type whose message (Claude Code) or payload (Codex) is not an object
ODD = "hold a message that is not an object"


def _title(title: str, messages: list[Message]) -> str:
    """A transcript's summary, else the start of its first user message."""
    if title:
        return title
    first = next((m.text for m in messages if m.speaker == "User"), "")
    return " ".join(first.split()[:8])


def _claude_code_session(path: Path) -> list[Item]:
    messages: list[Message] = []
    session_id = ""
    title = ""
    first: _dt.datetime | None = None
    bad: list[int] = []
    odd: list[int] = []
    for lineno, rec in _jsonl(path):
        if not isinstance(rec, dict):
            bad.append(lineno)
            continue
        session_id = session_id or str(rec.get("sessionId") or "")
        if rec.get("type") == "summary" and rec.get("summary"):
            title = title or str(rec["summary"])
            continue
        if rec.get("type") not in ("user", "assistant") or rec.get("isSidechain") or rec.get("isMeta"):
            continue
        if rec.get("isCompactSummary"):
            continue  # Claude Code's own summary of the turns before a compaction, sent as a user turn
        msg = rec.get("message") or {}
        if not isinstance(msg, dict):
            odd.append(lineno)  # one odd record is reported, not fatal to the rest
            continue
        speaker = SPEAKERS.get(str(msg.get("role") or rec.get("type")))
        text = _spoken(msg.get("content"))
        t = when(rec.get("timestamp"))
        first = first or t
        if speaker and text.strip():
            messages.append(Message(speaker, text, t, rec.get("uuid")))
    conv = Conversation("claude-code", session_id or path.stem, _title(title, messages), first,
                        tuple(messages), str(path))
    return [conv, *_bad_lines(path, bad), *_bad_lines(path, odd, ODD)]


def _codex_session(path: Path) -> list[Item]:
    messages: list[Message] = []
    session_id = ""
    first: _dt.datetime | None = None
    bad: list[int] = []
    odd: list[int] = []
    for lineno, rec in _jsonl(path):
        if not isinstance(rec, dict):
            bad.append(lineno)
            continue
        kind = rec.get("type")
        if "payload" in rec and not isinstance(rec["payload"], dict):
            odd.append(lineno)
            continue
        payload: dict[str, Any] = rec["payload"] if isinstance(rec.get("payload"), dict) else rec
        if kind == "session_meta" or ("instructions" in rec and "id" in rec and "type" not in rec):
            session_id = session_id or str(payload.get("id") or "")
            first = first or when(payload.get("timestamp") or rec.get("timestamp"))
            continue
        if kind not in ("response_item", "message", None) or payload.get("type") != "message":
            continue
        speaker = SPEAKERS.get(str(payload.get("role")))
        text = _spoken(payload.get("content"))
        t = when(rec.get("timestamp")) or first
        if speaker and text.strip():
            messages.append(Message(speaker, text, t, payload.get("id")))
    conv = Conversation("codex", session_id or path.stem, _title("", messages), first, tuple(messages), str(path))
    return [conv, *_bad_lines(path, bad), *_bad_lines(path, odd, ODD)]


def _spoken(content: Any) -> str:
    """The text of a turn without what the tool injected into it. Each block is judged on
    its own: Codex sends its AGENTS.md instructions and the environment as blocks of one
    user turn, and a question of the person's after such a block is still theirs."""
    if isinstance(content, list):
        content = [b for b in content if not _machine_text(b if isinstance(b, str) else _text_parts([b]))]
    text = _text_parts(content)
    return "" if _machine_text(text) else text


def _machine_text(text: str) -> bool:
    """Context the tool injected as a user turn (environment, instructions, command output
    wrappers, interruption markers), not something the person said. Shell output (``!`` in
    Claude Code) is left out too: it can hold what the write-time checks cannot tell is a
    secret (a ``.env``)."""
    head = text.lstrip()[:40]
    return head.startswith(MACHINE_TEXT)


MACHINE_TEXT = (
    "<environment_context", "<user_instructions", "# AGENTS.md instructions for", "<command-", "<local-command", "<system-reminder",
    "Caveat: The messages below", "<bash-input", "<bash-stdout", "<bash-stderr", "<task-notification",
    "<user-prompt-submit-hook", "[Request interrupted", "This session is being continued from a previous",
)


READERS: dict[str, Callable[[Path, Progress], Iterator[Item]]] = {
    "chatgpt": chatgpt,
    "claude": claude,
    "claude-code": claude_code,
    "codex": codex,
}
