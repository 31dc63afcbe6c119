"""Long conversations with memory questions, read from the public benchmarks' files and
written out as a workspace of daily logs.

Two formats are read:

* **LoCoMo** (``locomo10.json``): a list of samples, each with ``sample_id``,
  ``conversation`` (``speaker_a``, ``speaker_b``, ``session_N``: turns ``{speaker, dia_id,
  text}``, ``session_N_date_time`` such as ``"1:56 pm on 8 May, 2023"``) and ``qa``
  (``question``, ``answer``, ``evidence``: turn ids such as ``"D1:3"``, ``category``);
* **REALTALK** (``Chat_*.json``, one conversation per file): ``name``, ``session_N``
  (turns ``{clean_text, speaker, date_time, dia_id}``), ``session_N_date_time`` such as
  ``"29.12.2023, 22:42:04"``, and ``qa`` as above. The annotators' ``events_session_N``
  notes are not conversation text and are not read.

A conversation becomes daily logs as soulframe writes them: ``memory/YYYY-MM-DD.md`` (the
session's start date), a ``# YYYY-MM-DD`` heading, then one turn per line,
``Speaker: text``. Two sessions on one day share the day's log, a blank line apart. Each
turn id is mapped to the file and line it landed on, so a question's evidence is a set of
lines; ids that name no turn (or are malformed) are counted, never guessed.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from ..model import SoulframeError

#: category names by format (LoCoMo numbers five kinds, REALTALK three)
CATEGORIES: dict[str, dict[int, str]] = {
    "locomo": {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"},
    "realtalk": {1: "multi-hop", 2: "temporal", 3: "commonsense"},
}
_TURN_ID = re.compile(r"^D\s*(\d+)\s*:\s*(\d+)$")
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_MONTHS = {m: i for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"), 1)}


@attrs.frozen
class Turn:
    id: str
    speaker: str
    text: str


@attrs.frozen
class ChatSession:
    number: int
    day: _dt.date
    turns: tuple[Turn, ...]


@attrs.frozen
class Question:
    question: str
    category: str
    evidence: tuple[str, ...]
    answer: str = ""


@attrs.frozen
class Conversation:
    """One conversation: its sessions in order and its questions."""

    name: str
    format: str
    speakers: tuple[str, ...]
    sessions: tuple[ChatSession, ...]
    questions: tuple[Question, ...]


@attrs.frozen
class Evidence:
    """Where a turn landed: a daily log and its 1-based line."""

    path: str
    line: int


def load(path: str | Path) -> list[Conversation]:
    """The conversations of a LoCoMo file, a REALTALK file, or a directory of either
    (every ``*.json`` in it, REALTALK's ``Chat_N`` files in N order)."""
    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob("*.json"), key=_natural)
        if not files:
            raise SoulframeError(f"{p}: no *.json conversation files")
        return [c for f in files for c in load(f)]
    try:
        raw = p.read_bytes()
        if raw.startswith(b"PK\x03\x04"):  # LoCoMo is published as locomo10.zip
            raise SoulframeError(f"{p}: a zip archive, not JSON: unzip it and pass the .json file in it")
        data = json.loads(raw.decode("utf-8-sig"))
    except FileNotFoundError as exc:
        raise SoulframeError(f"{p}: no such file") from exc
    except UnicodeDecodeError as exc:
        raise SoulframeError(f"{p}: not valid UTF-8 (near byte {exc.start:,}): a conversation file is "
                             "UTF-8 JSON") from None
    except json.JSONDecodeError as exc:
        raise SoulframeError(f"{p} line {exc.lineno}: invalid JSON: {exc.msg}") from exc
    if isinstance(data, list):
        return [_locomo(item, p, i) for i, item in enumerate(data)]
    if isinstance(data, dict) and "conversation" in data:
        return [_locomo(data, p, 0)]
    if isinstance(data, dict) and any(_SESSION_KEY.match(k) for k in data):
        return [_realtalk(data, p)]
    raise SoulframeError(f"{p}: neither LoCoMo (a list of samples with 'conversation' and 'qa') "
                         "nor REALTALK (an object with 'session_N' and 'qa')")


def select(conversations: Sequence[Conversation], names: Iterable[str]) -> list[Conversation]:
    """The conversations ``names`` pick: a name matches itself and any name it is the
    ``_``-separated prefix of (``Chat_1`` picks ``Chat_1_Emi_Elise``, not ``Chat_10_…``)."""
    wanted = [n for n in names if n]
    if not wanted:
        return list(conversations)
    out = [c for c in conversations if any(c.name == w or c.name.startswith(w + "_") for w in wanted)]
    unknown = [w for w in wanted if not any(c.name == w or c.name.startswith(w + "_") for c in conversations)]
    if unknown:
        names_ = ", ".join(c.name for c in conversations)
        raise SoulframeError(f"no conversation named {unknown[0]!r}; there are: {names_}")
    return out


def write_workspace(conversation: Conversation, root: Path) -> dict[str, Evidence]:
    """Write ``conversation`` as daily logs under ``root/memory`` and return where each
    turn id landed. An existing log of the same text is left untouched (so an index kept
    from an earlier run sees nothing changed)."""
    logs: dict[str, list[str]] = {}
    where: dict[str, Evidence] = {}
    for s in conversation.sessions:
        name = f"memory/{s.day.isoformat()}.md"
        lines = logs.setdefault(name, [f"# {s.day.isoformat()}", ""])
        if len(lines) > 2:
            lines.append("")
        for t in s.turns:
            lines.append(f"{t.speaker}: {t.text}")
            where[t.id] = Evidence(name, len(lines))
    (root / "memory").mkdir(parents=True, exist_ok=True)
    for name, lines in logs.items():
        target = root / name
        text = "\n".join(lines) + "\n"
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    return where


def turn_ids(evidence: Iterable[Any]) -> tuple[list[str], int]:
    """The well-formed turn ids of a question's evidence (``"D3:12"``; several in one
    string split at ``;``/``,``), and how many entries were malformed."""
    ids: list[str] = []
    bad = 0
    for item in evidence:
        for part in re.split(r"[;,]", str(item)):
            part = part.strip().rstrip(":")
            if not part:
                continue
            m = _TURN_ID.match(part)
            if m:
                ids.append(f"D{int(m.group(1))}:{int(m.group(2))}")
            else:
                bad += 1
    return ids, bad


# --------------------------------------------------------------------------- formats


def _natural(p: Path) -> list[Any]:
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", p.name)]


def _one_line(text: Any) -> str:
    return " ".join(str(text or "").split())


def _sessions(raw: dict[str, Any], where: str, text_key: str, date_of: Any) -> list[ChatSession]:
    out: list[ChatSession] = []
    numbers = sorted(int(m.group(1)) for k in raw if (m := _SESSION_KEY.match(k)))
    for n in numbers:
        turns_raw = raw[f"session_{n}"]
        if not isinstance(turns_raw, list):
            raise SoulframeError(f"{where}: session_{n} — expected a list of turns")
        stamp = raw.get(f"session_{n}_date_time")
        day = date_of(stamp) if stamp else None
        if day is None:
            raise SoulframeError(f"{where}: session_{n}_date_time = {stamp!r} — not a date this "
                                 "reader knows")
        turns = tuple(
            Turn(str(t.get("dia_id", "")), _one_line(t.get("speaker")) or "?", _one_line(t.get(text_key)))
            for t in turns_raw if isinstance(t, dict) and _one_line(t.get(text_key))
        )
        out.append(ChatSession(n, day, turns))
    return out


def _questions(raw: Any, fmt: str, where: str) -> tuple[Question, ...]:
    if not isinstance(raw, list):
        raise SoulframeError(f"{where}: qa — expected a list of questions")
    names = CATEGORIES[fmt]
    out = []
    for q in raw:
        if not isinstance(q, dict) or not q.get("question"):
            continue
        cat = q.get("category")
        label = names.get(cat, str(cat)) if isinstance(cat, int) else str(cat or "-")
        out.append(Question(str(q["question"]), label, tuple(str(e) for e in q.get("evidence") or ()),
                            str(q.get("answer", q.get("adversarial_answer", "")))))
    return tuple(out)


def _realtalk(data: dict[str, Any], path: Path) -> Conversation:
    names = data.get("name") or {}
    speakers = tuple(str(v) for v in names.values()) if isinstance(names, dict) else ()
    return Conversation(
        name=path.stem, format="realtalk", speakers=speakers,
        sessions=tuple(_sessions(data, str(path), "clean_text", _realtalk_date)),
        questions=_questions(data.get("qa", []), "realtalk", str(path)),
    )


def _locomo(item: Any, path: Path, i: int) -> Conversation:
    where = f"{path} sample {i}"
    if not isinstance(item, dict) or not isinstance(item.get("conversation"), dict):
        raise SoulframeError(f"{where}: expected {{sample_id, conversation, qa}}")
    conv = item["conversation"]
    return Conversation(
        name=str(item.get("sample_id") or f"{path.stem}-{i}"), format="locomo",
        speakers=tuple(str(conv[k]) for k in ("speaker_a", "speaker_b") if k in conv),
        sessions=tuple(_sessions(conv, where, "text", _locomo_date)),
        questions=_questions(item.get("qa", []), "locomo", where),
    )


def _realtalk_date(stamp: str) -> _dt.date | None:
    m = re.match(r"\s*(\d{1,2})\.(\d{1,2})\.(\d{4})", str(stamp))
    if not m:
        return None
    try:
        return _dt.date(int(m.group(3)), int(m.group(2)), int(m.group(1)))
    except ValueError:
        return None


def _locomo_date(stamp: str) -> _dt.date | None:
    m = re.search(r"(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", str(stamp))
    if not m or m.group(2).lower() not in _MONTHS:
        return None
    try:
        return _dt.date(int(m.group(3)), _MONTHS[m.group(2).lower()], int(m.group(1)))
    except ValueError:
        return None
