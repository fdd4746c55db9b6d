"""OpenTelemetry spans from the two shapes trace files come in, as one plain `Span` record.

- **OTLP JSON** (opentelemetry-proto `ExportTraceServiceRequest`, what the Collector's file exporter
  and OTLP/HTTP JSON write): `{resourceSpans: [{resource, scopeSpans: [{scope, spans: [{traceId,
  spanId, parentSpanId, name, kind, startTimeUnixNano, endTimeUnixNano, attributes: [{key, value:
  {stringValue | intValue | doubleValue | boolValue | arrayValue {values} | kvlistValue {values} |
  bytesValue}}], events: [{timeUnixNano, name, attributes}], status}]}]}]}`; `instrumentationLibrarySpans`
  is the pre-1.0 name of `scopeSpans`; one request per line in JSON Lines files. Integers are JSON
  strings (proto3's int64 mapping).
- **Flattened dumps** (the Python SDK's `ReadableSpan.to_json()`, any-agent's `AgentTrace`):
  `{name, context {trace_id, span_id}, parent {span_id} | parent_id, start_time, end_time,
  attributes: {key: value}, events: [{name, timestamp, attributes}]}`, as a list or under `spans`.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from engine.formats.jsonshape import Where, json_type

MAX_SPANS = 1_000_000


@dataclass
class Span:
    name: str
    trace_id: str | None
    span_id: str | None
    parent_id: str | None
    start: float | None  # nanoseconds since the epoch when known, for ordering
    attributes: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)  # {name, attributes}
    at: str = "$"
    order: int = 0


def _id(value: Any) -> str | None:
    """A trace or span id as hex text: OTLP writes hex strings, flattened dumps hex or integers."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return format(value, "x")
    if isinstance(value, str) and value:
        return value.removeprefix("0x").lower()
    return None


def any_value(value: Any, where: Where, at: str) -> Any:
    """An OTLP `AnyValue` as the plain value it holds."""
    value = where.want_dict(value, at, "an OTLP AnyValue object")
    if "stringValue" in value:
        return where.want_text(value["stringValue"], f"{at}.stringValue")
    if "boolValue" in value:
        if not isinstance(value["boolValue"], bool):
            where.fail(f"{at}.boolValue", f"expected a boolean, got {json_type(value['boolValue'])}")
        return value["boolValue"]
    if "intValue" in value:
        raw = value["intValue"]
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.lstrip("-").isdigit() and len(raw) < 30:
            return int(raw)
        where.fail(f"{at}.intValue", f"expected an integer (or its decimal string), got {json_type(raw)}")
    if "doubleValue" in value:
        raw = value["doubleValue"]
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            return float(raw)
        where.fail(f"{at}.doubleValue", f"expected a number, got {json_type(raw)}")
    if "arrayValue" in value:
        arr = where.want_dict(value["arrayValue"], f"{at}.arrayValue")
        items = where.want_list(arr.get("values", []), f"{at}.arrayValue.values")
        return [any_value(v, where, f"{at}.arrayValue.values[{i}]") for i, v in enumerate(items)]
    if "kvlistValue" in value:
        kv = where.want_dict(value["kvlistValue"], f"{at}.kvlistValue")
        return key_values(kv.get("values", []), where, f"{at}.kvlistValue.values")
    if "bytesValue" in value:
        raw = where.want_text(value["bytesValue"], f"{at}.bytesValue")
        try:
            return base64.b64decode(raw, validate=True).decode("utf-8", "replace")
        except ValueError:
            where.fail(f"{at}.bytesValue", "expected base64 bytes")
    return None  # an empty AnyValue


def key_values(items: Any, where: Where, at: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, item in enumerate(where.want_list(items, at, "an array of {key, value} attributes")):
        item = where.want_dict(item, f"{at}[{i}]", "an attribute {key, value} object")
        key = where.want_text(item.get("key"), f"{at}[{i}].key")
        out[key] = any_value(item.get("value", {}), where, f"{at}[{i}].value")
    return out


def _nanos(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        if value.isdigit():
            return float(value)
        from datetime import datetime

        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1e9
        except ValueError:
            return None
    return None


def is_otlp(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("resourceSpans"), list)


def otlp_spans(doc: dict[str, Any], where: Where, base: str, out: list[Span]) -> None:
    for r, resource in enumerate(where.want_list(doc["resourceSpans"], f"{base}.resourceSpans")):
        rat = f"{base}.resourceSpans[{r}]"
        resource = where.want_dict(resource, rat, "a resourceSpans object")
        scopes = resource.get("scopeSpans", resource.get("instrumentationLibrarySpans", []))
        for s, scope in enumerate(where.want_list(scopes, f"{rat}.scopeSpans")):
            sat = f"{rat}.scopeSpans[{s}]"
            scope = where.want_dict(scope, sat, "a scopeSpans object")
            for k, raw in enumerate(where.want_list(scope.get("spans", []), f"{sat}.spans")):
                at = f"{sat}.spans[{k}]"
                span = where.want_dict(raw, at, "a span object")
                events = []
                for e, event in enumerate(where.want_list(span.get("events", []), f"{at}.events")):
                    event = where.want_dict(event, f"{at}.events[{e}]", "a span event object")
                    events.append({"name": event.get("name"),
                                   "attributes": key_values(event.get("attributes", []), where, f"{at}.events[{e}].attributes")})
                name = span.get("name")
                out.append(Span(
                    name=name if isinstance(name, str) else "",
                    trace_id=_id(span.get("traceId")), span_id=_id(span.get("spanId")),
                    parent_id=_id(span.get("parentSpanId")), start=_nanos(span.get("startTimeUnixNano")),
                    attributes=key_values(span.get("attributes", []), where, f"{at}.attributes"),
                    events=events, at=at, order=len(out)))
                if len(out) > MAX_SPANS:
                    where.fail(at, f"more than {MAX_SPANS:,} spans")


def is_flat_span(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("attributes"), dict) and isinstance(value.get("name"), str)
            and ("context" in value or "span_id" in value or "spanId" in value))


def flat_spans(items: list[Any], where: Where, base: str, out: list[Span]) -> None:
    for k, raw in enumerate(items):
        at = f"{base}[{k}]"
        span = where.want_dict(raw, at, "a span object")
        attrs = where.want_dict(span.get("attributes", {}), f"{at}.attributes", "an attributes object")
        raw_context = span.get("context")
        context: dict[str, Any] = raw_context if isinstance(raw_context, dict) else {}
        parent = span.get("parent")
        parent_id = parent.get("span_id") if isinstance(parent, dict) else span.get("parent_id", span.get("parentSpanId"))
        events = []
        for e, event in enumerate(where.want_list(span.get("events") or [], f"{at}.events")):
            event = where.want_dict(event, f"{at}.events[{e}]", "a span event object")
            eattrs = event.get("attributes") or {}
            events.append({"name": event.get("name"),
                           "attributes": where.want_dict(eattrs, f"{at}.events[{e}].attributes", "an attributes object")})
        out.append(Span(
            name=span["name"] if isinstance(span.get("name"), str) else "",
            trace_id=_id(context.get("trace_id", span.get("trace_id", span.get("traceId")))),
            span_id=_id(context.get("span_id", span.get("span_id", span.get("spanId")))),
            parent_id=_id(parent_id), start=_nanos(span.get("start_time", span.get("startTimeUnixNano"))),
            attributes=attrs, events=events, at=at, order=len(out)))
