"""Workshop lessons as data: an overview and one lesson per layer.

Each lesson names a small deterministic thread, a base config, a short explanation (revealed point
by point in presenter mode), "try this" settings with the values to offer, the event to watch and a
check question. `run_lesson` replays the thread with the base settings and with the learner's
choices, so the page (or a test) can show the effect; nothing here imports Streamlit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.base.errors import ConfigError
from engine.config.schema import EngineConfig, preset
from engine.lessons.coding_session import coding_session_thread
from engine.run.replay import replay
from engine.run.run import Run
from engine.thread.model import Thread
from engine.thread.synthetic import TOOLS, synthetic_thread


@dataclass(frozen=True)
class TryThis:
    """One setting the learner changes: a config key and the values offered (override strings)."""

    key: str
    label: str
    options: tuple[str, ...]
    default: str
    help: str = ""
    labels: tuple[str, ...] = ()  # what each option reads as; the option itself when empty

    def option_label(self, value: str) -> str:
        if self.labels and value in self.options:
            return self.labels[self.options.index(value)]
        return value


@dataclass(frozen=True)
class Check:
    question: str
    options: tuple[str, ...]
    answer: int
    why: str


@dataclass(frozen=True)
class Lesson:
    id: str
    title: str
    layer: str | None  # None: the overview
    summary: str
    points: tuple[str, ...]  # the explanation, one point per presenter reveal
    thread: str  # a key of THREADS
    preset: str
    base: tuple[str, ...]  # --set overrides on top of the preset
    try_this: tuple[TryThis, ...]
    watch: str  # "layer" or "layer.kind": the events the lesson is about
    check: Check
    needles: tuple[str, ...] = field(default_factory=tuple)


# -- threads ---------------------------------------------------------------------------------
def _interrupted_thread() -> Thread:
    """A run the user interrupted mid tool call, then resumed: one call never got its result."""
    msgs: list[BaseMessage] = [
        HumanMessage("Run the test suite and fix what fails. Ticket: PIXEL-208.", id="h0"),
        AIMessage("Running the tests first.", id="a0",
                  tool_calls=[{"name": "execute", "args": {"command": "pytest -q"}, "id": "c0"}]),
        ToolMessage("3 failed, 41 passed\nFAILED tests/test_io.py::test_roundtrip", tool_call_id="c0", name="execute",
                    id="t0"),
        AIMessage("Reading the failing test.", id="a1",
                  tool_calls=[{"name": "read_file", "args": {"file_path": "/src/tests/test_io.py"}, "id": "c1"}]),
        # the user pressed stop here: c1 never returned
        HumanMessage("Sorry, I interrupted you. Please continue.", id="h1"),
        AIMessage("Continuing: reading the failing test again.", id="a2",
                  tool_calls=[{"name": "read_file", "args": {"file_path": "/src/tests/test_io.py"}, "id": "c2"}]),
        ToolMessage("def test_roundtrip():\n    assert load(dump(x)) == x\n", tool_call_id="c2", name="read_file",
                    id="t2"),
        AIMessage("The round trip drops the trailing newline; fixing dump().", id="a3"),
    ]
    return Thread(thread_id="lesson-interrupted", messages=msgs, source_format="lesson", model="lesson",
                  max_input_tokens=8_000, system_prompt="You are a careful coding agent.", tools=TOOLS,
                  title="An interrupted run")


THREADS: dict[str, str] = {
    "agent-80": "80-step coding agent (generated): large results, parallel sub-agents, todos, big file writes",
    "interrupted": "A short run the user interrupted mid tool call, then resumed",
    "coding-session": "A six-request coding session (hand-made): file reads that come back, test runs, a 64k window",
}


@lru_cache(maxsize=8)
def lesson_thread_by_key(key: str) -> Thread:
    if key == "agent-80":
        return synthetic_thread(80, seed=0, tokens_per_step=800, max_input_tokens=40_000)
    if key == "interrupted":
        return _interrupted_thread()
    if key == "coding-session":
        return coding_session_thread()
    raise ConfigError(f"unknown lesson thread {key!r}; known: {', '.join(THREADS)}", key="lesson.thread")


# -- the lessons -----------------------------------------------------------------------------
_WINDOWS = TryThis("model.max_input_tokens", "Context window (tokens)", ("30000", "40000", "80000"), "40000",
                   "The same thread in a smaller or larger window.")

LESSONS: tuple[Lesson, ...] = (
    Lesson(
        id="overview", title="Overview: what the model actually sees", layer=None,
        summary="A thread is what the agent did; the view is what each model call received.",
        points=(
            "Each **step** is one model call. The **state** is the message list the agent keeps; the **view** "
            "is the exact request after every layer rewrote it.",
            "Without context management the request grows with every tool result: the dotted **raw** curve.",
            "Layers keep the view under the window: offloading large results, summarizing old turns, "
            "clamping sub-agents, repairing dangling calls, injecting memory.",
            "Every drop in the curve is an **event**: a layer acting at a step. Hover a marker to see what it did.",
        ),
        thread="agent-80", preset="deepagents", base=(), try_this=(_WINDOWS,), watch="summarization",
        check=Check("At the last step, which is larger?",
                    ("The raw thread", "The view", "They are equal"), 0,
                    "The layers removed or replaced content, so the view is far smaller than the raw thread."),
        needles=("BLUE-HERON-7",),
    ),
    Lesson(
        id="filesystem", title="L0 Filesystem: offload large tool results", layer="filesystem",
        summary="A result above the limit is written to a file; the model gets a stub with a preview.",
        points=(
            "When a tool returns more than `tool_result_token_limit` tokens (Deep Agents: 20,000, checked as "
            "4 characters per token), the result goes to `/large_tool_results/<tool call id>`.",
            "The state keeps a **stub**: the path, how to read it in pages, and a head/tail preview.",
            "Later, once the context passes the trigger, old `write_file`/`edit_file` arguments are truncated "
            "in the view only (the state keeps them).",
            "Nothing is lost: the agent can read the file back. The Layers page lists every offloaded file.",
        ),
        thread="agent-80", preset="deepagents", base=(),
        try_this=(TryThis("filesystem.tool_result_token_limit", "Offload results above (tokens)",
                          ("500", "20000", "null"), "20000", "Lower it to offload more, or never offload.",
                          ("500", "20,000 (default)", "never")),),
        watch="filesystem.offload",
        check=Check("Where does an offloaded result go?",
                    ("It is deleted", "To /large_tool_results/<tool call id>, replaced by a stub",
                     "Into the summary"), 1,
                    "The full text is in the virtual filesystem; the message keeps a stub with a preview."),
    ),
    Lesson(
        id="subagents", title="L1 Sub-agents: isolation and the concurrency clamp", layer="subagents",
        summary="A sub-agent works in its own context; only its final answer comes back.",
        points=(
            "A `task` call runs a sub-agent with a fresh context: its searches and reads never enter the "
            "parent's view, only the final result does.",
            "DeerFlow limits how many `task` calls one response may make (`max_concurrent`, clamped to 1-4); "
            "extra calls are dropped before they run.",
            "This thread asks for 5 parallel sub-agents every 60 steps: watch the clamp events.",
        ),
        thread="agent-80", preset="deerflow", base=(),
        try_this=(TryThis("subagents.max_concurrent", "Max parallel sub-agents per response",
                          ("1", "2", "3", "4"), "3", "DeerFlow's default is 3."),),
        watch="subagents",
        check=Check("A response asks for 5 sub-agents with max_concurrent = 3. What happens?",
                    ("All 5 run", "3 run, 2 are dropped", "The response fails"), 1,
                    "The clamp keeps the first 3 task calls and drops the rest."),
    ),
    Lesson(
        id="summarization", title="L2 Summarization: trigger, keep and mode", layer="summarization",
        summary="Past the trigger, old messages are replaced by a structured summary; the newest are kept.",
        points=(
            "**Trigger**: when to summarize (messages, tokens or a fraction of the window; any clause fires).",
            "**Keep**: how much recent context survives verbatim. AI/tool pairs are never split.",
            "The summary has four sections: SESSION INTENT, SUMMARY, ARTIFACTS, NEXT STEPS.",
            "**State** mode (LangChain, DeerFlow) rewrites the history. **View** mode (Deep Agents) leaves the "
            "state alone, sends `[summary, *kept]` and saves the full history to `/conversation_history/`.",
        ),
        thread="agent-80", preset="deepagents", base=(),
        try_this=(
            TryThis("summarization.trigger", "Trigger", ("fraction:0.25", "fraction:0.5", "fraction:0.85"),
                    "fraction:0.85", "Deep Agents summarizes at 85 % of the window."),
            TryThis("summarization.keep", "Keep", ("messages:6", "fraction:0.05", "fraction:0.1"), "fraction:0.1"),
            TryThis("summarization.mode", "Mode", ("view", "state"), "view"),
        ),
        watch="summarization.summarize",
        check=Check("In view mode, what happens to the agent's state after a summary?",
                    ("It is replaced by the summary", "It is unchanged; only the request is rewritten",
                     "It is deleted"), 1,
                    "Deep Agents keeps the state and projects [summary, *kept] into each request."),
        needles=("BLUE-HERON-7",),
    ),
    Lesson(
        id="todo", title="L3 Todo reminder: keep the plan after a summary", layer="todo",
        summary="When the write_todos call has been summarized away, the open todos are re-injected once.",
        points=(
            "Agents track work with `write_todos`. A summary can remove that call from the context.",
            "DeerFlow then injects a reminder with the current todo list, once, so the plan is not forgotten.",
            "More summaries mean more reminders: lower the trigger and watch them appear.",
        ),
        thread="agent-80", preset="deerflow", base=(),
        try_this=(
            TryThis("summarization.trigger", "Summarization trigger", ("tokens:8000", "tokens:15564", "tokens:30000"),
                    "tokens:15564", "DeerFlow's example config uses 15,564 tokens."),
            TryThis("todo.enabled", "Todo reminder", ("true", "false"), "true", labels=("on", "off")),
        ),
        watch="todo.reminder",
        check=Check("When is the reminder injected?",
                    ("At every step", "When todos exist but no write_todos call is visible any more",
                     "Only at the first step"), 1,
                    "It fills the gap a summary leaves, and only once per gap."),
    ),
    Lesson(
        id="dangling", title="L4 Dangling tool calls: repair an interrupted run", layer="dangling",
        summary="A tool call without a result breaks the next request; a placeholder result repairs it.",
        points=(
            "Providers reject a request where an AI tool call has no matching tool result.",
            "That happens when a run is interrupted mid call and the user then sends a new message.",
            "The layer adds a placeholder error result right after the call. DeerFlow does it in each request "
            "only; Deep Agents writes it into the state once, when the next turn starts.",
        ),
        thread="interrupted", preset="deepagents", base=(),
        try_this=(
            TryThis("dangling.enabled", "Dangling-call repair", ("true", "false"), "true", labels=("on", "off")),
            TryThis("dangling.style", "Placeholder style", ("deerflow", "deerflow-head", "deepagents"), "deepagents"),
        ),
        watch="dangling.patch",
        check=Check("Where is the placeholder result placed?",
                    ("At the end of the request", "Right after the AI message with the call",
                     "In the system prompt"), 1,
                    "Each unanswered call gets its result immediately after the message that made it."),
    ),
    Lesson(
        id="memory", title="L5 Memory: facts that survive every summary", layer="memory",
        summary="Memory lives in the system prompt, within a token cap, so no summary can remove it.",
        points=(
            "Deep Agents loads AGENTS.md-style files; DeerFlow injects `<memory>` facts ranked by confidence.",
            "The injection has a token budget (`max_injection_tokens`): the lowest-confidence facts go first.",
            "Because memory is part of the system prompt, it is in every view, before and after compaction.",
        ),
        thread="agent-80", preset="deepagents",
        base=("memory.facts=[{content: 'The deploy key is ORCHID-5521', category: context, confidence: 0.95}, "
              "{content: 'The user prefers pytest over unittest', category: preference, confidence: 0.8}]",),
        try_this=(
            TryThis("memory.max_injection_tokens", "Memory budget (tokens)", ("25", "2000"), "2000",
                    "A small budget cuts the lower-confidence fact.", ("25: one fact fits", "2,000 (default)")),
            TryThis("memory.enabled", "Memory", ("true", "false"), "true", labels=("on", "off")),
        ),
        watch="memory.inject",
        check=Check("A summary removed the early messages. Is a memory fact still in the view?",
                    ("Yes, it is in the system prompt", "No, it was summarized", "Only in the history file"), 0,
                    "Memory is injected into every request's system prompt."),
        needles=("ORCHID-5521", "pytest over unittest"),
    ),
    Lesson(
        id="context-editing", title="Context editing vs summarization", layer="context_editing",
        summary="Clearing old tool results in place keeps the conversation; a summary replaces it.",
        points=(
            "**Context editing** (LangChain's `ContextEditingMiddleware`, Anthropic's `clear_tool_uses`, Claude "
            "Code's microcompact, OpenCode's prune) replaces old tool *results* by a placeholder such as "
            "`[cleared]`, in place. The user's words, the model's reasoning and every call stay; the agent can "
            "run a tool again if it needs the output back.",
            "**Summarization** replaces the older history as a whole by a summary a model writes: one more model "
            "call each time, and whatever the summary leaves out is gone.",
            "Tool results are most of a coding agent's context, so clearing them first often keeps the view "
            "under the summarization trigger: fewer summaries, or none.",
            "Here clearing starts at half the window and keeps the newest `keep` results; summarization (Deep "
            "Agents' 85 % trigger, counted as Deep Agents counts: about 4 characters a token) runs after it. Turn "
            "clearing off and watch the summaries multiply; keep only the newest result and half of them go.",
        ),
        thread="agent-80", preset="deepagents",
        base=("order=[context_editing, summarization]", "context_editing.trigger=fraction:0.5"),
        try_this=(
            TryThis("context_editing.enabled", "Clear old tool results first", ("true", "false"), "true",
                    labels=("on", "off")),
            TryThis("context_editing.keep", "Tool results kept (newest)", ("1", "3", "20"), "3",
                    "LangChain's ClearToolUsesEdit keeps 3."),
        ),
        watch="summarization.summarize",
        check=Check("What does context editing keep that a summary does not?",
                    ("The messages themselves: only old tool results become a placeholder",
                     "Nothing: it deletes old messages", "The tool results, word for word"), 0,
                    "An edit clears the content of old results in place; the history's structure and the user's "
                    "words stay as they were."),
        needles=("BLUE-HERON-7",),
    ),
    Lesson(
        id="coding-agents", title="Coding agents' compaction policies side by side", layer="compaction",
        summary="Claude Code, Codex, Gemini CLI, Cline and OpenHands compact the same session differently.",
        points=(
            "**Claude Code** summarizes everything at the effective window − 13k and re-attaches recent files. "
            "**Codex** at 90 % of the window: it re-sends your own newest messages (up to 20k tokens) and the "
            "summary.",
            "**Gemini CLI** looks at the *previous* prompt: past half the window it summarizes the oldest 70 % "
            "into a `<state_snapshot>`, split only at a plain user turn (a long run on one request cannot "
            "split), and gives up if the summary would be larger.",
            "**Cline** writes no summary: it removes duplicate file reads, else drops half (or three quarters) "
            "of the middle of the conversation in pairs, keeping the first exchange. **OpenHands** counts *events*, not tokens: past "
            "120 it keeps the first 4 and the newest 55 around a summary.",
            "Pick each policy and watch where the compaction markers fall, and how high the curve gets first. "
            "The Config page's *Compare runs* tab puts them all on one chart.",
        ),
        thread="coding-session", preset="claude-code", base=(),
        try_this=(TryThis("compaction.policy", "Whose policy",
                          ("claude-code", "codex", "gemini-cli", "cline", "openhands"), "claude-code",
                          "Each agent's own defaults (docs/config.md, Coding-agent policies).",
                          ("Claude Code", "Codex CLI", "Gemini CLI", "Cline", "OpenHands")),),
        watch="compaction",
        check=Check("Which of these agents shortens the history without writing a summary?",
                    ("Claude Code", "Cline", "Codex"), 1,
                    "Cline drops messages (pairs from the middle) and de-duplicates file reads; the others "
                    "summarize."),
        needles=("KESTREL-41",),
    ),
)


def lesson(lesson_id: str) -> Lesson:
    for item in LESSONS:
        if item.id == lesson_id:
            return item
    raise ConfigError(f"unknown lesson {lesson_id!r}; choose one of {', '.join(x.id for x in LESSONS)}", key="lesson")


def lesson_for_link(name: str) -> str | None:
    """The lesson a link's `lesson=` names: its id, or the layer the lessons table lists for it
    (`lesson=compaction` opens "Coding agents' compaction policies", `context_editing` the
    context-editing lesson: issue 35 found the table's name opening the overview). None if neither."""
    key = name.strip().lower().replace("_", "-")
    for item in LESSONS:
        if key == item.id or (item.layer is not None and key == item.layer.replace("_", "-")):
            return item.id
    return None


def lesson_thread(item: Lesson) -> Thread:
    return lesson_thread_by_key(item.thread)


def lesson_config(item: Lesson, choices: Mapping[str, str] | None = None) -> EngineConfig:
    """The lesson's base settings, then the learner's choices (only the offered keys and values)."""
    overrides = list(item.base)
    offered = {t.key: t for t in item.try_this}
    for key, value in (choices or {}).items():
        control = offered.get(key)
        if control is None:
            raise ConfigError(f"lesson {item.id!r} does not offer this setting", key=key)
        if value not in control.options:
            raise ConfigError(f"{value!r} is not offered; choose one of {', '.join(control.options)}", key=key)
        overrides.append(f"{key}={value}")
    return preset(item.preset).with_overrides(overrides)


def default_choices(item: Lesson) -> dict[str, str]:
    return {t.key: t.default for t in item.try_this}


# What a lesson's `watch` counts, in the words a slide shows (the metric label read
# "summarization.summarize events" on the projector: issue 35).
WATCH_LABELS: dict[str, str] = {
    "summarization": "Summarization events",
    "summarization.summarize": "Summaries written",
    "filesystem.offload": "Results offloaded to files",
    "subagents": "Sub-agent events",
    "todo.reminder": "Todo reminders injected",
    "dangling.patch": "Tool calls patched",
    "memory.inject": "Memory injections",
    "compaction": "Compactions",
}


def watch_label(watch: str) -> str:
    """The words for a lesson's watched events: "Summaries written" for `summarization.summarize`."""
    layer, _, kind = watch.partition(".")
    return WATCH_LABELS.get(watch) or (f"{kind} events ({layer})" if kind else f"{layer} events").replace("_", " ")


def watched_events(run: Run, watch: str) -> int:
    layer, _, kind = watch.partition(".")
    return sum(1 for e in run.events if e.layer == layer and (not kind or e.kind == kind))


@dataclass
class LessonOutcome:
    lesson: Lesson
    baseline: Run  # the lesson's default settings
    tried: Run  # the learner's choices
    choices: dict[str, str]

    @property
    def watched(self) -> tuple[int, int]:
        """Events of the watched kind: (baseline, tried)."""
        return watched_events(self.baseline, self.lesson.watch), watched_events(self.tried, self.lesson.watch)

    def changed(self) -> dict[str, tuple[str, str]]:
        return {k: (v, self.choices[k]) for k, v in default_choices(self.lesson).items() if self.choices[k] != v}


def run_lesson(item: Lesson | str, choices: Mapping[str, str] | None = None) -> LessonOutcome:
    """Replay the lesson's thread with its defaults and with `choices` (unspecified keys keep defaults)."""
    item = lesson(item) if isinstance(item, str) else item
    merged = {**default_choices(item), **(choices or {})}
    thread = lesson_thread(item)
    baseline_config = lesson_config(item, default_choices(item))
    tried_config = lesson_config(item, merged)
    baseline = replay(thread, baseline_config)
    tried = baseline if tried_config == baseline_config else replay(thread, tried_config)
    return LessonOutcome(item, baseline, tried, merged)


def check_answer(item: Lesson, choice: int) -> bool:
    return choice == item.check.answer
