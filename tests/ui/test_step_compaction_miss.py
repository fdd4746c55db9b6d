"""The Step page at a compaction step says what the aggregates charge it in the prompt cache.

The Timeline's Cost section (and Compare, the sweep) charge a compaction step its account's cache misses, what it
made the cache write again (engine.cost.run_cost's `lost_by_cause`). The Step page's bill said nothing at a compaction
step that read the whole cached prefix, and gave no figure at one that rewrote it. The demo thread under Deep Agents
with a 6,000-token trigger has both: steps 7 (rewrote) and 13 (read everything cached, then wrote its summary).
"""

from __future__ import annotations

import re

from engine.config.schema import preset
from engine.cost.run_cost import run_cost
from engine.cost.views import dollars
from engine.run.replay import replay
from tests.ui.builders import demo_thread

QUERY = {"preset": "deepagents", "cost.model": "claude-sonnet-4-5", "summarization.trigger": "tokens:6000"}


def _captions(at) -> str:  # noqa: ANN001
    return " ".join(re.sub(r"\\(.)", r"\1", c.value) for c in at.caption)


def _open_bill(start, step: int):  # noqa: ANN001, ANN202
    at = start("pages/step.py", step=str(step), **QUERY)
    at.session_state["step_bill"] = True  # the bill is a lazy expander: drawn only while open
    at.run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == [f"Step {step}"]
    return at


def _cost():  # noqa: ANN202
    config = preset("deepagents").with_overrides(["cost.model=claude-sonnet-4-5", "summarization.trigger=tokens:6000"])
    return run_cost(replay(demo_thread(), config))


def test_a_compaction_step_that_read_the_whole_prefix_shows_what_it_is_charged(start) -> None:  # noqa: ANN001
    cost = _cost()
    s = cost.steps[13]
    assert s.cause is None and s.cache.lost == 0 and s.charged_as == "compaction" and s.miss_tokens
    at = _open_bill(start, 13)
    text = _captions(at)
    assert "a compaction took effect at this step (summarization." in text
    assert f"it wrote {s.miss_tokens:,} tokens to the cache beyond the step's new messages" in text
    assert f"({dollars(s.miss_dollars)}, the cache misses in its net)" in text
    assert "counted under compaction in the run's cache misses" in text


def test_a_compaction_step_that_rewrote_the_prefix_shows_its_charge_not_just_words(start) -> None:  # noqa: ANN001
    cost = _cost()
    s = cost.steps[7]
    assert s.cause == "compaction" and s.charged_as == "compaction"
    at = _open_bill(start, 7)
    text = _captions(at)
    assert (f"{s.cache.lost:,} of the {s.cache.previous_cached:,} tokens the previous call cached were not read: "
            f"a compaction rewrote the history") in text
    assert (f"it wrote {s.miss_tokens:,} tokens to the cache in their place ({dollars(s.miss_dollars)}, "
            "the cache misses in its net)") in text
    assert "only what it sent in their place" not in text


def test_the_timelines_cache_tile_names_the_causes_the_step_page_charges(start) -> None:  # noqa: ANN001
    cost = _cost()
    charged = [s for s in cost.steps if s.charged_as == "compaction"]
    written = sum(s.miss_tokens or 0 for s in charged)
    at = start(**QUERY)
    at.session_state["timeline_cost"] = True  # the Cost section is a lazy expander
    at.run()
    assert not at.exception, at.exception
    [tile] = [m for m in at.metric if m.label == "Cache writes"]
    row = cost.totals()["lost_by_cause"]["compaction"]
    assert (f"compaction: {sum(s.cache.lost for s in charged):,} tokens not read, {written:,} written again "
            f"({dollars(row['dollars'])})") in tile.help
