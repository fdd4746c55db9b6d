"""The Layers page's data: offloaded files and their stubs, sub-agents.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from functools import lru_cache
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage

from engine.config.presets import RECORDED_PRESET, default_preset_name
from engine.config.schema import preset
from engine.run.run import Run
from engine.thread.events import Event
from engine.thread.kinds import message_kind
from engine.thread.model import Thread
from engine.tokens.content import message_text
from engine.tokens.counters import TokenCounter
from engine.views.timeline import events_of


# -- layers ----------------------------------------------------------------------------------
@lru_cache(maxsize=512)
def _text_tokens(counter: TokenCounter, text: str) -> int:
    # history files reach hundreds of kB; pages ask for their size on every rerun
    return counter.count_text(text)


_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that reads digit runs as numbers: `call-9` before `call-10` (text order puts it after)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(text) if part)


def file_rows(run: Run) -> list[dict[str, Any]]:
    """The virtual filesystem: path, size, tokens, the step and layer that wrote each file, paths in
    natural order (`/large_tool_results/call-9` before `call-10`)."""
    # counters hash by identity; mypy cannot see that a Protocol type is Hashable
    counter = cast(Hashable, run.counter)
    entries = sorted(run.files.entries(), key=lambda e: natural_key(e.path))
    return [{"path": e.path, "chars": e.size_chars, "tokens": _text_tokens(counter, e.content), "step": e.step,
             "layer": e.layer, "source_id": e.source_id} for e in entries]


def stub_for(run: Run, path: str, source_id: str | None) -> BaseMessage | None:
    """The stub message that replaced an offloaded result (searched in the last state and view)."""
    if not run.steps:
        return None
    pool = [*run.final_state, *run.steps[-1].view]
    for m in pool:
        if message_kind(m) != "stub":
            continue
        if source_id and source_id in (m.id, getattr(m, "tool_call_id", None)):
            return m
        if path in message_text(m):
            return m
    return None


SUBAGENT_INSIDE = "subagent_inside"  # Run.derived key: tool_call_id -> (steps, sent, peak)


def subagent_inside(run: Run, call_id: str, inner: Thread | None, event: Event | None) -> tuple[int | None, int | None, int | None]:
    """(steps, tokens sent over all its calls, peak sent) of one sub-agent, kept in `run.derived`.

    A transcript that recorded what it sent opens as recorded (`default_preset_name`; the dashboard's
    `select_thread` opens a sub-agent on its own defaults when the parent is on its own): its as-recorded
    replay is measured, so the row holds the steps, sum and peak the opened sub-agent shows (the provider's
    numbers, not our count of a transcript that never recorded its system prompt and tools). Else the
    sub-agent layer's event (only when the layer is in the run: the as-recorded preset's only layer is
    `recorded`, so a recorded session had none and the columns were empty); else our count of the
    transcript (`subagent_cost`, what the layer would have said).
    """
    memo: dict[str, tuple[int | None, int | None, int | None]] = run.derived.setdefault(SUBAGENT_INSIDE, {})
    if call_id in memo:
        return memo[call_id]
    found: tuple[int | None, int | None, int | None] = (None, None, None)
    if inner is not None and inner.messages and default_preset_name(inner) == RECORDED_PRESET:
        from engine.run.replay import replay  # the view module loads without the driver until asked

        opened = replay(inner, preset(RECORDED_PRESET))
        found = (len(opened.steps), sum(s.view_tokens for s in opened.steps), opened.peak_view_tokens())
    elif event is not None:
        p = event.payload
        found = (p.get("inside_steps"), p.get("inside_tokens"), p.get("inside_peak_tokens"))
    elif inner is not None:
        from engine.tokens.subagent_cost import subagent_cost

        cost = subagent_cost(inner, run.counter)
        found = (cost.inside_steps, cost.inside_tokens, cost.inside_peak_tokens)
    memo[call_id] = found
    return found


def subagent_rows(run: Run) -> list[dict[str, Any]]:
    """Per task call: tokens spent inside the sub-agent vs tokens returned to the parent.

    Inside: the steps, the tokens the sub-agent sent over all its model calls and its largest call
    (`subagent_inside`: what the opened sub-agent shows when it recorded what it sent); the transcript's
    own size beside them.
    """
    names = set(run.config.subagents.task_tool_names)
    results = run.thread.tool_results()
    measured = {e.payload.get("tool_call_id"): e for e in events_of(run, "subagents") if e.kind == "subagent"}
    rows = []
    for m in run.thread.messages:
        if not isinstance(m, AIMessage):
            continue
        for tc in m.tool_calls:
            call_id = tc.get("id") or ""
            inner = run.thread.subagents.get(call_id)
            if tc.get("name") not in names and inner is None:
                continue
            result = results.get(call_id)
            args = tc.get("args") or {}
            steps, sent, peak = subagent_inside(run, call_id, inner, measured.get(call_id))
            rows.append({
                "tool_call_id": call_id,
                "subagent": str(args.get("subagent_type") or args.get("agent") or tc.get("name")),
                "description": str(args.get("description") or args.get("prompt") or "")[:200],
                "inside steps": steps,
                "transcript tokens": sum(run.counter.count_message(x) for x in inner.messages) if inner else None,
                "sent inside (all its calls)": sent,
                "peak inside": peak,
                "returned tokens": run.counter.count_message(result) if result is not None else None,
            })
    return rows
