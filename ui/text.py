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


def escape_md(text: str, *, limit: int | None = None) -> str:
    """Text that Markdown shows literally (one line: newlines become spaces)."""
    flat = " ".join(str(text).split())
    if limit is not None and len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return _MD_SPECIAL.sub(r"\\\1", flat)


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
