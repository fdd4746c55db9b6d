"""What the replay driver keeps per step: read-only snapshots of the state and the view, and their tokens.

The driver (engine.run.replay) builds one `StepRecord` per model call; these helpers make that cost the
step's new messages, not the whole list: a snapshot shares the list the driver only appends to, and
token breakdowns extend the previous step's sums when the list extends the previous one.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_core.messages import BaseMessage, SystemMessage

from engine.layers.scan import unchanged_prefix
from engine.recorded.calibration import AGENT_PROMPT
from engine.thread.kinds import PARTS_KEY
from engine.tokens.counters import TokenCounter


class Snapshot(Sequence[BaseMessage]):
    """The first `n` messages of a list the driver only appends to: a step's state or view
    without copying it (the driver forks the list before any in-place replacement)."""

    __slots__ = ("src", "n")

    def __init__(self, src: list[BaseMessage], n: int | None = None) -> None:
        self.src = src
        self.n = len(src) if n is None else n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            start, stop, step = i.indices(self.n)
            if step == 1:
                return tuple(self.src[start:stop])
            return tuple(self.src[j] for j in range(start, stop, step))
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.src[i]

    def __iter__(self) -> Any:
        return itertools.islice(self.src, self.n)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Snapshot):
            return (other.src is self.src and other.n == self.n) or tuple(self) == tuple(other)
        if isinstance(other, (tuple, list)):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Snapshot({self.n} messages)"


class ViewLog:
    """Views as Snapshots of append-only lists: a view that extends the previous one shares its list.

    A step's view is usually the previous view plus the new messages, but layers hand it over as a
    new list each time; keeping those lists would hold O(view) references per step (gigabytes
    over a long thread whose window holds thousands of small messages). The check is one list
    comparison, identity first at C speed (`unchanged_prefix`).
    """

    # how a checkpoint of the replay keeps it (engine/layers/checkpoint.py): one list only appended to
    checkpoint_kinds: ClassVar[dict[str, str]] = {"src": "grow"}

    def __init__(self) -> None:
        self.src: list[BaseMessage] = []

    def add(self, messages: Sequence[BaseMessage]) -> Snapshot:
        src = self.src
        n = len(src)
        if n and unchanged_prefix(src, messages):
            src.extend(messages[n:])
        else:
            src = self.src = list(messages)
        return Snapshot(src, len(messages))


class PrefixSums:
    """Token breakdown of a message list, re-using the previous list's sums when it is a prefix.

    Most steps only append to the previous state or view, so the cost per step is the new
    messages, not the whole list (identity checks run at C speed). Each call returns a new dict
    (the step's own), which is also what the next call extends (never mutated after it is returned).
    `prev_tokens` is the sum of that dict's values, kept with it (the step's total without a pass).
    """

    __slots__ = ("counter", "prev", "prev_totals", "prev_tokens")
    # how a checkpoint of the replay keeps it (engine/layers/checkpoint.py): `prev` is a Snapshot or a
    # list never changed afterwards, `prev_totals` a dict never changed once returned
    checkpoint_kinds: ClassVar[dict[str, str]] = {"prev": "value", "prev_totals": "value", "prev_tokens": "value"}

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.prev: Sequence[BaseMessage] = ()
        self.prev_totals: dict[str, int] = {}
        self.prev_tokens = 0

    def breakdown(self, messages: Sequence[BaseMessage]) -> dict[str, int]:
        prev = self.prev
        n = len(prev)
        bd = self.counter.breakdown
        totals: dict[str, int] | None = None
        start = tokens = 0  # `tokens`: the sum of `totals`' values so far
        if (isinstance(messages, Snapshot) and isinstance(prev, Snapshot) and messages.src is prev.src
                and messages.n >= n):
            totals, start, tokens = dict(self.prev_totals), n, self.prev_tokens  # the same append-only list: O(1)
        elif n and len(messages) >= n:
            head, before = tuple(messages[:n]), tuple(prev)
            # tuple == checks identity first, element by element, at C speed
            if head == before:
                totals, start, tokens = dict(self.prev_totals), n, self.prev_tokens
            else:
                totals, start = self._replaced(before, head), n
                if totals is not None:
                    tokens = sum(totals.values())
        if totals is None:
            totals, start, tokens = {}, 0, 0
        tail = messages.src[start : messages.n] if isinstance(messages, Snapshot) else messages[start:]
        if tail:
            get = totals.get
            for m in tail:
                for cat, k in bd(m).items():
                    totals[cat] = get(cat, 0) + k
                    tokens += k
        self.prev, self.prev_totals, self.prev_tokens = messages, totals, tokens
        return totals

    def _replaced(self, before: tuple[BaseMessage, ...], head: tuple[BaseMessage, ...]) -> dict[str, int] | None:
        """The sums of `head` from the previous list's, when a few of its messages were replaced in place
        (the driver forks the state to replace a message by id; a layer swaps in a stub or a truncated copy):
        the replaced messages' breakdowns taken off, their replacements' added. None (count afresh) when
        many were, or when a category's sum comes to 0: a fresh count has that category only if some
        message still carries it, which the sums cannot tell (a nonzero sum can only come from one).
        """
        replaced = [i for i, (a, b) in enumerate(zip(before, head, strict=True)) if a is not b]
        if len(replaced) * 4 > len(head):
            return None
        bd = self.counter.breakdown
        totals = dict(self.prev_totals)
        get = totals.get
        for i in replaced:
            for cat, k in bd(before[i]).items():
                totals[cat] = get(cat, 0) - k
            for cat, k in bd(head[i]).items():
                totals[cat] = get(cat, 0) + k
        if 0 in totals.values():
            return None
        return totals

    def follow(self, other: PrefixSums, messages: Sequence[BaseMessage], totals: dict[str, int]) -> None:
        """`breakdown(messages)` gave `totals` on `other`, which this one was following: take it as ours."""
        tokens = other.prev_tokens if totals is other.prev_totals else sum(totals.values())
        self.prev, self.prev_totals, self.prev_tokens = messages, totals, tokens


class StepSums:
    """A step's token breakdowns: the request (system prompt, tools, view) and the state.

    The system prompt's and tools' part is computed once per system message and tool set (by
    identity; the caches keep the objects alive, so their ids cannot be reused). When a step's
    view is its state (the same list, the same length) and the two sums followed the same lists
    so far, the view's sums are the state's, computed once (the same messages, the same order).
    """

    # how a checkpoint of the replay keeps it (engine/layers/checkpoint.py)
    checkpoint_kinds: ClassVar[dict[str, str]] = {
        "state_sums": "helper", "view_sums": "helper", "_tools_cache": "memo", "_system_cache": "memo",
        "agent_prompt": "value", "_fixed": "value", "_last_tools": "value"}

    def __init__(self, counter: TokenCounter, agent_prompt_tokens: int) -> None:
        self.counter = counter
        # the agent's own prompt the transcript lacks (engine.recorded.calibration): set per step by the
        # driver, since a recorded compaction may have measured it again
        self.agent_prompt = agent_prompt_tokens
        self.state_sums = PrefixSums(counter)
        self.view_sums = PrefixSums(counter)
        self._tools_cache: dict[tuple[int, ...], tuple[tuple[Any, ...], int, tuple[str, ...]]] = {}
        self._system_cache: dict[int, tuple[SystemMessage, dict[str, int]]] = {}
        # (system message, tools, their breakdown, its sum): the last request's, by identity
        self._fixed: tuple[SystemMessage | None, tuple[Any, ...], dict[str, int], int, int] | None = None
        self._last_tools: tuple[tuple[Any, ...], int, tuple[str, ...]] | None = None

    # -- tools and system prompt -------------------------------------------------------------
    def tools_entry(self, tools: Sequence[Any]) -> tuple[tuple[Any, ...], int, tuple[str, ...]]:
        """(the tools, their tokens, their names), computed once per distinct set of tool objects.

        The entry keeps the tools alive, so their ids cannot be reused by other objects. The request
        of every step holds the same tool objects in a new list: the last entry is checked first,
        object by object at C speed, without building the key.
        """
        last = self._last_tools
        if last is not None and len(tools) == len(last[0]) and all(map(operator.is_, tools, last[0])):
            return last
        key = tuple(map(id, tools))
        hit = self._tools_cache.get(key)
        if hit is None:
            if len(self._tools_cache) >= 256:  # a layer making new tool objects every step
                self._tools_cache.clear()
            hit = self._tools_cache[key] = (tuple(tools), self.counter.count_tools(list(tools)) if tools else 0,
                                            tuple(_tool_name(t) for t in tools))
        self._last_tools = hit
        return hit

    def system_breakdown(self, system: SystemMessage | None) -> dict[str, int]:
        if system is None:
            return {}
        hit = self._system_cache.get(id(system))
        if hit is not None and hit[0] is system:
            return hit[1]
        parts = system.additional_kwargs.get(PARTS_KEY)
        total = self.counter.count_message(system)
        if parts:
            out: dict[str, int] = {}
            for p in parts:
                cat = p.get("category", "system")
                out[cat] = out.get(cat, 0) + self.counter.count_text(str(p.get("text", "")))
            # framing and separators stay "system", so parts always add up to the message's count
            out["system"] = out.get("system", 0) + max(0, total - sum(out.values()))
        else:
            out = {"system": total}
        self._system_cache[id(system)] = (system, out)
        return out

    def fixed(self, system: SystemMessage | None, entry: tuple[tuple[Any, ...], int, tuple[str, ...]]) -> dict[str, int]:
        """The request's system prompt, agent prompt and tools, by category (not to be mutated)."""
        hit = self._fixed
        prompt = self.agent_prompt
        if hit is not None and hit[0] is system and hit[1] is entry[0] and hit[4] == prompt:
            return hit[2]
        totals = dict(self.system_breakdown(system))
        if prompt > 0:
            totals[AGENT_PROMPT] = prompt
        tool_tokens = entry[1]
        if tool_tokens:
            totals["tools"] = totals.get("tools", 0) + tool_tokens
        if prompt < 0:
            # the provider billed less for the prompt and tools than we count: take it off our count
            over = -prompt
            for cat in ("tools", "system"):
                cut = min(over, totals.get(cat, 0))
                if cut:
                    totals[cat] -= cut
                    over -= cut
        self._fixed = (system, entry[0], totals, sum(totals.values()), prompt)
        return totals

    # -- one step -------------------------------------------------------------------------------
    def step(self, view: Snapshot, state: Snapshot, system: SystemMessage | None,
             entry: tuple[tuple[Any, ...], int, tuple[str, ...]]) -> tuple[dict[str, int], dict[str, int], int, int]:
        """(the view's breakdown with the system prompt and tools, the state's breakdown, and the sums
        of both: the view's tokens and the state's)."""
        ss, vs = self.state_sums, self.view_sums
        shared = vs.prev is ss.prev  # both sums followed the same lists: the same inputs, the same dict
        state_totals = ss.breakdown(state)
        if shared and view.src is state.src and view.n == state.n:
            vs.follow(ss, state, state_totals)
            view_totals = state_totals
        else:
            view_totals = vs.breakdown(view)
            if (view.src is state.src and view.n == state.n
                    and list(view_totals.items()) == list(state_totals.items())):
                vs.follow(ss, state, state_totals)  # the view is the state again: follow it from here
                view_totals = state_totals
        fixed = self.fixed(system, entry)
        fixed_tokens = self._fixed[3]  # type: ignore[index]  # set by fixed()
        if fixed.keys().isdisjoint(view_totals):  # the loop below, at C speed: the same keys in the same order
            totals = {**fixed, **view_totals}
        else:
            totals = dict(fixed)
            get = totals.get
            for cat, n in view_totals.items():
                totals[cat] = get(cat, 0) + n
        return totals, state_totals, fixed_tokens + vs.prev_tokens, ss.prev_tokens


def _tool_name(tool: Any) -> str:
    if isinstance(tool, dict):
        fn = tool.get("function")
        return str((fn or tool).get("name", "")) if isinstance(fn or tool, dict) else ""
    return str(getattr(tool, "name", ""))
