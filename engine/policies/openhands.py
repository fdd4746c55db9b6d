"""OpenHands' `LLMSummarizingCondenser`: condense when the view has more than 120 events.

From OpenHands/software-agent-sdk `openhands-sdk/openhands/sdk/context/condenser/llm_summarizing_condenser.py`
and `context/view.py`:

- **When** (`should_condense`): the view holds more than `max_size` = 120 events (or, when
  `max_tokens` is set, more tokens than that). Events: the system prompt, each user or agent message,
  each tool call (an LLM response with three calls is three `ActionEvent`s) and each observation; a
  summary the condenser inserted is one event too.
- **What follows** (`get_condensation`): the first `keep_first` = 4 events and the newest
  `max_size // 2 - keep_first - 1` = 55 are kept; the events between are forgotten and summarized
  (with the previous summary, `summarizing_prompt.j2`), and the summary goes in as a user message at
  `summary_offset = keep_first`. The view keeps an LLM response's calls together
  (`_enforce_batch_atomicity`) and drops a call without its observation or an observation without its
  call (`filter_unmatched_tool_calls`).
- **Recorded settings and requests**: the condenser the conversation ran with (its `baseState`,
  engine/formats/openhands_state.py) replaces these defaults unless the config sets them
  (`compaction.trigger`, `compaction.keep_first`); a `NoOpCondenser` never condenses. A recorded
  `CondensationRequest` (raised when the provider refused a request as too long) condenses at the next
  call whatever the size (`should_condense`: `view.unhandled_condensation_request`), keeping half the
  view (`target_size = len(view) // 2`).
- **Summary shape**: the prompt's sections USER_CONTEXT, TASK_TRACKING, COMPLETED, PENDING,
  CURRENT_STATE, CODE_STATE, TESTS, CHANGES, DEPS, VERSION_CONTROL_STATUS.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.base.errors import ConfigError
from engine.config.sections import CompactionConfig
from engine.policies.base import Compaction, Measure, PolicyContext
from engine.summarizers.reading import prior_sections
from engine.thread.kinds import mark, message_kind
from engine.thread.model import stable_id

MAX_SIZE = 120
KEEP_FIRST = 4
SUMMARY_PROMPT = (
    "You are maintaining a context-aware state summary for an interactive agent. You will be given a list of "
    "events corresponding to actions taken by the agent, and the most recent previous summary if one exists. "
    "Track: USER_CONTEXT, TASK_TRACKING, COMPLETED, PENDING, CURRENT_STATE; for code-specific tasks also "
    "CODE_STATE, TESTS, CHANGES, DEPS, VERSION_CONTROL_STATUS."
)


# -- pure rules ---------------------------------------------------------------------------------------
def events_of(message: BaseMessage) -> int:
    """How many SDK events a message is: one per tool call of an LLM response, else one."""
    if isinstance(message, AIMessage) and message.tool_calls:
        return len(message.tool_calls)
    return 1


def view_size(history: Sequence[BaseMessage]) -> int:
    """`len(view)`: the system prompt event plus the history's events."""
    return 1 + sum(events_of(m) for m in history)


def recorded_condenser(extra: dict[str, Any] | None) -> dict[str, Any]:
    """The condenser settings the conversation recorded (engine/formats/openhands_state.py), or {}."""
    cond = (extra or {}).get("openhands_condenser")
    return cond if isinstance(cond, dict) else {}


def limits(config: CompactionConfig, extra: dict[str, Any] | None = None) -> tuple[int, int | None, int]:
    """(max_size, max_tokens, keep_first): the config's, else the conversation's recorded condenser's, else
    the SDK's defaults."""
    recorded = recorded_condenser(extra)
    max_size = recorded.get("max_size") or MAX_SIZE
    max_tokens = recorded.get("max_tokens") or None
    if config.trigger is not None:
        max_size, max_tokens = MAX_SIZE, None
        if config.trigger.type == "messages":
            max_size = int(config.trigger.value)
        elif config.trigger.type == "tokens":
            max_tokens = int(config.trigger.value)
        else:
            raise ConfigError("OpenHands condenses on events (messages:N) or tokens (tokens:N)", key="compaction.trigger")
    keep_first = config.keep_first if config.keep_first is not None else recorded.get("keep_first", KEEP_FIRST)
    if max_size // 2 - keep_first - 1 <= 0:
        raise ConfigError("keep_first must be less than max_size // 2 to leave room for condensation",
                          key="compaction.keep_first")
    return max_size, max_tokens, keep_first


def forgotten(history: Sequence[BaseMessage], max_size: int, keep_first: int, *, requested: bool = False) -> set[int]:
    """Positions of the history's messages the condensation forgets (see the module docstring); one
    answering a condensation request keeps half the view (`target_size = len(view) // 2`)."""
    starts: list[int] = []  # event index at which each message starts (the system prompt is event 0)
    at = 1
    for m in history:
        starts.append(at)
        at += events_of(m)
    total = at
    target = total // 2 if requested else max_size // 2
    tail = max(0, target - min(keep_first, total) - 1)
    lo, hi = keep_first, total - tail  # forgotten events: [lo, hi)
    gone = {i for i, m in enumerate(history) if starts[i] < hi and starts[i] + events_of(m) > lo}
    # a call and its observation go together, in both directions, until nothing changes
    calls = {str(tc["id"]): i for i, m in enumerate(history) if isinstance(m, AIMessage) for tc in m.tool_calls
             if tc.get("id")}
    results = {m.tool_call_id: i for i, m in enumerate(history) if isinstance(m, ToolMessage)}
    changed = True
    while changed:
        changed = False
        for cid, ai in calls.items():
            res = results.get(cid)
            if res is not None and (ai in gone) != (res in gone):
                for pos in (ai, res):
                    if pos is not None and pos not in gone:
                        gone.add(pos)
                        changed = True
    return gone


def openhands_summary(summary: str) -> str:
    """The offline summary's sections in the condenser prompt's section names."""
    if "USER_CONTEXT:" in summary:
        return summary
    s = prior_sections(summary)

    def lines(name: str) -> str:
        return "\n".join(s.get(name, [])) or "None"

    return (f"USER_CONTEXT: {lines('SESSION INTENT')}\n\nTASK_TRACKING: None\n\nCOMPLETED:\n{lines('SUMMARY')}\n\n"
            f"PENDING:\n{lines('NEXT STEPS')}\n\nCURRENT_STATE: None\n\nCODE_STATE:\n{lines('ARTIFACTS')}\n\n"
            "TESTS: None\n\nCHANGES: None\n\nDEPS: None\n\nVERSION_CONTROL_STATUS: None")


_SECTIONS = (("USER_CONTEXT", "SESSION INTENT"), ("COMPLETED", "SUMMARY"), ("PENDING", "NEXT STEPS"),
             ("CODE_STATE", "ARTIFACTS"))


def summary_sections(text: str) -> str:
    """An offline OpenHands summary back in the offline summarizer's sections, so the next condensation
    keeps it (the condenser prompt hands the model the previous summary to update)."""
    blocks: dict[str, list[str]] = {}
    current: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        name, sep, rest = line.partition(":")
        if sep and name.isupper() and name.replace("_", "").isalpha():
            current, line = name, rest.strip()
        if current and line.startswith("- "):
            blocks.setdefault(current, []).append(line)
    return "\n\n".join(f"## {section}\n" + ("\n".join(blocks.get(name, [])) or "None") for name, section in _SECTIONS)


def for_offline_summary(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    return [m.model_copy(update={"content": summary_sections(str(m.content))})
            if message_kind(m) == "summary" and str(m.content).startswith("USER_CONTEXT:") else m for m in messages]


# -- the policy ---------------------------------------------------------------------------------------
class OpenHandsPolicy:
    name = "openhands"
    summary_prompt = SUMMARY_PROMPT

    def threshold_tokens(self, window_tokens: int, max_output_tokens: int | None, config: CompactionConfig,
                         *, thread: Any = None) -> int | None:
        return limits(config, getattr(thread, "extra", None))[1]

    def trigger_note(self, config: CompactionConfig, extra: dict[str, Any] | None = None) -> str:
        max_size, max_tokens, keep_first = limits(config, extra)
        more = f" or more than {max_tokens:,} tokens" if max_tokens else ""
        return (f"condenses when the view holds more than {max_size} events{more}, or at a recorded condensation "
                f"request; keeps the first {keep_first} and the newest {max_size // 2 - keep_first - 1}")

    def should_compact(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> bool:
        # a conversation whose agent ran without a summarizing condenser never condenses (NoOpCondenser)
        if ctx.config.trigger is None and recorded_condenser(ctx.thread_extra).get("kind") == "NoOpCondenser":
            return False
        # llm_summarizing_condenser.py should_condense: an unhandled CondensationRequest first (recorded:
        # the provider refused a request as too long), then max_tokens, then the view's size
        requests = ctx.thread_extra.get("condensation_requests") or ()
        handled = ctx.memory.setdefault("handled_requests", set())
        ctx.memory["requested"] = ctx.step in requests and ctx.step not in handled
        if ctx.memory["requested"]:
            handled.add(ctx.step)
            return True
        max_size, max_tokens, _ = limits(ctx.config, ctx.thread_extra)
        if max_tokens is not None and ctx.request_tokens > max_tokens:
            return True
        return view_size(history) > max_size

    def measure(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> Measure:
        """The events in the view against `max_size` (a token limit, when set, is its own condition)."""
        max_size, max_tokens, _ = limits(ctx.config)
        if max_tokens is not None:
            return Measure(ctx.request_tokens, max_tokens, op=">", expression=f"max_tokens {max_tokens:,}")
        return Measure(view_size(history), max_size, quantity="events in the view", unit="events", op=">",
                       series="events", expression=f"max_size {max_size}")

    def rebuild(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> Compaction:
        max_size, _, keep_first = limits(ctx.config, ctx.thread_extra)
        requested = bool(ctx.memory.pop("requested", False))
        gone = forgotten(history, max_size, keep_first, requested=requested)
        if not gone:
            return Compaction(None, rejected="no event between the kept head and tail")
        chosen = [m for i, m in enumerate(history) if i in gone]
        summary = ctx.summarize(for_offline_summary(chosen) if ctx.offline else chosen, self.summary_prompt)
        text = openhands_summary(summary) if ctx.offline else summary
        message = mark(HumanMessage(content=text, id=stable_id("openhands-summary", ctx.step, text)), "summary")
        head = [m for i, m in enumerate(history) if i not in gone and i < min(gone)]
        tail = [m for i, m in enumerate(history) if i not in gone and i > min(gone)]
        return Compaction([*head, message, *tail], summary=text,
                          detail={"forgotten_events": sum(events_of(history[i]) for i in gone),
                                  "events_before": view_size(history), "requested": requested})


POLICY = OpenHandsPolicy()
