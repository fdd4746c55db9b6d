"""Deep Agents' own tools as the `deepagents` preset sends them equal the real `create_deep_agent`'s."""

from __future__ import annotations

import json

import pytest

from engine.layers.agent_tools import DEEPAGENTS_TOOLS_FILE, deepagents_tools

pytest.importorskip("deepagents", reason="deepagents==0.7.32 is a test dependency")
from tests.differential.deepagents_tools import real_tools  # noqa: E402


def test_the_data_file_holds_the_real_agents_tools() -> None:
    real = real_tools()
    assert json.loads(DEEPAGENTS_TOOLS_FILE.read_text(encoding="utf-8"))["tools"] == real == deepagents_tools()
    assert [t["name"] for t in real] == ["ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep", "task"]
    # each property keeps its `title` (the form count_tokens_approximately serializes a BaseTool in)
    assert real[1]["parameters"]["properties"]["file_path"]["title"] == "File Path"


class _Profiled:
    """A scripted model Deep Agents takes for `provider:model_name` (graph.py `_harness_profile_for_model`)."""

    @staticmethod
    def make(provider: str, name: str, responses: list) -> object:
        from tests.differential.harness import ScriptedModel

        class Model(ScriptedModel):
            model_name: str = name

            def _get_ls_params(self, stop=None, **kwargs):  # type: ignore[no-untyped-def]
                return {"ls_provider": provider, "ls_model_name": name}

        return Model(responses=responses, profile={"max_input_tokens": 100_000})


@pytest.mark.parametrize("provider, name", [("anthropic", "claude-sonnet-4-6"), ("openai", "gpt-5.3-codex")])
def test_a_profiled_models_prompt_and_tools_are_deep_agents(provider: str, name: str) -> None:
    # Deep Agents appends its harness profile's suffix for these models (and, for Codex, LangChain's
    # TodoListMiddleware: write_todos after task, its prompt last); the preset on a thread of that model does too
    from deepagents import create_deep_agent
    from langchain_core.messages import AIMessage, HumanMessage

    from engine.config.schema import preset
    from engine.run.replay import replay
    from engine.thread.model import Thread
    from tests.differential.harness import Observer, counted_tool

    observer = Observer()
    model = _Profiled.make(provider, name, [AIMessage("done", id="a0")])
    agent = create_deep_agent(model=model, tools=[], system_prompt="You are a test agent.", middleware=[observer])
    agent.invoke({"messages": [HumanMessage("hi", id="h0")]})
    [real] = observer.steps
    [sent] = model.calls  # type: ignore[attr-defined]  # as the model got it (the profile's middleware run inside the observer)
    thread = Thread("t", [HumanMessage("hi", id="h0"), AIMessage("done", id="a0")], model=name,
                    system_prompt="You are a test agent.", max_input_tokens=100_000)
    [ours] = replay(thread, preset("deepagents")).steps
    content = sent[0].content
    expected = content if isinstance(content, str) else "".join(b["text"] if isinstance(b, dict) else str(b) for b in content)
    assert sent[0].type == "system" and real.system is not None
    assert str(ours.system.content) == expected
    assert [counted_tool(t) for t in ours.tools] == real.tools
    assert ("write_todos" in ours.tool_names) == (provider == "openai")
