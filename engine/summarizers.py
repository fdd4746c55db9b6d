"""Summarizers: what writes the summary text once the summarization layer chose what to summarize.

`OfflineSummarizer` is the default: deterministic and extractive, no network, the same text for
the same messages. `LLMSummarizer` prompts any LangChain chat model (`init_chat_model`) with the
layer's summary prompt. Both count their calls and the input tokens they were (or would have been)
sent, so a run can report what summarization cost.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.config import EngineConfig
from engine.errors import ConfigError, ModelCallError
from engine.kinds import message_kind
from engine.redaction import describe_error, one_line
from engine.tokens import TokenCounter, get_counter, message_text

SECTIONS: tuple[str, ...] = ("SESSION INTENT", "SUMMARY", "ARTIFACTS", "NEXT STEPS")
MAX_SUMMARY_TOKENS = 1500
CHARS_PER_TOKEN = 4  # the bound is in characters, so the text does not depend on the counter


@runtime_checkable
class Summarizer(Protocol):
    """Turns the messages chosen for summarization into summary text."""

    name: str
    calls: int
    input_tokens: int

    def __call__(self, messages: Sequence[BaseMessage], *, prompt_text: str) -> str: ...


# -- offline -------------------------------------------------------------------------------------
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

# Sentences that state an outcome or a choice; extractive summaries keep these.
_CONCLUSION = re.compile(
    r"\b(found|fixed|fix|decided|decision|conclu\w*|because|root cause|the (issue|problem|bug|cause)|"
    r"works|working|passe[sd]|fail(s|ed)?|confirm\w*|done|complet\w*|implement\w*|created|updated|"
    r"added|removed|chose|instead|therefore|result\w*|turns out|so the|succeed\w*|verified)\b",
    re.IGNORECASE,
)
_PLAN = re.compile(r"\b(next|i will|i'll|let me|then|plan|need to|remaining|todo|going to|should)\b", re.IGNORECASE)
# A result reports a failure when its first line says so (not when "error" appears somewhere in it).
_ERROR = re.compile(r"^\W*(error|exception|traceback|fatal|failed|failure|task failed|permission denied)\b",
                    re.IGNORECASE)
# Announcements of the next action are plans, not facts ("Let me read the file.").
_ANNOUNCEMENT = re.compile(r"^(now,? |ok(ay)?,? |first,? |next,? )?(let me|let's|i'll|i will|i need to|i'm going to)\b",
                           re.IGNORECASE)
# Text a harness injected as a user turn (Claude Code hooks and slash commands), not a user request.
_INJECTED = re.compile(r"^\s*<(system-reminder|command-name|command-message|command-args|local-command-stdout|"
                       r"local-command-caveat|user-prompt-submit-hook)\b")
_TAG = re.compile(r"</?[a-z][a-z0-9_-]*>")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_SECTION_HEAD = re.compile(r"^##\s+(SESSION INTENT|SUMMARY|ARTIFACTS|NEXT STEPS)\s*$")


def _clip(text: str, limit: int) -> str:
    """One line of at most `limit` characters (whitespace collapsed)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


def _tool_names(messages: Sequence[BaseMessage]) -> dict[str, str]:
    return {str(tc["id"]): str(tc.get("name", "")) for m in messages if isinstance(m, AIMessage)
            for tc in m.tool_calls if tc.get("id")}


def prior_sections(text: str) -> dict[str, list[str]]:
    """The checklist lines of each section of an earlier summary (so a summary of a summary keeps them)."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        head = _SECTION_HEAD.match(line)
        if head:
            current = head.group(1)
            out.setdefault(current, [])
        elif current and line.startswith("- "):
            out[current].append(line)
    return out


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
        prior: dict[str, list[str]] = {}
        for m in messages:
            if message_kind(m) == "summary":
                for section, lines in prior_sections(message_text(m)).items():
                    prior.setdefault(section, []).extend(lines)
        sections = {
            "SESSION INTENT": self._intent(messages, prior),
            "SUMMARY": self._facts(messages, prior),
            "ARTIFACTS": self._artifacts(messages, prior),
            "NEXT STEPS": self._next_steps(messages, prior),
        }
        return self._render(sections)

    # -- sections --------------------------------------------------------------------------
    @staticmethod
    def _intent(messages: Sequence[BaseMessage], prior: dict[str, list[str]]) -> list[str]:
        carried = [ln for ln in prior.get("SESSION INTENT", []) if ln != "- None"]
        if carried:
            return carried[:1]
        for m in messages:
            if isinstance(m, HumanMessage) and message_kind(m) == "original":
                text = message_text(m).strip()
                if text and not _INJECTED.match(text):
                    return [f"- {_clip(text, 400)}"]
        return []

    @staticmethod
    def _facts(messages: Sequence[BaseMessage], prior: dict[str, list[str]]) -> list[str]:
        facts = [ln for ln in prior.get("SUMMARY", []) if ln != "- None"]
        names = _tool_names(messages)
        seen_first_human = False
        for m in messages:
            kind = message_kind(m)
            if kind != "original":
                continue
            text = message_text(m)
            if isinstance(m, HumanMessage):
                if _INJECTED.match(text):
                    plain = _TAG.sub(" ", text)
                    if re.search(r"\bERROR\b|\berror:", plain):  # a hook reporting a failure is an outcome
                        facts.append(f"- Reported: {_clip(plain, 200)}")
                    continue
                if seen_first_human and text.strip():
                    facts.append(f"- User asked: {_clip(text, 240)}")
                seen_first_human = True
            elif isinstance(m, AIMessage):
                sentences = _sentences(text)
                picked = [s for s in sentences if _CONCLUSION.search(s) and not _ANNOUNCEMENT.match(s)][:2]
                if not picked and not m.tool_calls and sentences:
                    picked = sentences[:1]  # a final answer is a conclusion even without a cue word
                facts.extend(f"- {_clip(s, 240)}" for s in picked)
            elif isinstance(m, ToolMessage):
                name = m.name or names.get(m.tool_call_id, "tool")
                head = _first_line(text)
                if m.status == "error" or _ERROR.search(head):
                    facts.append(f"- Error from {name}: {_clip(head, 200)}")
                elif name.lower() in TASK_TOOLS and head:
                    facts.append(f"- Sub-agent ({name}) reported: {_clip(head, 240)}")
        return list(dict.fromkeys(facts))  # exact repeats add nothing

    @staticmethod
    def _artifacts(messages: Sequence[BaseMessage], prior: dict[str, list[str]]) -> list[str]:
        verbs: dict[str, list[str]] = {}
        for line in prior.get("ARTIFACTS", []):
            found = re.match(r"- `(.+?)` — (.+)$", line)
            if found:
                verbs[found.group(1)] = [v.strip() for v in found.group(2).split(",")]
        for m in messages:
            if not isinstance(m, AIMessage):
                continue
            for tc in m.tool_calls:
                args = tc.get("args") if isinstance(tc.get("args"), dict) else {}
                path = _artifact_path(args)
                verb = _artifact_verb(str(tc.get("name", "")), args)
                if path is None or verb is None:
                    continue
                bucket = verbs.setdefault(path, [])
                if verb not in bucket:
                    bucket.append(verb)
        return [f"- `{path}` — {', '.join(v)}" for path, v in verbs.items()]

    @staticmethod
    def _next_steps(messages: Sequence[BaseMessage], prior: dict[str, list[str]]) -> list[str]:
        todos: list[Any] | None = None
        for m in messages:
            if isinstance(m, AIMessage):
                for tc in m.tool_calls:
                    if str(tc.get("name", "")).lower() in TODO_TOOLS and isinstance(tc.get("args"), dict):
                        listed = tc["args"].get("todos")
                        if isinstance(listed, list):
                            todos = listed
        steps: list[str] = []
        if todos is not None:
            for t in todos:
                if isinstance(t, dict) and t.get("status") != "completed":
                    steps.append(f"- [ ] {_clip(str(t.get('content', '')), 200)} ({t.get('status', 'pending')})")
        last_ai = next((m for m in reversed(messages)
                        if isinstance(m, AIMessage) and message_kind(m) == "original" and message_text(m).strip()), None)
        if last_ai is not None:
            plan = [s for s in _sentences(message_text(last_ai)) if _PLAN.search(s)][:2]
            steps.extend(f"- [ ] {_clip(s, 240)}" for s in plan)
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


# -- LLM -----------------------------------------------------------------------------------------
def _summary_call_config() -> dict[str, Any]:
    # LangChain marks its summary calls as internal and keeps them off the messages stream.
    from langgraph.constants import TAG_NOSTREAM

    return {"metadata": {"lc_source": "summarization"}, "tags": [TAG_NOSTREAM]}


def load_chat_model(model_spec: str) -> BaseChatModel:
    """`init_chat_model("provider:model")`, with a one-line ConfigError when it cannot be built.

    Keys come only from the environment (the provider package reads them); nothing here reads,
    stores or prints a key.
    """
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(model_spec)
    except ImportError as exc:
        raise ConfigError(f"cannot load {model_spec!r}: {one_line(_first_line(str(exc)), 240) or 'provider package missing'}",
                          key="summarization.summarizer") from None
    except Exception as exc:  # provider constructors raise their own types (e.g. missing credentials)
        detail = one_line(_first_line(str(exc)), 240)
        raise ConfigError(f"cannot load {model_spec!r} ({type(exc).__name__}): {detail}",
                          key="summarization.summarizer") from None


class LLMSummarizer:
    """Summaries written by a chat model prompted with the layer's summary prompt."""

    def __init__(self, model_spec: str, *, counter: TokenCounter | None = None,
                 model: BaseChatModel | None = None) -> None:
        self.name = model_spec
        self.model = model if model is not None else load_chat_model(model_spec)
        self.counter = counter or get_counter("approximate")
        self.calls = 0
        self.input_tokens = 0
        # LangChain retries summary calls up to 3 attempts in all
        self._runnable = self.model.with_retry(stop_after_attempt=3)

    def __call__(self, messages: Sequence[BaseMessage], *, prompt_text: str) -> str:
        self.calls += 1
        self.input_tokens += self.counter.count_text(prompt_text)
        try:
            response = self._runnable.invoke(prompt_text, config=_summary_call_config())  # type: ignore[arg-type]
        except Exception as exc:  # a provider's error text may quote the key it was sent: one redacted line
            raise ModelCallError(f"summarization.summarizer: {self.name} failed to write a summary "
                                 f"({describe_error(exc)})") from None
        return response.text.strip()


class CallableSummarizer:
    """A plain function of the messages (LangChain's `summarizer=` callable): the prompt is not used."""

    def __init__(self, fn: Callable[[list[BaseMessage]], Any], *, counter: TokenCounter | None = None) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", "callable")
        self.counter = counter or get_counter("approximate")
        self.calls = 0
        self.input_tokens = 0

    def __call__(self, messages: Sequence[BaseMessage], *, prompt_text: str = "") -> str:
        self.calls += 1
        self.input_tokens += self.counter(messages)
        summary = self.fn(list(messages))
        if not isinstance(summary, str):
            raise TypeError(f"`summarizer` must return a str, got {type(summary).__name__}.")
        return summary.strip()


def model_summarizers(config: EngineConfig) -> dict[str, str]:
    """`{dotted key: "provider:model"}` for every summarizer the config sets to a real model
    (`summarization.summarizer`, `compaction.summarizer`, and any later `*.summarizer` key)."""
    found: dict[str, str] = {}

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "summarizer" and isinstance(value, str) and value != "offline":
                    found[prefix + key] = value
                else:
                    walk(value, f"{prefix}{key}.")

    walk(config.to_dict(), "")
    return found


def with_offline_summaries(config: EngineConfig) -> EngineConfig:
    """`config` with every model summarizer replaced by the offline one (what runs until models are allowed)."""
    keys = model_summarizers(config)
    return config.with_overrides([f"{key}=offline" for key in keys]) if keys else config


def make_summarizer(spec: Any = "offline", counter: TokenCounter | None = None) -> Summarizer:
    """A summarizer from a spec: "offline", "provider:model", a chat model, a Summarizer or a function."""
    if spec is None or spec == "offline":
        return OfflineSummarizer(counter)
    if isinstance(spec, str):
        if ":" not in spec:
            raise ConfigError(f"summarizer must be 'offline' or 'provider:model', got {spec!r}",
                              key="summarization.summarizer")
        return LLMSummarizer(spec, counter=counter)
    if isinstance(spec, BaseChatModel):
        return LLMSummarizer(getattr(spec, "model_name", None) or type(spec).__name__, counter=counter, model=spec)
    if isinstance(spec, Summarizer):
        return spec
    if callable(spec):
        return CallableSummarizer(spec, counter=counter)
    raise ConfigError(f"unsupported summarizer {type(spec).__name__}", key="summarization.summarizer")


__all__ = [
    "CallableSummarizer",
    "LLMSummarizer",
    "OfflineSummarizer",
    "SECTIONS",
    "Summarizer",
    "load_chat_model",
    "make_summarizer",
    "model_summarizers",
    "with_offline_summaries",
    "prior_sections",
]
