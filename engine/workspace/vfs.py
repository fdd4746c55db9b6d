"""The virtual filesystem layers write to (offloaded results, history files, memories)."""

from __future__ import annotations

import fnmatch
import posixpath
from typing import Any

from engine.thread.lazytext import LazyText


class PathError(ValueError):
    """A path that is not an absolute path inside the virtual filesystem."""


def normalize_path(path: str) -> str:
    """An absolute, normalized path; anything that would escape the root is refused."""
    if not isinstance(path, str) or not path:
        raise PathError(f"invalid path {path!r}")
    if "\x00" in path:
        raise PathError("path contains a NUL byte")
    if not path.startswith("/"):
        path = "/" + path
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PathError(f"path {path!r} escapes the virtual filesystem")
    return "/" + "/".join(parts)


class FileEntry:
    """One file. Appends are kept as chunks and joined on first read, so a history file that
    grows by one section per summarization costs linear time, not quadratic.

    A chunk may be a LazyText (engine.thread.lazytext: a history section rendered from the messages the
    run holds anyway); a file with one is rendered on every read instead of kept as a copy.
    """

    __slots__ = ("path", "_chunks", "step", "layer", "source_id", "meta")

    def __init__(self, path: str, content: str | LazyText, step: int | None = None, layer: str | None = None,
                 source_id: str | None = None, meta: dict[str, Any] | None = None) -> None:
        self.path = path
        self._chunks: list[str | LazyText] = [content]
        self.step = step
        self.layer = layer
        self.source_id = source_id
        self.meta = dict(meta or {})

    @property
    def content(self) -> str:
        chunks = self._chunks
        if any(isinstance(c, LazyText) for c in chunks):
            return "".join(map(str, chunks))
        if len(chunks) > 1:
            self._chunks = chunks = ["".join(chunks)]  # type: ignore[arg-type]
        return str(chunks[0])

    @content.setter
    def content(self, value: str) -> None:
        self._chunks = [value]

    def append(self, text: str | LazyText) -> None:
        self._chunks.append(text)

    @property
    def size_chars(self) -> int:
        return sum(map(len, self._chunks))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileEntry) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"FileEntry({self.path!r}, {self.size_chars} chars, step={self.step}, layer={self.layer!r})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "content": self.content,
            "step": self.step,
            "layer": self.layer,
            "source_id": self.source_id,
            "meta": dict(self.meta),
        }


class VirtualFilesystem:
    """An in-memory tree of text files keyed by absolute path (Deep Agents' backend protocol, simplified).

    With `journal=True` (a replay's filesystem) every change is also logged, in order, with what it
    was given (texts by reference): the filesystem as it was after the first n changes is then
    `replayed(n)`, which is how a checkpoint of a replay keeps it (its length, O(1)) and a resumed
    replay gets it back (engine/run/resume.py), without copying the files at every checkpoint.
    """

    def __init__(self, files: dict[str, FileEntry] | None = None, *, journal: bool = False) -> None:
        self._files: dict[str, FileEntry] = dict(files or {})
        self._journal: list[tuple[Any, ...]] | None = [] if journal else None

    # -- writing -------------------------------------------------------------------------
    def write(
        self,
        path: str,
        content: str | LazyText,
        *,
        step: int | None = None,
        layer: str | None = None,
        source_id: str | None = None,
        **meta: Any,
    ) -> FileEntry:
        p = normalize_path(path)
        entry = FileEntry(p, content, step, layer, source_id, dict(meta))
        self._files[p] = entry
        if self._journal is not None:
            self._journal.append(("write", p, content, step, layer, source_id, dict(meta)))
        return entry

    def append(self, path: str, content: str | LazyText, *, step: int | None = None, layer: str | None = None) -> FileEntry:
        p = normalize_path(path)
        old = self._files.get(p)
        if old is None:
            return self.write(p, content, step=step, layer=layer)
        old.append(content)
        old.step = step if step is not None else old.step
        if self._journal is not None:
            self._journal.append(("append", p, content, step, layer))
        return old

    def edit(self, path: str, old: str, new: str, *, replace_all: bool = False) -> int:
        entry = self._files.get(normalize_path(path))
        if entry is None:
            raise FileNotFoundError(path)
        count = entry.content.count(old)
        if count == 0:
            raise ValueError(f"string not found in {path}")
        if count > 1 and not replace_all:
            raise ValueError(f"string occurs {count} times in {path}; pass replace_all")
        entry.content = entry.content.replace(old, new) if replace_all else entry.content.replace(old, new, 1)
        if self._journal is not None:
            self._journal.append(("edit", normalize_path(path), old, new, replace_all))
        return count if replace_all else 1

    def delete(self, path: str) -> bool:
        p = normalize_path(path)
        gone = self._files.pop(p, None) is not None
        if gone and self._journal is not None:
            self._journal.append(("delete", p))
        return gone

    # -- the journal ------------------------------------------------------------------------
    @property
    def journal_length(self) -> int | None:
        """How many changes the journal holds (None: not journaled)."""
        return None if self._journal is None else len(self._journal)

    def replayed(self, n: int | None = None) -> VirtualFilesystem:
        """A new journaled filesystem holding what this one held after its first `n` changes (all of them
        by default), its files new objects (texts shared)."""
        if self._journal is None:
            raise ValueError("this virtual filesystem keeps no journal")
        out = VirtualFilesystem(journal=True)
        for op in self._journal[:n]:
            kind = op[0]
            if kind == "write":
                _, p, content, step, layer, source_id, meta = op
                out.write(p, content, step=step, layer=layer, source_id=source_id, **meta)
            elif kind == "append":
                _, p, content, step, layer = op
                out.append(p, content, step=step, layer=layer)
            elif kind == "edit":
                _, p, old, new, replace_all = op
                out.edit(p, old, new, replace_all=replace_all)
            else:
                out.delete(op[1])
        return out

    # -- reading -------------------------------------------------------------------------
    def exists(self, path: str) -> bool:
        return normalize_path(path) in self._files

    def entry(self, path: str) -> FileEntry:
        p = normalize_path(path)
        if p not in self._files:
            raise FileNotFoundError(p)
        return self._files[p]

    def read(self, path: str, offset: int = 0, limit: int | None = None) -> str:
        content = self.entry(path).content
        if offset == 0 and limit is None:
            return content
        lines = content.splitlines(keepends=True)
        end = None if limit is None else offset + limit
        return "".join(lines[offset:end])

    def ls(self, path: str = "/") -> list[str]:
        """Immediate children of a directory: files by path, directories with a trailing slash."""
        base = normalize_path(path)
        prefix = base if base.endswith("/") else base + "/"
        out: set[str] = set()
        for p in self._files:
            if p.startswith(prefix):
                rest = p[len(prefix) :]
                head, sep, _ = rest.partition("/")
                out.add(prefix + head + ("/" if sep else ""))
        return sorted(out)

    def glob(self, pattern: str, path: str = "/") -> list[str]:
        base = normalize_path(path)
        pat = pattern if pattern.startswith("/") else posixpath.join(base, pattern)
        return sorted(p for p in self._files if fnmatch.fnmatchcase(p, pat) or fnmatch.fnmatchcase(p, pat.replace("**/", "")))

    def grep(self, pattern: str, path: str = "/", glob: str | None = None) -> list[dict[str, Any]]:
        """Literal substring search: `[{path, line, text}]`, line numbers from 1."""
        base = normalize_path(path)
        matches: list[dict[str, Any]] = []
        for p in sorted(self._files):
            if base != "/" and not (p == base or p.startswith(base.rstrip("/") + "/")):
                continue
            if glob and not fnmatch.fnmatchcase(posixpath.basename(p), glob) and not fnmatch.fnmatchcase(p, glob):
                continue
            for n, line in enumerate(self._files[p].content.splitlines(), start=1):
                if pattern in line:
                    matches.append({"path": p, "line": n, "text": line})
        return matches

    def paths(self) -> list[str]:
        return sorted(self._files)

    def entries(self) -> list[FileEntry]:
        return [self._files[p] for p in sorted(self._files)]

    def __len__(self) -> int:
        return len(self._files)

    def copy(self) -> VirtualFilesystem:
        return VirtualFilesystem({p: FileEntry(**{**e.to_dict(), "meta": dict(e.meta)}) for p, e in self._files.items()})

    def to_dict(self) -> dict[str, Any]:
        return {p: e.to_dict() for p, e in sorted(self._files.items())}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> VirtualFilesystem:
        return cls({p: FileEntry(**e) for p, e in d.items()})


class FrozenFilesystem(VirtualFilesystem):
    """What a journaled filesystem held after its first `n` changes, built on first read.

    A finished replay whose driver a later replay takes over (a followed session's next lines) hands
    its filesystem on, and keeps this instead: the files as the run left them, made from the journal
    only if something reads them (usually nothing: the newer run is the one shown)."""

    def __init__(self, source: VirtualFilesystem, n: int) -> None:
        self._source, self._n = source, n
        self._built: dict[str, FileEntry] | None = None

    @property
    def _files(self) -> dict[str, FileEntry]:  # type: ignore[override]
        if self._built is None:
            self._built = self._source.replayed(self._n)._files
        return self._built

    @property
    def _journal(self) -> list[tuple[Any, ...]] | None:  # type: ignore[override]
        journal = self._source._journal
        return None if journal is None else journal[: self._n]

    @property
    def journal_length(self) -> int | None:
        return self._n

    def replayed(self, n: int | None = None) -> VirtualFilesystem:
        return self._source.replayed(self._n if n is None else min(n, self._n))

    def write(self, *args: Any, **kwargs: Any) -> FileEntry:
        raise TypeError("a finished run's files are read-only")

    def append(self, *args: Any, **kwargs: Any) -> FileEntry:
        raise TypeError("a finished run's files are read-only")

    def edit(self, *args: Any, **kwargs: Any) -> int:
        raise TypeError("a finished run's files are read-only")

    def delete(self, *args: Any, **kwargs: Any) -> bool:
        raise TypeError("a finished run's files are read-only")

