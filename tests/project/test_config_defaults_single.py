"""Each setting's default lives in one place, its declaration: ``Config.get(key)`` takes no
fallback of its own, and no call site reads a declared key with one
(``config.get("memory.fusion", "weighted")``), which silently contradicts the declared
default the day the key is missing from a catalogue, and misleads every reader of that line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from soulframe._engine.config import key_catalogue, load_config

ROOT = Path(__file__).resolve().parents[2]


def test_no_call_site_passes_its_own_default_for_a_declared_key() -> None:
    declared = key_catalogue()
    found = []
    for path in [*(ROOT / "core").rglob("*.py"), *(ROOT / "plugins").rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "get" and len(node.args) == 2
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value in declared
                    and ast.unparse(node.func.value).split(".")[-1] in ("config", "cfg", "settings")):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.args[0].value}")
    assert not found, "defaults repeated at call sites:\n" + "\n".join(found)


def test_config_get_takes_no_default_and_gives_the_declared_one(tmp_path: Path) -> None:
    cfg = load_config(search=False, workspace=tmp_path)
    with pytest.raises(TypeError):
        cfg.get("skills.mode", "inline")  # type: ignore[call-arg]
    catalogue = key_catalogue()
    # what a user who set nothing gets is exactly what each key declares
    for key in ("skills.mode", "prompt.heartbeat_light_context", "embedding.provider", "embedding.auto_order",
                "embedding.batch_size", "bootstrap.max_chars_per_file", "memory.fusion"):
        assert cfg.get(key) == catalogue[key].default, key
    assert cfg.get("no.such.key") is None  # a disabled plugin's setting reads as unset
