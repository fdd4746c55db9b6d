"""engine.views.step_page: the Step page's filters, search, pages, tokens per tool and text diffs, exact values."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engine.config.schema import preset
from engine.formats import load_thread
from engine.run.replay import replay
from engine.run.run import StepRecord
from engine.thread.events import Event
from engine.thread.kinds import mark
from engine.tokens.counters import get_counter
from engine.views.step import state_view_diff, view_entries
from engine.views.step_page import (
    UNKNOWN_TOOL,
    Page,
    Snippet,
    StepFilter,
    ToolTokens,
    apply_filter,
    count_matches,
    entry_kinds,
    event_step,
    message_body,
    page_of,
    preview,
    searchable_text,
    snippets,
    split_tokens,
    step_detail,
    text_diff,
    tool_tokens,
)
from tests.conftest import trace_path


class WordCounter:
    """A counter whose numbers can be worked out by hand: a text costs its words; a message costs
    what `table` says per category (else its words as one category)."""

    name = "words"

    def __init__(self, table: Mapping[str, Mapping[str, int]] | None = None) -> None:
        self.table = dict(table or {})

    def count_text(self, text: str) -> int:
        return len(text.split())

    def breakdown(self, message: BaseMessage) -> Mapping[str, int]:
        return self.table.get(str(message.id), {"text": self.count_text(str(message.content))})

    def count_message(self, message: BaseMessage) -> int:
        return sum(self.breakdown(message).values())

    def count_tools(self, tools: Sequence[Mapping[str, Any]]) -> int:
        return 0

    def __call__(self, messages: Iterable[BaseMessage], **kwargs: Any) -> int:
        return sum(self.count_message(m) for m in messages)


def step_of(state: list, view: list, system: SystemMessage | None = None, index: int = 0,
            events: list | None = None) -> StepRecord:
    return StepRecord(index=index, message_index=0, message_id="x", state=tuple(state), view=tuple(view), system=system,
                      tool_names=(), state_tokens=0, view_tokens=0, raw_tokens=0, view_by_category={},
                      state_by_category={}, events=events or [])


def call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "args": args}


H = HumanMessage("Find the Parser bug please", id="h")
A = AIMessage("Reading two files", id="a", tool_calls=[call("c1", "Read", path="a.py"), call("c2", "Bash", cmd="ls -la x")])
R1 = ToolMessage("def parse(): pass  # parser", tool_call_id="c1", name="Read", id="r1")
R2 = ToolMessage("a.py b.py", tool_call_id="c2", id="r2")  # no name: the call names it
STUB = mark(ToolMessage("offloaded to /large_tool_results/c3", tool_call_id="c3", id="r3"), "stub")
ORPHAN = ToolMessage("who called me", tool_call_id="gone", id="r4")
A_OLD = AIMessage("", id="a0", tool_calls=[call("c3", "Grep", pattern="parse")])  # only in state


# -- entries -----------------------------------------------------------------------------------
def test_view_entries_number_every_message_and_name_the_tools() -> None:
    system = SystemMessage("You are an agent", id="sys")
    entries = view_entries(step_of([A_OLD, H, A, R1, R2, STUB, ORPHAN], [H, A, R1, R2, STUB, ORPHAN], system),
                           WordCounter())
    assert [e.position for e in entries] == [0, 1, 2, 3, 4, 5, 6]  # consecutive, the system prompt first
    assert [e.tools for e in entries] == [(), (), ("Read", "Bash"), ("Read",), ("Bash",), ("Grep",), ()]
    assert [e.kind for e in entries] == ["original"] * 5 + ["stub", "original"]
    without_system = view_entries(step_of([], [H, A]), WordCounter())
    assert [e.position for e in without_system] == [0, 1]


def test_entry_kinds_add_hidden_when_the_provider_billed_more() -> None:
    counter = WordCounter({"h": {"human": 5, "first_turn_context": 7},
                           "r1": {"tool_results": 3, "unexplained": 2, "restored_context": 4}})
    entries = view_entries(step_of([], [H, R1, STUB]), counter)
    assert [entry_kinds(e) for e in entries] == [("original", "hidden"), ("original", "hidden"), ("stub",)]
    # a message's own tokens and what it carried beyond its text, apart (never one number piled up)
    assert [(e.tokens, e.hidden, e.total) for e in entries[:2]] == [(5, 7, 12), (3, 6, 9)]
    assert (entries[2].hidden, entries[2].total) == (0, entries[2].tokens)
    assert entries[1].hidden_by == (("restored_context", 4), ("unexplained", 2))


# -- filters and search ----------------------------------------------------------------------------
ENTRIES = view_entries(step_of([A_OLD], [H, A, R1, R2, STUB, ORPHAN]), WordCounter())


def ids(shown: Any) -> list[str]:
    return [e.id for e in shown.entries]


def test_searchable_text_holds_text_name_and_calls() -> None:
    assert searchable_text(ENTRIES[1]) == 'Reading two files\nRead\n{"path": "a.py"}\nBash\n{"cmd": "ls -la x"}'
    assert searchable_text(ENTRIES[2]) == "def parse(): pass  # parser\nRead"


def test_filters_by_role_tool_and_kind() -> None:
    assert ids(apply_filter(ENTRIES, StepFilter())) == ["h", "a", "r1", "r2", "r3", "r4"]
    assert ids(apply_filter(ENTRIES, StepFilter(roles=frozenset({"tool"})))) == ["r1", "r2", "r3", "r4"]
    assert ids(apply_filter(ENTRIES, StepFilter(tools=frozenset({"Bash"})))) == ["a", "r2"]
    assert ids(apply_filter(ENTRIES, StepFilter(tools=frozenset({"Grep", UNKNOWN_TOOL})))) == ["r3", "r4"]
    assert ids(apply_filter(ENTRIES, StepFilter(kinds=frozenset({"stub"})))) == ["r3"]
    assert ids(apply_filter(ENTRIES, StepFilter(roles=frozenset({"ai"}), kinds=frozenset({"stub"})))) == []


def test_search_is_a_case_insensitive_literal_substring_with_counts() -> None:
    shown = apply_filter(ENTRIES, StepFilter(query="PARSE"))
    assert ids(shown) == ["h", "r1"]  # "Parser" in h; "parse" and "parser" in r1
    assert shown.matches == (1, 2) and shown.total_matches == 3
    assert count_matches("a.b axb A.B", "a.b") == 2  # a dot is a dot, not "any character"
    assert count_matches("aaaa", "aa") == 2  # non-overlapping
    assert count_matches("anything", "") == 0
    both = apply_filter(ENTRIES, StepFilter(roles=frozenset({"tool"}), query="py"))
    assert ids(both) == ["r2"] and both.matches == (2,)  # h has none; a calls a.py but is no tool message


def test_snippets_cut_around_each_match_on_one_line() -> None:
    text = "one two\nthree FOUR five six seven"
    assert snippets(text, "four", context_chars=6) == [Snippet("…three ", "FOUR", " five…")]
    assert snippets("ab ab ab", "ab", context_chars=10, limit=2) == [Snippet("", "ab", " ab ab"),
                                                                     Snippet("ab ", "ab", " ab")]
    assert snippets("nothing here", "zzz") == [] and snippets("x", "") == []


# -- pages and events ---------------------------------------------------------------------------
@pytest.mark.parametrize(("total", "number", "size", "page"), [
    (241, 1, 25, Page(1, 10, 0, 25)),
    (241, 10, 25, Page(10, 10, 225, 241)),
    (241, 99, 25, Page(10, 10, 225, 241)),  # clamped to the last page
    (241, 0, 50, Page(1, 5, 0, 50)),
    (0, 3, 25, Page(1, 1, 0, 0)),
    (25, 1, 25, Page(1, 1, 0, 25)),
])
def test_page_of(total: int, number: int, size: int, page: Page) -> None:
    assert page_of(total, number, size) == page


def test_event_step_finds_the_nearest_step_with_events() -> None:
    event = Event(step=0, layer="summarization", kind="summary")
    steps = [step_of([], [], index=i, events=[event] if i in (2, 5) else []) for i in range(7)]
    assert [event_step(steps, k, +1) for k in range(7)] == [2, 2, 5, 5, 5, None, None]
    assert [event_step(steps, k, -1) for k in range(7)] == [None, None, None, 2, 2, 2, 5]


# -- tokens per tool ---------------------------------------------------------------------------
@pytest.mark.parametrize(("total", "weights", "shares"), [
    (10, [1, 1], [5, 5]),
    (10, [1, 2], [3, 7]),  # 3.33 / 6.67
    (11, [1, 1], [6, 5]),  # a tie goes to the earlier call
    (7, [0, 0, 0], [3, 2, 2]),  # no weight: equal shares
    (0, [3, 4], [0, 0]),
    (5, [], []),
])
def test_split_tokens(total: int, weights: list[int], shares: list[int]) -> None:
    assert split_tokens(total, weights) == shares
    assert sum(shares) == total or not weights


def test_tool_tokens_group_calls_and_results_by_tool_name() -> None:
    counter = WordCounter({
        # Read's call: "Read" + '{"path": "a.py"}' = 3 words; Bash's: "Bash" + '{"cmd": "ls -la x"}' = 5 words
        "a": {"ai": 3, "tool_calls": 16, "unexplained": 4},
        "r1": {"tool_results": 40, "unexplained": 9},
        "r2": {"tool_results": 12},
        "r3": {"stubs": 6},
        "r4": {"tool_results": 2},
    })
    rows = tool_tokens(step_of([A_OLD, H, A, R1, R2, STUB, ORPHAN], [H, A, R1, R2, STUB, ORPHAN]), counter)
    assert rows == [
        ToolTokens("Read", calls=1, call_tokens=6, results=1, result_tokens=40),  # 16 * 3/8 = 6; unexplained left out
        ToolTokens("Bash", calls=1, call_tokens=10, results=1, result_tokens=12),
        ToolTokens("Grep", calls=0, call_tokens=0, results=1, result_tokens=6),  # its stub; the call is in state only
        ToolTokens(UNKNOWN_TOOL, calls=0, call_tokens=0, results=1, result_tokens=2),
    ]
    assert [r.tokens for r in rows] == [46, 22, 6, 2]


def test_tool_tokens_add_up_to_the_view_categories_on_a_real_session() -> None:
    thread = load_thread(trace_path("claude-code", "tool_heavy.jsonl"))
    run = replay(thread, preset("as-recorded"), token_counter=get_counter("approximate"))
    assert run.steps
    for s in run.steps:
        rows = tool_tokens(s, run.counter)
        assert sum(r.call_tokens for r in rows) == s.view_by_category.get("tool_calls", 0)
        assert sum(r.result_tokens for r in rows) == sum(s.view_by_category.get(c, 0)
                                                         for c in ("tool_results", "stubs", "patches"))
        assert sum(r.calls for r in rows) == sum(len(m.tool_calls) for m in s.view if isinstance(m, AIMessage))


# -- state vs view as text ---------------------------------------------------------------------
def test_message_body_and_preview() -> None:
    assert message_body(A) == 'Reading two files\n↳ Read {"path": "a.py"}\n↳ Bash {"cmd": "ls -la x"}'
    assert message_body(R1) == "def parse(): pass  # parser"
    assert preview("a\n\n b   c") == "a b c"
    assert preview("x" * 130, 10) == "xxxxxxxxx…"


def test_text_diff_shows_the_rewrite_line_by_line() -> None:
    assert text_diff("keep\nold line\nend", "keep\nnew line\nend") == (
        "--- state\n+++ view\n@@ -1,3 +1,3 @@\n keep\n-old line\n+new line\n end")
    assert text_diff("same", "same") == ""
    cut = text_diff("x" * 10, "y", line_chars=4)
    assert "-xxxx … (+6 chars)" in cut.splitlines()
    long = text_diff("\n".join(map(str, range(100))), "", max_lines=5)
    assert long.splitlines()[-1] == "… 98 more diff lines" and len(long.splitlines()) == 6


def test_state_view_diff_rows_carry_their_messages() -> None:
    stub = mark(ToolMessage("stub", tool_call_id="c1", id="r1"), "stub")
    rows = state_view_diff(step_of([H, R1], [stub]), WordCounter())
    assert [(r.status, r.id) for r in rows] == [("only_state", "h"), ("changed", "r1")]
    assert rows[0].state_message is H and rows[0].view_message is None
    assert rows[1].state_message is R1 and rows[1].view_message is stub


# -- everything at once ------------------------------------------------------------------------
def test_step_detail_counts_the_filter_options() -> None:
    detail = step_detail(step_of([A_OLD, H, A, R1, R2, STUB], [H, A, R1, R2, STUB, ORPHAN]), WordCounter())
    assert detail.roles == {"human": 1, "ai": 1, "tool": 4}
    assert detail.tools == {"Bash": 2, "Read": 2, UNKNOWN_TOOL: 1, "Grep": 1}
    assert detail.kinds == {"stub": 1, "original": 5}
    assert detail.in_state == (True, True, True, True, True, False)
    assert len(detail.haystacks) == 6 and [r.tool for r in detail.tool_tokens] == ["Read", UNKNOWN_TOOL, "Grep", "Bash"]
    assert [r.status for r in detail.diff] == ["only_state", "same", "same", "same", "same", "same", "only_view"]


def test_step_detail_computes_tokens_per_tool_and_the_diff_on_first_use(monkeypatch) -> None:  # noqa: ANN001
    import engine.views.step_page as sv

    step = step_of([A_OLD, H, A, R1, R2, STUB], [H, A, R1, R2, STUB, ORPHAN])
    calls: list[str] = []
    real_tools, real_diff = sv.tool_tokens, sv.state_view_diff
    monkeypatch.setattr(sv, "tool_tokens", lambda *a: calls.append("tools") or real_tools(*a))
    monkeypatch.setattr(sv, "state_view_diff", lambda *a: calls.append("diff") or real_diff(*a))
    detail = step_detail(step, WordCounter())
    assert calls == []  # opening a step computes only what its View tab shows
    assert detail.tool_tokens == tuple(real_tools(step, WordCounter()))
    assert detail.diff == tuple(real_diff(step, WordCounter()))
    assert detail.tool_tokens is detail.tool_tokens and detail.diff is detail.diff
    assert calls == ["tools", "diff"]  # once each
