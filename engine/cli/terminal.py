"""What `ctxi` prints is text for a terminal: characters that would act on it are shown as escapes.

Transcripts are untrusted, and the CLI prints their titles, tool names, file paths, thread ids and
texts. A terminal acts on control characters: ESC starts sequences that recolour, move the cursor,
clear the screen, set the window title or (OSC 52) write the clipboard; CR and BS overwrite what
was printed; C1 controls (U+0080-U+009F) are the same sequences in one character on some terminals;
bidirectional controls (U+202A-U+202E, U+2066-U+2069, U+200E/F, U+061C) reorder the rest of the line
("Trojan Source", CVE-2021-42574). Each is written as `\\uXXXX`, and so is an unpaired surrogate
(not encodable at all). Newline and tab stay.

`\\uXXXX` is also how JSON escapes a character, so `--json` output written through the same filter
stays valid JSON with the same value (json.dumps already escapes C0; with ensure_ascii=False it
writes C1 and bidi controls raw, which this turns into their escapes, inside the strings they are in).
"""

from __future__ import annotations

import io
from typing import Any, TextIO

_ACTIVE = [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0), 0x061C, 0x200E, 0x200F,
           *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029, *range(0xD800, 0xE000)]
ESCAPES: dict[int, str] = {c: f"\\u{c:04x}" for c in _ACTIVE}


def terminal_text(text: str) -> str:
    """`text` with every character a terminal would act on written as `\\uXXXX` (newline and tab kept)."""
    return text.translate(ESCAPES)


class TerminalWriter(io.TextIOBase):
    """A text stream that writes `terminal_text` of everything to `raw_stream` (stdout or stderr)."""

    def __init__(self, raw_stream: TextIO) -> None:
        super().__init__()
        self.raw_stream = raw_stream

    def write(self, text: str) -> int:
        self.raw_stream.write(text.translate(ESCAPES))
        return len(text)

    def flush(self) -> None:
        self.raw_stream.flush()

    def isatty(self) -> bool:
        return self.raw_stream.isatty()

    def fileno(self) -> int:
        return self.raw_stream.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.raw_stream, "encoding", "utf-8"))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw_stream, name)


__all__ = ["ESCAPES", "TerminalWriter", "terminal_text"]
