"""A source file as the importers see it: bytes, with lazily parsed JSON or JSONL and clear errors."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from engine.base.errors import FileTooLargeError, ThreadLoadError
from engine.base.files import RefusedFile, read_regular
from engine.formats.dburl import is_postgres_url, redact

if TYPE_CHECKING:
    from engine.thread.model import Thread

DEFAULT_MAX_BYTES = 512 * 1024 * 1024
SQLITE_MAGIC = b"SQLite format 3\x00"


def read_thread_file(path: Path, max_bytes: int) -> bytes:
    """A thread file's bytes: a regular file only, read up to the limit (engine.base.files), errors in one line."""
    try:
        return read_regular(path, max_bytes)
    except RefusedFile as exc:
        if exc.limit_bytes is not None:
            raise FileTooLargeError(path=str(path), size_bytes=exc.size_bytes, limit_bytes=exc.limit_bytes) from None
        if exc.reason.startswith("is a directory"):
            raise ThreadLoadError("is a directory, not a thread file", path=str(path)) from None
        raise ThreadLoadError(f"{exc.reason}; only regular files are read", path=str(path)) from None
    except FileNotFoundError:
        raise ThreadLoadError("file not found", path=str(path)) from None
    except OSError as exc:
        raise ThreadLoadError(f"cannot read file ({exc.strerror or exc})", path=str(path)) from None
    except ValueError as exc:  # a NUL byte in the path
        raise ThreadLoadError(f"cannot open this path ({exc})", path=repr(str(path))) from None


@dataclass(frozen=True)
class ThreadRef:
    """One thread inside a source: its id and what a picker shows."""

    thread_id: str
    title: str | None = None
    messages: int | None = None


class Importer(Protocol):
    name: str

    def sniff(self, source: Source) -> bool: ...

    def list_threads(self, source: Source) -> list[ThreadRef]: ...

    def load(self, source: Source, thread_id: str | None) -> Thread: ...


_UNSET = object()


@dataclass
class Source:
    """Raw input plus cached parses. `path` is set for real files (SQLite needs one).

    A database URL (`postgresql://...`) has no bytes: `url` holds it (never shown: it may carry a
    password) and `label` is the URL with its password masked.
    """

    label: str
    data: bytes
    path: Path | None = None
    url: str | None = field(default=None, repr=False)
    # The size limit the bytes were read under; a container (an Inspect .eval zip) inflates no member past it.
    max_bytes: int = field(default=DEFAULT_MAX_BYTES, repr=False)
    _json: Any = field(default=_UNSET, repr=False)
    _json_error: ThreadLoadError | None = field(default=None, repr=False)
    _jsonl: Any = field(default=_UNSET, repr=False)
    _jsonl_error: ThreadLoadError | None = field(default=None, repr=False)
    _text: str | None = field(default=None, repr=False)
    _text_error: ThreadLoadError | None = field(default=None, repr=False)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        data: bytes | None = None,
        name: str | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> Source:
        if data is None:
            if path is None:
                raise ThreadLoadError("no file given")
            if is_postgres_url(path):
                assert isinstance(path, str)
                return cls(label=redact(path), data=b"", url=path, max_bytes=max_bytes)
            p = Path(path)
            return cls(label=name or str(p), data=read_thread_file(p, max_bytes), path=p, max_bytes=max_bytes)
        if len(data) > max_bytes:
            raise FileTooLargeError(path=name or "<upload>", size_bytes=len(data), limit_bytes=max_bytes)
        return cls(label=name or "<upload>", data=data, path=Path(path) if path is not None else None,
                   max_bytes=max_bytes)

    # -- shapes ------------------------------------------------------------------------
    @property
    def suffix(self) -> str:
        return Path(self.label).suffix.lower()

    def is_sqlite(self) -> bool:
        return self.data[:16] == SQLITE_MAGIC

    def text(self) -> str:
        """The file as UTF-8 text; raises a ThreadLoadError naming the byte offset otherwise."""
        if self._text is None and self._text_error is None:
            if not self.data.removeprefix(b"\xef\xbb\xbf").strip():  # a lone BOM is empty too
                self._text_error = ThreadLoadError("file is empty", path=self.label)
            elif b"\x00" in self.data[:8192] and not self.is_sqlite():
                self._text_error = ThreadLoadError("file is binary, not text (NUL bytes found)", path=self.label)
            else:
                try:
                    self._text = self.data.decode("utf-8-sig")
                except UnicodeDecodeError as exc:
                    self._text_error = ThreadLoadError(
                        f"not UTF-8 text (invalid byte at offset {exc.start})", path=self.label
                    )
        if self._text_error is not None:
            raise self._text_error
        assert self._text is not None
        return self._text

    def json(self) -> Any:
        """The whole file parsed as one JSON document (cached); errors name line and column."""
        if self._json is _UNSET and self._json_error is None:
            try:
                self._json = json.loads(self.text())
            except ThreadLoadError as exc:
                self._json_error = exc
            except json.JSONDecodeError as exc:
                self._json_error = ThreadLoadError(
                    f"invalid JSON ({exc.msg})", path=self.label, location=f"line {exc.lineno}, column {exc.colno}"
                )
            except RecursionError:
                self._json_error = ThreadLoadError("JSON is nested too deeply to read", path=self.label)
            except ValueError as exc:  # e.g. an integer literal above Python's 4300-digit limit
                self._json_error = ThreadLoadError(f"invalid JSON ({exc})", path=self.label)
        if self._json_error is not None:
            raise self._json_error
        return self._json

    def jsonl(self) -> list[tuple[int, Any]]:
        """The file as JSON Lines: `(line_number, value)` for each non-blank line (cached)."""
        if self._jsonl is _UNSET and self._jsonl_error is None:
            rows: list[tuple[int, Any]] = []
            try:
                for n, line in enumerate(self.text().splitlines(), start=1):
                    if line.strip():
                        try:
                            rows.append((n, json.loads(line)))
                        except json.JSONDecodeError as exc:
                            raise ThreadLoadError(
                                f"invalid JSON on this line ({exc.msg})", path=self.label, location=f"line {n}, column {exc.colno}"
                            ) from None
                        except RecursionError:
                            raise ThreadLoadError("JSON is nested too deeply", path=self.label, location=f"line {n}") from None
                        except ValueError as exc:  # an integer literal above the 4300-digit limit
                            raise ThreadLoadError(f"invalid JSON ({exc})", path=self.label, location=f"line {n}") from None
                self._jsonl = rows
            except ThreadLoadError as exc:
                self._jsonl_error = exc
        if self._jsonl_error is not None:
            raise self._jsonl_error
        return self._jsonl

    def try_json(self) -> Any:
        """Parsed JSON, or None when the file is not one JSON document (for sniffing)."""
        try:
            return self.json()
        except ThreadLoadError:
            return None

    def first_jsonl(self, limit: int = 20) -> list[Any]:
        """The first parseable JSONL values, without parsing the whole file (for sniffing)."""
        try:
            text = self.text()
        except ThreadLoadError:
            return []
        out: list[Any] = []
        for line in text.splitlines():
            if len(out) >= limit:
                break
            if line.strip():
                try:
                    out.append(json.loads(line))
                except (ValueError, RecursionError):
                    return []
        return out

    def parse_error(self) -> ThreadLoadError | None:
        """The most useful parse error to show when no importer accepted the file."""
        if self.is_sqlite():
            return None
        try:
            self.text()
        except ThreadLoadError as exc:
            return exc
        if self.try_json() is not None:
            return None
        if len(self.first_jsonl(2)) > 0:
            return None
        try:
            self.json()
        except ThreadLoadError as exc:
            return exc
        return None
