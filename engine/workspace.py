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
from pathlib import Path

from engine.errors import ContextInspectorError, ThreadLoadError, ThreadNotFoundError
from engine.files import RefusedFile, read_regular
from engine.formats.native import dumps, thread_from_dict
from engine.formats.source import DEFAULT_MAX_BYTES, ThreadRef
from engine.thread import Thread
from engine.vfs import PathError, VirtualFilesystem, normalize_path

MEMORIES_PREFIX = "/memories/"
ENV_VAR = "CTXI_WORKSPACE"
DEFAULT_ROOT = Path("~/.context-inspector")
MAX_THREAD_NAME_CHARS = 100
# Memory files are injected into prompts within a token budget: anything this big is not a memory.
MAX_MEMORY_FILE_BYTES = 16 * 1024 * 1024


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


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot write ({exc.strerror or exc})") from None


def _read_memory_file(path: Path) -> str:
    """A memory file's text: a regular UTF-8 file of at most MAX_MEMORY_FILE_BYTES (engine.files)."""
    try:
        return read_regular(path, MAX_MEMORY_FILE_BYTES).decode("utf-8")
    except RefusedFile as exc:
        why = exc.reason if exc.limit_bytes is None else f"memory file is above {exc.limit_bytes:,} bytes"
        raise WorkspaceError(f"{path}: {why}") from None
    except UnicodeDecodeError:
        raise WorkspaceError(f"{path}: memory file is not UTF-8 text") from None
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot read ({exc.strerror or exc})") from None


class Workspace:
    """Memories and saved threads under one root directory."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else default_root()

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

    def save_memories(self, vfs: VirtualFilesystem) -> list[Path]:
        """Write every `/memories/` file of `vfs` that differs from disk; returns the files written."""
        written = []
        for path in vfs.paths():
            if not path.startswith(MEMORIES_PREFIX):
                continue
            text = vfs.read(path)
            if self.read_memory(path) != text:
                written.append(self.write_memory(path, text))
        return written

    # -- threads --------------------------------------------------------------------------------
    def thread_path(self, thread_id: str) -> Path:
        return self.threads_dir / thread_file_name(thread_id)

    def save_thread(self, thread: Thread) -> Path:
        """Save a thread (native JSON); the same thread always gives the same bytes."""
        path = self.thread_path(thread.thread_id)
        _write_atomic(path, dumps(thread))
        return path

    def list_threads(self) -> list[ThreadRef]:
        """The saved threads, sorted by id."""
        if not self.threads_dir.is_dir():
            return []
        refs = []
        for f in sorted(self.threads_dir.glob("*.json")):
            doc = self._read_json(f)
            title, messages = doc.get("title"), doc.get("messages")
            refs.append(ThreadRef(str(doc.get("thread_id") or f.stem), title if isinstance(title, str) else None,
                                  len(messages) if isinstance(messages, list) else 0))
        return sorted(refs, key=lambda r: r.thread_id)

    def load(self, thread_id: str) -> Thread:
        """A saved thread by id."""
        path = self.thread_path(thread_id)
        if not path.is_file():
            raise ThreadNotFoundError(f"no saved thread {thread_id!r} in workspace {self.root}", path=str(path), format="native")
        return thread_from_dict(self._read_json(path), label=str(path))

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


__all__ = ["ENV_VAR", "MEMORIES_PREFIX", "Workspace", "WorkspaceError", "default_root", "thread_file_name"]
