"""The section contract holds a section meant for one session kind to that kind's prompt:
a group chat's rules never show in a main session, and the contract must not demand it."""

from __future__ import annotations

import pytest
from soulframe import PromptContext, Section, Session
from soulframe.testing import SectionContract


def _group_rules(ctx: PromptContext) -> str | None:
    return "## Group rules\nNo spoilers before Friday." if ctx.session.kind == "group" else None


GROUP_RULES = Section(name="group_rules", order=9.7, render=_group_rules, zone="dynamic")


class TestAGroupOnlySection(SectionContract):
    expected = "No spoilers before Friday."
    shown_in = Session.group(chat_title="Book club")

    @pytest.fixture
    def section(self) -> Section:
        return GROUP_RULES
