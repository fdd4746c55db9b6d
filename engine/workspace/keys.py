"""Thread keys: what a key in a link or on a page names, and the thread behind it.

A key is data from a link (SECURITY.md): it may name a bundled sample, the one file given to
`ctxi ui FILE`, a library entry by its content address, a sub-agent of a thread a key may open, an
upload or a database thread of this browser session, or the generated demo. It never names any other
path. `resolve_thread_key` says what a key names under those rules (None: nothing a link may open);
`load_thread_key` loads it, for the CLI and tests; the dashboard caches each kind its own way and
calls `resolve_thread_key` once per key.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engine.config.links import LIBRARY_PREFIX, SUBAGENT_PREFIX, library_id, sample_path, split_subagent_key
from engine.thread.model import Thread
from engine.workspace.disk_sessions import SESSION_PREFIX, SessionFile, session_key_id
from engine.workspace.library import Library

SAMPLE_PREFIX = "sample:"
FILE_PREFIX = "file:"
UPLOAD_PREFIX = "upload:"
DATABASE_PREFIX = "pg:"
DEMO_KEY = "demo"

KeyKind = Literal["sample", "file", "library", "subagent", "upload", "database", "demo", "session"]


@dataclass(frozen=True)
class ThreadRoots:
    """Where keys may lead: the samples folder, the file `ctxi ui FILE` opened, the workspace's library."""

    samples: Path
    opened: Path | None = None
    library: Library | None = None
    # a listed session by its id (engine.workspace.disk_sessions): the server's own listing of the roots
    # it was started with; None when it lists none
    sessions: Callable[[str], SessionFile | None] | None = None


@dataclass(frozen=True)
class ThreadSource:
    """What a key names: a file to read (sample, opened file), a library entry, a sub-agent of another
    key's thread, or a thread this session holds (upload, database, demo)."""

    key: str
    kind: KeyKind
    path: Path | None = None  # sample, file: the file; library: the entry's folder
    entry_id: str | None = None  # library
    parent_key: str | None = None  # subagent: the thread that spawned it
    call_id: str | None = None  # subagent: the Task call that spawned it
    session: SessionFile | None = None  # session: the listed file

    def version(self) -> str:
        """A cache key that changes when the file behind a sample, opened file or listed session changes."""
        if self.kind == "session" and self.session is not None:
            from engine.workspace.disk_sessions import relisted

            now = relisted(self.session)
            return f"{self.key}@{now.size}:{now.mtime_ns}" if now is not None else f"{self.key}@gone"
        if self.kind in ("sample", "file") and self.path is not None:
            try:
                return f"{self.key}@{self.path.stat().st_mtime}"
            except OSError:
                return f"{self.key}@0"
        return self.key


def sample_key(path: Path) -> str:
    return f"{SAMPLE_PREFIX}{path.stem}"


def sample_files(folder: Path) -> list[Path]:
    """The samples a link may name (`sample_path`): no symlink leading out, no odd names."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.json") if sample_path(folder, p.stem) is not None)


def resolve_thread_key(key: str, roots: ThreadRoots) -> ThreadSource | None:
    """What `key` names under the link rules, or None when it names nothing a link may open."""
    if key == DEMO_KEY:
        return ThreadSource(key, "demo")
    if key.startswith(FILE_PREFIX):
        # only the file named on the command line: a URL must not make the server read other files
        path = Path(key.removeprefix(FILE_PREFIX))
        if roots.opened is None or roots.opened.resolve() != path or not path.is_file():
            return None
        return ThreadSource(key, "file", path=path)
    if key.startswith(DATABASE_PREFIX):
        # read when the user opened it on the Threads page; a key never makes the server connect
        return ThreadSource(key, "database")
    if key.startswith(LIBRARY_PREFIX):
        # only `library:<24 hex digits>` naming a folder directly in the workspace's library
        entry_id = library_id(key)
        folder = roots.library.entry_dir(entry_id) if entry_id and roots.library is not None else None
        if entry_id is None or folder is None:
            return None
        return ThreadSource(key, "library", path=folder, entry_id=entry_id)
    if key.startswith(SUBAGENT_PREFIX):
        # a sub-agent transcript of a thread a key may open, by its Task call id: never a file
        split = split_subagent_key(key)
        if split is None:
            return None
        return ThreadSource(key, "subagent", parent_key=split[1], call_id=split[0])
    if key.startswith(SAMPLE_PREFIX):
        sample = sample_path(roots.samples, key.removeprefix(SAMPLE_PREFIX))
        return ThreadSource(key, "sample", path=sample) if sample is not None else None
    if key.startswith(UPLOAD_PREFIX):
        return ThreadSource(key, "upload")
    if key.startswith(SESSION_PREFIX):
        # only `session:<24 hex digits>` of a session the server's own listing holds: never a path
        sid = session_key_id(key)
        found = roots.sessions(sid) if sid is not None and roots.sessions is not None else None
        return ThreadSource(key, "session", path=found.path, session=found) if found is not None else None
    return None


def load_thread_key(key: str, roots: ThreadRoots, *,
                    held: Mapping[str, Thread] | None = None,
                    load_file: Callable[[Path], Thread] | None = None) -> Thread | None:
    """The thread behind `key`, or None when it names nothing (or nothing this caller holds).

    `held` are the threads the caller keeps itself (a session's uploads and database threads, the
    demo); `load_file` reads a sample or opened file (default: `engine.formats.load_thread`).
    """
    source = resolve_thread_key(key, roots)
    if source is None:
        return None
    if source.kind in ("upload", "database", "demo"):
        return (held or {}).get(key)
    if source.kind == "subagent":
        parent = load_thread_key(source.parent_key or "", roots, held=held, load_file=load_file)
        return parent.subagents.get(source.call_id or "") if parent is not None else None
    if source.kind == "library":
        assert roots.library is not None and source.entry_id is not None  # resolve checked both
        return roots.library.load(source.entry_id)
    if source.kind == "session":
        from engine.workspace.disk_sessions import load_listed

        assert source.session is not None
        thread: Thread = load_listed(source.session)
        return thread
    assert source.path is not None
    if load_file is not None:
        return load_file(source.path)
    from engine.formats import load_thread

    return load_thread(source.path)


def roots_from_environment(samples: Path, *, opened_env: str = "CTXI_OPEN", library: Library | None = None) -> ThreadRoots:
    """The roots of a dashboard server: its samples folder and the file `ctxi ui FILE` put in `opened_env`."""
    opened = os.environ.get(opened_env)
    return ThreadRoots(samples=samples, opened=Path(opened) if opened else None, library=library)
