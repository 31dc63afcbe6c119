"""Each piece of an engine object's state has one owner: no core module reads or writes a
private attribute (``_name``) of the memory index or the skill set from outside the class
that owns it. The modules the index and the skill set delegate to reach their state through
the collaborators they hold (``index.searcher``, ``index.syncer``, ``skills.searcher``,
``skills.blocks``) and the public methods those declare; when a free function could set
``index._calibrator`` from outside, nothing said who owned the calibrator or when it was made."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "core" / "soulframe"

#: the names the engine gives a memory index or a skill set it does not own
HOLDERS = {"index", "mem", "memory", "skills", "skillset", "skill_set"}
#: where each owner is defined: only its own class may touch its private attributes
OWNERS = {"_engine/memory/index.py": "MemoryIndex", "_engine/skills/skillset.py": "SkillSet"}


def _holder(node: ast.expr) -> str | None:
    """``index`` for ``index._x``; ``memory`` for ``agent.memory._x`` or
    ``index_of(agent.memory)._x``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name == "index_of":
            return "index"
    return None


def reaches(path: Path, root: Path = REPO) -> list[str]:
    """Every ``holder._private`` in ``path`` (``self._x`` inside the owner is its own)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        if not node.attr.startswith("_") or node.attr.startswith("__"):
            continue
        holder = _holder(node.value)
        if holder in HOLDERS:
            found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_reaches_are_found(tmp_path: Path) -> None:
    """The scan itself: a free function reaching into the index is caught."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f(index, agent):\n"
        "    index._calibrator = None\n"
        "    agent.memory._last_sync\n"
        "    index_of(agent.memory)._check_enabled()\n"
        "    skills._blocks.get(1)\n"
        "    index.searcher.pool()\n",
        encoding="utf-8",
    )
    assert len(reaches(sample, tmp_path)) == 4


def test_no_core_module_reaches_into_the_index_or_the_skill_set() -> None:
    found = []
    for path in sorted(CORE.rglob("*.py")):
        rel = path.relative_to(CORE).as_posix()
        if rel in OWNERS:
            continue
        found.extend(reaches(path))
    assert not found, (
        "a core module reads another object's private state (give the state an owner and "
        "call its methods):\n" + "\n".join(found)
    )
