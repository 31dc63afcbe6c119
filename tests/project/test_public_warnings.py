"""A host hears soulframe's warnings through one public category, ``soulframe.SoulframeWarning``:
it can turn them into errors, log them or silence them without importing the engine, and
without matching on message text."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest
from soulframe import Session, SoulframeWarning
from soulframe.testing import make_agent

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted([*(REPO / "core" / "soulframe").rglob("*.py"), *(REPO / "plugins").rglob("*.py")])


def test_every_warning_soulframe_issues_is_a_soulframe_warning() -> None:
    """A warning class of its own subclasses SoulframeWarning, and every ``warnings.warn``
    names a category (a bare one is a plain UserWarning a host's filter misses);
    ResourceWarning, Python's own for an unclosed resource, stays what it is."""
    stray: list[str] = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(), str(path))
        where = path.relative_to(REPO)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Warning"):
                bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
                if node.name != "SoulframeWarning" and not bases & {"SoulframeWarning"}:
                    stray.append(f"{where}:{node.lineno}: class {node.name}({', '.join(bases)})")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "warn" and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "warnings"):
                category = node.args[1] if len(node.args) > 1 else next(
                    (k.value for k in node.keywords if k.arg == "category"), None)
                if not isinstance(category, ast.Name) or category.id == "UserWarning":
                    stray.append(f"{where}:{node.lineno}: warnings.warn without a soulframe category")
    assert stray == []


def test_a_host_escalates_a_cut_context_file_and_a_failed_flush(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    agent = make_agent(ws, seed=False, **{"model.context_window": 100_000})
    (ws / "AGENTS.md").write_bytes(b"# AGENTS.md\nKeep notes \xff\xfe in Latin-1.\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SoulframeWarning)
        with pytest.raises(SoulframeWarning, match="AGENTS.md"):
            agent.system_prompt(Session.main())
        with pytest.raises(SoulframeWarning, match="memory flush skipped: .*no chat model"):
            agent.before_compaction(Session.main(), {"total_tokens": 90_000,
                                                     "messages": [{"role": "user", "content": "hi"}]})
