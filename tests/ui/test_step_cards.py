"""The Step page's cards (issue 35): a tool call and its result in one card, an edit as a diff of old ->
new text, thinking labelled as thinking, ANSI escapes stripped from what is shown."""

from __future__ import annotations

import json
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine.formats.native import dumps
from engine.thread.model import Thread
from engine.views.step import ViewEntry, display_text
from engine.views.step_page import cards, edit_diff

ESC = "\x1b"


def entry(position: int, role: str, *, calls: tuple[str, ...] = (), answers: str | None = None) -> ViewEntry:
    return ViewEntry(position, f"m{position}", role, "original", None, 1, "", tuple(("Read", "{}") for _ in calls),
                     answers, 0, (), call_ids=calls)


def test_a_call_and_its_results_share_a_card_and_an_orphan_result_has_its_own() -> None:
    view = [entry(0, "system"), entry(1, "human"), entry(2, "ai", calls=("c1", "c2")), entry(3, "tool", answers="c2"),
            entry(4, "tool", answers="c1"), entry(5, "tool", answers="gone"), entry(6, "ai")]
    assert [(c.head, c.results) for c in cards(view)] == [(0, ()), (1, ()), (2, ((0, 4), (1, 3))), (5, ()), (6, ())]


def test_edits_read_as_a_diff_of_old_and_new_text() -> None:
    edit = json.dumps({"file_path": "a.py", "old_string": "x = 1\ny = 2", "new_string": "x = 1\ny = 3"})
    assert edit_diff("Edit", edit) == ("--- a.py (before)\n+++ a.py (after)\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3")
    assert edit_diff("edit_file", edit) == edit_diff("Edit", edit) == edit_diff("replace", edit)
    multi = json.dumps({"file_path": "a.py", "edits": [{"old_string": "a", "new_string": "b"},
                                                       {"old_string": "c", "new_string": "d"}]})
    assert edit_diff("MultiEdit", multi).count("@@") == 4  # two hunks
    swe = json.dumps({"command": "str_replace", "path": "b.py", "old_str": "p", "new_str": "q"})
    assert edit_diff("str_replace_editor", swe).endswith("-p\n+q")
    assert edit_diff("str_replace_editor", json.dumps({"command": "view", "path": "b.py"})) is None
    assert edit_diff("Read", edit) is None and edit_diff("Edit", "not json") is None


def test_ansi_escapes_are_dropped_from_what_is_shown() -> None:
    assert display_text(f"<local-command-stdout>{ESC}[2mCompacted (ctrl+o){ESC}[22m</local-command-stdout>") == (
        "<local-command-stdout>Compacted (ctrl+o)</local-command-stdout>")
    assert display_text(f"{ESC}]0;title{ESC}\\done {ESC}[1;31mred{ESC}[0m") == "done red"


def _thread() -> Thread:
    edit = {"file_path": "/src/app.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}
    messages = [
        HumanMessage(f"turn debug off {ESC}[1mnow{ESC}[22m", id="h0"),
        AIMessage(content=[{"type": "thinking", "thinking": "The flag lives in app.py.", "signature": "s"},
                           {"type": "text", "text": "Editing app.py."}], id="a0",
                  tool_calls=[{"id": "call-1", "name": "Edit", "args": edit}]),
        ToolMessage("The file /src/app.py has been updated.", tool_call_id="call-1", name="Edit", id="t0"),
        AIMessage("Done.", id="a1"),
    ]
    return Thread("cards", messages, source_format="native", model="claude-sonnet-4-5")


def test_the_step_page_draws_a_call_its_diff_its_result_and_the_thinking(start, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    path = tmp_path / "cards.json"
    path.write_text(dumps(_thread()), encoding="utf-8")
    monkeypatch.setenv("CTXI_OPEN", str(path))
    at = start("pages/step.py", step="1")
    at.button(key="step_expand_all").click().run()
    labels = [e.label for e in at.expander if e.label.startswith("#")]
    assert len(labels) == 2 and "→ 1 result" in labels[1]  # the request, and the AI call with its result
    codes = [(c.language, c.value) for c in at.code]
    assert ("diff", "--- /src/app.py (before)\n+++ /src/app.py (after)\n@@ -1 +1 @@\n-DEBUG = True\n+DEBUG = False") in codes
    assert any(v == "The flag lives in app.py." for _, v in codes)  # the thinking, apart from the reply
    assert any(v == "Editing app.py." for _, v in codes)
    assert any(v == "The file /src/app.py has been updated." for _, v in codes)  # the result, in the same card
    assert any(m.value.startswith(":violet-badge[thinking]") for m in at.markdown)
    assert not any(ESC in v for _, v in codes) and any(v == "turn debug off now" for _, v in codes)
