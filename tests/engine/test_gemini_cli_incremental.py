"""Gemini CLI's estimate and truncation, kept per message and summed incrementally, give what the plain rules give.

`estimate_history` (chatCompressionService.ts `newTokenCount` / `truncatedTokenCount`: `estimateTokenCountSync` of
the history's parts) and `truncate_to_budget` (`truncateHistoryToBudget`) run before every model call once the
previous prompt passed the threshold; recomputed from every part's JSON at every call, a 1,000-step thread took 22 s
to replay. The oracles below are the rules written out plainly (`estimate_parts` over `contents`, and the reverse
walk cutting each result afresh), compared on real and generated histories, grown, cut and interleaved.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from pathlib import Path

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.formats import load_thread
from engine.policies.gemini_cli import (
    COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET,
    DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD,
    contents,
    estimate_history,
    estimate_parts,
    estimate_tokens,
    truncate_to_budget,
    truncated_output,
)
from engine.thread.synthetic import synthetic_thread
from engine.tokens.content import message_text

SAMPLES = Path(__file__).resolve().parents[2] / "sample_threads"


def _estimate_plainly(messages: Sequence[BaseMessage]) -> int:
    return estimate_parts([p for content, _ in contents(messages) for p in content["parts"]])


def _truncate_plainly(messages: Sequence[BaseMessage], budget: int = COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET,
                      max_chars: int = DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD) -> list[str]:
    """The texts `truncateHistoryToBudget` leaves, message by message."""
    texts = [message_text(m) for m in messages]
    used = 0
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if not isinstance(m, ToolMessage):
            continue
        tokens = estimate_tokens(texts[i])
        if used + tokens > budget:
            texts[i] = truncated_output(texts[i], f"tool-outputs/{m.name or 'unknown_tool'}_{m.tool_call_id}.txt",
                                        max_chars)
            used += estimate_tokens(texts[i])
        else:
            used += tokens
    return texts


def _histories() -> list[list[BaseMessage]]:
    out = [list(synthetic_thread(120, seed=s).messages) for s in (0, 3)]
    out += [list(load_thread(p).messages) for p in sorted(SAMPLES.glob("*.json"))]
    rng = random.Random(7)
    big = "é" * 50_000 + "x" * 60_000  # over 100,000 characters: length / 4; non-ASCII otherwise 1.3 a character
    out.append([HumanMessage("start ünïcode " + "é" * 999, id="h"), AIMessage("", tool_calls=[
        {"id": "c", "name": "read_file", "args": {"path": "/a"}, "type": "tool_call"}], id="a"),
        ToolMessage(big, tool_call_id="c", name="read_file", id="t"), ToolMessage("x" * rng.randint(0, 90_000),
                                                                            tool_call_id="d", id="u")])
    return out


def test_the_estimate_kept_per_message_is_the_plain_estimate() -> None:
    for history in _histories():
        for end in sorted({1, 2, len(history) // 3, len(history) // 2, len(history)}):
            assert estimate_history(history[:end]) == _estimate_plainly(history[:end])
        # grown, shrunk, and a message replaced in the middle: the running sums follow
        assert estimate_history(history) == _estimate_plainly(history)
        if len(history) > 4:
            mid = len(history) // 2
            swapped = [*history[:mid], HumanMessage("a replacement " * 50, id="r"), *history[mid + 1:]]
            assert estimate_history(swapped) == _estimate_plainly(swapped)
            assert estimate_history(history[:mid]) == _estimate_plainly(history[:mid])


def test_the_truncation_kept_per_message_is_the_plain_truncation() -> None:
    for history in _histories():
        for budget in (COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET, 2_000, 0):
            for max_chars in (DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD, 500):
                cut = truncate_to_budget(history, budget, max_chars)
                assert [message_text(m) for m in cut] == _truncate_plainly(history, budget, max_chars)
                assert [m.id for m in cut] == [m.id for m in history]
                # an unchanged message stays the same object; a cut one is the same copy at the next call
                again = truncate_to_budget(history, budget, max_chars)
                assert all(a is b for a, b in zip(cut, again, strict=True))
                assert all(a is b for a, b, t in zip(cut, history, _truncate_plainly(history, budget, max_chars),
                                                     strict=True) if message_text(b) == t)


def test_threads_summing_at_once_each_get_their_own_sums() -> None:
    histories = _histories()
    expected = [_estimate_plainly(h) for h in histories]
    got: dict[int, list[int]] = {}

    def work(k: int) -> None:
        got[k] = [estimate_history(h) for _ in range(3) for h in (histories if k % 2 else histories[::-1])]

    workers = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for k, values in got.items():
        order = histories if k % 2 else histories[::-1]
        want = [expected[histories.index(h)] for _ in range(3) for h in order]
        assert values == want
