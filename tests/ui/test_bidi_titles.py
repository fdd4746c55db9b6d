"""A title holding a right-to-left override or RTL letters is shown as a bidi isolate (#39.7).

An RLO (U+202E) in a thread title reordered the text after it on the line it was shown in ("Open now:
…", the library list, the sidebar). Unicode UAX #9 X6a: a PDI ends every embedding and override opened
since its isolate began, so LRI + title + PDI keeps the override inside.
"""

from __future__ import annotations

import re

import pytest

from engine.formats.native import dumps
from tests.ui.builders import build_thread
from ui.text import escape_md, isolate_bidi

LRI, PDI, RLO = "\u2066", "\u2069", "\u202e"


@pytest.mark.parametrize("text,expected", [
    ("plain title", "plain title"),  # nothing to isolate: unchanged
    (f"evil {RLO}gnp.exe", f"{LRI}evil {RLO}gnp.exe{PDI}"),
    ("שלום world", f"{LRI}שלום world{PDI}"),
    (f"x{PDI}{RLO} breakout", f"{LRI}x{RLO} breakout{PDI}"),  # a PDI that closes nothing would end ours early
    ("open \u2067rtl", f"{LRI}open \u2067rtl{PDI}{PDI}"),  # its own isolate left open is closed
    (f"ok {LRI}a{PDI} b", f"{LRI}ok {LRI}a{PDI} b{PDI}"),  # balanced ones are kept
])
def test_isolate_bidi(text: str, expected: str) -> None:
    assert isolate_bidi(text) == expected


def test_escape_md_isolates_after_escaping() -> None:
    assert escape_md(f"a*b {RLO}c") == f"{LRI}a\\*b {RLO}c{PDI}"
    assert escape_md("a*b") == "a\\*b"


def test_the_threads_page_isolates_a_hostile_title(start) -> None:  # noqa: ANN001
    thread = build_thread(5, thread_id="rtl")
    thread.title = f"report {RLO}fdp.exe"
    at = start("pages/threads.py")
    at.file_uploader[0].upload("rtl.json", dumps(thread).encode(), "application/json").run()
    assert not at.exception
    shown = [re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown]
    assert any(m.startswith(f"**Open now:** {LRI}report {RLO}fdp.exe{PDI}") for m in shown), shown
    assert f"{LRI}report {RLO}fdp.exe{PDI}" in " ".join(m.value for m in at.sidebar.markdown).replace("\\", "")
