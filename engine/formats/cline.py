"""Cline task folders (`<globalStorage>/tasks/<taskId>/`) as threads.

Files (cline/cline `src/core/storage/disk.ts`, `GlobalFileNames`):
- `api_conversation_history.json`: what was sent to the model, Anthropic MessageParams with Cline's
  own keys (`ClineStorageMessage`, `src/shared/messages/content.ts`: `id`, `modelInfo {modelId,
  providerId, mode}`, `metrics`, block `call_id` / `reasoning_details`). Cline's system prompt is
  sent with every request but not stored: the thread has none (it shows as unrecorded prompt).
- `ui_messages.json` (ClineMessage[], `src/shared/ExtensionMessage.ts`; `claude_messages.json` in old
  versions): `say: "api_req_started"` messages carry `{tokensIn, tokensOut, cacheWrites, cacheReads,
  cost}` per request; every message carries `conversationHistoryIndex` and
  `conversationHistoryDeletedRange` (`MessageStateHandler.addToClineMessages`).
- `task_metadata.json` (`TaskMetadata`: `files_in_context`, `model_usage [{ts, model_id,
  model_provider_id, mode}]`) and `context_history.json` (ContextManager's text updates).

Loading: a path to the folder, to any of these files (the others are read from beside it), or an
upload of them together (the Threads page lays them out in one folder).

Messages: `tool_use` / `tool_result` blocks as in the Anthropic importer; XML tool calls in the
reply text (older Cline) become tool calls and their `[tool ...] Result:` blocks ToolMessages
(`cline_xml`). Usage: request k's `api_req_started` is said before its user message is added, so its
`conversationHistoryIndex` points at the message before that user message and the reply it produced
is two further (`Task.recursivelyMakeClineRequests`); without that index, requests pair with replies in
order. `tokensIn` is the input without cache reads and writes (Cline's Anthropic, Bedrock, Vertex,
OpenRouter handlers report it so, and `ContextManager` adds the four counts up), except the OpenAI
compatible handler (`src/core/api/providers/openai.ts`: `inputTokens: prompt_tokens`, cached
included), whose cache reads are split out. Compactions: `cline_context`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.tool import tool_call

from engine.base.errors import FileTooLargeError, ThreadLoadError
from engine.base.files import RefusedFile, read_regular
from engine.formats.anthropic import MessageReader
from engine.formats.cline_context import (
    Request,
    compactions,
    context_updates,
    parse_request_info,
    request_ranges,
)
from engine.formats.cline_ui import api_from_ui, has_requests
from engine.formats.cline_xml import parse_tool_calls, split_results
from engine.formats.jsonshape import Where, check_thread_id, unique_ids
from engine.formats.source import DEFAULT_MAX_BYTES, Source, ThreadRef
from engine.thread.model import RecordedUsage, Thread, stable_id, title_line
from engine.tokens.content import message_text

FORMAT = "cline"
API_FILE = "api_conversation_history.json"
UI_FILES = ("ui_messages.json", "claude_messages.json")
META_FILE = "task_metadata.json"
CONTEXT_FILE = "context_history.json"
TASK_FILES = frozenset({API_FILE, *UI_FILES, META_FILE, CONTEXT_FILE})
# Providers whose tokensIn already includes the cache reads (see the module docstring).
INPUT_INCLUDES_CACHED = frozenset({"openai"})


def folder_entry(folder: Path) -> Path | None:
    """The file to open for a task folder, or None when the folder is not one: its API history, else
    (an export without it) its ui_messages.json."""
    for name in (API_FILE, *UI_FILES):
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def _is_ui_messages(doc: Any) -> bool:
    return (isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict) and isinstance(doc[0].get("ts"), int)
            and doc[0].get("type") in ("say", "ask"))


def _is_api_history(doc: Any) -> bool:
    return isinstance(doc, list) and (not doc or (isinstance(doc[0], dict) and doc[0].get("role") in ("user", "assistant")))


def _name(source: Source) -> str:
    return Path(source.label).name.lower()


# -- one message of api_conversation_history --------------------------------------------------------
class _Converter:
    """api_conversation_history messages to thread messages; `spans[i]` = thread slice of message i."""

    def __init__(self, where: Where) -> None:
        self.reader = MessageReader(where, prefix=FORMAT)
        self.spans: list[tuple[int, int]] = []
        self.pending: list[tuple[str, str]] = []  # XML calls of the last reply awaiting results: (id, name)

    @property
    def messages(self) -> list[BaseMessage]:
        return self.reader.messages

    def add(self, raw: Any, i: int) -> None:
        where = self.reader.where
        raw = where.want_dict(raw, f"$[{i}]", "a message object")
        start = len(self.messages)
        content = raw.get("content")
        if raw.get("role") == "user" and isinstance(content, list) and self.pending:
            results, rest = split_results(content)
            for k, (name, blocks) in enumerate(results):
                call_id = self._pair(name)
                self.messages.append(ToolMessage(content=blocks, tool_call_id=call_id, name=name,
                                                 id=stable_id(FORMAT, f"{i}.result{k}", blocks)))
            self.pending = []
            if rest or not results:
                self.reader.read({**raw, "content": rest}, f"$[{i}]", i)
        else:
            self.reader.read(raw, f"$[{i}]", i)
            self.pending = []
            last = self.messages[-1] if len(self.messages) > start else None
            if isinstance(last, AIMessage) and not last.tool_calls:
                self._xml_calls(last, i)
        self.spans.append((start, len(self.messages)))

    def _pair(self, name: str) -> str:
        for k, (_call_id, call_name) in enumerate(self.pending):
            if call_name == name:
                return self.pending.pop(k)[0]
        return self.pending.pop(0)[0] if self.pending else f"cline-unpaired-{name}"

    def _xml_calls(self, message: AIMessage, i: int) -> None:
        content = message.content
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        calls: list[Any] = []
        kept: list[Any] = []
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                text, found = parse_tool_calls(block["text"])
                for name, params in found:
                    call_id = f"cline-xml-{i}-{len(calls)}"
                    calls.append(tool_call(name=name, args=dict(params), id=call_id))
                    self.pending.append((call_id, name))
                if text or not found:
                    kept.append({**block, "text": text} if found else block)
            else:
                kept.append(block)
        if calls:
            message.tool_calls = calls
            message.content = kept[0]["text"] if len(kept) == 1 and isinstance(content, str) else kept


# -- the task folder ----------------------------------------------------------------------------------
def _sibling(folder: Path | None, names: tuple[str, ...], source: Source) -> tuple[Any, str | None]:
    """A sibling file's JSON (or None when absent); a broken one is a clear error naming it."""
    if folder is None:
        return None, None
    for name in names:
        path = folder / name
        if path.is_file():
            try:  # a regular file read up to the limit (engine.base.files), even if it grows or is swapped
                return json.loads(read_regular(path, DEFAULT_MAX_BYTES).decode("utf-8-sig")), str(path)
            except RefusedFile as exc:
                if exc.limit_bytes is not None:
                    raise FileTooLargeError(path=str(path), size_bytes=exc.size_bytes,
                                            limit_bytes=DEFAULT_MAX_BYTES) from None
                raise ThreadLoadError(exc.reason, path=str(path), format=FORMAT) from None
            except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
                raise ThreadLoadError(f"cannot read this Cline task file ({type(exc).__name__})", path=str(path),
                                      format=FORMAT) from None
    return None, None


def _files(source: Source) -> tuple[Any, tuple[Any, str | None], Any, Any, Path | None, bool]:
    folder = source.path.parent if source.path is not None else None
    name = _name(source)
    where = Where(source.label, FORMAT)
    try:
        doc = source.json()
    except ThreadLoadError as exc:
        raise where.unparseable(exc) from None
    api = ui = meta = context = None
    if name == API_FILE or (name not in TASK_FILES and _is_api_history(doc)):
        api = doc
    elif name in UI_FILES or _is_ui_messages(doc):
        ui = doc
    elif name == META_FILE:
        meta = doc
    elif name == CONTEXT_FILE:
        context = doc
    ui_label = source.label if ui is not None else None
    if ui is None:
        ui, ui_label = _sibling(folder, UI_FILES, source)
    rebuilt = False
    if api is None:
        api, found = _sibling(folder, (API_FILE,), source)
        if found is None:
            # an export with ui_messages.json alone: its requests and answers stand for the API history
            if not has_requests(ui):
                raise ThreadLoadError(f"a Cline task needs its {API_FILE}, or a ui_messages.json whose "
                                      "api_req_started rows carry their request text (neither found)",
                                      path=source.label, format=FORMAT)
            api, rebuilt = api_from_ui(ui), True

    if meta is None:
        meta, _ = _sibling(folder, (META_FILE,), source)
    if context is None:
        context, _ = _sibling(folder, (CONTEXT_FILE,), source)
    return api, (ui, ui_label), meta, context, folder, rebuilt


def _iso(ts: Any) -> str | None:
    if isinstance(ts, int) and not isinstance(ts, bool) and 0 < ts < 10**14:
        return datetime.fromtimestamp(ts / 1000, tz=UTC).isoformat().replace("+00:00", "Z")
    return None


def _count(info: dict[str, Any], key: str) -> int | None:
    value = info.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _model_at(meta: Any, ts: int | None) -> tuple[str | None, str | None]:
    """(model id, provider id) in use at `ts` (the latest when None), from task_metadata.json's model_usage."""
    entries = meta.get("model_usage") if isinstance(meta, dict) else None
    usable = sorted((e for e in entries if isinstance(e, dict) and isinstance(e.get("ts"), int)), key=lambda e: e["ts"]) \
        if isinstance(entries, list) else []
    if not usable:
        return None, None
    before = [e for e in usable if ts is None or e["ts"] <= ts]
    entry = before[-1] if before else usable[0]
    model, provider = entry.get("model_id"), entry.get("model_provider_id")
    return (model if isinstance(model, str) else None), (provider if isinstance(provider, str) else None)


def _requests(ui: Any, api: list[Any]) -> list[Request]:
    """The API requests in ui_messages, each paired with the assistant message it produced."""
    if not isinstance(ui, list):
        return []
    requests: list[Request] = []
    assistants = [i for i, m in enumerate(api) if isinstance(m, dict) and m.get("role") == "assistant"]
    taken: set[int] = set()
    for j, message in enumerate(ui):
        if not (isinstance(message, dict) and message.get("say") == "api_req_started"):
            continue
        index = message.get("conversationHistoryIndex")
        assistant: int | None = None
        if isinstance(index, int) and not isinstance(index, bool):
            candidate = index + 2
            if 0 <= candidate < len(api) and candidate in assistants and candidate not in taken:
                assistant = candidate
        else:
            assistant = next((a for a in assistants if a not in taken and a > max(taken, default=-1)), None)
        if assistant is not None:
            taken.add(assistant)
        ts = message.get("ts") if isinstance(message.get("ts"), int) else None
        requests.append(Request(ui_index=j, ts=ts, assistant=assistant, info=parse_request_info(message.get("text"))))
    request_ranges(ui, requests)
    return requests


def _usage(request: Request, api: list[Any], meta: Any) -> RecordedUsage | None:
    info = request.info
    counts = {k: _count(info, k) for k in ("tokensIn", "tokensOut", "cacheWrites", "cacheReads")}
    if all(v is None for v in counts.values()):
        return None
    model, provider = _model_at(meta, request.ts)
    raw = api[request.assistant] if request.assistant is not None else None
    model_info = raw.get("modelInfo") if isinstance(raw, dict) else None
    if isinstance(model_info, dict):
        model = model_info.get("modelId") if isinstance(model_info.get("modelId"), str) else model
        provider = model_info.get("providerId") if isinstance(model_info.get("providerId"), str) else provider
    tokens_in, reads = counts["tokensIn"], counts["cacheReads"]
    if provider in INPUT_INCLUDES_CACHED and tokens_in is not None and reads:
        tokens_in = max(tokens_in - reads, 0)
    return RecordedUsage(input_tokens=tokens_in, output_tokens=counts["tokensOut"],
                         cache_creation_input_tokens=counts["cacheWrites"], cache_read_input_tokens=reads,
                         timestamp=_iso(request.ts), model=model)


def _title(ui: Any, messages: list[BaseMessage]) -> str | None:
    if isinstance(ui, list) and ui and isinstance(ui[0], dict) and ui[0].get("say") == "task" and isinstance(ui[0].get("text"), str):
        text = ui[0]["text"].strip()
        if text:
            return title_line(text)
    first = next((m for m in messages if isinstance(m, HumanMessage)), None)
    text = message_text(first).strip() if first is not None else ""
    return title_line(text) if text else None


def load_task(source: Source) -> Thread:
    api, (ui, ui_label), meta, context, folder, rebuilt = _files(source)
    where = Where(source.label if _name(source) == API_FILE or folder is None or rebuilt else str(folder / API_FILE),
                  FORMAT)
    api = where.want_list(api, "$", "an array of messages (api_conversation_history)")
    if ui is not None and not isinstance(ui, list):
        raise ThreadLoadError("expected an array of ClineMessages", path=ui_label or source.label, format=FORMAT, location="$")
    converter = _Converter(where)
    for i, raw in enumerate(api):
        converter.add(raw, i)
    messages = converter.messages
    unique_ids(messages)
    requests = _requests(ui, api)
    usage: dict[str, RecordedUsage] = {}
    context_tokens: dict[int, int | None] = {}
    for k, request in enumerate(requests):
        recorded = _usage(request, api, meta)
        context_tokens[k] = recorded.context_tokens if recorded is not None else None
        if recorded is None or request.assistant is None:
            continue
        start, end = converter.spans[request.assistant]
        ai = next((m for m in messages[start:end] if isinstance(m, AIMessage)), None)
        if ai is not None and ai.id is not None:
            usage[ai.id] = recorded
    updates = context_updates(context)
    recorded_compactions, unapplied = compactions(api, converter.spans, messages, requests, updates,
                                                  notice_recorded=context is not None, context_tokens=context_tokens)
    models = [m for m in (u.model for u in usage.values()) if m]
    model = models[-1] if models else _model_at(meta, None)[0]
    extra: dict[str, Any] = {"requests": len(requests), "system_prompt": "not recorded by Cline"}
    if rebuilt:
        extra["api_conversation_history"] = "rebuilt from ui_messages.json (what Cline displayed of each call)"
    if ui is None:
        extra["ui_messages"] = "not found: no usage or deleted ranges"
    if unapplied:
        extra["context_history_updates_not_applied"] = unapplied
    if recorded_compactions and context is None:
        extra["truncation_notice"] = "assumed (Cline's contextTruncationNotice; context_history.json not found)"
    if isinstance(meta, dict) and isinstance(meta.get("files_in_context"), list):
        extra["files_in_context"] = len(meta["files_in_context"])
    # Cline names a task folder by its start time (`this.taskId = Date.now().toString()`, Task); an
    # upload laid out in a scratch folder keeps the file's stem, as it has when listed without one.
    task_id = folder.name if folder is not None and folder.name.isdigit() else Path(API_FILE).stem
    return Thread(thread_id=task_id, messages=messages, source_format=FORMAT, model=model,
                  usage=usage, compactions=recorded_compactions, title=_title(ui, messages), extra=extra)


class ClineImporter:
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        name = _name(source)
        if source.is_sqlite() or source.data.lstrip()[:1] not in (b"[", b"{"):
            return False
        if name in TASK_FILES:
            doc = source.try_json()
            if name == API_FILE:
                return _is_api_history(doc)
            if name in UI_FILES:
                return _is_ui_messages(doc)
            return isinstance(doc, (dict, list)) and source.path is not None and folder_entry(source.path.parent) is not None
        return _is_ui_messages(source.try_json())

    def folder_entry(self, folder: Path) -> Path | None:
        return folder_entry(folder)

    def list_threads(self, source: Source) -> list[ThreadRef]:
        thread = self.load(source, None)
        return [ThreadRef(thread.thread_id, thread.title, len(thread.messages))]

    def load(self, source: Source, thread_id: str | None) -> Thread:
        thread = load_task(source)
        return check_thread_id(thread, thread_id, Where(source.label, FORMAT))


IMPORTER = ClineImporter()
