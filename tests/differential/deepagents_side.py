"""Deep Agents 0.7.32's own `create_deep_agent` around a scripted model, next to our `deepagents` preset.

The agent is the one a new user builds: `create_deep_agent(model, tools, system_prompt=...)` with
its default stack (filesystem offload and eviction, sub-agents, summarization with argument
truncation, dangling-call patch) and a profile giving the window. An observer middleware records
each step's state and the summarization event; the model records the exact request it was sent.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver

from engine.config import EngineConfig, preset
from engine.run import Run
from engine.thread import Thread
from tests.differential.harness import (
    Interrupted,
    Observer,
    RealStep,
    ScriptedModel,
    ScriptTool,
    _text,
    thread_from,
)
from tests.differential.scripts import CUSTOM_TOOLS, PROVIDER, Knobs, Script, generate

deepagents = pytest.importorskip("deepagents", reason="deepagents==0.7.32 is a test dependency")
from deepagents import create_deep_agent  # noqa: E402
from deepagents.middleware.summarization import SUMMARIZATION_EVENT_KEY, SummarizationState  # noqa: E402

KNOBS = Knobs(turns=(1, 3), steps_per_turn=(2, 9), result_chars=(40, 3000), big_result_chars=80_000,
              big_result_p=0.03, thinking_p=0.3, write_p=0.15, huge_human_p=0.08, window=(6000, 12000))
LAYER_DIRS = ("/large_tool_results/", "/conversation_history/")
SYSTEM_PROMPT = "You are a careful coding agent. Work step by step and report what you did."


class EventObserver(Observer):
    """The observer, with Deep Agents' private summarization keys in its schema so it can read them."""

    state_schema = SummarizationState


def counted_tool(tool: Any) -> dict[str, Any]:
    """A tool as LangChain's approximate counter measures it: {name, description, parameters}."""
    if isinstance(tool, dict):
        return tool
    assert isinstance(tool, BaseTool)
    schema = tool.tool_call_schema
    parameters = dict(schema) if isinstance(schema, dict) else dict(schema.model_json_schema())
    parameters.pop("title", None)
    parameters.pop("description", None)
    return {"name": tool.name, "description": tool.description, "parameters": parameters}


def make_script(seed: int) -> Script:
    script = generate(seed, KNOBS)
    script.system_prompt = SYSTEM_PROMPT  # one agent serves every script (see _Agent)
    return script


def our_config(script: Script) -> EngineConfig:
    d = preset("deepagents").to_dict()
    d["model"] = {**d["model"], "max_input_tokens": script.window, "provider": PROVIDER}
    return EngineConfig.from_dict(d)


class _Agent:
    """One `create_deep_agent` for every script, as a service runs many threads through one agent.

    Building a deep agent (its tools' schemas, the sub-agent graph) costs more than running a short
    thread, so the scripted model's responses and window and the tools' results are swapped per
    script; each script runs on its own thread id, so no state is shared.
    """

    def __init__(self) -> None:
        self.model = ScriptedModel(responses=[], profile={"max_input_tokens": 10_000})
        self.observer = EventObserver(private_keys=(SUMMARIZATION_EVENT_KEY,))
        self.tools = [ScriptTool(name=n, results={}) for n in CUSTOM_TOOLS]
        self.saver = InMemorySaver()
        self.agent = create_deep_agent(model=self.model, tools=self.tools, system_prompt=SYSTEM_PROMPT,
                                       middleware=[self.observer], checkpointer=self.saver)

    def reset(self, script: Script) -> None:
        self.model.responses, self.model.position = script.replies(), 0
        self.model.calls, self.model.summary_prompts = [], []
        self.model.profile = {"max_input_tokens": script.window}
        for tool in self.tools:
            tool.results = script.results
        self.observer.steps, self.observer.transcript, self.observer.results = [], [], {}
        self.saver.storage.clear()
        self.saver.writes.clear()


_AGENT: _Agent | None = None


def run_real(script: Script, *, fresh: bool = False) -> tuple[list[RealStep], Thread, dict[str, str], Observer]:
    """Play the script through create_deep_agent: steps, the raw thread, the layer files, the observer.

    `fresh`: on a newly built agent, not the shared one (the determinism probe: a difference that
    changes with the agent's history, the process or the clock is named as such, not as a rule)."""
    global _AGENT
    if fresh:
        _AGENT = None
    if _AGENT is None:
        _AGENT = _Agent()
    a = _AGENT
    a.reset(script)
    model, observer = a.model, a.observer
    cfg: RunnableConfig = {"configurable": {"thread_id": script.thread_id}, "recursion_limit": 10_000}
    observer.stopped = None  # type: ignore[attr-defined]
    for turn in script.turns:
        messages: list[BaseMessage] = [turn.human]
        try:
            a.agent.invoke({"messages": messages}, cfg, durability="exit")
        except Interrupted:
            continue
        except ContextOverflowError as error:  # Deep Agents gives up: the run ends here, as the thread does
            observer.stopped = str(error)  # type: ignore[attr-defined]
            break
    final = a.agent.get_state(cfg).values
    files = {p: _file_text(f) for p, f in (final.get("files") or {}).items() if p.startswith(LAYER_DIRS)}
    observer.final_event = final.get(SUMMARIZATION_EVENT_KEY)  # type: ignore[attr-defined]
    thread = thread_from(script, observer, [counted_tool(t) for t in model.bound])
    for step, sent in zip(observer.steps, model.calls, strict=True):  # the request as the model got it
        step.system = _text(sent[0].content) if sent and sent[0].type == "system" else None
        step.view = sent[1:] if sent and sent[0].type == "system" else list(sent)
    return observer.steps, thread, files, observer


def _file_text(f: Any) -> str:
    content = f.get("content") if isinstance(f, dict) else f
    if isinstance(content, list):
        return "\n".join(content)
    return str(content)


def our_files(run: Run) -> dict[str, str]:
    return {p: run.files.entry(p).content for p in run.files.paths() if p.startswith(LAYER_DIRS)}


def summary_positions(real: list[RealStep], final_event: Any, run: Run) -> Any:
    """Step k's summary position (the event's state cutoff after call k), real and ours."""
    def real_at(k: int) -> Any:
        event = real[k + 1].private.get(SUMMARIZATION_EVENT_KEY) if k + 1 < len(real) else final_event
        return event["cutoff_index"] if event else None

    ours: list[Any] = []
    current = None
    for step in run.steps:
        for e in step.events:
            if e.layer == "summarization" and e.kind == "summarize":
                current = e.payload.get("cutoff_index")
        ours.append(current)
    return lambda k: (real_at(k) if k < len(real) else None, ours[k] if k < len(ours) else None)


__all__ = ["KNOBS", "make_script", "our_config", "our_files", "run_real", "summary_positions"]
