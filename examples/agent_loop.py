"""A complete agent loop: soulframe gives the system prompt and the tools, any
OpenAI-compatible chat API (OpenAI, OpenRouter, LM Studio, Ollama, vLLM) does the thinking.

    python examples/agent_loop.py ~/agent "What did we decide about the Lisbon trip?" \
        --base-url http://localhost:1234/v1 --model qwen2.5-7b-instruct

Only the standard library talks HTTP, so the loop is easy to move into your own code.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

from soulframe import Agent, Session
from soulframe.kit import ToolError, dispatch, export_tools


def chat(base_url: str, api_key: str | None, model: str, messages: list[dict[str, Any]],
         tools: list[dict[str, Any]]) -> dict[str, Any]:
    body = json.dumps({"model": model, "messages": messages, "tools": tools}).encode()
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(f"{base_url.rstrip('/')}/chat/completions", data=body, headers=headers)
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)["choices"][0]["message"]


def run(workspace: str, question: str, *, base_url: str, model: str, api_key: str | None,
        max_turns: int = 6) -> str:
    agent = Agent.open(workspace)
    session = Session.main(channel="cli")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": agent.system_prompt(session).text},
        {"role": "user", "content": question},
    ]
    tools = export_tools(agent.tools(session), "openai")
    for _ in range(max_turns):
        reply = chat(base_url, api_key, model, messages, tools)
        messages.append({k: v for k, v in reply.items() if v is not None})
        calls = reply.get("tool_calls") or []
        if not calls:
            return reply.get("content") or ""
        for call in calls:
            fn = call["function"]
            try:
                result: Any = dispatch(agent, fn["name"], fn.get("arguments") or "{}", session=session)
            except ToolError as exc:  # the model reads the error and can correct its call
                result = {"error": str(exc)}
            messages.append({"role": "tool", "tool_call_id": call["id"],
                             "content": json.dumps(result, ensure_ascii=False, default=str)})
    return "(stopped after too many tool calls)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace")
    parser.add_argument("question")
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"))
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY",
                        help="environment variable holding the API key (not needed for local servers)")
    args = parser.parse_args()
    api_key = os.environ.get(args.api_key_env)
    try:
        answer = run(args.workspace, args.question, base_url=args.base_url, model=args.model,
                     api_key=api_key)
    except urllib.error.HTTPError as exc:  # the API's own explanation is in the body
        detail = exc.read().decode("utf-8", "replace")[:500]
        if api_key:  # a 401 body may quote the key back: never print it
            detail = detail.replace(api_key, "***")
        sys.exit(f"error: {exc.url}: HTTP {exc.code}: {detail}")
    except urllib.error.URLError as exc:
        sys.exit(f"error: cannot reach {args.base_url}: {exc.reason} (is the server running? see --base-url)")
    print(answer)


if __name__ == "__main__":
    main()
