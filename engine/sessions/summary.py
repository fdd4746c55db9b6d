"""What the sessions list shows about one session, read in one pass over its bytes, no Thread or Run built.

Per session: agent, project, title, when it started and last changed, model, steps (model calls),
peak (the largest request the provider recorded), the window, overflows (calls whose recorded request
was over the window), compactions (the agent's own), cost and cache hit rate (the recorded usage priced
from engine/data/prices.yaml), sub-agents.

Claude Code sessions are read by a fast path: most of a session's bytes are tool results and progress
records the list does not need, so only the lines that can matter are parsed — assistant records
(usage, model, message id), compaction boundaries, title records, and the user records up to the first
prompt — each line's kind read from its head (its `"type":"…"`, or the message's `"role":"…"` when the
message comes first: JSON syntax, which string content cannot fake, every quote in it being escaped). The counts follow the importer (`engine.formats.claude_code_session`): streamed
records of one response share a `message.id` and count once; records repeating a uuid, sidechain
records and `isApiErrorMessage` replies are not model calls; input fields repeat on every streamed
record and the last record's `output_tokens` is final. One difference, stated: a rewound branch (the
user went back to an earlier prompt) is counted here and dropped when the session is opened.

Codex, Gemini CLI and Cline files are summarised from the importer's Thread (their call boundaries and
record replays are the importer's rules; Gemini CLI and Cline files are JSON documents, read whole).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

import orjson

from engine.base.errors import ContextInspectorError
from engine.base.files import RefusedFile
from engine.cost.bill import price_recorded
from engine.cost.prices import price_for
from engine.thread.model import RecordedUsage, Thread, title_line
from engine.tokens.windows import model_window
from engine.workspace.disk_sessions import SessionFile, read_under

# A session file larger than this is listed with an error instead of read (the importers' limit).
MAX_SESSION_BYTES = 512 * 1024 * 1024
SYNTHETIC_MODEL = "<synthetic>"
# A session whose file changed this recently is shown as live (still being written).
LIVE_SECONDS = 120
# Markers of the lines the Claude Code fast path parses (JSON syntax only, see the module docstring).
_ASSISTANT = b'"type":"assistant"'
_USER = b'"type":"user"'
_BOUNDARY = b'compact_boundary"'
_TITLE_MARKERS = (b'"type":"custom-title"', b'"type":"ai-title"', b'"type":"summary"')
_TYPE = b'"type":"'
_ROLE = b'"role":"'
# The record types Claude Code writes at the top level of a line (a first "type" of any other value is
# the message's or a content block's).
_RECORD_KINDS = frozenset({b"assistant", b"user", b"system", b"progress", b"attachment", b"file-history-snapshot",
                           b"queue-operation", b"summary", b"custom-title", b"ai-title", b"agent-name", b"last-prompt",
                           b"mode", b"permission-mode"})
_WANTED = frozenset({b"assistant", b"system", b"user", b"custom-title", b"ai-title", b"summary"})
_KIND_MARKERS = ((b"assistant", _ASSISTANT), (b"system", _BOUNDARY), (b"custom-title", _TITLE_MARKERS[0]),
                 (b"ai-title", _TITLE_MARKERS[1]), (b"summary", _TITLE_MARKERS[2]), (b"user", _USER))
# How far into a line its own "type" is looked for (the scalar fields before it are well under this).
HEAD_BYTES = 4096
TASK_TOOLS = ("Task", "Agent")  # engine.formats.claude_code_subagents.TASK_TOOLS


@dataclass
class Summary:
    """One row of the sessions list (and of `ctxi sessions --json`)."""

    id: str
    key: str
    agent: str
    format: str
    root: str
    path: str
    project: str | None = None
    title: str | None = None
    started: str | None = None  # the first timestamp the file records (ISO 8601)
    modified: str | None = None  # the file's modification time (ISO 8601, UTC)
    modified_ns: int = 0
    live: bool = False
    model: str | None = None
    steps: int = 0
    peak_tokens: int | None = None
    window_tokens: int | None = None
    overflows: int = 0
    compactions: int = 0
    edits: int = 0
    subagents: int = 0
    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    dollars: float | None = None
    hit_rate: float | None = None
    size_bytes: int = 0
    unfinished_last_line: bool = False
    compressed: bool = False
    error: str | None = None
    # how far the summary read (bytes) and what it needs to go on from there when the file grows
    offset: int = field(default=0, repr=False)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("offset")
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Summary:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


class NotASession(ContextInspectorError):
    """The file does not hold a session of the layout it was found in (it is left out of the list)."""


# -- usage accounting -----------------------------------------------------------------------------------
@dataclass
class Calls:
    """The recorded calls of a session: peak, totals, overflows and dollars, priced per model."""

    window: int | None = None
    peak: int | None = None
    overflows: int = 0
    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    dollars: float = 0.0
    priced: int = 0
    unpriced: int = 0

    def add(self, usage: RecordedUsage, model: str | None) -> None:
        context = usage.context_tokens
        if context is not None:
            self.peak = context if self.peak is None else max(self.peak, context)
            if self.window and context > self.window:
                self.overflows += 1
        self.input += usage.input_tokens or 0
        self.cache_read += usage.cache_read_input_tokens or 0
        self.cache_write += usage.cache_creation_input_tokens or 0
        self.output += usage.output_tokens or 0
        price = price_for(model)
        if price is None:
            self.unpriced += 1
        else:
            self.priced += 1
            # Claude Code records the TTL split; without it a write is priced as a 5-minute one (its default)
            self.dollars += price_recorded(usage, usage.output_tokens or 0, price, "5m").total

    def fill(self, s: Summary) -> None:
        s.peak_tokens, s.overflows = self.peak, self.overflows
        s.input_tokens, s.cache_read_tokens = self.input, self.cache_read
        s.cache_write_tokens, s.output_tokens = self.cache_write, self.output
        s.dollars = round(self.dollars, 6) if self.priced else None
        total = self.input + self.cache_read + self.cache_write
        s.hit_rate = round(self.cache_read / total, 4) if total else None


def _iso_ns(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="seconds")


def blank(sf: SessionFile) -> Summary:
    return Summary(id=sf.id, key=sf.key, agent=sf.agent, format=sf.format, root=str(sf.root), path=sf.rel,
                   project=sf.project, modified=_iso_ns(sf.mtime_ns), modified_ns=sf.mtime_ns,
                   live=time.time() - sf.mtime_ns / 1e9 < LIVE_SECONDS, size_bytes=sf.size, compressed=sf.compressed)


# -- Claude Code: the fast path ---------------------------------------------------------------------------
def _loads(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            return json.loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class ClaudeCodeScan:
    """What one pass over a Claude Code session keeps (resumable: a grown file is fed its new lines)."""

    session_id: str | None = None
    cwd: str | None = None
    started: str | None = None
    custom_title: str | None = None
    ai_title: str | None = None
    summary_title: str | None = None
    prompt_title: str | None = None
    model: str | None = None
    compactions: int = 0
    edits: int = 0
    records: int = 0  # session records seen (a file with none is not a Claude Code session)
    seen_uuids: set[str] = field(default_factory=set)
    task_calls: set[str] = field(default_factory=set)  # Task / Agent tool calls: each runs a sub-agent
    # message id -> [input, cache_creation, cache_read, output, cw5m, cw1h, model, context seen]
    replies: dict[str, list[Any]] = field(default_factory=dict)

    def feed(self, lines: list[bytes]) -> None:
        """Go on over these complete lines (one line per item)."""
        for raw in lines:
            self.feed_buffer(raw, 0, len(raw))

    def feed_buffer(self, data: bytes, start: int, end: int) -> None:
        """Go on over the complete lines of `data[start:end]`, parsing only the ones the list needs.

        A record's kind is read from its line's head without parsing it: Claude Code writes the record's
        scalar fields first, then `type` and `message` in either order (a first "type" of "message" is the
        message's: the message's `role` then says user or assistant); only
        assistant records, compaction boundaries, title records and the user records up to the first prompt
        are parsed. A line whose head holds no type is looked at whole."""
        pos = start
        find = data.find
        while pos < end:
            nl = find(b"\n", pos, end)
            line_end = end if nl < 0 else nl
            head_end = min(line_end, pos + HEAD_BYTES)
            at = find(_TYPE, pos, head_end)
            if at >= 0:
                value = at + len(_TYPE)
                kind = data[value:find(b'"', value, value + 40)]
                if kind not in _RECORD_KINDS:
                    # the message object came first (its "type" is "message", or a content block's): the
                    # record is a user or assistant one, as the message's role says
                    role = find(_ROLE, pos, head_end)
                    kind = data[role + len(_ROLE):find(b'"', role + len(_ROLE), role + 40)] if role >= 0 else b""
                if kind in _WANTED and (kind != b"user" or self.prompt_title is None):
                    self._line(kind, data[pos:line_end])
            elif line_end > pos:
                raw = data[pos:line_end]
                kind = next((k for k, m in _KIND_MARKERS if m in raw), b"")
                if kind:
                    self._line(kind, raw)
            pos = line_end + 1

    def _line(self, kind: bytes, raw: bytes) -> None:
        if kind == b"assistant":
            self._assistant(raw)
        elif kind == b"system":
            if _BOUNDARY not in raw:
                return
            record = _loads(raw)
            if isinstance(record, dict) and record.get("type") == "system":
                self._note(record)
                if record.get("subtype") == "compact_boundary":
                    self.compactions += 1
                elif record.get("subtype") == "microcompact_boundary":
                    self.edits += 1
        elif kind == b"user":
            self._user(_loads(raw))
        else:
            self._title_record(_loads(raw))

    def _note(self, record: dict[str, Any]) -> None:
        self.records += 1
        if self.session_id is None and isinstance(record.get("sessionId"), str):
            self.session_id = record["sessionId"]
        if self.cwd is None and isinstance(record.get("cwd"), str):
            self.cwd = record["cwd"]
        if self.started is None and isinstance(record.get("timestamp"), str):
            self.started = record["timestamp"]

    def _title_record(self, record: Any) -> None:
        if not isinstance(record, dict):
            return
        kind = record.get("type")
        # Claude Code's own title records (reverse-engineered, docs/sessions.md): the last /rename and
        # the last generated title win; an old `summary` record is the first one's title.
        if kind == "custom-title" and isinstance(record.get("customTitle"), str):
            self.custom_title = title_line(record["customTitle"]) or self.custom_title
        elif kind == "ai-title" and isinstance(record.get("aiTitle"), str):
            self.ai_title = title_line(record["aiTitle"]) or self.ai_title
        elif kind == "summary" and isinstance(record.get("summary"), str) and self.summary_title is None:
            self.summary_title = title_line(record["summary"]) or None
        else:
            return
        self.records += 1

    def _user(self, record: Any) -> None:
        from engine.formats.claude_code_session import prompt_title, text_of

        if not (isinstance(record, dict) and record.get("type") == "user" and isinstance(record.get("message"), dict)):
            return
        self._note(record)
        if record.get("isSidechain") or record.get("isMeta") or record.get("isCompactSummary"):
            return
        content = record["message"].get("content")
        if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return
        self.prompt_title = prompt_title(text_of(content))

    def _assistant(self, raw: bytes) -> None:
        record = _loads(raw)
        if not (isinstance(record, dict) and record.get("type") == "assistant" and isinstance(record.get("message"), dict)):
            return
        self._note(record)
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.seen_uuids:
                return
            self.seen_uuids.add(uuid)
        if record.get("isSidechain") or record.get("isApiErrorMessage"):
            return
        msg = record["message"]
        model = msg.get("model") if isinstance(msg.get("model"), str) else None
        mid = str(msg.get("id") or uuid or f"line-{len(self.replies)}")
        reply = self.replies.get(mid)
        if reply is None:
            reply = [None, None, None, None, None, None, model, False]
            self.replies[mid] = reply
            if self.model is None and model and model != SYNTHETIC_MODEL:
                self.model = model
        content = msg.get("content")
        for block in content if isinstance(content, list) else ():
            if (isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") in TASK_TOOLS
                    and isinstance(block.get("id"), str)):
                self.task_calls.add(block["id"])
        usage = msg.get("usage")
        if isinstance(usage, dict) and model != SYNTHETIC_MODEL:
            if not reply[7]:
                split_raw = usage.get("cache_creation")
                split: dict[str, Any] = split_raw if isinstance(split_raw, dict) else {}
                reply[0:3] = [_int(usage.get("input_tokens")), _int(usage.get("cache_creation_input_tokens")),
                              _int(usage.get("cache_read_input_tokens"))]
                reply[4:6] = [_int(split.get("ephemeral_5m_input_tokens")), _int(split.get("ephemeral_1h_input_tokens"))]
                reply[7] = True
            reply[3] = _int(usage.get("output_tokens"))

    def to_state(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["seen_uuids"] = sorted(self.seen_uuids)
        d["task_calls"] = sorted(self.task_calls)
        return d

    @classmethod
    def from_state(cls, d: dict[str, Any]) -> ClaudeCodeScan:
        scan = cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})
        scan.seen_uuids = set(d.get("seen_uuids") or ())
        scan.task_calls = set(d.get("task_calls") or ())
        return scan

    def fill(self, s: Summary, sf: SessionFile) -> None:
        if not self.records:
            raise NotASession(f"{sf.path}: no Claude Code session records")
        s.title = self.custom_title or self.ai_title or self.summary_title or self.prompt_title or (
            self.session_id or sf.rel.rsplit("/", 1)[-1])
        s.project = self.cwd or s.project
        s.started = self.started
        s.model = self.model
        s.compactions, s.edits = self.compactions, self.edits
        s.steps = len(self.replies)
        calls = Calls(window=_claude_window(self.model, self.replies))
        s.window_tokens = calls.window
        for reply in self.replies.values():
            if reply[7]:
                usage = RecordedUsage(input_tokens=reply[0], cache_creation_input_tokens=reply[1],
                                      cache_read_input_tokens=reply[2], output_tokens=reply[3],
                                      cache_creation_5m_tokens=reply[4], cache_creation_1h_tokens=reply[5])
                calls.add(usage, reply[6])
        calls.fill(s)
        # a sub-agent per Task call (the importer attaches its file, or rebuilds it from progress records)
        s.subagents = max(len(self.task_calls), _claude_subagents(sf, self.session_id))


def _claude_window(model: str | None, replies: dict[str, list[Any]]) -> int | None:
    """The window Claude Code runs the model in (the importer's `_window` rule: the larger API window when
    a recorded request went past Claude Code's default one)."""
    window = model_window(model, agent="claude_code")
    api = model_window(model)
    largest = max(((r[0] or 0) + (r[1] or 0) + (r[2] or 0) for r in replies.values() if r[7]), default=0)
    if window is not None and api is not None and largest > window and api > window:
        return api
    return window


def _claude_subagents(sf: SessionFile, session_id: str | None) -> int:
    """Sub-agent files of the session (the compaction call's `agent-acompact-*` is not one)."""
    count = 0
    for rel in sf.companions:
        name = rel.rsplit("/", 1)[-1]
        if name.startswith("agent-acompact"):
            continue
        if "/subagents/" in f"/{rel}":
            count += 1
        elif session_id is not None and _first_session_id(sf, rel) == session_id:
            count += 1  # Claude Code 2.0.x: beside the session, naming its sessionId on the first line
    return count


def _first_session_id(sf: SessionFile, rel: str) -> str | None:
    try:
        head = read_under(sf.root, rel, 1 << 20, offset=0)[: 1 << 20]
    except (OSError, RefusedFile):
        return None
    record = _loads(head.split(b"\n", 1)[0])
    value = record.get("sessionId") if isinstance(record, dict) else None
    return value if isinstance(value, str) else None


def summarize_claude_code(sf: SessionFile, data: bytes, scan: ClaudeCodeScan | None = None,
                          start: int = 0) -> tuple[Summary, ClaudeCodeScan]:
    scan = scan or ClaudeCodeScan()
    last = data.rfind(b"\n", start)
    offset = last + 1 if last >= 0 else start
    begin = start + 3 if start == 0 and data.startswith(b"\xef\xbb\xbf") else start
    if last >= 0:
        scan.feed_buffer(data, begin, last)
    unfinished = bool(data[offset:].strip())
    if unfinished:
        # the last line may be complete JSON without its newline yet: read it, but not past it
        tail = data[offset:].strip()
        if _loads(tail) is not None:
            probe = ClaudeCodeScan.from_state(scan.to_state())
            probe.feed([tail])
            scan_for_fill, unfinished = probe, False
        else:
            scan_for_fill = scan
    else:
        scan_for_fill = scan
    s = blank(sf)
    scan_for_fill.fill(s, sf)
    s.unfinished_last_line = unfinished
    s.offset = offset
    return s, scan


# -- the other agents: from the importer's Thread ---------------------------------------------------------
def summary_from_thread(s: Summary, thread: Thread) -> Summary:
    """Fill a row from an imported Thread (steps, peak, compactions, cost from its recorded usage)."""
    s.title = thread.title or s.title or thread.thread_id
    s.model = thread.model
    s.steps = len(thread.ai_indices())
    s.compactions = len(thread.compactions)
    s.edits = len(thread.edits)
    s.subagents = len(thread.subagents)
    s.window_tokens = thread.max_input_tokens
    cwd = thread.extra.get("cwd")
    if isinstance(cwd, str) and cwd:
        s.project = cwd
    stamps = [u.timestamp for u in thread.usage.values() if u.timestamp] or list(thread.timestamps.values())
    started = thread.extra.get("startTime") if isinstance(thread.extra.get("startTime"), str) else None
    s.started = started or (min(stamps) if stamps else None)
    calls = Calls(window=thread.max_input_tokens)
    for usage in thread.usage.values():
        calls.add(usage, usage.model or thread.model)
    calls.fill(s)
    s.unfinished_last_line = thread.extra.get("unfinished_last_line") is not None
    return s


def _codex_thread_name(data: bytes) -> str | None:
    """The last name Codex gave the thread in the rollout (`event_msg` `thread_name_updated`,
    openai/codex `codex-rs/protocol/src/protocol.rs` `EventMsg::ThreadNameUpdated`)."""
    name = None
    marker = b'"thread_name_updated"'
    at = data.find(marker)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        record = _loads(data[start:end if end >= 0 else len(data)])
        payload = record.get("payload") if isinstance(record, dict) else None
        if isinstance(payload, dict) and isinstance(payload.get("thread_name"), str) and payload["thread_name"].strip():
            name = title_line(payload["thread_name"])
        at = data.find(marker, (end if end >= 0 else len(data)))
    return name


def _decompress(data: bytes, limit: int) -> bytes:
    try:
        import zstandard
    except ImportError:  # pragma: no cover - installed with langsmith, which langchain requires
        raise NotASession("compressed (.zst) and the zstandard package is not installed") from None
    reader = zstandard.ZstdDecompressor().stream_reader(data)
    out = reader.read(limit + 1)
    if len(out) > limit:
        raise RefusedFile("too large once decompressed", limit_bytes=limit)
    return out


def read_session_bytes(sf: SessionFile, *, start: int = 0, max_bytes: int = MAX_SESSION_BYTES) -> bytes:
    """The bytes of a listed session file (decompressed for a Codex `.jsonl.zst`), from `start` on."""
    data = read_under(sf.root, sf.rel, max_bytes, offset=0 if sf.compressed else start)
    return _decompress(data, max_bytes) if sf.compressed else data


def summarize(sf: SessionFile, *, previous: tuple[Summary, dict[str, Any] | None] | None = None,
              thread_names: dict[str, str] | None = None) -> tuple[Summary, dict[str, Any] | None]:
    """The row for one session, and the resumable state of a Claude Code scan (None for other agents).

    `previous`: the row and state of an earlier read of the same file, which has grown since (same
    inode, larger size): only the bytes after its offset are read."""
    s = blank(sf)
    try:
        if sf.agent == "claude-code":
            prior_summary, prior_state = previous if previous is not None else (None, None)
            if prior_summary is not None and prior_state is not None and 0 < prior_summary.offset <= sf.size:
                data = read_under(sf.root, sf.rel, MAX_SESSION_BYTES, offset=prior_summary.offset)
                row, scan = summarize_claude_code(sf, data, ClaudeCodeScan.from_state(prior_state))
                row.offset += prior_summary.offset
            else:
                try:
                    row, scan = summarize_claude_code(sf, read_session_bytes(sf))
                except NotASession:
                    # Claude Code writes compact JSON (JSON.stringify); a file written with spaces after
                    # the colons has none of the markers: it is read by the importer instead
                    return _from_importer(sf, s, thread_names), None
            return row, scan.to_state()
        return _from_importer(sf, s, thread_names), None
    except NotASession:
        raise
    except RefusedFile as exc:
        s.error = exc.reason if exc.limit_bytes is None else f"larger than {exc.limit_bytes:,} bytes"
    except ContextInspectorError as exc:
        s.error = exc.one_line() if hasattr(exc, "one_line") else str(exc)
    except OSError as exc:
        s.error = f"cannot read ({exc.strerror or exc})"
    return s, None


def _from_importer(sf: SessionFile, s: Summary, thread_names: dict[str, str] | None) -> Summary:
    """The row from the agent's importer (Codex, Gemini CLI, Cline; a Claude Code file the fast path cannot read)."""
    from engine.formats import load_thread
    from engine.workspace.disk_sessions import staged

    data = read_session_bytes(sf)
    if sf.agent == "claude-code":
        from engine.formats.claude_code import IMPORTER
        from engine.formats.source import Source

        if not IMPORTER.sniff(Source(label=str(sf.path), data=data)):
            raise NotASession(f"{sf.path}: no Claude Code session records")  # some other .jsonl: left out
    with staged(sf) as main_path:
        thread = load_thread(main_path, data=data, name=str(sf.path), format=sf.format)
    summary_from_thread(s, thread)
    if sf.agent == "codex":
        s.title = _codex_thread_name(data) or (thread_names or {}).get(thread.thread_id) or s.title
    s.offset = len(data)
    return s


__all__ = ["Calls", "ClaudeCodeScan", "LIVE_SECONDS", "MAX_SESSION_BYTES", "NotASession", "Summary", "blank",
           "read_session_bytes", "summarize", "summarize_claude_code",
           "summary_from_thread"]
