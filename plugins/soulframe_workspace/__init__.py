"""The filesystem workspace: the bootstrap files as a context source, and seeding from
templates."""

from __future__ import annotations

from soulframe import hookimpl
