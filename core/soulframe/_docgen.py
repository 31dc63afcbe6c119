"""Generators for documentation pages that must never go stale (the tests compare them with
the committed files and rewrite them when ``SOULFRAME_UPDATE_DOCS=1``)."""

from __future__ import annotations

import inspect
import textwrap

from . import hookspecs
from .config import DEFAULTS


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
        doc = textwrap.dedent(fn.__doc__ or "").strip()
        doc = doc.replace(":param ", "- **param** ").replace(":returns:", "**Returns:**")
        doc = doc.replace(":class:", "").replace(":func:", "")
        out += [f"## {name}({args})", "", doc, ""]
    return "\n".join(out).rstrip() + "\n"


def configuration_reference() -> str:
    """docs/configuration.md's key table."""
    rows = ["| key | default | meaning | seed |", "|---|---|---|---|"]
    for key, spec in DEFAULTS.items():
        default = "—" if spec.default is None else f"`{spec.default!r}`"
        meaning = spec.help.replace("|", "\\|")
        if spec.choices:
            meaning += " (" + ", ".join(repr(c) for c in spec.choices if c is not None) + ")"
        rows.append(f"| `{key}` | {default} | {meaning} | {spec.seed} |")
    return "\n".join(rows) + "\n"
