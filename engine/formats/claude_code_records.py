"""Reading a Claude Code session file: its JSONL records, fast, with the place of every bad line.

Half the lines of a session are hook and bash progress records that no importer needs; they are
recognised from their bytes and never parsed. `claude_code` turns the records into a Thread.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson

from engine.base.errors import ThreadLoadError
from engine.formats.source import Source

FORMAT = "claude_code"
SNIFF_BYTES = 4 * 1024 * 1024

Record = dict[str, Any]


@dataclass
class Lines:
    """A session file's records as `(line, record)` pairs, and what was set aside unparsed."""

    rows: list[tuple[int, Record]]
    unfinished: int | None = None
    ignored_progress: int = 0


def _fast_loads(raw: bytes) -> Any:
    """orjson for speed (parsing is most of a load); the standard library for whatever orjson
    refuses (lone surrogates, bad UTF-8, broken lines), so errors read exactly as before.

    orjson reads an integer literal beyond 64 bits as a float; the record fields this importer
    uses are strings and token counts, so that cannot change a loaded thread.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw.decode("utf-8"))


def read_records(source: Source) -> Lines:
    """The records of a JSONL file, and the number of an unfinished last line that was skipped.

    A session that is still being written can end in half a line; that line is dropped (and
    reported) rather than refusing the whole session. A bad line anywhere else is an error.
    Lines split on "\\n" only: Claude Code writes U+2028 and friends raw inside strings, where
    `str.splitlines()` would cut a record in two. Work stays on bytes until a line is parsed.
    """
    bom = 3 if source.data.startswith(b"\xef\xbb\xbf") else 0
    data = source.data[bom:]
    if not data.strip():
        raise ThreadLoadError("file is empty", path=source.label, format=FORMAT)
    if b"\x00" in data[:8192]:
        raise ThreadLoadError("file is binary, not text (NUL bytes found)", path=source.label, format=FORMAT)
    lines = data.split(b"\n")
    last = len(lines)
    while last > 0 and not lines[last - 1].strip():
        last -= 1
    unfinished = last if last and not data.rstrip(b"\r").endswith(b"\n") else None
    rows: list[tuple[int, Record]] = []
    ignored = 0
    offset = bom  # of the current line, for a file-wide byte offset in UTF-8 errors
    for n, raw in enumerate(lines[:last], start=1):
        start, offset = offset, offset + len(raw) + 1
        if not raw or raw.isspace():
            continue
        if _PROGRESS in raw and (_HOOK_PROGRESS in raw or _BASH_PROGRESS in raw) and _MESSAGE not in raw:
            ignored += 1
            continue
        try:
            value = _fast_loads(raw)
        except UnicodeDecodeError as exc:
            raise ThreadLoadError(f"not UTF-8 text (invalid byte at offset {start + exc.start})", path=source.label,
                                  format=FORMAT, location=f"line {n}") from None
        except json.JSONDecodeError as exc:
            if n == unfinished and n > 1:
                return Lines(rows, n, ignored)
            raise ThreadLoadError(f"invalid JSON on this line ({exc.msg})", path=source.label, format=FORMAT,
                                  location=f"line {n}, column {exc.colno}") from None
        except ValueError as exc:  # an integer literal above Python's digit limit
            raise ThreadLoadError(f"invalid JSON on this line ({exc})", path=source.label, format=FORMAT,
                                  location=f"line {n}") from None
        except RecursionError:
            raise ThreadLoadError("JSON is nested too deeply", path=source.label, format=FORMAT,
                                  location=f"line {n}") from None
        if not isinstance(value, dict):
            raise ThreadLoadError(f"expected a JSON object, got {type(value).__name__}", path=source.label,
                                  format=FORMAT, location=f"line {n}")
        rows.append((n, value))
    return Lines(rows, None, ignored)


# Hook and bash progress records are about half the lines of a session and never needed: they are
# recognised without parsing. These markers can only match JSON syntax, never string content (in a
# string every quote follows a backslash), and a line holding a `message` object is always parsed.
_PROGRESS = b'"type":"progress","data":{"type":"'
_HOOK_PROGRESS = _PROGRESS + b'hook_progress"'
_BASH_PROGRESS = _PROGRESS + b'bash_progress"'
_MESSAGE = b'"message":{'


def head_records(source: Source, limit: int) -> list[Any]:
    """The first parseable lines, up to the first bad one (a live session may end mid-line)."""
    out: list[Any] = []
    data, start = source.data, 0
    if data.startswith(b"\xef\xbb\xbf"):
        start = 3
    while len(out) < limit and start < min(len(data), SNIFF_BYTES):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line = data[start:end].decode("utf-8", "replace")
        start = end + 1
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except (ValueError, RecursionError):
            break
    return out


def is_session_record(value: Any) -> bool:
    if not (isinstance(value, dict) and isinstance(value.get("type"), str)):
        return False
    if value["type"] == "summary" and isinstance(value.get("leafUuid"), str):
        return True  # Claude Code 1.0.x wrote these without a sessionId, often many at the top
    return "sessionId" in value and ("uuid" in value or value["type"] in ("queue-operation", "summary"))
