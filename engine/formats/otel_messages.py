"""The messages of one GenAI span, whichever convention wrote them, as LangChain messages.

Read in this order (the first that is present wins):
- `gen_ai.input.messages` / `gen_ai.output.messages` (semantic-conventions-genai, docs/gen-ai/
  gen-ai-input-messages.json and gen-ai-output-messages.json): `[{role, parts: [{type: text, content}
  | {type: tool_call, id, name, arguments} | {type: tool_call_response, id, response|result} |
  {type: reasoning, content} | {type: compaction, id, content} | blob | file | uri | …]}]`, as a JSON
  string or structured; `gen_ai.system_instructions` holds a system prompt given apart;
- OpenAI-shaped message lists (`{role, content, tool_calls, tool_call_id}`), which any-agent writes
  in `gen_ai.input.messages` and older instrumentations in `gen_ai.prompt` / `gen_ai.completion`;
- OpenLLMetry's flattened `gen_ai.prompt.<i>.role|content|tool_calls.<j>.*` and
  `gen_ai.completion.<i>.*` attributes;
- any-agent's own output (`gen_ai.output` with `gen_ai.output.type`: a JSON list of `{tool.name,
  tool.args}` is tool calls, anything else the reply text; any-agent callbacks/span_generation);
- span events of the older conventions: `gen_ai.content.prompt` / `gen_ai.content.completion`
  (attributes `gen_ai.prompt` / `gen_ai.completion`) and the per-message `gen_ai.system.message`,
  `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message`, `gen_ai.choice`.
A message holding a `compaction` part is marked (`additional_kwargs["otel_compaction"]`, its content).
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import tool_call

from engine.formats.jsonshape import Where, json_type, parse_arguments
from engine.formats.otel_spans import Span
from engine.thread.model import stable_id

FORMAT = "otel_genai"
COMPACTION_KEY = "otel_compaction"
MESSAGE_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                  "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}
INDEXED = re.compile(r"^gen_ai\.(prompt|completion)\.(\d+)\.(.+)$")


def decoded(value: Any) -> Any:
    """An attribute that may hold JSON text: the parsed value, else the value itself."""
    if isinstance(value, str) and value[:1] in ("[", "{", '"'):
        try:
            return json.loads(value, strict=False)
        except (ValueError, RecursionError):
            return value
    return value


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


# -- one convention's messages into the common {role, parts} form -------------------------------------


def _openai_parts(message: dict[str, Any], where: Where, at: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") in ("text", "input_text", "output_text"):
                parts.append({"type": "text", "content": _text(block.get("text"))})
            elif isinstance(block, dict) and block.get("type") in ("image_url", "image", "input_image"):
                parts.append({"type": "media", "block": dict(block)})
            elif isinstance(block, str):
                parts.append({"type": "text", "content": block})
            else:
                parts.append({"type": "text", "content": _text(block)})
    elif content is not None:
        parts.append({"type": "text", "content": _text(content)})
    for k, call in enumerate(message.get("tool_calls") or []):
        call = where.want_dict(call, f"{at}.tool_calls[{k}]", "a tool call object")
        inner = call.get("function")
        fn: dict[str, Any] = inner if isinstance(inner, dict) else call
        parts.append({"type": "tool_call", "id": call.get("id"), "name": fn.get("name"), "arguments": fn.get("arguments")})
    if message.get("role") == "tool":
        return [{"type": "tool_call_response", "id": message.get("tool_call_id") or message.get("id"),
                 "response": " ".join(p.get("content", "") for p in parts if p["type"] == "text")}]
    return parts


def normalize(raw: Any, where: Where, at: str) -> list[dict[str, Any]]:
    """A message list in either shape as `[{role, parts}]`."""
    items = where.want_list(raw, at, "an array of messages")
    out = []
    for i, message in enumerate(items):
        mat = f"{at}[{i}]"
        message = where.want_dict(message, mat, "a message object")
        role = message.get("role", "assistant")
        if not isinstance(role, str):
            where.fail(f"{mat}.role", f"expected a role string, got {json_type(role)}")
        if "parts" in message:
            parts = [where.want_dict(p, f"{mat}.parts[{j}]", "a message part object")
                     for j, p in enumerate(where.want_list(message["parts"], f"{mat}.parts"))]
        else:
            parts = _openai_parts(message, where, mat)
        out.append({"role": role, "parts": parts, "at": mat})
    return out


def _indexed(attrs: dict[str, Any], kind: str) -> list[dict[str, Any]] | None:
    """OpenLLMetry's `gen_ai.<kind>.<i>.<field>` attributes as OpenAI-shaped messages."""
    rows: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        match = INDEXED.match(key)
        if not match or match[1] != kind:
            continue
        row = rows.setdefault(int(match[2]), {})
        field = match[3]
        call = re.match(r"^tool_calls\.(\d+)\.(name|arguments|id)$", field)
        if call:
            calls = row.setdefault("tool_calls", {})
            calls.setdefault(int(call[1]), {})[call[2]] = value
        else:
            row[field] = value
    if not rows:
        return None
    out = []
    for i in sorted(rows):
        row = rows[i]
        calls = row.pop("tool_calls", {})
        if calls:
            row["tool_calls"] = [{"id": c.get("id"), "function": {"name": c.get("name"), "arguments": c.get("arguments")}}
                                 for _, c in sorted(calls.items())]
        out.append(row)
    return out


def _event_messages(span: Span, names: tuple[str, ...]) -> list[dict[str, Any]] | None:
    """Per-message span events (`gen_ai.user.message`, `gen_ai.choice`, ...) as OpenAI-shaped messages."""
    out = []
    for event in span.events:
        name = event.get("name")
        if name not in names:
            continue
        attrs = event.get("attributes") or {}
        body = decoded(attrs.get("gen_ai.event.content"))
        body = body if isinstance(body, dict) else {k: decoded(v) for k, v in attrs.items()}
        if name == "gen_ai.choice":
            inner = body.get("message")
            body = inner if isinstance(inner, dict) else body
            out.append({"role": "assistant", **{k: v for k, v in body.items() if k != "role"}})
        else:
            out.append({**body, "role": MESSAGE_EVENTS[name]})
    return out or None


def span_input(span: Span, where: Where) -> list[dict[str, Any]] | None:
    attrs = span.attributes
    at = f"{span.at}.attributes"
    for key in ("gen_ai.input.messages", "gen_ai.prompt"):
        if key in attrs:
            value = decoded(attrs[key])
            if isinstance(value, str):  # a bare prompt string (text completion)
                return [{"role": "user", "parts": [{"type": "text", "content": value}], "at": f"{at}.{key}"}]
            return normalize(value, where, f"{at}.{key}")
    indexed = _indexed(attrs, "prompt")
    if indexed is not None:
        return normalize(indexed, where, f"{at}.gen_ai.prompt")
    for event in span.events:
        if event.get("name") == "gen_ai.content.prompt":
            value = decoded((event.get("attributes") or {}).get("gen_ai.prompt"))
            if isinstance(value, list):
                return normalize(value, where, f"{span.at}.events.gen_ai.content.prompt")
    events = _event_messages(span, tuple(MESSAGE_EVENTS))
    return normalize(events, where, f"{span.at}.events") if events is not None else None


def span_output(span: Span, where: Where) -> list[dict[str, Any]] | None:
    attrs = span.attributes
    at = f"{span.at}.attributes"
    for key in ("gen_ai.output.messages", "gen_ai.completion"):
        if key in attrs:
            value = decoded(attrs[key])
            if isinstance(value, str):
                return [{"role": "assistant", "parts": [{"type": "text", "content": value}], "at": f"{at}.{key}"}]
            return normalize(value, where, f"{at}.{key}")
    indexed = _indexed(attrs, "completion")
    if indexed is not None:
        return normalize(indexed, where, f"{at}.gen_ai.completion")
    if "gen_ai.output" in attrs:
        return [{"role": "assistant", "parts": _any_agent_output(attrs), "at": f"{at}.gen_ai.output"}]
    for event in span.events:
        if event.get("name") == "gen_ai.content.completion":
            value = decoded((event.get("attributes") or {}).get("gen_ai.completion"))
            if isinstance(value, list):
                return normalize(value, where, f"{span.at}.events.gen_ai.content.completion")
    events = _event_messages(span, ("gen_ai.choice",))
    return normalize(events, where, f"{span.at}.events") if events is not None else None


def _any_agent_output(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    raw = attrs.get("gen_ai.output")
    value = decoded(raw) if attrs.get("gen_ai.output.type") == "json" else raw
    if isinstance(value, list) and value and all(isinstance(v, dict) and "tool.name" in v for v in value):
        return [{"type": "tool_call", "id": v.get("tool.id"), "name": v.get("tool.name"), "arguments": v.get("tool.args")}
                for v in value]
    return [{"type": "text", "content": _text(raw)}]


def system_instructions(span: Span) -> str | None:
    value = decoded(span.attributes.get("gen_ai.system_instructions"))
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(p.get("content")) for p in value if isinstance(p, dict) and p.get("type") == "text")
    return None


# -- to LangChain -------------------------------------------------------------------------------------------


def to_messages(message: dict[str, Any], where: Where, prefix: str, position: str) -> list[BaseMessage]:
    """One `{role, parts}` message as LangChain messages (a tool role's responses become ToolMessages)."""
    at = message["at"]
    role = message["role"]
    blocks: list[Any] = []
    calls: list[Any] = []
    responses: list[ToolMessage] = []
    compaction: str | None = None
    for j, part in enumerate(message["parts"]):
        pat = f"{at}.parts[{j}]"
        ptype = part.get("type")
        if ptype == "text":
            blocks.append({"type": "text", "text": _text(part.get("content"))})
        elif ptype == "reasoning":
            blocks.append({"type": "reasoning", "reasoning": _text(part.get("content"))})
        elif ptype == "tool_call":
            name = part.get("name")
            if not isinstance(name, str):
                where.fail(f"{pat}.name", f"expected a tool name string, got {json_type(name)}")
            args, error = parse_arguments(decoded(part.get("arguments")) if isinstance(part.get("arguments"), str)
                                          else part.get("arguments"))
            if args is None:
                args = {"arguments": part.get("arguments")}  # kept as given: the call was made with it
            call_id = part.get("id")
            calls.append(tool_call(name=name, args=args,
                                   id=call_id.strip() if isinstance(call_id, str) and call_id.strip()
                                   else f"{prefix}-{position}-call{j}"))
        elif ptype == "tool_call_response":
            call_id = part.get("id")
            result = part.get("response", part.get("result"))
            responses.append(ToolMessage(content=_text(decoded(result) if isinstance(result, str) else result),
                                         tool_call_id=call_id.strip() if isinstance(call_id, str) else f"{prefix}-{position}-orphan{j}",
                                         id=stable_id(prefix, f"{position}.{j}", (call_id, result))))
        elif ptype == "compaction":
            compaction = _text(part.get("content"))
        elif ptype in ("blob", "file", "uri", "media"):
            blocks.append(part.get("block") if ptype == "media" else {"type": "file", "otel_part": dict(part)})
        else:
            blocks.append({"type": "text", "text": json.dumps(part, ensure_ascii=False, default=str)})
    out: list[BaseMessage] = []
    content: str | list[Any] = ("\n".join(b["text"] for b in blocks)
                                if all(isinstance(b, dict) and b.get("type") == "text" for b in blocks) else blocks)
    mid = stable_id(prefix, position, (role, message["parts"]))
    if role == "system":
        out.append(SystemMessage(content=content, id=mid))
    elif role in ("assistant", "model"):
        out.append(AIMessage(content=content, tool_calls=calls, id=mid))
    elif role != "tool" and (blocks or compaction is not None or not responses):
        out.append(HumanMessage(content=content, id=mid))
    if compaction is not None and out:
        out[-1].additional_kwargs[COMPACTION_KEY] = compaction
    return out + responses
