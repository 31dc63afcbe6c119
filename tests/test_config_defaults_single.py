"""Each setting's default lives in one place, its declaration: no call site reads a
declared memory key with a fallback of its own (``config.get("memory.fusion", "weighted")``),
which silently contradicts the declared default the day the key is missing from a
catalogue, and misleads every reader of that line."""

from __future__ import annotations

import ast
from pathlib import Path

from soulframe.config import DEFAULTS

ROOT = Path(__file__).resolve().parents[1]


def test_no_call_site_passes_its_own_default_for_a_declared_key() -> None:
    found = []
    for path in [*(ROOT / "core").rglob("*.py"), *(ROOT / "plugins").rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "get" and len(node.args) == 2
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value in DEFAULTS
                    and str(node.args[0].value).startswith("memory.")):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.args[0].value}")
    assert not found, "defaults repeated at call sites:\n" + "\n".join(found)
