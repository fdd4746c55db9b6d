"""OpenAI Chat Completions dumps: the request `{model, tools, messages}`, with or without its response.

The response's `choices[0].message` is appended as the final AI message (later choices, when `n > 1`,
are alternatives the conversation did not continue with; their count is kept in `extra`).
`usage` covers only that final call, so it becomes the RecordedUsage of the last AI step:
`input_tokens = prompt_tokens` (which already includes cached tokens), `output_tokens =
completion_tokens`. Without a response there is no step to attach it to and it is kept in `extra`.

Where the response sits: in the dump itself (`choices`, `usage`), under `response` (LLM proxies and
loggers), in a `{request, response}` record, or in a Batch API output line (`{custom_id, response:
{status_code, body}}`); a Batch API input line (`{custom_id, body}`) is a request. A bare
`chat.completion` response (`choices` without `messages`) is read as a one-message thread.

JSON Lines: one record a line (request logs, batch input or output, fine-tuning examples
`{"messages": [...]}`) is one thread a line. A thread is named by the line's custom_id, else its
response id, when that is unique in the file, else `<file stem>-line<N>`.

Detection: an object whose `messages` is a `{role, ...}` list next to at least one of `model`,
`tools`, `functions`, `choices`, `usage`, `tool_choice`, `response` and that shows no Anthropic-only
shape (a top-level `system`, tools with `input_schema`, `tool_use`/`tool_result` blocks) and no
Anthropic or Responses reply.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from engine.formats.jsonshape import (
    JsonlRecordsImporter,
    Where,
    anthropic_evidence,
    assemble,
    default_thread_id,
    guarded_sniff,
    is_role_list,
    jsonl_head,
    parsed_if,
    unwrap_exchange,
    usage_from_openai,
)
from engine.formats.openai_messages import CHAT_DUMP_KEYS, OpenAIMessageReader, holds_plain_messages
from engine.formats.source import Source
from engine.thread.model import RecordedUsage, Thread

FORMAT = "openai_chat"


def response_of(doc: dict[str, Any]) -> Any:
    """The record's response; a Batch API output line wraps it as `{status_code, body}`."""
    response = doc.get("response")
    if isinstance(response, dict) and isinstance(response.get("body"), dict) and "status_code" in response:
        return response["body"]
    return response


def _is_completion(doc: Any) -> bool:
    return isinstance(doc, dict) and str(doc.get("object", "")).startswith("chat.completion") and isinstance(doc.get("choices"), list)


def is_chat_dump(doc: Any) -> bool:
    doc = unwrap_exchange(doc)
    if not isinstance(doc, dict):
        return False
    response = response_of(doc)
    if isinstance(response, dict) and (response.get("type") == "message" or "output" in response):
        return False  # an Anthropic or Responses reply: those formats read it
    messages = doc.get("messages")
    if messages is None:
        return _is_completion(doc) or _is_completion(response)
    if not (is_role_list(messages) or messages == []):
        return False
    return bool((CHAT_DUMP_KEYS | {"response"}) & doc.keys()) and not anthropic_evidence(doc)


def tool_schemas(doc: dict[str, Any], where: Where) -> list[dict[str, Any]]:
    """`tools` (and legacy `functions`) as `{name, description, parameters}`."""
    schemas: list[dict[str, Any]] = []
    for key in ("tools", "functions"):
        raw = doc.get(key)
        if raw is None:
            continue
        for k, tool in enumerate(where.want_list(raw, f"$.{key}")):
            location = f"$.{key}[{k}]"
            tool = where.want_dict(tool, location, "a tool object")
            spec: Any = tool
            if isinstance(tool.get("function"), dict):
                spec, location = tool["function"], f"{location}.function"
            elif isinstance(tool.get("custom"), dict):
                spec, location = tool["custom"], f"{location}.custom"
            name = where.want_text(spec.get("name"), f"{location}.name")
            description = where.want_str(spec.get("description"), f"{location}.description", optional=True)
            parameters = spec.get("parameters")
            if parameters is not None:
                where.want_dict(parameters, f"{location}.parameters")
            schemas.append({"name": name, "description": description or "", "parameters": parameters or {}})
    return schemas


def _at(root: str, path: str) -> str:
    """A JSON path under a record's root (`$`, or `line 3: $` for a JSONL record)."""
    return root + path[1:] if root != "$" else path


def build_record(doc: Any, where: Where, fallback_id: str, root: str = "$") -> Thread:
    """One chat-completions record (request, request + response, or response alone) as a thread."""
    doc = unwrap_exchange(where.want_dict(doc, root, "a chat-completions object with 'messages'"))
    response = response_of(doc)
    if response is not None:
        # A logger's request with its response (`{model, messages, response: {choices, usage}}`).
        response = where.want_dict(response, _at(root, "$.response"), "a chat.completion object")
        wrapped = isinstance(doc.get("response"), dict) and doc["response"].get("body") is response
        reply, reply_at = response, "$.response.body" if wrapped else "$.response"
    else:
        reply, reply_at = doc, "$"
    raw_messages = doc.get("messages")
    if raw_messages is None and "choices" not in reply:
        where.fail(_at(root, "$.messages"), "chat-completions dump has no 'messages'")
    reader = OpenAIMessageReader(where, id_prefix=FORMAT)
    messages: list[BaseMessage] = []
    if raw_messages is not None:
        messages = reader.read_all(where.want_list(raw_messages, _at(root, "$.messages")), _at(root, "$.messages"))
    extra: dict[str, Any] = {}
    final: BaseMessage | None = None
    choices = reply.get("choices")
    choices_at = _at(root, f"{reply_at}.choices")
    if choices is not None:
        choices = where.want_list(choices, choices_at)
        if choices:
            choice = where.want_dict(choices[0], f"{choices_at}[0]", "a choice object")
            raw_final = where.want_dict(choice.get("message"), f"{choices_at}[0].message")
            final = reader.read({"role": "assistant", **raw_final}, f"{choices_at}[0].message", len(messages))
            if final is not None:
                messages.append(final)
            if isinstance(choice.get("finish_reason"), str):
                extra["finish_reason"] = choice["finish_reason"]
        if len(choices) > 1:
            extra["choices"] = len(choices)
    usage = list(reader.usage)
    if reply.get("usage") is not None:
        usage_at = _at(root, f"{reply_at}.usage")
        recorded = usage_from_openai(where.want_dict(reply["usage"], usage_at), where, usage_at)
        if recorded is not None and isinstance(final, AIMessage):
            usage.append((final, recorded))
        elif recorded is not None:
            extra["usage"] = recorded.to_dict()
    model = where.want_str(doc.get("model"), _at(root, "$.model"), optional=True)
    if not model and isinstance(reply.get("model"), str):
        model = reply["model"]
    thread = assemble(
        messages,
        _dedupe(usage),
        thread_id=record_id(doc) or fallback_id,
        model=model or None,
        tools=tool_schemas(doc, where),
    )
    thread.extra.update(reader.extra)
    thread.extra.update(extra)
    return thread


def record_id(doc: dict[str, Any]) -> str | None:
    """The record's own id: a batch line's custom_id, else the response's (`chatcmpl-...`), else the dump's."""
    if isinstance(doc.get("custom_id"), str) and doc["custom_id"]:
        return str(doc["custom_id"])
    response = response_of(doc)
    for node in (response if isinstance(response, dict) else {}, doc):
        if isinstance(node.get("id"), str) and node["id"]:
            return str(node["id"])
    return None


def jsonl_records(source: Source) -> bool:
    """Whether the file is JSON Lines of chat records: request dumps, batch requests, or fine-tuning
    examples (`{"messages": [...]}` a line)."""
    rows = jsonl_head(source)
    return bool(rows) and (is_chat_dump(rows[0]) or holds_plain_messages(rows[0]))


class OpenAIChatImporter(JsonlRecordsImporter):
    """One dump per JSON file, or one per line of a JSONL log (several threads)."""

    name = FORMAT

    def sniff(self, source: Source) -> bool:
        return guarded_sniff(lambda s: is_chat_dump(parsed_if(s, b"{")) or jsonl_records(s), source)

    def build(self, doc: Any, source: Source, where: Where) -> Thread:
        return build_record(doc, where, default_thread_id(source))

    def is_jsonl(self, source: Source) -> bool:
        return jsonl_records(source)

    def record_id(self, record: Any) -> str | None:
        return record_id(unwrap_exchange(record)) if isinstance(record, dict) else None


def _dedupe(usage: list[tuple[BaseMessage, RecordedUsage]]) -> list[tuple[BaseMessage, RecordedUsage]]:
    """The top-level `usage` wins over a per-message one recorded for the same AI message."""
    by_message: dict[int, tuple[BaseMessage, RecordedUsage]] = {}
    for message, recorded in usage:
        by_message[id(message)] = (message, recorded)
    return list(by_message.values())


IMPORTER = OpenAIChatImporter()
