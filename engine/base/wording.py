"""Counts in words for the CLI and the pages: "1 call", "2 calls", "1,204 messages"."""

from __future__ import annotations

# English plurals that are not the noun + "s"
IRREGULAR: dict[str, str] = {"summary": "summaries", "sub-agent": "sub-agents", "entry": "entries",
                             "index": "indices"}


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`count` and the noun, singular for exactly one: plural(1, "call") == "1 call", plural(3, "call") == "3 calls"."""
    if count == 1:
        return f"{count:,} {noun}"
    return f"{count:,} {many or IRREGULAR.get(noun) or noun + 's'}"
