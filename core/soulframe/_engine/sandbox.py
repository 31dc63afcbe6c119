"""The agent's sandbox (seed 002 "Sandbox-Aware Sections"): the effective settings, and what
its workspace access allows.

``sandbox.access`` is enforced, not only described to the model: with ``ro`` (read-only) or
``none`` (not mounted) no tool that writes (``ToolSpec.writes``: ``context_write``,
``memory_remember``, any plugin's) is offered to any session, a call to one is refused, and
the pre-compaction memory flush does not run (its only job is writing memory files). Seed 003
§4.2/§4.6 recommend exactly this for untrusted or automated runs. The owner's own API calls
(``agent.memory.remember`` ...) are not the sandbox's business and keep working.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import AgentLike

ACCESS_LEVELS = ("none", "ro", "rw")


def sandbox_settings(config: Any, spec: Any) -> dict[str, Any] | None:
    """The effective sandbox settings (config ``sandbox.*``, overridden by the agent's
    ``options.sandbox`` table — or a bare ``options.sandbox = true/false``), or ``None``
    when the agent is not sandboxed."""
    merged: dict[str, Any] = {
        "enabled": bool(config.get("sandbox.enabled")),
        "container_dir": str(config.get("sandbox.container_dir")),
        "access": str(config.get("sandbox.access")),
    }
    options = spec.options
    over = options.get("sandbox") if isinstance(options, Mapping) else None
    if isinstance(over, Mapping):
        merged.update(over)
    elif isinstance(over, bool):
        merged["enabled"] = over
    return merged if merged["enabled"] else None


def workspace_access(agent: AgentLike) -> str:
    """``rw`` when the agent is not sandboxed, else its ``access`` (``none``/``ro``/``rw``)."""
    box = sandbox_settings(agent.config, agent.spec)
    if box is None:
        return "rw"
    access = str(box.get("access", "rw"))
    return access if access in ACCESS_LEVELS else "rw"


def read_only_reason(access: str) -> str:
    what = "read-only" if access == "ro" else "not mounted"
    return f"the workspace is {what} in this sandbox (sandbox.access = {access!r}); nothing was written"
