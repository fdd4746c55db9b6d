"""Following a session while its agent writes it: each poll reads only the bytes appended since the last.

A follower keeps the byte offset of the last complete line it read. A poll reads from there to the end
of the file; a half-written last line (the agent is still writing it) is left for the next poll, never
reported as an error. The complete lines go to an incremental builder, so a poll costs what the new
lines bring, not the length of the session:

- Claude Code (append-only JSONL): `engine.formats.claude_code_follow` — the importer's scan, fed line
  by line; the new Thread shares every unchanged message with the previous one.
- Codex and Gemini CLI JSONL (append-only): new lines are parsed as they come; the importer's own pass
  runs over the parsed records kept in memory (no line is parsed twice; Gemini CLI re-appends a message
  each time it changes, so an earlier message can change).
- Gemini CLI's legacy `.json` and Cline's files are rewritten whole: a changed file is read again.

A file replaced (another inode) or cut shorter than what was read is read again from the start; so is a
Claude Code session when a compaction call's file appears beside it (its hook messages belong earlier).

Each poll that changed something returns an `Update`: the Thread, the index of its first message that is
new or changed (speed's `replay(thread, config, previous=run, changed_from=...)` resumes there), and what
was read.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from engine.base.errors import ThreadLoadError
from engine.base.files import RefusedFile, file_kind
from engine.formats.claude_code_follow import ClaudeCodeFollow
from engine.formats.claude_code_records import Record
from engine.thread.model import Thread
from engine.workspace.disk_sessions import SessionFile, open_under, stage_companions

MAX_SESSION_BYTES = 512 * 1024 * 1024
# Hook and bash progress records are never needed (engine/formats/claude_code_records.py skips them too).
_PROGRESS = b'"type":"progress","data":{"type":"'
_SKIPPED_PROGRESS = (_PROGRESS + b'hook_progress"', _PROGRESS + b'bash_progress"')
_MESSAGE = b'"message":{'


@dataclass
class Update:
    """What one poll found."""

    thread: Thread
    first_changed_message: int  # index in thread.messages of the first message that is new or changed
    new_bytes: int
    new_lines: int
    waiting_line: bool  # a half-written last line is waited for
    reread: bool  # the file was read from its start (the first poll, a replaced file, a rescan)


@dataclass
class _Cursor:
    dev: int = -1
    ino: int = -1
    offset: int = 0  # bytes up to the end of the last complete line read
    line: int = 0  # lines read so far


def _share_prefix(old: Thread, new: Thread, first: int) -> None:
    """Give the new Thread the old one's message and usage objects before `first` (they are equal): a
    resumed replay recognises an unchanged prefix by identity."""
    for i in range(first):
        message = old.messages[i]
        new.messages[i] = message
        if message.id is not None and message.id in old.usage and message.id in new.usage:
            new.usage[message.id] = old.usage[message.id]


def _first_difference(old: list[Any], new: list[Any]) -> int:
    """The first index where two message lists differ (by id and content), for the formats read whole."""
    for i, (a, b) in enumerate(zip(old, new, strict=False)):
        if a is b:
            continue
        if a.id != b.id or a.type != b.type or a.content != b.content:
            return i
        if getattr(a, "tool_calls", None) != getattr(b, "tool_calls", None):
            return i
    return min(len(old), len(new))


class Follower:
    """Follows one session file: a listed session (`session=`) or a file the user named (`path=`)."""

    def __init__(self, *, session: SessionFile | None = None, path: str | os.PathLike[str] | None = None,
                 format: str | None = None, max_bytes: int = MAX_SESSION_BYTES) -> None:
        if (session is None) == (path is None):
            raise ValueError("give a listed session or a path")
        self.session = session
        self.path = Path(path) if path is not None else session.path  # type: ignore[union-attr]
        self.format = session.format if session is not None else format
        self.max_bytes = max_bytes
        self.cursor = _Cursor()
        self.thread: Thread | None = None
        self._cc: ClaudeCodeFollow | None = None
        self._rows: list[tuple[int, dict[str, Any]]] = []  # Codex: parsed records, kept (never parsed twice)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._staged_key: tuple[Any, ...] | None = None
        self._ignored = 0
        if self.format is None:
            self.format = self._sniff_format()

    # -- reading ---------------------------------------------------------------------------------------
    def _open(self) -> int:
        if self.session is not None:
            return open_under(self.session.root, self.session.rel)
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.path, flags)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise RefusedFile(f"is {file_kind(info.st_mode)}, not a regular file")
        return fd

    def _read(self) -> tuple[bytes, os.stat_result]:
        """The bytes after the cursor (from the start when the file was replaced or cut)."""
        fd = self._open()
        try:
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) != (self.cursor.dev, self.cursor.ino) or info.st_size < self.cursor.offset:
                self._restart(info)
            want = info.st_size - self.cursor.offset
            if self.cursor.offset + want > self.max_bytes:
                raise RefusedFile("too large", limit_bytes=self.max_bytes, size_bytes=info.st_size)
            chunks, got = [], 0
            while got < want:
                chunk = os.pread(fd, want - got, self.cursor.offset + got)
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
            return b"".join(chunks), info
        finally:
            os.close(fd)

    def _restart(self, info: os.stat_result) -> None:
        self.cursor = _Cursor(info.st_dev, info.st_ino, 0, 0)
        self._cc = None
        self._rows = []

    def _sniff_format(self) -> str:
        from engine.formats import detect_format
        from engine.formats.source import Source

        fd = self._open()
        try:
            head = os.pread(fd, 1 << 20, 0)
        finally:
            os.close(fd)
        return detect_format(Source(label=str(self.path), data=head, path=self.path))

    # -- lines -----------------------------------------------------------------------------------------
    def _lines(self, data: bytes) -> tuple[list[tuple[int, bytes]], int, bool]:
        """Complete lines (numbered), the bytes they span, and whether a half line is left."""
        end = data.rfind(b"\n")
        if end < 0:
            return [], 0, bool(data.strip())
        body = data[:end]
        if self.cursor.offset == 0 and body.startswith(b"\xef\xbb\xbf"):
            body = body[3:]
        out = []
        n = self.cursor.line
        for raw in body.split(b"\n"):
            n += 1
            if raw.strip():
                out.append((n, raw))
        return out, end + 1, bool(data[end + 1:].strip())

    def _parse(self, lines: list[tuple[int, bytes]], *, skip_progress: bool) -> list[tuple[int, Record]]:
        rows: list[tuple[int, Record]] = []
        self._ignored = 0
        for n, raw in lines:
            if skip_progress and any(m in raw for m in _SKIPPED_PROGRESS) and _MESSAGE not in raw:
                self._ignored += 1
                continue
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                try:
                    value = json.loads(raw.decode("utf-8"))
                except (ValueError, RecursionError) as exc:
                    raise ThreadLoadError(f"invalid JSON on this line ({exc})", path=str(self.path),
                                          format=self.format, location=f"line {n}") from None
            if not isinstance(value, dict):
                raise ThreadLoadError(f"expected a JSON object, got {type(value).__name__}", path=str(self.path),
                                      format=self.format, location=f"line {n}")
            rows.append((n, value))
        return rows

    # -- polling ---------------------------------------------------------------------------------------
    def poll(self) -> Update | None:
        """Read what was appended since the last poll; None when nothing new is complete."""
        before = (self.cursor.dev, self.cursor.ino, self.cursor.offset)
        data, info = self._read()
        reread = self.cursor.offset == 0
        if self.session is not None and self.session.compressed:
            # a Codex rollout compressed once finished (.jsonl.zst): read whole when it changes
            if not reread and before == (info.st_dev, info.st_ino, info.st_size) and self.thread is not None:
                return None
            from engine.sessions.summary import _decompress

            return self._poll_whole(_decompress(data, self.max_bytes), info)
        if self.format == "claude_code":
            return self._poll_claude_code(data, reread)
        if self.format == "codex" or (self.format == "gemini_cli" and self.path.suffix == ".jsonl"):
            return self._poll_rows(data, reread)
        if not reread and before == (info.st_dev, info.st_ino, info.st_size) and self.thread is not None:
            return None
        return self._poll_whole(data, info)

    def _advance(self, lines: list[tuple[int, bytes]], consumed: int) -> None:
        self.cursor.offset += consumed
        if lines:
            self.cursor.line = lines[-1][0]

    def _poll_claude_code(self, data: bytes, reread: bool) -> Update | None:
        from engine.formats import mark_subagents

        lines, consumed, waiting = self._lines(data)
        if not lines and self.thread is not None:
            return None
        rows = self._parse(lines, skip_progress=True)
        if self._cc is None:
            self._cc = ClaudeCodeFollow(thread_id=self._thread_id(rows))
            self._cc.start(self._subagent_files(rows))
        else:
            self._cc.set_subagent_files(self._subagent_files(rows))
            if self._cc.needs_rescan:  # a compaction call's file appeared: read the session again once
                self.cursor = _Cursor()
                return self.poll()
        self._cc.feed(rows, self._ignored)
        self._advance(lines, consumed)
        thread, first = self._cc.thread()
        mark_subagents(thread)  # as load_thread does: a sub-agent names its parent
        if waiting:
            thread.extra["unfinished_last_line"] = self.cursor.line + 1
        self.thread = thread
        return Update(thread, first, consumed, len(lines), waiting, reread)

    def _thread_id(self, rows: list[tuple[int, Record]]) -> str:
        for _, r in rows:
            if isinstance(r.get("sessionId"), str):
                return str(r["sessionId"])
        return self.path.stem

    def _subagent_files(self, rows: list[tuple[int, Record]]) -> dict[str, Path]:
        """The session's sub-agent files: the listing's (staged, so only vetted bytes are read) or, for a
        file the user named, the importer's own search beside it."""
        if self.session is None:
            from engine.formats.claude_code_subagents import find_subagent_files
            from engine.formats.source import Source

            sid = self._cc.session.session_id if self._cc is not None and self._cc.session is not None else None
            sid = sid or next((r["sessionId"] for _, r in rows if isinstance(r.get("sessionId"), str)), None)
            if sid is None:
                return {}
            return find_subagent_files(Source(label=str(self.path), data=b"", path=self.path), [(0, {"sessionId": sid})])
        from engine.workspace.disk_sessions import relisted_companions

        companions = relisted_companions(self.session)
        key = tuple(companions)
        if key != self._staged_key:
            if self._tmp is None:
                self._tmp = tempfile.TemporaryDirectory(prefix="ctxi-follow-")
            from dataclasses import replace

            stage_companions(replace(self.session, companions=tuple(r for r, _, _ in companions)),
                             Path(self._tmp.name), self.max_bytes)
            self._staged_key = key
        if self._tmp is None:
            return {}
        folder = Path(self._tmp.name)
        stem = self.session.rel.rsplit("/", 1)[-1].removesuffix(".jsonl")
        files = {p.stem.removeprefix("agent-"): p for p in sorted(folder.glob("agent-*.jsonl"))}
        files.update((p.stem.removeprefix("agent-"), p) for p in sorted((folder / stem / "subagents").glob("agent-*.jsonl")))
        return files

    def _poll_rows(self, data: bytes, reread: bool) -> Update | None:
        """Codex and Gemini CLI JSONL: the new lines parsed once and kept; the importer's own pass over the
        kept records (Gemini CLI re-appends a message when it changes, so an old message can change)."""
        from engine.formats import apply_model_window, codex, gemini_cli, mark_subagents
        from engine.formats.source import Source

        lines, consumed, waiting = self._lines(data)
        if not lines and self.thread is not None:
            return None
        self._rows.extend(self._parse(lines, skip_progress=False))
        self._advance(lines, consumed)
        if self.format == "codex":
            thread = codex.thread_from_rows(self._rows, Source(label=str(self.path), data=b"", path=self.path))
        else:
            thread = gemini_cli.build_rows(self._rows, str(self.path))
        apply_model_window(thread)
        mark_subagents(thread)
        if waiting:
            thread.extra["unfinished_last_line"] = self.cursor.line + 1
        first = 0 if self.thread is None else _first_difference(self.thread.messages, thread.messages)
        if self.thread is not None:
            _share_prefix(self.thread, thread, first)
        self.thread = thread
        return Update(thread, first, consumed, len(lines), waiting, reread)

    def _poll_whole(self, data: bytes, info: os.stat_result) -> Update | None:
        from engine.formats import load_thread
        from engine.workspace.disk_sessions import staged

        try:
            if self.session is not None:
                with staged(self.session, self.max_bytes) as main:
                    thread = load_thread(main, data=data, name=str(self.path), format=self.format)
            else:
                thread = load_thread(self.path, data=data, name=str(self.path), format=self.format)
        except ThreadLoadError:
            if self.thread is not None:
                return None  # caught mid-write (a JSON document rewritten in place): the next poll reads it
            raise
        self.cursor.offset, self.cursor.dev, self.cursor.ino = info.st_size, info.st_dev, info.st_ino
        first = 0 if self.thread is None else _first_difference(self.thread.messages, thread.messages)
        if self.thread is not None:
            _share_prefix(self.thread, thread, first)
        self.thread = thread
        return Update(thread, first, len(data), data.count(b"\n"), False, True)

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass




def replay_grown(thread: Thread, config: Any, *, previous: Any = None, changed_from: int | None = None,
                 **kwargs: Any) -> Any:
    """`engine.run.replay.replay` of a grown thread, handing it the Run of the thread before it grew
    (speed's resume: only the steps from the first changed message are replayed) when `replay` takes it."""
    import inspect

    from engine.run.replay import replay

    params = inspect.signature(replay).parameters
    if previous is not None and "previous" in params:
        kwargs["previous"] = previous
        if changed_from is not None and "changed_from" in params:
            kwargs["changed_from"] = changed_from
    return replay(thread, config, **kwargs)


__all__ = ["Follower", "Update", "replay_grown"]
