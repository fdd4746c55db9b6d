"""L0 filesystem: large tool results offloaded to `/large_tool_results/`, old file-write arguments truncated.

Two mechanisms from Deep Agents:

- **Offload** (`wrap_tool_call`, rewrites state): a tool result whose text is longer than
  `4 * tool_result_token_limit` *characters* is written to `/large_tool_results/<sanitized id>`
  and replaced by a stub with a head/tail preview. Deep Agents names the limit in tokens but
  checks characters (`NUM_CHARS_PER_TOKEN = 4`): 80,000 characters stay, 80,001 are offloaded.
  We follow that exactly, so the decision does not depend on the token counter.
- **Argument truncation** (`wrap_model_call`, view only): once the request's messages reach the
  trigger, string arguments of `write_file`/`edit_file` calls longer than `max_length` in
  messages before the keep cutoff are shown as `value[:20] + truncation_text`. The state is
  never rewritten; a `truncate_args` event is emitted at every step where the view differs.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from engine.config import TOOLS_EXCLUDED_FROM_EVICTION, ContextSize, EngineConfig, TruncateArgsConfig
from engine.kinds import KIND_KEY, mark
from engine.layers.base import LayerContext, RequestLayer
from engine.vfs import VirtualFilesystem

NUM_CHARS_PER_TOKEN = 4
LARGE_TOOL_RESULTS_DIR = "/large_tool_results"
MAX_TOOL_CALL_ID_BYTES = 128
PREVIEW_HEAD_LINES = 5
PREVIEW_TAIL_LINES = 5
PREVIEW_LINE_CHAR_LIMIT = 1000
VISIBLE_TOOL_CALL_ID_CHARS = 32
TRUNCATED_ARG_KEEP_CHARS = 20
# Deep Agents falls back to keeping the last 20 messages when a fraction has no window to refer to.
FALLBACK_KEEP_MESSAGES = 20

# Deep Agents' text, as it is (deepagents 0.7.32, middleware/_message_eviction.py).
TOO_LARGE_TOOL_MSG = """Tool result too large, the result of this tool call {tool_call_id} was saved in the filesystem at this path: {file_path}

You can read the result from the filesystem by using the read_file tool, but make sure to only read part of the result at a time.

You can do this by specifying an offset and limit in the read_file tool call. For example, to read the first 100 lines, you can use the read_file tool with offset=0 and limit=100.

{preview_note}

{content_sample}
"""  # noqa: E501
TRUNCATION_MARKER = "... [{omitted_lines} lines truncated] ..."
_NOTE_PLAIN = "Here is a preview of the result"
_NOTE_HEAD_TAIL = "Here is a preview showing the head and tail of the result"
_CAVEAT_OMITTED = (
    f"lines of the form `{TRUNCATION_MARKER.format(omitted_lines='N')}` indicate omitted lines in the middle of the content"
)
_CAVEAT_CLIPPED = (
    f"the output contains lines longer than {PREVIEW_LINE_CHAR_LIMIT} characters; "
    f"this preview shows only their first {PREVIEW_LINE_CHAR_LIMIT} characters"
)


# -- offload: pure helpers ---------------------------------------------------------------------
def sanitize_tool_call_id(tool_call_id: str) -> str:
    """A file name for a tool call id: `.`, `/`, `\\` become `_`; ids over 128 UTF-8 bytes become a hash.

    The result is always one path component (no separator, no `..`), so it cannot escape
    `/large_tool_results/`. NUL is also replaced (the VFS refuses it; Deep Agents' backends would too).
    """
    if not tool_call_id:
        return "unknown"
    raw = tool_call_id.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_TOOL_CALL_ID_BYTES:
        return "call-" + hashlib.sha256(raw).hexdigest()
    return tool_call_id.replace(".", "_").replace("/", "_").replace("\\", "_").replace("\x00", "_")


def offload_path(tool_call_id: str, text: str = "") -> str:
    """Where a result is written; an empty id gets a content-derived (deterministic) name."""
    if not tool_call_id:
        return f"{LARGE_TOOL_RESULTS_DIR}/unknown-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
    return f"{LARGE_TOOL_RESULTS_DIR}/{sanitize_tool_call_id(tool_call_id)}"


def result_text(message: BaseMessage) -> str:
    """The text Deep Agents measures: text blocks joined by newlines, images and other blocks ignored."""
    content = message.content
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for block in content:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            texts.append(str(block.get("text", "")))
    return "\n".join(texts)


def number_lines(lines: Sequence[str], start_line: int = 1) -> str:
    """`cat -n` style with Deep Agents' gutter: numbers right-justified to the widest, then two spaces."""
    if not lines:
        return ""
    width = len(str(start_line + len(lines) - 1))
    return "\n".join(f"{start_line + i:>{width}}  {line}" for i, line in enumerate(lines))


@dataclass(frozen=True)
class Preview:
    """A line-numbered preview and what was left out to build it."""

    text: str
    lines_omitted: bool
    lines_clipped: bool


def content_preview(text: str, *, head_lines: int = PREVIEW_HEAD_LINES, tail_lines: int = PREVIEW_TAIL_LINES) -> Preview:
    """All lines when they fit in head + tail, else head, a `... [N lines truncated] ...` line, and tail.

    Lines are clipped to 1,000 characters; the tail keeps its real line numbers and, like Deep
    Agents, head and tail are numbered separately (each justified to its own widest number).
    """
    lines = text.splitlines()

    def clip(shown: list[str]) -> tuple[list[str], bool]:
        return [x[:PREVIEW_LINE_CHAR_LIMIT] for x in shown], any(len(x) > PREVIEW_LINE_CHAR_LIMIT for x in shown)

    if len(lines) <= head_lines + tail_lines:
        shown, clipped = clip(lines)
        return Preview(number_lines(shown, 1), False, clipped)
    head, head_clipped = clip(lines[:head_lines])
    tail, tail_clipped = clip(lines[-tail_lines:])
    marker = TRUNCATION_MARKER.format(omitted_lines=len(lines) - head_lines - tail_lines)
    body = number_lines(head, 1) + f"\n{marker}\n" + number_lines(tail, len(lines) - tail_lines + 1)
    return Preview(body, True, head_clipped or tail_clipped)


def preview_note(preview: Preview) -> str:
    """The sentence introducing a preview; mentions only the losses this preview has."""
    note = _NOTE_HEAD_TAIL if preview.lines_omitted else _NOTE_PLAIN
    caveats = [c for applies, c in ((preview.lines_omitted, _CAVEAT_OMITTED), (preview.lines_clipped, _CAVEAT_CLIPPED)) if applies]
    if caveats:
        note += f" ({'; '.join(caveats)})"
    return note + ":"


def visible_tool_call_id(tool_call_id: str) -> str:
    """Ids are cut to 32 characters + `...` in the stub text only (the path keeps the full id)."""
    if len(tool_call_id) > VISIBLE_TOOL_CALL_ID_CHARS:
        return tool_call_id[:VISIBLE_TOOL_CALL_ID_CHARS] + "..."
    return tool_call_id


def stub_text(tool_call_id: str, file_path: str, text: str) -> str:
    """Deep Agents' stub for an offloaded result, preview included."""
    preview = content_preview(text)
    return TOO_LARGE_TOOL_MSG.format(
        tool_call_id=visible_tool_call_id(tool_call_id),
        file_path=file_path,
        preview_note=preview_note(preview),
        content_sample=preview.text,
    )


def offload_to_stub(vfs: VirtualFilesystem, tool_message: ToolMessage, *, step: int | None = None) -> tuple[ToolMessage, str]:
    """Write the result's text to `/large_tool_results/<id>` and return (stub, path); no threshold check.

    The stub keeps tool_call_id, name, id, artifact, status and metadata; non-text blocks (images)
    are kept after one text block. It is marked kind "stub" with `ctxi_path`.
    """
    text = result_text(tool_message)
    path = offload_path(tool_message.tool_call_id, text)
    vfs.write(path, text, step=step, layer="filesystem", source_id=tool_message.tool_call_id)
    replacement = stub_text(tool_message.tool_call_id, path, text)
    content: Any = replacement
    if not isinstance(tool_message.content, str):
        media = [b for b in tool_message.content if isinstance(b, dict) and b.get("type") != "text"]
        if media:
            content = [{"type": "text", "text": replacement}, *media]
    stub = ToolMessage(
        content=content,
        tool_call_id=tool_message.tool_call_id,
        name=tool_message.name,
        id=tool_message.id or f"stub-{sanitize_tool_call_id(tool_message.tool_call_id)}",
        artifact=tool_message.artifact,
        status=tool_message.status,
        additional_kwargs=dict(tool_message.additional_kwargs),
        response_metadata=dict(tool_message.response_metadata),
    )
    mark(stub, "stub", path=path)
    return stub, path


def should_offload(text: str, token_limit: int | None) -> bool:
    """Deep Agents' rule: more than `4 * limit` characters (the limit is named in tokens)."""
    return token_limit is not None and len(text) > NUM_CHARS_PER_TOKEN * token_limit


# -- argument truncation: pure helpers -----------------------------------------------------------
def truncate_tool_call(tool_call: Mapping[str, Any], max_length: int, truncation_text: str) -> Mapping[str, Any]:
    """A copy of the call whose string args longer than `max_length` become `value[:20] + truncation_text`."""
    args = tool_call.get("args") or {}
    if not any(isinstance(v, str) and len(v) > max_length for v in args.values()):
        return tool_call
    new_args = {k: (v[:TRUNCATED_ARG_KEEP_CHARS] + truncation_text if isinstance(v, str) and len(v) > max_length else v)
                for k, v in args.items()}
    return {**tool_call, "args": new_args}


def has_long_args(message: BaseMessage, tools: frozenset[str], max_length: int) -> bool:
    if not isinstance(message, AIMessage) or not message.tool_calls:
        return False
    return any(tc.get("name") in tools and any(isinstance(v, str) and len(v) > max_length for v in (tc.get("args") or {}).values())
               for tc in message.tool_calls)


def truncated_copy(message: AIMessage, tools: frozenset[str], max_length: int, truncation_text: str) -> AIMessage:
    """The message as the view shows it: long write/edit args cut, tool_use blocks in content too, marked "truncated"."""
    calls = [truncate_tool_call(tc, max_length, truncation_text) if tc.get("name") in tools else tc for tc in message.tool_calls]
    changed = {c["id"]: c["args"] for c, old in zip(calls, message.tool_calls, strict=True) if c is not old and c.get("id")}
    content: Any = message.content
    if isinstance(content, list):
        # Anthropic-style content repeats the call as a tool_use block; cut it there too, or
        # the view would still carry (and count) the full argument.
        content = [({**b, "input": changed[b["id"]]} if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("id") in changed else b)
                   for b in content]
    return message.model_copy(update={
        "tool_calls": [dict(c) for c in calls],
        "content": content,
        "additional_kwargs": {**message.additional_kwargs, KIND_KEY: "truncated"},
    })


def keep_cutoff(token_prefix: Sequence[int], keep: ContextSize, window_tokens: int | None) -> int:
    """Index of the first kept message (Deep Agents' `_determine_truncate_cutoff_index`).

    `token_prefix[i]` is the tokens of messages[:i] (length n + 1). Tokens/fraction keep the
    longest suffix that fits the budget (the walk back stops at the first message that does not).
    """
    n = len(token_prefix) - 1
    if keep.type == "fraction" and window_tokens is None:
        return max(0, n - FALLBACK_KEEP_MESSAGES)
    if keep.type == "messages":
        return max(0, n - int(keep.value))
    target = int(window_tokens * keep.value) if keep.type == "fraction" and window_tokens else int(keep.value)
    target = max(1, target)
    total = token_prefix[-1]
    return bisect_left(token_prefix, total - target)


def trigger_met(n_messages: int, total_tokens: int, trigger: ContextSize, window_tokens: int | None) -> bool:
    """One metric, `>=` (Deep Agents' `_should_truncate_args`)."""
    if trigger.type == "messages":
        return n_messages >= trigger.value
    if trigger.type == "tokens":
        return total_tokens >= trigger.value
    if window_tokens is None:
        return False
    return total_tokens >= max(1, int(window_tokens * trigger.value))


def grown_prefix(owner: Any, messages: Sequence[BaseMessage]) -> int:
    """The length seen last time when `messages` is the very list seen then, only appended to.

    Replay hands layers the state's own list and never changes it except by appending (it
    forks the list before replacing anything), so this O(1) check replaces an O(n) compare;
    create_agent gives a new list each step and falls back to `unchanged_prefix`.
    """
    src = getattr(owner, "_seen_src", None)
    owner._seen_src = messages
    n = len(owner._seen)
    return n if src is messages and n and len(messages) >= n else 0


def unchanged_prefix(previous: list[BaseMessage], messages: Sequence[BaseMessage]) -> int:
    """How many leading messages are those seen last time (all of them while the state only grows).

    List equality checks identity first at C speed, so an unchanged prefix costs a few ns per
    message; a replaced message stops the comparison (an equal-valued copy counts as unchanged).
    """
    n = len(previous)
    if n == 0 or n > len(messages):
        return 0
    head = messages[:n]
    if not isinstance(head, list):
        head = list(head)
    return n if head == previous else 0


def replaced_in_prefix(previous: list[BaseMessage], messages: Sequence[BaseMessage]) -> list[int] | None:
    """Positions where `messages` holds a same-id replacement of a previously seen message.

    `[]` when the previous messages are all still there; None when the list was rewritten (a
    message removed or a different id in its place), in which case a layer starts over. An
    upstream layer swapping in a copy (a truncated call, a stub) costs one pass of cheap checks
    instead of a full rescan.
    """
    n = len(previous)
    if n > len(messages):
        return None
    head = messages[:n]
    if not isinstance(head, list):
        head = list(head)
    if head == previous:
        return []
    replaced = [i for i, (a, b) in enumerate(zip(previous, head, strict=True)) if a is not b]
    if any(a.id is None or a.id != b.id for a, b in ((previous[i], head[i]) for i in replaced)):
        return None
    return replaced


class FilesystemLayer(RequestLayer):
    """Deep Agents' large-result offload (state) and old file-write argument truncation (view)."""

    layer = "filesystem"

    def __init__(
        self,
        context: LayerContext | None = None,
        *,
        tool_result_token_limit: int | None = 20_000,
        excluded_tools: Sequence[str] = TOOLS_EXCLUDED_FROM_EVICTION,
        truncate_args: TruncateArgsConfig | None = None,
    ) -> None:
        super().__init__(context)
        self.tool_result_token_limit = tool_result_token_limit
        self.excluded_tools = frozenset(excluded_tools)
        self.truncate_args = truncate_args if truncate_args is not None else TruncateArgsConfig()
        self._truncate_tools = frozenset(self.truncate_args.tools)
        # Incremental bookkeeping over the request's messages: while the state only grows, a step
        # costs its new messages, and the cutoff only moves forward, so copies are applied once.
        self._seen: list[BaseMessage] = []
        self._prefix: list[int] = [0]
        self._candidates: list[int] = []  # indices of AI messages with long write/edit args
        self._view: list[BaseMessage] = []  # the messages with the first `_applied` candidates cut
        self._applied = 0
        self._saved_tokens = 0
        self._cut_args = 0
        self._copies: dict[int, tuple[AIMessage, AIMessage]] = {}

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> FilesystemLayer:
        fs = config.filesystem
        return cls(context, tool_result_token_limit=fs.tool_result_token_limit,
                   excluded_tools=fs.excluded_tools, truncate_args=fs.truncate_args)

    # -- offload ------------------------------------------------------------------------------
    def _offload(self, message: ToolMessage, tool_name: str | None) -> ToolMessage:
        if (tool_name or message.name) in self.excluded_tools:
            return message
        text = result_text(message)
        if not should_offload(text, self.tool_result_token_limit):
            return message
        stub, path = offload_to_stub(self.vfs, message, step=self.current_step())
        before, after = self.counter.count_message(message), self.counter.count_message(stub)
        self.emit("offload", tokens_before=before, tokens_after=after, path=path, tool_call_id=message.tool_call_id,
                  tool=tool_name or message.name, chars=len(text),
                  message=f"{tool_name or message.name or 'tool'} result ({len(text):,} chars) offloaded to {path}")
        return stub

    def _after_tool(self, request: ToolCallRequest, result: ToolMessage | Command[Any]) -> ToolMessage | Command[Any]:
        name = request.tool_call.get("name")
        if isinstance(result, ToolMessage):
            return self._offload(result, name)
        if isinstance(result, Command) and isinstance(result.update, dict) and result.update.get("messages"):
            # Deep Agents also offloads results carried inside a Command.
            msgs = [self._offload(m, name) if isinstance(m, ToolMessage) else m for m in result.update["messages"]]
            return replace(result, update={**result.update, "messages": msgs})
        return result

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        return self._after_tool(request, handler(request))

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]) -> Any:
        return self._after_tool(request, await handler(request))

    # -- argument truncation (view only) ---------------------------------------------------------
    def _scan(self, messages: Sequence[BaseMessage]) -> None:
        start = grown_prefix(self, messages) or unchanged_prefix(self._seen, messages)
        if start == 0:
            self._prefix, self._candidates, self._view = [0], [], []
            self._applied = self._saved_tokens = self._cut_args = 0
        count = self.counter.count_message
        limit = self.truncate_args.max_length
        for i in range(start, len(messages)):
            m = messages[i]
            self._prefix.append(self._prefix[-1] + count(m))
            if has_long_args(m, self._truncate_tools, limit):
                self._candidates.append(i)
        self._view.extend(messages[start:])
        if start == 0:
            self._seen = list(messages)
        else:
            self._seen.extend(messages[start:])

    def _copy(self, message: AIMessage) -> AIMessage:
        # One copy per original message object, so the counter's per-message cache keeps hitting.
        hit = self._copies.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        cfg = self.truncate_args
        copy = truncated_copy(message, self._truncate_tools, cfg.max_length, cfg.truncation_text)
        self._copies[id(message)] = (message, copy)
        return copy

    def truncated_view(self, messages: Sequence[BaseMessage], window_tokens: int | None) -> list[BaseMessage] | None:
        """The messages with old long write/edit arguments cut, or None when nothing applies.

        The `truncate_args` event counts the messages and arguments cut in this view and lists the
        ids of the messages newly cut at this step.
        """
        cfg = self.truncate_args
        if not cfg.enabled or not messages:
            return None
        self._scan(messages)
        total = self._prefix[-1]
        if not self._candidates or not trigger_met(len(messages), total, cfg.trigger, window_tokens):
            return None
        cutoff = keep_cutoff(self._prefix, cfg.keep, window_tokens)
        new_ids = []
        pending = self._candidates[self._applied:bisect_left(self._candidates, cutoff)]
        if pending:
            # the list handed out at earlier steps must not change under its holders: replace in a copy
            self._view = list(self._view)
        for i in pending:
            original = cast(AIMessage, self._view[i])
            copy = self._copy(original)
            self._view[i] = copy
            self._applied += 1
            self._saved_tokens += self.counter.count_message(original) - self.counter.count_message(copy)
            self._cut_args += sum(1 for old, new in zip(original.tool_calls, copy.tool_calls, strict=True)
                                  for k, v in (old.get("args") or {}).items() if v is not (new.get("args") or {}).get(k))
            new_ids.append(copy.id)
        if not self._applied:
            return None
        self.emit("truncate_args", tokens_before=total, tokens_after=total - self._saved_tokens, messages=self._applied,
                  arguments=self._cut_args, new_message_ids=new_ids, cutoff=cutoff,
                  message=f"{self._cut_args} argument(s) in {self._applied} old write/edit call(s) truncated in the view")
        # handed out as is: it only grows by appends until the next truncation forks it (no O(n) copy a step)
        return self._view

    def _prepare(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        view = self.truncated_view(request.messages, self.window_tokens(request.model))
        return request if view is None else request.override(messages=cast(list[AnyMessage], view))



__all__ = [
    "LARGE_TOOL_RESULTS_DIR",
    "TOO_LARGE_TOOL_MSG",
    "FilesystemLayer",
    "Preview",
    "content_preview",
    "keep_cutoff",
    "number_lines",
    "offload_path",
    "offload_to_stub",
    "preview_note",
    "result_text",
    "sanitize_tool_call_id",
    "should_offload",
    "stub_text",
    "trigger_met",
    "truncate_tool_call",
    "truncated_copy",
    "grown_prefix",
    "replaced_in_prefix",
    "unchanged_prefix",
]
