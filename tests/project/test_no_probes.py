"""The core asks a plugin's object what it can do through declared protocols (``isinstance``
against ``TracksRecalls``, ``CountsTokens``, ``Describes`` ...), never by probing for an
attribute with ``getattr``/``hasattr``: a probe is a contract nobody declared, which a
third-party store or provider cannot know it must meet.

The default plugins hold to the same rule: they are written against ``AgentLike``, the
protocols and the value types, so what they read of an agent, a store, a section or a report
is a declared attribute, read directly.

Every ``getattr``/``hasattr`` left in the core or a default plugin is listed here with why it
is not such a probe; a new one fails this test until it is replaced by a protocol or
justified below."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core" / "soulframe"
PLUGINS = ROOT / "plugins"

#: (module, the call as written) -> why it is not probing a plugin-provided feature
ALLOWED: dict[tuple[str, str], str] = {
    ("_docgen.py", "getattr(hookspecs, name)"): "reads our own hookspecs module by name to document it",
    ("_docgen.py", "getattr(module, attr)"): "reads a public module's __all__ names to document them",
    ("_docgen.py", "getattr(value, '_is_protocol', False)"): "typing.is_protocol arrives in Python 3.13",
    ("__init__.py", "getattr(config, name)"): "the package's lazy re-export of Config, K and Key (module __getattr__)",
    ("_engine/reexport.py", "getattr(importlib.import_module(module), attr or name)"):
        "the public kits' lazy re-export (module __getattr__)",
    ("_engine/calllog.py", "getattr(self.inner, attr)"):
        "a transparent wrapper (__getattr__) forwarding to the chat model it logs; it decides nothing",
    ("_engine/cli/doctor.py", "getattr(check, '__name__', repr(check))"): "a doctor check's function name, for a message",
    ("_engine/toolloop.py", "getattr(model, 'name', '?')"):
        "a host's model that broke its contract may lack its name too; the error must still be said",
    ("_engine/memory/__init__.py", "getattr(results, name)"): "the package's lazy re-export (module __getattr__)",
    ("_engine/memory/watch.py", "getattr(event, 'dest_path', '')"): "watchdog: only move events carry dest_path",
    ("_engine/skills/watch.py", "getattr(event, 'dest_path', '')"): "watchdog: only move events carry dest_path",
    ("_engine/plugins.py", "getattr(pm.hook, hook_name)"): "pluggy: the hook caller named by a string",
    ("_engine/plugins.py", "getattr(plugin, '__name__', None)"): "pluggy: a plugin module's name, or its class's for an object",
    ("_engine/plugins.py", "getattr(plugin, n, None)"):
        "a plugin implementing no hook: which of its functions are named like hooks but lack the marker, for the warning",
    ("_engine/plugins.py", "getattr(item, 'name', None)"):
        "`soulframe plugins` lists what each plugin registered and skips a malformed item instead of crashing",
    ("_engine/skills/loader.py", "getattr(yaml, 'CSafeLoader', yaml.SafeLoader)"): "PyYAML built without libyaml lacks it",
    ("_engine/workspace.py", "getattr(exc, 'sqlstate', None)"): "a driver's exception (psycopg) names a full disk by SQLSTATE",
    ("_engine/workspace.py", "getattr(os, 'O_NOFOLLOW', 0)"): "a platform flag (absent on Windows)",
}


#: the same for the default plugins (module relative to plugins/; their own tests excluded)
ALLOWED_IN_PLUGINS: dict[tuple[str, str], str] = {
    ("soulframe_embeddings/download.py", "getattr(exc, 'reason', exc)"):
        "urllib: only URLError carries a reason; the message is redacted either way",
    ("soulframe_mcp/changes.py", "getattr(session, '_connection', session)"):
        "the MCP SDK builds a session object per request; its connection is what a subscription is keyed by",
    ("soulframe_mcp/changes.py", "getattr(event, 'dest_path', '')"): "watchdog: only move events carry dest_path",
    ("soulframe_mcp/resources.py", "getattr(os, 'O_NONBLOCK', 0)"): "a platform flag (absent on Windows)",
    ("soulframe_mcp/resources.py", "getattr(os, 'O_NOCTTY', 0)"): "a platform flag (absent on Windows)",
    ("soulframe_mcp/server.py", "getattr(params, 'cursor', None)"):
        "the MCP SDK: a list request without paging has no params object to carry a cursor",
    ("soulframe_mcp/server.py", "getattr(job, '__name__', job)"): "a background job's function name, for a log line",
    ("soulframe_memory/flush.py", "hasattr(usage, name)"):
        "the host's usage report (a mapping or any object), read under the names hosts use for it",
    ("soulframe_memory/flush.py", "getattr(usage, name)"): "the same usage report, once the name is found",
    ("soulframe_postgres/connection.py", "getattr(conn, 'broken', False)"):
        "psycopg: a pool's connection and a plain one differ in whether they say they are broken",
    ("soulframe_sqlite/driver.py", "hasattr(conn, 'enable_load_extension')"):
        "a Python built without loadable SQLite extensions lacks the method",
    ("soulframe_sqlite/driver.py", "hasattr(sqlean, 'connect')"): "the empty 0.1 placeholder wheel of sqlean-py",
    ("soulframe_ui/server.py", "hasattr(value, '__html__')"): "markupsafe's protocol for already-escaped text",
}


def _probes_under(root: Path, skip_tests: bool) -> dict[tuple[str, str], int]:
    found: dict[tuple[str, str], int] = {}
    for path in sorted(root.rglob("*.py")):
        if skip_tests and "tests" in path.relative_to(root).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
                found[(path.relative_to(root).as_posix(), ast.unparse(node))] = node.lineno
    return found


def probes() -> dict[tuple[str, str], int]:
    return _probes_under(CORE, skip_tests=False)


def plugin_probes() -> dict[tuple[str, str], int]:
    return _probes_under(PLUGINS, skip_tests=True)


def test_the_core_probes_no_plugin_feature() -> None:
    new = {f"{module}:{line}: {call}" for (module, call), line in probes().items() if (module, call) not in ALLOWED}
    assert not new, ("getattr/hasattr in the core: declare the feature as a runtime_checkable protocol in "
                     "soulframe._engine.model and check it with isinstance (or justify it in ALLOWED):\n"
                     + "\n".join(sorted(new)))


def test_every_allowed_probe_still_exists() -> None:
    """The list shrinks with the code: a justified probe that is gone leaves no stale entry."""
    stale = set(ALLOWED) - set(probes())
    assert not stale, f"no longer in the core, remove from ALLOWED: {sorted(stale)}"


def test_the_default_plugins_probe_no_declared_feature() -> None:
    """A plugin reads what ``AgentLike``, a protocol or a value type declares directly; an
    optional feature of another plugin's object is a runtime_checkable protocol."""
    new = {f"{module}:{line}: {call}" for (module, call), line in plugin_probes().items()
           if (module, call) not in ALLOWED_IN_PLUGINS}
    assert not new, ("getattr/hasattr in a default plugin: read the declared attribute, or check a "
                     "runtime_checkable protocol with isinstance (or justify it in ALLOWED_IN_PLUGINS):\n"
                     + "\n".join(sorted(new)))


def test_every_allowed_plugin_probe_still_exists() -> None:
    stale = set(ALLOWED_IN_PLUGINS) - set(plugin_probes())
    assert not stale, f"no longer in the plugins, remove from ALLOWED_IN_PLUGINS: {sorted(stale)}"
