"""The chat clients against a real HTTP server on 127.0.0.1 speaking each API."""

from __future__ import annotations

import logging
import time

import pytest
from fakes.llm_server import FakeLLMServer, Reply, call, fail, say
from soulframe._engine import conversation as m
from soulframe._engine.model import ToolSpec
from soulframe_chat.errors import ChatConfigError, ChatModelError
from soulframe_chat.models import build_chat_model
from soulframe_chat.settings import resolve_settings

KEY = "sk-test-0123456789abcdefSECRET"


def model_for(server: FakeLLMServer, api: str, **extra):
    table = {
        "provider": "anthropic" if api == "anthropic" else "openai-compatible",
        "name": "claude-test" if api == "anthropic" else "gpt-test",
        "base_url": server.anthropic_base_url if api == "anthropic" else server.openai_base_url,
        "api_key": KEY,
        "timeout_s": 5,
    }
    table.update(extra)
    return build_chat_model({"model": table})


NOTE_TOOL = ToolSpec(
    name="save_note",
    description="Save a note",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    handler=lambda ctx, args: "saved",
)

APIS = ["openai", "anthropic"]


@pytest.mark.parametrize("api", APIS)
def test_text_reply_and_the_key_is_sent(api):
    with FakeLLMServer([say("Hello there")], require_key=KEY) as srv:
        reply = model_for(srv, api).chat([m.system("be brief"), m.user("hi")])
    assert reply.text == "Hello there"
    assert reply.tool_calls == ()
    assert reply.usage["total_tokens"] == 15
    sent = srv.requests[0]
    if api == "anthropic":
        assert sent.path == "/v1/messages"
        assert sent.headers["x-api-key"] == KEY
        assert sent.headers["anthropic-version"] == "2023-06-01"
        assert sent.json["system"] == "be brief"
        assert sent.json["messages"] == [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]}
        ]
        assert sent.json["max_tokens"] > 0
    else:
        assert sent.path == "/v1/chat/completions"
        assert sent.headers["authorization"] == f"Bearer {KEY}"
        assert sent.json["messages"] == [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
        ]
    assert sent.json["model"] in ("gpt-test", "claude-test")


@pytest.mark.parametrize("api", APIS)
def test_tool_call_round_trip(api):
    script = [call("save_note", "Saving.", text="buy milk"), say("Done")]
    with FakeLLMServer(script) as srv:
        model = model_for(srv, api)
        convo = [m.system("sys"), m.user("remember to buy milk")]
        first = model.chat(convo, tools=[NOTE_TOOL])
        assert [(c.name, dict(c.arguments)) for c in first.tool_calls] == [
            ("save_note", {"text": "buy milk"})
        ]
        convo += [m.assistant(first), m.tool_result(first.tool_calls[0], "saved")]
        second = model.chat(convo, tools=[NOTE_TOOL])
    assert second.text == "Done"
    tools_sent = srv.requests[0].json["tools"]
    back = srv.requests[1].json["messages"]
    call_id = first.tool_calls[0].id
    if api == "anthropic":
        assert tools_sent == [
            {
                "name": "save_note",
                "description": "Save a note",
                "input_schema": dict(NOTE_TOOL.parameters),
            }
        ]
        assert first.finish_reason == "tool_use"
        assert back[1]["role"] == "assistant"
        assert {
            "type": "tool_use",
            "id": call_id,
            "name": "save_note",
            "input": {"text": "buy milk"},
        } in back[1]["content"]
        assert back[2] == {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "saved"}],
        }
    else:
        assert tools_sent[0]["type"] == "function"
        assert tools_sent[0]["function"]["name"] == "save_note"
        assert tools_sent[0]["function"]["parameters"] == dict(NOTE_TOOL.parameters)
        assert back[2]["tool_calls"][0]["id"] == call_id
        assert back[2]["tool_calls"][0]["function"]["name"] == "save_note"
        assert back[3] == {"role": "tool", "tool_call_id": call_id, "content": "saved"}


@pytest.mark.parametrize("api", APIS)
def test_a_conversation_with_tool_calls_is_saved_as_json_and_sent_again(api):
    """A host keeps the conversation the kit helpers build (to resume it, or hand it to
    ``memory flush --transcript``): ``json.dumps`` failed on the ToolCall objects of an
    assistant turn. Read back, it reaches the API as the original did."""
    import json

    script = [call("save_note", "Saving.", text="café au lait"), say("Done"), say("Done")]
    with FakeLLMServer(script) as srv:
        model = model_for(srv, api)
        first = model.chat([m.user("remember the café")], tools=[NOTE_TOOL])
        convo = [m.user("remember the café"), m.assistant(first), m.tool_result(first.tool_calls[0], "saved")]
        saved = json.loads(json.dumps(convo))
        model.chat(convo, tools=[NOTE_TOOL])
        model.chat(saved, tools=[NOTE_TOOL])
    assert srv.requests[2].json["messages"] == srv.requests[1].json["messages"]
    assert m.tool_calls_of(saved[1]) == list(first.tool_calls)


def test_anthropic_tool_errors_are_flagged_and_consecutive_results_merged():
    with FakeLLMServer([say("ok")]) as srv:
        model = model_for(srv, "anthropic")
        first = Reply  # noqa: F841 - the assistant turn below is built by hand
        from soulframe._engine.model import ChatReply, ToolCall

        turn = ChatReply(
            tool_calls=(ToolCall("a", "read_file", {"path": "x"}), ToolCall("b", "read_file", {}))
        )
        model.chat(
            [
                m.user("go"),
                m.assistant(turn),
                m.tool_result(turn.tool_calls[0], "content"),
                m.tool_result(turn.tool_calls[1], "error: path is required", is_error=True),
            ]
        )
    sent = srv.requests[0].json["messages"]
    assert len(sent) == 3  # user, assistant, one user turn holding both results
    assert sent[2]["content"][1] == {
        "type": "tool_result",
        "tool_use_id": "b",
        "content": "error: path is required",
        "is_error": True,
    }


@pytest.mark.parametrize("api", APIS)
def test_retry_after_429_is_honoured(api):
    with FakeLLMServer([fail(429, "slow down", retry_after=0.4), say("finally")]) as srv:
        reply = model_for(srv, api).chat([m.user("hi")])
    assert reply.text == "finally"
    assert len(srv.requests) == 2
    waited = srv.requests[1].received_at - srv.requests[0].received_at
    assert waited >= 0.4


@pytest.mark.parametrize("api", APIS)
def test_503_is_retried_with_backoff_then_reported(api):
    script = [fail(503), fail(503), fail(503)]
    with FakeLLMServer(script) as srv:
        model = model_for(srv, api, max_retries=2)
        with pytest.raises(ChatModelError) as info:
            model.chat([m.user("hi")])
    assert len(srv.requests) == 3
    assert info.value.status == 503
    assert "HTTP 503" in str(info.value) and "3 attempts" in str(info.value)


def test_a_400_is_not_retried():
    with FakeLLMServer([fail(400, "bad request: messages"), say("never")]) as srv:
        with pytest.raises(ChatModelError, match="HTTP 400.*bad request: messages"):
            model_for(srv, "openai").chat([m.user("hi")])
    assert len(srv.requests) == 1


def test_a_retry_after_past_the_deadline_gives_up_at_once():
    with FakeLLMServer([fail(429, retry_after=30), say("never")]) as srv:
        model = model_for(srv, "openai", timeout_s=2)
        started = time.monotonic()
        with pytest.raises(ChatModelError, match="retry"):
            model.chat([m.user("hi")])
    assert time.monotonic() - started < 1.5
    assert len(srv.requests) == 1


@pytest.mark.parametrize("api", APIS)
def test_timeout(api):
    with FakeLLMServer([say("too late", delay=2.0)]) as srv:
        model = model_for(srv, api)
        started = time.monotonic()
        with pytest.raises(ChatModelError) as info:
            model.chat([m.user("hi")], timeout=0.3)
    assert info.value.timeout
    assert time.monotonic() - started < 1.5


@pytest.mark.parametrize("api", APIS)
def test_the_key_never_appears_in_errors_reprs_or_logs(api, caplog):
    caplog.set_level(logging.DEBUG)
    # the server echoes the key it got in its 401 message, as real APIs do
    with FakeLLMServer([fail(503)], require_key="the-right-key") as srv:
        model = model_for(srv, api)
        with pytest.raises(ChatModelError) as info:
            model.chat([m.user("hi")])
    message = str(info.value)
    assert "HTTP 401" in message and "check the API key" in message
    assert KEY not in message and KEY[-8:] not in message
    assert KEY not in repr(model) and KEY not in repr(model.settings)  # type: ignore[attr-defined]
    assert KEY not in str(model.settings)  # type: ignore[attr-defined]
    assert KEY not in caplog.text
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_retries_are_logged_without_the_key(caplog):
    caplog.set_level(logging.DEBUG)
    with FakeLLMServer([fail(429, retry_after=0), say("ok")]) as srv:
        model_for(srv, "openai").chat([m.user("hi")])
    assert "429" in caplog.text
    assert KEY not in caplog.text


def test_a_reply_that_is_not_json_is_a_clear_error():
    with FakeLLMServer([Reply(raw_body=b"<html>gateway</html>")]) as srv:
        with pytest.raises(ChatModelError, match="not JSON"):
            model_for(srv, "openai").chat([m.user("hi")])


@pytest.mark.parametrize(
    "api, body, why",
    [
        ("openai", b'{"choices":[{"message":"hi"}]}', "message is a str, not an object"),
        ("openai", b'{"choices":[{"finish_reason":"stop"}]}', "message is missing"),
        ("openai", b'{"choices":[{"message":{"tool_calls":"x"}}]}', "tool_calls is a str"),
        ("openai", b'{"choices":[{"message":{"tool_calls":["x"]}}]}', "tool call 1 of the reply"),
        ("openai", b'{"choices":[{"message":{"tool_calls":[{"id":"c"}]}}]}', "tool call 1"),
        ("anthropic", b'{"type":"message","content":"hi"}', "no content list"),
    ],
)
def test_a_malformed_reply_is_a_chat_model_error_saying_what_is_wrong(api, body, why):
    """The routines catch ChatModelError alone: anything else from a 200 reply a proxy or a
    half-compatible server mangled crashes a cron heartbeat or a host's compaction."""
    with FakeLLMServer([Reply(raw_body=body)]) as srv:
        with pytest.raises(ChatModelError) as info:
            model_for(srv, api).chat([m.user("hi")])
    assert why in str(info.value)
    assert ("gpt-test" if api == "openai" else "claude-test") in str(info.value)


@pytest.mark.parametrize(
    "api, body",
    [
        ("openai", b'{"choices":[{"message":{"content":"fine"}}],"usage":[1]}'),
        ("anthropic", b'{"content":[{"type":"text","text":"fine"}],"usage":"n/a"}'),
    ],
)
def test_a_malformed_usage_does_not_cost_the_answer(api, body):
    with FakeLLMServer([Reply(raw_body=body)]) as srv:
        reply = model_for(srv, api).chat([m.user("hi")])
    assert reply.text == "fine" and reply.usage == {}


def test_invalid_tool_arguments_are_kept_for_the_loop_to_report():
    from soulframe_chat.openai_client import parse_reply

    reply = parse_reply(
        {
            "choices": [
                {
                    "message": {
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "x", "arguments": "{oops"},
                            }
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ]
        }
    )
    assert m.INVALID_ARGUMENTS in reply.tool_calls[0].arguments


# --------------------------------------------------------------------------- configuration


def test_openai_needs_a_key_and_says_where_to_put_it():
    with pytest.raises(ChatConfigError, match="OPENAI_API_KEY"):
        resolve_settings({"provider": "openai", "name": "gpt-4o-mini"}, environ={})


def test_api_key_env_names_a_variable_that_is_read_not_printed():
    settings = resolve_settings(
        {"provider": "anthropic", "name": "c", "api_key_env": "MY_KEY"}, environ={"MY_KEY": KEY}
    )
    assert settings.api_key is not None and settings.api_key.reveal() == KEY
    assert KEY not in repr(settings)
    with pytest.raises(ChatConfigError, match="MY_KEY.*not set"):
        resolve_settings(
            {"provider": "anthropic", "name": "c", "api_key_env": "MY_KEY"}, environ={}
        )


def test_openai_compatible_needs_a_base_url_but_no_key():
    with pytest.raises(ChatConfigError, match="base_url"):
        resolve_settings({"provider": "openai-compatible", "name": "llama"}, environ={})
    settings = resolve_settings(
        {"provider": "openai-compatible", "name": "llama", "base_url": "http://127.0.0.1:9/v1/"},
        environ={},
    )
    assert settings.api_key is None and settings.base_url == "http://127.0.0.1:9/v1"


def test_no_provider_is_a_clear_error():
    with pytest.raises(ChatConfigError, match=r"\[model\] provider"):
        resolve_settings({}, environ={})


def test_models_are_offered_through_the_plugin_hook_and_built_from_a_config():
    from soulframe._engine.config import load_config
    from soulframe._engine.plugins import collect_named, make_plugin_manager

    registry = collect_named(make_plugin_manager(), "register_chat_models")
    assert {"openai", "openai-compatible", "anthropic"} <= set(registry)
    assert registry["anthropic"].plugin == "soulframe_chat"
    with FakeLLMServer([say("from config")]) as srv:
        config = load_config(
            search=False,
            overrides={
                "model.provider": "openai-compatible",
                "model.name": "local-model",
                "model.base_url": srv.openai_base_url,
            },
        )
        from soulframe._engine.agent import Agent

        model = registry["openai-compatible"].factory(Agent(config))
        assert model.chat([m.user("hi")]).text == "from config"
    assert "authorization" not in srv.requests[0].headers  # no key configured, none sent
