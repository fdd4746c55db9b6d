"""A framework's own tools in the request: Deep Agents' (input_context.agent_tools) and DeerFlow's
`write_todos` (todo.tool), ahead of the thread's, counted in the triggers."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately

from engine.config.schema import preset
from engine.layers.agent_tools import deepagents_tools, tool_name, with_agent_tools, write_todos_tool
from engine.layers.deerflow_todo_text import DEERFLOW_TODO_TOOL_DESCRIPTION
from engine.run.replay import replay
from engine.thread.model import Thread

DA_NAMES = ["ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep", "task"]
SEARCH = {"type": "function", "function": {"name": "search", "description": "Search the web.",
                                           "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}


def foreign_thread(turns: int = 3, size: int = 2000, **extra: object) -> Thread:
    msgs: list = [HumanMessage("look it up", id="h0")]
    for k in range(turns):
        msgs.append(AIMessage("", tool_calls=[{"name": "search", "args": {"q": str(k)}, "id": f"c{k}"}], id=f"a{k}"))
        msgs.append(ToolMessage("result " * size, tool_call_id=f"c{k}", name="search", id=f"t{k}"))
    msgs.append(AIMessage("done", id="end"))
    return Thread("foreign", msgs, source_format="openai_chat", tools=[SEARCH], max_input_tokens=20_000,
                  extra=dict(extra))


def test_deepagents_sends_its_own_tools_ahead_of_the_threads() -> None:
    run = replay(foreign_thread(), preset("deepagents"))
    assert [list(s.tool_names) for s in run.steps] == [[*DA_NAMES, "search"]] * 4
    assert list(run.steps[0].tools[:8]) == deepagents_tools()
    # a sub-agent transcript (its parent named by the importer) has no `task`, as Deep Agents' GP sub-agent
    sub = replay(foreign_thread(subagent_of={"thread": "p", "tool_call_id": "c9"}), preset("deepagents"))
    assert list(sub.steps[0].tool_names) == [*DA_NAMES[:-1], "search"]
    # other presets send the thread's tools alone
    assert list(replay(foreign_thread(), preset("langchain")).steps[0].tool_names) == ["search"]


def test_a_threads_own_tool_of_the_same_name_takes_its_place() -> None:
    own_read = {"name": "read_file", "description": "mine", "parameters": {"type": "object"}}
    tools = with_agent_tools([SEARCH, own_read], deepagents_tools())
    assert [tool_name(t) for t in tools] == [*DA_NAMES, "search"]
    assert tools[1] is own_read


def test_deep_agents_tools_count_in_its_summarization_trigger() -> None:
    # 0.85 x 20,000 = 17,000 approximate tokens: the tools (2,665 by count_tokens_approximately) move
    # Deep Agents' first summary one call earlier, as the real agent's does.
    assert count_tokens_approximately([], tools=deepagents_tools()) == 2665
    thread = foreign_thread(turns=5, size=2400)
    with_tools = replay(thread, preset("deepagents"))
    without = replay(thread, preset("deepagents").with_overrides(["input_context.agent_tools=none"]))
    assert [e.step for e in with_tools.events if e.kind == "summarize"] == [4]
    assert [e.step for e in without.events if e.kind == "summarize"] == [5]


def test_write_todos_carries_deerflows_description() -> None:
    tool = write_todos_tool(DEERFLOW_TODO_TOOL_DESCRIPTION)
    # LangChain's @tool keeps the description without its final newline
    assert tool["name"] == "write_todos" and tool["description"] == DEERFLOW_TODO_TOOL_DESCRIPTION.strip()
    assert list(tool["parameters"]["properties"]) == ["todos"]
