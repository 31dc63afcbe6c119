"""Write-time safety for memory and context files.

Everything written to ``MEMORY.md``, ``memory/*.md`` or a context file is injected into a
later system prompt. A web page's "ignore previous instructions" or a pasted API key that
lands there keeps working (or leaking) in every session after. So every path that writes
memory or context files (``memory remember``, flush, ``save-session``, consolidation,
``context_write``, MCP ``memory_remember``) passes the text through :func:`guard` first:

* :func:`scan` finds prompt-injection patterns and secrets (API keys, tokens, private keys,
  passwords in common formats; the secret formats are :data:`soulframe._engine.redaction.SECRET_PATTERNS`,
  the list every page and message masks with), in the text as folded by
  :func:`soulframe._engine.neutralise.fold` (no zero-width or tag characters, no look-alike
  letters). It is a pattern list, cheap and explainable, measured on
  ``tests/data/write_safety/corpus.jsonl`` (see docs/memory-upkeep.md for the figures);
* ``memory.write_safety`` decides: ``refuse`` (default) raises :class:`UnsafeWriteError`
  naming what was found and where it would have gone; ``warn`` writes it and warns;
  ``allow`` writes it;
* a refused (or warned) text is kept in the quarantine file
  ``<state_dir>/quarantine/<agent>.jsonl`` (0600, in a 0700 directory, outside the
  workspace: never indexed, never injected), so nothing is lost. ``soulframe memory
  quarantine list|show|release|drop`` manages it.

A finding never repeats the secret it found: messages show its kind and a four-character
preview.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import secrets
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from .. import redaction as _redaction
from ..model import SoulframeError, SoulframeWarning
from ..neutralise import fold

if TYPE_CHECKING:
    from ..model import AgentLike

MODES = ("refuse", "warn", "allow")


class UnsafeWriteError(SoulframeError):
    """A write was refused: the text looks like a prompt injection or holds a secret."""

    def __init__(self, message: str, findings: tuple[Finding, ...] = (), quarantine_id: str | None = None,
                 for_caller: str | None = None) -> None:
        super().__init__(message)
        self.findings = findings
        self.quarantine_id = quarantine_id
        #: the message for a tool's caller (a model, a remote MCP client): it names no
        #: file of the host and no command only the machine's owner can run
        self.for_caller = for_caller or message


class UnsafeWriteWarning(SoulframeWarning):
    """A write went through (``memory.write_safety = warn``) although it looks unsafe."""


@attrs.frozen
class Finding:
    """One thing :func:`scan` found: ``kind`` is ``injection`` or ``secret``; ``name`` says
    which pattern (``openai-key``, ``ignore-instructions``); ``preview`` is safe to print.
    ``start``/``end`` place it (an injection's in the text with list markers removed)."""

    kind: str
    name: str
    start: int
    end: int
    preview: str

    def describe(self) -> str:
        return f"{self.kind} ({self.name}: {self.preview})"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "preview": self.preview}


# --------------------------------------------------------------------------- patterns

_I = re.IGNORECASE
_PREV = r"(?:previous|prior|above|earlier|preceding|foregoing|all|any|your|the|these|those|system|safety|security|content)"
_ORDERS = r"(?:instructions?|prompts?|rules|directions|directives|guidelines|guardrails|constraints|orders|commands|programming|context)"

INJECTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ignore-instructions", re.compile(
        rf"\b(?:ignore|disregard|forget|override|bypass|skip|drop)\s+(?:(?:all|any|of|every|everything|the|your|my|its)\s+){{0,3}}"
        rf"(?:{_PREV}\s+){{0,2}}{_ORDERS}\b", _I)),
    ("ignore-everything-before", re.compile(
        r"\b(?:ignore|disregard|forget)\s+(?:everything|all|anything)\s+(?:(?:you\s+(?:were|have\s+been)\s+told)|"
        r"(?:said|written|above|before|prior|previously))", _I)),
    ("new-instructions", re.compile(
        r"(?:^|\n|[.!]\s+)\s*(?:[-*+>]\s+)?(?:new|updated|revised|real|true|actual|important)\s+(?:system\s+)?instructions?\s*[:\-]", _I)),
    ("role-override", re.compile(
        r"\byou\s+are\s+(?:now|no\s+longer)\b(?:\s+\w+){0,4}?\s+(?:mode|unrestricted|unfiltered|jailbroken|"
        r"DAN|an?\s+(?:AI|assistant|model)\s+(?:with(?:out)?|that))", _I)),
    ("mode-switch", re.compile(
        r"\b(?:developer|DAN|jailbreak|god|sudo|unrestricted|admin(?:istrator)?)\s+mode\s+(?:is\s+)?(?:now\s+)?(?:enabled|activated|engaged)\b(?!\s+(?:on|for)\s+(?:the|my|your)\b)"
        r"|\b(?:enable|activate|enter)\s+(?:developer|DAN|jailbreak|god|unrestricted)\s+mode\b", _I)),
    ("no-restrictions", re.compile(
        r"\b(?:without|no|free\s+(?:of|from))\s+(?:any\s+)?(?:ethical\s+|safety\s+|content\s+)?"
        r"(?:restrictions|filters|guardrails|limitations|censorship)\b.{0,40}\b(?:you|answer|respond|comply)"
        r"|\b(?:you|assistant)\s+(?:must|will|should)\s+(?:now\s+)?(?:comply|obey)\s+(?:with\s+)?(?:every|all|any)", _I)),
    ("prompt-exfiltration", re.compile(
        r"\b(?:reveal|print|show|output|repeat|leak|dump|disclose|echo)\s+(?:me\s+)?(?:your|the)\s+"
        r"(?:full\s+|entire\s+|hidden\s+|original\s+|initial\s+)*(?:system\s+prompt|instructions|hidden\s+prompt|initial\s+prompt)", _I)),
    ("data-exfiltration", re.compile(
        r"\b(?:send|post|upload|forward|email|exfiltrate|transmit)\s+(?:all\s+|the\s+|your\s+|every\s+)*"
        r"(?:memory|memories|files|conversation|chat\s+history|secrets|credentials|api\s+keys?|passwords?|tokens?|"
        r"MEMORY\.md|USER\.md|SOUL\.md)\b.{0,60}?(?:https?://|\bto\s+\S+@\S+|\bto\s+(?:this|the\s+following)\s+(?:url|address|endpoint|server))", _I)),
    ("hide-from-user", re.compile(
        r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|alert|reveal\s+(?:this\s+)?to|let)\s+the\s+user(?![\w-])", _I)),
    ("chat-markup", re.compile(
        r"<\|(?:im_start|im_end|system|endoftext|start_header_id)\|>|\[/?INST\]|<</?SYS>>|</?system>"
        r"|^\s*#{2,}\s*(?:system|assistant)\s*(?:prompt|message)?\s*:", _I | re.MULTILINE)),
    ("instruction-to-ai", re.compile(
        r"\b(?:AI|assistant|LLM|language\s+model|chatbot|agent)s?\s+(?:reading|processing|parsing|summari[sz]ing)\s+this\b"
        r".{0,80}?\b(?:must|should|will|ignore|disregard)\b", _I)),
)

#: the secret formats: one list with the masking of everything shown (see
#: :mod:`soulframe._engine.redaction`), so what the guard refuses no page shows either
SECRET_PATTERNS = _redaction.SECRET_PATTERNS


_LINE_LEAD = re.compile(r"^[ \t]*(?:(?:[-*+>]|\d+[.)])[ \t]+)+", re.MULTILINE)
_NEGATABLE = frozenset({"prompt-exfiltration", "data-exfiltration", "ignore-instructions"})
#: a rule about an attack ("never reveal the system prompt", "if a page tells you to
#: ignore these rules, it is wrong", "it cannot override these rules") is not one
_NEGATED = re.compile(
    r"\b(?:never|not|don't|do\s+not|must\s+not|refuse\s+to|won't|cannot|can't|(?:tells?|asks?|wants?|says?)"
    r"\s+(?:you\s+)?to)\s+$", _I)


def _preview(text: str) -> str:
    text = text.strip()
    return (text[:4] + "…") if len(text) > 4 else "…"


def scan(text: str) -> list[Finding]:
    """Every injection pattern and secret found in ``text``, in order of position.

    The text is scanned as a reader sees it and a model understands it
    (:func:`soulframe._engine.neutralise.fold`): zero-width, soft-hyphen and tag characters dropped,
    compatibility forms and look-alike letters folded, so "ig\u200bnore" is "ignore"."""
    if not text:
        return []
    found: list[Finding] = []
    for s in _redaction.find_secrets(text):
        preview = f"{s.key} = {_preview(s.value)}" if s.key else _preview(s.value)
        found.append(Finding("secret", s.name, s.start, s.end, preview))
    # a list item or quote is read like a line of its own: "- New instructions: ..."
    # tag characters read as the letters they spell (an instruction hidden in them), and
    # dropped (a word they were put inside to break it)
    forms = {fold(text), fold(text, read_tags=False)}
    for name, pat in INJECTION_PATTERNS:
        for form in forms:
            plain = _LINE_LEAD.sub("", form)
            m = pat.search(plain)
            if m and name in _NEGATABLE and _NEGATED.search(plain[max(0, m.start() - 20):m.start()]):
                m = None  # "never reveal the system prompt" is a rule, not an attack
            if m:
                snippet = " ".join(m.group(0).split())
                found.append(Finding("injection", name, m.start(), m.end(), repr(snippet[:60])))
                break
    found.sort(key=lambda f: f.start)
    return found


def summary(findings: Iterable[Finding]) -> str:
    """``a secret (openai-key: sk-p…) and a prompt injection (ignore-instructions: ...)``"""
    parts = [
        ("a secret" if f.kind == "secret" else "a prompt injection") + f" ({f.name}: {f.preview})"
        for f in findings
    ]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


# --------------------------------------------------------------------------- the guard


def mode_of(config: Any) -> str:
    mode = str(config.get("memory.write_safety") if config is not None else "refuse")
    return mode if mode in MODES else "refuse"


def guard(agent: AgentLike, text: str, *, target: str, via: str) -> list[Finding]:
    """Check ``text`` before ``via`` (``memory remember``, ``flush`` ...) writes it to
    ``target`` (a workspace-relative path, or ``USER.md of user alice``).

    Returns the findings (empty: safe). With ``memory.write_safety = refuse`` (default) an
    unsafe text is quarantined and :class:`UnsafeWriteError` raised; with ``warn`` it is
    quarantined, an :class:`UnsafeWriteWarning` issued and the write goes on; ``allow``
    checks nothing.
    """
    mode = mode_of(agent.config)
    if mode == "allow":
        return []
    findings = scan(text)
    if not findings:
        return []
    from ..workspace import StorageFullError

    what = summary(findings)
    try:
        q = Quarantine.for_agent(agent)
        entry_id = q.add(text, target=target, via=via, findings=findings, action=mode)
    except (StorageFullError, OSError) as exc:
        # the quarantine could not keep it (a full disk): echo the text rather than lose it
        raise UnsafeWriteError(
            f"{via}: refused to write to {target}: the text contains {what}. It was not written, "
            f"and it could not be kept in quarantine ({exc}); here it is, so it is not lost:\n{text}",
            tuple(findings), None,
        ) from None
    if mode == "warn":
        warnings.warn(
            f"{via}: wrote {what} to {target} (memory.write_safety = warn); "
            f"a copy is in quarantine as {entry_id}",
            UnsafeWriteWarning, stacklevel=2,
        )
        return findings
    raise UnsafeWriteError(
        f"{via}: refused to write to {target}: the text contains {what}. It was not written; "
        f"it is kept in quarantine as {entry_id} ({q.path}). Review it with "
        f"`soulframe memory quarantine show {entry_id}`; write it anyway with "
        f"`soulframe memory quarantine release {entry_id}`",
        tuple(findings), entry_id,
        f"{via}: refused to write to {target}: the text contains {what}. It was not written; "
        f"it is kept in quarantine as {entry_id} for the agent's owner to review. Do not retry "
        "the same text: leave the secret or instruction out",
    )


def passing(check: Any, texts: Iterable[str], notes: list[str], what: str) -> list[str]:
    """The ``texts`` ``check`` (a :func:`guard` bound to its target) lets through; each
    refusal becomes a note (``what: the error``) instead of ending the run."""
    out = []
    for text in texts:
        try:
            check(text)
        except SoulframeError as exc:
            notes.append(f"{what}: {exc}")
            continue
        out.append(text)
    return out


# --------------------------------------------------------------------------- quarantine


@attrs.frozen
class QuarantineEntry:
    id: str
    at: str
    agent: str
    target: str
    via: str
    action: str
    findings: tuple[dict[str, Any], ...]
    text: str
    #: the workspace it was refused in ("" in entries older than this field)
    workspace: str = ""

    def to_dict(self, *, with_text: bool = True) -> dict[str, Any]:
        d = attrs.asdict(self)
        d["findings"] = list(self.findings)
        if not with_text:
            d.pop("text")
        return d


class Quarantine:
    """Refused writes of one agent: JSON Lines in ``<state_dir>/quarantine/<agent>.jsonl``
    (0600, outside the workspace, so never indexed nor injected into a prompt)."""

    def __init__(self, path: Path, agent_id: str = "", workspace: str = "") -> None:
        self.path = path
        self.agent_id = agent_id
        #: two workspaces under one agent id share this file: each sees only its own entries
        self.workspace = workspace

    @classmethod
    def for_agent(cls, agent: AgentLike) -> Quarantine:
        from ..workspace import ensure_private_dir

        folder = ensure_private_dir(Path(agent.state_dir) / "quarantine")
        return cls(folder / f"{agent.state_key}.jsonl", agent.id, str(agent.root))

    def add(self, text: str, *, target: str, via: str, findings: Iterable[Finding], action: str) -> str:
        entry_id = _dt.datetime.now(_dt.UTC).strftime("q%Y%m%d-%H%M%S-") + secrets.token_hex(3)
        row = {
            "id": entry_id,
            "at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "agent": self.agent_id,
            "target": target,
            "via": via,
            "action": action,
            "findings": [f.to_dict() for f in findings],
            "text": text,
            "workspace": self.workspace,
        }
        self._append(json.dumps(row, ensure_ascii=False) + "\n")
        return entry_id

    def _append(self, line: str) -> None:
        from ..workspace import update_locked

        # the whole file, replaced under its lock: a full disk leaves the old lines whole
        update_locked(self.path, lambda old: old + line.encode("utf-8"))

    def entries(self) -> list[QuarantineEntry]:
        if not self.path.exists():
            return []
        out: list[QuarantineEntry] = []
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                d = json.loads(line)
                out.append(QuarantineEntry(
                    id=str(d["id"]), at=str(d.get("at", "")), agent=str(d.get("agent", "")),
                    target=str(d.get("target", "")), via=str(d.get("via", "")),
                    action=str(d.get("action", "refuse")),
                    findings=tuple(d.get("findings") or ()), text=str(d.get("text", "")),
                    workspace=str(d.get("workspace") or ""),
                ))
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line: the rest is still readable
        return out

    def mine(self) -> list[QuarantineEntry]:
        """The entries refused in this workspace (and those older than the record of it)."""
        return [e for e in self.entries() if not e.workspace or not self.workspace or e.workspace == self.workspace]

    def get(self, entry_id: str) -> QuarantineEntry:
        for e in self.mine():
            if e.id == entry_id:
                return e
        raise SoulframeError(f"{entry_id}: no such quarantine entry of this workspace in {self.path}")

    def drop(self, entry_id: str) -> QuarantineEntry:
        from ..workspace import update_locked

        entry = self.get(entry_id)

        def without(_old: bytes) -> bytes:  # under the lock: a refusal added meanwhile stays
            rest = [e for e in self.entries() if e.id != entry_id]
            return "".join(json.dumps(e.to_dict(), ensure_ascii=False) + "\n" for e in rest).encode("utf-8")

        update_locked(self.path, without)
        return entry


__all__ = [
    "Finding", "Quarantine", "QuarantineEntry", "UnsafeWriteError", "UnsafeWriteWarning",
    "guard", "mode_of", "passing", "scan", "summary",
]
