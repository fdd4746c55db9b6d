"""Hostile YAML and link values on the dashboard: one line, no traceback, on every page (#39.2, #39.3).

A link whose allowed setting held a lone surrogate (`input_context.custom_prompt="\\ud800"`) raised
UnicodeEncodeError from `ui/session.py` `sync_url` on every page of that session; YAML nested 500 deep in
the Config page's editor or an upload showed a RecursionError traceback.
"""

from __future__ import annotations

import re

import pytest

PAGES = ["pages/threads.py", "pages/timeline.py", "pages/step.py", "pages/layers.py", "pages/config.py",
         "pages/evals.py", "pages/compare.py", "pages/workshop.py"]


def plain(elements) -> list[str]:  # noqa: ANN001
    return [re.sub(r"\\(.)", r"\1", e.value) for e in elements]


@pytest.mark.parametrize("key,value", [
    ("input_context.custom_prompt", '"\\ud800"'),
    ("summarization.summary_prompt", '"x \\udfff"'),
    ("memory.facts", '[{content: "\\ud800"}]'),
])
def test_a_link_value_that_is_no_text_is_one_notice_on_every_page(start, key: str, value: str) -> None:  # noqa: ANN001
    at = start(thread="sample:a_demo", preset="stress", **{key: value})
    notices = plain(at.sidebar.warning)
    assert len(notices) == 1 and notices[0].startswith(f"Ignored a setting from the link: {key}: ")
    assert key not in dict(at.query_params)
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)


def deep(levels: int) -> str:
    return "preset: stress\nmemory: {facts: " + "[" * levels + "]" * levels + "}\n"


def test_deep_yaml_in_the_editor_is_one_line_and_keeps_the_run(start) -> None:  # noqa: ANN001
    at = start("pages/config.py", preset="stress", tab="YAML")
    before = at.session_state["config"]
    next(t for t in at.text_area if t.label.startswith("Config YAML")).set_value(deep(600))
    at.button(key="yaml_apply").click().run()
    assert not at.exception
    assert plain(at.error) == ["Not applied; the previous run is kept. YAML editor: line 2: YAML nested more than 100 "
                               "levels deep (a config is a few levels deep)"]
    assert at.session_state["config"] == before


def test_deep_yaml_uploaded_is_one_line(start) -> None:  # noqa: ANN001
    at = start("pages/config.py", preset="stress", tab="YAML")
    at.file_uploader(key="yaml_upload").upload("deep.yaml", deep(600).encode(), "application/yaml").run()
    assert not at.exception
    # the file is named once (it read "deep.yaml not applied: deep.yaml: line 2: …")
    assert plain(at.error) == ["deep.yaml not applied: line 2: YAML nested more than 100 levels deep (a "
                               "config is a few levels deep)"]


def test_deep_yaml_in_a_form_field_is_one_line(start) -> None:  # noqa: ANN001
    at = start("pages/config.py", preset="stress")
    before = at.session_state["config"]
    facts = next(t for t in at.text_area if str(t.key).endswith("_memory.facts"))
    facts.set_value("[" * 600 + "]" * 600)
    next(b for b in at.button if b.label == "Apply and re-run").click().run()
    assert not at.exception
    assert at.session_state["config"] == before
    message = "memory.facts: line 1: YAML nested more than 100 levels deep (a config is a few levels deep)"
    assert plain(at.error) == [f"Not applied — {message}", message]
