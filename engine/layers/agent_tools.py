"""The tools a framework adds to every request, next to the ones the thread's own agent was given.

A framework's middleware bring their own tools: `create_agent` binds them first, in middleware
order, then the caller's tools (langchain 1.5.2 `agents/factory.py`: `available_tools =
middleware_tools + regular_tools`, kept in a `tools_by_name` dict, so a caller's tool of the same
name takes the middleware tool's place). A preset that claims to be that framework sends them too:

- Deep Agents 0.7.32 `create_deep_agent(model, tools, system_prompt)` (`graph.py`): its
  FilesystemMiddleware's `ls, read_file, write_file, edit_file, delete, glob, grep` (`execute` is
  filtered out of the request for a backend that cannot run commands, the default StateBackend) and
  its SubAgentMiddleware's `task` (the general-purpose sub-agent listed). The general-purpose
  sub-agent's own stack (graph.py "Auto-add the default general-purpose subagent") has the
  filesystem tools but no SubAgentMiddleware, so no `task`. The schemas are read from the real agent
  (tests/differential/deepagents_tools.py) in the form LangChain's `count_tokens_approximately`
  counts a tool: `{name, description, parameters}` with each property's `title` kept.
- Deep Agents' harness profile for the model (`deepagents/profiles/harness`): Claude Sonnet 4.6, Opus 4.7
  and Haiku 4.5 append a suffix to the system prompt; the GPT-5.x Codex models append theirs and add
  LangChain's TodoListMiddleware (its `write_todos` tool after `task`, its prompt after the suffix).
- DeerFlow's `TodoMiddleware` (a LangChain `TodoListMiddleware`): `write_todos`, with the description
  DeerFlow passes (engine/layers/deerflow_todo_text.py); its schema is LangChain's own tool's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

DEEPAGENTS_TOOLS_FILE = Path(__file__).resolve().parent.parent / "data" / "deepagents_0_7_32_tools.json"
DEEPAGENTS_TASK_TOOL = "task"


@cache
def _deepagents_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DEEPAGENTS_TOOLS_FILE.read_text(encoding="utf-8"))
    return data


def _deepagents_tools() -> tuple[dict[str, Any], ...]:
    return tuple(_deepagents_data()["tools"])


def deepagents_profile(model: str | None) -> dict[str, Any] | None:
    """Deep Agents' built-in harness profile for a model (`deepagents/profiles/harness`, looked up by the
    exact `provider:identifier`, graph.py `_harness_profile_for_model`): `{system_prompt_suffix, todo}`
    for Claude Sonnet 4.6, Opus 4.7 and Haiku 4.5 and the GPT-5.x Codex models, else None. The
    provider is read from the model's name (a `provider/` prefix, as proxies write it, left out)."""
    if not model:
        return None
    identifier = model.rsplit("/", 1)[-1]
    lowered = identifier.lower()
    provider = "anthropic" if "claude" in lowered else "openai" if lowered.startswith(("gpt", "o1", "o3", "o4")) else None
    profile = _deepagents_data().get("profiles", {}).get(f"{provider}:{identifier}") if provider else None
    return dict(profile) if isinstance(profile, dict) else None


def deepagents_tools(*, subagent: bool = False) -> list[dict[str, Any]]:
    """Deep Agents 0.7.32's tools, in its order; a general-purpose sub-agent's have no `task`."""
    return [t for t in _deepagents_tools() if not (subagent and t["name"] == DEEPAGENTS_TASK_TOOL)]


def counted_form(tool: Any) -> dict[str, Any]:
    """A LangChain tool as `count_tokens_approximately` serializes it (a dict stays as it is)."""
    if isinstance(tool, dict):
        return tool
    schema = tool.tool_call_schema
    parameters = dict(schema) if isinstance(schema, dict) else dict(schema.model_json_schema())
    parameters.pop("title", None)
    parameters.pop("description", None)
    return {"name": tool.name, "description": tool.description, "parameters": parameters}


@cache
def write_todos_tool(description: str | None = None) -> dict[str, Any]:
    """LangChain's `write_todos` tool with `description` (None: LangChain's own), in the counted form."""
    from langchain.agents.middleware import TodoListMiddleware

    middleware = TodoListMiddleware(tool_description=description) if description else TodoListMiddleware()
    return counted_form(middleware.tools[0])


def tool_name(tool: Any) -> str:
    if isinstance(tool, dict):
        if isinstance(tool.get("function"), dict):  # OpenAI's {"type": "function", "function": {...}}
            return str(tool["function"].get("name", ""))
        return str(tool.get("name", ""))
    return str(getattr(tool, "name", ""))


def with_agent_tools(tools: Sequence[Any], added: Sequence[dict[str, Any]]) -> list[Any]:
    """`added` (a framework's tools) ahead of `tools`, as `create_agent` binds them; a tool of `tools`
    with an added tool's name stands in that tool's place, once."""
    own = {tool_name(t): t for t in tools}
    front = [own.get(t["name"], t) for t in added]
    names = {t["name"] for t in added}
    return [*front, *(t for t in tools if tool_name(t) not in names)]


__all__ = ["DEEPAGENTS_TOOLS_FILE", "counted_form", "deepagents_profile", "deepagents_tools", "tool_name",
           "with_agent_tools", "write_todos_tool"]
