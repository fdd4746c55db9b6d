"""Offloading a tool result to the virtual filesystem: Deep Agents' paths, stub text and preview.

Pure rules shared by the filesystem layer (large results, `wrap_tool_call`) and the summarization
layer's context-overflow fallback (the trailing tool batch, `_clip_overflow_tail`). Texts and
constants are Deep Agents' own (deepagents 0.7.32, `middleware/_message_eviction.py`,
`middleware/filesystem.py`, `middleware/summarization.py`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from engine.layers.scan import result_text
from engine.thread.kinds import mark
from engine.thread.message_memo import MessageMemo
from engine.workspace.vfs import VirtualFilesystem

NUM_CHARS_PER_TOKEN = 4
LARGE_TOOL_RESULTS_DIR = "/large_tool_results"
MAX_TOOL_CALL_ID_BYTES = 128
PREVIEW_HEAD_LINES = 5
PREVIEW_TAIL_LINES = 5
PREVIEW_LINE_CHAR_LIMIT = 1000
VISIBLE_TOOL_CALL_ID_CHARS = 32

# Deep Agents' text, as it is (deepagents 0.7.32, middleware/_message_eviction.py).
TOO_LARGE_TOOL_MSG = """Tool result too large, the result of this tool call {tool_call_id} was saved in the filesystem at this path: {file_path}

You can read the result from the filesystem by using the read_file tool, but make sure to only read part of the result at a time.

You can do this by specifying an offset and limit in the read_file tool call. For example, to read the first 100 lines, you can use the read_file tool with offset=0 and limit=100.

{preview_note}

{content_sample}
"""  # noqa: E501
TRUNCATION_MARKER = "... [{omitted_lines} lines truncated] ..."
_NOTE_PLAIN = "Here is a preview of the {subject}"
_NOTE_HEAD_TAIL = "Here is a preview showing the head and tail of the {subject}"
_CAVEAT_OMITTED = (
    f"lines of the form `{TRUNCATION_MARKER.format(omitted_lines='N')}` indicate omitted lines in the middle of the content"
)
_CAVEAT_CLIPPED = (
    f"the output contains lines longer than {PREVIEW_LINE_CHAR_LIMIT} characters; "
    f"this preview shows only their first {PREVIEW_LINE_CHAR_LIMIT} characters"
)
READ_FILE_CLIP_CHARS = 4000


# -- offload of one result ---------------------------------------------------------------------
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


def preview_note(preview: Preview, subject: str = "result") -> str:
    """The sentence introducing a preview; mentions only the losses this preview has."""
    note = (_NOTE_HEAD_TAIL if preview.lines_omitted else _NOTE_PLAIN).format(subject=subject)
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
    are kept after one text block. It is marked kind "stub" with `ctxi_path`. The stub is built
    once per result object (`_STUBS`): every replay of a thread offloads the same results, and the
    same stub object keeps its token count cached.
    """
    stub, path, text = _STUBS.get(tool_message, "stub", _build_stub)
    vfs.write(path, text, step=step, layer="filesystem", source_id=tool_message.tool_call_id)
    return stub, path


def _build_stub(tool_message: BaseMessage) -> tuple[ToolMessage, str, str]:
    assert isinstance(tool_message, ToolMessage)
    text = result_text(tool_message)
    path = offload_path(tool_message.tool_call_id, text)
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
    return stub, path, text


_STUBS = MessageMemo()


# -- large human messages (Deep Agents' FilesystemMiddleware.wrap_model_call) -------------------------
EVICTED_KEY = "lc_evicted_to"  # Deep Agents' tag on the state message whose text is in a file
EVICTED_HUMAN_DIR = "/conversation_history"
TOO_LARGE_HUMAN_MSG = """Message content too large and was saved to the filesystem at: {file_path}

You can read the full content using the read_file tool with pagination (offset and limit parameters).

{preview_note}

{content_sample}
"""


def evicted_human_path(message: BaseMessage) -> str:
    """Where a large human message is written. Deep Agents draws a uuid4; ours is derived from the
    message (its id, else its text), in the same uuid shape, so a replay names the same file."""
    seed = message.id or result_text(message)
    digest = bytearray(hashlib.sha256(f"evicted:{seed}".encode("utf-8", "surrogatepass")).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x40  # version 4 and the RFC 4122 variant, like uuid4()
    digest[8] = (digest[8] & 0x3F) | 0x80
    h = digest.hex()
    return f"{EVICTED_HUMAN_DIR}/{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}.md"


def should_evict_human(message: BaseMessage, token_limit: int | None) -> bool:
    """An untagged human message of more than `4 * limit` characters (`_check_eviction_needed`)."""
    return (token_limit is not None and token_limit > 0 and message.type == "human"
            and not message.additional_kwargs.get(EVICTED_KEY)
            and len(result_text(message)) > NUM_CHARS_PER_TOKEN * token_limit)


def evicted_human_view(message: BaseMessage) -> BaseMessage:
    """What the model sees of a tagged human message: the pointer and a preview (`_build_truncated_human_message`)."""
    path = str(message.additional_kwargs[EVICTED_KEY])
    text = result_text(message)
    preview = content_preview(text)
    replacement = TOO_LARGE_HUMAN_MSG.format(file_path=path, preview_note=preview_note(preview, "content"),
                                             content_sample=preview.text)
    content: Any = replacement
    if not isinstance(message.content, str):
        media = [b for b in message.content if isinstance(b, dict) and b.get("type") != "text"]
        if media:
            content = [{"type": "text", "text": replacement}, *media]
    return mark(message.model_copy(update={"content": content, "additional_kwargs": dict(message.additional_kwargs)}),
                "stub", path=path)


def should_offload(text: str, token_limit: int | None) -> bool:
    """Deep Agents' rule: more than `4 * limit` characters (the limit is named in tokens)."""
    return token_limit is not None and len(text) > NUM_CHARS_PER_TOKEN * token_limit


# -- overflow tail clip (Deep Agents' _clip_overflow_tail) -------------------------------------
def read_file_clip(content: str, path: str) -> str:
    """A read_file result cut to 4,000 characters: the file itself is already at `path`."""
    return (content[:READ_FILE_CLIP_CHARS] + "\n\n[Output was truncated due to context window size limits. "
            f"The full content is at {path}. Use read_file with offset and limit parameters to retrieve specific "
            f"portions. For example, to read the first 100 lines, call read_file with file_path='{path}', offset=0, limit=100.]")


def clip_overflow_tail(preserved: Sequence[BaseMessage], vfs: VirtualFilesystem, *, threshold_tokens: int,
                       counter: Callable[..., int], step: int | None = None) -> tuple[list[BaseMessage], list[ToolMessage]]:
    """Clip the trailing tool batch when it holds at least `threshold_tokens`; the replacements keep ids.

    Deep Agents 0.7.32 (`middleware/_overflow_clip.py::_clip_overflow_tail`): a read_file result is
    cut to its first 4,000 characters plus a pointer to the file (whatever its length: the file is
    already there); every other result is offloaded with the filesystem layer's stub.
    """
    start = len(preserved)
    while start > 0 and isinstance(preserved[start - 1], ToolMessage):
        start -= 1
    tail = [m for m in preserved[start:] if isinstance(m, ToolMessage)]
    if not tail or counter(tail) < threshold_tokens:
        return list(preserved), []
    calls: dict[str, Any] = {str(tc["id"]): tc for m in preserved if isinstance(m, AIMessage)
                             for tc in m.tool_calls if tc.get("id")}
    replacements: list[ToolMessage] = []
    for m in tail:
        call = calls.get(m.tool_call_id, {})
        path = call.get("args", {}).get("file_path") if call.get("name") == "read_file" else None
        if isinstance(path, str) and path:
            replacements.append(mark(m.model_copy(update={"content": read_file_clip(result_text(m), path),
                                                          "additional_kwargs": dict(m.additional_kwargs)}),
                                     "truncated", path=path))  # type: ignore[arg-type]
        else:
            stub, file_path = offload_to_stub(vfs, m, step=step)
            vfs.entry(file_path).layer = "summarization"  # written by the overflow fallback, not by L0
            replacements.append(stub)
    by_id = {r.id: r for r in replacements}
    return [by_id.get(m.id, m) if i >= start else m for i, m in enumerate(preserved)], replacements


__all__ = [
    "LARGE_TOOL_RESULTS_DIR",
    "NUM_CHARS_PER_TOKEN",
    "READ_FILE_CLIP_CHARS",
    "TOO_LARGE_TOOL_MSG",
    "Preview",
    "EVICTED_HUMAN_DIR",
    "EVICTED_KEY",
    "TOO_LARGE_HUMAN_MSG",
    "clip_overflow_tail",
    "evicted_human_path",
    "evicted_human_view",
    "should_evict_human",
    "content_preview",
    "number_lines",
    "offload_path",
    "offload_to_stub",
    "preview_note",
    "read_file_clip",
    "sanitize_tool_call_id",
    "should_offload",
    "stub_text",
    "visible_tool_call_id",
]
