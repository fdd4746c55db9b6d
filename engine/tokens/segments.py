"""Cutting a long text into bounded segments whose token counts add up to the whole text's count.

Why: tiktoken first splits a text with a regular expression into pieces (a word with its leading
space, up to three digits, a run of punctuation, a run of whitespace) and then runs its byte-pair
merge on each piece, whose cost grows faster than the piece's length (tiktoken `src/lib.rs`,
`byte_pair_merge`). One 50 MB line without whitespace is one piece: it took minutes and gigabytes.

How: cut only where the pre-tokenizer starts a new piece anyway, so the count is unchanged. For
both `o200k_base` and `cl100k_base` (tiktoken_ext/openai_public.py, their `pat_str`), no piece
contains a non-whitespace character followed by a space or a tab (words, numbers and punctuation
runs never end in a space; whitespace pieces start with whitespace), nor a letter or digit followed
by `\\r` or `\\n` (only a punctuation run may take trailing newlines). The patterns have no
look-behind, so the pieces after such a place depend only on the text after it: counting the two
sides apart gives exactly the count of the whole. tests/engine/test_segments.py checks this on
every text of the real transcripts.

A run of more than `SEGMENT_CHARS` characters with no such place (one giant word, base64 without
line breaks, a wall of spaces) is cut every `SEGMENT_CHARS` characters: that count is an
approximation, off by at most a few tokens per cut (a merge across the cut is lost), and only for
text no tokenizer sees as ordinary prose.
"""

from __future__ import annotations

import re

SEGMENT_CHARS = 8192
# Where a new piece starts, read backwards (the window is searched reversed, so the first match is
# the last place): a space or tab after any non-whitespace character, or a line break after a letter
# or digit. Python's \s is str.isspace, a superset of the Unicode White_Space tiktoken's \s matches.
_SAFE_CUT_REVERSED = re.compile(r"[ \t]\S|[\r\n][^\W_]")


def _last_safe_cut(text: str, lo: int, hi: int) -> int | None:
    """The last index i in [lo, hi] (lo >= 1) where a new tiktoken piece starts, or None."""
    # prose: the last space in the window follows a word
    i = text.rfind(" ", lo, hi + 1)
    later = i + 1 if i >= lo else lo
    if all(text.find(c, later, hi + 1) < 0 for c in "\t\r\n"):  # no other whitespace after it
        if i >= lo and not text[i - 1].isspace():
            return i
        if i < lo:
            return None  # no whitespace at all: one unbroken run
    found = _SAFE_CUT_REVERSED.search(text[lo - 1 : hi + 1][::-1])
    return None if found is None else hi - found.start()


def text_segments(text: str, limit: int = SEGMENT_CHARS) -> list[str]:
    """`text` in segments of at most `limit` characters, cut where tiktoken's pieces break anyway
    (exact), or, inside a longer unbroken run, every `limit` characters (approximate)."""
    n = len(text)
    if n <= limit:
        return [text]
    out: list[str] = []
    pos = 0
    while n - pos > limit:
        cut = _last_safe_cut(text, pos + 1, pos + limit)
        if cut is None or cut <= pos:
            cut = pos + limit
        out.append(text[pos:cut])
        pos = cut
    out.append(text[pos:])
    return out


# After a line break, before a character that is neither whitespace nor "/": every piece that holds a
# line break ends there. Whitespace pieces cannot take the non-whitespace character; a word or number
# piece cannot start with a line break (`[^\r\n\p{L}\p{N}]?` in both patterns); a punctuation run
# takes trailing line breaks only (`[\r\n]*` in cl100k_base, `[\r\n/]*` in o200k_base: hence no
# "/"). With no look-behind, the text after the cut is split as it would be alone, so the counts of
# the lines add up to the count of the whole text.
_LINE_CUT = re.compile(r"(?<=\n)(?=[^\s/])")


def text_lines(text: str) -> list[str]:
    """`text` cut after the line breaks where a new tiktoken piece starts (exact for `o200k_base` and
    `cl100k_base`): a text made of lines seen before (a summary repeating its facts) is counted line by
    line from a cache (engine.tokens.counters `TiktokenCounter`)."""
    return _LINE_CUT.split(text)


def is_exact(text: str, limit: int = SEGMENT_CHARS) -> bool:
    """Whether `text_segments(text)` cuts only where the count stays exact."""
    n, pos = len(text), 0
    while n - pos > limit:
        cut = _last_safe_cut(text, pos + 1, pos + limit)
        if cut is None or cut <= pos:
            return False
        pos = cut
    return True


__all__ = ["SEGMENT_CHARS", "is_exact", "text_lines", "text_segments"]
