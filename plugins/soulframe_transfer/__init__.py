"""Moving in and out: ``soulframe import SOURCE PATH`` (ChatGPT, Claude.ai, Claude Code,
Codex, an OpenClaw home, a soulframe export), ``soulframe export OUT`` and ``soulframe
forget`` (docs/moving.md).

* :mod:`.sources` reads other assistants' exports into conversations, streaming;
  :mod:`.history` writes them as dated history under ``memory/`` with their provenance;
* :mod:`.openclaw` maps ``openclaw.json`` (JSON5, :mod:`.json5`) to ``soulframe.toml``;
* :mod:`.archive` writes and reads the export archive;
* :mod:`.forget` removes entries from the Markdown and everything derived, and
  :mod:`.tombstones` keeps them from coming back.

Nothing heavy is imported here: the commands import what they need when they run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from soulframe import hookimpl

if TYPE_CHECKING:
    import click


@hookimpl
def register_commands(cli: click.Group) -> None:
    from .commands import add_commands

    add_commands(cli)
