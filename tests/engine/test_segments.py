"""engine.tokens.segments: long texts are counted in bounded segments whose counts add up exactly.

Issue 11: one 50 MB line without whitespace took 262 s and 2.6 GB (one tiktoken piece, merged in
superlinear time, and encoded twice). These tests check the cut rule against tiktoken itself on
real transcripts, and count what reaches the encoder (no timing).
"""

from __future__ import annotations

import json

import pytest

from engine.formats import list_threads, load_thread
from engine.recorded.inspect import inspect_thread
from engine.tokens.content import content_parts, tool_call_text
from engine.tokens.counters import TiktokenCounter
from engine.tokens.encodings import load_encoding
from engine.tokens.segments import SEGMENT_CHARS, is_exact, text_lines, text_segments
from tests.conftest import TRACES

ENCODINGS = ("o200k_base", "cl100k_base")


def real_long_texts(limit: int) -> list[str]:
    """Texts longer than `limit` in the real Claude Code and Codex transcripts (sub-agents included)."""
    texts: set[str] = set()
    for folder in ("claude-code", "codex"):
        for path in sorted((TRACES / folder).rglob("*.jsonl")) if (TRACES / folder).is_dir() else []:
            for ref in list_threads(path)[:5]:
                thread = load_thread(path, thread_id=ref.thread_id)
                for t in [thread, *thread.subagents.values()]:
                    for m in t.messages:
                        parts, _ = content_parts(m.content)
                        texts.update(parts)
                        texts.update(tool_call_text(tc) for tc in getattr(m, "tool_calls", None) or [])
    return sorted(t for t in texts if len(t) > limit)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_segments_count_exactly_on_real_texts(encoding: str) -> None:
    texts = real_long_texts(512)
    if not texts:
        pytest.skip(f"no Claude Code or Codex transcripts under {TRACES}")
    enc = load_encoding(encoding)
    checked = 0
    for text in texts:
        parts = text_segments(text, 512)
        assert "".join(parts) == text
        assert all(len(p) <= 512 for p in parts)
        if is_exact(text, 512):
            assert sum(len(enc.encode_ordinary(p)) for p in parts) == len(enc.encode_ordinary(text)), text[:80]
            checked += 1
    assert checked >= len(texts) // 2  # real prose and code break often: most texts are cut exactly


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_segments_count_exactly_on_hand_made_texts(encoding: str) -> None:
    enc = load_encoding(encoding)
    texts = [
        "The quick brown fox, said  she,\tjumps.\n\n" * 500,  # double spaces, tabs, blank lines
        "def f(x):\n    return x + 1\r\n" * 800,  # code with CRLF
        ("word " * 50 + "\u00e9t\u00e9 \u4e2d\u6587 12345678 ...!!!\n") * 200,  # accents, CJK, digits, punctuation
        "x" * 200 + " y" * 5000 + "\n" * 40 + "z" * 10,
    ]
    for text in texts:
        assert is_exact(text, 256)
        parts = text_segments(text, 256)
        assert "".join(parts) == text and max(map(len, parts)) <= 256
        assert sum(len(enc.encode_ordinary(p)) for p in parts) == len(enc.encode_ordinary(text))


def test_an_unbroken_run_is_cut_at_the_limit_and_marked_approximate() -> None:
    text = "a" * (3 * SEGMENT_CHARS + 5)
    assert not is_exact(text)
    assert [len(p) for p in text_segments(text)] == [SEGMENT_CHARS] * 3 + [5]
    assert text_segments("short") == ["short"]
    assert not is_exact(" " * (SEGMENT_CHARS + 1))  # a wall of spaces has no safe cut either


def test_a_huge_line_reaches_the_encoder_once_in_bounded_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    big = "a" * 1_000_000
    data = json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": big}]})
    thread = load_thread(data=data.encode(), name="big.json")
    counter = TiktokenCounter()
    seen: list[int] = []
    encode = counter._encoding.encode_ordinary

    def spy(text: str) -> list[int]:
        seen.append(len(text))
        return encode(text)

    monkeypatch.setattr(counter._encoding, "encode_ordinary", spy)
    report = inspect_thread(thread, counter)
    # every character of the thread is encoded once (not twice), in pieces of at most SEGMENT_CHARS
    assert sum(seen) == len(big) + len("hi")
    assert max(seen) == SEGMENT_CHARS
    assert report["messages"] == 2
    # the same text counted directly: 1M 'a' is 125,000 o200k tokens (8 per token), exact at every cut here
    assert counter.count_text(big) == len(encode("a" * SEGMENT_CHARS)) * (len(big) // SEGMENT_CHARS) + len(
        encode("a" * (len(big) % SEGMENT_CHARS)))



# -- text_lines: a summary counted line by line (TiktokenCounter.count_lines) --------------------------------

LINE_CASES = [
    "## SUMMARY\n- Fixed the bug.\n- Error from bash: exit 1\n",
    "end.\n/usr/bin/python\n",  # o200k_base's punctuation run takes a "/" after its line breaks
    "path:\n/tmp/x\n\n/again",
    "a \n-b\n  indented\n\tx\n's\n'll be\n",
    "x\r\n- y\r\n\r\nz",
    "tail spaces   \nnext\n\n\n\nafter blanks",
    "日本語\n中文\n- ✓ done\n123\n4567\n",
    "emoji 🙂\n🙂 first\n\u00a0nbsp\n\u2028sep\nend",
    "ends with newline\n",
    "\nleading newline",
    "",
]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_lines_count_exactly_on_hand_made_and_real_texts(encoding: str) -> None:
    enc = load_encoding(encoding)
    texts = [*LINE_CASES, *[t for t in real_long_texts(200) if "\n" in t][:400]]
    for text in texts:
        lines = text_lines(text)
        assert "".join(lines) == text
        assert sum(len(enc.encode_ordinary(p)) for p in lines) == len(enc.encode_ordinary(text)), text[:80]
    # the cut is where a line starts, not only at the end: the cache has lines to share
    assert text_lines("a\nb\n/c") == ["a\n", "b\n/c"]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_count_lines_equals_count_text_and_reuses_lines(encoding: str) -> None:
    counter = TiktokenCounter(encoding)
    first = "## SUMMARY\n" + "".join(f"- fact number {i} was found.\n" for i in range(50))
    second = first + "- a new fact.\n/usr/local\n"
    assert counter.count_lines(first) == counter.count_text(first)
    seen = len(counter._lines)
    assert counter.count_lines(second) == counter.count_text(second)
    assert len(counter._lines) == seen + 1  # only the new line (with the "/" line joined to it) was encoded
