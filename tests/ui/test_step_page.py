"""The Step page through AppTest: pages of the view, search, filters, collapse/expand, event steps, the tabs.

The synthetic demo thread on its default preset (deepagents) has 86 messages in the view at step 40,
two of them offloaded stubs, and events at steps 0, 4, 8, 29, 54, 68, ...
"""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

from tests.ui.builders import HOSTILE


def titles(at: AppTest) -> list[str]:
    return [t.value for t in at.title]


def plain(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def messages(at: AppTest) -> list[str]:
    """The shown messages' positions, from their expander headers (`#12 **tool** · …`)."""
    return [e.label.split(" ", 1)[0] for e in at.expander if e.label.startswith("#")]


def note(at: AppTest) -> str:
    return next(plain(m.value) for m in at.markdown if m.value.startswith(("Cards ", "No messages")))


def expanded(at: AppTest) -> list[bool]:
    return [e.proto.expanded for e in at.expander if e.label.startswith("#")]


VIEW = "86 messages in the view: a call and its results share a card)"
# the cards' first messages at step 40 of the demo thread: a call and its results share a card (issue 35)
HEADS = [0, 1, 2, 4, 6, 8, 10, 12, 14, 16, 22, 24]


def test_the_view_is_paged_10_cards_at_a_time(start) -> None:  # noqa: ANN001
    at = start("pages/step.py", step="40")
    assert titles(at) == ["Step 40"]
    assert note(at) == f"Cards 1–10 of 42 ({VIEW}"
    assert messages(at) == [f"#{i}" for i in HEADS[:10]]
    assert any(c.value.startswith("86 messages, system prompt first; tools sent: ") for c in at.caption)
    assert at.button(key="step_page_prev").disabled
    at.button(key="step_page_next").click().run()
    assert note(at) == f"Cards 11–20 of 42 ({VIEW}"
    assert messages(at)[:2] == [f"#{i}" for i in HEADS[10:12]]
    at.number_input(key="step_page").set_value(5).run()
    assert messages(at) == ["#82", "#84"] and at.button(key="step_page_next").disabled
    at.segmented_control(key="step_order").set_value("newest first").run()
    assert messages(at)[:3] == ["#84", "#82", "#80"]  # back on page 1, newest first
    at.segmented_control(key="step_page_size").set_value(100).run()
    assert len(messages(at)) == 42 and note(at) == f"Cards 1–42 of 42 ({VIEW}"
    # another step opens on its first page
    at.segmented_control(key="step_page_size").set_value(25).run()
    assert note(at) == f"Cards 1–25 of 42 ({VIEW}" and len(messages(at)) == 25
    at.button(key="step_page_next").click().run()
    at.button(key="step_next").click().run()
    assert titles(at) == ["Step 41"] and note(at).startswith("Cards 1–25 of ")


def test_search_counts_matches_and_keeps_only_matching_cards(start) -> None:  # noqa: ANN001
    at = start("pages/step.py", step="40")
    at.text_input(key="step_search").input("GAUGE").run()
    assert note(at) == ("Cards 1–10 of 39 (of 42; 86 messages in the view: a call and its results share a card) · "
                        "**525** matches for “GAUGE” in 39 cards")
    labels = [e.label for e in at.expander if e.label.startswith("#")]
    assert all(":orange-badge[" in label for label in labels)
    at.text_input(key="step_search").input("no such text anywhere").run()
    assert messages(at) == [] and any("No message of this view matches" in i.value for i in at.info)


def test_search_text_stays_text_in_the_highlight(start) -> None:  # noqa: ANN001
    at = start("pages/step.py", thread="sample:hostile", step="2")
    at.text_input(key="step_search").input("<script>").run()
    assert not at.exception
    labels = [e.label for e in at.expander if e.label.startswith("#")]
    assert labels and any(":orange-background[\\<script\\>]" in label for label in labels)
    # every < > [ ] ( ) of the transcript arrives backslash-escaped: Markdown shows it, never parses it
    for md in [*labels, *(m.value for m in at.markdown if "orange-background" in m.value)]:
        if ":orange-background[" not in md:
            continue
        body = md.split(":orange-background[", 1)[1]
        assert not re.search(r"(?<!\\)[<>()]", body.split(":gray[→")[0]), md
        assert "](javascript" not in md
    at.button(key="step_expand_all").click().run()
    assert any(HOSTILE in c.value for c in at.code)  # the body itself, verbatim in a code block


def test_filters_by_role_tool_and_kind(start) -> None:  # noqa: ANN001
    at = start("pages/step.py", step="40")
    at.multiselect(key="step_kinds").set_value(["stub"]).run()
    assert messages(at) == ["#8", "#62"]  # the calls whose results were offloaded: call and stub in one card
    assert note(at) == "Cards 1–2 of 2 (of 42; 86 messages in the view: a call and its results share a card)"
    at.multiselect(key="step_kinds").set_value([]).run()
    at.multiselect(key="step_tools").set_value(["grep"]).run()
    assert note(at) == "Cards 1–10 of 15 (of 42; 86 messages in the view: a call and its results share a card)"
    assert all("grep" in e.label for e in at.expander if e.label.startswith("#"))


def test_collapse_and_expand_all(start) -> None:  # noqa: ANN001
    at = start("pages/step.py", step="40")
    assert expanded(at) == [False] * 10  # headers only: ~50 px a message
    at.button(key="step_expand_all").click().run()
    assert expanded(at) == [True] * 10
    at.button(key="step_page_next").click().run()
    assert expanded(at) == [True] * 10  # the choice holds on the next page
    at.button(key="step_collapse_all").click().run()
    assert expanded(at) == [False] * 10


def test_next_and_previous_step_with_events(start) -> None:  # noqa: ANN001
    at = start("pages/step.py", step="10")
    at.button(key="step_next_event").click().run()
    assert titles(at) == ["Step 29"] and at.query_params["step"] == "29"
    at.button(key="step_next_event").click().run()
    assert titles(at) == ["Step 48"]
    at.button(key="step_prev_event").click().run()
    at.button(key="step_prev_event").click().run()
    assert titles(at) == ["Step 8"]
    at.number_input(key="step_input").set_value(0).run()
    assert at.button(key="step_prev_event").disabled and not at.button(key="step_next_event").disabled


def test_diff_and_tool_tabs_show_text_and_tokens_per_tool(start) -> None:  # noqa: ANN001
    at = start("pages/step.py", step="40")
    # the View tab is open first: nothing of the others is drawn
    assert not [m for m in at.markdown if m.value.startswith("Same: ")]
    at.session_state["step_tab"] = "State vs view"
    at.run()
    assert any(m.value.startswith("Same: ") for m in at.markdown)
    assert any("No differences" in c.value for c in at.caption)  # offloading rewrote the state too
    at.segmented_control(key="step_diff_scope").set_value("all rows").run()
    frame = at.dataframe[-1].value
    assert list(frame.columns) == ["status", "role", "kind", "state tokens", "view tokens", "text", "id"]
    at.session_state["step_tab"] = "Tokens per tool"
    at.run()
    tools = at.dataframe[-1].value
    assert list(tools.columns) == ["tool", "calls", "call tokens", "results", "result tokens", "tokens", "% of view"]
    assert set(tools["tool"]) == {"grep", "execute", "read_file", "task", "web_search", "write_file", "write_todos"}
    assert (tools["tokens"] == tools["call tokens"] + tools["result tokens"]).all()
    assert list(tools["tokens"]) == sorted(tools["tokens"], reverse=True)


def test_per_step_data_is_computed_once_and_the_cache_stays_bounded() -> None:
    from engine.config.schema import preset
    from engine.run.replay import replay
    from engine.tokens.counters import get_counter
    from tests.ui.builders import build_thread
    from ui import step_view

    run = replay(build_thread(40), preset("stress"), token_counter=get_counter("approximate"))
    first = step_view.step_detail(run, 3)
    assert step_view.step_detail(run, 3) is first  # paging and filtering reuse it
    for k in range(40):
        step_view.step_detail(run, k)
    assert len(step_view._DETAILS) <= step_view._DETAILS_MAX
    other = replay(build_thread(40), preset("stress"), token_counter=get_counter("approximate"))
    assert step_view.step_detail(other, 39) is not step_view.step_detail(run, 39)  # keyed by the run too


def test_budget_line_reads_the_trigger_keep_and_window() -> None:
    from engine.views.timeline import ThresholdLine
    from ui.step_view import budget_text

    lines = [ThresholdLine("window", "window 100,000 tokens", 100_000),
             ThresholdLine("trigger", "trigger 0.8", 80_000), ThresholdLine("trigger", "trigger 0.5", 50_000),
             ThresholdLine("keep", "keep 0.2", 20_000)]
    assert budget_text(42_000, 100_000, lines) == ("**42,000** of 100,000 tokens (42% of the window)  \n"
                                                   "trigger 50,000: 8,000 tokens below it · keep 20,000")
    assert budget_text(50_000, 100_000, lines[:3]) == ("**50,000** of 100,000 tokens (50% of the window)  \n"
                                                       "trigger 50,000: reached")
    assert budget_text(120_000, 100_000, lines[:1]) == ("**120,000** of 100,000 tokens (120% of the window)  \n"
                                                        ":red[**over the window by 20,000 tokens**]")
    assert budget_text(60_000, 100_000, [ThresholdLine("trigger", "t", 50_000)]).endswith(
        "trigger 50,000: :red[**10,000 tokens over it**]")


def test_a_view_over_the_window_reads_as_a_positive_amount_over_it() -> None:
    from engine.config.schema import preset
    from engine.run.replay import replay
    from engine.tokens.counters import get_counter
    from tests.ui.builders import build_thread
    from ui.step_view import category_table

    run = replay(build_thread(40), preset("langchain"), token_counter=get_counter("approximate"))
    step = run.steps[-1]
    under = category_table(step, step.view_tokens + 100)
    assert under[-1] == {"category": "free space", "tokens": 100, "% of window": round(100 * 100 / (step.view_tokens + 100), 1)}
    over = category_table(step, step.view_tokens // 2)
    excess = step.view_tokens - step.view_tokens // 2
    assert over[-1] == {"category": "over the window", "tokens": excess,
                        "% of window": round(100 * excess / (step.view_tokens // 2), 1)}
    assert all(r["tokens"] >= 0 and r["% of window"] >= 0 for r in over)


def test_search_says_where_else_in_the_session_the_text_is_and_goes_there(start) -> None:  # noqa: ANN001
    """Issue 35: search covered one step's view; now the first and last step whose view holds the text."""
    from engine.views.step_page import session_hits
    from ui import session

    at = start("pages/step.py", step="40")
    run = session.run_for(at.session_state["thread_key"], at.session_state["config"])
    at.text_input(key="step_search").input("GAUGE").run()
    hits = session_hits(run, "GAUGE")
    views = [k for k, s in enumerate(run.steps)
             if any("gauge" in (str(m.content) + str(getattr(m, "tool_calls", ""))).lower() for m in s.view)]
    assert (hits.first, hits.last, hits.steps) == (views[0], views[-1], len(views))
    said = " ".join(plain(m.value) for m in at.markdown)
    assert f"In the whole session: “GAUGE” is in the view of {len(views)} steps: first at step {views[0]}, last at " \
           f"step {views[-1]}" in said
    at.button(key="step_search_last").click().run()
    assert titles(at) == [f"Step {views[-1]}"]
