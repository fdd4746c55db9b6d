"""Deep Agents 0.7.32's own `create_deep_agent` around a scripted model, next to our `deepagents` preset.

The agent is the one a new user builds: `create_deep_agent(model, tools, system_prompt=...)` with
its default stack (filesystem offload and eviction, sub-agents, summarization with argument
truncation, dangling-call patch) and a profile giving the window. An observer middleware records
each step's state and the summarization event; the model records the exact request it was sent.

A `task` call runs Deep Agents' default general-purpose sub-agent (graph.py 0.7.32, "Auto-add the
default general-purpose subagent"): its own `create_agent` with the caller's tools, the GP prompt
(subagents.py `DEFAULT_SUBAGENT_PROMPT`) and the same Filesystem -> Summarization -> PatchToolCalls
stack, but none of the caller's own middleware (only ones replacing a GP slot by name are
inherited). So its observer goes in through the model's harness profile, whose `extra_middleware`
Deep Agents adds to the main stack and to the GP sub-agent's alike (graph.py: `gp_middleware.extend(
_profile.materialize_extra_middleware())`); there it records each sub-agent's steps by task call id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from engine.config.schema import EngineConfig, preset
from engine.run.run import Run
from engine.thread.model import Thread
from tests.differential.harness import (
    Interrupted,
    Observer,
    RealStep,
    ScriptedModel,
    ScriptTool,
    _text,
    counted_tool,
    thread_from,
)
from tests.differential.scripts import CUSTOM_TOOLS, PROVIDER, TASK_PREFIX, Knobs, Script, generate

deepagents = pytest.importorskip("deepagents", reason="deepagents==0.7.32 is a test dependency")
from deepagents import create_deep_agent  # noqa: E402
from deepagents.middleware.subagents import GENERAL_PURPOSE_SUBAGENT  # noqa: E402
from deepagents.middleware.summarization import SUMMARIZATION_EVENT_KEY, SummarizationState  # noqa: E402
from deepagents.profiles import HarnessProfile, register_harness_profile  # noqa: E402

# task_p: about half the threads spawn a sub-agent, long enough (sub_steps) that many reach
# their own summary at 0.85 of the window, with their own offloads, truncations and thinking.
KNOBS = Knobs(turns=(1, 3), steps_per_turn=(2, 9), result_chars=(40, 3000), big_result_chars=80_000,
              big_result_p=0.03, thinking_p=0.3, write_p=0.15, huge_human_p=0.08, window=(6000, 12000),
              task_p=0.06, sub_steps=(4, 32), sub_big_result_p=0.04)
LAYER_DIRS = ("/large_tool_results/", "/conversation_history/")
SYSTEM_PROMPT = "You are a careful coding agent. Work step by step and report what you did."


class EventObserver(Observer):
    """The observer, with Deep Agents' private summarization keys in its schema so it can read them."""

    state_schema = SummarizationState


def _task_lane(messages: Any) -> str:
    """The task call a sub-agent's state belongs to: its first message is the task description
    (subagents.py `_validate_and_prepare_state`: `[HumanMessage(content=description)]`)."""
    first = messages[0] if messages else None
    if isinstance(first, HumanMessage) and isinstance(first.content, str) and first.content.startswith(TASK_PREFIX):
        return first.content[len(TASK_PREFIX):].split(":", 1)[0]
    return "main"


class SubagentObserver(EventObserver):
    """In every stack the harness profile reaches: records sub-agents' steps by task call id, and
    passes the main agent's calls through (the main agent has its own observer)."""

    def __init__(self) -> None:
        super().__init__()
        self.lanes: dict[str, EventObserver] = {}
        self.final_events: dict[str, Any] = {}

    def _recorder(self, lane: str) -> EventObserver:
        return self.lanes.setdefault(lane, EventObserver(private_keys=(SUMMARIZATION_EVENT_KEY,)))

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        lane = _task_lane((request.state or {}).get("messages"))
        if lane == "main":
            return handler(request)
        return self._recorder(lane).wrap_model_call(request, handler)

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        call_id = str(request.tool_call.get("id") or "")
        if ".s" not in call_id:
            return handler(request)
        return self._recorder(call_id.split(".s")[0]).wrap_tool_call(request, handler)

    def before_model(self, state: Any, runtime: Any) -> None:
        # the event the previous call left, seen even when this call never reaches the model (Deep
        # Agents raises ContextOverflowError from its summarization's wrap_model_call, outside ours)
        self._last_event(state)

    def after_agent(self, state: Any, runtime: Any) -> None:
        self._last_event(state)  # the event the sub-agent's last call left (no later step records it)

    def _last_event(self, state: Any) -> None:
        lane = _task_lane(state.get("messages"))
        if lane != "main":
            self.final_events[lane] = state.get(SUMMARIZATION_EVENT_KEY)


_SUB_OBSERVER: list[SubagentObserver] = []  # the one the profile hands the agent being built
# Registered once, for the scripted model's provider only (graph.py `_harness_profile_for_model`):
# every other field is the empty default, so prompts, tools and the stack are Deep Agents' own.
register_harness_profile(PROVIDER, HarnessProfile(extra_middleware=lambda: [_SUB_OBSERVER[-1]]))


def make_script(seed: int) -> Script:
    script = generate(seed, KNOBS)
    script.system_prompt = SYSTEM_PROMPT  # one agent serves every script (see _Agent)
    return script


def our_config(script: Script) -> EngineConfig:
    d = preset("deepagents").to_dict()
    d["model"] = {**d["model"], "max_input_tokens": script.window, "provider": PROVIDER}
    return EngineConfig.from_dict(d)


class _Agent:
    """One `create_deep_agent` for every script with its system prompt, as a service runs many
    threads through one agent (a script file with another system prompt gets an agent of its own).

    Building a deep agent (its tools' schemas, the sub-agent graph) costs more than running a short
    thread, so the scripted model's responses and window and the tools' results are swapped per
    script; each script runs on its own thread id, so no state is shared.
    """

    def __init__(self, system_prompt: str = SYSTEM_PROMPT) -> None:
        self.system_prompt = system_prompt
        self.model = ScriptedModel(responses=[], profile={"max_input_tokens": 10_000})
        self.observer = EventObserver(private_keys=(SUMMARIZATION_EVENT_KEY,))
        self.sub_observer = SubagentObserver()
        self.tools = [ScriptTool(name=n, results={}) for n in CUSTOM_TOOLS]
        self.saver = InMemorySaver()
        _SUB_OBSERVER.append(self.sub_observer)
        self.agent = create_deep_agent(model=self.model, tools=self.tools, system_prompt=system_prompt,
                                       middleware=[self.observer], checkpointer=self.saver)

    def reset(self, script: Script) -> None:
        self.model.responses, self.model.position = script.replies(), 0
        self.model.calls, self.model.summary_prompts = [], []
        self.model.lanes, self.model.lane_calls = script.subagents, {}
        self.model.profile = {"max_input_tokens": script.window}
        for tool in self.tools:  # the GP sub-agent holds these same tool objects (graph.py, `_tools`)
            tool.results = script.results
        self.observer.steps, self.observer.transcript, self.observer.results = [], [], {}
        self.sub_observer.lanes, self.sub_observer.final_events = {}, {}
        self.saver.storage.clear()
        self.saver.writes.clear()


_AGENT: _Agent | None = None


def run_real(script: Script, *, fresh: bool = False) -> tuple[list[RealStep], Thread, dict[str, str], Observer]:
    """Play the script through create_deep_agent: steps, the raw thread, the layer files, the observer.

    `fresh`: on a newly built agent, not the shared one (the determinism probe: a difference that
    changes with the agent's history, the process or the clock is named as such, not as a rule)."""
    global _AGENT
    if fresh or (_AGENT is not None and _AGENT.system_prompt != script.system_prompt):
        _AGENT = None  # a script file may bring its own system prompt: an agent built with it
    if _AGENT is None:
        _AGENT = _Agent(script.system_prompt)
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
    if observer.stopped is None:  # type: ignore[attr-defined]
        model.check_played()
    final = a.agent.get_state(cfg).values
    files = {p: _file_text(f) for p, f in (final.get("files") or {}).items() if p.startswith(LAYER_DIRS)}
    observer.final_event = final.get(SUMMARIZATION_EVENT_KEY)  # type: ignore[attr-defined]
    # the thread holds what a user has: the caller's own tools (Deep Agents' are the preset's to add)
    caller_tools = [counted_tool(t) for t in a.tools]
    thread = thread_from(script, observer, caller_tools)
    _as_sent(observer.steps, model.calls)
    observer.subagents = {}  # type: ignore[attr-defined]
    for call_id, lane in a.sub_observer.lanes.items():
        _as_sent(lane.steps, model.lane_calls.get(call_id, []))
        sub = subagent_thread(script, call_id, lane, caller_tools)
        thread.subagents[call_id] = sub
        observer.subagents[call_id] = Subagent(lane.steps, sub, a.sub_observer.final_events.get(call_id))  # type: ignore[attr-defined]
    return observer.steps, thread, files, observer


def _as_sent(steps: list[RealStep], calls: list[list[BaseMessage]]) -> None:
    for step, sent in zip(steps, calls, strict=True):  # the request as the model got it
        step.system = _text(sent[0].content) if sent and sent[0].type == "system" else None
        step.view = sent[1:] if sent and sent[0].type == "system" else list(sent)


class Subagent:
    """One sub-agent as the real run recorded it: its steps, its raw transcript, its last event."""

    def __init__(self, steps: list[RealStep], thread: Thread, final_event: Any) -> None:
        self.steps, self.thread, self.final_event = steps, thread, final_event


def subagent_thread(script: Script, call_id: str, lane: Observer, tools: list[dict[str, Any]]) -> Thread:
    """The sub-agent's raw transcript as an importer gives it (`Thread.subagents[task call id]`):
    the task description (with the id the sub-agent's state gave it), then each answer and each
    result as its tools returned them; the GP system prompt (subagents.py `DEFAULT_SUBAGENT_PROMPT`)."""
    messages: list[BaseMessage] = [lane.steps[0].state[0]] if lane.steps else []
    for m in lane.transcript:
        messages.append(m)
        messages.extend(lane.results[tc["id"]] for tc in m.tool_calls if tc["id"] in lane.results)
    return Thread(f"{script.thread_id}-{call_id}", messages, source_format="native", model="scripted",
                  max_input_tokens=script.window, system_prompt=GENERAL_PURPOSE_SUBAGENT["system_prompt"],
                  tools=list(tools), extra={"subagent_of": {"thread": script.thread_id, "tool_call_id": call_id}})


def task_result_problems(thread: Thread) -> list[str]:
    """Each task call whose ToolMessage is not what Deep Agents returns: the sub-agent's last
    non-empty AI text, trailing whitespace stripped (subagents.py `_return_command_with_state_update`)."""
    results = {m.tool_call_id: m for m in thread.messages if isinstance(m, ToolMessage)}
    problems = []
    for call_id, sub in thread.subagents.items():
        expected = next((m.text.rstrip() for m in reversed(sub.messages) if isinstance(m, AIMessage) and m.text
                         and m.text.rstrip()), "")
        got = results.get(call_id)
        if got is not None and got.content != expected:
            problems.append(call_id)
    return problems


def _file_text(f: Any) -> str:
    content = f.get("content") if isinstance(f, dict) else f
    if isinstance(content, list):
        return "\n".join(content)
    return str(content)


def our_files(run: Run) -> dict[str, str]:
    return {p: run.files.entry(p).content for p in run.files.paths() if p.startswith(LAYER_DIRS)}


def summary_positions(real: Sequence[RealStep], final_event: Any, run: Run) -> Any:
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


__all__ = ["KNOBS", "Subagent", "make_script", "our_config", "our_files", "run_real", "subagent_thread",
           "summary_positions", "task_result_problems"]
