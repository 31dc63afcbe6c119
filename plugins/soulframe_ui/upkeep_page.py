"""The upkeep page's facts: the consolidation diary, whether an applied run can be undone,
and the quarantine of refused writes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from soulframe import PathEscapeError

if TYPE_CHECKING:
    from soulframe import AgentLike
    from soulframe.memorykit import QuarantineEntry


def upkeep_facts(agent: AgentLike) -> dict[str, Any]:
    from soulframe.memorykit import DIARY, UNDO_DIR, Quarantine

    try:
        diary_path = agent.workspace.resolve(DIARY)
        diary = diary_path.read_text(encoding="utf-8", errors="replace") if diary_path.is_file() else ""
        undo_dir = agent.workspace.resolve(UNDO_DIR)
        undo = len(list(undo_dir.glob("*.json"))) if undo_dir.is_dir() else 0
    except PathEscapeError:  # memory/.diary linked out of the workspace: show nothing of it
        diary, undo = "", 0
    entries = []
    for e in Quarantine.for_agent(agent).entries():
        # a text refused for holding a secret is not shown here at all (the terminal's
        # `quarantine show` prints it for its owner); an injection's text is, to review
        secret = holds_secret(e)
        entries.append({"id": e.id, "at": e.at, "via": e.via, "target": e.target, "action": e.action,
                        "secret": secret,
                        "findings": [f"{f.get('kind')}: {f.get('name')}" for f in e.findings],
                        "text": None if secret else e.text})
    return {"diary": diary, "diary_runs": diary.count("\n## "), "undo": undo, "quarantine": entries}


def holds_secret(entry: QuarantineEntry) -> bool:
    """Whether a quarantined write was refused (also) for holding a secret."""
    return any(f.get("kind") == "secret" for f in entry.findings)
