"""Request logs: every request an agent sent, one a line, as proxies and profilers record them.

LLM proxies and profilers log each model request whole — LiteLLM's and Helicone's logs, the
context-profiler's `{"model", "messages", "metadata"}` lines, Context Lens' LHAR — so a log is exactly
what the model saw at every call. One conversation's requests become one thread of that many model
calls whose as-recorded views are the logged requests:
- the thread is the first request's messages, then for each call its answer and what the next
  request adds after it; the answer is the logged response (`response`, LiteLLM's `response` /
  `response_body`, LHAR's `raw.response_body`, a streamed body assembled by engine/formats/sse.py) or
  else the assistant message the next request has right after this one's messages; the last call's
  answer, when nothing records it, is an empty AI message (`extra["unanswered_calls"]`);
- a request that does not begin with the previous request and its answer (the agent compacted,
  trimmed or edited its history) is a recorded compaction at that call: its `replacement` is the
  request up to and including the previous answer, the messages after it are the call's new ones; a
  message equal to one sent before keeps its id;
- usage per call where the line records it (`usage`, the response's usage, LHAR's `gen_ai.usage` with
  `usage_ext` cache counts, LiteLLM's `prompt_tokens`/`completion_tokens`).
Messages are OpenAI chat messages or Anthropic MessageParams (with a top-level `system`), read by the
`openai_messages` and `anthropic` readers; a line may nest the request under `request`,
`request_body` or `body`.

Conversations are told apart by a session key in the line or its `metadata` (`session_id`,
`trace_id`, `conversation_id`, `thread_id`, LHAR's `trace_id`), else by their first non-system
message (the task): one thread each, listed in order of appearance.

Detection: JSON Lines whose first two records are logged requests (a `messages` role list and a
`model`), the second beginning with all of the first's messages and adding more, or an LHAR file
(`{"type": "session"|"entry"}` lines, or `{"lhar": {...}}`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats import sse
from engine.formats.anthropic import MessageReader, system_text, tool_schemas, usage_from_anthropic
from engine.formats.jsonshape import (
    Where,
    default_thread_id,
    guarded_sniff,
    is_role_list,
    jsonl_head,
    usage_from_openai,
)
from engine.formats.openai_messages import OpenAIMessageReader
from engine.formats.source import Source, ThreadRef
from engine.thread.model import RecordedCompaction, RecordedUsage, Thread, title_line

FORMAT = "request_log"
SESSION_KEYS = ("session_id", "trace_id", "conversation_id", "thread_id", "sessionId", "conversationId")
REQUEST_KEYS = ("request", "request_body", "body")
RESPONSE_KEYS = ("response", "response_body", "response_obj")
TIME_KEYS = ("timestamp", "startTime", "start_time", "created_at", "time")


# -- one logged request ------------------------------------------------------------------------------
@dataclass
class Logged:
    """One logged request: its messages, system prompt (Anthropic), tools, response and usage."""

    line: int
    at: str  # the JSON path of the request within its line, for error messages
    kind: str  # "openai" or "anthropic"
    messages: list[Any]
    model: str | None = None
    system: Any = None
    tools: list[Any] = field(default_factory=list)
    response: Any = None
    usage: RecordedUsage | None = None
    timestamp: str | None = None
    session: str | None = None


def _request_of(record: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    if is_role_list(record.get("messages")):
        return record, "$"
    for key in REQUEST_KEYS:
        inner = record.get(key)
        if isinstance(inner, str):
            try:
                inner = json.loads(inner)
            except (ValueError, RecursionError):
                continue
        if isinstance(inner, dict) and is_role_list(inner.get("messages")):
            return inner, f"$.{key}"
    return None


def is_logged_request(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    found = _request_of(record)
    return found is not None and (isinstance(found[0].get("model"), str) or isinstance(record.get("model"), str))


def _session(record: dict[str, Any]) -> str | None:
    for node in (record, record.get("metadata")):
        if isinstance(node, dict):
            for key in SESSION_KEYS:
                value = node.get(key)
                if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
                    return str(value)
    return None


def _first_task(messages: list[Any]) -> str:
    """The conversation's first non-system message, canonically (what tells conversations apart)."""
    first = next((m for m in messages if isinstance(m, dict) and m.get("role") not in ("system", "developer")), None)
    return json.dumps(first, sort_keys=True, ensure_ascii=False)


def _kind(request: dict[str, Any]) -> str:
    if "system" in request or any(isinstance(t, dict) and "input_schema" in t for t in request.get("tools") or []):
        return "anthropic"
    for m in request.get("messages") or []:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")
                                             for b in content):
            return "anthropic"
    return "openai"


def _time(record: dict[str, Any]) -> str | None:
    for node in (record, record.get("metadata")):
        if isinstance(node, dict):
            for key in TIME_KEYS:
                if isinstance(node.get(key), str) and node[key]:
                    return node[key]
    return None


def _response(record: dict[str, Any], request: dict[str, Any]) -> Any:
    for node in (record, request):
        for key in RESPONSE_KEYS:
            value = node.get(key)
            if isinstance(value, str):  # a streamed body, or JSON text
                items = sse.chunks(value)
                done = sse.assembled(items) if items else None
                if done is not None:
                    return done[1]
                try:
                    value = json.loads(value)
                except (ValueError, RecursionError):
                    continue
            if isinstance(value, dict) and isinstance(value.get("body"), dict) and "status_code" in value:
                value = value["body"]
            if isinstance(value, dict):
                return value
    return None


def _answer_of(response: Any, kind: str) -> dict[str, Any] | None:
    """The assistant message a logged response holds, as a message of the log's kind."""
    if not isinstance(response, dict):
        return None
    if response.get("type") == "message" and response.get("role") == "assistant":
        return {"role": "assistant", "content": response.get("content")}
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict) and isinstance(choices[0].get("message"), dict):
        message = dict(choices[0]["message"])
        message.setdefault("role", "assistant")
        return message
    return None


def _usage(record: dict[str, Any], response: Any, where: Where, line: int) -> RecordedUsage | None:
    at = f"line {line}: $"
    for node in (response if isinstance(response, dict) else None, record):
        raw = node.get("usage") if isinstance(node, dict) else None
        if isinstance(raw, dict):
            if "input_tokens" in raw and "prompt_tokens" not in raw:
                return usage_from_anthropic(raw, where, f"{at}.usage")
            return usage_from_openai(raw, where, f"{at}.usage")
    if isinstance(record.get("prompt_tokens"), int):  # LiteLLM's standard logging payload
        return usage_from_openai({k: record[k] for k in ("prompt_tokens", "completion_tokens") if k in record}, where, at)
    return None


def logged(record: Any, line: int, where: Where) -> Logged | None:
    """A JSONL line as a logged request (None for a line that is not one)."""
    if not isinstance(record, dict):
        return None
    found = _request_of(record)
    if found is None:
        return None
    request, at = found
    kind = _kind(request)
    response = _response(record, request)
    model = request.get("model") if isinstance(request.get("model"), str) else record.get("model")
    tools: list[Any] = request["tools"] if isinstance(request.get("tools"), list) else []
    usage = _usage(record, response, where, line)
    if usage is not None:
        usage.timestamp = usage.timestamp or _time(record)
        usage.model = usage.model or (model if isinstance(model, str) else None)
    return Logged(line=line, at=at, kind=kind, messages=list(request["messages"]),
                  model=model if isinstance(model, str) else None, system=request.get("system"), tools=tools,
                  response=response, usage=usage, timestamp=_time(record), session=_session(record))


# -- LHAR (Context Lens) -------------------------------------------------------------------------------
def lhar_entries(source: Source) -> list[tuple[dict[str, Any], int]] | None:
    """LHAR's entries (with their line), or None when the file is not LHAR."""
    doc = source.try_json()
    if isinstance(doc, dict) and isinstance(doc.get("lhar"), dict):
        entries = doc["lhar"].get("entries")
        return [(e, k + 1) for k, e in enumerate(entries) if isinstance(e, dict)] if isinstance(entries, list) else []
    rows = jsonl_head(source, 3)
    if not rows or rows[0].get("type") not in ("session", "entry") or not isinstance(rows[0].get("trace_id"), str):
        return None
    return [(r, n) for n, r in source.jsonl() if isinstance(r, dict) and r.get("type") == "entry"]


def lhar_logged(entry: dict[str, Any], line: int, where: Where) -> Logged | None:
    raw: dict[str, Any] = entry["raw"] if isinstance(entry.get("raw"), dict) else {}
    body = raw.get("request_body")
    if not isinstance(body, dict) or not is_role_list(body.get("messages")):
        return None
    record = {"request": body, "response": raw.get("response_body")}
    out = logged(record, line, where)
    if out is None:
        return None
    gen: dict[str, Any] = entry["gen_ai"] if isinstance(entry.get("gen_ai"), dict) else {}
    usage: dict[str, Any] | None = gen["usage"] if isinstance(gen.get("usage"), dict) else None
    ext: dict[str, Any] = entry["usage_ext"] if isinstance(entry.get("usage_ext"), dict) else {}
    if usage is not None:
        # LHAR: `input_tokens` excludes the cache (docs/LHAR.md), as Anthropic's does
        out.usage = usage_from_anthropic({"input_tokens": usage.get("input_tokens"), "output_tokens": usage.get("output_tokens"),
                                          "cache_read_input_tokens": ext.get("cache_read_tokens"),
                                          "cache_creation_input_tokens": ext.get("cache_write_tokens")},
                                         where, f"line {line}: $.gen_ai.usage")
        out.usage.timestamp = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else None
        out.usage.model = out.model
    role = entry["source"].get("agent_role") if isinstance(entry.get("source"), dict) else None
    trace = entry.get("trace_id") if isinstance(entry.get("trace_id"), str) else None
    out.session = f"{trace}/{role}" if trace and role and role != "main" else trace
    out.timestamp = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else None
    return out


# -- a conversation's requests as one thread -----------------------------------------------------------
def _canon(message: Any) -> str:
    return json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)


def _reader_messages(kind: str, raw: list[dict[str, Any]], where: Where, base: str) -> tuple[list[BaseMessage], list[int]]:
    """Messages of `raw` (each carrying its id), and the message index each raw item starts at."""
    starts: list[int] = []
    if kind == "anthropic":
        reader = MessageReader(where, prefix=FORMAT)
        for i, item in enumerate(raw):
            starts.append(len(reader.messages))
            reader.read(item, f"{base}[{i}]", i)
        return reader.messages, starts
    oreader = OpenAIMessageReader(where, id_prefix=FORMAT)
    out: list[BaseMessage] = []
    for i, item in enumerate(raw):
        starts.append(len(out))
        message = oreader.read(item, f"{base}[{i}]", i)
        if message is not None:
            out.append(message)
    return out, starts


def conversation_thread(requests: list[Logged], thread_id: str, where: Where) -> Thread:
    """One conversation's logged requests as a thread (see the module docstring)."""
    ids: dict[str, list[str]] = {}  # canonical message -> ids given to it, in order

    def with_id(message: Any, hint: str, reuse: int | None = None) -> dict[str, Any]:
        canon = _canon(message)
        known = ids.get(canon, [])
        if reuse is not None and reuse < len(known):
            chosen = known[reuse]
        else:
            chosen = f"{FORMAT}-{hint}"
            ids.setdefault(canon, []).append(chosen)
        out = dict(message) if isinstance(message, dict) else {"role": "user", "content": message}
        out["id"] = chosen
        return out

    kind = requests[0].kind
    main: list[dict[str, Any]] = []
    compactions: list[tuple[int, list[dict[str, Any]]]] = []
    answers: list[str] = []
    usage_by_answer: dict[str, RecordedUsage] = {}
    unanswered = 0
    previous: list[Any] | None = None
    answer_raw: Any = None
    for k, req in enumerate(requests):
        sent = list(req.messages)
        if previous is None:
            main = [with_id(m, f"{k}-{j}") for j, m in enumerate(sent)]
        else:
            expected = [*previous, answer_raw]
            if [_canon(m) for m in sent[:len(expected)]] == [_canon(m) for m in expected]:
                new = sent[len(expected):]
            else:
                seen: dict[str, int] = {}
                at = max((j for j, m in enumerate(sent) if _canon(m) == _canon(answer_raw)), default=None)
                kept = sent[: at + 1] if at is not None else sent
                replacement = []
                for j, m in enumerate(kept):
                    n = seen.get(_canon(m), 0)
                    seen[_canon(m)] = n + 1
                    replacement.append(with_id(m, f"{k}-r{j}", reuse=n))
                compactions.append((len(main), replacement))
                new = sent[at + 1:] if at is not None else []
            main += [with_id(m, f"{k}-{j}") for j, m in enumerate(new)]
        answer = _answer_of(req.response, kind)
        if answer is None and k + 1 < len(requests):
            # the next request's assistant message right after this request's (last) message
            nxt = requests[k + 1].messages
            if [_canon(m) for m in nxt[:len(sent)]] == [_canon(m) for m in sent]:
                at = len(sent)
            else:
                tail = _canon(sent[-1]) if sent else None
                found = max((j for j, m in enumerate(nxt) if _canon(m) == tail), default=None)
                at = found + 1 if found is not None else len(nxt)
            if at < len(nxt) and isinstance(nxt[at], dict) and nxt[at].get("role") == "assistant":
                answer = nxt[at]
        if answer is None:
            answer, unanswered = {"role": "assistant", "content": ""}, unanswered + 1
        answer_raw = answer
        entry = with_id(answer, f"{k}-answer")
        main.append(entry)
        answers.append(entry["id"])
        if req.usage is not None:
            usage_by_answer[entry["id"]] = req.usage
        previous = sent
    messages, starts = _reader_messages(kind, main, where, f"line {requests[0].line}: {requests[0].at}.messages")
    recorded = []
    for index, replacement in compactions:
        rebuilt, _ = _reader_messages(kind, replacement, where, f"line {requests[0].line}: {requests[0].at}.messages")
        recorded.append(RecordedCompaction(index=starts[index] if index < len(starts) else len(messages), kind="trim",
                                           replacement=rebuilt, source=f"{FORMAT}:request",
                                           trigger="the logged request did not extend the previous one"))
    last = requests[-1]
    system_prompt = None
    if last.system is not None:
        system = system_text(last.system, where)
        system_prompt = system if isinstance(system, str) else "\n".join(b["text"] for b in system)
        messages.insert(0, SystemMessage(content=system, id=f"{FORMAT}-system"))
        recorded = [RecordedCompaction(index=c.index + 1, kind=c.kind, replacement=[messages[0], *(c.replacement or [])],
                                       source=c.source, trigger=c.trigger) for c in recorded]
    tools = tool_schemas({"tools": last.tools}, where) if kind == "anthropic" else [t for t in last.tools if isinstance(t, dict)]
    usage = {a: usage_by_answer[a] for a in answers if a in usage_by_answer}
    first_human = next((m for m in messages if m.type == "human"), None)
    title = title_line(str(first_human.text)) if first_human is not None and str(first_human.text).strip() else None
    extra: dict[str, Any] = {"logged_requests": len(requests), "log_lines": [r.line for r in requests]}
    if unanswered:
        extra["unanswered_calls"] = unanswered
    ai = sum(isinstance(m, AIMessage) for m in messages)
    if ai != len(requests):
        raise ThreadLoadError(f"{len(requests)} logged requests gave {ai} model calls", path=where.label, format=FORMAT)
    return Thread(thread_id=thread_id, messages=messages, source_format=FORMAT, model=last.model,
                  system_prompt=system_prompt, tools=tools, usage=usage, compactions=recorded, title=title, extra=extra)


# -- the importer ------------------------------------------------------------------------------------
def conversations(source: Source) -> list[tuple[str, list[Logged]]]:
    """The conversations of a request log or LHAR file, in order of appearance, with their thread ids."""
    where = Where(source.label, FORMAT)
    entries = lhar_entries(source)
    requests: list[Logged] = []
    if entries is not None:
        for entry, line in entries:
            got = lhar_logged(entry, line, where)
            if got is not None:
                requests.append(got)
        if not requests:
            raise ThreadLoadError("this LHAR file records no request bodies (Context Lens keeps them only with "
                                  "CONTEXT_LENS_PRIVACY=full): nothing the model saw can be shown",
                                  path=source.label, format=FORMAT)
    else:
        for line, record in source.jsonl():
            got = logged(record, line, where)
            if got is None:
                raise ThreadLoadError("not a logged request (expected `messages` and `model`)", path=source.label,
                                      format=FORMAT, location=f"line {line}")
            requests.append(got)
    groups: dict[str, list[Logged]] = {}
    for req in requests:
        key = req.session if req.session is not None else "task:" + _first_task(req.messages)
        groups.setdefault(key, []).append(req)
    stem = default_thread_id(source)
    out = []
    for n, (key, group) in enumerate(groups.items(), start=1):
        tid = key if not key.startswith("task:") else (stem if len(groups) == 1 else f"{stem}-{n}")
        out.append((tid, group))
    return out


def sniff(source: Source) -> bool:
    if source.is_sqlite() or source.data.lstrip()[:1] != b"{":
        return False
    doc = source.try_json()
    if isinstance(doc, dict):
        return isinstance(doc.get("lhar"), dict) and isinstance(doc["lhar"].get("entries"), list)
    rows = jsonl_head(source, 3)
    if rows and rows[0].get("type") in ("session", "entry") and isinstance(rows[0].get("trace_id"), str):
        return True
    if len(rows) < 2 or not all(is_logged_request(r) for r in rows[:2]):
        return False
    # the second request continues the first: it begins with all of it and adds the answer and more
    # (one file of unrelated requests, or of the same request sampled twice, stays openai_chat's)
    first, second = (_request_of(r)[0]["messages"] for r in rows[:2])  # type: ignore[index]
    return len(second) > len(first) and [_canon(m) for m in second[:len(first)]] == [_canon(m) for m in first]


class RequestLogImporter:
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        return guarded_sniff(sniff, source)

    def list_threads(self, source: Source) -> list[ThreadRef]:
        where = Where(source.label, FORMAT)
        out = []
        for tid, group in conversations(source):
            thread = conversation_thread(group, tid, where)
            out.append(ThreadRef(tid, thread.title, len(thread.messages)))
        return out

    def load(self, source: Source, thread_id: str | None) -> Thread:
        where = Where(source.label, FORMAT)
        found = conversations(source)
        if thread_id is None:
            if not found:
                raise ThreadLoadError("the log holds no requests", path=source.label, format=FORMAT)
            tid, group = found[0]
        else:
            match = next(((t, g) for t, g in found if t == thread_id), None)
            if match is None:
                raise ThreadNotFoundError(f"thread {thread_id!r} not found (this log holds "
                                          f"{', '.join(t for t, _ in found[:5])})", path=source.label, format=FORMAT)
            tid, group = match
        return conversation_thread(group, tid, where)


IMPORTER = RequestLogImporter()
