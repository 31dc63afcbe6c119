"""Commands of the managed-mode plugin (in progress)."""

from __future__ import annotations

import click


def add_commands(cli: click.Group) -> None:
    return None
