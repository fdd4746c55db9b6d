"""What an OpenHands V1 conversation records about its agent: the LLM, its window and its condenser.

The software-agent-sdk persists a conversation as `base_state.json` (the `ConversationState` model:
`agent {kind, llm {model, max_input_tokens, max_output_tokens, …}, condenser {kind, max_size,
max_tokens, keep_first, llm}, …}`, `openhands-sdk/openhands/sdk/conversation/state.py`,
`persistence_const.py` BASE_STATE) next to its events; an exported conversation carries it as
`baseState` in `trajectory.json` beside `events.json`, and a `ConversationStateUpdateEvent` with key
`full_state` carries it inside the stream. The condenser's defaults are `LLMSummarizingCondenser`'s
(`openhands-sdk/openhands/sdk/context/condenser/llm_summarizing_condenser.py`: `max_size` 120,
`max_tokens` None, `keep_first` 4); a `NoOpCondenser` (or none) never condenses.

A `CondensationRequest` event (the agent raises one when the provider rejects a request as too long
for the window) makes the next `should_condense` true whatever the size, and that condensation keeps
half the view (`get_condensation`: target `len(view) // 2`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from engine.base.files import RefusedFile, read_regular

STATE_KEYS = ("baseState", "base_state")
# the files beside an events file that hold the state: an export's, the SDK's own
STATE_FILES = ("trajectory.json", "base_state.json")
EVENTS_FILES = ("events.json",)
MAX_STATE_BYTES = 64 * 1024 * 1024
CONDENSERS = ("LLMSummarizingCondenser", "NoOpCondenser")


def state_of(doc: Any) -> dict[str, Any] | None:
    """The ConversationState inside a document: under `baseState`/`base_state`, or the document itself."""
    if not isinstance(doc, dict):
        return None
    for key in STATE_KEYS:
        if isinstance(doc.get(key), dict):
            return doc[key]
    return doc if isinstance(doc.get("agent"), dict) else None


def full_state_of(events: Sequence[tuple[dict[str, Any], str]]) -> dict[str, Any] | None:
    """The last `full_state` snapshot a stream carries (ConversationStateUpdateEvent)."""
    found = None
    for event, _at in events:
        if event.get("kind") == "ConversationStateUpdateEvent" and event.get("key") == "full_state" \
                and isinstance(event.get("value"), dict):
            found = event["value"]
    return found


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def agent_settings(state: dict[str, Any] | None) -> dict[str, Any]:
    """`{model, window, condenser}` from a ConversationState (keys left out when it does not say)."""
    agent = state.get("agent") if isinstance(state, dict) else None
    if not isinstance(agent, dict):
        return {}
    out: dict[str, Any] = {}
    llm = agent.get("llm")
    if isinstance(llm, dict):
        if isinstance(llm.get("model"), str) and llm["model"]:
            out["model"] = llm["model"]
        if _int(llm.get("max_input_tokens")) is not None:
            out["window"] = llm["max_input_tokens"]
    condenser = agent.get("condenser")
    if condenser is None and "condenser" in agent:
        out["condenser"] = {"kind": "NoOpCondenser"}
    elif isinstance(condenser, dict):
        kind = str(condenser.get("kind") or "LLMSummarizingCondenser")
        settings: dict[str, Any] = {"kind": kind}
        for key in ("max_size", "max_tokens", "keep_first"):
            value = condenser.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                settings[key] = value
        out["condenser"] = settings
    return out


def sibling_state(path: Path | None) -> tuple[dict[str, Any] | None, str | None]:
    """The state file beside an events file (trajectory.json, base_state.json), and its name."""
    if path is None:
        return None, None
    for name in STATE_FILES:
        candidate = path.parent / name
        if candidate == path or not candidate.is_file():
            continue
        try:
            doc = json.loads(read_regular(candidate, MAX_STATE_BYTES).decode("utf-8"))
        except (OSError, ValueError, UnicodeDecodeError, RefusedFile, RecursionError):
            continue
        state = state_of(doc)
        if state is not None:
            return state, name
    return None, None


def sibling_events(path: Path | None) -> Path | None:
    """The events file beside a state file (an export's events.json)."""
    if path is None:
        return None
    return next((path.parent / name for name in EVENTS_FILES if (path.parent / name).is_file()
                 and path.parent / name != path), None)


def request_steps(events: Sequence[tuple[dict[str, Any], str]], before: Sequence[int],
                  messages: Sequence[BaseMessage]) -> list[int]:
    """The steps (model calls) each recorded `CondensationRequest` precedes: the next AI message's."""
    ai_before = [0]
    for m in messages:
        ai_before.append(ai_before[-1] + isinstance(m, AIMessage))
    steps = []
    for p, (event, _at) in enumerate(events):
        if event.get("kind") == "CondensationRequest":
            step = ai_before[before[p]] if p < len(before) else ai_before[-1]
            if step < ai_before[-1] and step not in steps:
                steps.append(step)
    return steps


__all__ = ["CONDENSERS", "STATE_FILES", "agent_settings", "full_state_of", "request_steps", "sibling_events",
           "sibling_state", "state_of"]
