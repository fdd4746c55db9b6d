"""What the JSON chat importers share: cheap shape probes, errors with a JSON path, default ids.

Sniffs look at the first non-blank byte before parsing anything, then at the first few items
of the parsed document (the parse is cached on the `Source`), so detection stays cheap.
Loaders validate every item and name the exact place of a wrong value, e.g.
`$.messages[3].tool_calls[0].function.arguments`.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    FunctionMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.tool import tool_call

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats.source import Source, ThreadRef
from engine.thread.model import RecordedUsage, Thread, stable_id

# How many leading items a sniff inspects: enough to see past a leading system message,
# few enough to stay cheap on a 100k-item list.
SNIFF_ITEMS = 50

# Content blocks only the Anthropic Messages API uses (OpenAI uses image_url, input_text, ...).
ANTHROPIC_BLOCK_TYPES = frozenset(
    {
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "search_result",
        "document",
        "container_upload",
        "mcp_tool_use",
        "mcp_tool_result",
    }
)


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


@dataclass(frozen=True)
class Where:
    """The file and format an importer reads, to raise errors that name both plus a JSON path."""

    label: str
    format: str

    def fail(self, location: str, message: str) -> NoReturn:
        raise ThreadLoadError(message, path=self.label, format=self.format, location=location)

    def want_dict(self, value: Any, location: str, what: str = "an object") -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(location, f"expected {what}, got {json_type(value)}")
        return value

    def want_list(self, value: Any, location: str, what: str = "an array") -> list[Any]:
        if not isinstance(value, list):
            self.fail(location, f"expected {what}, got {json_type(value)}")
        return value

    def want_str(self, value: Any, location: str, *, optional: bool = False) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str):
            self.fail(location, f"expected a string, got {json_type(value)}")
        return value

    def want_text(self, value: Any, location: str) -> str:
        """A required string."""
        if not isinstance(value, str):
            self.fail(location, f"expected a string, got {json_type(value)}")
        return value

    def want_int(self, value: Any, location: str) -> int | None:
        """An optional token count: null or a non-negative integer."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(location, f"expected an integer, got {json_type(value)}")
        return value

    def want_content(self, value: Any, location: str) -> str | list[Any]:
        """Message content: a string, a list of parts (objects or strings), or null (empty)."""
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if not isinstance(value, list):
            self.fail(location, f"expected a string, a list of content parts or null, got {json_type(value)}")
        for j, part in enumerate(value):
            if isinstance(part, str):
                continue
            block = self.want_dict(part, f"{location}[{j}]", "a content part (object or string)")
            if not isinstance(block.get("type"), str):
                self.fail(f"{location}[{j}].type", f"content part needs a string 'type', got {json_type(block.get('type'))}")
            if block["type"] in ("text", "input_text", "output_text") and not isinstance(block.get("text"), str):
                self.fail(f"{location}[{j}].text", f"expected a string, got {json_type(block.get('text'))}")
            for key in ("id", "name"):  # ids pair blocks with tool calls and results: strings or nothing
                if block.get(key) is not None and not isinstance(block.get(key), str):
                    self.fail(f"{location}[{j}].{key}", f"expected a string or null, got {json_type(block.get(key))}")
        return value

    def want_metadata(self, fields: dict[str, Any], location: str) -> None:
        """A LangChain message's metadata dicts, and the names LangChain looks up by value
        (`response_metadata.model_provider` picks a translator: a list there is unhashable)."""
        for key in ("additional_kwargs", "response_metadata"):
            if fields.get(key) is not None:
                self.want_dict(fields[key], f"{location}.{key}")
        meta = fields.get("response_metadata") or {}
        for key in ("model_provider", "model_name", "model", "finish_reason", "stop_reason"):
            if meta.get(key) is not None and not isinstance(meta[key], str):
                self.fail(f"{location}.response_metadata.{key}", f"expected a string or null, got {json_type(meta[key])}")

    def unparseable(self, exc: ThreadLoadError) -> ThreadLoadError:
        """The source's own parse error, re-stamped with this format (used when a format is forced)."""
        return ThreadLoadError(exc.message, path=exc.path or self.label, format=self.format, location=exc.location)


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Tool-call arguments as a dict, or (None, error) when the JSON string does not give one."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    try:
        value = json.loads(raw, strict=False)  # models emit raw control characters inside strings
    except (json.JSONDecodeError, RecursionError) as exc:
        return None, f"arguments are not valid JSON ({getattr(exc, 'msg', 'nested too deeply')})"
    if not isinstance(value, dict):
        return None, f"arguments are JSON {json_type(value)}, not an object"
    return value, None


# -- cheap probes --------------------------------------------------------------------------


def first_byte(source: Source) -> bytes:
    """The first non-blank byte of the file (after a UTF-8 BOM), or b'' for an empty file."""
    head = source.data[:4096]
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    head = head.lstrip()
    return head[:1]


def parsed_if(source: Source, openers: bytes) -> Any:
    """The parsed JSON document when the file starts with one of `openers` (b'[', b'{'), else None."""
    if source.is_sqlite() or first_byte(source) not in {bytes([b]) for b in openers}:
        return None
    return source.try_json()


def leading(items: list[Any], n: int = SNIFF_ITEMS) -> list[dict[str, Any]]:
    """The dict items among the first `n` entries of a list."""
    return [x for x in items[:n] if isinstance(x, dict)]


def is_role_list(value: Any) -> bool:
    """A non-empty list whose first item is a `{role: str, ...}` object."""
    return (
        isinstance(value, list)
        and len(value) > 0
        and isinstance(value[0], dict)
        and isinstance(value[0].get("role"), str)
    )


def anthropic_evidence(doc: Any) -> bool:
    """Whether a message list (or a request holding one) uses shapes only Anthropic's API has."""
    messages: Any = doc
    if isinstance(doc, dict):
        if "system" in doc and isinstance(doc["system"], (str, list)):
            return True
        tools = doc.get("tools")
        if isinstance(tools, list) and any(isinstance(t, dict) and "input_schema" in t for t in tools[:SNIFF_ITEMS]):
            return True
        messages = doc.get("messages")
    if not isinstance(messages, list):
        return False
    for message in leading(messages, 200):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content[:SNIFF_ITEMS]:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype in ANTHROPIC_BLOCK_TYPES:
                return True
            if btype == "image" and isinstance(block.get("source"), dict):
                return True
    return False


def _http_body(value: Any) -> Any:
    """An HTTP capture's JSON `body` (claude-trace, Batch API output), else the value itself.

    A streamed response captured only as raw text (`body_raw`) has no JSON to read: None.
    """
    if isinstance(value, dict) and isinstance(value.get("body"), dict):
        return value["body"]
    if isinstance(value, dict) and "body_raw" in value and "body" not in value:
        return None
    return value


def unwrap_exchange(doc: Any) -> Any:
    """A logged API call as the request it made, with its `response` inside.

    LLM proxies and loggers save one call as `{request: {...}, response: {...}}`, HTTP tracers such
    as claude-trace as `{request: {url, headers, body}, response: {status_code, body}}`; batch files
    hold one request a line as `{custom_id, body: {...}}` (OpenAI) or `{custom_id, params: {...}}`
    (Anthropic), whose custom_id names it. The importers read a request that carries its `response`
    key, so all these shapes load the same.
    """
    if not isinstance(doc, dict):
        return doc
    for key in ("request", "body", "params"):
        inner = _http_body(doc.get(key)) if key == "request" else doc.get(key)
        if isinstance(inner, dict) and ("messages" in inner or "input" in inner):
            merged = dict(inner)
            response = _http_body(doc.get("response")) if key == "request" else doc.get("response")
            if response is not None:
                merged["response"] = response
            if isinstance(doc.get("custom_id"), str) and doc["custom_id"] and "id" not in merged:
                merged["id"] = doc["custom_id"]
            return merged
    return doc


# -- LangChain message fix-ups -----------------------------------------------------------------


def upgrade_function_calls(messages: list[BaseMessage]) -> list[BaseMessage]:
    """LangChain 0.0/0.1 function calling as tool calls, so calls and results pair like newer ones.

    An AI message with `additional_kwargs["function_call"]` (and no tool calls) gets that call as a tool
    call; the FunctionMessage answering it becomes a ToolMessage with the same call id.
    """
    out: list[BaseMessage] = []
    open_call: str | None = None
    for position, m in enumerate(messages):
        legacy = m.additional_kwargs.get("function_call") if isinstance(m, AIMessage) else None
        if isinstance(m, AIMessage) and isinstance(legacy, dict) and not m.tool_calls and isinstance(legacy.get("name"), str):
            args, _error = parse_arguments(legacy.get("arguments"))
            if args is not None:
                open_call = stable_id_for_call(m, position, legacy)
                m.tool_calls = [tool_call(name=legacy["name"], args=args, id=open_call)]
        elif isinstance(m, FunctionMessage):
            call_id = open_call or stable_id_for_call(m, position, m.name)
            open_call = None
            m = ToolMessage(content=m.content, tool_call_id=call_id, name=m.name, id=m.id, additional_kwargs=m.additional_kwargs)
        out.append(m)
    return out


def stable_id_for_call(message: BaseMessage, position: int, content: Any) -> str:
    return stable_id("call", position, (message.id, content))


def apply_removals(messages: list[BaseMessage]) -> tuple[list[BaseMessage], list[str]]:
    """Apply RemoveMessage entries as LangGraph's `add_messages` does: each drops the earlier message
    with its id (`__remove_all__` drops everything before it). Returns the kept messages and the ids removed."""
    kept: list[BaseMessage] = []
    removed: list[str] = []
    for m in messages:
        if not isinstance(m, RemoveMessage):
            kept.append(m)
            continue
        target = str(m.id)
        if target == "__remove_all__":
            removed.extend(str(k.id) for k in kept)
            kept = []
            continue
        before = len(kept)
        kept = [k for k in kept if k.id != target]
        if len(kept) < before:
            removed.append(target)
    return kept, removed


# -- thread assembly -------------------------------------------------------------------------


def default_thread_id(source: Source) -> str:
    """The file stem, or a hash of the bytes for an upload without a name."""
    if source.label and not source.label.startswith("<"):
        stem = Path(source.label).stem
        if stem:
            return stem
    return "thread-" + hashlib.sha1(source.data).hexdigest()[:12]


def unique_ids(messages: list[BaseMessage]) -> None:
    """Give a repeated message id a positional suffix: usage and views key on message ids."""
    seen: set[str] = set()
    for i, m in enumerate(messages):
        if m.id is None:
            continue
        if m.id in seen:
            m.id = f"{m.id}~{i}"
        seen.add(m.id)


def leading_system_prompt(messages: list[BaseMessage]) -> str | None:
    """The text of the first message when it is a system message."""
    if messages and isinstance(messages[0], SystemMessage):
        from engine.tokens.content import message_text

        return message_text(messages[0])
    return None


def model_from_messages(messages: Iterable[BaseMessage]) -> str | None:
    """The model named by the last AI message's response metadata (LangChain's keys)."""
    model = None
    for m in messages:
        if isinstance(m, AIMessage):
            meta = m.response_metadata or {}
            name = meta.get("model_name") or meta.get("model")
            if isinstance(name, str) and name:
                model = name
    return model


def usage_from_metadata(message: AIMessage) -> RecordedUsage | None:
    """LangChain's usage_metadata as RecordedUsage; its input_tokens already include cache reads/writes."""
    meta = message.usage_metadata
    if not meta:
        return None
    total = meta.get("input_tokens")
    details = meta.get("input_token_details") or {}
    read = details.get("cache_read")
    created = details.get("cache_creation")
    usage = RecordedUsage(input_tokens=total, output_tokens=meta.get("output_tokens"))
    # Split out the cache parts only when they fit inside the total, so context_tokens stays the total.
    if isinstance(total, int) and (read or created) and (read or 0) + (created or 0) <= total:
        usage.input_tokens = total - (read or 0) - (created or 0)
        usage.cache_read_input_tokens = read
        usage.cache_creation_input_tokens = created
    return usage


def assemble(
    messages: list[BaseMessage],
    usage: Iterable[tuple[BaseMessage, RecordedUsage]] = (),
    **fields: Any,
) -> Thread:
    """A Thread with unique message ids and usage keyed by the (final) id of its AI message."""
    unique_ids(messages)
    thread = Thread(messages=messages, **fields)
    for message, recorded in usage:
        if message.id is not None:
            thread.usage[message.id] = recorded
    if thread.system_prompt is None:
        thread.system_prompt = leading_system_prompt(messages)
    return thread


def usage_from_openai(usage: dict[str, Any], where: Where, location: str) -> RecordedUsage | None:
    """OpenAI usage (Chat Completions or Responses) as RecordedUsage, in Anthropic's semantics.

    `prompt_tokens` / `input_tokens` already include the cached part
    (`prompt_tokens_details.cached_tokens` / `input_tokens_details.cached_tokens`), so that part is
    split out as `cache_read_input_tokens` and `input_tokens` keeps the rest: `context_tokens` stays
    the whole prompt. `reasoning_tokens` comes from the output details when recorded.
    """
    prompt_key = "prompt_tokens" if "prompt_tokens" in usage else "input_tokens"
    output_key = "completion_tokens" if "completion_tokens" in usage else "output_tokens"
    prompt = where.want_int(usage.get(prompt_key), f"{location}.{prompt_key}")
    output = where.want_int(usage.get(output_key), f"{location}.{output_key}")
    if prompt is None and output is None:
        return None
    recorded = RecordedUsage(input_tokens=prompt, output_tokens=output)
    in_key = "prompt_tokens_details" if prompt_key == "prompt_tokens" else "input_tokens_details"
    details = usage.get(in_key)
    if isinstance(details, dict):
        cached = where.want_int(details.get("cached_tokens"), f"{location}.{in_key}.cached_tokens")
        if cached is not None and prompt is not None and cached <= prompt:
            recorded.input_tokens = prompt - cached
            recorded.cache_read_input_tokens = cached
    out_key = "completion_tokens_details" if output_key == "completion_tokens" else "output_tokens_details"
    out_details = usage.get(out_key)
    if isinstance(out_details, dict):
        recorded.reasoning_tokens = where.want_int(out_details.get("reasoning_tokens"),
                                                   f"{location}.{out_key}.reasoning_tokens")
    return recorded


def usage_pairs(messages: Iterable[BaseMessage]) -> list[tuple[BaseMessage, RecordedUsage]]:
    """RecordedUsage of every AI message that carries LangChain usage_metadata."""
    pairs: list[tuple[BaseMessage, RecordedUsage]] = []
    for m in messages:
        if isinstance(m, AIMessage):
            recorded = usage_from_metadata(m)
            if recorded is not None:
                pairs.append((m, recorded))
    return pairs


def check_thread_id(thread: Thread, requested: str | None, where: Where) -> Thread:
    if requested is not None and requested != thread.thread_id:
        raise ThreadNotFoundError(
            f"thread {requested!r} not found (this file holds one thread, {thread.thread_id!r})",
            path=where.label,
            format=where.format,
        )
    return thread


class SingleThreadImporter:
    """Base for formats that hold one thread per file: subclasses define `sniff` and `build`."""

    name: str = ""

    def sniff(self, source: Source) -> bool:
        raise NotImplementedError

    def build(self, doc: Any, source: Source, where: Where) -> Thread:
        raise NotImplementedError

    def load(self, source: Source, thread_id: str | None) -> Thread:
        where = Where(source.label, self.name)
        try:
            doc = source.json()
        except ThreadLoadError as exc:
            raise where.unparseable(exc) from None
        thread = self.build(doc, source, where)
        thread.source_format = self.name
        return check_thread_id(thread, thread_id, where)

    def list_threads(self, source: Source) -> list[ThreadRef]:
        thread = self.load(source, None)
        return [ThreadRef(thread.thread_id, thread.title, len(thread.messages))]


def guarded_sniff(probe: Callable[[Source], bool], source: Source) -> bool:
    """Run a sniff so that odd shapes mean 'not mine' instead of an exception."""
    try:
        return bool(probe(source))
    except ThreadLoadError:
        return False
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError):
        return False


class JsonlRecordsImporter(SingleThreadImporter):
    """One record per JSON file, or one per line of a JSON Lines log: each line is a thread.

    Subclasses define `is_jsonl(source)` and `record_id(record)`; `build` reads one record. A thread
    is named by its record's own id when that is unique in the file, else `<file stem>-line<N>`.
    Errors inside a line name it: `line 3: $.messages[0].role`.
    """

    def is_jsonl(self, source: Source) -> bool:
        raise NotImplementedError

    def record_id(self, record: Any) -> str | None:
        raise NotImplementedError

    def _lines(self, source: Source, where: Where) -> list[tuple[str, int, Any]]:
        try:
            rows = source.jsonl()
        except ThreadLoadError as exc:
            raise where.unparseable(exc) from None
        stem = default_thread_id(source)
        own = [self.record_id(record) for _, record in rows]
        seen = Counter(own)
        return [
            (rid if rid is not None and seen[rid] == 1 else f"{stem}-line{line}", line, record)
            for (line, record), rid in zip(rows, own, strict=True)
        ]

    def _build_line(self, source: Source, where: Where, tid: str, line: int, record: Any) -> Thread:
        try:
            thread = self.build(record, source, where)
        except ThreadLoadError as exc:
            raise ThreadLoadError(
                exc.message, path=exc.path or where.label, format=self.name, location=f"line {line}: {exc.location or '$'}"
            ) from None
        thread.thread_id = tid
        thread.source_format = self.name
        return thread

    def list_threads(self, source: Source) -> list[ThreadRef]:
        if not self.is_jsonl(source):
            return super().list_threads(source)
        where = Where(source.label, self.name)
        return [
            ThreadRef(tid, None, len(self._build_line(source, where, tid, line, record).messages))
            for tid, line, record in self._lines(source, where)
        ]

    def load(self, source: Source, thread_id: str | None) -> Thread:
        if not self.is_jsonl(source):
            return super().load(source, thread_id)
        where = Where(source.label, self.name)
        lines = self._lines(source, where)
        if not lines:
            where.fail("line 1", "the file holds no records")
        ids = [tid for tid, _, _ in lines]
        if thread_id is not None and thread_id not in ids:
            shown = ", ".join(ids[:10]) + (f" … ({len(ids)} threads)" if len(ids) > 10 else "")
            raise ThreadNotFoundError(f"thread {thread_id!r} not found; threads: {shown}", path=source.label, format=self.name)
        tid, line, record = lines[ids.index(thread_id) if thread_id is not None else 0]
        return self._build_line(source, where, tid, line, record)


def jsonl_head(source: Source, n: int = 5) -> list[dict[str, Any]]:
    """The first records of a JSON Lines file of objects (not one JSON document), else []."""
    if source.is_sqlite() or first_byte(source) != b"{" or source.try_json() is not None:
        return []
    # A bad line among the first few still lets the first one decide the format, so loading then
    # names the bad line instead of calling the whole file unrecognised.
    rows = source.first_jsonl(n) or source.first_jsonl(1)
    return rows if rows and all(isinstance(r, dict) for r in rows) else []
