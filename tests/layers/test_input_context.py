"""Input context: the system prompt assembled from named parts, each counted."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from engine.config.schema import preset
from engine.config.sections import SkillConfig
from engine.layers import LayerContext
from engine.layers.input_context import (
    BASE_AGENT_PROMPT,
    FILESYSTEM_TOOL_PROMPT,
    SKILLS_HEADER,
    TASK_TOOL_PROMPT,
    TODO_TOOL_PROMPT,
    InputContextLayer,
    Part,
    assemble_prompt,
    prompt_text,
)
from engine.run.replay import replay
from engine.thread.events import recording
from engine.thread.model import Thread
from engine.tokens.counters import get_counter

APPROX = get_counter("approximate")
SKILLS = (SkillConfig(name="pdf", description="Read and fill PDF forms.", path="/skills/pdf/SKILL.md"),
          SkillConfig(name="sql", description="Query the warehouse."))


class FakeModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeModel:
        return self


def test_parts_in_order_with_only_the_tool_prompts_that_apply() -> None:
    parts = assemble_prompt("You review code.", tool_names=["ls", "write_todos", "task", "web_search"], skills=SKILLS)
    assert [p.part for p in parts] == ["custom", "base", "tool_prompts", "skills"]
    assert all(p.category == "system" for p in parts)
    assert parts[0] == Part("custom", "system", "You review code.")
    assert parts[1].text == BASE_AGENT_PROMPT
    assert parts[2].text == TODO_TOOL_PROMPT + "\n\n" + FILESYSTEM_TOOL_PROMPT + "\n\n" + TASK_TOOL_PROMPT
    assert parts[3].text == (SKILLS_HEADER + "\n\n- **pdf**: Read and fill PDF forms. (read `/skills/pdf/SKILL.md`)\n"
                             "- **sql**: Query the warehouse.")
    assert prompt_text(parts) == "\n\n".join(p.text for p in parts)


def test_parts_left_out() -> None:
    assert [p.part for p in assemble_prompt("c", tool_names=["grep"])] == ["custom", "base", "tool_prompts"]
    assert [p.part for p in assemble_prompt(None, tool_names=["web_search"])] == ["base"]
    assert assemble_prompt(None, base_prompt=False, tool_names=["ls"], tool_prompts=False) == []
    only_tasks = assemble_prompt(None, base_prompt=False, tool_names=["Agent"], task_tool_names=("Agent",))
    assert [p.text for p in only_tasks] == [TASK_TOOL_PROMPT]


def test_layer_builds_one_message_with_parts_and_announces_once() -> None:
    layer = InputContextLayer(LayerContext(counter=APPROX), skills=SKILLS[1:])
    incoming = SystemMessage("Thread prompt.", id="system")
    tools = [{"name": "ls", "description": "list", "parameters": {"type": "object"}}]
    with recording() as rec:
        msg, parts = layer.system_message(incoming, ["ls"])
        layer._announce(parts, tools)
    assert msg is not None and msg.id == "system"
    assert msg.content == prompt_text(parts)
    assert [p["part"] for p in msg.additional_kwargs["ctxi_parts"]] == ["custom", "base", "tool_prompts", "skills"]
    [event] = rec.events
    assert event.kind == "assemble"
    assert event.payload["parts"] == [{"part": p.part, "category": "system", "tokens": APPROX.count_text(p.text)} for p in parts]
    assert event.payload["tools"] == [{"name": "ls", "tokens": APPROX.count_tools(tools)}]
    assert event.tokens_after == APPROX.count_text(msg.content)
    assert incoming.content == "Thread prompt." and "ctxi_parts" not in incoming.additional_kwargs


def test_custom_prompt_from_config_replaces_the_threads() -> None:
    layer = InputContextLayer(custom_prompt="Configured.", base_prompt=False, tool_prompts=False)
    msg, _ = layer.system_message(SystemMessage("Recorded."), [])
    assert msg is not None and msg.content == "Configured."


class Seen(AgentMiddleware):
    def __init__(self) -> None:
        super().__init__()
        self.systems: list[Any] = []

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.systems.append(request.system_message)
        return handler(request)


def test_inside_create_agent() -> None:
    @tool
    def read_file(file_path: str) -> str:
        """Read a file."""
        return "contents"

    model = FakeModel(messages=iter([
        AIMessage("", id="m1", tool_calls=[{"name": "read_file", "args": {"file_path": "/a"}, "id": "r1", "type": "tool_call"}]),
        AIMessage("done", id="m2"),
    ]))
    seen = Seen()
    agent = create_agent(model, [read_file], system_prompt="You read files.", middleware=[InputContextLayer(), seen])
    with recording() as rec:
        agent.invoke({"messages": [HumanMessage("read /a", id="h")]})
    first, second = seen.systems
    assert first.content == "You read files.\n\n" + BASE_AGENT_PROMPT + "\n\n" + FILESYSTEM_TOOL_PROMPT
    assert second is first
    assert [e.kind for e in rec.events] == ["assemble"]


def test_replay_breaks_the_system_prompt_into_parts_every_step() -> None:
    msgs = [HumanMessage("hi", id="h"),
            AIMessage("", id="a1", tool_calls=[{"name": "write_todos", "args": {"todos": []}, "id": "w1"}]),
            ToolMessage("ok", tool_call_id="w1", id="t1"), AIMessage("bye", id="a2")]
    thread = Thread("ic", msgs, system_prompt="Recorded prompt.",
                    tools=[{"name": "write_todos", "description": "todos", "parameters": {"type": "object"}}])
    config = preset("deepagents").with_overrides(["summarization.enabled=false", "memory.enabled=false",
                                                  "input_context.base_prompt=true", "input_context.tool_prompts=true",
                                                  "input_context.agent_tools=none", "tokens.counter=approximate"])
    run = replay(thread, config)
    expected = "Recorded prompt.\n\n" + BASE_AGENT_PROMPT + "\n\n" + TODO_TOOL_PROMPT
    assert [s.system.content for s in run.steps] == [expected, expected]
    assert [[e.kind for e in s.events if e.layer == "input_context"] for s in run.steps] == [["assemble"], []]
    assert run.steps[0].view_by_category["system"] == APPROX.count_message(run.steps[0].system)
    assert run.steps[0].view_by_category["tools"] == APPROX.count_tools(thread.tools)
    assert thread.system_prompt == "Recorded prompt."


def test_langchain_preset_keeps_the_recorded_prompt_as_is() -> None:
    thread = Thread("lc", [HumanMessage("hi", id="h"), AIMessage("yo", id="a")], system_prompt="Just this.")
    run = replay(thread, preset("langchain"))
    assert run.steps[0].system.content == "Just this."
    assert run.steps[0].system.additional_kwargs["ctxi_parts"] == [{"part": "custom", "category": "system", "text": "Just this."}]
