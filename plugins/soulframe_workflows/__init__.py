"""The practical workflows of seed 003 §8 on the command line.

* ``soulframe agents list`` / ``agents add`` — several agents on one host (§5.4, §8.7);
* ``soulframe backup init`` / ``commit`` / ``status`` / ``restore`` — the workspace in a
  private git repository (§6.12, §8.6); soulframe never pushes;
* ``soulframe memory logs`` / ``memory prune`` — reviewing and archiving daily logs (§8.4);
* ``soulframe doctor`` checks for the memory index, skills, memory files growing towards
  the bootstrap limit (§8.4, §8.10).

Nothing heavy is imported here: the commands import what they need when they run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from soulframe import hookimpl
from soulframe.model import DoctorCheck

if TYPE_CHECKING:
    import click


@hookimpl
def register_commands(cli: click.Group) -> None:
    from .commands import add_commands

    add_commands(cli)


@hookimpl
def register_doctor_checks() -> Iterable[DoctorCheck]:
    from .checks import CHECKS

    return CHECKS
