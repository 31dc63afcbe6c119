"""The standard system-prompt sections of the seeds, from the identity line (1) to the
recency reminders (16). ``catalog.SECTIONS`` is the table of names, orders, modes, zones and
truncation priorities; each render function lives in a module named for what it covers.

To replace a section, register one with the same name from your own plugin (later wins);
to remove one, list its name in ``prompt.disabled_sections``.
"""

from __future__ import annotations

from soulframe import Section, hookimpl

from .catalog import SECTIONS


@hookimpl
def register_prompt_sections() -> list[Section]:
    return list(SECTIONS)
