"""The session library: uploaded transcripts kept in the workspace, content-addressed.

Layout under the workspace root (`engine.workspace.workspace.default_root()`):

    library/<id>/entry.json      what the list shows: file names, thread id, format, steps, peak, date
    library/<id>/files/<name>    the uploaded bytes as they came, the transcript and its companions
                                 (Claude Code `agent-*.jsonl`, a Cline task's other files) side by side

`<id>` is the first 24 hex digits of a SHA-256 over the file names and bytes and the chosen thread
id, so the same upload is the same entry and an id names nothing but an entry: a dashboard link
(`thread=library:<id>`) can only open a folder this module created directly under `library/`,
never a path (`entry_dir` refuses anything else, symlinks out of the folder included).

A thread is always loaded from the saved files by the same importers as any file on disk, so a
deep link after a reload or a server restart shows exactly what the upload showed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.base.errors import ThreadLoadError
from engine.base.surrogates import scrub
from engine.config.links import LIBRARY_ID_LENGTH as ID_LENGTH
from engine.config.links import valid_library_id as valid_entry_id
from engine.formats import load_thread
from engine.recorded.inspect import step_contexts
from engine.thread.model import Thread
from engine.workspace.workspace import WorkspaceError, default_root

LIBRARY_DIR = "library"
ENTRY_FILE = "entry.json"
FILES_DIR = "files"
STAGING_PREFIX = ".staging-"  # never a valid entry id: listing skips staging folders
MAX_ENTRY_BYTES = 1024 * 1024  # an entry.json is a few hundred bytes
# A saved file keeps its uploaded name when that name is plain (importers read names such as
# agent-*.jsonl, ui_messages.json); anything else is replaced character by character.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._ -]{0,199}")


def safe_file_name(name: str) -> str:
    """The uploaded name without folders, kept when plain, else with odd characters replaced."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    if _PLAIN_NAME.fullmatch(base) and ".." not in base:
        return base
    cleaned = re.sub(r"[^A-Za-z0-9._ -]", "_", base).lstrip(". ")[:200].replace("..", "_")
    return cleaned or "transcript"


def entry_id(files: Sequence[tuple[str, bytes]], thread_id: str | None) -> str:
    """The content address of an upload: its file names and bytes (in order) and the thread id."""
    sha = hashlib.sha256()
    for name, data in files:
        sha.update(b"file\0" + safe_file_name(name).encode("utf-8") + b"\0" + len(data).to_bytes(8, "big") + data)
    sha.update(b"thread\0" + (thread_id or "").encode("utf-8", "surrogatepass"))
    return sha.hexdigest()[:ID_LENGTH]


@dataclass(frozen=True)
class LibraryEntry:
    """One saved upload and what the Threads page lists about it."""

    id: str
    files: tuple[str, ...]  # the transcript first, then its companions
    thread_id: str | None
    title: str
    source_format: str
    steps: int
    messages: int
    subagents: int
    peak_tokens: int | None
    peak_source: str  # "recorded" (the provider's own input count) or "counted" (our tokenizer)
    saved_at: str  # ISO 8601, UTC

    @property
    def name(self) -> str:
        return self.files[0]

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["files"] = list(self.files)
        return d


def peak_tokens(thread: Thread) -> tuple[int | None, str]:
    """The largest request of the session: as the provider recorded it when it did, else our count."""
    recorded = [c for u in thread.usage.values() if (c := u.context_tokens) is not None]
    if recorded:
        return max(recorded), "recorded"
    counted = [int(s["context_tokens"]) for s in step_contexts(thread)]
    return (max(counted) if counted else None), "counted"


class Library:
    """The saved uploads of one workspace."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else default_root()

    @property
    def dir(self) -> Path:
        return self.root / LIBRARY_DIR

    def __repr__(self) -> str:
        return f"Library({str(self.dir)!r})"

    def entry_dir(self, entry_id: str) -> Path | None:
        """The folder of entry `entry_id`, or None: only a valid id naming a real folder directly in
        the library, reached without a symlink that leads out of it."""
        if not valid_entry_id(entry_id):
            return None
        folder = self.dir / entry_id
        try:
            base = self.dir.resolve(strict=True)
            resolved = folder.resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        if resolved.parent != base or not resolved.is_dir() or folder.is_symlink():
            return None
        return folder

    def entry(self, entry_id: str) -> LibraryEntry | None:
        folder = self.entry_dir(entry_id)
        if folder is None or not (folder / ENTRY_FILE).is_file():
            return None
        return _read_entry(folder / ENTRY_FILE, entry_id)

    def entries(self) -> list[LibraryEntry]:
        """Every saved entry, newest first (an unreadable entry.json is skipped, never fatal: `scan`)."""
        return self.scan()[0]

    def scan(self) -> tuple[list[LibraryEntry], list[str]]:
        """Every readable entry, newest first, and one line per entry that could not be read (naming its
        entry.json and why), so one broken file hides nothing else and is said once."""
        if not self.dir.is_dir():
            return [], []
        out: list[LibraryEntry] = []
        problems: list[str] = []
        for folder in self.dir.iterdir():
            if valid_entry_id(folder.name):
                try:
                    found = self.entry(folder.name)
                except WorkspaceError as exc:
                    problems.append(str(exc))
                    continue
                if found is not None:
                    out.append(found)
        return sorted(out, key=lambda e: (e.saved_at, e.id), reverse=True), sorted(problems)

    def transcript_path(self, entry: LibraryEntry) -> Path:
        folder = self.entry_dir(entry.id)
        if folder is None:
            raise WorkspaceError(f"{self.dir / entry.id}: not a library entry")
        path = folder / FILES_DIR / entry.name
        if safe_file_name(entry.name) != entry.name or not path.is_file():
            raise WorkspaceError(f"{path}: the entry's transcript is missing")
        return path

    def load(self, entry_id: str) -> Thread:
        """The saved thread, read from its files by the importers (a ThreadLoadError names the file)."""
        entry = self.entry(entry_id)
        if entry is None:
            raise WorkspaceError(f"no library entry {entry_id[:40]!r} in {self.dir}")
        return load_thread(self.transcript_path(entry), thread_id=entry.thread_id)

    def add(self, name: str, data: bytes, thread_id: str | None = None,
            companions: Sequence[tuple[str, bytes]] = ()) -> LibraryEntry:
        """Save an upload (the same upload twice is one entry) after checking that it loads from the
        saved files; a file that does not load raises its ThreadLoadError (naming the uploaded file, not
        where it was staged) and leaves nothing behind.

        Safe to call from many threads (the dashboard runs each session in its own) and processes at
        once: each call stages in a folder of its own (`mkdtemp`) and publishes it with one atomic
        rename; a rename that finds the entry already there means another call saved the same upload,
        whose entry is returned. Before, every thread of a process shared `.staging-<id>-<pid>` and
        each save removed it first: 400 saves in 16 threads failed 23-99 times.
        """
        files = [(name, data), *companions]
        eid = entry_id(files, thread_id)
        existing = self.entry(eid)
        if existing is not None:
            return existing
        names = [safe_file_name(n) for n, _ in files]
        if len(set(names)) != len(names):
            raise WorkspaceError(f"{name}: two uploaded files have the same name ({', '.join(names)})")
        staging: Path | None = None
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{eid}-", dir=self.dir))
            (staging / FILES_DIR).mkdir()
            for saved, (_, blob) in zip(names, files, strict=True):
                (staging / FILES_DIR / saved).write_bytes(blob)
            try:
                thread = load_thread(staging / FILES_DIR / names[0], thread_id=thread_id)
            except ThreadLoadError as exc:
                raise as_uploaded(exc, staging / FILES_DIR, dict(zip(names, (n for n, _ in files), strict=True))) from None
            peak, source = peak_tokens(thread)
            entry = LibraryEntry(
                id=eid, files=tuple(names), thread_id=thread_id, title=thread.title or thread.thread_id,
                source_format=thread.source_format, steps=len(thread.ai_indices()), messages=len(thread.messages),
                subagents=len(thread.subagents), peak_tokens=peak, peak_source=source,
                saved_at=datetime.now(UTC).isoformat(timespec="seconds"))
            (staging / ENTRY_FILE).write_text(json.dumps(entry.to_dict(), indent=1), encoding="utf-8")
            try:
                os.rename(staging, self.dir / eid)  # atomic: the entry appears whole or not at all
                staging = None
            except OSError:
                if self.entry(eid) is None:  # not another thread or process saving the same upload
                    raise
        except OSError as exc:
            raise WorkspaceError(f"{self.dir}: cannot save {name} ({exc.strerror or exc})") from None
        finally:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
        saved_entry = self.entry(eid)
        if saved_entry is None:
            raise WorkspaceError(f"{self.dir / eid}: saved but cannot be read back")
        return saved_entry

    def delete(self, entry_id: str) -> bool:
        """Remove an entry and its files; False when there is no such entry."""
        folder = self.entry_dir(entry_id)
        if folder is None:
            return False
        try:
            shutil.rmtree(folder)
        except OSError as exc:
            raise WorkspaceError(f"{folder}: cannot delete ({exc.strerror or exc})") from None
        return True


def _read_entry(path: Path, entry_id: str) -> LibraryEntry:
    """An entry.json as this module writes it; anything else (a number that is no count, `1e999`, nesting
    JSON cannot read, a wrong type) is a WorkspaceError naming the file, never another exception."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_ENTRY_BYTES + 1)
        if len(raw) > MAX_ENTRY_BYTES:
            raise ValueError(f"above {MAX_ENTRY_BYTES:,} bytes")
        doc = json.loads(raw.decode("utf-8"))
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        files = doc.get("files")
        if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
            raise ValueError("files: expected a list of file names")
        if any(safe_file_name(f) != f for f in files):
            raise ValueError("file names must be plain names")
        peak = doc.get("peak_tokens")
        return LibraryEntry(
            id=entry_id, files=tuple(files),
            thread_id=scrub(doc["thread_id"]) if isinstance(doc.get("thread_id"), str) else None,
            title=_text(doc, "title") or files[0], source_format=_text(doc, "source_format") or "?",
            steps=_count(doc, "steps"), messages=_count(doc, "messages"), subagents=_count(doc, "subagents"),
            peak_tokens=_count(doc, "peak_tokens") if peak is not None else None,
            peak_source=_text(doc, "peak_source") or "counted", saved_at=_text(doc, "saved_at"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else (
            getattr(exc, "strerror", None) or str(exc))
        raise WorkspaceError(f"{path}: not a library entry ({str(reason)[:200]})") from None


def _count(doc: dict[str, Any], key: str) -> int:
    """A count this module wrote: a whole number from 0 up (JSON has no infinity; `1e999` reads as one)."""
    value = doc.get(key) or 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key}: expected a count, got {str(value)[:40]}")
    return value


def _text(doc: dict[str, Any], key: str) -> str:
    """A text this module wrote; an unpaired surrogate (`"\\ud800"` in an edited entry.json) becomes U+FFFD,
    as in every transcript read (engine.base.surrogates), so the pages that list it can encode it."""
    value = doc.get(key)
    return scrub(value) if isinstance(value, str) else ""


def as_uploaded(exc: ThreadLoadError, folder: Path, uploaded: dict[str, str]) -> ThreadLoadError:
    """An importer's error about files laid out in `folder`, naming the files as the user uploaded them
    (`uploaded`: saved name -> uploaded name) instead of the staging folder, which is gone once the
    call returns and means nothing to the user."""
    prefix = str(folder) + os.sep

    def shown(text: str) -> str:
        for saved, original in sorted(uploaded.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(prefix + saved, original)
        return text.replace(prefix, "")

    exc.path = shown(str(exc.path)) if exc.path is not None else None
    exc.message = shown(exc.message)
    exc.args = (exc.one_line(),)
    return exc


__all__ = ["ID_LENGTH", "LIBRARY_DIR", "Library", "LibraryEntry", "as_uploaded", "entry_id", "peak_tokens",
           "safe_file_name", "valid_entry_id"]
