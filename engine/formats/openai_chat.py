"""OpenAI Chat Completions dumps: the request `{model, tools, messages}`, with or without its response.

The response's `choices[0].message` is appended as the final AI message (later choices, when `n > 1`,
are alternatives the conversation did not continue with; their count is kept in `extra`).
`usage` covers only that final call, so it becomes the RecordedUsage of the last AI step:
`input_tokens = prompt_tokens` (which already includes cached tokens), `output_tokens =
completion_tokens`. Without a response there is no step to attach it to and it is kept in `extra`.

Detection: an object whose `messages` is a `{role, ...}` list next to at least one of `model`,
`tools`, `functions`, `choices`, `usage`, `tool_choice` and that shows no Anthropic-only shape (a
top-level `system`, tools with `input_schema`, `tool_use`/`tool_result` blocks). A bare
`chat.completion` response (`choices` without `messages`) is read as a one-message thread.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from engine.formats.jsonshape import (
    SingleThreadImporter,
    Where,
    anthropic_evidence,
    assemble,
    default_thread_id,
    guarded_sniff,
    is_role_list,
    parsed_if,
    usage_from_openai,
)
from engine.formats.openai_messages import CHAT_DUMP_KEYS, OpenAIMessageReader
from engine.formats.source import Source
from engine.thread import RecordedUsage, Thread

FORMAT = "openai_chat"


def is_chat_dump(doc: Any) -> bool:
    if not isinstance(doc, dict):
        return False
    messages = doc.get("messages")
    if messages is None:
        return str(doc.get("object", "")).startswith("chat.completion") and isinstance(doc.get("choices"), list)
    if not (is_role_list(messages) or messages == []):
        return False
    return bool(CHAT_DUMP_KEYS & doc.keys()) and not anthropic_evidence(doc)


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


class OpenAIChatImporter(SingleThreadImporter):
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        return guarded_sniff(lambda s: is_chat_dump(parsed_if(s, b"{")), source)

    def build(self, doc: Any, source: Source, where: Where) -> Thread:
        doc = where.want_dict(doc, "$", "a chat-completions object with 'messages'")
        raw_messages = doc.get("messages")
        if raw_messages is None and "choices" not in doc:
            where.fail("$.messages", "chat-completions dump has no 'messages'")
        reader = OpenAIMessageReader(where, id_prefix=FORMAT)
        messages: list[BaseMessage] = []
        if raw_messages is not None:
            messages = reader.read_all(where.want_list(raw_messages, "$.messages"), "$.messages")
        extra: dict[str, Any] = {}
        final: BaseMessage | None = None
        choices = doc.get("choices")
        if choices is not None:
            choices = where.want_list(choices, "$.choices")
            if choices:
                choice = where.want_dict(choices[0], "$.choices[0]", "a choice object")
                raw_final = where.want_dict(choice.get("message"), "$.choices[0].message")
                final = reader.read({"role": "assistant", **raw_final}, "$.choices[0].message", len(messages))
                if final is not None:
                    messages.append(final)
                if isinstance(choice.get("finish_reason"), str):
                    extra["finish_reason"] = choice["finish_reason"]
            if len(choices) > 1:
                extra["choices"] = len(choices)
        usage = list(reader.usage)
        if doc.get("usage") is not None:
            raw_usage = where.want_dict(doc["usage"], "$.usage")
            recorded = usage_from_openai(raw_usage, where, "$.usage")
            if recorded is not None and isinstance(final, AIMessage):
                usage.append((final, recorded))
            elif recorded is not None:
                extra["usage"] = recorded.to_dict()
        model = where.want_str(doc.get("model"), "$.model", optional=True)
        thread_id = doc.get("id") if isinstance(doc.get("id"), str) and doc.get("id") else default_thread_id(source)
        thread = assemble(
            messages,
            _dedupe(usage),
            thread_id=thread_id,
            model=model or None,
            tools=tool_schemas(doc, where),
        )
        thread.extra.update(reader.extra)
        thread.extra.update(extra)
        return thread


def _dedupe(usage: list[tuple[BaseMessage, RecordedUsage]]) -> list[tuple[BaseMessage, RecordedUsage]]:
    """The top-level `usage` wins over a per-message one recorded for the same AI message."""
    by_message: dict[int, tuple[BaseMessage, RecordedUsage]] = {}
    for message, recorded in usage:
        by_message[id(message)] = (message, recorded)
    return list(by_message.values())


IMPORTER = OpenAIChatImporter()
