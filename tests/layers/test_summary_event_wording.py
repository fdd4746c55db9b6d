"""A summarize event counts what it removed in words: "summarized 1 message", not "1 messages"."""

from __future__ import annotations

from pathlib import Path

from engine.config.schema import preset
from engine.formats import load_thread
from engine.run.replay import replay

SAMPLE = Path(__file__).resolve().parents[2] / "sample_threads" / "long-refactor.json"


def test_one_removed_message_is_singular() -> None:
    # Deep Agents with a 6,000-token trigger thrashes on this thread: some compactions remove one message
    config = preset("deepagents").with_overrides(["summarization.trigger=tokens:6000"])
    events = [e for e in replay(load_thread(SAMPLE), config).events if (e.layer, e.kind) == ("summarization", "summarize")]
    single = [e for e in events if len(e.payload["removed_ids"]) == 1]
    many = [e for e in events if len(e.payload["removed_ids"]) > 1]
    assert single and many
    assert all("summarized 1 message," in e.message for e in single)
    assert all(f"summarized {len(e.payload['removed_ids']):,} messages," in e.message for e in many)
