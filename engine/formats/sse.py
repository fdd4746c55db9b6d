"""Streamed model responses (server-sent events) assembled into the one response they stand for.

Two recordings of a stream are read:
- the SSE body as sent (`event: …` / `data: {…}` lines, events separated by a blank line, `data:
  [DONE]` at the end of an OpenAI stream, `:` comment lines), as HTTP recorders and proxies keep it;
- one JSON chunk a line, as the Vercel AI SDK's provider fixtures (`__fixtures__/*.chunks.txt`) keep it.

The chunks are the providers' streaming events:
- Anthropic Messages (platform.claude.com/docs/en/build-with-claude/streaming): `message_start`
  (the message with its first usage), `content_block_start` / `content_block_delta` (`text_delta`,
  `thinking_delta`, `signature_delta`, `input_json_delta` — a tool_use block's `input` arrives as
  partial JSON strings) / `content_block_stop`, `message_delta` (stop reason and the final usage,
  which replaces the start's counts it repeats), `message_stop`, `ping`, `error`;
- OpenAI Chat Completions (`chat.completion.chunk`): `choices[].delta` with `content` and
  `tool_calls[]` fragments by `index` (the arguments string concatenated), a final chunk with `usage`
  when `stream_options.include_usage` asked for it;
- OpenAI Responses (`response.*` events): the response in `response.completed` (or
  `response.incomplete` / `response.failed`) holds the output and usage; without one, the
  `response.output_item.done` items.
"""

from __future__ import annotations

import json
from typing import Any

from engine.formats.jsonshape import parse_arguments

ANTHROPIC_TYPES = frozenset({"message_start", "content_block_start", "content_block_delta", "content_block_stop",
                             "message_delta", "message_stop", "ping", "error"})


def chunks(text: str) -> list[dict[str, Any]] | None:
    """The JSON chunks of an SSE body or a chunk-per-line file, or None when the text is neither."""
    lines = text.splitlines()
    if any(line.startswith(("data:", "event:")) for line in lines[:20]):
        out: list[dict[str, Any]] = []
        data: list[str] = []

        def flush() -> bool:
            if data:
                payload = "\n".join(data)
                data.clear()
                if payload.strip() != "[DONE]":
                    try:
                        value = json.loads(payload)
                    except (ValueError, RecursionError):
                        return False
                    if not isinstance(value, dict):
                        return False
                    out.append(value)
            return True

        for line in lines:
            if not line.strip():
                if not flush():
                    return None
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
            elif not line.startswith((":", "event:", "id:", "retry:")):
                return None
        return out if flush() and out else None
    out = []
    for line in lines:
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            return None
        if not isinstance(value, dict):
            return None
        out.append(value)
    return out or None


def provider_of(items: list[dict[str, Any]]) -> str | None:
    """"anthropic", "openai_chat" or "openai_responses" from the chunks' shapes, else None."""
    first = items[0]
    kind = first.get("type")
    if isinstance(kind, str) and kind in ANTHROPIC_TYPES and any(i.get("type") == "message_start" for i in items):
        return "anthropic"
    if str(first.get("object", "")).startswith("chat.completion") and isinstance(first.get("choices"), list):
        return "openai_chat"
    if isinstance(kind, str) and kind.startswith("response.") and any(isinstance(i.get("response"), dict)
                                                                    or isinstance(i.get("item"), dict) for i in items):
        return "openai_responses"
    return None


def anthropic_message(items: list[dict[str, Any]]) -> dict[str, Any]:
    """The Messages API response a stream of Anthropic events builds."""
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    # a block's streamed text, thinking and signature pieces, joined once at the end: adding each delta to
    # the text so far copies it every time (quadratic in a long answer's deltas)
    pieces: dict[int, dict[str, list[str]]] = {}
    partial: dict[int, list[str]] = {}
    usage: dict[str, Any] = {}
    for event in items:
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            message = {k: v for k, v in event["message"].items() if k != "content"}
            usage.update(event["message"].get("usage") or {})
            for k, block in enumerate(event["message"].get("content") or []):
                if isinstance(block, dict):
                    blocks[k] = dict(block)
                    pieces.pop(k, None)
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            blocks[_index(event)] = dict(event["content_block"])
            pieces.pop(_index(event), None)
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            k, delta = _index(event), event["delta"]
            block = blocks.setdefault(k, {"type": "text", "text": ""})
            dtype = delta.get("type")
            field = _DELTA_FIELDS.get(dtype) if isinstance(dtype, str) else None
            if field is not None:
                parts = pieces.setdefault(k, {})
                if field not in parts:
                    parts[field] = [str(block.get(field) or "")]
                parts[field].append(str(delta.get(field) or ""))
            elif dtype == "input_json_delta":
                partial.setdefault(k, []).append(str(delta.get("partial_json") or ""))
            elif dtype == "citations_delta" and isinstance(delta.get("citation"), dict):
                block.setdefault("citations", []).append(delta["citation"])
        elif kind == "message_delta":
            ended: dict[str, Any] = event["delta"] if isinstance(event.get("delta"), dict) else {}
            message.update({k: v for k, v in ended.items() if k in ("stop_reason", "stop_sequence")})
            usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
    for k, fields in pieces.items():
        for name, texts in fields.items():
            blocks[k][name] = "".join(texts)
    for k, texts in partial.items():
        arguments = "".join(texts)
        args, _error = parse_arguments(arguments)
        blocks[k]["input"] = args if args is not None else {"arguments": arguments}
    message.setdefault("role", "assistant")
    message["content"] = [blocks[k] for k in sorted(blocks)]
    if usage:
        message["usage"] = usage
    return message


# content_block_delta types whose text is added to a field of the block
_DELTA_FIELDS = {"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "signature"}


def _index(event: dict[str, Any]) -> int:
    value = event.get("index")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def openai_chat_completion(items: list[dict[str, Any]]) -> dict[str, Any]:
    """The `chat.completion` a stream of `chat.completion.chunk`s builds (the first choice)."""
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    out: dict[str, Any] = {"object": "chat.completion"}
    finish = None
    for chunk in items:
        for key in ("id", "model", "created"):
            if key in chunk and key not in out:
                out[key] = chunk[key]
        if isinstance(chunk.get("usage"), dict):
            out["usage"] = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            finish = choice.get("finish_reason") or finish
            delta: dict[str, Any] = choice["delta"] if isinstance(choice.get("delta"), dict) else {}
            if isinstance(delta.get("content"), str):
                content.append(delta["content"])
            for call in delta.get("tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                k: int = call["index"] if isinstance(call.get("index"), int) else len(calls)
                # the name and arguments pieces, joined once at the end (adding each to the string so far
                # copies it every time: quadratic in a long call's chunks)
                slot = calls.setdefault(k, {"type": "function", "function": {"name": [], "arguments": []}})
                if isinstance(call.get("id"), str):
                    slot["id"] = call["id"]
                function: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else {}
                if isinstance(function.get("name"), str):
                    slot["function"]["name"].append(function["name"])
                if isinstance(function.get("arguments"), str):
                    slot["function"]["arguments"].append(function["arguments"])
    for slot in calls.values():
        slot["function"] = {key: "".join(parts) for key, parts in slot["function"].items()}
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) if content else None}
    if calls:
        message["tool_calls"] = [calls[k] for k in sorted(calls)]
    out["choices"] = [{"index": 0, "message": message, "finish_reason": finish}]
    return out


def openai_response(items: list[dict[str, Any]]) -> dict[str, Any]:
    """The Responses API response a stream of `response.*` events ends with."""
    final = next((i["response"] for i in reversed(items) if isinstance(i.get("response"), dict)
                  and i.get("type") in ("response.completed", "response.incomplete", "response.failed")), None)
    if final is not None and final.get("output"):
        return final
    base = dict(final or next((i["response"] for i in items if isinstance(i.get("response"), dict)), {}))
    base.setdefault("object", "response")
    base["output"] = [i["item"] for i in items if i.get("type") == "response.output_item.done" and isinstance(i.get("item"), dict)]
    return base


def assembled(items: list[dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    """(provider, the response) a stream's chunks build, or None when they are no provider's stream."""
    provider = provider_of(items)
    if provider == "anthropic":
        return provider, anthropic_message(items)
    if provider == "openai_chat":
        return provider, openai_chat_completion(items)
    if provider == "openai_responses":
        return provider, openai_response(items)
    return None


__all__ = ["anthropic_message", "assembled", "chunks", "openai_chat_completion", "openai_response", "provider_of"]
