"""Deep Agents 0.7.32's own tools, read from the real `create_deep_agent`: what `input_context.agent_tools:
deepagents` sends (engine/data/deepagents_0_7_32_tools.json).

`python -m tests.differential.deepagents_tools` rewrites the data file from the installed deepagents;
tests/differential/test_deepagents_tools.py fails when the file and the real agent disagree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from engine.layers.agent_tools import DEEPAGENTS_TOOLS_FILE
from tests.differential.harness import ScriptedModel, counted_tool


def real_tools() -> list[dict[str, Any]]:
    """The tools `create_deep_agent(model, tools=[], system_prompt=...)` binds, in order, as LangChain's
    counter serializes them (a scripted model answers once; its first `bind_tools` is the request's)."""
    from deepagents import create_deep_agent

    model = ScriptedModel(responses=[AIMessage("done", id="a0")], profile={"max_input_tokens": 100_000})
    agent = create_deep_agent(model=model, tools=[], system_prompt="You are a test agent.")
    agent.invoke({"messages": [HumanMessage("hi", id="h0")]})
    return [counted_tool(t) for t in model.bound]


def real_profiles() -> dict[str, dict[str, Any]]:
    """Deep Agents' built-in harness profiles for Anthropic and OpenAI models (deepagents/profiles/harness):
    the suffix each appends to the system prompt, and whether it adds LangChain's TodoListMiddleware."""
    from deepagents.profiles import _builtin_profiles
    from deepagents.profiles.harness.harness_profiles import _HARNESS_PROFILES

    _builtin_profiles._ensure_builtin_profiles_loaded()
    out = {}
    for spec, profile in sorted(_HARNESS_PROFILES.items()):
        if not spec.startswith(("anthropic:", "openai:")):
            continue
        extra = profile.materialize_extra_middleware() if profile.extra_middleware else []
        assert profile.base_system_prompt is None and not profile.tool_description_overrides, spec
        assert all(type(m).__name__ == "TodoListMiddleware" for m in extra), spec
        out[spec] = {"system_prompt_suffix": profile.system_prompt_suffix or "", "todo": bool(extra)}
    return out


def write(path: Path = DEEPAGENTS_TOOLS_FILE) -> None:
    tools = real_tools()
    path.write_text(json.dumps({"source": "deepagents 0.7.32 create_deep_agent(model, tools=[], system_prompt=...): "
                                          "the tools its model is bound with, as count_tokens_approximately "
                                          "serializes them, and its built-in harness profiles for Anthropic and "
                                          "OpenAI models (tests/differential/deepagents_tools.py)",
                                "tools": tools, "profiles": real_profiles()}, indent=1, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    print(f"{path}: {', '.join(t['name'] for t in tools)}", file=sys.stderr)


if __name__ == "__main__":
    write()
