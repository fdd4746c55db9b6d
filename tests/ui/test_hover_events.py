"""The Timeline's per-step hover names each event it counts (it said "2 event(s)" and named one, or none)."""

from __future__ import annotations

import html
import json
import re

import pytest

from engine.config.schema import preset
from engine.run.replay import replay
from engine.thread.events import Event
from engine.tokens.counters import get_counter
from tests.ui.builders import HOSTILE, build_thread
from ui.figures import timeline_figure

COUNTER = get_counter("approximate")


def hover_texts(run) -> list[str]:  # noqa: ANN001
    """Each step's hovertext, as the browser gets it (the figure's JSON)."""
    spec = json.loads(timeline_figure(run).to_json())
    hit = spec["data"][-1]
    assert hit["type"] == "heatmap"
    return list(hit["hovertext"][0])


def named(text: str) -> tuple[int, list[str]]:
    """The step's "N event(s)" count and the event lines after it (each "· …")."""
    lines = text.split("<br>")
    (at,) = [i for i, line in enumerate(lines) if re.fullmatch(r"\d+ event\(s\)", line)]
    names = []
    for line in lines[at + 1:]:
        if not line.startswith("· "):
            break
        names.append(line[2:])
    return int(lines[at].split()[0]), names


def listed(names: list[str]) -> int:
    """How many events the lines account for: one a name, N for "and N more"."""
    more = re.fullmatch(r"and (\d+) more", names[-1]) if names else None
    return len(names) - 1 + int(more.group(1)) if more else len(names)


@pytest.fixture(scope="module")
def run():  # noqa: ANN201
    r = replay(build_thread(10, result_words=60), preset("stress"), token_counter=COUNTER, layers=[])
    r.steps[3].events.append(Event("summarization", "summarize", 3, 10_820, 2_245, message="summarized 50 messages"))
    r.steps[3].events.append(Event("todo", "reminder", 3, 2_245, 2_406, message="todo list no longer visible"))
    r.steps[5].events.extend(Event("filesystem", "offload", 5, 900, 100, message=f"offload {k}") for k in range(7))
    r.steps[7].events.append(Event("summarization", "summarize", 7, 900, 200, message=HOSTILE + " " + "x" * 500))
    return r


def test_a_step_with_two_events_names_both(run) -> None:  # noqa: ANN001
    count, names = named(hover_texts(run)[3])
    assert count == 2 and len(names) == 2
    assert names[0].startswith("summarization · summarize: summarized 50 messages")
    assert "10,820 → 2,245" in names[0]
    assert names[1].startswith("todo · reminder: todo list no longer visible")


def test_many_events_name_a_few_and_count_the_rest(run) -> None:  # noqa: ANN001
    count, names = named(hover_texts(run)[5])
    assert count == 7 and listed(names) == 7
    assert len(names) <= 5 and names[-1] == f"and {7 - (len(names) - 1)} more"
    assert all(n.startswith("filesystem · offload: offload ") for n in names[:-1])


def test_every_step_s_names_add_up_to_its_count(run) -> None:  # noqa: ANN001
    texts = hover_texts(run)
    for i, step in enumerate(run.steps):
        if step.events:
            count, names = named(texts[i])
            assert count == len(step.events) == listed(names), (i, texts[i])
        else:  # no event text at a step without events: the figure stays small
            assert "event(s)" not in texts[i] and "· " not in texts[i]


def test_an_event_message_is_clipped_and_stays_text(run) -> None:  # noqa: ANN001
    _, (name,) = named(hover_texts(run)[7])
    assert "<" not in name and "&lt;script&gt;" in name  # escaped: plotly renders a subset of HTML
    assert len(html.unescape(name)) < 120 and "…" in name and "900 → 200" in name


def test_a_recorded_compaction_is_named() -> None:
    """A real Claude Code session (as recorded): the compaction's step said "1 event(s)" and nothing more."""
    r = replay(build_thread(10, result_words=60, recorded_compaction_at=8), preset("as-recorded"),
               token_counter=COUNTER)
    (i,) = [i for i, s in enumerate(r.steps) if any(e.layer == "recorded" for e in s.events)]
    count, names = named(hover_texts(r)[i])
    assert count == 1 and len(names) == 1 and names[0].startswith("recorded · compaction")
