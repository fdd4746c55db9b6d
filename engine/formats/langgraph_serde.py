"""The strict serializer for LangGraph checkpoint values, shared by every checkpoint importer.

A checkpointer stores each value as `(type, bytes)` written by `JsonPlusSerializer.dumps_typed`
(langgraph-checkpoint `serde/jsonplus.py`): "msgpack" (today), "json" (before ~langgraph-checkpoint
1.0.10), "null", "bytes", "bytearray"; "pickle" when a saver ran with `pickle_fallback=True`, and
"<type>+aes" under `EncryptedSerializer` (`serde/encrypted.py`). The saver's own serializer imports
and calls whatever module and class a msgpack extension names; ours is built with
`allowed_msgpack_modules=None`, so only LangChain messages and plain value types are rebuilt and
anything else stays raw data. Pickles (running one can run code) and encrypted values (no key) are
refused by name.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import Any

from engine.base.errors import ThreadLoadError

# What JsonPlusSerializer.loads_typed reads; "pickle" and encrypted ("msgpack+aes") rows are refused by name.
SERDE_TYPES = frozenset({"json", "msgpack", "null", "bytes", "bytearray"})
PICKLE_MAGIC = b"\x80"  # pickle protocol 2+ opcode PROTO


@cache
def strict_serde() -> Any:
    """JsonPlusSerializer that never imports or calls a class a stored value names."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    logging.getLogger("langgraph.checkpoint.serde.jsonplus").addFilter(_quiet_while_decoding)
    return JsonPlusSerializer(allowed_msgpack_modules=None)


# Refusing to rebuild a class is what `strict_serde` is for, yet langgraph-checkpoint (4.3) logs a
# warning for each one ("Blocked deserialization of os.system - not in allowed_msgpack_modules",
# `serde/jsonplus.py` `_warn_once`), which Python's last-resort handler printed on stderr before
# ctxi's own line. Those records are dropped while one of our decodes runs (a context variable, so
# another thread's use of LangGraph keeps its warnings); the value stays raw data, as documented.
_DECODING: ContextVar[bool] = ContextVar("ctxi_langgraph_decoding", default=False)


def _quiet_while_decoding(record: logging.LogRecord) -> bool:
    return not (_DECODING.get() and record.levelno <= logging.WARNING)


@contextmanager
def _decoding() -> Iterator[None]:
    token = _DECODING.set(True)
    try:
        yield
    finally:
        _DECODING.reset(token)


SHOWN_CHARS = 60


def shown(value: object, *, quote: bool = True) -> str:
    """An id, channel or type name from a row as an error shows it: cut to SHOWN_CHARS (a row can
    hold a megabyte where an id goes, and an error is one readable line)."""
    text = str(value)
    if len(text) > SHOWN_CHARS:
        text = text[:SHOWN_CHARS] + f"... ({len(text):,} characters)"
    return repr(text) if quote else text


def decode_value(type_: str | None, blob: Any, *, label: str, format: str, where: str) -> Any:
    """One stored value, refusing what cannot be read safely (pickles) or at all (encrypted).

    `type_` None means the row has no serializer type (langgraph-checkpoint-sqlite before 0.2):
    JSON, or a pickle in langgraph 0.0.x, told apart by the pickle protocol byte.
    """
    data = blob.encode() if isinstance(blob, str) else bytes(blob or b"")
    if type_ is None:
        type_ = "pickle" if data[:1] == PICKLE_MAGIC else "json"
    if type_ == "pickle":
        raise ThreadLoadError("checkpoint is a Python pickle (langgraph 0.0.x, or a serializer with "
                              "pickle_fallback=True); unpickling a file can run code, so it is not read",
                              path=label, format=format, location=where)
    if "+" in type_:
        raise ThreadLoadError(f"checkpoint is encrypted ({shown(type_)}, EncryptedSerializer); ctxi has no key to "
                              "decrypt it", path=label, format=format, location=where)
    if type_ not in SERDE_TYPES:
        raise ThreadLoadError(f"unsupported serializer type {shown(type_)}", path=label, format=format, location=where)
    try:
        serde = strict_serde()
        with _decoding():
            return serde.loads_typed((type_, data))
    except Exception as exc:  # the serializer meets whatever the database holds
        raise ThreadLoadError(f"cannot decode {type_} data ({type(exc).__name__}: {str(exc)[:200]})",
                              path=label, format=format, location=where) from None
