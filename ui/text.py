"""Showing untrusted transcript text safely: escaped Markdown for labels, plain code blocks for bodies."""

from __future__ import annotations

import re

import streamlit as st

from engine.base.errors import ContextInspectorError, ThreadLoadError
from engine.base.redaction import describe_error, one_line

# CommonMark lets a backslash escape any ASCII punctuation; Streamlit adds :color[...] directives,
# :emoji: shortcodes and $math$, so ':' and '$' are escaped too.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$&\"'=])")
PREVIEW_CHARS = 600
MAX_SHOWN_CHARS = 60_000


# Right-to-left text and the bidirectional controls (Unicode UAX #9): an RLO (U+202E) in a title reordered
# the rest of the line it was shown in. Letters of the RTL scripts (Hebrew, Arabic, Syriac, Thaana, NKo,
# Samaritan, Mandaic, their presentation forms, and the RTL blocks of the supplementary planes) and every
# explicit control mark a text that is isolated where it is shown.
_ISOLATE_OPEN = "\u2066\u2067\u2068"  # LRI, RLI, FSI
_PDI = "\u2069"
_BIDI_OR_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe\U00010800-\U00010fff\U0001e800-\U0001efff"
                          "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def isolate_bidi(text: str) -> str:
    """`text` as a left-to-right isolate (LRI … PDI) when it holds right-to-left letters or bidi controls,
    so it cannot reorder the text around it; anything else unchanged. Left-to-right, the page's own
    direction: a Hebrew or Arabic title reads as it did, only nothing leaks out of it (FSI would turn a
    title that starts with an RTL letter into a right-to-left line).

    UAX #9 rule X6a: the closing PDI also ends every embedding and override (LRE, RLE, LRO, RLO) opened
    inside, so an unterminated RLO stays inside. The text's own isolates are balanced first: a PDI that
    closes nothing would close ours early, so it is dropped, and isolates it leaves open are closed.
    """
    if not _BIDI_OR_RTL.search(text):
        return text
    kept: list[str] = []
    depth = 0
    for ch in text:
        if ch in _ISOLATE_OPEN:
            depth += 1
        elif ch == _PDI:
            if depth == 0:
                continue
            depth -= 1
        kept.append(ch)
    return "\u2066" + "".join(kept) + _PDI * depth + _PDI


def escape_md(text: str, *, limit: int | None = None) -> str:
    """Text that Markdown shows literally (one line: newlines become spaces), bidi-isolated when it needs it."""
    flat = " ".join(str(text).split())
    if limit is not None and len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return isolate_bidi(_MD_SPECIAL.sub(r"\\\1", flat))


def error_text(exc: BaseException, limit: int = 500) -> str:
    """An error as one line for the page, secrets redacted: ours as is, anything else as `Type: message`."""
    if isinstance(exc, ThreadLoadError):
        return one_line(exc.one_line(), limit)
    if isinstance(exc, ContextInspectorError):
        return one_line(str(exc), limit)
    return describe_error(exc, limit)


def show_text(text: str, *, preview_chars: int = PREVIEW_CHARS, label: str = "show all") -> None:
    """A message body as literal text; long bodies are collapsed behind an expander."""
    if len(text) <= preview_chars:
        st.code(text or " ", language=None, wrap_lines=True)
        return
    st.code(text[:preview_chars] + " …", language=None, wrap_lines=True)
    with st.expander(f"{label} ({len(text):,} characters)"):
        shown = text[:MAX_SHOWN_CHARS]
        st.code(shown, language=None, wrap_lines=True)
        if len(text) > MAX_SHOWN_CHARS:
            st.caption(f"first {MAX_SHOWN_CHARS:,} of {len(text):,} characters shown")
