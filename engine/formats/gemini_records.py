"""Gemini CLI session records replayed as Gemini CLI's own reader does, plus what it overwrites.

`loadConversationRecord` (google-gemini/gemini-cli, packages/core/src/services/
chatRecordingService.ts) reads a session JSONL line by line:
- `{"$rewindTo": id}` deletes that message and every message after it (all of them when the id is
  unknown);
- a line with a string `id` is a message: `Map.set(id, record)`, so a re-appended id keeps its
  FIRST position and its LAST version (the writer re-appends a message whenever it adds tool calls,
  results or tokens to it);
- `{"$set": {...}}` merges into the session metadata; a `$set.messages` list (newer writers sync
  the whole history after each turn) replaces the message list;
- a line with `sessionId` and `projectHash` is the session metadata (the first line).
The legacy `.json` session (one document) is that metadata with a `messages` array.

Two things the reader overwrites are kept here, because the model saw them before they changed:
- a `$set.messages` list that drops messages or puts new ones before kept ones is a history
  rewrite (chat compression, `GeminiChat.setHistory`): a compaction, the new list its replacement;
- a message re-appended after later messages, with different tool results (tool output masking
  stores old large outputs in a file and keeps a placeholder): the earlier results stay the
  message's, the later ones are a recorded edit from that point on.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from engine.formats.jsonshape import Where, json_type

FORMAT = "gemini_cli"
Record = dict[str, Any]


@dataclass
class Masking:
    """A tool call whose result a later re-append replaced (`seq`: messages inserted before it)."""

    message_id: str
    call_id: str
    result: Any
    seq: int


@dataclass
class Rewrite:
    """A `$set.messages` that rewrote the history: `at` records had been inserted when it came."""

    at: int
    entries: list[Record]
    line: int


@dataclass
class Replay:
    """The session after replaying its records: messages in order, metadata, what was rewritten."""

    where: Where
    # Every message the session sent, in order (first position, last version), minus rewound ones.
    records: dict[str, Record] = field(default_factory=dict)
    # The history the writer held (its `cachedConversation.messages` ids), to tell a sync from a rewrite.
    held: dict[str, None] = field(default_factory=dict)
    first_seq: dict[str, int] = field(default_factory=dict)
    last_seq: dict[str, int] = field(default_factory=dict)
    # Where each message's last version was read, for errors found while building it.
    locations: dict[str, str] = field(default_factory=dict)
    seq: int = 0  # messages inserted so far
    metadata: dict[str, Any] = field(default_factory=dict)
    maskings: list[Masking] = field(default_factory=list)
    rewrites: list[Rewrite] = field(default_factory=list)
    # Messages only a rewrite's list holds (its summary turns): updated there, never messages.
    replacement_only: dict[str, Record] = field(default_factory=dict)
    rewound: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    # one line per thing read other than as written (a rewind to a message no line holds)
    warnings: list[str] = field(default_factory=list)
    # each record's position in `records`: records only ever go from the end (a rewind), so it holds
    _position: dict[str, int] = field(default_factory=dict)

    def skip(self, kind: str) -> None:
        self.skipped[kind] = self.skipped.get(kind, 0) + 1

    def boundary(self) -> int:
        """Records before the last rewrite stay: a rewind cannot reach past the history it replaced."""
        return self.rewrites[-1].at if self.rewrites else 0

    # -- message records --------------------------------------------------------------------
    def message(self, record: Record, line: int, location: str) -> None:
        mid = record["id"]
        self.held.setdefault(mid, None)
        if mid in self.replacement_only:
            self.replacement_only[mid] = record
            return
        previous = self.records.get(mid)
        if previous is None:
            self.seq += 1
            self.first_seq[mid] = self.seq
            self._position[mid] = len(self.records)
        elif self.last_seq[mid] != self.seq:
            record = self._masked(previous, record, location)
        self.records[mid] = record
        self.last_seq[mid] = self.seq
        self.locations[mid] = location

    def _masked(self, previous: Record, record: Record, location: str) -> Record:
        """A late re-append: keep the results the model was sent, record the new ones as edits."""
        old = {tc["id"]: tc for tc in _calls(previous, self.where, location) if isinstance(tc.get("id"), str)}
        calls = _calls(record, self.where, location)
        if not calls:
            return record
        merged = copy.copy(record)
        merged["toolCalls"] = []
        for tc in calls:
            before = old.get(tc["id"]) if isinstance(tc.get("id"), str) else None
            if before is not None and "result" in before and before.get("result") != tc.get("result"):
                if _replaced(before.get("result"), tc.get("result")):
                    self.maskings.append(Masking(str(record["id"]), str(tc.get("id")), tc.get("result"), self.seq))
                tc = {**tc, "result": before.get("result")}
            merged["toolCalls"].append(tc)
        return merged

    def rewind(self, target: str, line: int) -> None:
        """Drop `target` and everything after it. A rewind costs what it drops: both lists lose their
        last entries (a dict pops its last item in O(1)), so a file of rewinds stays linear."""
        if target in self.held:
            while self.held.popitem()[0] != target:
                pass
        else:
            self.held = {}
        floor = self.boundary()
        known = target in self.records
        if known and self._position[target] >= floor:
            cut = self._position[target]
        elif known or target in self.replacement_only:
            return  # into a history a compaction already replaced: nothing sent is dropped
        else:
            cut = floor  # Gemini CLI's reader clears everything for an unknown id
        dropped = len(self.records) - cut
        for _ in range(dropped):
            del self._position[self.records.popitem()[0]]
        self.rewound.append({"to": target, "records": dropped, "line": line})
        if not known:
            # google-gemini/gemini-cli packages/core/src/services/chatRecordingService.ts @ 5411f11:
            # `loadConversationRecord` clears its message map for an id it does not find, and
            # `rewindTo` never writes such a line (it returns when the id is not in the conversation)
            self.warnings.append(
                f"line {line}: $rewindTo names message id {target!r}, which no earlier line holds; Gemini CLI's "
                f"reader then drops the whole history ({dropped} message record{'s' if dropped != 1 else ''} "
                "dropped here) and its writer never records such a rewind: the file was cut or edited")

    # -- metadata ---------------------------------------------------------------------------
    def set_fields(self, fields: dict[str, Any], line: int, location: str) -> None:
        messages = fields.get("messages")
        if messages is not None:
            self._set_messages(self.where.want_list(messages, f"{location}.messages"), line, f"{location}.messages")
        self.metadata.update({k: v for k, v in fields.items() if k != "messages"})

    def _set_messages(self, entries: list[Any], line: int, location: str) -> None:
        records: list[tuple[Record, str]] = []
        for k, entry in enumerate(entries):
            entry = self.where.want_dict(entry, f"{location}[{k}]", "a message record object")
            self.where.want_text(entry.get("id"), f"{location}[{k}].id")
            records.append((entry, f"{location}[{k}]"))
        new_ids = [r["id"] for r, _ in records]
        if new_ids[:len(self.held)] == list(self.held):
            for entry, where in records:  # the same history, synced: re-appends and new messages
                self.message(entry, line, where)
            return
        self.rewrites.append(Rewrite(len(self.records), [r for r, _ in records], line))
        self.replacement_only = {r["id"]: r for r, _ in records if r["id"] not in self.records}
        self.held = dict.fromkeys(new_ids)


def _replaced(old: Any, new: Any) -> bool:
    """Whether a later result replaced the earlier one (not merely synced it with its siblings).

    The newest writer's history sync stores a call's whole user turn as its result ("sync the
    entire parts array of the user turn to ensure sibling parts are preserved",
    `updateMessagesFromHistory`): a list still holding every earlier part is the same result.
    """
    if old == new:
        return False
    if isinstance(old, list) and isinstance(new, list):
        return not all(part in new for part in old)
    return True


def _calls(record: Record, where: Where, location: str) -> list[dict[str, Any]]:
    calls = record.get("toolCalls")
    if calls is None:
        return []
    calls = where.want_list(calls, f"{location}.toolCalls")
    return [where.want_dict(tc, f"{location}.toolCalls[{j}]", "a tool call object") for j, tc in enumerate(calls)]


def is_metadata(record: Any) -> bool:
    return (isinstance(record, dict) and isinstance(record.get("sessionId"), str)
            and isinstance(record.get("projectHash"), str))


def replay(rows: list[tuple[int, Record]], where: Where, *, document: bool = False) -> Replay:
    """Every record in file order, as `loadConversationRecord` applies them (module docstring)."""
    r = Replay(where)
    for line, record in rows:
        location = "$" if document else f"line {line}: $"
        if isinstance(record.get("$rewindTo"), str):
            r.rewind(record["$rewindTo"], line)
        elif isinstance(record.get("id"), str):
            r.message(record, line, location)
        elif "$set" in record and record["$set"] is not None:
            r.set_fields(where.want_dict(record["$set"], f"{location}.$set"), line, f"{location}.$set")
        elif is_metadata(record):
            r.set_fields(record, line, location)  # a legacy session's `messages` come with it
        elif "$rewindTo" in record:
            where.fail(f"{location}.$rewindTo", f"expected a message id string, got {json_type(record['$rewindTo'])}")
        elif "id" in record:
            where.fail(f"{location}.id", f"expected a message id string, got {json_type(record['id'])}")
        else:
            r.skip("unknown record")
    return r
