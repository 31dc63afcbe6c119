"""The engine: everything of soulframe that is not its public API.

Plugins import ``soulframe``, ``soulframe.hookspecs``, ``soulframe.kit``,
``soulframe.memorykit``, ``soulframe.cli`` and ``soulframe.testing`` (docs/api.md), never
this package: what is here may change between releases.
"""
