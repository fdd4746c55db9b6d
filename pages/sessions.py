"""Sessions: the agents' own sessions under the server's roots — list, open, follow live, and compare
policies across many (engine/sessions; the roots come from `ctxi ui --sessions DIR` only)."""

from __future__ import annotations

import importlib.util
from typing import Any, Final

import streamlit as st

from engine.base.errors import ContextInspectorError
from engine.base.wording import money, plural
from engine.config.presets import PRESETS
from engine.sessions.across import (
    DEFAULT_POLICIES,
    RAY_SESSIONS,
    policy_table,
    session_figures,
    totals,
    verdict,
)
from engine.sessions.gauge import gauge
from engine.sessions.listing import search
from engine.sessions.summary import Summary
from engine.workspace.disk_sessions import AGENTS, read_under
from ui import session, sessions_state
from ui.frame import require_frame
from ui.text import error_text, escape_md
from ui.widgets import EMPTY_CELL, table, table_height

require_frame()

st.title("Sessions")
server = sessions_state.server()
if server.error:
    st.error("The sessions roots could not be used: " + escape_md(server.error))
if not server.roots:
    st.info("No sessions roots. Start the dashboard with the folders your agents write to, e.g. "
            "`ctxi ui --sessions ~/.claude/projects --sessions ~/.codex/sessions` (or set `CTXI_SESSIONS`, or "
            "`sessions.roots` in the workspace's `settings.yaml`): Claude Code, Codex, Gemini CLI and Cline sessions "
            "under them are listed here. A link can never add a folder (SECURITY.md).")
    st.stop()


def _code(text: str) -> str:
    """Text as an inline code span (Markdown escapes do not apply inside one: a backtick cannot close it)."""
    return "`" + text.replace("`", "'").replace("\n", " ") + "`"


def _money(value: float | None) -> str:
    """Dollars as every page writes them (engine.base.wording.money: cents, two digits below a cent)."""
    return "n/a" if value is None else money(value)


def _rows_table(rows: list[Summary]) -> list[dict[str, Any]]:
    # what a session is and its figures first, the rest after them (COLUMNS: they fit at 1024 px)
    return [{"live": "●" if r.live else "", "title": r.title or "", "steps": r.steps, "peak": r.peak_tokens,
             "compactions": r.compactions, "cost": _money(r.dollars),
             "% of window": (round(100 * r.peak_tokens / r.window_tokens, 1)
                             if r.peak_tokens and r.window_tokens else None),
             "agent": r.agent, "modified": (r.modified or "")[:16].replace("T", " "),
             "model": r.model or "", "project": r.project or "", "note": r.error or ""} for r in rows]


def _share(value: float | None) -> str | None:
    """A share as the pages write one: 97.2% (None: an empty cell)."""
    return None if value is None else f"{100 * value:.1f}%"


def _figures_table(rows: list[Summary]) -> list[dict[str, Any]]:
    """engine.sessions.across.session_figures with the list's column names and units: "peak" and
    "% of window 13.8", not "peak_tokens" and "peak_fraction 0.1383"."""
    return [{"title": f["title"] or "", "steps": f["steps"], "peak": f["peak_tokens"], "compactions": f["compactions"],
             "cost": _money(f["dollars"]),
             "% of window": None if f["peak_fraction"] is None else round(100 * f["peak_fraction"], 1),
             "overflows": f["overflows"], "window": f["window_tokens"], "cache hit rate": _share(f["hit_rate"]),
             "agent": f["agent"], "model": f["model"] or "", "project": f["project"] or "", "id": f["id"]}
            for f in session_figures(rows)]


def _policies_table(rows: list[Any]) -> list[dict[str, Any]]:
    """The policies compared, in the words of the Config page's policies table (pages/config.py): the verdict's
    star, the figures and what the compactions kept first (POLICY_COLUMNS)."""
    return [{"policy": r.policy, "best": "★" if r.best else "", "peak": r.peak_tokens, "compactions": r.compactions,
             "cost": _money(r.dollars), "facts kept": _share(r.survival), "needle retention": _share(r.retention),
             "tokens saved": r.tokens_saved, "saved per compaction": r.saved_per_compaction}
            for r in rows]


HEADER_PX = 104
# At 1024 px (a projector) the main column is 564 px wide (1024 - the 300 px sidebar - 2 × 80 px padding) and the
# row checkboxes take ~33: the session, its steps, peak, compactions and cost come first, in widths that fit
# there with ~15 px for a scrollbar (516 px, tests/ui/test_sessions_1024.py); the other columns follow and show at
# 1440 px. The title was "medium" (200 px) after seven columns: "cost" was off-screen at 1024. A selected row shows
# its whole title. Titles run to 80 characters (engine.thread.model.TITLE_CHARS, ~480 px): the ~30 px the other
# columns could spare would show five more letters, so the title stays 144 px and its help says how to read it
# whole. A double-clicked cell of a read-only st.dataframe opens over the table with its whole text (Streamlit 1.67,
# seen in Chromium at 1024 px; it selects no row); a cell has no hover tooltip (only errors have one), and "select
# the row" read nothing in the "Across sessions" tables (their selection picks sessions, no title is shown).
TITLE_HELP = "the session's title: double-click it to read all of it"
COLUMNS = {"live": st.column_config.TextColumn("live", width=44, help="written to in the last two minutes"),
           "title": st.column_config.TextColumn("session", width=144, help=TITLE_HELP),
           "steps": st.column_config.NumberColumn(format="localized", width=56, help="the model calls recorded"),
           "peak": st.column_config.NumberColumn(format="localized", width=76,
                                                 help="the largest request the provider recorded"),
           # wide enough for their headers ("small" is 75 px: "% of windo…", "compactio…" at every width)
           "compactions": st.column_config.NumberColumn(width=HEADER_PX, help="the agent's own compactions"),
           "cost": st.column_config.TextColumn(width=88),  # "$0.000018", "$1,234.56" whole
           "% of window": st.column_config.NumberColumn(format="%.1f", width=HEADER_PX,
                                                        help="the peak as a share of the model's context window"),
           "agent": st.column_config.TextColumn(width=96),
           "modified": st.column_config.TextColumn(width=120),  # "2026-12-05 08:10" whole
           "project": st.column_config.TextColumn(width="medium")}
FIGURE_COLUMNS = {**{k: v for k, v in COLUMNS.items() if k != "live"},
                  # no row checkboxes nor "live" in this one: the title has their room
                  "title": st.column_config.TextColumn("session", width=200, help=TITLE_HELP),
                  "window": st.column_config.NumberColumn(format="localized", width=84,
                                                          help="the model's context window"),
                  "overflows": st.column_config.NumberColumn(width=HEADER_PX,
                                                             help="recorded requests over the window"),
                  "cache hit rate": st.column_config.TextColumn(width=HEADER_PX + 16)}
# the policy names run to "anthropic-compaction"; "facts kept" is what each compaction's removed history kept
# (the caption of the Config page's policies table), right after the cost
POLICY_COLUMNS = {"policy": st.column_config.TextColumn(width=120),
                  "best": st.column_config.TextColumn(width=44, help="the most tokens saved per compaction"),
                  "peak": COLUMNS["peak"], "compactions": COLUMNS["compactions"], "cost": COLUMNS["cost"],
                  "facts kept": st.column_config.TextColumn(
                      width=80, help="what each compaction kept of the history it removed (paths, commands, "
                                     "numbers, errors, identifiers, decisions)"),
                  "needle retention": st.column_config.TextColumn(
                      width=120, help="facts picked from the sessions, tracked in each view"),
                  "tokens saved": st.column_config.NumberColumn(format="localized", width=100),
                  "saved per compaction": st.column_config.NumberColumn(format="localized", width=150)}
# the dataframe's toolbar (search, download, full screen) shows above its top right corner on hover:
# a caption just above the table ran under it ("… 2 file(s) read no…", the walk-through)
TOOLBAR_GAP: Final = "small"  # Final: the literal st.space takes


def _listing() -> Any:
    placeholder = st.empty()

    def progress(done: int, total: int) -> None:
        if total > 3:
            placeholder.progress(done / total, text=f"Reading {done:,} of {total:,} changed session files…")

    result = server.rows(progress=progress)
    placeholder.empty()
    return result


def _save_to_library(row: Summary) -> None:
    sf = server.lookup(row.id)
    if sf is None:
        st.error("That session is no longer under the roots.")
        return
    try:
        data = read_under(sf.root, sf.rel, 512 * 1024 * 1024)
        companions = tuple((rel.rsplit("/", 1)[-1], read_under(sf.root, rel, 512 * 1024 * 1024)) for rel in sf.companions
                           if sf.agent in ("claude-code", "cline"))
        entry = session.save_upload(session.Upload(sf.rel.rsplit("/", 1)[-1], data, None, companions))
    except (ContextInspectorError, OSError) as exc:
        st.error("Could not save it in the library: " + escape_md(error_text(exc)))
        return
    st.success(f"Saved in the library as `library:{entry.id}`: it opens from there after the file is gone.")


def _open(row: Summary, follow: bool) -> None:
    session.select_thread(row.key)
    sessions_state.set_following(row.key if follow else None)
    session.go_to("pages/timeline.py")


def list_tab(result: Any) -> None:
    # the button's column held "Ref…" at 1024 px ([3, 2, 1]: 80 px); at the inputs' baseline, not their label's
    c1, c2, c3 = st.columns([5, 3, 2], vertical_alignment="bottom")
    text = c1.text_input("Search", key="ss_search", placeholder="title, project, model, path…")
    agents = c2.multiselect("Agent", AGENTS, key="ss_agents")
    if c3.button("Refresh", icon=":material/refresh:", help="walk the roots again now"):
        server.current(fresh=True)
        st.rerun()
    rows = search(result.rows, text, agents)
    st.caption(f"{len(rows):,} of {len(result.rows):,} sessions under "
               + ", ".join(_code(str(r)) for r in server.roots)
               + f" · newest first · {result.read_files:,} file(s) read now, {result.cached:,} unchanged"
               + (" · stopped walking: too many entries" if result.truncated else ""))
    st.space(TOOLBAR_GAP)
    if not rows:
        st.info("No session matches." if result.rows else "No Claude Code, Codex, Gemini CLI or Cline session under the roots.")
        return
    picked = st.dataframe(_rows_table(rows), hide_index=True, placeholder=EMPTY_CELL, on_select="rerun", selection_mode="single-row",
                          key="ss_table", height=table_height(len(rows)), column_config=COLUMNS)
    chosen = picked.selection.rows if picked is not None else []
    if not chosen:
        st.caption("Select a row to open it (nothing is copied into the library unless you save it).")
    else:
        row = rows[chosen[0]]
        st.subheader(row.title or row.id)
        st.caption(f"{row.agent} · {_code(row.path)} under {_code(row.root)} · {row.size_bytes:,} bytes · "
                   f"link key {_code(row.key)}")
        a, b, c = st.columns(3)
        a.button("Open", icon=":material/open_in_new:", on_click=_open, args=(row, False), key="ss_open",
                 help="open it on every page (read from where it is; not copied)")
        b.button("Open and follow live", icon=":material/radio_button_checked:", on_click=_open, args=(row, True),
                 key="ss_follow", help="the pages update as the agent appends lines")
        if c.button("Save to library", icon=":material/bookmark_add:", key="ss_save"):
            _save_to_library(row)
    if result.refused:
        with st.expander(f"Refused ({len(result.refused):,})"):
            st.caption("Never read: outside a root through a symlink, or not a regular file (SECURITY.md).")
            table([{"path": p, "reason": why} for p, why in result.refused])


def across_tab(result: Any) -> None:
    rows = search(result.rows, st.session_state.get("ss_search", ""), st.session_state.get("ss_agents", []))
    if not rows:
        st.info("No session to compare.")
        return
    st.caption("Select the sessions to look at together (the search and agent filter of the list apply).")
    st.space(TOOLBAR_GAP)
    picked = st.dataframe(_rows_table(rows), hide_index=True, placeholder=EMPTY_CELL, on_select="rerun", selection_mode="multi-row",
                          key="ss_multi", height=table_height(len(rows), 12), column_config=COLUMNS)
    chosen = [rows[i] for i in (picked.selection.rows if picked is not None else [])] or rows
    total = totals(chosen)
    m = st.columns(5)
    m[0].metric("sessions", f"{total['sessions']:,}", help="the selected rows, or all shown when none is selected")
    m[1].metric("overflowed", f"{total['overflowed']:,}", help="sessions with a recorded request over the window")
    m[2].metric("compacted", f"{total['compacted']:,}", help=f"{total['compactions']:,} compactions in all")
    m[3].metric("cost", _money(total["dollars"]), help=f"{total['unpriced']} unpriced (model not in the price table)")
    m[4].metric("cache hit rate", "n/a" if total["hit_rate"] is None else f"{100 * total['hit_rate']:.1f}%")
    st.space(TOOLBAR_GAP)  # the table's toolbar covered the last metric ("97.2%") at 1024 px
    st.dataframe(_figures_table(chosen), hide_index=True, placeholder=EMPTY_CELL, key="ss_figures",
                 height=table_height(len(chosen), 10), column_config=FIGURE_COLUMNS)
    st.subheader("Compare policies on these sessions")
    options = [p for p in PRESETS if p != "as-recorded"]
    policies = st.multiselect("Policies", options, default=[p for p in DEFAULT_POLICIES if p in options], key="ss_policies",
                              help="each session replayed with each agent's own compaction (or framework preset)")
    ray_ok = importlib.util.find_spec("ray") is not None
    executor = "ray" if ray_ok and len(chosen) >= RAY_SESSIONS else "process"
    st.caption(f"{plural(len(chosen), 'session')} × {plural(len(policies), 'policy', 'policies')} on the {executor} executor"
               + (f" (Ray above {RAY_SESSIONS} sessions)" if ray_ok else ""))
    key = ("ss_compare", tuple(r.id for r in chosen), tuple(policies))
    if st.button("Compare", icon=":material/play_arrow:", disabled=not policies, key="ss_compare_go"):
        _compare(chosen, policies, executor, key)
    outcome = st.session_state.get("ss_compare_result")
    if outcome is not None and outcome[0] == key:
        rows_out, text = outcome[1], outcome[2]
        st.success(text)
        st.space(TOOLBAR_GAP)
        st.dataframe(_policies_table(rows_out), hide_index=True, placeholder=EMPTY_CELL, key="ss_policies_table",
                     height=table_height(len(rows_out)), column_config=POLICY_COLUMNS)


def _compare(chosen: list[Summary], policies: list[str], executor: str, key: tuple[Any, ...]) -> None:
    from engine.config.schema import preset
    from engine.evals.sweep import sweep

    bar = st.progress(0.0, text="Reading the sessions…")
    threads = []
    for i, row in enumerate(chosen, start=1):
        sf = server.lookup(row.id)
        thread = server.thread(sf) if sf is not None else None
        if thread is not None:
            threads.append(thread)
        bar.progress(i / len(chosen) * 0.2, text=f"Reading the sessions… {i}/{len(chosen)}")

    def progress(done: int, total: int) -> None:
        bar.progress(0.2 + 0.8 * done / max(total, 1), text=f"Replaying: {done:,} of {total:,} replays")

    try:
        result = sweep(threads, session.runnable_config(preset(policies[0])), {"preset": list(policies)},
                       executor=executor, progress=progress)
    except ContextInspectorError as exc:
        bar.empty()
        st.error("The comparison failed: " + escape_md(error_text(exc)))
        return
    bar.empty()
    rows = policy_table(result)
    st.session_state["ss_compare_result"] = (key, rows, verdict(rows, len(threads)))


def followed_panel() -> None:
    key = sessions_state.following()
    if not key:
        return
    sf = server.lookup(key.split(":", 1)[1])
    if sf is None:
        return
    entry = server.poll(sf)
    if entry.thread is None:
        return
    g = gauge(entry.thread, config=st.session_state.get("config"))
    st.info(f"Following **{escape_md(entry.thread.title or sf.rel)}**: {g.steps:,} steps, context "
            f"{g.context_tokens or 0:,} of {g.window_tokens:,}; {escape_md(g.threshold_label)}"
            + ("" if g.calls_left is None else f"; about {g.calls_left:,} call(s) left at the recent growth"))


followed_panel()
try:
    listed = _listing()
except ContextInspectorError as exc:
    st.error(escape_md(error_text(exc)))
    st.stop()
tab_list, tab_across = st.tabs(["Sessions", "Across sessions"])
with tab_list:
    list_tab(listed)
with tab_across:
    across_tab(listed)
