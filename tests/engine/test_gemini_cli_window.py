"""Gemini CLI's policy on the first-look sample: its peak stays in the window (the Config page's policies table read
147 % of it), because Gemini CLI's own rules apply — shell output cut as it is recorded, and a compression checked
with Gemini CLI's estimate of the new history (google-gemini/gemini-cli `scheduler/tool-executor.ts`,
`config/config.ts` `getTruncateToolOutputThreshold`, `context/chatCompressionService.ts`, `utils/tokenCalculation.ts`).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from pathlib import Path

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.config.schema import preset
from engine.evals.policy_compare import compare_thread
from engine.formats import load_thread
from engine.policies.gemini_cli import POLICY, estimate_history, estimate_parts, shell_output_threshold
from engine.run.replay import replay
from tests.policies.helpers import COUNTER, call, context

FIRST_LOOK = Path(__file__).resolve().parents[2] / "sample_threads" / "first-look.json"


def _result(content: str, name: str = "execute") -> ToolMessage:
    return ToolMessage(content, tool_call_id="c1", name=name, id="t1")


def test_a_shell_output_is_cut_as_gemini_cli_records_it() -> None:
    log = "".join(f"line {i}\n" for i in range(20_000))  # 208,890 characters
    out = POLICY.tool_result(_result(log), context(window=40_000, previous=2_000))
    assert str(out.content).startswith("Output too large. Showing first 8,000 and last 32,000 characters. "
                                       "For full output see: tool-outputs/execute_c1.txt\n")
    assert str(out.content).endswith(log[-32_000:]) and len(str(out.content)) < 40_200
    # the threshold is the window left after the previous prompt, 4 characters a token, at most 40,000
    assert shell_output_threshold(40_000, 2_000) == 40_000
    assert shell_output_threshold(40_000, 35_000) == 20_000
    assert shell_output_threshold(1_048_576, None) == 40_000
    near = POLICY.tool_result(_result(log), context(window=40_000, previous=35_000))
    assert str(near.content).startswith("Output too large. Showing first 4,000 and last 16,000 characters.")
    # past the window the threshold is not above 0: Gemini CLI cuts nothing
    assert POLICY.tool_result(_result(log), context(window=40_000, previous=41_000)).content == log
    # only the shell tool's output (and short output stays whole)
    assert POLICY.tool_result(_result(log, "read_file"), context(window=40_000, previous=2_000)).content == log
    assert POLICY.tool_result(_result("ok\n"), context(window=40_000, previous=2_000)).content == "ok\n"


def test_the_estimate_is_gemini_clis_estimate_token_count_sync() -> None:
    assert estimate_parts([{"text": "abcd" * 10}, {"text": "é" * 10}]) == 23  # 10 + 13
    assert estimate_parts([{"text": "é" * 100_001}]) == 25_000  # over 100,000 characters: length / 4
    # a function response: (name + JSON.stringify(response)) / 4; a function call: JSON.stringify(part) / 4
    assert estimate_parts([{"functionResponse": {"id": "c", "name": "ls", "response": {"output": "x" * 100}}}]) == 28  # (2 + 113) / 4
    assert estimate_parts([{"functionCall": {"name": "ls", "args": {}}}]) == 10  # 40 / 4


def _dense_session() -> list[BaseMessage]:
    """Hex words: a tokenizer counts them ~2.4 times Gemini CLI's chars/4 estimate."""
    rng = random.Random(0)
    msgs: list[BaseMessage] = []
    for t in range(4):
        words = " ".join(f"{rng.randrange(16 ** 6):06x}" for _ in range(400))
        msgs += [HumanMessage(f"task {t}", id=f"h{t}"), AIMessage("", tool_calls=[call(f"c{t}")], id=f"a{t}"),
                 ToolMessage(words, tool_call_id=f"c{t}", name="read_file", id=f"t{t}"), AIMessage(f"done {t}", id=f"f{t}")]
    return msgs


def test_a_compression_is_checked_with_gemini_clis_estimate_not_a_tokenizer() -> None:
    history = _dense_session()
    done = POLICY.rebuild(history, context(window=100_000, previous=1_000_000))
    assert done.messages is not None
    counted, estimated = COUNTER(done.messages), estimate_history(done.messages)
    assert estimated < counted
    previous = (estimated + counted) // 2  # the provider's count of the previous prompt, between the two
    memory: dict[str, object] = {}
    result = POLICY.rebuild(history, context(window=100_000, previous=previous, memory=memory))
    assert result.messages is not None and result.detail["status"] == "COMPRESSED" and memory == {}


def test_on_the_first_look_sample_gemini_cli_stays_in_the_window() -> None:
    thread = load_thread(FIRST_LOOK)
    run = replay(thread, preset("gemini-cli"))
    assert run.window_tokens == 40_000
    # the two large `execute` outputs (107,978 and 89,664 characters) are recorded cut to 40,000 characters
    cuts = [e for e in run.events if e.layer == "compaction" and e.kind == "truncate_result"]
    assert [e.step for e in cuts] == [4, 12]
    assert run.peak_view_tokens() <= run.window_tokens  # was 58,900: 147 % of the window
    assert all(e.kind != "compact_rejected" for e in run.events)  # was rejected at step 13, then never again
    [row] = compare_thread(thread, ["gemini-cli"])
    assert row["peak % of window"] <= 100


def test_the_summarizer_reads_the_untruncated_history_while_its_estimate_is_under_the_limit() -> None:
    """chatCompressionService.ts: `originalToCompressTokenCount < tokenLimit(model)` (Gemini CLI's estimate; no
    20,000-token buffer), else the history cut to the reverse tool budget."""
    rng = random.Random(1)
    history: list[BaseMessage] = []
    for t in range(6):  # hex outputs of 60,000 characters: 15,000 estimated tokens each, ~2.4 times that counted
        words = " ".join(f"{rng.randrange(16 ** 6):06x}" for _ in range(8_570))
        history += [HumanMessage(f"task {t}", id=f"h{t}"), AIMessage("", tool_calls=[call(f"c{t}")], id=f"a{t}"),
                    ToolMessage(words, tool_call_id=f"c{t}", name="read_file", id=f"t{t}"),
                    AIMessage(f"done {t}", id=f"f{t}")]
    read: list[list[BaseMessage]] = []
    base = context(window=200_000, previous=1_000_000)

    def summarize(messages: Sequence[BaseMessage], prompt: str) -> str:
        read.append(list(messages))
        return base.summarize(read[-1], prompt)

    POLICY.rebuild(history, dataclasses.replace(base, summarize=summarize))
    originals = read[0]
    assert estimate_history(originals) < 200_000 - 20_000 <= COUNTER(originals)  # where the two rules part
    assert not any(str(m.content).startswith("Output too large") for m in originals)
