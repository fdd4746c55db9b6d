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

from engine.layers.thresholds import fired_clause
from engine.run.replay import replaced_history


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


def _langchain_fires(clauses: Any, *, message_count: int, total_tokens: int, window: int | None,
                     reported_tokens: int | None) -> bool:
    """LangChain's own answer: `SummarizationMiddleware._should_summarize` (langchain 1.5.2) on a
    state of `message_count` messages whose last AI message reports `reported_tokens`, with a model
    whose profile gives `window` (None: the profile is gone at run time, as LangChain allows)."""
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    model = FakeListChatModel(responses=["summary"], profile={"max_input_tokens": window or 1000})
    middleware = SummarizationMiddleware(model, trigger=[dict(c) for c in clauses])
    if window is None:
        model.profile = None
    provider = model._get_ls_params().get("ls_provider")
    last = AIMessage("last", id="last", response_metadata={"model_provider": provider})
    if reported_tokens is not None:
        last.usage_metadata = {"input_tokens": reported_tokens, "output_tokens": 0, "total_tokens": reported_tokens}
    messages: list[BaseMessage] = [HumanMessage(f"m{i}", id=f"m{i}") for i in range(message_count - 1)]
    messages.append(last)  # the reported total is the last AI message's
    return bool(middleware._should_summarize(messages, total_tokens))


def test_fired_clause_is_langchains_rule() -> None:
    # The oracle is LangChain's middleware itself, not a copy of its rule. Its answer is a bool; which
    # clause fired is the first one that fires alone.
    rng = random.Random(3)
    values = {"messages": (1, 5, 50, 400), "tokens": (1, 5, 50, 400), "fraction": (0.5, 0.01, 1.0, 0.3)}
    fired = 0
    for _ in range(1500):
        clauses = [tuple((kind, rng.choice(values[kind]))
                         for kind in rng.sample(("messages", "tokens", "fraction"), rng.randint(1, 3)))
                   for _ in range(rng.randint(1, 3))]
        kwargs: dict[str, Any] = {"message_count": rng.randint(1, 60), "total_tokens": rng.randint(0, 600),
                                  "window": rng.choice((None, 100, 1000)),
                                  "reported_tokens": rng.choice((None, 0, 30, 500))}
        first = next((c for c in clauses if _langchain_fires([c], **kwargs)), None)
        assert _langchain_fires(clauses, **kwargs) == (first is not None), (clauses, kwargs)
        expected = None if first is None else "&".join(f"{k}:{v}" for k, v in first)
        assert fired_clause(clauses, **kwargs) == expected, (clauses, kwargs)
        fired += expected is not None
    assert 300 < fired < 1200, fired
