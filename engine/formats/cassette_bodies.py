"""Reading a VCR cassette file: safe YAML (or JSON), its interactions, and their HTTP bodies.

vcrpy / pytest-recording write `{interactions: [{request: {method, uri, body, headers}, response:
{status: {code, message}, headers, body: {string}}}], version: 1}` (vcrpy `vcr/serializers/
yamlserializer.py`, `vcr/serialize.py`). A body is a string, bytes (YAML `!!binary`), or
`{string: ...}`; pydantic-ai's cassette serializer (`tests/json_body_serializer.py`) stores JSON
bodies already parsed as `parsed_body`. Ruby VCR writes `{encoding, base64_string}`. A response body
can still be gzip/deflate-compressed (`content-encoding`, when the recorder did not decode it) and a
streamed body is Server-Sent Events text, assembled here into the one JSON object the call returned.

Safety: only the safe loader of PyYAML (`yaml.safe_load`'s SafeLoader, its C build when present)
builds the document, so a `!!python/...` tag is refused, never run; a document whose aliases make it
visit more nodes than it has bytes is refused (alias "billion laughs"); decompressed bodies are
capped.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from dataclasses import dataclass
from typing import Any

import yaml

from engine.base.errors import ThreadLoadError
from engine.formats.source import Source

FORMAT = "vcr_cassette"
# A decompressed body bigger than this is refused (a gzip bomb would otherwise fill memory).
MAX_BODY_BYTES = 64 * 1024 * 1024
# Deeper YAML than this is refused before it is built (a cassette is a few levels deep).
MAX_DEPTH = 200
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class Interaction:
    """One recorded HTTP call, bodies decoded (JSON value, or None when absent or unreadable)."""

    position: int
    method: str
    uri: str
    request: Any
    status: int | None
    response: Any
    # Why a body could not be read (undecodable bytes, not JSON), for the skipped-interaction note.
    problem: str | None = None

    @property
    def location(self) -> str:
        return f"interactions[{self.position}]"


def fail(source: Source, message: str, location: str | None = None) -> ThreadLoadError:
    return ThreadLoadError(message, path=source.label, format=FORMAT, location=location)


def load_document(source: Source) -> Any:
    """The cassette document: JSON when it is one, else YAML through the safe loader only."""
    text = source.text()
    if text.lstrip()[:1] == "{":
        doc = source.try_json()
        if doc is not None:
            return doc
    try:
        _check_depth(text, source)
        doc = yaml.load(text, Loader=_LOADER)  # noqa: S506 - the safe loader (yaml.safe_load's), C build when present
    except yaml.constructor.ConstructorError as exc:
        tag = getattr(exc, "problem", "") or ""
        raise fail(source, f"refused: {tag.strip() or 'a YAML tag this reader does not build'} "
                           "(only plain YAML is read, never Python tags)", _mark(exc)) from None
    except yaml.MarkedYAMLError as exc:
        raise fail(source, f"invalid YAML ({exc.problem or exc.context or 'unreadable'})", _mark(exc)) from None
    except yaml.YAMLError as exc:
        raise fail(source, f"invalid YAML ({exc})") from None
    except RecursionError:
        raise fail(source, "YAML is nested too deeply to read") from None
    _check_expansion(doc, len(source.data) + 64, source)
    return doc


def _check_depth(text: str, source: Source) -> None:
    """Refuse deep nesting before building anything: libyaml's C constructor recurses without a
    limit (100,000 nested `[` crash the interpreter), while its event parser is iterative."""
    depth = 0
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise fail(source, f"YAML is nested too deeply to read (more than {MAX_DEPTH} levels)")
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1


def _mark(exc: yaml.MarkedYAMLError) -> str | None:
    mark = exc.problem_mark or exc.context_mark
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else None


def _check_expansion(doc: Any, budget: int, source: Source) -> None:
    """Refuse a document whose aliases expand it: a plain one has at most one node per byte."""
    stack = [doc]
    seen = 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > budget:
            raise fail(source, "refused: YAML aliases expand the cassette far beyond its size")
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def is_cassette(doc: Any) -> bool:
    interactions = doc.get("interactions") if isinstance(doc, dict) else None
    return (isinstance(interactions, list) and bool(interactions) and isinstance(interactions[0], dict)
            and isinstance(interactions[0].get("request"), dict))


def read_interactions(source: Source) -> list[Interaction]:
    doc = load_document(source)
    if not isinstance(doc, dict) or not isinstance(doc.get("interactions"), list):
        raise fail(source, "not a VCR cassette (no top-level 'interactions' list)", "$")
    out = []
    for i, raw in enumerate(doc["interactions"]):
        at = f"interactions[{i}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("request"), dict):
            raise fail(source, "expected an interaction with a 'request' mapping", at)
        request, response = raw["request"], raw.get("response")
        if response is not None and not isinstance(response, dict):
            raise fail(source, "expected a 'response' mapping", f"{at}.response")
        response = response or {}
        method, uri = request.get("method"), request.get("uri")
        status = response.get("status")
        code = status.get("code") if isinstance(status, dict) else status
        interaction = Interaction(
            position=i,
            method=method.upper() if isinstance(method, str) else "",
            uri=uri if isinstance(uri, str) else "",
            request=None,
            status=code if isinstance(code, int) and not isinstance(code, bool) else None,
            response=None,
        )
        try:
            interaction.request = body_value(request, source, f"{at}.request")
            interaction.response = body_value(response, source, f"{at}.response")
        except _Unreadable as exc:
            interaction.problem = str(exc)
        out.append(interaction)
    return out


class _Unreadable(Exception):
    """A body that is not text or not JSON: the interaction is skipped, with this reason."""


def header(message: dict[str, Any], name: str) -> str | None:
    """A header value (vcrpy stores lists of strings; header names in any case)."""
    headers = message.get("headers")
    if not isinstance(headers, dict):
        return None
    for key, value in headers.items():
        if isinstance(key, str) and key.lower() == name:
            if isinstance(value, list):
                value = value[0] if value else None
            return value if isinstance(value, str) else None
    return None


def body_value(message: dict[str, Any], source: Source, location: str) -> Any:
    """The body as a JSON value (an SSE stream assembled into its final object), or None."""
    if "parsed_body" in message and message["parsed_body"] is not None:
        parsed = message["parsed_body"]
        return events_value(parsed) if isinstance(parsed, str) and _looks_like_sse(parsed) else parsed
    raw = message.get("body")
    if isinstance(raw, dict):
        if "string" in raw:
            raw = raw["string"]
        elif isinstance(raw.get("base64_string"), str):  # Ruby VCR
            try:
                raw = base64.b64decode(raw["base64_string"], validate=False)
            except (binascii.Error, ValueError):
                raise _Unreadable(f"{location}.body: base64_string is not base64") from None
        else:
            return raw  # a JSON serializer that stored the body parsed
    if raw is None or raw == "" or raw == b"":
        return None
    if isinstance(raw, str):
        data = raw.encode("utf-8", "surrogatepass")
    elif isinstance(raw, (bytes, bytearray)):
        data = bytes(raw)
    else:
        return raw
    data = _decompress(data, header(message, "content-encoding"), location)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _Unreadable(f"{location}.body: not UTF-8 text (invalid byte at offset {exc.start})") from None
    content_type = header(message, "content-type") or ""
    if "event-stream" in content_type or _looks_like_sse(text):
        return events_value(text)
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise _Unreadable(f"{location}.body: not JSON") from None


def _decompress(data: bytes, encoding: str | None, location: str) -> bytes:
    encoding = (encoding or "").lower()
    if data[:2] == b"\x1f\x8b" or "gzip" in encoding:
        wbits = 16 + zlib.MAX_WBITS
    elif "deflate" in encoding:
        wbits = zlib.MAX_WBITS
    elif "br" in encoding or "zstd" in encoding:
        raise _Unreadable(f"{location}.body: {encoding}-compressed (only gzip and deflate are read)")
    else:
        return data
    try:
        inflater = zlib.decompressobj(wbits)
        out = inflater.decompress(data, MAX_BODY_BYTES)
    except zlib.error:
        if data[:2] == b"\x1f\x8b":
            raise _Unreadable(f"{location}.body: broken gzip data") from None
        return data  # the header said gzip but the recorder had already decoded it
    if inflater.unconsumed_tail:
        raise _Unreadable(f"{location}.body: decompresses to more than {MAX_BODY_BYTES // (1024 * 1024)} MiB")
    return out


# -- Server-Sent Events --------------------------------------------------------------------------
def _looks_like_sse(text: str) -> bool:
    head = text.lstrip()[:200]
    return head.startswith(("event:", "data:", ": ")) and "\n" in text


def parse_events(text: str) -> list[tuple[str | None, Any]]:
    """SSE frames as (event name, parsed JSON data); `[DONE]` and non-JSON data are left out."""
    events: list[tuple[str | None, Any]] = []
    name: str | None = None
    data: list[str] = []

    def flush() -> None:
        nonlocal name, data
        if data:
            payload = "\n".join(data)
            if payload.strip() != "[DONE]":
                try:
                    events.append((name, json.loads(payload)))
                except (ValueError, RecursionError):
                    pass
        name, data = None, []

    for line in text.splitlines():
        if not line.strip():
            flush()
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
    flush()
    return events


def events_value(text: str) -> Any:
    """A streamed body as the object the call returned: Anthropic's message or the Responses response."""
    events = parse_events(text)
    kinds = [payload.get("type") for _, payload in events if isinstance(payload, dict)]
    if "message_start" in kinds:
        return _anthropic_message(events)
    for _, payload in reversed(events):
        if isinstance(payload, dict) and payload.get("type") in (
                "response.completed", "response.incomplete", "response.failed") and isinstance(payload.get("response"), dict):
            return payload["response"]
    started = next((p["response"] for _, p in events if isinstance(p, dict) and p.get("type") == "response.created"
                    and isinstance(p.get("response"), dict)), None)
    if started is not None:  # a stream cut short: the items that were done
        items = [p["item"] for _, p in events if isinstance(p, dict) and p.get("type") == "response.output_item.done"
                 and isinstance(p.get("item"), dict)]
        return {**started, "output": items}
    return None


def _anthropic_message(events: list[tuple[str | None, Any]]) -> dict[str, Any] | None:
    """Anthropic's streaming events rebuilt into the Message (docs: "Streaming Messages")."""
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    partial_json: dict[int, str] = {}
    for _, event in events:
        if not isinstance(event, dict):
            continue
        etype = event.get("type")
        if etype == "message_start" and isinstance(event.get("message"), dict):
            message = dict(event["message"])
            message["content"] = list(message.get("content") or [])
        elif etype == "content_block_start" and isinstance(event.get("content_block"), dict):
            blocks[_int(event.get("index"), len(blocks))] = dict(event["content_block"])
        elif etype == "content_block_delta" and isinstance(event.get("delta"), dict):
            index = _int(event.get("index"), len(blocks) - 1)
            block = blocks.setdefault(index, {"type": "text", "text": ""})
            delta = event["delta"]
            if delta.get("type") == "input_json_delta":
                partial_json[index] = partial_json.get(index, "") + str(delta.get("partial_json", ""))
                continue
            for key, value in delta.items():
                if key != "type" and isinstance(value, str):
                    block[key] = (block.get(key) or "") + value if isinstance(block.get(key, ""), str) else value
        elif etype == "message_delta" and message is not None:
            delta = event.get("delta")
            if isinstance(delta, dict):
                message.update({k: v for k, v in delta.items() if v is not None})
            usage = event.get("usage")
            if isinstance(usage, dict):
                merged = dict(message.get("usage") or {})
                merged.update({k: v for k, v in usage.items() if v is not None})
                message["usage"] = merged
            if isinstance(event.get("context_management"), dict):
                message["context_management"] = event["context_management"]
    if message is None:
        return None
    for index, text in partial_json.items():
        try:
            blocks[index]["input"] = json.loads(text) if text.strip() else {}
        except (ValueError, RecursionError):
            blocks[index]["input"] = {"partial_json": text}
    message["content"] = [blocks[k] for k in sorted(blocks)] or message["content"]
    return message


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
