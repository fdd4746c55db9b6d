"""The Step page's message browser: search, filters, pages, collapse/expand, and its other tabs.

A real session's view holds hundreds of messages (a Claude Code step: 200-300, 120-210 kB of text);
drawn all at once the page was 33,000-90,000 px tall and took seconds to send. Here a page of the
view is drawn at a time, inside a fragment (paging, searching and filtering rerun only the
browser), from per-step data computed once (`engine.views.step_page.step_detail`, cached below).

Every transcript text is shown as text: code blocks, or Markdown escaped by `ui.text.escape_md`
(search highlights are Streamlit's own `:orange-background[...]` around escaped text).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from engine.base.wording import plural
from engine.run.run import Run, StepRecord
from engine.thread.decisions import Decision
from engine.views.decisions import Reserved, reserved
from engine.views.step import DiffRow, ViewEntry, category_rows, diff_counts
from engine.views.step_page import (
    Card,
    ShownCards,
    StepDetail,
    StepFilter,
    ToolTokens,
    edit_diff,
    filter_cards,
    message_body,
    page_of,
    preview,
    searchable_text,
    session_hits,
    snippets,
    text_diff,
)
from engine.views.timeline import ThresholdLine
from ui import session
from ui.chart_placeholder import chart_placeholder
from ui.figures import CATEGORY_LABELS, category_label, esc
from ui.text import MAX_SHOWN_CHARS, escape_md
from ui.widgets import BADGES, EMPTY_CELL, ROLE_ICONS, badge, table

# 10 a page by default: about what the first screen shows below the budget and the controls; each
# message header is an expander, and 25 of them were ~0.3 s of the browser's main thread when a
# Step page opened (docs/benchmarks.md, 2026-12-02). Bigger pages are one click away.
PAGE_SIZES = (10, 25, 50, 100)
ORDERS = ("oldest first", "newest first")
DIFF_SCOPES = ("differences", "all rows")
DIFF_PAGE_SIZE = 10
CODE_HEIGHT_PX = 360  # a longer body scrolls inside its box instead of stretching the page
CHARS_PER_LINE = 140  # about what a code line holds in the wide layout, to tell a long body
KIND_LABELS = {**{k: v[0] for k, v in BADGES.items()}, "hidden": "hidden tokens", "original": "original"}

# -- per-step data, computed once ------------------------------------------------------------------
# (id(run), step) -> (weak ref to the run, detail). A Run lives in ui.session's run cache; the weak
# ref tells a reused id from the same run, and the bound keeps memory flat (a detail holds the
# step's entries and their search texts: ~2x the view's text, 0.2-0.5 MB on a real session).
_DETAILS: OrderedDict[tuple[int, int], tuple[weakref.ref[Run], StepDetail]] = OrderedDict()
_DETAILS_MAX = 32
_LOCK = threading.Lock()


def step_detail(run: Run, k: int) -> StepDetail:
    """The step's entries, search texts, filter options, tokens per tool and diff rows (cached per run and step)."""
    from engine.views.step_page import step_detail as compute

    key = (id(run), k)
    with _LOCK:
        hit = _DETAILS.get(key)
        if hit is not None and hit[0]() is run:
            _DETAILS.move_to_end(key)
            return hit[1]
    detail = compute(run.steps[k], run.counter)
    with _LOCK:
        _DETAILS[key] = (weakref.ref(run), detail)
        while len(_DETAILS) > _DETAILS_MAX:
            _DETAILS.popitem(last=False)
    return detail


# -- session state of the browser ----------------------------------------------------------------
PAGE = "step_page"
OPEN = "step_open"  # whether messages are drawn expanded
OPEN_GEN = "step_open_gen"  # bumped by expand/collapse all: fresh expanders take the new default


def reset_page() -> None:
    st.session_state[PAGE] = 1


def _set_open(value: bool) -> None:
    """Expand (True) or collapse (False) every message: fresh expanders take the new default."""
    st.session_state[OPEN] = value
    st.session_state[OPEN_GEN] = st.session_state.get(OPEN_GEN, 0) + 1


def _turn_page(delta: int, pages: int) -> None:
    st.session_state[PAGE] = min(max(1, int(st.session_state.get(PAGE, 1) or 1) + delta), pages)


def current_filter() -> StepFilter:
    return StepFilter(roles=frozenset(st.session_state.get("step_roles") or ()),
                      tools=frozenset(st.session_state.get("step_tools") or ()),
                      kinds=frozenset(st.session_state.get("step_kinds") or ()),
                      query=str(st.session_state.get("step_search") or ""))


def _options(counts: dict[str, int], key: str) -> list[str]:
    # an option chosen at another step stays selectable (a multiselect refuses a value not offered)
    return list(dict.fromkeys([*counts, *(st.session_state.get(key) or ())]))


# -- the browser ---------------------------------------------------------------------------------
@st.fragment
def message_browser(run: Run, k: int, detail: StepDetail) -> None:
    """Search, filters, page controls and one page of the view's messages."""
    # the three filters sit in a popover, which the browser draws only while it is open: three
    # multiselects on every step opened were ~0.15 s of the browser's main thread (docs/benchmarks.md,
    # 2026-12-02); the search box stays in view
    controls = st.columns([3, 1], vertical_alignment="bottom")
    controls[0].text_input("Search the view", key="step_search", on_change=reset_page,
                           placeholder="text, tool names and arguments (case-insensitive)")
    chosen = [name for name, key in (("role", "step_roles"), ("tool", "step_tools"), ("kind", "step_kinds"))
              if st.session_state.get(key)]
    with controls[1].popover("Filters: " + ", ".join(chosen) if chosen else "Filter by role, tool, kind",
                             icon=":material/filter_list:", width="stretch", key="step_filters"):
        st.multiselect("Role", _options(detail.roles, "step_roles"), key="step_roles", on_change=reset_page,
                       format_func=lambda r: f"{r} ({detail.roles.get(r, 0)})", placeholder="all roles")
        st.multiselect("Tool", _options(detail.tools, "step_tools"), key="step_tools", on_change=reset_page,
                       format_func=lambda t: f"{t} ({detail.tools.get(t, 0)})", placeholder="all tools",
                       help="Messages that call the tool, and the results that answer it.")
        st.multiselect("Kind", _options(detail.kinds, "step_kinds"), key="step_kinds", on_change=reset_page,
                       format_func=lambda c: f"{KIND_LABELS.get(c, c)} ({detail.kinds.get(c, 0)})",
                       placeholder="all kinds",
                       help="What a layer or the source made of a message; *hidden tokens*: the provider "
                            "billed it beyond its own text (first-turn context, re-attached, unexplained).")
    flt = current_filter()
    if flt.query:  # where else in the session the text is in what the model saw (issue 35: one step only)
        hits = session_hits(run, flt.query)
        row = st.columns([6, 1, 1], vertical_alignment="center")
        row[0].markdown(f":gray[In the whole session: “{escape_md(flt.query, limit=60)}” is "
                        f"{escape_md(hits.sentence())}.]")
        for col, label, target, key in ((row[1], "first", hits.first, "step_search_first"),
                                        (row[2], "last", hits.last, "step_search_last")):
            if target is not None and col.button(f"Go to {label} ({target:,})", key=key, disabled=target == k):
                session.set_step(target)
                reset_page()
                st.rerun()  # the whole page: the step is drawn outside this fragment
    # one card per model call: an AI message with its tool calls' results, or a message on its own
    shown = filter_cards(detail, flt)
    if st.session_state.get("step_order") == ORDERS[1]:
        shown = ShownCards(shown.cards[::-1], shown.matches[::-1], shown.total_matches)
    size = int(st.session_state.get("step_page_size") or PAGE_SIZES[0])
    page = page_of(len(shown), int(st.session_state.get(PAGE, 1) or 1), size)
    st.session_state[PAGE] = page.number  # clamped before the widget exists in this run

    total = len(detail.cards)
    messages = len(detail.entries)
    where = f"Cards {page.start + 1:,}–{page.stop:,} of {len(shown):,}" if len(shown) else "No messages shown"
    note = where + (f" (of {total:,}" if len(shown) != total else " (") + \
        f"{'; ' if len(shown) != total else ''}{plural(messages, 'message')} in the view: a call and its results share a card)"
    if flt.query:
        note += f" · **{shown.total_matches:,}** match{'es' if shown.total_matches != 1 else ''} for " \
                f"“{escape_md(flt.query, limit=60)}” in {len(shown):,} card{'s' if len(shown) != 1 else ''}"
    st.markdown(note)
    with st.container(horizontal=True, vertical_alignment="bottom"):
        st.button("◀ page", key="step_page_prev", disabled=page.number <= 1, on_click=_turn_page,
                  args=(-1, page.pages))
        st.number_input(f"page (1–{page.pages})", key=PAGE, min_value=1, max_value=page.pages, step=1, width=150)
        st.button("page ▶", key="step_page_next", disabled=page.number >= page.pages, on_click=_turn_page,
                  args=(1, page.pages))
        # buttons, not a select or a toggle: those keep the focus in an <input>, where j/k/n/p do nothing
        st.segmented_control("per page", PAGE_SIZES, key="step_page_size", on_change=reset_page, required=True,
                             default=PAGE_SIZES[0])
        st.segmented_control("order", ORDERS, key="step_order", on_change=reset_page, required=True,
                             default=ORDERS[0])
        st.button("Expand all", key="step_expand_all", on_click=_set_open, args=(True,), icon=":material/unfold_more:")
        st.button("Collapse all", key="step_collapse_all", on_click=_set_open, args=(False,),
                  icon=":material/unfold_less:")

    if not len(shown):
        st.info("No message of this view matches." if flt.query or flt.roles or flt.tools or flt.kinds
                else "This view is empty.")
        return
    # collapsed unless the user expanded all: a page is then ~50 px per card, and a search puts
    # each card's first match in its header line
    opened = bool(st.session_state.get(OPEN, False))
    gen = st.session_state.get(OPEN_GEN, 0)
    for card, matches in zip(shown.cards[page.start:page.stop], shown.matches[page.start:page.stop], strict=True):
        head = detail.entries[card.head]
        step_card(detail, card, query=flt.query, matches=matches, expanded=opened,
                  key=f"step_msg_{gen}_{k}_{head.position}")


def message_label(entry: ViewEntry, *, in_state: bool | None, matches: int = 0, query: str = "") -> str:
    """The one-line header of a message: position, role, tokens, badges, and the start of its text
    (with a search: its first match, highlighted)."""
    label = f"#{entry.position} **{escape_md(entry.role)}** · {entry.tokens:,} tokens"
    if entry.tools:
        label += " · " + ", ".join(escape_md(t, limit=40) for t in entry.tools[:4]) + (" …" if len(entry.tools) > 4 else "")
    if entry.kind != "original":
        label += " " + badge(entry.kind)
    if in_state is False:
        label += " :gray-badge[view only]"
    if matches:
        label += f" :orange-badge[{matches:,} match{'es' if matches != 1 else ''}]"
    if matches and query:
        found = highlighted(entry.text, query, limit=1) or highlighted(searchable_text(entry), query, limit=1)
        if found:
            return label + " · " + found[0]
    first = preview(entry.text or (f"{entry.tool_calls[0][0]} {entry.tool_calls[0][1]}" if entry.tool_calls else ""), 90)
    return label + (f" · :gray[{escape_md(first)}]" if first else "")


def highlighted(text: str, query: str, *, limit: int = 3) -> list[str]:
    """Markdown lines, one per match: escaped context around the escaped match on an orange background."""
    return [f"{escape_md(s.before)}:orange-background[{escape_md(s.match)}]{escape_md(s.after)}"
            for s in snippets(text, query, limit=limit)]


def _code(text: str) -> None:
    shown = text[:MAX_SHOWN_CHARS]
    lines = sum(1 + len(line) // CHARS_PER_LINE for line in shown.splitlines())
    st.code(shown or " ", language=None, wrap_lines=True, height=CODE_HEIGHT_PX if lines > 16 else "content")
    if len(text) > MAX_SHOWN_CHARS:
        st.caption(f"first {MAX_SHOWN_CHARS:,} of {len(text):,} characters shown")


def step_message(entry: ViewEntry, *, in_state: bool | None, query: str, matches: int, expanded: bool,
                 key: str) -> None:
    """One message as an expander: the header line, then its id, search matches, text and tool calls.

    Lazy (`on_change="rerun"`): a closed message sends its header only, and opening it reruns this
    fragment alone. Drawn closed, the bodies of a page of 25 messages (code blocks of up to 60,000
    characters each) were most of what opening a Step page cost the browser.
    """
    box = st.expander(message_label(entry, in_state=in_state, matches=matches, query=query), expanded=expanded,
                      key=key, icon=ROLE_ICONS.get(entry.role), on_change="rerun")
    if not box.open:
        return
    with box:
        _message_meta(entry)
        if query and matches:
            lines = highlighted(entry.text, query) + [
                line for name, args in entry.tool_calls for line in highlighted(f"{name} {args}", query)]
            st.markdown("  \n".join(lines[:3]) + (f"  \n:gray[… {matches - 3:,} more]" if matches > 3 else ""))
        if entry.text.strip() or not entry.tool_calls:
            _code(entry.text)
        for name, args in entry.tool_calls:
            st.markdown(f"↳ tool call **{escape_md(name, limit=60)}**")
            _code(args)


def step_card(detail: StepDetail, card: Card, *, query: str, matches: int, expanded: bool, key: str) -> None:
    """A card: the message's header (its results counted in it), then its text — thinking labelled apart —
    and each tool call followed by its result; an edit call as a diff of old -> new text."""
    head = detail.entries[card.head]
    results = {call: detail.entries[i] for call, i in card.results}
    label = message_label(head, in_state=detail.in_state[head.position], matches=matches, query=query)
    if results:
        tokens = sum(r.tokens for r in results.values())
        label += f" :gray[→ {len(results)} result{'s' if len(results) != 1 else ''}, {tokens:,} tokens]"
    box = st.expander(label, expanded=expanded, key=key, icon=ROLE_ICONS.get(head.role), on_change="rerun")
    if not box.open:
        return
    with box:
        _message_meta(head)
        if query and matches:
            lines = [line for e in (head, *results.values()) for line in highlighted(searchable_text(e), query)]
            st.markdown("  \n".join(lines[:3]) + (f"  \n:gray[… {matches - 3:,} more]" if matches > 3 else ""))
        if head.thinking:
            st.markdown(":violet-badge[thinking] :gray[the model's reasoning, sent back with the message]")
            _code(head.thinking)
            if head.reply.strip():
                st.markdown(":gray[reply]")
        body = (head.reply if head.thinking else head.text).strip("\n")
        if body.strip() or not head.tool_calls:
            _code(body)
        for call, (name, args) in enumerate(head.tool_calls):
            st.markdown(f"↳ tool call **{escape_md(name, limit=60)}**")
            diff = edit_diff(name, args)
            if diff is not None:
                st.code(diff or "(no change)", language="diff", wrap_lines=True,
                        height=CODE_HEIGHT_PX if diff.count("\n") > 16 else "content")
            else:
                _code(args)
            result = results.get(call)
            if result is None:
                st.caption("no result in this view" + (" (a layer may have removed it)" if head.call_ids else ""))
                continue
            head_line = f"result #{result.position} · {result.tokens:,} tokens"
            if result.kind != "original":
                head_line += " " + badge(result.kind)
            st.markdown(f":gray[{head_line}]")
            _code(result.text)


def _message_meta(entry: ViewEntry) -> None:
    meta = f"id {escape_md(entry.id, limit=80)}"
    if entry.tool_call_id:
        meta += f" · answers {escape_md(entry.tool_call_id, limit=60)}"
    if entry.name:
        meta += f" · name {escape_md(entry.name, limit=60)}"
    if entry.hidden:
        parts = ", ".join(f"{n:,} {CATEGORY_LABELS.get(c, c)}" for c, n in entry.hidden_by)
        meta += f" · {entry.tokens:,} its own, +{parts} billed with it beyond its text"
    st.caption(meta)


# -- the budget: used vs window, and the /context breakdown ----------------------------------------
# Without a chart: the two plotly figures that drew these (an Indicator gauge, a stacked bar) were
# most of what opening a Step page cost the browser once the message bodies went lazy — ~0.26 s of
# main-thread time per open, and on the first open Streamlit's plotly chunk (the Timeline draws
# with its own copy of plotly.js, ui/timeline_chart.py), 3-11 s to load and compile on a loaded
# machine (docs/benchmarks.md, 2026-12-02). A progress bar and the table's bar column show the same
# numbers: the table is drawn anyway.
def budget_text(used: int, window: int, lines: list[ThresholdLine], decisions: Sequence[Decision] = ()) -> str:
    """The budget line: view tokens of the window, then what each policy measured against its threshold at
    this step (its own decision: the same numbers its line is drawn on), else how far the first trigger is."""
    text = f"**{used:,}** of {window:,} tokens" + (f" ({100 * used / window:.0f}% of the window)" if window else "")
    decided = [d for d in decisions if d.threshold is not None and d.measured is not None]
    for d in decided:
        gap = d.threshold - d.measured  # type: ignore[operator]
        unit = "tokens" if d.unit == "tokens" else d.unit
        where = (f"{gap:,} {unit} below it" if gap > 0 else f":red[**{-gap:,} {unit} over it**]" if gap < 0 else "reached")
        verdict = "fired" if d.fired else "not fired"
        text += (f"  \n{escape_md(d.rule)}: {escape_md(d.quantity.split(' (')[0])} {d.measured:,} against "
                 f"{d.threshold:,}: {where}, {verdict}" + (f" ({escape_md(d.reason)})" if d.reason else ""))
    if not decided:
        trigger = min((li.tokens for li in lines if li.role == "trigger" and li.tokens is not None), default=None)
        if trigger is not None:
            gap = trigger - used
            text += f"  \ntrigger {trigger:,}: " + (f"{gap:,} tokens below it" if gap > 0 else
                                                     f":red[**{-gap:,} tokens over it**]" if gap < 0 else "reached")
    keep = next((li.tokens for li in lines if li.role == "keep" and li.tokens is not None), None)
    if keep is not None:
        text += f" · keep {keep:,}"
    if used > window:
        text += f"  \n:red[**over the window by {used - window:,} tokens**]"
    return text


CATEGORY_TABLE_PX = 560  # the category table's columns (320 + 80 + a 130 px bar) and its borders


def budget_panel(run: Run, k: int, lines: list[ThresholdLine]) -> None:
    """Used vs window, each policy's decision at this step, then tokens per category like Claude Code's /context."""
    step = run.steps[k]
    window = run.window_tokens
    decisions = run.decisions_at(k)
    # A row that wraps, the table in a box as wide as its columns: in a 3/5 column of a 1024 px projector
    # (~330 px) the 290 px category column left "toker" and first digits, and "% of window" out of sight.
    row = st.container(horizontal=True, gap="medium")
    left, right = row.container(width=300), row.container(width=CATEGORY_TABLE_PX)
    with left:
        st.progress(min(1.0, step.view_tokens / window) if window else 0.0,
                    text=budget_text(step.view_tokens, window, lines, decisions))
        st.caption(" · ".join(li.label for li in lines if li.tokens is not None)
                   + "".join(f"  \n{li.note}" for li in lines if li.note))
        if decisions:
            st.markdown("**Decisions at this step**")
            for d in decisions:
                st.text(d.text())
        if run.calibration is not None:
            st.caption(escape_md(f"{run.calibration.fit.statement()}."))
    with right:
        st.markdown(f"**Context at this step** ({run.counts_label()}): {step.view_tokens:,} of "
                    f"{window:,} tokens · raw (no layers) {step.raw_tokens:,} · state {step.state_tokens:,}"
                    + (f" · recorded by the provider {step.recorded_input_tokens:,}" if step.recorded_input_tokens
                       else ""))
        room = reserved(run)  # once a rerun: it groups the run's decisions
        st.dataframe(category_table(step, window, room=room), hide_index=True, key="step_categories", placeholder=EMPTY_CELL, column_config={
            # the longest labels, "re-attached at compaction (not recorded)" and "reserved above state
            # summarization trigger", need the room (the quantity a threshold compares is said below)
            "category": st.column_config.TextColumn("category", width=320),
            "tokens": st.column_config.NumberColumn("tokens", format="localized", width=80),
            "% of window": st.column_config.ProgressColumn("% of window", format="%.1f%%", min_value=0,
                                                           max_value=100, width=130)})
        if room is not None and room.measured_in:
            st.caption(escape_md(f"{room.label[0].upper()}{room.label[1:]}: measured in {room.measured_in}; "
                                 "what the view has not grown into yet."))


def category_table(step: StepRecord, window: int, run: Run | None = None, *,
                   room: Reserved | None = None) -> list[dict[str, Any]]:
    """The category rows as the page shows them, under the words the page uses, with what the run's policy
    reserves above its threshold (Claude Code's "Autocompact buffer": `room`, else `reserved(run)`)."""
    if room is None and run is not None:
        room = reserved(run)
    rows = category_rows(step, window, (room.label, room.tokens) if room is not None else None)
    return [{"category": category_label(r["category"]), "tokens": r["tokens"], "% of window": r["percent_of_window"]}
            for r in rows]


# -- state vs view ---------------------------------------------------------------------------------
def _row_text(r: DiffRow) -> str:
    m = r.view_message if r.view_message is not None else r.state_message
    return message_body(m) if m is not None else ""


def diff_panel(detail: StepDetail) -> None:
    """Counts, every row with a preview of its text, and a before/after diff of each rewritten message."""
    rows = detail.diff
    counts = diff_counts(rows)
    st.markdown(f"Same: {counts['same']} · rewritten in the view: {counts['changed']} · "
                f"only in state (hidden from the model): {counts['only_state']} · "
                f"only in the view (inserted by a layer): {counts['only_view']}")
    changed = [r for r in rows if r.status == "changed"]
    # a real step's view is mostly "same": the differences first, every row on request
    scope = st.segmented_control("rows", DIFF_SCOPES, key="step_diff_scope", required=True, default=DIFF_SCOPES[0])
    listed = [r for r in rows if r.status != "same"] if scope == DIFF_SCOPES[0] else list(rows)
    if listed:
        table([{"status": r.status.replace("_", " "), "role": r.role, "kind": r.kind,
                "state tokens": r.state_tokens, "view tokens": r.view_tokens, "text": preview(_row_text(r)),
                "id": r.id} for r in listed], height=min(600, 38 + 35 * len(listed)))
    else:
        st.caption("No differences: the model received the state as it is.")
    if not changed:
        return
    st.markdown(f"**Rewritten in the view** ({len(changed)}): the state's text → what the model received")
    page = page_of(len(changed), int(st.session_state.get("step_diff_page", 1) or 1), DIFF_PAGE_SIZE)
    st.session_state["step_diff_page"] = page.number
    if page.pages > 1:
        st.number_input(f"rewritten messages, page (1–{page.pages})", key="step_diff_page", min_value=1,
                        max_value=page.pages, step=1, width=220)
    for r in changed[page.start:page.stop]:
        before = message_body(r.state_message) if r.state_message is not None else ""
        after = message_body(r.view_message) if r.view_message is not None else ""
        with st.expander(f"{escape_md(r.role)} · {badge(r.kind) if r.kind != 'original' else 'original'} · "
                         f"{r.state_tokens or 0:,} → {r.view_tokens or 0:,} tokens · :gray[{escape_md(r.id, limit=60)}]"):
            st.code(text_diff(before, after) or "(no text difference: metadata only)", language="diff",
                    wrap_lines=True, height=CODE_HEIGHT_PX if before.count("\n") + after.count("\n") > 16 else "content")


# -- tokens per tool ---------------------------------------------------------------------------------
def tool_tokens_figure(rows: list[ToolTokens], *, height: int | None = None) -> go.Figure:
    """Horizontal bars per tool: its calls' argument tokens and its results' tokens, largest on top."""
    names = [esc(r.tool) for r in rows][::-1]
    fig = go.Figure()
    fig.add_trace(go.Bar(y=names, x=[r.result_tokens for r in rows][::-1], orientation="h", name="results",
                         marker_color="#2a9d8f", hovertemplate="%{y}: %{x:,} result tokens<extra></extra>"))
    fig.add_trace(go.Bar(y=names, x=[r.call_tokens for r in rows][::-1], orientation="h", name="call arguments",
                         marker_color="#e9c46a", hovertemplate="%{y}: %{x:,} call tokens<extra></extra>"))
    fig.update_layout(barmode="stack", height=height or max(160, 60 + 26 * len(rows)),
                      margin={"l": 10, "r": 10, "t": 10, "b": 30}, legend={"orientation": "h", "y": -0.15},
                      xaxis={"title": "tokens", "tickformat": ",d"}, yaxis={"automargin": True})
    return fig


def tool_panel(run: Run, detail: StepDetail, view_tokens: int) -> None:
    """Like Claude Code's /context, by tool: each tool's result and call-argument tokens in this view."""
    rows = list(detail.tool_tokens)
    if not rows:
        st.info("No tool calls or results in this view.")
        return
    total = sum(r.tokens for r in rows)
    st.caption(f"{total:,} of the view's {view_tokens:,} tokens are tool calls and results ({run.counts_label()}; "
               "a result counts toward the tool it answers, stubs and patched results included; what the "
               "provider billed beyond the text is left out).")
    fig = tool_tokens_figure(rows)
    with st.container():  # the placeholder holds the chart's place until it is drawn (ui.chart_placeholder)
        chart_placeholder(int(fig.layout.height), key="tool_tokens_drawing")
        st.plotly_chart(fig, key="tool_tokens", config={"displayModeBar": False})

    def pct(n: int) -> float:
        return round(100 * n / view_tokens, 1) if view_tokens else 0.0

    table([{"tool": r.tool, "calls": r.calls, "call tokens": r.call_tokens, "results": r.results,
            "result tokens": r.result_tokens, "tokens": r.tokens, "% of view": pct(r.tokens)} for r in rows])


__all__ = ["budget_panel", "budget_text", "diff_panel", "message_browser", "message_label", "step_detail", "step_message",
                      "tool_panel", "tool_tokens_figure"]
