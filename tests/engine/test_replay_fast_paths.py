"""The driver's and the trigger's fast paths against the slow ones they stand for."""

from __future__ import annotations

import random
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages

from engine.layers.thresholds import fired_clause, fraction_threshold
from engine.replay import replaced_history


def _messages(rng: random.Random, n: int, prefix: str) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for i in range(n):
        cls = rng.choice((HumanMessage, AIMessage, ToolMessage))
        kwargs: dict[str, Any] = {"tool_call_id": f"c{i}"} if cls is ToolMessage else {}
        out.append(cls(f"{prefix} {i}", id=f"{prefix}{rng.randint(0, n)}", **kwargs))
    return out


def test_a_remove_all_update_gives_add_messages_result_or_declines() -> None:
    rng = random.Random(5)
    answered = declined = 0
    for case in range(500):
        current = _messages(rng, rng.randint(0, 30), "s")
        rest = _messages(rng, rng.randint(0, 10), "n")
        new: list[Any] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *rest]
        roll = rng.random()
        if roll < 0.1:
            new.insert(rng.randint(1, len(new)), RemoveMessage(id=REMOVE_ALL_MESSAGES))  # a second marker
        elif roll < 0.2 and rest:
            rest[rng.randrange(len(rest))].id = None  # add_messages gives it an id
        elif roll < 0.3 and current:
            current[rng.randrange(len(current))].id = None
        elif roll < 0.4:
            new.append(AIMessageChunk("chunk", id="chunk"))  # converted by add_messages
        elif roll < 0.45:
            new = rest  # no marker
        got = replaced_history(current, new)
        if got is None:
            declined += 1
            continue
        answered += 1
        ids_before = [m.id for m in current]
        expected = add_messages(list(current), list(new))
        assert [m.id for m in current] == ids_before  # add_messages changed nothing in place either
        assert len(got) == len(expected) and all(a is b for a, b in zip(got, expected, strict=True)), case
    assert answered > 200 and declined > 100, (answered, declined)


def _reference_fired(clauses: Any, *, message_count: int, total_tokens: int, window: int | None,
                     reported_tokens: int | None) -> str | None:
    """The rule as LangChain writes it (langchain 1.5.2 `SummarizationMiddleware._should_summarize`)."""
    for clause in clauses:
        met = True
        for kind, value in clause:
            if kind == "messages":
                met = message_count >= value
            else:
                if kind == "tokens":
                    threshold = int(value)
                elif window is None:
                    met = False
                else:
                    threshold = fraction_threshold(window, float(value))
                if met:
                    met = total_tokens >= threshold or (reported_tokens is not None and reported_tokens >= threshold)
            if not met:
                break
        if met:
            return "&".join(f"{k}:{v}" for k, v in clause)
    return None


def test_fired_clause_is_the_rule() -> None:
    rng = random.Random(3)
    fired = 0
    for _ in range(3000):
        clauses = [tuple((rng.choice(("messages", "tokens", "fraction")),
                          rng.choice((1, 5, 50, 400, 0.5, 0.01)))
                         for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 3))]
        clauses = [tuple((k, int(v) if k != "fraction" else float(v)) for k, v in c) for c in clauses]
        kwargs: dict[str, Any] = {"message_count": rng.randint(0, 60), "total_tokens": rng.randint(0, 600),
                                  "window": rng.choice((None, 100, 1000)),
                                  "reported_tokens": rng.choice((None, 0, 30, 500))}
        expected = _reference_fired(clauses, **kwargs)
        assert fired_clause(clauses, **kwargs) == expected, (clauses, kwargs)
        fired += expected is not None
    assert 300 < fired < 2700, fired
