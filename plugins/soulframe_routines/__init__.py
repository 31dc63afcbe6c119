"""Agent routines: the loops that call a chat model on the agent's behalf, apart from the
chat clients themselves.

* ``soulframe boot``: the BOOT.md startup ritual (seed 003 §1.1; hosts call
  :func:`soulframe_routines.boot.run_boot` at startup), through the core's shared
  tool-call loop (:mod:`soulframe._engine.toolloop`);
* ``soulframe heartbeat``: a health check against HEARTBEAT.md
  (:func:`soulframe_routines.heartbeat.run_heartbeat`);
* ``soulframe agents summon``: an agent's context files from a description
  (:func:`soulframe_routines.summon.summon`).

The chat model is the one ``[model] provider`` selects, reached through the
``register_chat_models`` registry, so any provider plugin serves. The memory flush, also a
routine, belongs with the memory it writes (``soulframe_memory``). Nothing heavy is
imported here: the commands import what they need when they run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from soulframe import hookimpl

if TYPE_CHECKING:
    import click


@hookimpl(trylast=True)
def register_commands(cli: click.Group) -> None:
    # trylast: a group another plugin owns (agents) exists by now, so summon joins it
    from .commands import add_commands

    add_commands(cli)
