"""The sessions list: every session under the roots, summarised once per change of its file, in parallel.

Each file is read once (engine.sessions.summary); a file that did not change since the last listing
(same device, inode, size and modification time) is not read again: its row comes from the index, in
memory for a dashboard server and in `$CTXI_WORKSPACE/sessions/index.json` between `ctxi sessions`
runs (the workspace, never a root). A Claude Code session that grew since (same inode, larger) is read
from where the last summary stopped, when that summary is still in memory.

Files are spread over a process pool (one worker per core) when there is enough to read; a file is
never split. Rows come newest first (by the file's modification time).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from engine.base.files import RefusedFile
from engine.sessions.summary import NotASession, Summary, summarize
from engine.workspace.disk_sessions import Listing, SessionFile, discover, read_under

INDEX_DIR = "sessions"
INDEX_FILE = "index.json"
INDEX_VERSION = 1
# Below this much to read, a pool costs more than it saves (a worker's start and the rows' trip back).
POOL_MIN_BYTES = 24 * 1024 * 1024
POOL_MIN_FILES = 8
MAX_INDEX_BYTES = 64 * 1024 * 1024
MAX_CODEX_INDEX_BYTES = 16 * 1024 * 1024

Progress = Callable[[int, int], None]


@dataclass
class SessionList:
    """The rows, what was refused or left out, and what the listing cost."""

    rows: list[Summary]
    refused: list[tuple[str, str]] = field(default_factory=list)
    not_sessions: int = 0
    truncated: bool = False
    read_files: int = 0
    read_bytes: int = 0
    cached: int = 0
    workers: int = 1
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"sessions": [r.to_dict() for r in self.rows],
                "refused": [{"path": p, "reason": r} for p, r in self.refused],
                "not_sessions": self.not_sessions, "truncated": self.truncated, "read_files": self.read_files,
                "read_bytes": self.read_bytes, "cached": self.cached, "workers": self.workers,
                "elapsed_s": round(self.elapsed_s, 3)}


@dataclass
class _Entry:
    stat_key: tuple[int, int, int, int]
    summary: Summary
    state: dict[str, Any] | None = None  # a Claude Code scan to go on from (memory only)


class SummaryIndex:
    """Rows by session id and file state; optionally kept in a JSON file in the workspace."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()
        if path is not None:
            self._load(path)

    @classmethod
    def in_workspace(cls, workspace_root: Path) -> SummaryIndex:
        return cls(workspace_root / INDEX_DIR / INDEX_FILE)

    def _load(self, path: Path) -> None:
        from engine.base.files import read_regular

        try:
            doc = orjson.loads(read_regular(path, MAX_INDEX_BYTES))
        except (OSError, RefusedFile, orjson.JSONDecodeError):
            return  # no index yet, or a broken one: rebuilt from the files
        if not isinstance(doc, dict) or doc.get("version") != INDEX_VERSION or not isinstance(doc.get("rows"), list):
            return
        for item in doc["rows"]:
            try:
                key = tuple(int(x) for x in item["stat"])
                summary = Summary.from_dict(item["summary"])
                summary.offset = int(item.get("offset", 0))
            except (KeyError, TypeError, ValueError):
                continue
            if len(key) == 4:
                self.entries[summary.id] = _Entry((key[0], key[1], key[2], key[3]), summary)

    def save(self) -> None:
        if self.path is None:
            return
        from engine.workspace.workspace import WorkspaceError, _write_atomic

        rows = [{"stat": list(e.stat_key), "offset": e.summary.offset, "summary": e.summary.to_dict()}
                for e in self.entries.values()]
        try:
            _write_atomic(self.path, json.dumps({"version": INDEX_VERSION, "rows": rows}, ensure_ascii=False))
        except WorkspaceError:
            pass  # a read-only workspace: the list still works, it is only not kept

    def lookup(self, sf: SessionFile) -> tuple[Summary | None, _Entry | None]:
        """(the row when the file did not change, the entry of an earlier read otherwise)."""
        with self._lock:
            entry = self.entries.get(sf.id)
        if entry is None:
            return None, None
        if entry.stat_key == sf.stat_key():
            return entry.summary, entry
        return None, entry

    def put(self, sf: SessionFile, summary: Summary, state: dict[str, Any] | None) -> None:
        with self._lock:
            self.entries[sf.id] = _Entry(sf.stat_key(), summary, state)

    def prune(self, ids: set[str]) -> None:
        with self._lock:
            for gone in set(self.entries) - ids:
                del self.entries[gone]


def _grew(sf: SessionFile, entry: _Entry | None) -> tuple[Summary, dict[str, Any] | None] | None:
    """The earlier read to go on from, when the file only grew since (same file, larger)."""
    if entry is None or entry.state is None or sf.agent != "claude-code":
        return None
    dev, ino, size, _ = entry.stat_key
    if (dev, ino) != (sf.dev, sf.ino) or sf.size < size:
        return None
    return entry.summary, entry.state


Task = tuple[SessionFile, "tuple[Summary, dict[str, Any] | None] | None"]
Result = tuple[str, "dict[str, Any] | None", "dict[str, Any] | None", bool]


def summarize_batch(tasks: list[Task], thread_names: dict[str, str]) -> list[Result]:
    """Summaries of a batch of files: (id, row as a dict with its offset, Claude Code scan state,
    not a session). Runs in a pool worker: only plain data crosses back."""
    out: list[Result] = []
    for sf, previous in tasks:
        try:
            row, state = summarize(sf, previous=previous, thread_names=thread_names)
        except NotASession:
            out.append((sf.id, None, None, True))
            continue
        d = row.to_dict()
        d["offset"] = row.offset
        out.append((sf.id, d, state, False))
    return out


def _batches(tasks: list[Task], n: int) -> list[list[Task]]:
    """About `4 n` batches of similar byte counts (the largest files first, each to the lightest batch)."""
    count = max(1, min(len(tasks), 4 * n))
    batches: list[list[Task]] = [[] for _ in range(count)]
    weight = [0] * count
    for task in sorted(tasks, key=lambda t: t[0].size, reverse=True):
        i = weight.index(min(weight))
        batches[i].append(task)
        weight[i] += task[0].size + 4096
    return [b for b in batches if b]


_POOL: ProcessPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool(workers: int) -> ProcessPoolExecutor:
    """One pool per process, kept: a server lists again and again. `fork` when this process runs one
    thread (a CLI), else `forkserver` (forking a threaded server could copy a held lock)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or getattr(_POOL, "_max_workers", 0) != workers:
            if _POOL is not None:
                _POOL.shutdown(wait=False, cancel_futures=True)
            method = "fork" if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods() \
                else "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
            _POOL = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method))
        return _POOL


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def _codex_thread_names(listing: Listing) -> dict[str, str]:
    """Codex's thread names (the last line for an id wins, session_index.rs `scan_index_from_end_by_id`)."""
    names: dict[str, str] = {}
    for root, rel in listing.codex_indexes:
        try:
            data = read_under(root, rel, MAX_CODEX_INDEX_BYTES)
        except (OSError, RefusedFile):
            continue
        for line in data.split(b"\n"):
            try:
                entry = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("id"), str) and isinstance(entry.get("thread_name"), str):
                names[entry["id"]] = entry["thread_name"]
    return names


def summarize_listing(listing: Listing, *, index: SummaryIndex | None = None, workers: int | None = None,
                      progress: Progress | None = None) -> SessionList:
    """Rows for every session of `listing`, reading only the files the index cannot answer for."""
    started = time.perf_counter()
    index = index if index is not None else SummaryIndex()
    rows: dict[str, Summary] = {}
    todo: list[Task] = []
    cached = 0
    for sf in listing.sessions:
        hit, entry = index.lookup(sf)
        if hit is not None:
            rows[sf.id] = hit
            cached += 1
        else:
            todo.append((sf, _grew(sf, entry)))
    by_id = {sf.id: sf for sf in listing.sessions}
    names = _codex_thread_names(listing) if any(sf.agent == "codex" for sf, _ in todo) else {}
    read_bytes = sum(sf.size - (prev[0].offset if prev else 0) for sf, prev in todo)
    n = max(1, min(workers or default_workers(), len(todo)))
    not_sessions = 0
    results: list[Result] = []
    if n > 1 and len(todo) >= POOL_MIN_FILES and read_bytes >= POOL_MIN_BYTES:
        pool = _pool(n)
        futures = [pool.submit(summarize_batch, batch, names) for batch in _batches(todo, n)]
        done = 0
        for future in futures:
            part = future.result()
            results.extend(part)
            done += len(part)
            if progress:
                progress(done, len(todo))
    else:
        n = 1
        for i, task in enumerate(todo, start=1):
            results.extend(summarize_batch([task], names))
            if progress:
                progress(i, len(todo))
    for sid, row_dict, state, not_session in results:
        if not_session or row_dict is None:
            not_sessions += 1
            continue
        row = Summary.from_dict(row_dict)
        rows[sid] = row
        index.put(by_id[sid], row, state)
    index.prune(set(by_id))
    ordered = sorted(rows.values(), key=lambda r: (r.modified_ns, r.id), reverse=True)
    return SessionList(rows=ordered, refused=list(listing.refused), not_sessions=not_sessions,
                       truncated=listing.truncated, read_files=len(todo), read_bytes=read_bytes, cached=cached,
                       workers=n, elapsed_s=time.perf_counter() - started)


def list_sessions(roots: Sequence[Path], *, index: SummaryIndex | None = None, workers: int | None = None,
                  progress: Progress | None = None) -> tuple[Listing, SessionList]:
    """Discover the sessions under `roots` (resolved folders) and summarise them."""
    listing = discover(roots)
    return listing, summarize_listing(listing, index=index, workers=workers, progress=progress)


def matches(row: Summary, text: str) -> bool:
    """Whether a row matches a search: every word appears in its title, project, model, agent, path or id."""
    hay = " ".join(str(v) for v in (row.title, row.project, row.model, row.agent, row.path, row.id) if v).casefold()
    return all(word in hay for word in text.casefold().split())


def search(rows: Sequence[Summary], text: str = "", agents: Sequence[str] = ()) -> list[Summary]:
    return [r for r in rows if (not agents or r.agent in agents) and (not text.strip() or matches(r, text))]


__all__ = ["INDEX_DIR", "INDEX_FILE", "SessionList", "SummaryIndex", "default_workers", "list_sessions", "matches",
           "search", "summarize_batch", "summarize_listing"]
