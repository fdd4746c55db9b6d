"""L2 summarization: LangChain's trigger/keep/cutoff/trim semantics in two modes.

- `state` (LangChain, DeerFlow): `before_model` replaces the history by a summary message plus the
  kept tail, exactly like `langchain.agents.middleware.SummarizationMiddleware`.
- `view` (Deep Agents): `wrap_model_call` leaves `messages` untouched, records a private
  `_summarization_event` and sends `[summary, *messages[cutoff:]]`; the summarized messages are
  appended to `{history_dir}/{session}.md` in the virtual filesystem.

Both modes have the context-overflow fallback: a request (system + messages + tools) above the
window is summarized even below the trigger, and the trailing tool batch is clipped.
This module is the middleware; the rules it applies are pure functions in their own modules:
`thresholds` (trigger, keep), `cutoff` (where to cut), `summary_rules` (trim, prompt, texts, ids,
event projection) and `offload` (the overflow tail clip).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from engine.layers.approximate import ScaledCounter
from engine.layers.cutoff import cutoff_for_keep
from engine.layers.deerflow_summary import (
    SUMMARY_FIELD,
    latest_user_id,
    split_preserved,
    summary_count_message,
)
from engine.layers.deerflow_summary import summary_prompt as deerflow_summary_prompt
from engine.layers.offload import clip_overflow_tail
from engine.layers.request_copy import overridden
from engine.layers.summary_core import (
    EVENT_KEY,
    OVERFLOW_CLIP_TOKENS,
    SummarizationCore,
    SummarizationState,
)
from engine.layers.summary_rules import (
    STATE_SUMMARY_TEMPLATE,
    TOO_LONG,
    VIEW_SUMMARY_TEMPLATE,
    history_section,
    state_cutoff,
    summary_id,
    trim_for_summary,
)
from engine.layers.summary_steps import (
    Plan,
    Written,
    finish_response,
    history_stamp,
)
from engine.layers.summary_steps import history_path as history_file_path

INPUT_BUDGET_FRACTION = 0.95  # Deep Agents' extra trigger: 95 % of the window minus the output budget


# -- the layer -------------------------------------------------------------------------------
class SummarizationLayer(SummarizationCore):
    """L2: LangChain's SummarizationMiddleware semantics in `state` mode, Deep Agents' in `view` mode."""

    # -- state mode -----------------------------------------------------------------------
    def _state_summary(self, to_summarize: Sequence[BaseMessage]) -> tuple[Written, HumanMessage]:
        written = self._write(to_summarize)
        summary = HumanMessage(content=STATE_SUMMARY_TEMPLATE.format(summary=written.text),
                               additional_kwargs={"lc_source": "summarization"},
                               id=summary_id(to_summarize, written.text))
        return written, summary

    def _deerflow_head(self, state: Any) -> dict[str, Any] | None:
        """DeerFlow HEAD's `_prepare_compaction` + `compact_state`: the summary goes to `summary_text`."""
        messages = state["messages"]
        self._id_check(messages)
        previous = state.get(SUMMARY_FIELD) if isinstance(state.get(SUMMARY_FIELD), str) else None
        stand_in = summary_count_message(previous) if previous else None
        total = self._state_tokens(messages, tail=stand_in)
        trigger = self._fired([*messages, stand_in] if stand_in is not None else messages, total, self.model)
        if trigger is None:
            return None
        cutoff = cutoff_for_keep(messages, self.keep, self.counter, self.window_for(None),
                                 total=self._state_tokens(messages))
        if cutoff <= 0:
            self._decided(fired=False, reason="nothing before the keep cutoff to summarize")
            return None
        remaining, kept = split_preserved(messages[:cutoff], messages[cutoff:], latest_user_id(messages))
        if not remaining:
            self._decided(fired=False, reason="nothing left to summarize once the latest user message is kept")
            return None
        trimmed = trim_for_summary(remaining, self.trim_tokens_to_summarize, ScaledCounter(self.counter)) or remaining[-1:]
        prompt = deerflow_summary_prompt(self.summary_prompt, trimmed, previous, self.trim_tokens_to_summarize,
                                         ScaledCounter(self.counter))
        if prompt is None:
            written = Written(TOO_LONG, "", True)
        else:
            text = self.summarizer(trimmed, prompt_text=prompt)
            if not isinstance(text, str):
                raise TypeError(f"`summarizer` must return a str, got {type(text).__name__}.")
            if not text.strip():  # DeerFlow skips compaction this turn rather than commit an empty summary
                self.emit("summary_empty_skipped", severity="warning", message="the summarizer returned no text")
                self._decided(fired=False, reason="the summarizer returned no text: DeerFlow skips this turn")
                return None
            written = Written(text.strip(), prompt, False)
        summary = HumanMessage(content=written.text, name="summary", id=summary_id(remaining, written.text))
        self._emit_summary(written, trigger=trigger, to_summarize=remaining, kept=kept, new_list=kept,
                           before_tokens=self.event_counter(messages), cutoff=cutoff, summary=summary, history_path=None)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept], SUMMARY_FIELD: written.text}

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if self.mode != "state":
            return None
        if self.style == "deerflow-head":
            return self._deerflow_head(state)
        messages = state["messages"]
        self._id_check(messages)
        total = self._state_tokens(messages)
        trigger = self._fired(messages, total, self.model)
        if trigger is None:
            return None
        cutoff = cutoff_for_keep(messages, self.keep, self.counter, self.window_for(None), total=total)
        if cutoff <= 0:
            self._decided(fired=False, reason="nothing before the keep cutoff to summarize")
            return None
        to_summarize, kept = messages[:cutoff], messages[cutoff:]
        written, summary = self._state_summary(to_summarize)
        self._emit_summary(written, trigger=trigger, to_summarize=to_summarize, kept=kept, new_list=[summary, *kept],
                           before_tokens=self.event_counter(messages), cutoff=cutoff, summary=summary, history_path=None)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), summary, *kept]}

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.before_model(state, runtime)

    def _state_overflow(self, request: Any, forced: bool) -> Plan:
        """State mode above the window: summarize now and persist `[summary, *clipped kept, response]`."""
        view = list(request.messages)
        window = self.window_for(request.model)
        total = self._request_tokens(view, request)
        if window is None or not (forced or total > window):
            return Plan(request)
        state_messages = list((request.state or {}).get("messages", view))
        # outer layers may rewrite the request one-for-one (argument truncation); persist the state's own messages
        if [m.id for m in state_messages] != [m.id for m in view]:
            state_messages = view
        cutoff = cutoff_for_keep(view, self.keep, self.counter, window)
        if cutoff <= 0:
            self._emit_overflow("overflow_unrecovered", total, window)
            return Plan(request)
        kept_state, replacements = self._clip(state_messages[cutoff:], window)
        by_id = {r.id: r for r in replacements}
        kept_view = [by_id.get(m.id, m) for m in view[cutoff:]]
        written, summary = self._state_summary(state_messages[:cutoff])
        self._emit_overflow("overflow_fallback", total, window, replacements)
        new_view = [summary, *kept_view]
        self._emit_summary(written, trigger="overflow", to_summarize=state_messages[:cutoff], kept=kept_view,
                           new_list=new_view, before_tokens=self.event_counter(view), cutoff=cutoff, summary=summary,
                           history_path=None)
        after = self._request_tokens(new_view, request)
        if after > window:
            self._emit_overflow("overflow_unrecovered", after, window)
        return Plan(overridden(request, messages=new_view),
                     {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), summary, *kept_state]}, append_response=True)

    # -- view mode ------------------------------------------------------------------------
    def _history_path(self) -> str:
        return history_file_path(self.history_dir, self.context.thread)

    def _stamp(self, step: int) -> str:
        if self._ai_indices is None and self.context.thread is not None:  # the thread does not change during a run
            self._ai_indices = self.context.thread.ai_indices()
        return history_stamp(self.context.thread, self._ai_indices, step)

    def _offload_history(self, to_summarize: Sequence[BaseMessage], step: int) -> str | None:
        section = history_section(to_summarize, self._stamp(step))
        try:
            path = self._history_path()
            self.vfs.append(path, section, step=step, layer=self.layer)
        except Exception as exc:  # Deep Agents goes on without a path when offloading fails
            self.emit("history_offload_failed", severity="warning", message=f"{type(exc).__name__}: {exc}")
            return None
        return path

    def _input_budget(self, window: int | None) -> int | None:
        """Deep Agents' `_input_budget`: 95 % of the window minus the configured output tokens."""
        if window is None or not self.overflow_fallback:
            return None
        return max(0, int(window * INPUT_BUDGET_FRACTION) - self.max_output_tokens)

    def _fit_budget(self, view: list[BaseMessage], request: Any, window: int | None,
                    forced: bool) -> tuple[list[BaseMessage], list[ToolMessage]]:
        """Deep Agents' `_call_with_budget`: a request still over the budget (or refused by the model)
        gets its trailing tool batch clipped once; the replacements are persisted by id."""
        budget = self._input_budget(window)
        total = self._request_tokens(view, request)
        if not forced and (budget is None or total <= budget):
            return view, []
        clipped, replacements = clip_overflow_tail(view, self.vfs, threshold_tokens=1, counter=self.counter,
                                                   step=self.current_step())
        if replacements:
            self._emit_overflow("overflow_fallback", total, window, replacements)
        after = self._request_tokens(clipped, request)
        if budget is not None and after > budget:  # Deep Agents raises ContextOverflowError here
            self._emit_overflow("overflow_unrecovered", after, window)
        return clipped, replacements

    def _view_plan(self, request: Any, overflow_error: bool) -> Plan:
        """Deep Agents 0.7.32's `wrap_model_call` (view mode), minus the model call itself."""
        state = request.state if isinstance(request.state, Mapping) else {}
        event = state.get(EVENT_KEY)
        messages = request.messages  # read only: projections below are new lists
        self._id_check(messages)
        effective = self._project(messages, event, self._drop)
        total = self._request_tokens(effective, request)
        window = self.window_for(request.model)
        budget = self._input_budget(window)
        trigger = self._fired(effective, total, self.model if self.model is not None else request.model, request=True,
                              budget=budget, forced=overflow_error)
        if trigger is None and budget is not None and total > budget:
            trigger = "input_budget"
            self._decided(fired=True, reason=f"Deep Agents' input budget reached: {total:,} > {budget:,} "
                                             "(95% of the window less the output tokens)")
        if trigger is None and overflow_error:
            trigger = "overflow"
            self._decided(fired=True, reason="the model reported a context overflow")
        if trigger is None:
            return Plan(overridden(request, messages=effective) if event else request)
        cutoff = cutoff_for_keep(effective, self.keep, self.counter, window, total=self._view_tokens(effective))
        if cutoff <= 0:
            self._decided(fired=False, reason="nothing before the keep cutoff to summarize")
            view, replacements = self._fit_budget(effective, request, window, overflow_error)
            return Plan(overridden(request, messages=view), {"messages": replacements} if replacements else None)
        to_summarize, preserved = effective[:cutoff], effective[cutoff:]
        step = self.current_step()
        step = step if step is not None else sum(isinstance(m, AIMessage) for m in messages)
        file_path = self._offload_history(to_summarize, step)
        written = self._write(to_summarize)
        text = (VIEW_SUMMARY_TEMPLATE.format(file_path=file_path, summary=written.text) if file_path
                else STATE_SUMMARY_TEMPLATE.format(summary=written.text))
        summary = HumanMessage(content=text, additional_kwargs={"lc_source": "summarization"},
                               id=summary_id(to_summarize, written.text))
        new_view, replacements = self._fit_budget([summary, *map(self._drop, preserved)], request, window, overflow_error)
        self._emit_summary(written, trigger=trigger, to_summarize=to_summarize, kept=preserved, new_list=new_view,
                           before_tokens=self.event_counter(effective), cutoff=state_cutoff(event, cutoff),
                           summary=summary, history_path=file_path)
        update: dict[str, Any] = {EVENT_KEY: {"cutoff_index": state_cutoff(event, cutoff), "summary_message": summary,
                                              "file_path": file_path, "created_at_index": len(messages)}}
        if replacements:
            update["messages"] = replacements  # same ids: the reducer replaces the originals in state
        return Plan(overridden(request, messages=new_view), update)

    # -- wrap_model_call ------------------------------------------------------------------
    @property
    def wraps_model_call(self) -> bool:
        """False when `wrap_model_call` only hands the request on and the response back: state mode
        without the overflow fallback (`_plan` returns the request itself, `_finish` the handler's
        response, and a ContextOverflowError is re-raised as it came). LangChain's own
        SummarizationMiddleware has no wrap_model_call at all (langchain 1.5.2, summarization.py:
        before_model only), so the replay driver may leave such a layer out of its model chain."""
        return self.mode == "view" or self.overflow_fallback

    def _plan(self, request: Any, overflow_error: bool = False) -> Plan:
        if self.mode == "view":
            return self._view_plan(request, overflow_error)
        if not self.overflow_fallback:
            return Plan(request)
        return self._state_overflow(request, forced=overflow_error)

    def _finish(self, plan: Plan, response: Any) -> Any:
        return finish_response(plan, response)

    def _after_overflow(self, plan: Plan, request: Any, error: ContextOverflowError) -> Plan:
        """The model refused the request as too long: summarize now (once), or re-raise."""
        retry = self._plan(request, overflow_error=True) if plan.update is None and self.overflow_fallback else plan
        if retry.update is None or retry is plan:
            raise error
        return retry

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        plan = self._plan(request)
        try:
            return self._finish(plan, handler(plan.request))
        except ContextOverflowError as error:
            plan = self._after_overflow(plan, request, error)
        return self._finish(plan, handler(plan.request))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        plan = self._plan(request)
        try:
            return self._finish(plan, await handler(plan.request))
        except ContextOverflowError as error:
            plan = self._after_overflow(plan, request, error)
        return self._finish(plan, await handler(plan.request))


__all__ = [
    "EVENT_KEY",
    "INPUT_BUDGET_FRACTION",
    "OVERFLOW_CLIP_TOKENS",
    "SummarizationLayer",
    "SummarizationState",
]
