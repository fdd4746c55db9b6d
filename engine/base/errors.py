"""Typed errors: every failure a user can cause names the file, the format and the place."""

from __future__ import annotations

from engine.base.surrogates import scrub


class ContextInspectorError(Exception):
    """Base class for errors meant to be shown to a user as one readable line."""


class ThreadLoadError(ContextInspectorError):
    """A thread file could not be read as the format tried."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        format: str | None = None,
        location: str | None = None,
    ) -> None:
        self.message = message
        self.path = path
        self.format = format
        self.location = location
        super().__init__(self.one_line())

    def one_line(self) -> str:
        parts = []
        if self.path:
            parts.append(str(self.path))
        if self.format:
            parts.append(f"format {self.format}")
        if self.location:
            parts.append(f"at {self.location}")
        where = ", ".join(parts)
        # a path or a quoted value may carry an unpaired surrogate from the file: never unprintable
        return scrub(f"{where}: {self.message}" if where else self.message)


class UnknownFormatError(ThreadLoadError):
    """No importer recognised the file."""

    def __init__(self, *, path: str | None, tried: list[str], detail: str = "") -> None:
        self.tried = list(tried)
        msg = "unrecognised thread format; formats tried: " + ", ".join(tried)
        if detail:
            msg += f" ({detail})"
        super().__init__(msg, path=path)


class FileTooLargeError(ThreadLoadError):
    """The file is above the configured size limit (`size_bytes` is None when it was found while reading)."""

    def __init__(self, *, path: str | None, size_bytes: int | None, limit_bytes: int) -> None:
        self.size_bytes = size_bytes
        self.limit_bytes = limit_bytes
        size = f"is {size_bytes:,} bytes" if size_bytes is not None else "holds more than that"
        super().__init__(
            f"file {size}, above the size limit of {limit_bytes:,} bytes "
            "(raise it with --max-bytes or CTXI_MAX_BYTES)" if size_bytes is not None else
            f"file holds more than the size limit of {limit_bytes:,} bytes (raise it with --max-bytes or CTXI_MAX_BYTES)",
            path=path,
        )


class ThreadNotFoundError(ThreadLoadError):
    """A multi-thread source does not hold the requested thread id."""


class ModelCallError(ContextInspectorError):
    """A call to a real model failed (a bad key, quota, the network); the provider's text is redacted."""


class ConfigError(ContextInspectorError):
    """A configuration value is invalid; names the key, the value and what is allowed."""

    def __init__(self, message: str, *, key: str | None = None) -> None:
        self.key = key
        super().__init__(f"{key}: {message}" if key else message)
