"""Agents' own session files on disk: the roots a server may list, the sessions found under them, safe reads.

The roots come only from the server's own start: `ctxi ui --sessions DIR` / `ctxi sessions DIR`
(repeatable), the `CTXI_SESSIONS` environment variable (paths separated by `os.pathsep`) or the
`sessions.roots` key of the workspace's `settings.yaml`. A link never names a root or a path: it can
only pick a listed session by its id (`session:<24 hex digits>`, a hash of the root and the path
inside it), looked up in a fresh listing.

Known layouts (each cited where it is recognised, docs/sessions.md has the table):
- Claude Code: `~/.claude/projects/<project>/<session id>.jsonl`; sub-agents in
  `<project>/<session id>/subagents/agent-*.jsonl` (2.0.x: `agent-*.jsonl` beside the session) are
  attached to their session, never listed alone (Claude Code docs, sessions.md "Where transcripts are
  stored", claude-directory.md "Cleaned up automatically").
- Codex CLI: `~/.codex/sessions/YYYY/MM/DD/rollout-<YYYY-MM-DDThh-mm-ss>-<uuid>.jsonl`, also under
  `archived_sessions/`, compressed `.jsonl.zst` (the plain file wins when both exist) and a rollout's
  later segments `<base>.compact-NNNNNN.jsonl` attached to it (openai/codex `codex-rs/core/src/rollout/
  recorder.rs` `create_log_file`, `rollout/mod.rs`, `codex-rs/rollout/src/compression.rs`).
- Gemini CLI: `~/.gemini/tmp/<project>/chats/session-*.json` or `.jsonl`; a sub-agent session in
  `chats/<parent session id>/*.jsonl` is attached to its parent (google-gemini/gemini-cli
  `packages/core/src/config/storage.ts` `listProjectChatFiles`); the project's path is in
  `tmp/<project>/.project_root` (`config/projectRegistry.ts`).
- Cline: a task folder `tasks/<task id>/` holding `api_conversation_history.json` and its siblings
  (cline/cline `src/core/storage/disk.ts` `GlobalFileNames`).

Safety: the walk never follows a symlink out of its root (a symlink is resolved and kept only when
its target lies inside the root), lists only regular files (a FIFO, a device or a socket is refused
and counted, never opened), and stops at `MAX_DEPTH` levels and `MAX_ENTRIES` entries. A listed file is
opened again component by component from the root with `O_NOFOLLOW`, so a path swapped for a symlink
after the listing cannot lead out. Nothing under a root is ever written.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from engine.base.errors import ContextInspectorError
from engine.base.files import RefusedFile, file_kind

Agent = Literal["claude-code", "codex", "gemini-cli", "cline"]
AGENTS: tuple[Agent, ...] = ("claude-code", "codex", "gemini-cli", "cline")
# The importer (engine.formats) each agent's files are read with.
FORMAT_OF: dict[str, str] = {"claude-code": "claude_code", "codex": "codex", "gemini-cli": "gemini_cli",
                             "cline": "cline"}
ENV_VAR = "CTXI_SESSIONS"
SETTINGS_FILE = "settings.yaml"
SESSION_PREFIX = "session:"
ID_LENGTH = 24
# ~/.gemini/tmp/<project>/chats/<parent>/<sub>.jsonl is 4 levels below ~/.gemini/tmp; a root given
# higher up (the home folder) reaches Codex's sessions/YYYY/MM/DD at 5-6. Deeper folders are not walked.
MAX_DEPTH = 8
MAX_ENTRIES = 200_000
# Folders that hold no session of any layout here, skipped by name (Claude Code keeps large tool
# outputs and file snapshots beside its transcripts).
SKIPPED_DIRS = frozenset({"tool-results", "file-history", "shell-snapshots", "node_modules", ".git", "__pycache__",
                          "paste-cache", "image-cache", "checkpoints"})
CLINE_HISTORY = "api_conversation_history.json"
CLINE_SIBLINGS = ("ui_messages.json", "claude_messages.json", "task_metadata.json", "context_history.json")
PROJECT_ROOT_FILE = ".project_root"  # gemini-cli projectRegistry.ts PROJECT_ROOT_FILE
MAX_PROJECT_ROOT_BYTES = 4096


class SessionRootError(ContextInspectorError):
    """A configured sessions root cannot be used (missing, not a folder); names it."""


@dataclass(frozen=True)
class SessionFile:
    """One session found under a root: where it is, which agent wrote it, what belongs with it."""

    id: str
    agent: Agent
    root: Path  # the root, resolved
    rel: str  # the transcript's path inside the root (posix), symlinks inside the root resolved
    size: int
    mtime_ns: int
    dev: int
    ino: int
    companions: tuple[str, ...] = ()  # paths inside the root read with it (sub-agents, Cline siblings, segments)
    project: str | None = None  # from the layout (folder name, Gemini's .project_root); summaries may refine it
    compressed: bool = False  # a Codex rollout kept as .jsonl.zst

    @property
    def path(self) -> Path:
        return self.root / self.rel

    @property
    def format(self) -> str:
        return FORMAT_OF[self.agent]

    @property
    def key(self) -> str:
        return SESSION_PREFIX + self.id

    def stat_key(self) -> tuple[int, int, int, int]:
        """What changes when the file does: device, inode, size, modification time."""
        return (self.dev, self.ino, self.size, self.mtime_ns)


@dataclass
class Listing:
    """Every session under the roots, and what was refused or left unwalked (with why)."""

    roots: tuple[Path, ...]
    sessions: list[SessionFile] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    truncated: bool = False
    # Codex's thread-name index (`$CODEX_HOME/session_index.jsonl`) when a root holds it: (root, rel)
    codex_indexes: list[tuple[Path, str]] = field(default_factory=list)

    def by_id(self) -> dict[str, SessionFile]:
        return {s.id: s for s in self.sessions}


# -- roots -------------------------------------------------------------------------------------------
def session_id(root: Path, rel: str) -> str:
    """The id a link may carry: 24 hex digits of a SHA-256 over the root and the path inside it."""
    return hashlib.sha256(f"{root}\0{rel}".encode("utf-8", "surrogatepass")).hexdigest()[:ID_LENGTH]


def valid_session_id(value: str) -> bool:
    return len(value) == ID_LENGTH and all(c in "0123456789abcdef" for c in value)


def session_key_id(key: str) -> str | None:
    """The id a `session:<id>` key names, or None for anything else."""
    if not key.startswith(SESSION_PREFIX):
        return None
    value = key[len(SESSION_PREFIX):]
    return value if valid_session_id(value) else None


def settings_roots(workspace_root: Path) -> list[str]:
    """`sessions.roots` of the workspace's `settings.yaml` (a list of folders), or nothing."""
    path = workspace_root / SETTINGS_FILE
    try:
        from engine.base.files import read_regular_text

        doc = yaml.safe_load(read_regular_text(path, 1 << 20))
    except FileNotFoundError:
        return []
    except (OSError, RefusedFile, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SessionRootError(f"{path}: cannot read sessions.roots ({getattr(exc, 'reason', None) or exc})") from None
    section = doc.get("sessions") if isinstance(doc, dict) else None
    roots = section.get("roots") if isinstance(section, dict) else None
    if roots is None:
        return []
    if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
        raise SessionRootError(f"{path}: sessions.roots must be a list of folder paths")
    return list(roots)


def configured_roots(cli_roots: Sequence[str] = (), *, environ: dict[str, str] | None = None,
                     workspace_root: Path | None = None) -> list[str]:
    """The roots a server lists: those given on its command line, else `CTXI_SESSIONS`, else `settings.yaml`."""
    if cli_roots:
        return list(cli_roots)
    env = os.environ if environ is None else environ
    raw = env.get(ENV_VAR, "")
    if raw.strip():
        return [p for p in raw.split(os.pathsep) if p.strip()]
    if workspace_root is not None:
        return settings_roots(workspace_root)
    return []


def resolve_roots(roots: Iterable[str | os.PathLike[str]]) -> tuple[Path, ...]:
    """Each root expanded and resolved; a root that is missing or not a folder is one error naming it."""
    out: list[Path] = []
    for raw in roots:
        text = str(raw)
        if "\x00" in text:
            raise SessionRootError(f"{text!r}: not a folder path")
        path = Path(text).expanduser()
        try:
            resolved = path.resolve(strict=True)
        except (OSError, RuntimeError):
            raise SessionRootError(f"{path}: sessions root not found") from None
        if not resolved.is_dir():
            raise SessionRootError(f"{path}: sessions root is not a folder")
        if resolved not in out:
            out.append(resolved)
    return tuple(out)


def _inside(root: Path, target: str) -> bool:
    try:
        return os.path.commonpath([str(root), target]) == str(root)
    except ValueError:
        return False


# -- the walk ----------------------------------------------------------------------------------------
@dataclass
class _Walk:
    root: Path
    listing: Listing
    entries: int = 0
    seen_dirs: set[tuple[int, int]] = field(default_factory=set)
    files: dict[str, os.stat_result] = field(default_factory=dict)  # rel -> stat of the regular file
    dirs: set[str] = field(default_factory=set)  # rel of every walked folder

    def refuse(self, rel: str, reason: str) -> None:
        self.listing.refused.append((str(self.root / rel), reason))

    def walk(self, folder: Path, rel: str, depth: int) -> None:
        try:
            info = os.stat(folder)
        except OSError:
            return
        if (info.st_dev, info.st_ino) in self.seen_dirs:
            return  # a symlink loop, or a folder reached twice through a symlink inside the root
        self.seen_dirs.add((info.st_dev, info.st_ino))
        self.dirs.add(rel)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            self.refuse(rel or ".", f"cannot list this folder ({exc.strerror or exc})")
            return
        for entry in entries:
            self.entries += 1
            if self.entries > MAX_ENTRIES:
                self.listing.truncated = True
                return
            child_rel = f"{rel}/{entry.name}" if rel else entry.name
            path = folder / entry.name
            try:
                if entry.is_symlink():
                    target = os.path.realpath(path)
                    if not _inside(self.root, target):
                        self.refuse(child_rel, "a symlink leading outside the root")
                        continue
                    path = Path(target)
                    child_rel = os.path.relpath(target, self.root).replace(os.sep, "/")
                    st = os.stat(path)
                else:
                    st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.name in SKIPPED_DIRS:
                    continue
                if depth >= MAX_DEPTH:
                    self.listing.truncated = True
                    continue
                self.walk(path, child_rel, depth + 1)
            elif stat.S_ISREG(st.st_mode):
                self.files[child_rel] = st
            elif _looks_like_session(entry.name):
                self.refuse(child_rel, f"is {file_kind(st.st_mode)}, not a regular file")


def _looks_like_session(name: str) -> bool:
    return name.endswith((".jsonl", ".json", ".jsonl.zst"))


def _name(rel: str) -> str:
    return rel.rsplit("/", 1)[-1]


def _parent(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def _codex_base(name: str) -> str | None:
    """The plain rollout name a Codex file belongs to (`rollout-….jsonl`), or None for other names."""
    if not name.startswith("rollout-"):
        return None
    plain = name.removesuffix(".zst")
    if not plain.endswith(".jsonl"):
        return None
    core = plain.removesuffix(".jsonl")
    if ".compact-" in core:
        core = core.split(".compact-", 1)[0]
    return core + ".jsonl"


def _read_small(path: Path, limit: int) -> str | None:
    from engine.base.files import read_regular

    try:
        return read_regular(path, limit).decode("utf-8", "replace").strip() or None
    except (OSError, RefusedFile):
        return None


def _classify(walk: _Walk) -> list[SessionFile]:
    root, files = walk.root, walk.files
    out: list[SessionFile] = []
    taken: set[str] = set()
    by_parent: dict[str, list[str]] = {}  # folder -> the files directly in it (one pass, no n² search)
    for rel in sorted(files):
        by_parent.setdefault(_parent(rel), []).append(rel)
    subfolders: dict[str, list[str]] = {}  # folder -> the folders directly in it
    for folder in sorted(walk.dirs):
        if folder:
            subfolders.setdefault(_parent(folder), []).append(folder)

    def add(agent: Agent, rel: str, companions: Iterable[str] = (), project: str | None = None,
            compressed: bool = False) -> None:
        st = files[rel]
        taken.add(rel)
        taken.update(companions)
        out.append(SessionFile(id=session_id(root, rel), agent=agent, root=root, rel=rel, size=st.st_size,
                               mtime_ns=st.st_mtime_ns, dev=st.st_dev, ino=st.st_ino,
                               companions=tuple(sorted(companions)), project=project, compressed=compressed))

    # Cline: a folder holding api_conversation_history.json is a task.
    for rel in sorted(r for r in files if _name(r) == CLINE_HISTORY):
        folder = _parent(rel)
        siblings = [f"{folder}/{n}" if folder else n for n in CLINE_SIBLINGS]
        add("cline", rel, [s for s in siblings if s in files])
    # Codex: rollout files, their compressed twins and later segments; a rollout folder's rollout.jsonl.
    # Its thread names: session_index.jsonl (codex-rs/core/src/rollout/session_index.rs).
    walk.listing.codex_indexes.extend((root, r) for r in sorted(files) if _name(r) == "session_index.jsonl")
    codex: dict[str, list[str]] = {}
    for rel in files:
        name = _name(rel)
        base = _codex_base(name)
        if base is not None:
            codex.setdefault(f"{_parent(rel)}/{base}" if _parent(rel) else base, []).append(rel)
        elif name == "rollout.jsonl" and _name(_parent(rel)).startswith("rollout-"):
            codex.setdefault(rel, []).append(rel)
        elif name.startswith("compact-") and name.endswith(".jsonl") and _name(_parent(rel)).startswith("rollout-"):
            codex.setdefault(f"{_parent(rel)}/rollout.jsonl", []).append(rel)
    for base, members in sorted(codex.items()):
        plain = base if base in files else None
        main = plain or (base + ".zst" if base + ".zst" in files else None)
        if main is None:
            continue
        segments = sorted(m for m in members if m not in (base, base + ".zst"))
        add("codex", main, segments, compressed=main.endswith(".zst"))
        taken.update(members)
    # Gemini CLI: chats/session-*.json[l]; chats/<parent id>/*.jsonl are sub-agent sessions.
    projects: dict[str, str | None] = {}
    for rel in sorted(files):
        parts = rel.split("/")
        if rel in taken or len(parts) < 2:
            continue
        name = parts[-1]
        if parts[-2] == "chats" and name.startswith("session-") and name.endswith((".json", ".jsonl")):
            project_dir = "/".join(parts[:-2])
            if project_dir not in projects:
                marker = f"{project_dir}/{PROJECT_ROOT_FILE}" if project_dir else PROJECT_ROOT_FILE
                projects[project_dir] = (_read_small(root / marker, MAX_PROJECT_ROOT_BYTES) if marker in files
                                         else None) or (parts[-3] if len(parts) >= 3 else None)
            chats = "/".join(parts[:-1])
            short = name.rsplit("-", 1)[-1].split(".", 1)[0]  # session-<time>-<first 8 chars of the id>
            subs = [r for folder in subfolders.get(chats, ()) if _name(folder).startswith(short)
                    for r in by_parent.get(folder, ()) if r.endswith(".jsonl")] if short else []
            add("gemini-cli", rel, subs, project=projects[project_dir])
    # Claude Code: any other *.jsonl that is not a sub-agent file (the importer attaches those).
    for rel in sorted(files):
        if rel in taken or not rel.endswith(".jsonl"):
            continue
        parts = rel.split("/")
        name = parts[-1]
        if name.startswith("agent-") or "subagents" in parts[:-1] or name in ("history.jsonl", "session_index.jsonl"):
            continue
        if len(parts) >= 2 and parts[-2] == "chats":
            continue  # a Gemini CLI chat file under a name we do not know: not a Claude Code session
        stem = name.removesuffix(".jsonl")
        folder = _parent(rel)
        sub_dir = f"{folder}/{stem}/subagents" if folder else f"{stem}/subagents"
        subs = [r for r in by_parent.get(sub_dir, ()) if _name(r).startswith("agent-") and r.endswith(".jsonl")]
        beside = [r for r in by_parent.get(folder, ()) if _name(r).startswith("agent-") and r.endswith(".jsonl")]
        add("claude-code", rel, subs + beside, project=_name(folder) or None)
    return out


def discover(roots: Sequence[Path]) -> Listing:
    """Every session under `roots` (resolved folders), newest first; refused entries listed with why."""
    listing = Listing(tuple(roots))
    for root in roots:
        walk = _Walk(root, listing)
        walk.walk(root, "", 0)
        listing.sessions.extend(_classify(walk))
    listing.sessions.sort(key=lambda s: (s.mtime_ns, s.id), reverse=True)
    return listing


def discover_configured(cli_roots: Sequence[str] = (), *, workspace_root: Path | None = None) -> Listing:
    return discover(resolve_roots(configured_roots(cli_roots, workspace_root=workspace_root)))


# -- reading a listed file ----------------------------------------------------------------------------
def open_under(root: Path, rel: str) -> int:
    """A read-only descriptor of the regular file `rel` inside `root`, opened component by component
    with O_NOFOLLOW (a symlink anywhere on the way is refused), never blocking on a FIFO."""
    parts = [p for p in rel.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise RefusedFile("not a path inside the root")
    flags_dir = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, flags_dir, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise RefusedFile(f"{part} is a symlink or no folder, not the listed path") from None
                raise
            os.close(fd)
            fd = nxt
        flags = (os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_NOCTTY", 0))
        try:
            file_fd = os.open(parts[-1], flags, dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise RefusedFile("is a symlink, not a listed file") from None
            raise
    finally:
        os.close(fd)
    info = os.fstat(file_fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(file_fd)
        raise RefusedFile(f"is {file_kind(info.st_mode)}, not a regular file")
    return file_fd


def read_under(root: Path, rel: str, max_bytes: int, *, offset: int = 0) -> bytes:
    """The bytes of a listed file from `offset` on (at most `max_bytes`), read through `open_under`."""
    fd = open_under(root, rel)
    try:
        size = os.fstat(fd).st_size
        if size - offset > max_bytes:
            raise RefusedFile("too large", limit_bytes=max_bytes, size_bytes=size)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.pread(fd, min(16 << 20, max_bytes + 1 - total), offset + total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise RefusedFile("too large", limit_bytes=max_bytes)
        return b"".join(chunks)
    finally:
        os.close(fd)


def relisted(session: SessionFile) -> SessionFile | None:
    """The same session as the disk has it now (its size and time refreshed), or None when it is gone
    or is no longer a regular file inside its root."""
    try:
        fd = open_under(session.root, session.rel)
    except (OSError, RefusedFile):
        return None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    from dataclasses import replace

    return replace(session, size=st.st_size, mtime_ns=st.st_mtime_ns, dev=st.st_dev, ino=st.st_ino)


def stage_companions(session: SessionFile, folder: Path, max_bytes: int) -> Path:
    """Copy the session's companions (read through `open_under`) into `folder`, laid out around the
    transcript as on disk, and return where the transcript would be: the importers that look beside a
    transcript (Claude Code sub-agents, a Cline task's files) then see only files the listing vetted,
    never a symlink swapped in since. The transcript itself is not copied (pass its bytes)."""
    base = _parent(session.rel)
    main = folder / _name(session.rel)
    for rel in session.companions:
        inner = rel[len(base) + 1:] if base and rel.startswith(base + "/") else (rel if not base else None)
        if inner is None or any(p in ("", ".", "..") for p in inner.split("/")):
            continue  # not below the transcript's folder (a Gemini sub-agent): the importer never reads it
        try:
            data = read_under(session.root, rel, max_bytes)
        except (OSError, RefusedFile):
            continue
        target = folder / inner
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return main


class staged:
    """`with staged(session) as path:` a private folder holding the session's companions (see
    `stage_companions`); `path` is where the transcript would be. Removed on exit."""

    def __init__(self, session: SessionFile, max_bytes: int = 512 * 1024 * 1024) -> None:
        self.session, self.max_bytes = session, max_bytes
        self._tmp: Any = None

    def __enter__(self) -> Path:
        import tempfile

        self._tmp = tempfile.TemporaryDirectory(prefix="ctxi-session-")
        return stage_companions(self.session, Path(self._tmp.name), self.max_bytes)

    def __exit__(self, *exc: object) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()


def relisted_companions(session: SessionFile) -> list[tuple[str, int, int]]:
    """A Claude Code session's sub-agent files as they are now, `(rel, size, mtime_ns)`: the listing's
    rules, walked again in the session's own folder only (a followed session gains sub-agents)."""
    if session.agent != "claude-code":
        return [(r, 0, 0) for r in session.companions]
    folder = _parent(session.rel)
    stem = _name(session.rel).removesuffix(".jsonl")
    out: list[tuple[str, int, int]] = []
    for sub in (folder, f"{folder}/{stem}/subagents" if folder else f"{stem}/subagents"):
        try:
            entries = list(os.scandir(session.root / sub if sub else session.root))
        except OSError:
            continue
        for entry in entries:
            if not (entry.name.startswith("agent-") and entry.name.endswith(".jsonl")):
                continue
            try:
                st = entry.stat(follow_symlinks=False)  # a symlink is never a companion here
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out.append((f"{sub}/{entry.name}" if sub else entry.name, st.st_size, st.st_mtime_ns))
    return sorted(out)


def load_listed(session: SessionFile, max_bytes: int = 512 * 1024 * 1024) -> Any:
    """The Thread of a listed session, read by its agent's importer from vetted bytes only (`staged`);
    a Codex `.jsonl.zst` is decompressed first. Nothing is written under the root."""
    from engine.formats import load_thread

    data = read_under(session.root, session.rel, max_bytes)
    if session.compressed:
        import zstandard

        data = zstandard.ZstdDecompressor().stream_reader(data).read(max_bytes + 1)
        if len(data) > max_bytes:
            raise RefusedFile("too large once decompressed", limit_bytes=max_bytes)
    with staged(session, max_bytes) as main:
        return load_thread(main, data=data, name=str(session.path), format=session.format)


def describe(session: SessionFile) -> dict[str, Any]:
    return {"id": session.id, "key": session.key, "agent": session.agent, "format": session.format,
            "root": str(session.root), "path": str(session.path), "size_bytes": session.size,
            "modified_ns": session.mtime_ns, "companions": list(session.companions), "compressed": session.compressed}


__all__ = ["AGENTS", "ENV_VAR", "FORMAT_OF", "ID_LENGTH", "Listing", "SESSION_PREFIX", "SessionFile", "SessionRootError",
           "configured_roots", "describe", "load_listed", "relisted_companions", "discover", "discover_configured", "open_under", "read_under", "relisted",
           "resolve_roots", "session_id", "session_key_id", "settings_roots", "stage_companions", "staged",
           "valid_session_id"]
