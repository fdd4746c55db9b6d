"""Anthropic Messages: a request `{model?, system?, tools?, messages}` or a bare list of messages.

- `system` (a string or text blocks) becomes a leading SystemMessage and `thread.system_prompt`,
  as openai_chat does with its system message, so every format's thread starts with what the
  model was sent;
- `tools` (`{name, description, input_schema}`) become `thread.tools` as `{name, description,
  parameters}`;
- an assistant turn's `tool_use` blocks become `AIMessage.tool_calls` and are removed from the
  content, so their arguments are counted once (as tool calls); text, thinking and server-tool
  blocks stay in the content;
- a user turn's `tool_result` blocks become one ToolMessage each, in order (`is_error` gives
  status "error"; the name comes from the matching tool_use), and its remaining blocks one
  HumanMessage after them;
- a message that carries `usage` (a saved API response) gives the RecordedUsage of its step;
- a saved response alone (`{id, type: "message", role: "assistant", content, usage}`), a request
  with its `response`, or a logger's `{request, response}` load as the request's messages followed
  by the response (see `as_request`);
- JSON Lines of such records (claude-trace's `{request: {body}, response: {body}}` log, a Message
  Batches file `{custom_id, params}`) hold one thread a line. A streamed response that was captured
  only as raw text (`body_raw`) is left out: the thread ends with the request.

Detection needs an Anthropic-only shape (see `jsonshape.anthropic_evidence`): `tool_use` /
`tool_result` / `thinking` blocks, image blocks with `source`, a top-level `system`, or tools with
`input_schema`. A text-only conversation has none and loads as openai_messages, with the same
messages. Claude Code JSONL is not one JSON document, so it never reaches this sniff.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import tool_call

from engine.formats.jsonshape import (
    JsonlRecordsImporter,
    Where,
    anthropic_evidence,
    assemble,
    default_thread_id,
    guarded_sniff,
    is_role_list,
    json_type,
    jsonl_head,
    parsed_if,
    unwrap_exchange,
)
from engine.formats.source import Source
from engine.thread.model import RecordedUsage, Thread, stable_id

FORMAT = "anthropic"
ROLES = ("user", "assistant", "system")


def message_list(doc: Any) -> tuple[list[Any], str] | None:
    if is_role_list(doc):
        return doc, "$"
    if isinstance(doc, dict) and is_role_list(doc.get("messages")):
        return doc["messages"], "$.messages"
    return None


def is_message_response(doc: Any) -> bool:
    """A saved Messages API response: `{id, type: "message", role: "assistant", content: [...], usage}`."""
    return (
        isinstance(doc, dict)
        and doc.get("type") == "message"
        and doc.get("role") == "assistant"
        and isinstance(doc.get("content"), list)
    )


def as_request(doc: Any) -> Any:
    """A response alone, a request with its `response`, or a logger's `{request, response}` as one request
    whose last message is the response (it carries the usage and the response id)."""
    doc = unwrap_exchange(doc)
    if is_message_response(doc):
        return {"model": doc.get("model"), "id": doc.get("id"), "messages": [doc]}
    if isinstance(doc, dict) and is_message_response(doc.get("response")) and isinstance(doc.get("messages"), list):
        response = doc["response"]
        request = {k: v for k, v in doc.items() if k != "response"}
        request["messages"] = [*doc["messages"], response]
        if isinstance(response.get("id"), str) and "id" not in doc:
            request["id"] = response["id"]
        return request
    return doc


def is_anthropic(doc: Any) -> bool:
    raw = unwrap_exchange(doc)
    if is_message_response(raw) or (isinstance(raw, dict) and is_message_response(raw.get("response"))):
        return message_list(as_request(raw)) is not None
    return message_list(raw) is not None and anthropic_evidence(raw)


def system_text(system: Any, where: Where) -> str | list[Any]:
    """The top-level `system`: a string or a list of text blocks (kept as given)."""
    if isinstance(system, str):
        return system
    blocks = where.want_list(system, "$.system", "a string or a list of text blocks")
    for j, block in enumerate(blocks):
        block = where.want_dict(block, f"$.system[{j}]", "a text block")
        where.want_text(block.get("text"), f"$.system[{j}].text")
    return blocks


def tool_schemas(doc: dict[str, Any], where: Where) -> list[dict[str, Any]]:
    schemas = []
    for k, tool in enumerate(where.want_list(doc.get("tools") or [], "$.tools")):
        tool = where.want_dict(tool, f"$.tools[{k}]", "a tool object")
        name = where.want_text(tool.get("name"), f"$.tools[{k}].name")
        description = where.want_str(tool.get("description"), f"$.tools[{k}].description", optional=True)
        schema = tool.get("input_schema")
        if schema is not None:
            where.want_dict(schema, f"$.tools[{k}].input_schema")
        # Server tools (web search, code execution) have a `type` and no schema.
        schemas.append({"name": name, "description": description or "", "parameters": schema or {}})
    return schemas


def usage_from_anthropic(usage: dict[str, Any], where: Where, location: str) -> RecordedUsage:
    """An Anthropic `usage` object as RecordedUsage (its fields already have our semantics).

    `cache_creation: {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}` gives the split of
    cache writes by TTL when the response records it.
    """
    want = where.want_int
    recorded = RecordedUsage(
        input_tokens=want(usage.get("input_tokens"), f"{location}.input_tokens"),
        output_tokens=want(usage.get("output_tokens"), f"{location}.output_tokens"),
        cache_creation_input_tokens=want(usage.get("cache_creation_input_tokens"), f"{location}.cache_creation_input_tokens"),
        cache_read_input_tokens=want(usage.get("cache_read_input_tokens"), f"{location}.cache_read_input_tokens"),
    )
    split = usage.get("cache_creation")
    if isinstance(split, dict):
        recorded.cache_creation_5m_tokens = want(split.get("ephemeral_5m_input_tokens"),
                                                 f"{location}.cache_creation.ephemeral_5m_input_tokens")
        recorded.cache_creation_1h_tokens = want(split.get("ephemeral_1h_input_tokens"),
                                                 f"{location}.cache_creation.ephemeral_1h_input_tokens")
    return recorded


class MessageReader:
    """Anthropic MessageParams to LangChain messages, in order (also used by the cassette and Cline importers)."""

    def __init__(self, where: Where, prefix: str = FORMAT) -> None:
        self.where = where
        self.prefix = prefix  # the stable-id prefix of messages without a source id
        self.messages: list[BaseMessage] = []
        self.usage: list[tuple[BaseMessage, RecordedUsage]] = []
        self.tool_names: dict[str, str] = {}

    def read(self, raw: Any, location: str, position: int) -> None:
        where = self.where
        raw = where.want_dict(raw, location, "a message object")
        if "role" not in raw:
            where.fail(f"{location}.role", "message has no 'role'")
        role = raw["role"]
        if not isinstance(role, str):
            where.fail(f"{location}.role", f"expected a role string, got {json_type(role)}")
        if role not in ROLES:
            where.fail(f"{location}.role", f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
        content = where.want_content(raw.get("content"), f"{location}.content")
        source_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else None
        msg_id = source_id or stable_id(self.prefix, position, raw)
        if role == "assistant":
            self._assistant(raw, content, location, msg_id)
        elif role == "system":
            self.messages.append(SystemMessage(content=content, id=msg_id))
        else:
            self._user(content, location, position, msg_id)

    def _assistant(self, raw: dict[str, Any], content: str | list[Any], location: str, msg_id: str) -> None:
        where = self.where
        calls: list[Any] = []
        kept: list[Any] = []
        if isinstance(content, list):
            for j, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    at = f"{location}.content[{j}]"
                    call_id = where.want_text(block.get("id"), f"{at}.id")
                    name = where.want_text(block.get("name"), f"{at}.name")
                    args = block.get("input", {})
                    if not isinstance(args, dict):
                        where.fail(f"{at}.input", f"expected an object, got {json_type(args)}")
                    self.tool_names[call_id] = name
                    calls.append(tool_call(name=name, args=args, id=call_id))
                else:
                    kept.append(block)
            content = kept
        meta: dict[str, Any] = {}
        for key in ("model", "stop_reason"):
            if isinstance(raw.get(key), str):
                meta[key] = raw[key]
        message = AIMessage(content=content, tool_calls=calls, id=msg_id, response_metadata=meta)
        self.messages.append(message)
        usage = raw.get("usage")
        if usage is not None:
            recorded = usage_from_anthropic(where.want_dict(usage, f"{location}.usage"), where, f"{location}.usage")
            self.usage.append((message, recorded))

    def _user(self, content: str | list[Any], location: str, position: int, msg_id: str) -> None:
        where = self.where
        if isinstance(content, str):
            self.messages.append(HumanMessage(content=content, id=msg_id))
            return
        rest: list[Any] = []
        results = 0
        for j, block in enumerate(content):
            if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                rest.append(block)
                continue
            at = f"{location}.content[{j}]"
            call_id = where.want_text(block.get("tool_use_id"), f"{at}.tool_use_id")
            result = where.want_content(block.get("content"), f"{at}.content")
            status = "error" if block.get("is_error") is True else "success"
            self.messages.append(
                ToolMessage(
                    content=result,
                    tool_call_id=call_id,
                    status=status,
                    name=self.tool_names.get(call_id),
                    id=stable_id(self.prefix, f"{position}.{j}", block),
                )
            )
            results += 1
        if rest or not results:
            # Keep the source id for the human part when the turn had no tool results.
            human_id = msg_id if not results else stable_id(self.prefix, f"{position}.text", rest)
            self.messages.append(HumanMessage(content=rest, id=human_id))


class AnthropicImporter(JsonlRecordsImporter):
    """One request or response per JSON file, or one per line of a JSONL log (claude-trace, batch files)."""

    name = FORMAT

    def sniff(self, source: Source) -> bool:
        return guarded_sniff(lambda s: is_anthropic(parsed_if(s, b"[{")) or self.is_jsonl(s), source)

    def is_jsonl(self, source: Source) -> bool:
        rows = jsonl_head(source)
        return bool(rows) and is_anthropic(rows[0])

    def record_id(self, record: Any) -> str | None:
        request = as_request(record)
        rid = request.get("id") if isinstance(request, dict) else None
        return rid if isinstance(rid, str) and rid else None

    def build(self, doc: Any, source: Source, where: Where) -> Thread:
        doc = as_request(doc)
        found = message_list(doc)
        if found is None:
            if isinstance(doc, dict):
                raw, base = where.want_list(doc.get("messages"), "$.messages", "an array of messages"), "$.messages"
            else:
                raw, base = where.want_list(doc, "$", "an array of messages or an object with 'messages'"), "$"
        else:
            raw, base = found
        request = doc if isinstance(doc, dict) else {}
        reader = MessageReader(where)
        system_prompt: str | None = None
        if request.get("system") is not None:
            system = system_text(request["system"], where)
            system_prompt = system if isinstance(system, str) else "\n".join(b["text"] for b in system)
            reader.messages.append(SystemMessage(content=system, id=stable_id(FORMAT, "system", system)))
        for i, item in enumerate(raw):
            reader.read(item, f"{base}[{i}]", i)
        model = request.get("model")
        if not isinstance(model, str):
            models = [m.response_metadata.get("model") for m in reader.messages if isinstance(m, AIMessage)]
            model = next((m for m in reversed(models) if isinstance(m, str)), None)
        thread_id = request.get("id")
        return assemble(
            reader.messages,
            reader.usage,
            thread_id=thread_id if isinstance(thread_id, str) and thread_id else default_thread_id(source),
            model=model,
            system_prompt=system_prompt,
            tools=tool_schemas(request, where),
        )


IMPORTER = AnthropicImporter()
