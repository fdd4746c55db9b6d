"""A workspace on disk: the `/memories/` that persist across threads, and saved threads.

Layout under the root (default `$CTXI_WORKSPACE`, else `~/.context-inspector`):

    memories/<path>          the virtual filesystem's `/memories/<path>`, as text files
    threads/<name>.json      saved threads, in the native thread format

Nothing is created until something is saved.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from engine.base.errors import ContextInspectorError, ThreadLoadError, ThreadNotFoundError
from engine.base.files import RefusedFile, read_regular
from engine.formats.native import dumps, thread_from_dict
from engine.formats.source import DEFAULT_MAX_BYTES, ThreadRef
from engine.thread.model import Thread
from engine.workspace.vfs import PathError, VirtualFilesystem, normalize_path

MEMORIES_PREFIX = "/memories/"
ENV_VAR = "CTXI_WORKSPACE"
DEFAULT_ROOT = Path("~/.context-inspector")
MAX_THREAD_NAME_CHARS = 100
# Memory files are injected into prompts within a token budget: anything this big is not a memory.
MAX_MEMORY_FILE_BYTES = 16 * 1024 * 1024
# The longest file name most file systems take (ext4, APFS, NTFS: 255 bytes or characters).
MAX_NAME_BYTES = 255


class WorkspaceError(ContextInspectorError):
    """A workspace file could not be read or written; names the file."""


def default_root() -> Path:
    """`$CTXI_WORKSPACE` if set, else `~/.context-inspector`."""
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else DEFAULT_ROOT.expanduser()


def thread_file_name(thread_id: str) -> str:
    """A safe, stable file name for a thread id; ids that had to change get a hash so names never collide."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", thread_id).lstrip(".")[:MAX_THREAD_NAME_CHARS]
    if safe != thread_id or not safe:
        safe = f"{safe or 'thread'}-{hashlib.sha256(thread_id.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"
    return safe + ".json"


def _blocking_file(folder: Path) -> Path | None:
    """The first existing ancestor of `folder` (itself included) that is not a directory."""
    for p in (folder, *folder.parents):
        if p.exists() or p.is_symlink():
            return None if p.is_dir() else p
    return None


def _write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` atomically: a temporary file with a unique name beside it, then `os.replace`.

    A unique temporary name (`tempfile.mkstemp`) so two saves at once never write the same temporary
    file (a fixed `<name>.tmp` made 208 of 400 concurrent saves fail); the temporary file is removed
    on any failure, so nothing is left behind. Every failure is one WorkspaceError naming the file.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate (JSON "\ud800" decodes to one): not Unicode text
        raise WorkspaceError(f"{path}: cannot write: the text holds a lone surrogate (U+{ord(exc.object[exc.start]):04X} "
                             f"at character {exc.start}), which is not valid Unicode") from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = _blocking_file(path.parent)
        why = f"{blocker} is a file, not a folder" if blocker is not None else (exc.strerror or str(exc))
        raise WorkspaceError(f"{path}: cannot write: {why}") from None
    if path.is_dir():
        raise WorkspaceError(f"{path}: cannot write: it is a folder")
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:60]}.", suffix=".tmp")
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot write ({exc.strerror or exc})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise WorkspaceError(f"{path}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _claim_new(path: Path, text: str) -> bool:
    """Write `text` to `path` only if no file is there: False when another save took the name first.

    A temporary file is hard-linked to the name (`os.link` fails if the name exists), so of two
    saves that both found `<id>-5` free, one gets it and the other moves on to `<id>-6`: checking
    `exists()` then replacing let the second overwrite the first (10 of 400 concurrent saves of
    different threads under 8 ids were lost).
    """
    tmp = path.with_name(f".{path.name[:60]}.{os.getpid()}.{threading.get_ident()}.claim.tmp")
    _write_atomic(tmp, text)
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot write ({exc.strerror or exc})") from None
    finally:
        tmp.unlink(missing_ok=True)


def _read_memory_file(path: Path) -> str:
    """A memory file's text: a regular UTF-8 file of at most MAX_MEMORY_FILE_BYTES (engine.base.files)."""
    try:
        return read_regular(path, MAX_MEMORY_FILE_BYTES).decode("utf-8")
    except RefusedFile as exc:
        why = exc.reason if exc.limit_bytes is None else f"memory file is above {exc.limit_bytes:,} bytes"
        raise WorkspaceError(f"{path}: {why}") from None
    except UnicodeDecodeError:
        raise WorkspaceError(f"{path}: memory file is not UTF-8 text") from None
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _same_bytes(path: Path, text: str) -> bool:
    try:
        return path.read_bytes() == text.encode("utf-8")
    except OSError:
        return False


@dataclass
class SavedThreads:
    """What `Workspace.scan_threads` found: the readable saved threads and a line per skipped file."""

    refs: list[ThreadRef] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


class Workspace:
    """Memories and saved threads under one root directory."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else default_root()
        # thread id -> the file it was listed from (a file whose thread_id differs from its name)
        self._listed: dict[str, Path] = {}

    def check_root(self) -> None:
        """WorkspaceError when the root (e.g. `$CTXI_WORKSPACE`) exists but is not a folder."""
        if self.root.exists() and not self.root.is_dir():
            raise WorkspaceError(f"{self.root}: the workspace is a file, not a folder (set {ENV_VAR} to a folder)")

    @property
    def memories_dir(self) -> Path:
        return self.root / "memories"

    @property
    def threads_dir(self) -> Path:
        return self.root / "threads"

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    # -- memories -------------------------------------------------------------------------------
    def _disk_path(self, vfs_path: str) -> Path:
        """The file behind a `/memories/...` path; refuses anything outside the memories folder."""
        try:
            p = normalize_path(vfs_path)
        except PathError as exc:
            raise WorkspaceError(f"{vfs_path!r}: {exc}") from None
        if not p.startswith(MEMORIES_PREFIX):
            raise WorkspaceError(f"{p}: memory paths live under {MEMORIES_PREFIX}")
        for name in p[len(MEMORIES_PREFIX):].split("/"):
            if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
                raise WorkspaceError(f"{p[:120]}…: a name is longer than {MAX_NAME_BYTES} bytes, the file system's limit")
            if any(0xD800 <= ord(c) <= 0xDFFF for c in name):
                raise WorkspaceError(f"{p!r}: a name holds a lone surrogate, which is not valid Unicode")
        self.check_root()
        target = self.memories_dir.joinpath(*p[len(MEMORIES_PREFIX):].split("/"))
        base = self.memories_dir.resolve()
        if not target.resolve().is_relative_to(base):  # a symlink pointing out of the workspace
            raise WorkspaceError(f"{target}: resolves outside the workspace memories folder {base}")
        return target

    def memory_files(self) -> dict[str, str]:
        """`{"/memories/<path>": text}` for every memory file on disk, sorted by path."""
        base = self.memories_dir
        if not base.is_dir():
            return {}
        out: dict[str, str] = {}
        resolved_base = base.resolve()
        for f in sorted(base.rglob("*")):
            if not f.is_file() or f.name.endswith(".tmp") or not f.resolve().is_relative_to(resolved_base):
                continue
            rel = f.relative_to(base).as_posix()
            out[MEMORIES_PREFIX + rel] = _read_memory_file(f)
        return out

    def read_memory(self, vfs_path: str) -> str | None:
        path = self._disk_path(vfs_path)
        if not path.is_file():
            return None
        return _read_memory_file(path)

    def write_memory(self, vfs_path: str, text: str) -> Path:
        path = self._disk_path(vfs_path)
        _write_atomic(path, text)
        return path

    def load_memories(self, vfs: VirtualFilesystem, *, overwrite: bool = False) -> list[str]:
        """Copy the memory files into `vfs` under `/memories/`; returns the paths written.

        Files the VFS already holds are kept unless `overwrite` (a run's own writes win).
        """
        loaded = []
        for path, text in self.memory_files().items():
            if overwrite or not vfs.exists(path):
                vfs.write(path, text, layer="memory", source_id=str(self.memories_dir))
                loaded.append(path)
        return loaded

    def save_memories(self, vfs: VirtualFilesystem, problems: list[str] | None = None) -> list[Path]:
        """Write every `/memories/` file of `vfs` that differs from disk; returns the files written.

        With `problems`, a file that cannot be written (a name too long, a file where a folder is
        needed, a lone surrogate) is skipped and its one-line reason appended there; else it raises.
        """
        written = []
        for path in vfs.paths():
            if not path.startswith(MEMORIES_PREFIX):
                continue
            text = vfs.read(path)
            try:
                if self.read_memory(path) != text:
                    written.append(self.write_memory(path, text))
            except WorkspaceError as exc:
                if problems is None:
                    raise
                problems.append(str(exc))
        return written

    # -- threads --------------------------------------------------------------------------------
    def thread_path(self, thread_id: str) -> Path:
        return self.threads_dir / thread_file_name(thread_id)

    def save_thread(self, thread: Thread) -> Path:
        """Save a thread (native JSON); the same thread always gives the same bytes.

        A different thread already saved under the same id is never overwritten: this one is saved
        as `<id>-2`, `<id>-3`, … (its `thread_id` changed to match), so no earlier run is lost.
        """
        self.check_root()
        base, n = thread.thread_id, 1
        while True:
            text = dumps(thread)
            path = self.thread_path(thread.thread_id)
            if path.exists():
                if _same_bytes(path, text):
                    return path
            elif _claim_new(path, text) or _same_bytes(path, text):  # claimed atomically: never shared
                return path
            n += 1
            thread.thread_id = f"{base}-{n}"

    def scan_threads(self) -> SavedThreads:
        """The saved threads sorted by id, and the files that could not be read (each named, with why)."""
        self.check_root()
        out = SavedThreads()
        if not self.threads_dir.is_dir():
            return out
        listed: dict[str, Path] = {}
        for f in sorted(self.threads_dir.glob("*.json")):
            try:
                doc = self._read_json(f)
            except ThreadLoadError as exc:  # one unreadable file must not hide every saved run
                out.skipped.append(str(exc))
                continue
            title, messages = doc.get("title"), doc.get("messages")
            raw_id = doc.get("thread_id")
            thread_id = raw_id if isinstance(raw_id, str) and raw_id else f.stem
            if thread_id in listed:  # two files claim one id: the second is listed by its file name
                thread_id = f.stem
            listed[thread_id] = f
            out.refs.append(ThreadRef(thread_id, title if isinstance(title, str) else None,
                                      len(messages) if isinstance(messages, list) else 0))
        out.refs.sort(key=lambda r: r.thread_id)
        self._listed = listed
        return out

    def list_threads(self) -> list[ThreadRef]:
        """The saved threads, sorted by id (unreadable files skipped: `scan_threads` names them)."""
        return self.scan_threads().refs

    def saved_path(self, thread_id: str) -> Path:
        """The file a saved thread id lives in (as listed, even when its name does not match the id)."""
        hit = self._listed.get(thread_id)
        if hit is None or not hit.is_file():
            self.scan_threads()
            hit = self._listed.get(thread_id)
        return hit if hit is not None else self.thread_path(thread_id)

    def load(self, thread_id: str) -> Thread:
        """A saved thread by id (its file found by name, or by the listing when its id differs from it)."""
        path = self.saved_path(thread_id)
        if not path.is_file():
            raise ThreadNotFoundError(f"no saved thread {thread_id!r} in workspace {self.root}", path=str(path), format="native")
        thread = thread_from_dict(self._read_json(path), label=str(path))
        if thread.thread_id != thread_id:
            thread.thread_id = thread_id  # opened under the id it was listed with
        return thread

    @staticmethod
    def _read_json(path: Path) -> dict[str, object]:
        try:
            doc = json.loads(read_regular(path, DEFAULT_MAX_BYTES).decode("utf-8"))
        except RefusedFile as exc:
            raise ThreadLoadError(exc.reason if exc.limit_bytes is None else f"above {exc.limit_bytes:,} bytes",
                                  path=str(path), format="native") from None
        except UnicodeDecodeError as exc:
            raise ThreadLoadError(f"not UTF-8 text (invalid byte at offset {exc.start})", path=str(path),
                                  format="native") from None
        except OSError as exc:
            raise ThreadLoadError(f"cannot read ({exc.strerror or exc})", path=str(path), format="native") from None
        except RecursionError:
            raise ThreadLoadError("JSON is nested too deeply to read", path=str(path), format="native") from None
        except json.JSONDecodeError as exc:
            raise ThreadLoadError(f"invalid JSON: {exc.msg}", path=str(path), format="native",
                                  location=f"line {exc.lineno}, column {exc.colno}") from None
        if not isinstance(doc, dict):
            raise ThreadLoadError("expected a JSON object", path=str(path), format="native")
        return doc


__all__ = ["ENV_VAR", "MEMORIES_PREFIX", "SavedThreads", "Workspace", "WorkspaceError", "default_root", "thread_file_name"]
