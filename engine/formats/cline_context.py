"""Cline's context management as recorded compactions: `conversationHistoryDeletedRange` and Auto Compact.

Cline never rewrites `api_conversation_history.json`; what it sends is decided per request by
`ContextManager` (cline/cline `src/core/context/context-management/ContextManager.ts`):
`getAndAlterTruncatedMessages` sends `messages[0:2]` (the first user/assistant pair) plus
`messages[deletedRange[1] + 1:]`, after applying the text updates saved in `context_history.json`
(`applyContextHistoryUpdates`: per message and block, the latest update replaces a text block's text).
When it first truncates, `applyStandardContextTruncationNoticeChange` replaces the first assistant
message's block 0 with `formatResponse.contextTruncationNotice()`.

Which range a request used: the range is decided inside `attemptApiRequest`, after the request's
`api_req_started` ClineMessage was created, and every ClineMessage carries the range in force when it
was added (`MessageStateHandler.addToClineMessages`). So a request's range is the one carried by the
first message after its `api_req_started` (checkpoint and hook notes aside, which come before the
decision), else by the next `api_req_started`.

Auto Compact (`SummarizeTaskHandler`): the model answers a summarize request with a `summarize_task`
call whose `context` is the summary; the handler deletes everything after the first pair, and the next
request widens the range by 2 (`currentlySummarizing`) to drop the summarize request and the call too,
so the model continues from the tool result (`continuationPrompt(summary)`). That range change is a
compaction of kind "summary" (source "cline:summarize_task"); any other is kind "trim"
(source "cline:deleted_range").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from engine.thread.kinds import mark
from engine.thread.model import RecordedCompaction

# cline/cline src/core/prompts/responses.ts (commit 008b035), formatResponse.contextTruncationNotice.
TRUNCATION_NOTICE = (
    "[NOTE] Some previous conversation history with the user has been removed to maintain optimal context "
    "window length. The initial user task and the most recent exchanges have been retained for continuity, "
    "while intermediate conversation history has been removed. Please keep this in mind as you continue "
    "assisting the user."
)
SUMMARY_TOOLS = ("summarize_task", "condense")
# ClineMessages that can precede the truncation decision of their request (Task.recursivelyMakeClineRequests).
BEFORE_DECISION = frozenset({"checkpoint_created", "error", "hook", "hook_output", "hook_status", "task_progress"})


@dataclass
class Request:
    """One API request Cline made: its `api_req_started` and what it produced."""

    ui_index: int
    ts: int | None
    assistant: int | None  # index of the assistant message it produced, in api_conversation_history
    deleted: tuple[int, int] | None = None
    info: dict[str, Any] = field(default_factory=dict)


def _range(value: Any) -> tuple[int, int] | None:
    if (isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            and 0 <= value[0] <= value[1]):
        return value[0], value[1]
    return None


def request_ranges(ui: list[Any], requests: list[Request]) -> None:
    """Fill each request's deleted range (see the module docstring for the rule)."""
    starts = [r.ui_index for r in requests] + [len(ui)]
    for k, request in enumerate(requests):
        chosen: Any = None
        found = False
        for message in ui[starts[k] + 1:starts[k + 1]]:
            if isinstance(message, dict) and message.get("say") not in BEFORE_DECISION:
                chosen, found = message.get("conversationHistoryDeletedRange"), True
                break
        if not found and k + 1 < len(requests):
            chosen = ui[starts[k + 1]].get("conversationHistoryDeletedRange") if isinstance(ui[starts[k + 1]], dict) else None
        request.deleted = _range(chosen)


def context_updates(raw: Any) -> dict[tuple[int, int], list[tuple[int, str]]]:
    """context_history.json as {(message index, block index): [(timestamp, text), ...]} (text updates only)."""
    out: dict[tuple[int, int], list[tuple[int, str]]] = {}
    if not isinstance(raw, list):
        return out
    for entry in raw:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], int)
                and isinstance(entry[1], list) and len(entry[1]) == 2 and isinstance(entry[1][1], list)):
            continue
        for inner in entry[1][1]:
            if not (isinstance(inner, list) and len(inner) == 2 and isinstance(inner[0], int) and isinstance(inner[1], list)):
                continue
            for update in inner[1]:
                if (isinstance(update, list) and len(update) >= 3 and isinstance(update[0], int) and update[1] == "text"
                        and isinstance(update[2], list) and update[2] and isinstance(update[2][0], str)):
                    out.setdefault((entry[0], inner[0]), []).append((update[0], update[2][0]))
    for updates in out.values():
        updates.sort(key=lambda u: u[0])
    return out


def summary_call(message: BaseMessage) -> str | None:
    """The summary of a `summarize_task` / `condense` call in an AI message, else None."""
    if isinstance(message, AIMessage):
        for tc in message.tool_calls:
            if tc.get("name") in SUMMARY_TOOLS:
                context = tc.get("args", {}).get("context")
                return context if isinstance(context, str) else ""
    return None


def _block_text(raw: Any, block: int) -> str | None:
    content = raw.get("content") if isinstance(raw, dict) else None
    if isinstance(content, str) and block == 0:
        return content
    if isinstance(content, list) and 0 <= block < len(content) and isinstance(content[block], dict) \
            and content[block].get("type") == "text" and isinstance(content[block].get("text"), str):
        return str(content[block]["text"])
    return None


def altered(messages: list[BaseMessage], old: str, new: str, first_block: bool) -> list[BaseMessage]:
    """Copies of one api message's thread messages with a text block's `old` text replaced by `new`.

    A first assistant block that carried XML tool calls no longer exists as such once replaced, so an
    AI message whose text block 0 is replaced loses its content and calls (Cline sends the notice alone).
    """
    out: list[BaseMessage] = []
    done = False
    for message in messages:
        content = message.content
        if not done and isinstance(content, str) and content.strip() == old.strip():
            copy = message.model_copy(update={"content": new})
            done = True
        elif not done and isinstance(content, list) and any(isinstance(b, dict) and b.get("text") == old for b in content):
            blocks = [({**b, "text": new} if isinstance(b, dict) and b.get("text") == old else b) for b in content]
            copy, done = message.model_copy(update={"content": blocks}), True
        elif not done and first_block and isinstance(message, AIMessage):
            copy, done = message.model_copy(update={"content": [{"type": "text", "text": new}], "tool_calls": []}), True
        else:
            out.append(message)
            continue
        out.append(mark(copy, "truncated", source="cline:context_history"))
    return out


def compactions(
    raw: list[Any], spans: list[tuple[int, int]], messages: list[BaseMessage], requests: list[Request],
    updates: dict[tuple[int, int], list[tuple[int, str]]], notice_recorded: bool,
    context_tokens: dict[int, int | None],
) -> tuple[list[RecordedCompaction], int]:
    """The deleted-range changes as RecordedCompactions, and how many recorded updates found no place."""
    out: list[RecordedCompaction] = []
    applied: set[tuple[int, int]] = set()
    previous: tuple[int, int] | None = None
    before: Request | None = None
    for k, request in enumerate(requests):
        deleted = request.deleted
        if request.assistant is None:
            continue
        if deleted is not None and deleted != previous and (previous is None or deleted[1] > previous[1]):
            start_api = before.assistant + 1 if before is not None and before.assistant is not None else 0
            if start_api < len(spans) and deleted[1] + 1 <= start_api:
                kept = [*range(0, min(deleted[0], len(spans))), *range(deleted[1] + 1, start_api)]
                replacement: list[BaseMessage] = []
                for i in kept:
                    part = messages[spans[i][0]:spans[i][1]]
                    for block in range(_blocks(raw[i])):
                        text = _update(updates, i, block, request.ts)
                        if text is None and i == 1 and block == 0 and not notice_recorded:
                            text = TRUNCATION_NOTICE  # Cline's own notice; context_history.json was not given
                        old = _block_text(raw[i], block)
                        if text is not None and old is not None:
                            part = altered(part, old, text, first_block=block == 0)
                            applied.add((i, block))
                    replacement.extend(part)
                index = spans[start_api][0]
                first_new = previous[1] + 1 if previous is not None else deleted[0]
                dropped = [messages[j] for j in range(spans[min(first_new, start_api)][0], index)]
                summary = next((s for s in (summary_call(m) for m in reversed(dropped)) if s is not None), None)
                out.append(RecordedCompaction(
                    index=index, trigger="auto", summary=summary or "", replacement=replacement,
                    kind="summary" if summary is not None else "trim",
                    source="cline:summarize_task" if summary is not None else "cline:deleted_range",
                    message_id=messages[index].id if summary is not None and index < len(messages) else None,
                    pre_tokens=context_tokens.get(k - 1), post_tokens=context_tokens.get(k),
                ))
        previous = deleted if deleted is not None else previous
        before = request
    return out, sum(1 for key in updates if key not in applied)


def _blocks(raw: Any) -> int:
    content = raw.get("content") if isinstance(raw, dict) else None
    return len(content) if isinstance(content, list) else (1 if isinstance(content, str) else 0)


def _update(updates: dict[tuple[int, int], list[tuple[int, str]]], i: int, block: int, ts: int | None) -> str | None:
    """The latest recorded text for a block made before the request (all of them when its time is unknown)."""
    found = [text for when, text in updates.get((i, block), []) if ts is None or when < ts]
    return found[-1] if found else None


def parse_request_info(text: Any) -> dict[str, Any]:
    """An `api_req_started` message's JSON text (ClineApiReqInfo), or {} when it is not JSON."""
    if not isinstance(text, str):
        return {}
    try:
        info = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return info if isinstance(info, dict) else {}
