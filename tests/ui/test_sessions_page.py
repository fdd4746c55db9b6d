"""The Sessions page through AppTest: listed from the server's roots only, opened where it is, followed live."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.workspace.disk_sessions import discover, resolve_roots
from engine.workspace.library import Library
from tests.sessions import trees


@pytest.fixture
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "root"
    trees.make_all(root)
    monkeypatch.setenv("CTXI_SESSIONS", str(root))
    return root


def test_without_roots_the_page_says_how_to_give_them(start, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.delenv("CTXI_SESSIONS", raising=False)
    at = start("pages/sessions.py")
    assert [t.value for t in at.title] == ["Sessions"]
    assert "ctxi ui --sessions" in at.info[0].value


def test_the_sessions_under_the_roots_are_listed_newest_first_and_searchable(start, roots: Path) -> None:  # noqa: ANN001
    at = start("pages/sessions.py")
    table = at.dataframe[0].value
    assert sorted(table["title"]) == sorted(["Flaky IO test, fixed", "Old summary title", "Fix the failing test",
                                             "fix the test", "Reading two files", "Fix the bug in app.py"])
    assert list(table["steps"]) == sorted(table["steps"], key=lambda _: 0)  # every row has a count
    at.text_input(key="ss_search").set_value("flaky").run()
    assert list(at.dataframe[0].value["title"]) == ["Flaky IO test, fixed"]
    assert "1 of 6 sessions under" in at.caption[0].value


def test_a_session_opens_by_its_id_where_it_is_and_follows_appended_lines(start, roots: Path, workspace: Path) -> None:  # noqa: ANN001
    listing = discover(resolve_roots([roots]))
    sf = next(s for s in listing.sessions if s.rel.endswith(f"{trees.CC_SESSION}.jsonl"))
    at = start(thread=sf.key)
    assert at.session_state["thread_key"] == sf.key
    assert at.metric[0].value == "2"  # steps
    assert Library(workspace).entries() == []  # opening copies nothing into the library
    at.session_state["follow_session"] = sf.key
    at.run()
    assert not at.exception
    extra = trees.cc_assistant("a9", "a3", "msg_9", [{"type": "text", "text": "More."}], trees.cc_usage(1, 0, 9000, 2))
    with sf.path.open("ab") as fh:
        fh.write(trees.jsonl([extra]))
    at.run()
    assert not at.exception
    assert at.metric[0].value == "3"
    assert any("Following live" in m.value for m in at.sidebar.markdown)


def test_a_link_to_an_unlisted_session_opens_nothing(start, roots: Path, tmp_path: Path) -> None:  # noqa: ANN001
    from engine.workspace.disk_sessions import session_id

    outside = tmp_path / "outside"
    trees.make_claude_code(outside)
    unlisted = session_id(outside.resolve(), f".claude/projects/-home-u-proj/{trees.CC_SESSION}.jsonl")
    for key in (f"session:{unlisted}", "session:../../outside", f"session:{outside}"):
        at = start(thread=key)
        assert at.session_state["thread_key"] == "sample:a_demo"
        assert any("from the link is not available here" in w.value for w in at.sidebar.warning)


def test_the_list_shows_whole_headers_and_writes_money_one_way(start, roots: Path) -> None:  # noqa: ANN001
    """The walk-through found "% of windo…" and "compactio…" clipped at every width (Streamlit's "small" is
    75 px) and the cost written "$0.00" for a session costing under a cent (the pages' format keeps two digits)."""
    import json

    at = start("pages/sessions.py")
    columns = json.loads(at.dataframe[0].proto.columns)
    for header in ("% of window", "compactions"):
        width = columns[header]["width"]
        assert isinstance(width, int) and width >= 7 * len(header) + 24, (header, width)  # ~7 px a character
    costs = list(at.dataframe[0].value["cost"])
    # sessions under a cent keep two digits (they read "$0.00" before); a model without a price is n/a
    assert sorted(costs) == sorted(["$0.05", "n/a", "$0.0014", "$0.0014", "$0.000018", "$0.02"])


# The tables put the figures where they are seen: the walk-through found the list and both "Across sessions"
# tables ending at "compacti…" at 1440 px (the title column took most of the width) and an unlabeled column
# beside the row checkboxes (the "live" mark's empty header). At 1024 px "cost" was still off-screen: the title,
# now narrower, comes first with the figures right after it (tests/ui/test_sessions_1024.py).
FIGURES = ["steps", "peak", "compactions", "cost", "% of window"]


def test_the_figures_come_before_the_long_text_and_the_title_is_not_the_widest_column(start, roots: Path) -> None:  # noqa: ANN001
    at = start("pages/sessions.py")
    listed, across, figures = at.dataframe
    for frame in (listed, across, figures):
        columns = list(frame.value.columns)
        assert all(columns.index(c) < columns.index(text) for c in FIGURES for text in ("agent", "model", "project")), columns
        config = json.loads(frame.proto.columns)
        assert config["title"]["width"] <= 200
        assert all(header for header in (config.get(c, {}).get("label", c) for c in columns)), config
    assert list(listed.value.columns)[:7] == ["live", "title", *FIGURES]
    assert list(figures.value.columns)[:6] == ["title", *FIGURES]
    live = json.loads(listed.proto.columns)["live"]
    assert live["label"] == "live" and isinstance(live["width"], int) and live["width"] >= 40
