"""DeerFlow HEAD's summarization rules (the `deerflow-head` summarization style), as pure functions.

DeerFlow `backend/packages/harness/deerflow/agents/middlewares/summarization_middleware.py` at
f1f4af99b, `DeerFlowSummarizationMiddleware` (a LangChain `SummarizationMiddleware` subclass):

- the summary is not a message: state keeps only the preserved messages, the text goes to the
  `summary_text` state field, and the next trigger counts it as a trailing
  `HumanMessage(summary_text, name="summary")`;
- the latest real user message and dynamic-context reminders are never summarized (they move to the
  front of the preserved messages);
- the prompt is rolling: LangChain's trim, then `get_buffer_string` (prefix format), then
  `<existing_summary>` (the previous summary, its newest half of the budget) and `<new_messages>`
  (the oldest half), both HTML-escaped; an empty trim keeps the last message;
- an empty summary skips compaction for the turn.

Two helpers DeerFlow imports are not in the reference copy: `is_real_user_message` and
`is_dynamic_context_reminder`. They follow deerflow.md: a real user message is a human message that
is not hidden from the UI and is not one of DeerFlow's named control messages; a reminder carries
`additional_kwargs["dynamic_context_reminder"]`.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

from langchain_core.messages import BaseMessage, HumanMessage, get_buffer_string, trim_messages

SUMMARY_FIELD = "summary_text"
SUMMARY_TRIGGER_NAME = "summary"
CONTROL_MESSAGE_NAMES = frozenset({"summary", "todo_reminder", "todo_completion_reminder", "loop_warning"})
_OMITTED = "\n...\n"


def is_real_user_message(message: BaseMessage) -> bool:
    return (isinstance(message, HumanMessage) and not message.additional_kwargs.get("hide_from_ui")
            and message.name not in CONTROL_MESSAGE_NAMES
            and message.additional_kwargs.get("lc_source") != "summarization")


def is_dynamic_context_reminder(message: BaseMessage) -> bool:
    return bool(message.additional_kwargs.get("dynamic_context_reminder"))


def summary_count_message(summary_text: str) -> HumanMessage:
    """What the trigger counts for the current summary (`_summary_count_message`)."""
    return HumanMessage(content=summary_text, name=SUMMARY_TRIGGER_NAME)


def split_preserved(to_summarize: Sequence[BaseMessage], preserved: Sequence[BaseMessage],
                    latest_user_id: str | None) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """`_preserve_dynamic_context_reminders`: reminders and the current request leave the summarized part."""
    rescued: list[BaseMessage] = []
    remaining: list[BaseMessage] = []
    for m in to_summarize:
        (rescued if is_dynamic_context_reminder(m) or (latest_user_id is not None and m.id == latest_user_id)
         else remaining).append(m)
    return remaining, [*rescued, *preserved]


def latest_user_id(messages: Sequence[BaseMessage]) -> str | None:
    return next((m.id for m in reversed(messages) if is_real_user_message(m)), None)


def bound_text(text: str, cap: int) -> str:
    """`_bound_text`: two thirds head, `\\n...\\n`, the rest tail (the fallback when trimming fails)."""
    if len(text) <= cap:
        return text
    if cap <= 0:
        return ""
    head = cap * 2 // 3
    if cap <= len(_OMITTED):
        return text[:cap]
    tail = max(0, cap - head - len(_OMITTED))
    if tail == 0:
        return text[:cap]
    return f"{text[:head]}{_OMITTED}{text[-tail:]}"


def trim_section(text: str, max_tokens: int, counter: Callable[..., int], *, strategy: str) -> str:
    """`_trim_summary_section_text`: the text cut to `max_tokens` character by character."""
    if not text.strip():
        return ""
    max_tokens = max(1, max_tokens)
    try:
        trimmed = trim_messages([HumanMessage(content=text)], max_tokens=max_tokens, token_counter=counter,  # type: ignore[call-overload]
                                strategy=strategy, allow_partial=True, text_splitter=list)
        if trimmed:
            content = trimmed[-1].content
            if isinstance(content, str) and content.strip():
                return content
    except Exception:  # DeerFlow falls back to a deterministic cap
        pass
    return bound_text(text, max_tokens)


def summary_input(formatted: str, previous: str | None, trim_tokens: int | None,
                  counter: Callable[..., int]) -> str | None:
    """`_build_summary_input_text`: the rolling `<existing_summary>` / `<new_messages>` body, or None."""
    if trim_tokens is None:
        new, prior = formatted, (previous.strip() if previous else "")
    else:
        budget = max(1, trim_tokens)
        if previous:
            new_tokens = max(1, budget // 2)
            prior = trim_section(previous.strip(), max(1, budget - new_tokens), counter, strategy="last")
            new = trim_section(formatted, new_tokens, counter, strategy="first")
        else:
            prior = ""
            new = trim_section(formatted, budget, counter, strategy="first")
    parts: list[str] = []
    if prior:
        parts += ["<existing_summary>", html.escape(prior, quote=False), "</existing_summary>", ""]
    if new:
        parts += ["<new_messages>", html.escape(new, quote=False), "</new_messages>"]
    return "\n".join(parts) if parts else None


def summary_prompt(template: str, trimmed: Sequence[BaseMessage], previous: str | None, trim_tokens: int | None,
                   counter: Callable[..., int]) -> str | None:
    """`_build_summary_prompt` from the already trimmed messages (an empty trim keeps the last one)."""
    body = summary_input(get_buffer_string(list(trimmed)), previous, trim_tokens, counter)
    return template.format(messages=body).rstrip() if body else None


__all__ = [
    "SUMMARY_FIELD", "bound_text", "is_dynamic_context_reminder", "is_real_user_message", "latest_user_id",
    "split_preserved", "summary_count_message", "summary_input", "summary_prompt", "trim_section",
]
