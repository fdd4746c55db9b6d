"""Reading a file the user named, in bounded time and memory: regular files only, never past a limit.

`/dev/zero` reports a size of 0 and never ends, a FIFO blocks `open()` until a writer comes, a
socket or a directory is not a file at all. So a file is opened with `O_NONBLOCK` (opening a FIFO
returns at once instead of waiting for a writer), checked with `fstat` (`S_ISREG`) on the open
descriptor (no race with a path swapped in between), and read at most `max_bytes + 1` bytes: the
limit holds while reading, whatever `stat` said (`/proc` files say 0, a file may grow).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

CHUNK_BYTES = 16 * 1024 * 1024


class RefusedFile(Exception):
    """The path is not a regular file, or holds more than the limit; `reason` says which, in words."""

    def __init__(self, reason: str, *, limit_bytes: int | None = None, size_bytes: int | None = None) -> None:
        self.reason = reason
        self.limit_bytes = limit_bytes
        self.size_bytes = size_bytes
        super().__init__(reason)


def file_kind(mode: int) -> str:
    """What a non-regular file is, for a message: "a directory", "a FIFO (named pipe)", …"""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _open_regular_fd(path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RefusedFile(f"is {file_kind(info.st_mode)}, not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """A binary file object for the regular file at `path` (RefusedFile for a FIFO, a device, …)."""
    fd, _ = _open_regular_fd(path)
    return os.fdopen(fd, "rb")


def read_regular(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of the regular file at `path`, refusing anything else or anything above `max_bytes`.

    Raises RefusedFile (not a regular file, too large) or OSError (missing, permission, I/O).
    """
    fd, info = _open_regular_fd(path)
    try:
        if info.st_size > max_bytes:  # a quick refusal; the read below enforces the limit anyway
            raise RefusedFile("too large", limit_bytes=max_bytes, size_bytes=info.st_size)
        chunks: list[bytes] = []
        total = 0
        want = info.st_size + 1 if info.st_size else CHUNK_BYTES
        while True:
            chunk = os.read(fd, min(max(want, 1), max_bytes + 1 - total, 1 << 30))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise RefusedFile("too large", limit_bytes=max_bytes)
            want = CHUNK_BYTES
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)


def read_regular_text(path: str | os.PathLike[str], max_bytes: int, encoding: str = "utf-8") -> str:
    """`read_regular` decoded (UnicodeDecodeError when it is not `encoding`)."""
    return read_regular(path, max_bytes).decode(encoding)


def is_regular(path: str | os.PathLike[str]) -> bool:
    """A regular file (following symlinks), checked without opening it: for listings, not for reading."""
    try:
        return stat.S_ISREG(Path(path).stat().st_mode)
    except (OSError, ValueError):
        return False


__all__ = ["RefusedFile", "file_kind", "is_regular", "open_regular", "read_regular", "read_regular_text"]
