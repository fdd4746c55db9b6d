"""A user's own middleware typed into the Config page: its derived events on the Timeline, Step and Layers pages."""

from __future__ import annotations

import re
from pathlib import Path

from langchain_core.messages import ToolMessage

from engine.base.wording import plural
from engine.formats import load_thread
from engine.run.replay import replay
from tests.ui.conftest import figure, layer_event_counts
from ui.text import escape_md

YAML = """\
preset: langchain
middleware:
  - use: tests.layers.test_user_middleware:KeepRecentResults
    kwargs: {keep: 2, note: "(hidden by my middleware)"}
"""


def plain(elements) -> list[str]:  # noqa: ANN001
    return [re.sub(r"\\(.)", r"\1", e.value) for e in elements]


def _yaml_area(at):  # noqa: ANN001, ANN202
    return next(t for t in at.text_area if t.label.startswith("Config YAML"))


def test_a_custom_middleware_from_the_yaml_editor_shows_on_every_page(start, samples_dir: Path) -> None:  # noqa: ANN001
    at = start("pages/config.py", preset="langchain")
    assert any("import and run Python code on this server" in c for c in plain(at.caption))
    _yaml_area(at).set_value(YAML)
    at.button(key="yaml_apply").click().run()
    assert not at.exception and not at.error
    assert at.session_state["config"].middleware == ()  # Python code: applied once confirmed
    at.button(key="middleware_confirm").click().run()
    assert not at.exception and not at.error
    config = at.session_state["config"]
    assert [m.use for m in config.middleware] == ["tests.layers.test_user_middleware:KeepRecentResults"]

    # what the engine says, independently: every step whose state holds more than 2 tool results
    run = replay(load_thread(samples_dir / "a_demo.json"), config)
    events = [e for e in run.events if e.layer == "KeepRecentResults"]
    expected_steps = [s.index for s in run.steps if sum(isinstance(m, ToolMessage) for m in s.state) > 2]
    assert [e.step for e in events] == expected_steps and len(events) > 10
    first = events[0]
    assert first.payload["replaced_ids"] and first.tokens_after < first.tokens_before

    at.switch_page("pages/timeline.py").run()
    assert not at.exception
    assert layer_event_counts(at)["KeepRecentResults"] == len(events)
    # legend names wrap at 18 characters (ui/figures.py LABEL_LINE_CHARS): "KeepRecentResults<br>(42)"
    lane = next(t for t in figure(at)["data"]
                if str(t.get("name")).replace("<br>", " ") == f"KeepRecentResults ({len(events)})")
    assert lane["x"] == [e.step for e in events]
    assert lane["hovertext"][0] == (f"KeepRecentResults · edit_request: request: replaced "
                                    f"{plural(len(first.payload['replaced_ids']), 'message')} (tokens {first.tokens_before:,} → {first.tokens_after:,})")

    at.session_state["step"] = first.step
    at.switch_page("pages/step.py").run()
    assert not at.exception
    assert f"KeepRecentResults · edit_request — tokens {first.tokens_before:,} → {first.tokens_after:,}" in plain(at.info)
    at.button(key="step_expand_all").click().run()  # messages start closed (their bodies drawn once opened)
    assert "(hidden by my middleware)" in [c.value for c in at.code]  # the view the model got

    at.switch_page("pages/layers.py").run()
    assert not at.exception
    markdown = " ".join(plain(at.markdown))
    assert (f"Step {first.step} · edit_request · wrap_model_call — {first.tokens_before:,} → "
            f"{first.tokens_after:,} tokens") in markdown
    assert f"**replaced** :gray[{escape_md(first.payload['replaced_ids'][0], limit=80)}]" in [m.value for m in at.markdown]
    assert "(hidden by my middleware)" in [c.value for c in at.code]  # the message after the middleware
    assert len(at.selectbox(key="layers_middleware_event").options) == len(events)


def test_a_bad_middleware_in_the_yaml_editor_is_refused_and_the_run_kept(start) -> None:  # noqa: ANN001
    at = start("pages/config.py", preset="langchain")
    before = at.session_state["config"]
    _yaml_area(at).set_value("preset: langchain\nmiddleware:\n  - use: no_such_package:Thing\n")
    at.button(key="yaml_apply").click().run()
    assert not at.exception
    assert at.session_state["config"] == before
    assert plain(at.error) == ["Not applied; the previous run is kept. middleware.0.use: cannot import "
                               "'no_such_package' (ModuleNotFoundError: No module named 'no_such_package')"]
