"""Counts and amounts in words for the CLI and the pages: "1 call", "2 calls", "1,204 messages", "$12.61"."""

from __future__ import annotations

import math

# English plurals that are not the noun + "s"
IRREGULAR: dict[str, str] = {"summary": "summaries", "sub-agent": "sub-agents", "entry": "entries",
                             "index": "indices"}


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`count` and the noun, singular for exactly one: plural(1, "call") == "1 call", plural(3, "call") == "3 calls"."""
    if count == 1:
        return f"{count:,} {noun}"
    return f"{count:,} {many or IRREGULAR.get(noun) or noun + 's'}"


def money(x: float | None) -> str:
    """Dollars written one way everywhere: cents ("$12.61", "−$0.99") unless the amount is below a cent,
    then two significant digits ("$0.0062", "−$0.00012"); "$0.00" for nothing; "-" when unknown.

    Three formats had grown ("net $-0.0062", "−$0.9863", "$12.6147", issue 35); a bill below a cent
    (one step's cache reads) would read "$0.00" in cents, so it keeps its first two digits instead.
    """
    if x is None or x != x:
        return "-"
    size = abs(x)
    if 0 < size < 0.01:
        decimals = 1 - math.floor(math.log10(size))
        if round(size, decimals) < 0.01:  # 0.00999 rounds up to a cent: written in cents below
            return ("−" if x < 0 else "") + f"${size:.{decimals}f}"
    text = f"${size:,.2f}"
    return "−" + text if x < 0 and text.strip("$0.,") else text
