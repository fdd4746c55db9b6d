"""Per-step sums over a thread's recorded views, in time linear in the thread.

Step k of a recorded thread is sent the whole history before it (engine.recorded.history), so summing the
history afresh at every step costs O(steps x messages): 1M tiny messages never finished. Between
two steps the history only grows at its end, except where a recorded compaction or edit rebuilt it
(the view says so) and, for models that keep only the current turn's thinking, where a new turn
starts (earlier AI messages are then sent without their thinking, each changed once). So a running
sum is kept and only those events recount. A model that never keeps thinking (`none`) is sent every
AI message without it from the start.
"""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import AIMessage, BaseMessage

from engine.recorded.history import RecordedHistory, RecordedView, has_thinking, starts_turn


class RunningViewSum:
    """`total(view)` = sum of `weigh(m)` over `history.provider_view(view.messages)`, incrementally.

    Call `total` for the views of one `history.views()` walk, in order.
    """

    def __init__(self, history: RecordedHistory, weigh: Callable[[BaseMessage], int]) -> None:
        self.history = history
        self.weigh = weigh
        self._list: list[BaseMessage] | None = None
        self._seen = 0  # messages of `_list` already summed
        self._turn = -1  # index of the last turn-opening human message in `_list`
        self._before = 0  # messages before `_turn`, as the provider sends them (thinking stripped)
        self._since = 0  # messages from `_turn` on (or all of them while there is no turn start)

    def _sent(self, message: BaseMessage) -> int:
        """A message before the current turn, as the provider hands it over."""
        if not self.history.keeps_all_thinking and isinstance(message, AIMessage) and has_thinking(message):
            return self.weigh(self.history.stripped(message))
        return self.weigh(message)

    def _now(self, message: BaseMessage) -> int:
        """A message of the current turn: stripped already when the model never keeps thinking."""
        return self._sent(message) if self.history.rule == "none" else self.weigh(message)

    def total(self, view: RecordedView) -> int:
        messages = view.messages
        if messages is not self._list or view.compactions or view.edits or len(messages) < self._seen:
            self._list, self._seen, self._turn, self._before, self._since = messages, 0, -1, 0, 0
        for j in range(self._seen, len(messages)):
            m = messages[j]
            if self.history.rule == "last_turn" and starts_turn(m):
                # the previous turn's messages are now before the last turn: sent stripped
                self._before += sum(self._sent(x) for x in messages[max(self._turn, 0):j])
                self._since = 0
                self._turn = j
            self._since += self._now(m)
        self._seen = len(messages)
        return self._before + self._since


__all__ = ["RunningViewSum"]
