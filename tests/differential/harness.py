"""Play a script through a real framework's agent, record every step, and compare it with our replay.

The real side is the framework's own code run the way a user runs it (`create_agent`,
`create_deep_agent`) around a scripted chat model. An observer middleware records, at every
main-agent model call, the state the agent holds and the request the model gets; the model itself
records the exact messages it was sent. The raw transcript (each AI message as the model produced
it, each tool result as the tool returned it) becomes the Thread our replay gets. `compare` then
checks every step and names each difference by class.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict

from engine.run.run import Run
from engine.thread.model import Thread
from tests.differential.scripts import TASK_PREFIX, Script, summary_for

SUMMARY_PROMPT_START = "<role>\nContext Extraction Assistant\n</role>"


class Interrupted(Exception):
    """The recorded run stops before this tool call returns (a dangling call)."""


class ScriptDoesNotFit(RuntimeError):
    """The agent asked the scripted model for more, or for fewer, answers than the script holds
    (a script file whose turns do not match how the framework calls the model)."""


def lane_of(messages: Sequence[BaseMessage]) -> str:
    """Whose call this is: "main", or the id of the `task` call whose sub-agent is asking.

    A sub-agent's request ends with its task description (first call) or with a result of one of
    its own calls (`<task id>.s<k>-<j>`, scripts.py); anything else is the main agent's."""
    last = messages[-1] if messages else None
    if isinstance(last, ToolMessage) and ".s" in last.tool_call_id:
        return last.tool_call_id.split(".s")[0]
    if isinstance(last, HumanMessage) and isinstance(last.content, str) and last.content.startswith(TASK_PREFIX):
        return last.content[len(TASK_PREFIX):].split(":", 1)[0]
    return "main"


class ScriptedModel(BaseChatModel):
    """Answers with the script's AI messages in order; a summary prompt gets `summary_for(prompt)`.

    The main agent's answers are `responses`; a sub-agent's are `lanes[task call id]`, each lane
    in its own order (sub-agents of parallel task calls run concurrently, in threads)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    responses: list[AIMessage]
    position: int = 0
    calls: list[list[BaseMessage]] = []  # the main-agent requests, exactly as sent
    summary_prompts: list[str] = []
    bound: list[Any] = []  # the tools the agent binds first (the schemas the model is sent)
    lanes: dict[str, list[AIMessage]] = {}  # sub-agents' answers by task call id
    lane_calls: dict[str, list[list[BaseMessage]]] = {}  # sub-agents' requests, exactly as sent

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        if not self.bound:
            self.bound = list(tools)
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        if len(messages) == 1 and isinstance(messages[0], HumanMessage) and str(messages[0].content).startswith(
                SUMMARY_PROMPT_START):
            prompt = str(messages[0].content)
            self.summary_prompts.append(prompt)
            return ChatResult(generations=[ChatGeneration(message=AIMessage(summary_for(normalize_text(prompt))))])
        lane = lane_of(messages) if self.lanes else "main"
        if lane != "main":
            if lane not in self.lanes:
                raise ScriptDoesNotFit(f"a sub-agent of task call {lane} asked for an answer: the script has no subagents[{lane!r}]")
            sent = self.lane_calls.setdefault(lane, [])
            if len(sent) >= len(self.lanes[lane]):
                raise ScriptDoesNotFit(f"the scripted sub-agent {lane} ran out of responses")
            reply = self.lanes[lane][len(sent)]
            sent.append(list(messages))
            return ChatResult(generations=[ChatGeneration(message=reply.model_copy(deep=True))])
        if self.position >= len(self.responses):
            raise ScriptDoesNotFit(f"the agent asked for answer {self.position + 1} of a script that has {len(self.responses)}")
        self.calls.append(list(messages))
        reply = self.responses[self.position]
        self.position += 1
        return ChatResult(generations=[ChatGeneration(message=reply.model_copy(deep=True))])

    def check_played(self) -> None:
        """Every reply of the script was asked for (else the comparison would cover a prefix only)."""
        if self.position < len(self.responses):
            left = self.responses[self.position]
            raise ScriptDoesNotFit(f"the agent stopped after {self.position} of the script's {len(self.responses)} "
                                   f"answers (next unplayed: {left.id})")
        for lane, replies in self.lanes.items():
            played = len(self.lane_calls.get(lane, []))
            if played < len(replies):
                raise ScriptDoesNotFit(f"the sub-agent of task call {lane} stopped after {played} of its {len(replies)} answers")


class ScriptSummarizer:
    """Our side of the scripted summarizer: the same text for the same prompt."""

    name = "scripted"
    calls = 0
    input_tokens = 0

    def __call__(self, messages: Sequence[BaseMessage], *, prompt_text: str = "") -> str:
        return summary_for(normalize_text(prompt_text))


class QueryArgs(BaseModel):
    query: str = ""


class ScriptTool(BaseTool):
    """A project tool: answers a call with the script's result for that call id, or stops the run."""

    description: str = "A project tool; returns its recorded output."
    args_schema: type[BaseModel] = QueryArgs  # one shared schema: building one per tool is slow
    results: dict[str, ToolMessage]

    def _run(self, query: str = "") -> str:  # never reached: invoke is overridden
        raise NotImplementedError

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        call_id = input.get("id") if isinstance(input, dict) else None
        if call_id not in self.results:
            raise Interrupted(call_id)
        return self.results[call_id].model_copy()


@dataclass
class RealStep:
    state: list[BaseMessage]
    view: list[BaseMessage]
    system: str | None
    private: dict[str, Any] = field(default_factory=dict)  # private state keys (the summarization event)
    tools: list[dict[str, Any]] | None = None  # the request's tools as LangChain's counter sees them


def counted_tool(tool: Any) -> dict[str, Any]:
    """A tool as LangChain's approximate counter measures it (langchain_core messages/utils.py
    `count_tokens_approximately`): a dict as it is; a BaseTool as {name, description, parameters},
    the parameters being its `tool_call_schema` without the top-level title and description (each
    property keeps its `title`)."""
    if isinstance(tool, dict):
        return tool
    assert isinstance(tool, BaseTool)
    schema = tool.tool_call_schema
    parameters = dict(schema) if isinstance(schema, dict) else dict(schema.model_json_schema())
    parameters.pop("title", None)
    parameters.pop("description", None)
    return {"name": tool.name, "description": tool.description, "parameters": parameters}


class Observer(AgentMiddleware):
    """Records each main-agent model call's state and request, and the raw transcript as it happens.

    Innermost (last): its `wrap_tool_call` sees a result before an outer layer offloads it, and
    gives a result without an id a deterministic one (an id the thread will carry).
    """

    def __init__(self, private_keys: Sequence[str] = ()) -> None:
        super().__init__()
        self.steps: list[RealStep] = []
        self.transcript: list[AIMessage] = []
        self.results: dict[str, ToolMessage] = {}  # raw tool results by call id (tools run in parallel threads)
        self.private_keys = tuple(private_keys)

    def wrap_model_call(self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Any]) -> Any:
        state = request.state or {}
        self.steps.append(RealStep(list(state.get("messages", [])), list(request.messages),
                                   _text(request.system_message.content) if request.system_message else None,
                                   {k: state.get(k) for k in self.private_keys},
                                   [counted_tool(t) for t in request.tools]))
        response = handler(request)
        result = getattr(response, "result", None) or getattr(getattr(response, "model_response", None), "result", [])
        self.transcript.extend(m.model_copy() for m in result if isinstance(m, AIMessage))
        return response

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        result = handler(request)
        carried = result.update.get("messages", []) if isinstance(result, Command) and isinstance(result.update, dict) else [result]
        for m in carried:  # a tool may answer with a Command (write_todos, task) carrying its ToolMessage
            if isinstance(m, ToolMessage):
                if m.id is None:
                    m.id = f"t-{m.tool_call_id}"
                self.results[m.tool_call_id] = m.model_copy()
        return result


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)


def thread_from(script: Script, observer: Observer, tools: Sequence[dict[str, Any]] = ()) -> Thread:
    """The raw transcript as a Thread: each turn's human message, then what the agent produced."""
    turn_of_reply = {r.id: i for i, t in enumerate(script.turns) for r in t.replies}
    messages: list[BaseMessage] = []
    current = -1
    for m in observer.transcript:  # each turn's human message first, then each reply and its results
        while current < turn_of_reply[m.id]:
            current += 1
            messages.append(script.turns[current].human)
        messages.append(m)
        messages.extend(observer.results[tc["id"]] for tc in m.tool_calls if tc["id"] in observer.results)
    return Thread(script.thread_id, messages, source_format="native", model="scripted",
                  max_input_tokens=script.window, system_prompt=script.system_prompt, tools=list(tools))


# -- comparison ------------------------------------------------------------------------------------
_HISTORY = re.compile(r"/conversation_history/session_[0-9a-f]{32}\.md")
_EVICTED = re.compile(r"/conversation_history/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.md")
_STAMP = re.compile(r"## Summarized at [^\n]*")


def normalize_text(text: str) -> str:
    """Names the frameworks draw at random (uuid4 history and eviction files, timestamps) made comparable."""
    text = _HISTORY.sub("/conversation_history/<session>.md", text)
    text = _EVICTED.sub("/conversation_history/<evicted>.md", text)
    return _STAMP.sub("## Summarized at <time>", text)


def _norm_content(content: Any) -> Any:
    if isinstance(content, str):
        return normalize_text(content)
    return json.loads(normalize_text(json.dumps(content, sort_keys=True)))


def shape(m: BaseMessage, known_ids: set[str]) -> tuple[Any, ...]:
    """What a message is, for comparison: ids the thread does not know (drawn at random) are masked."""
    kwargs = {k: v for k, v in m.additional_kwargs.items() if not k.startswith("ctxi_")}
    base: tuple[Any, ...] = (m.type, m.id if m.id in known_ids else "<new>", _norm_content(m.content), m.name,
                             _norm_content(kwargs))
    if isinstance(m, AIMessage):
        base += (tuple((tc.get("name"), json.dumps(tc.get("args"), sort_keys=True), tc.get("id")) for tc in m.tool_calls),
                 tuple((tc.get("name"), tc.get("args"), tc.get("id")) for tc in m.invalid_tool_calls))
    if isinstance(m, ToolMessage):
        base += (m.tool_call_id, m.status)
    return base


def _first_diff(a: Sequence[tuple[Any, ...]], b: Sequence[tuple[Any, ...]]) -> str:
    if len(a) != len(b):
        return "length differs"
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x != y:
            fields = ("type", "id", "content", "name", "additional_kwargs", "tool_calls", "invalid_tool_calls",
                      "tool_call_id/status", "")
            which = next((fields[j] for j in range(min(len(x), len(y))) if x[j] != y[j]), "shape")
            return f"message {i} ({x[0]}) differs in {which}"
    return ""


@dataclass
class Comparison:
    steps: int = 0
    agreeing: int = 0
    classes: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    threads: int = 0
    threads_agreeing: int = 0

    def add(self, other: Comparison) -> None:
        self.steps += other.steps
        self.agreeing += other.agreeing
        self.classes.update(other.classes)
        for k, v in other.examples.items():
            self.examples.setdefault(k, v)
        self.threads += other.threads
        self.threads_agreeing += other.threads_agreeing

    @property
    def rate(self) -> float:
        return self.agreeing / self.steps if self.steps else 1.0

    def report(self, title: str) -> str:
        lines = [f"{title}: {self.agreeing}/{self.steps} steps agree ({100 * self.rate:.2f} %), "
                 f"{self.threads_agreeing}/{self.threads} threads entirely"]
        for cls, n in self.classes.most_common():
            lines.append(f"  {n:6d}  {cls}   e.g. {self.examples[cls]}")
        return "\n".join(lines)


MISFIT = "script does not fit the agent (ScriptDoesNotFit)"


def misfit(label: str, error: ScriptDoesNotFit) -> Comparison:
    """A script the agent could not play as written: a thread that fails, its reason the example."""
    out = Comparison(threads=1)
    out.classes[MISFIT] += 1
    out.examples[MISFIT] = f"{label}: {error}"
    return out


def compare_steps(real: Sequence[RealStep], run: Run, thread: Thread, *, label: str,
                  summary_position: Callable[[int], tuple[Any, Any]] | None = None,
                  files: tuple[dict[str, str], dict[str, str]] | None = None) -> Comparison:
    """Per step: state, view, system prompt (and summary position); files once per thread."""
    known = {m.id for m in thread.messages if m.id}
    out = Comparison(threads=1)
    n = max(len(real), len(run.steps))
    for k in range(n):
        out.steps += 1
        if k >= len(real) or k >= len(run.steps):
            cls = "step count differs"
            out.classes[cls] += 1
            out.examples.setdefault(cls, f"{label} step {k}: real {len(real)} steps, ours {len(run.steps)}")
            continue
        r, o = real[k], run.steps[k]
        problems: list[tuple[str, str]] = []
        rs, os_ = [shape(m, known) for m in r.state], [shape(m, known) for m in o.state]
        if rs != os_:
            problems.append(("state", _first_diff(rs, os_)))
        rv, ov = [shape(m, known) for m in r.view], [shape(m, known) for m in o.view]
        if rv != ov:
            problems.append(("view", _first_diff(rv, ov)))
        ours_system = _text(o.system.content) if o.system is not None else None
        if (r.system or None) != (ours_system or None):
            problems.append(("system prompt", "differs"))
        if r.tools is not None:
            ours_tools = [counted_tool(t) for t in o.tools]
            if ours_tools != r.tools:
                real_names, our_names = [t.get("name") for t in r.tools], [t.get("name") for t in ours_tools]
                problems.append(("tool list", "names differ" if real_names != our_names else "schemas differ"))
        if summary_position is not None:
            real_pos, our_pos = summary_position(k)
            if real_pos != our_pos:
                problems.append(("summary position", "differs" + f" (real {real_pos}, ours {our_pos})"))
        if problems:
            cls = "; ".join(f"{where}: {re.sub(r' [(]real .*', '', re.sub(r'message [0-9]+', 'message N', why))}"
                            for where, why in problems)
            out.classes[cls] += 1
            out.examples.setdefault(cls, f"{label} step {k}: " + "; ".join(f"{w}: {y}" for w, y in problems))
        else:
            out.agreeing += 1
    if files is not None:
        # evicted human messages are named by a uuid4 each, and each agent (a parent, its sub-agents)
        # keeps its own history file under a uuid4 session name: key those by their content instead
        real_files, our_files = ({(normalize_text(p) + (f"#{hash(normalize_text(c))}" if _EVICTED.search(p) or _HISTORY.search(p)
                                                        else "")): normalize_text(c)
                                  for p, c in f.items()} for f in files)
        if real_files != our_files:
            cls = "files differ"
            out.classes[cls] += 1
            only = sorted(set(real_files) ^ set(our_files))
            changed = sorted(p for p in set(real_files) & set(our_files) if real_files[p] != our_files[p])
            out.examples.setdefault(cls, f"{label}: paths on one side only {only[:3]}, contents differ {changed[:3]}")
    if out.agreeing == out.steps and not out.classes:
        out.threads_agreeing = 1
    return out


__all__ = [
    "Comparison", "Interrupted", "Observer", "RealStep", "ScriptDoesNotFit", "ScriptSummarizer", "ScriptTool", "ScriptedModel",
    "compare_steps", "counted_tool", "lane_of", "misfit", "normalize_text", "shape", "thread_from",
]
