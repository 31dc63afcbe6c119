"""The practical workflows of seed 003 §8 on the command line.

* ``soulframe agents list`` / ``agents add`` — several agents on one host (§5.4, §8.7);
* ``soulframe backup init`` / ``commit`` / ``status`` / ``restore`` — the workspace in a
  private git repository (§6.12, §8.6); soulframe never pushes.

Reviewing and archiving daily logs (``memory logs`` / ``prune``) and the memory doctor
checks belong to ``soulframe_memory``; the skills check to ``soulframe_skills``.

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
