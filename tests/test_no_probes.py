"""The core asks a plugin's object what it can do through declared protocols (``isinstance``
against ``TracksRecalls``, ``CountsTokens``, ``Describes`` ...), never by probing for an
attribute with ``getattr``/``hasattr``: a probe is a contract nobody declared, which a
third-party store or provider cannot know it must meet.

Every ``getattr``/``hasattr`` left in the core is listed here with why it is not such a
probe; a new one fails this test until it is replaced by a protocol or justified below."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "core" / "soulframe"

#: (module, the call as written) -> why it is not probing a plugin-provided feature
ALLOWED: dict[tuple[str, str], str] = {
    ("_docgen.py", "getattr(hookspecs, name)"): "reads our own hookspecs module by name to document it",
    ("calllog.py", "getattr(self.inner, attr)"):
        "a transparent wrapper (__getattr__) forwarding to the chat model it logs; it decides nothing",
    ("cli/doctor.py", "getattr(check, '__name__', repr(check))"): "a doctor check's function name, for a message",
    ("memory/__init__.py", "getattr(results, name)"): "the package's lazy re-export (module __getattr__)",
    ("memory/watch.py", "getattr(event, 'dest_path', '')"): "watchdog: only move events carry dest_path",
    ("skills/watch.py", "getattr(event, 'dest_path', '')"): "watchdog: only move events carry dest_path",
    ("plugins.py", "getattr(pm.hook, hook_name)"): "pluggy: the hook caller named by a string",
    ("plugins.py", "getattr(plugin, '__name__', None)"): "pluggy: a plugin module's name, or its class's for an object",
    ("plugins.py", "getattr(item, 'name', None)"):
        "`soulframe plugins` lists what each plugin registered and skips a malformed item instead of crashing",
    ("skills/loader.py", "getattr(yaml, 'CSafeLoader', yaml.SafeLoader)"): "PyYAML built without libyaml lacks it",
    ("workspace.py", "getattr(exc, 'sqlstate', None)"): "a driver's exception (psycopg) names a full disk by SQLSTATE",
    ("workspace.py", "getattr(os, 'O_NOFOLLOW', 0)"): "a platform flag (absent on Windows)",
}


def probes() -> dict[tuple[str, str], int]:
    found: dict[tuple[str, str], int] = {}
    for path in sorted(CORE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
                found[(path.relative_to(CORE).as_posix(), ast.unparse(node))] = node.lineno
    return found


def test_the_core_probes_no_plugin_feature() -> None:
    new = {f"{module}:{line}: {call}" for (module, call), line in probes().items() if (module, call) not in ALLOWED}
    assert not new, ("getattr/hasattr in the core: declare the feature as a runtime_checkable protocol in "
                     "soulframe.model and check it with isinstance (or justify it in ALLOWED):\n"
                     + "\n".join(sorted(new)))


def test_every_allowed_probe_still_exists() -> None:
    """The list shrinks with the code: a justified probe that is gone leaves no stale entry."""
    stale = set(ALLOWED) - set(probes())
    assert not stale, f"no longer in the core, remove from ALLOWED: {sorted(stale)}"
