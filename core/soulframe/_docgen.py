"""Generators for documentation pages that must never go stale (the tests compare them with
the committed files and rewrite them when ``SOULFRAME_UPDATE_DOCS=1``)."""

from __future__ import annotations

import inspect

from . import hookspecs
from .config import key_catalogue


def hooks_reference() -> str:
    """docs/plugins/hooks.md: one heading per hook, its signature, and its docstring."""
    out = [
        "# Hook reference",
        "",
        "<!-- generated from core/soulframe/hookspecs.py by tests/test_docs.py; do not edit -->",
        "",
        "Every hook a plugin can implement. Write an implementation as a function with the hook's",
        "name, decorated with `@soulframe.hookimpl`; it may take any subset of the arguments.",
        "",
    ]
    for name in hookspecs.HOOK_NAMES:
        fn = getattr(hookspecs, name)
        args = ", ".join(inspect.signature(fn).parameters)
        doc = inspect.cleandoc(fn.__doc__ or "")
        doc = doc.replace(":param ", "- **param** ").replace(":returns:", "**Returns:**")
        doc = doc.replace(":class:", "").replace(":func:", "")
        out += [f"## {name}({args})", "", doc, ""]
    return "\n".join(out).rstrip() + "\n"


def configuration_reference() -> str:
    """docs/configuration.md's key table: the core's keys, then each of soulframe's own
    plugins' (``register_config_keys``), each key with the plugin that declares it."""
    from .plugins import make_plugin_manager

    pm = make_plugin_manager()
    own = {name for name, (dist, _) in pm.dists.items() if dist == "soulframe"}
    for name in [n for n in pm.dists if n not in own]:
        pm.unregister(name=name)  # a third party's keys are documented by that plugin
    rows = ["| key | default | meaning | declared by | seed |", "|---|---|---|---|---|"]
    for key, spec in key_catalogue(pm).items():
        default = "—" if spec.default is None else f"`{spec.default!r}`"
        meaning = spec.help.replace("|", "\\|")
        if spec.choices:
            meaning += " (" + ", ".join(repr(c) for c in spec.choices if c is not None) + ")"
        if spec.min is not None or spec.max is not None:
            lo = "" if spec.min is None else f"{spec.min:g} ≤ "
            hi = "" if spec.max is None else f" ≤ {spec.max:g}"
            meaning += f" ({lo}value{hi})"
        rows.append(f"| `{key}` | {default} | {meaning} | {spec.plugin or 'core'} | {spec.seed} |")
    return "\n".join(rows) + "\n"
