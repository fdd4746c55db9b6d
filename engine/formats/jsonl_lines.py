"""JSON Lines session files (Codex rollouts, Gemini CLI chats): one object a line, bad lines named.

An agent appends to its session file while it runs, so a file copied mid-session can end in half a
line: that last line is set aside (and reported) instead of refusing the session. Any other bad
line is an error naming its number. Lines split on "\\n" only: JSON writers put U+2028 and friends
raw inside strings, where `str.splitlines()` would cut a record in two.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson

from engine.base.errors import ThreadLoadError
from engine.formats.jsonshape import json_type
from engine.formats.source import Source

SNIFF_BYTES = 4 * 1024 * 1024


@dataclass
class JsonLines:
    """The objects of a JSONL file as `(line number, object)`, and an unfinished last line set aside."""

    rows: list[tuple[int, dict[str, Any]]]
    unfinished: int | None = None


def _loads(raw: bytes) -> Any:
    """orjson for speed; the standard library for what orjson refuses, so errors read the same."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw.decode("utf-8"))


def read_lines(source: Source, format: str) -> JsonLines:
    """Every line of `source` parsed as a JSON object; errors name the file, `format` and the line."""
    bom = 3 if source.data.startswith(b"\xef\xbb\xbf") else 0
    data = source.data[bom:]

    def fail(message: str, location: str | None = None) -> ThreadLoadError:
        return ThreadLoadError(message, path=source.label, format=format, location=location)

    if not data.strip():
        raise fail("file is empty")
    if b"\x00" in data[:8192]:
        raise fail("file is binary, not text (NUL bytes found)")
    lines = data.split(b"\n")
    last = len(lines)
    while last > 0 and not lines[last - 1].strip():
        last -= 1
    unfinished = last if last and not data.rstrip(b"\r").endswith(b"\n") else None
    rows: list[tuple[int, dict[str, Any]]] = []
    offset = bom
    for n, raw in enumerate(lines[:last], start=1):
        start, offset = offset, offset + len(raw) + 1
        if not raw.strip():
            continue
        try:
            value = _loads(raw)
        except UnicodeDecodeError as exc:
            raise fail(f"not UTF-8 text (invalid byte at offset {start + exc.start})", f"line {n}") from None
        except json.JSONDecodeError as exc:
            if n == unfinished and rows:
                return JsonLines(rows, n)
            raise fail(f"invalid JSON on this line ({exc.msg})", f"line {n}, column {exc.colno}") from None
        except ValueError as exc:  # an integer literal above Python's digit limit
            raise fail(f"invalid JSON on this line ({exc})", f"line {n}") from None
        except RecursionError:
            raise fail("JSON is nested too deeply", f"line {n}") from None
        if not isinstance(value, dict):
            raise fail(f"expected a JSON object, got {json_type(value)}", f"line {n}")
        rows.append((n, value))
    return JsonLines(rows, None)


def head_lines(source: Source, limit: int) -> list[Any]:
    """The first parseable lines, up to the first bad one (for sniffing; never raises)."""
    out: list[Any] = []
    data, start = source.data, 0
    if data.startswith(b"\xef\xbb\xbf"):
        start = 3
    while len(out) < limit and start < min(len(data), SNIFF_BYTES):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        raw = data[start:end]
        start = end + 1
        if not raw.strip():
            continue
        try:
            out.append(_loads(raw))
        except (ValueError, RecursionError):
            break
    return out

