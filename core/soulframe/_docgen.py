"""Generators for documentation pages that must never go stale (the tests compare them with
the committed files and rewrite them when ``SOULFRAME_UPDATE_DOCS=1``)."""

from __future__ import annotations

import inspect
import re
import typing

from soulframe._engine.config import key_catalogue

from . import hookspecs


def hooks_reference() -> str:
    """docs/plugins/hooks.md: one heading per hook, its signature, and its docstring."""
    out = [
        "# Hook reference",
        "",
        "<!-- generated from core/soulframe/hookspecs.py by tests/project/test_docs.py; do not edit -->",
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
    from soulframe._engine.plugins import make_plugin_manager

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


#: the public API, in the order docs/api.md presents it (pyproject's plugin-surface lists the same)
PUBLIC_MODULES = ("soulframe", "soulframe.hookspecs", "soulframe.kit", "soulframe.memorykit",
                  "soulframe.cli", "soulframe.testing")

_ROLE = re.compile(r":(?:class|func|data|mod|meth|attr|exc):`~?([^`]+)`")


def _prose(doc: str) -> str:
    """A docstring as Markdown: Sphinx roles become code, ``literals`` single backticks."""
    return _ROLE.sub(r"`\1`", inspect.cleandoc(doc)).replace("``", "`")


def _summary(value: object) -> tuple[str, str]:
    """(kind, first line of the docstring) of one public name."""
    if typing.get_origin(value) is not None or value is typing.Any:  # AgentType = Literal[...]
        shown = repr(value).replace("typing.", "")
        return "type", f"`{shown}`"
    if inspect.isclass(value):
        kind = "protocol" if getattr(value, "_is_protocol", False) else (
            "exception" if issubclass(value, BaseException) else "class")
    elif inspect.ismodule(value):
        kind = "module"
    elif callable(value):
        kind = "function"
    else:
        kind = "constant"
    doc = inspect.getdoc(value) if kind != "constant" else None
    if kind == "constant":
        shown = repr(value)
        if isinstance(value, (set, frozenset)):  # a set's repr follows hash order: sort it
            shown = "{" + ", ".join(sorted(map(repr, value))) + "}"
        return kind, f"`{shown[:70]}{'…' if len(shown) > 70 else ''}`"
    if not doc:  # the call's shape says what it takes
        try:
            return kind, f"`({', '.join(inspect.signature(value).parameters)})`"  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return kind, ""
    first = _prose(doc).split("\n\n")[0].replace("\n", " ").replace("|", "\\|")
    return kind, first


def api_reference() -> str:
    """docs/api.md: every public module, its docstring, and each name in its ``__all__``
    with its kind and the first paragraph of its docstring."""
    import importlib

    out = [
        "# Public API",
        "",
        "<!-- generated from the public modules' __all__ and docstrings by tests/project/test_docs.py; do not edit -->",
        "",
        "A plugin imports these six modules and nothing else of soulframe; every other module",
        "is the engine's and may change between releases (`lint-imports` and",
        "tests/project/test_plugin_surface.py enforce it for the default plugins).",
        "",
    ]
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        names = list(module.__all__)
        out += [f"## `{name}`", "", _prose(module.__doc__ or ""), ""]
        if name == "soulframe.hookspecs":
            out += ["Each hook is documented in the [hook reference](plugins/hooks.md).", ""]
            names = [n for n in names if n not in hookspecs.HOOK_NAMES]
        out += ["| name | kind | what it is |", "|---|---|---|"]
        for attr in sorted(names, key=str.lower):
            kind, what = _summary(getattr(module, attr))
            out.append(f"| `{attr}` | {kind} | {what} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
