"""The offline summarizer (the default): deterministic and extractive, no network, the same text for the
same messages. It fills SESSION INTENT, SUMMARY, ARTIFACTS and NEXT STEPS from the messages themselves
(how it reads one message: engine/summarizers/reading.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.summarizers.protocol import CHARS_PER_TOKEN, MAX_SUMMARY_TOKENS, SECTIONS
from engine.summarizers.reading import (
    MEMO,
    ai_facts,
    clip,
    earlier_sections,
    has_text,
    human_fact,
    intent_line,
    plan_lines,
    result_head,
)
from engine.thread.kinds import message_kind
from engine.tokens.counters import TokenCounter, get_counter

READ_TOOLS = frozenset({"read_file", "read", "view", "cat", "view_file", "open_file", "get_file"})
WRITE_TOOLS = frozenset({"write_file", "write", "create_file", "create"})
EDIT_TOOLS = frozenset({"edit_file", "edit", "multiedit", "str_replace", "str_replace_based_edit_tool",
                        "apply_patch", "notebookedit", "replace", "insert"})
TODO_TOOLS = frozenset({"write_todos", "todowrite", "todo_write"})
TASK_TOOLS = frozenset({"task", "agent"})
PATH_ARGS: tuple[str, ...] = ("file_path", "path", "filepath", "filename", "notebook_path", "target_file")
# str_replace_editor-style tools say what they do in a `command` argument
EDITOR_COMMANDS = {"view": "read", "create": "written", "str_replace": "edited", "insert": "edited",
                   "undo_edit": "edited"}

def _tool_names(messages: Sequence[BaseMessage]) -> dict[str, str]:
    return {str(tc["id"]): str(tc.get("name", "")) for m in messages if isinstance(m, AIMessage)
            for tc in m.tool_calls if tc.get("id")}


CallReading = tuple[tuple[tuple[str, str], ...], list[Any] | None]


def _call_reading(m: BaseMessage) -> CallReading:
    """What an AI message's tool calls say: (the (path, verb) artifacts in call order, the last
    todo list written). Depends only on `tool_calls`, so it is kept per message (engine.thread.message_memo)."""
    pairs: list[tuple[str, str]] = []
    todos: list[Any] | None = None
    for tc in m.tool_calls:  # type: ignore[attr-defined]
        args = tc.get("args") if isinstance(tc.get("args"), dict) else {}
        path = _artifact_path(args)
        verb = _artifact_verb(str(tc.get("name", "")), args)
        if path is not None and verb is not None:
            pairs.append((path, verb))
        if str(tc.get("name", "")).lower() in TODO_TOOLS and isinstance(tc.get("args"), dict):
            listed = tc["args"].get("todos")
            if isinstance(listed, list):
                todos = listed
    return tuple(pairs), todos


def _calls(m: AIMessage) -> CallReading:
    return MEMO.keyed(m, "calls", m.tool_calls, _call_reading)


_ARTIFACT_LINE = re.compile(r"- `(.+?)` — (.+)$")


def _prior_artifacts(m: BaseMessage) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """An earlier summary's ARTIFACTS lines as (path, verbs), in order (parsed once per message)."""
    return MEMO.get(m, "prior_artifacts", _parse_prior_artifacts)


def _parse_prior_artifacts(m: BaseMessage) -> tuple[tuple[str, tuple[str, ...]], ...]:
    out: list[tuple[str, tuple[str, ...]]] = []
    for line in MEMO.get(m, "prior", earlier_sections).get("ARTIFACTS", []):
        found = _ARTIFACT_LINE.match(line)
        if found:
            out.append((found.group(1), tuple(v.strip() for v in found.group(2).split(","))))
    return tuple(out)


def _artifact_verb(name: str, args: dict[str, Any]) -> str | None:
    low = name.lower()
    if isinstance(args.get("command"), str) and args["command"] in EDITOR_COMMANDS and "editor" in low:
        return EDITOR_COMMANDS[args["command"]]
    if low in READ_TOOLS:
        return "read"
    if low in WRITE_TOOLS:
        return "written"
    if low in EDIT_TOOLS:
        return "edited"
    return "accessed" if any(isinstance(args.get(k), str) for k in ("file_path", "notebook_path")) else None


def _artifact_path(args: dict[str, Any]) -> str | None:
    for key in PATH_ARGS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


class OfflineSummarizer:
    """Deterministic, extractive summaries in LangChain's four sections; never calls a model."""

    name = "offline"
    # reads only the prompt's frame (engine.layers.summary_rules.SummaryPrompt.frame), so the
    # summarization layer may hand it the prompt unrendered
    lazy_prompt = True
    # how a checkpoint of a replay keeps each run-time attribute (engine/layers/checkpoint.py)
    checkpoint_kinds: ClassVar[dict[str, str]] = {"calls": "value", "input_tokens": "value", "_template_cache": "memo"}

    def __init__(self, counter: TokenCounter | None = None, *, max_tokens: int = MAX_SUMMARY_TOKENS) -> None:
        self.counter = counter
        self.max_chars = max_tokens * CHARS_PER_TOKEN
        self.calls = 0
        self.input_tokens = 0
        self._template_cache: dict[tuple[str, str], int] = {}

    def __call__(self, messages: Sequence[BaseMessage], *, prompt_text: Any = "") -> str:
        self.calls += 1
        counter = self.counter or get_counter("approximate")
        # What a model summarizer would read: the messages (counts are cached per message, so this
        # is cheap) plus the prompt's own instructions, counted once per distinct prompt template.
        self.input_tokens += counter(messages) + self._instruction_tokens(counter, prompt_text, messages)
        return self.summarize(messages)

    def _instruction_tokens(self, counter: TokenCounter, prompt_text: Any, messages: Sequence[BaseMessage]) -> int:
        # the prompt is the template with the messages' XML inserted; its fixed part is the head
        # before the first message and the tail after the last one
        frame = getattr(prompt_text, "frame", None)
        if frame is not None:  # an unrendered prompt knows its frame without rendering the messages
            head, tail = frame()
        else:
            prompt_text = str(prompt_text)
            if not prompt_text:
                return 0
            head = prompt_text.split("<message", 1)[0]
            tail = prompt_text.rsplit("</message>", 1)[-1] if "</message>" in prompt_text else ""
        key = (head, tail)
        cached = self._template_cache.get(key)
        if cached is None:
            cached = self._template_cache[key] = counter.count_text(head) + counter.count_text(tail)
        return cached

    def summarize(self, messages: Sequence[BaseMessage]) -> str:
        """The summary text alone (no call counted)."""
        # each message's kind once: every section reads it, and nothing changes it meanwhile
        kinds = [message_kind(m) for m in messages]
        prior: dict[str, list[str]] = {}
        summaries = [m for m, kind in zip(messages, kinds, strict=True) if kind == "summary"]
        for m in summaries:
            for section, lines in MEMO.get(m, "prior", earlier_sections).items():
                prior.setdefault(section, []).extend(lines)
        calls = [_calls(m) for m in messages if isinstance(m, AIMessage) and m.tool_calls]
        sections = {
            "SESSION INTENT": self._intent(messages, prior, kinds),
            "SUMMARY": self._facts(messages, prior, kinds),
            "ARTIFACTS": self._artifacts(calls, summaries),
            "NEXT STEPS": self._next_steps(messages, prior, kinds, calls),
        }
        return self._render(sections)

    # -- sections --------------------------------------------------------------------------
    @staticmethod
    def _intent(messages: Sequence[BaseMessage], prior: dict[str, list[str]], kinds: Sequence[str]) -> list[str]:
        carried = [ln for ln in prior.get("SESSION INTENT", []) if ln != "- None"]
        if carried:
            return carried[:1]
        for m, kind in zip(messages, kinds, strict=True):
            if isinstance(m, HumanMessage) and kind == "original":
                line = MEMO.get(m, "intent", intent_line)
                if line is not None:
                    return [line]
        return []

    @staticmethod
    def _facts(messages: Sequence[BaseMessage], prior: dict[str, list[str]], kinds: Sequence[str]) -> list[str]:
        facts = [ln for ln in prior.get("SUMMARY", []) if ln != "- None"]
        names: dict[str, str] | None = None  # call id -> tool name, built when a result has no name
        seen_first_human = False
        for m, kind in zip(messages, kinds, strict=True):
            if kind != "original":
                continue
            if isinstance(m, HumanMessage):
                injected, line = MEMO.get(m, "human_fact", human_fact)
                if injected:
                    if line is not None:
                        facts.append(line)
                    continue
                if seen_first_human and line is not None:
                    facts.append(line)
                seen_first_human = True
            elif isinstance(m, AIMessage):
                picked, first = MEMO.get(m, "ai_facts", ai_facts)
                if not picked and not m.tool_calls:
                    picked = first  # a final answer is a conclusion even without a cue word
                facts.extend(picked)
            elif isinstance(m, ToolMessage):
                name = m.name
                if not name:
                    if names is None:
                        names = _tool_names(messages)
                    name = names.get(m.tool_call_id, "tool")
                head, failed, head_200, head_240 = MEMO.get(m, "result_head", result_head)
                if m.status == "error" or failed:
                    facts.append(f"- Error from {name}: {head_200}")
                elif name.lower() in TASK_TOOLS and head:
                    facts.append(f"- Sub-agent ({name}) reported: {head_240}")
        return list(dict.fromkeys(facts))  # exact repeats add nothing

    @staticmethod
    def _artifacts(calls: Sequence[CallReading], summaries: Sequence[BaseMessage]) -> list[str]:
        verbs: dict[str, list[str]] = {}
        for m in summaries:  # the earlier summaries' lines, in order (a later line for a path wins)
            for path, listed in _prior_artifacts(m):
                verbs[path] = list(listed)
        for pairs, _ in calls:  # the AI messages' calls, in order
            for path, verb in pairs:
                bucket = verbs.setdefault(path, [])
                if verb not in bucket:
                    bucket.append(verb)
        return [f"- `{path}` — {', '.join(v)}" for path, v in verbs.items()]

    @staticmethod
    def _next_steps(messages: Sequence[BaseMessage], prior: dict[str, list[str]], kinds: Sequence[str],
                    calls: Sequence[CallReading]) -> list[str]:
        todos: list[Any] | None = None
        for _, written in calls:  # the last todo list written wins
            if written is not None:
                todos = written
        steps: list[str] = []
        if todos is not None:
            for t in todos:
                if isinstance(t, dict) and t.get("status") != "completed":
                    steps.append(f"- [ ] {clip(str(t.get('content', '')), 200)} ({t.get('status', 'pending')})")
        last_ai = next((m for m, kind in zip(reversed(messages), reversed(kinds), strict=True)
                        if isinstance(m, AIMessage) and kind == "original" and MEMO.get(m, "has_text", has_text)), None)
        if last_ai is not None:
            steps.extend(MEMO.get(last_ai, "plan", plan_lines))
        if not steps and todos is None:
            steps = [ln for ln in prior.get("NEXT STEPS", []) if ln != "- None"]
        return list(dict.fromkeys(steps))

    # -- rendering -------------------------------------------------------------------------
    def _render(self, sections: dict[str, list[str]]) -> str:
        caps = {"SESSION INTENT": 1, "SUMMARY": 24, "ARTIFACTS": 40, "NEXT STEPS": 12}
        # the newest facts matter most; artifacts and steps keep their first entries
        lines = {
            "SESSION INTENT": sections["SESSION INTENT"][:1],
            "SUMMARY": sections["SUMMARY"][-caps["SUMMARY"]:],
            "ARTIFACTS": _capped(sections["ARTIFACTS"], caps["ARTIFACTS"]),
            "NEXT STEPS": sections["NEXT STEPS"][: caps["NEXT STEPS"]],
        }
        text = _join(lines)
        # drop the oldest facts, then trailing artifacts, until the summary fits its bound
        while len(text) > self.max_chars and len(lines["SUMMARY"]) > 1:
            lines["SUMMARY"] = lines["SUMMARY"][1:]
            text = _join(lines)
        while len(text) > self.max_chars and len(lines["ARTIFACTS"]) > 1:
            lines["ARTIFACTS"] = lines["ARTIFACTS"][:-1]
            text = _join(lines)
        return text if len(text) <= self.max_chars else text[: self.max_chars - 1] + "…"


def _capped(items: list[str], cap: int) -> list[str]:
    if len(items) <= cap:
        return items
    return [*items[: cap - 1], f"- … and {len(items) - cap + 1} more"]


def _join(lines: dict[str, list[str]]) -> str:
    return "\n\n".join(f"## {s}\n" + ("\n".join(lines[s]) if lines[s] else "None") for s in SECTIONS)
