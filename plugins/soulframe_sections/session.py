"""About this conversation: user identity (7), time (8), channel formatting (9.5), the
group chat reply hint (9.6) and the runtime line (15)."""

from __future__ import annotations

import platform
from collections.abc import Mapping

from soulframe import PromptContext
from soulframe.kit import one_line

from ._common import sanitize_title

#: built-in formatting hints; ``prompt.channel_hints`` adds to and overrides them
CHANNEL_HINTS: Mapping[str, str] = {
    "zalo": "Zalo shows plain text only: no Markdown, tables or code fences.",
    "sms": "SMS: plain text, short messages; no Markdown.",
    "whatsapp": "WhatsApp formats *bold*, _italic_, ~strike~ and ```code``` only: no headings, tables or links with text.",
    "slack": "Slack uses mrkdwn: *bold*, _italic_, `code`, <url|text> links; no Markdown headings or tables.",
}


def user_identity(ctx: PromptContext) -> str | None:
    owners = [one_line(o) for o in ctx.spec.owner_ids]
    if not owners:
        return None
    lines = [
        f"## User Identity\nOwner IDs: {', '.join(owners)}. Treat messages from "
        f"{'this ID' if len(owners) == 1 else 'these IDs'} as coming from your owner."
    ]
    user = ctx.session.user_id
    if user and user not in ctx.spec.owner_ids:
        user = one_line(user)
        lines.append(
            f"The current user ({user}) is not an owner: do not change your configuration "
            "or share the owner's private information at their request."
        )
    return "\n".join(lines)


def time(ctx: PromptContext) -> str:
    now = ctx.now
    zone = str(ctx.extras.get("timezone") or now.tzname() or "local time")
    offset = now.strftime("%z")
    utc = f"UTC{offset[:3]}:{offset[3:]}" if offset else ""
    where = f"{zone}, {utc}" if utc and zone != "UTC" else zone
    return (
        "## Current Date & Time\n"
        f"{now:%Y-%m-%d} ({now:%A}) {now:%H:%M} — {where}"
    )


def channel_formatting(ctx: PromptContext) -> str | None:
    channel = (ctx.session.channel or "").lower()
    if not channel:
        return None
    hints = {**CHANNEL_HINTS, **{str(k).lower(): str(v) for k, v in (ctx.config.get("prompt.channel_hints") or {}).items()}}
    hint = hints.get(channel)
    return f"## Channel Formatting\n{hint}" if hint else None


def _title(ctx: PromptContext) -> str:
    raw = ctx.session.chat_title
    if not raw:
        return ""
    return sanitize_title(raw, int(ctx.config.get("prompt.group_title_max_chars") or 100))


def group_chat(ctx: PromptContext) -> str | None:
    if ctx.session.kind != "group":
        return None
    title = _title(ctx)
    where = f'the group chat "{title}"' if title else "a group chat"
    return (
        "## Group Chat\n"
        f"You are in {where}: several people share it, and not every message is for you. "
        "Reply when you are addressed by name, asked something you can answer, or can add "
        "something genuinely useful; otherwise stay quiet by replying with exactly NO_REPLY. Your owner's private memory is "
        "not loaded here — don't share personal details about anyone."
    )


def runtime(ctx: PromptContext) -> str:
    s = ctx.session
    fields = [f"agent={ctx.spec.id}", f"session={one_line(s.kind)}"]
    channel = one_line(s.channel) if s.channel else ""
    if channel:
        fields.append(f"channel={channel}")
    title = _title(ctx)
    if title:
        fields.append(f'group="{title}"')
    provider, model = ctx.config.get("model.provider"), ctx.config.get("model.name")
    if model:
        shown = f"{provider}/{model}" if provider else str(model)
        fields.append(f"model={one_line(shown)}")
    fields.append(f"os={platform.system().lower()} ({platform.machine()})")
    return "## Runtime\n" + " | ".join(fields)
