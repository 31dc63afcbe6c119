"""The errors the chat clients raise: always a :class:`~soulframe.SoulframeError`,
so the CLI prints the message without a traceback, and never with a secret in it.

The classes are the core's (:mod:`soulframe._engine.toolloop`), so the agent routines catch them
without importing this plugin; they are re-exported here for the clients and their users.
"""

from __future__ import annotations

from soulframe.kit import ChatConfigError, ChatModelError

__all__ = ["ChatConfigError", "ChatModelError"]
