"""Gemini CLI sessions (`~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.json[l]`).

Two shapes, one reader (gemini_records.py replays the records as Gemini CLI does):
- the legacy single JSON `{sessionId, projectHash, startTime, lastUpdated, messages: [...]}`;
- JSONL since google-gemini/gemini-cli PR #23749: a metadata line, message lines (an id is
  re-appended whenever it changes), `{"$set": {...}}` patches and `{"$rewindTo": id}`. A sub-agent's
  session lives in `chats/<parent session id>/<sub-agent session id>.jsonl`.

Messages (`MessageRecord`, packages/core/src/services/chatRecordingTypes.ts):
- `user` → HumanMessage (`content`, what was sent; `displayContent` is what the UI showed);
- `gemini` → one AIMessage per model call: `content` text, `thoughts` (`{subject, description}`
  summaries) as `reasoning` blocks, `toolCalls` as tool calls, then one ToolMessage per call from
  its `result` (the `functionResponse` parts Gemini CLI sent back in the next user turn);
- `info`, `error`, `warning` are the UI's notes, never sent: skipped and counted.
Usage (`tokens`, from the response's `usageMetadata`): `input` is `promptTokenCount`, which includes
`cached` (`cachedContentTokenCount`): split out as cache reads. `thoughts` (`thoughtsTokenCount`)
is not part of `output` (`candidatesTokenCount`): both are output, thoughts its reasoning part.
`tool` (`toolUsePromptTokenCount`) is prompt the server added for its own tools: input.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.tool import tool_call

from engine.base.errors import ThreadNotFoundError
from engine.formats.gemini_records import FORMAT, Record, Replay, is_metadata, replay
from engine.formats.jsonl_lines import head_lines, read_lines
from engine.formats.jsonshape import Where, first_byte, json_type
from engine.formats.source import Source, ThreadRef
from engine.thread.model import (
    LOAD_WARNINGS,
    RecordedCompaction,
    RecordedEdit,
    RecordedUsage,
    Thread,
    title_line,
)

SENT_TYPES = frozenset({"user", "gemini"})
ERROR_STATUSES = frozenset({"error", "cancelled"})


# -- content -----------------------------------------------------------------------------------
def parts(content: Any, where: Where, location: str) -> str | list[Any]:
    """A PartListUnion (a string, a Part or a list of them) as LangChain content."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        where.fail(location, f"expected a string or a list of parts, got {json_type(content)}")
    blocks: list[Any] = []
    for j, part in enumerate(content):
        if isinstance(part, str):
            blocks.append({"type": "text", "text": part})
            continue
        part = where.want_dict(part, f"{location}[{j}]", "a part object (or a string)")
        if "text" in part:
            blocks.append({"type": "text", "text": where.want_text(part["text"], f"{location}[{j}].text")})
        elif isinstance(part.get("inlineData"), dict):
            data = part["inlineData"]
            mime = data.get("mimeType") if isinstance(data.get("mimeType"), str) else "application/octet-stream"
            kind = "image" if mime.startswith("image/") else "file"
            blocks.append({"type": kind, "base64": data.get("data"), "mime_type": mime})
        elif isinstance(part.get("functionResponse"), dict):
            blocks.append({"type": "text", "text": response_text(part["functionResponse"].get("response"))})
        else:
            blocks.append(part)  # fileData, executableCode, ...: kept as they are
    if len(blocks) == 1 and blocks[0].get("type") == "text":
        return str(blocks[0]["text"])
    return blocks


def response_text(response: Any) -> str:
    """A functionResponse's `response`: Gemini CLI's tools answer `{output}` or `{error}`."""
    if isinstance(response, dict) and len(response) == 1 and isinstance(next(iter(response.values())), str):
        return str(next(iter(response.values())))
    return json.dumps(response, ensure_ascii=False, default=str)


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p["text"]) for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _int(record: Record, key: str, where: Where, location: str) -> int | None:
    return where.want_int(record.get(key), f"{location}.{key}")


def usage(tokens: Any, record: Record, where: Where, location: str) -> RecordedUsage | None:
    if tokens is None:
        return None
    tokens = where.want_dict(tokens, location)
    prompt, cached = _int(tokens, "input", where, location), _int(tokens, "cached", where, location)
    output, thoughts = _int(tokens, "output", where, location), _int(tokens, "thoughts", where, location)
    tool = _int(tokens, "tool", where, location) or 0
    recorded = RecordedUsage(
        input_tokens=None if prompt is None else prompt + tool,
        output_tokens=None if output is None and thoughts is None else (output or 0) + (thoughts or 0),
        reasoning_tokens=thoughts,
        timestamp=record.get("timestamp") if isinstance(record.get("timestamp"), str) else None,
        model=record.get("model") if isinstance(record.get("model"), str) else None,
    )
    if prompt is not None and cached and cached <= prompt:
        recorded.input_tokens = prompt - cached + tool
        recorded.cache_read_input_tokens = cached
    return recorded


# -- one message record ------------------------------------------------------------------------
def _thought_blocks(thoughts: Any, where: Where, location: str) -> list[dict[str, Any]]:
    blocks = []
    for j, thought in enumerate(where.want_list(thoughts, location) if thoughts is not None else []):
        thought = where.want_dict(thought, f"{location}[{j}]", "a thought object")
        text = "\n".join(str(thought[k]) for k in ("subject", "description") if isinstance(thought.get(k), str))
        if text:
            blocks.append({"type": "reasoning", "reasoning": text})
    return blocks


def messages_of(record: Record, where: Where, location: str) -> tuple[list[BaseMessage], RecordedUsage | None]:
    """The messages one record was sent as (none for the UI's own notes), and its usage."""
    mid = str(record["id"])
    mtype = record.get("type")
    if not isinstance(mtype, str):
        where.fail(f"{location}.type", f"expected a message type string, got {json_type(mtype)}")
    content = parts(record.get("content"), where, f"{location}.content")
    if mtype == "user":
        return [HumanMessage(content=content, id=mid)], None
    blocks = _thought_blocks(record.get("thoughts"), where, f"{location}.thoughts")
    text_blocks = [{"type": "text", "text": content}] if isinstance(content, str) and content else (
        content if isinstance(content, list) else [])
    body: Any = [*blocks, *text_blocks] if blocks else content
    calls, results = [], []
    raw_calls = record.get("toolCalls")
    for j, tc in enumerate(where.want_list(raw_calls, f"{location}.toolCalls") if raw_calls is not None else []):
        here = f"{location}.toolCalls[{j}]"
        tc = where.want_dict(tc, here, "a tool call object")
        call_id = where.want_text(tc.get("id"), f"{here}.id")
        name = where.want_text(tc.get("name"), f"{here}.name")
        args = tc.get("args")
        calls.append(tool_call(name=name, args=args if isinstance(args, dict) else {"args": args}, id=call_id))
        if tc.get("result") is not None:
            status = "error" if isinstance(tc.get("status"), str) and tc["status"] in ERROR_STATUSES else "success"
            results.append(ToolMessage(content=parts(tc["result"], where, f"{here}.result"), tool_call_id=call_id,
                                       name=name, status=status, id=f"{mid}:{call_id}"))
    model = record.get("model") if isinstance(record.get("model"), str) else None
    ai = AIMessage(content=body, tool_calls=calls, id=mid, response_metadata={"model": model} if model else {})
    return [ai, *results], usage(record.get("tokens"), record, where, f"{location}.tokens")


# -- the thread ----------------------------------------------------------------------------------
def _rows(source: Source, where: Where) -> tuple[list[tuple[int, Record]], bool, int | None]:
    """The records, whether the file is one JSON document (legacy), and an unfinished last line."""
    if first_byte(source) == b"{":
        doc = source.try_json()
        if isinstance(doc, dict) and b"\n" in source.data.strip():
            return [(1, doc)], True, None
    lines = read_lines(source, FORMAT)
    return lines.rows, False, lines.unfinished


def build(source: Source) -> Thread:
    where = Where(source.label, FORMAT)
    rows, document, unfinished = _rows(source, where)
    return build_rows(rows, source.label, document=document, unfinished=unfinished)


def build_rows(rows: list[tuple[int, Record]], label: str, *, document: bool = False,
               unfinished: int | None = None) -> Thread:
    """The thread of parsed records (a followed JSONL session keeps its parsed lines and replays them again)."""
    where = Where(label, FORMAT)
    r = replay(rows, where, document=document)
    messages: list[BaseMessage] = []
    usage_of: dict[str, RecordedUsage] = {}
    built: dict[str, list[BaseMessage]] = {}
    starts: list[tuple[int, int]] = []  # (first_seq, message index) per record, for placing edits
    skipped = dict(r.skipped)
    for mid, record in r.records.items():
        location = r.locations[mid]
        kind = record.get("type")
        if not isinstance(kind, str):
            where.fail(f"{location}.type", f"expected a message type string, got {json_type(kind)}")
        if kind not in SENT_TYPES:
            skipped[f"message:{kind}"] = skipped.get(f"message:{kind}", 0) + 1
            built[mid] = []
            continue
        group, recorded = messages_of(record, where, location)
        built[mid] = group
        starts.append((r.first_seq[mid], len(messages)))
        messages.extend(group)
        if recorded is not None:
            usage_of[mid] = recorded
    compactions = [_compaction(r, rewrite, built, usage_of, where) for rewrite in r.rewrites]
    edits = [_edit(m, starts, len(messages), where) for m in r.maskings]
    meta = r.metadata
    tid = meta.get("sessionId")
    extra: dict[str, Any] = {"skipped_records": dict(sorted(skipped.items()))}
    for key in ("projectHash", "startTime", "lastUpdated", "kind", "directories"):
        if meta.get(key) is not None:
            extra[key] = meta[key]
    if r.rewound:
        extra["rewound"] = r.rewound
    if r.warnings:
        extra[LOAD_WARNINGS] = list(r.warnings)
    if unfinished is not None:
        extra["unfinished_last_line"] = unfinished
    extra["session_file"] = "legacy json" if document else "jsonl"
    model = next((m.response_metadata["model"] for m in messages
                  if isinstance(m, AIMessage) and m.response_metadata.get("model")), None)
    return Thread(
        thread_id=tid if isinstance(tid, str) and tid else Path(label).stem,
        messages=messages,
        source_format=FORMAT,
        model=model,
        usage=usage_of,
        compactions=compactions,
        edits=edits,
        title=_title(meta, messages),
        extra=extra,
    )


def _compaction(r: Replay, rewrite: Any, built: dict[str, list[BaseMessage]], usage_of: dict[str, RecordedUsage],
                where: Where) -> RecordedCompaction:
    """A history rewrite: from here on Gemini CLI sent the rewritten list (its compressed history)."""
    before = list(r.records)[:rewrite.at]
    index = sum(len(built.get(mid, [])) for mid in before)
    replacement: list[BaseMessage] = []
    summary, summary_id = "", None
    for k, entry in enumerate(rewrite.entries):
        mid = entry["id"]
        if mid in built:
            replacement.extend(built[mid])
            continue
        record = r.replacement_only.get(mid, entry)
        if not (isinstance(record.get("type"), str) and record["type"] in SENT_TYPES):
            continue
        group, _ = messages_of(record, where, f"line {rewrite.line}: $.$set.messages[{k}]")
        replacement.extend(group)
        if not summary and isinstance(group[0], HumanMessage):
            summary, summary_id = text_of(group[0].content), group[0].id
    last = [usage_of[mid] for mid in before if mid in usage_of]
    return RecordedCompaction(index=index, pre_tokens=last[-1].context_tokens if last else None, summary=summary,
                              message_id=summary_id, replacement=replacement, kind="summary",
                              source="gemini_cli:set_messages")


def _edit(masking: Any, starts: list[tuple[int, int]], total: int, where: Where) -> RecordedEdit:
    """A tool result replaced later (tool output masking): its new text from the next message on."""
    # `starts` is in record order, so its first_seq values rise: the first record inserted after the
    # masking is found by bisection (a session of many maskings stays linear)
    k = bisect_right(starts, masking.seq, key=lambda start: start[0])
    index = starts[k][1] if k < len(starts) else total
    placeholder = parts(masking.result, where, "$")
    return RecordedEdit(index=index, kind="clear_tool_results", tool_call_ids=[masking.call_id],
                        placeholder=placeholder if isinstance(placeholder, str) else json.dumps(placeholder),
                        message_id=masking.message_id, source="gemini_cli:tool_output_masking")


def _title(meta: dict[str, Any], messages: list[BaseMessage]) -> str | None:
    """The name Gemini CLI's session browser gives a session (`getAllSessionFiles` and
    `extractFirstUserMessage`, packages/cli/src/utils/sessionUtils.ts): its saved summary, else the
    first user message that is not a slash command or a `?` help query, else the first user message."""
    if isinstance(meta.get("summary"), str) and meta["summary"].strip():
        return title_line(meta["summary"])
    texts = [text_of(m.content) for m in messages if isinstance(m, HumanMessage)]
    chosen = next((t for t in texts if not t.startswith(("/", "?")) and t.strip()), None)
    if chosen is None:  # Gemini CLI falls back to the first user message, even a slash command
        chosen = next((t for t in texts if t.strip()), None)
    return title_line(chosen.strip()) if chosen is not None else None


class _GeminiCliImporter:
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        if source.is_sqlite() or first_byte(source) != b"{":
            return False
        head = head_lines(source, 1)
        if head and is_metadata(head[0]) and "id" not in head[0]:
            return True
        doc = source.try_json()
        return isinstance(doc, dict) and is_metadata(doc) and isinstance(doc.get("messages"), list)

    def load(self, source: Source, thread_id: str | None) -> Thread:
        thread = build(source)
        if thread_id is not None and thread_id != thread.thread_id:
            raise ThreadNotFoundError(f"thread {thread_id!r} not found (this file holds {thread.thread_id!r})",
                                      path=source.label, format=FORMAT)
        return thread

    def list_threads(self, source: Source) -> list[ThreadRef]:
        thread = self.load(source, None)
        return [ThreadRef(thread.thread_id, thread.title, len(thread.messages))]


IMPORTER = _GeminiCliImporter()
