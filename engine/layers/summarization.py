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
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, NotRequired, cast

from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT
from langchain.agents.middleware.types import (
    ExtendedModelResponse,
    ModelResponse,
)
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import Command

from engine.base.errors import ConfigError
from engine.config.schema import EngineConfig
from engine.layers.approximate import NOT_AI_TYPES, RunningScaledCount, ScaledCounter, scales_with_usage
from engine.layers.base import ContextLayer, LayerContext
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
from engine.layers.summary_rules import (
    DEEPAGENTS_SUMMARY_PROMPT,
    DEFAULT_TRIM_TOKENS,
    NO_HISTORY,
    STATE_SUMMARY_TEMPLATE,
    SUMMARY_EVENT_KEY,
    TOO_LONG,
    VIEW_SUMMARY_TEMPLATE,
    CachedDrop,
    IdCheck,
    Projection,
    SummaryEventState,
    history_section,
    session_id,
    state_cutoff,
    summary_id,
    summary_prompt,
    trim_for_summary,
)
from engine.layers.thresholds import (
    DEFAULT_KEEP,
    ThresholdError,
    fired_clause,
    normalize_keep,
    normalize_trigger,
)
from engine.summarizers.summarizers import Summarizer, make_summarizer
from engine.thread.lazytext import LazyText
from engine.tokens.counters import TokenCounter

Mode = Literal["state", "view"]

INPUT_BUDGET_FRACTION = 0.95  # Deep Agents' extra trigger: 95 % of the window minus the output budget
OVERFLOW_CLIP_TOKENS = 5000  # Deep Agents' tail-clip floor when `keep` is message based
EVENT_KEY = SUMMARY_EVENT_KEY

# Providers whose messages carry a `model_provider` different from the model's `ls_provider`.
_PROVIDER_ALIASES: dict[str, frozenset[str]] = {
    "amazon_bedrock": frozenset({"bedrock", "bedrock_converse"}),
    "openai-mantle": frozenset({"openai"}),
    "anthropic-mantle": frozenset({"anthropic"}),
}
_PROFILE_REQUIRED = (
    "Model profile information is required to use fractional token limits, and is unavailable for the "
    "specified model. Please use absolute token counts instead, or pass window_tokens= (or a model with "
    'profile={"max_input_tokens": ...}).'
)


class SummarizationState(SummaryEventState):
    """Agent state plus the private view-mode event (Deep Agents' key) and DeerFlow HEAD's summary field."""

    summary_text: NotRequired[str | None]


# -- the layer -------------------------------------------------------------------------------
@dataclass
class _Plan:
    """What one model call sends, and the state update to return with the response."""

    request: Any
    update: dict[str, Any] | None = None
    append_response: bool = False  # state-mode overflow: the response follows the rewritten history


@dataclass
class _Written:
    text: str
    prompt: str | LazyText
    empty: bool


class _CallableCounter:
    """A plain `f(messages) -> int` (e.g. count_tokens_approximately) as a TokenCounter."""

    def __init__(self, fn: Callable[..., int]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", "custom")

    def __call__(self, messages: Any, **kwargs: Any) -> int:
        return int(self.fn(list(messages)))

    def count_message(self, message: BaseMessage) -> int:
        return int(self.fn([message]))

    def count_text(self, text: str) -> int:
        return int(self.fn([HumanMessage(text)]))

    def count_tools(self, tools: Any) -> int:
        return 0


class SummarizationLayer(ContextLayer):
    """L2: LangChain's SummarizationMiddleware semantics in `state` mode, Deep Agents' in `view` mode."""

    layer: ClassVar[str] = "summarization"
    state_schema = SummarizationState

    def __init__(
        self,
        context: LayerContext | None = None,
        *,
        trigger: Any = None,
        keep: Any = DEFAULT_KEEP,
        trim_tokens_to_summarize: int | None = DEFAULT_TRIM_TOKENS,
        summary_prompt: str | None = None,
        mode: Mode = "state",
        summarizer: Any = None,
        token_counter: TokenCounter | Callable[..., int] | None = None,
        window_tokens: int | None = None,
        model: Any = None,
        overflow_fallback: bool = True,
        history_dir: str = "/conversation_history",
        max_output_tokens: int = 0,
        provider: str | None = None,
        style: str = "langchain",
    ) -> None:
        super().__init__(context)
        self._id_check = IdCheck()
        self._drop = CachedDrop()
        self._project = Projection()  # apply_event, extended in place while the state only grows
        if mode not in ("state", "view"):
            raise ConfigError(f"mode must be 'state' or 'view', got {mode!r}", key="summarization.mode")
        self.mode: Mode = mode
        self.trigger_clauses = normalize_trigger(trigger)
        self.keep = normalize_keep(keep)
        self.trim_tokens_to_summarize = trim_tokens_to_summarize
        # each framework's own default: Deep Agents adds a media note to LangChain's prompt
        default_prompt = DEEPAGENTS_SUMMARY_PROMPT if mode == "view" else DEFAULT_SUMMARY_PROMPT
        self.summary_prompt = summary_prompt if summary_prompt is not None else default_prompt
        try:
            self.summary_prompt.format(messages="")
        except (KeyError, IndexError, ValueError) as exc:
            raise ConfigError(f"the prompt may only use the {{messages}} placeholder; double other braces ({exc!r})",
                              key="summarization.summary_prompt") from None
        self._counter = (token_counter if token_counter is None or hasattr(token_counter, "count_message")
                         else _CallableCounter(token_counter))
        self.model = model
        self._window = window_tokens
        self.overflow_fallback = overflow_fallback
        self.history_dir = history_dir.rstrip("/") or "/"
        self.max_output_tokens = max_output_tokens
        self.provider = provider
        self.style = style
        spec = summarizer if summarizer is not None else self.context.summarizer
        self.summarizer: Summarizer = make_summarizer(spec, self.event_counter)
        self._state_tokens = RunningScaledCount(self.counter)
        self._view_tokens = RunningScaledCount(self.counter)
        self._tools_tokens: dict[tuple[int, ...], tuple[tuple[Any, ...], int]] = {}
        self._ai_indices: list[int] | None = None
        uses_fraction = any(kind == "fraction" for c in self.trigger_clauses for kind, _ in c) or self.keep[0] == "fraction"
        # state mode runs in before_model, which has no request model to read a profile from
        if mode == "state" and uses_fraction and self.window_for(None) is None:
            raise ThresholdError(_PROFILE_REQUIRED)

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> SummarizationLayer:
        s = config.summarization
        return cls(context, trigger=s.trigger, keep=s.keep, trim_tokens_to_summarize=s.trim_tokens_to_summarize,
                   summary_prompt=s.summary_prompt, mode=s.mode,
                   summarizer=context.summarizer if context.summarizer is not None else s.summarizer,
                   overflow_fallback=s.overflow_fallback, history_dir=s.history_dir,
                   max_output_tokens=config.model.max_output_tokens, provider=config.model.provider, style=s.style)

    @property
    def counter(self) -> TokenCounter:
        """What thresholds are measured with: the explicit counter, else the framework's (decision) counter."""
        return self._counter if self._counter is not None else self.decision_counter  # type: ignore[return-value]

    @property
    def event_counter(self) -> TokenCounter:
        """What events report: the explicit counter, else the run's, so events match the timeline."""
        return self._counter if self._counter is not None else self.context.counter  # type: ignore[return-value]

    def window_for(self, model: Any) -> int | None:
        """The window: explicit, else the run's, else the model profile (a malformed profile counts as none)."""
        if self._window:
            return self._window
        if self.context.window_tokens:
            return self.context.window_tokens
        for candidate in (self.model, model):
            profile = getattr(candidate, "profile", None)
            if isinstance(profile, Mapping) and isinstance(profile.get("max_input_tokens"), int):
                return int(profile["max_input_tokens"])
        return None

    def _reported_tokens(self, messages: Sequence[BaseMessage]) -> int | None:
        """The last AI message's reported total, when its provider is the model's (LangChain's rule).

        The model's provider is `provider` (config `model.provider`), else the given model's
        `ls_provider`; with neither (a replay of the agent's own thread), any reported provider.
        """
        last_ai = None
        for m in reversed(messages):  # LangChain's `next(... reversed(messages) ...)`, without a generator per call
            if type(m) not in NOT_AI_TYPES and isinstance(m, AIMessage):
                last_ai = m
                break
        usage = getattr(last_ai, "usage_metadata", None)
        if not usage or not usage.get("total_tokens"):
            return None
        provider = last_ai.response_metadata.get("model_provider")  # type: ignore[union-attr]
        if not provider:
            return None
        expected = self.provider
        if expected is None and self.model is not None:
            try:
                expected = self.model._get_ls_params().get("ls_provider")
            except Exception:
                return None
            if expected is None:
                return None
        if expected is not None and provider != expected and provider not in _PROVIDER_ALIASES.get(expected, frozenset()):
            return None
        return int(usage["total_tokens"])

    def _fired(self, messages: Sequence[BaseMessage], total: int, model: Any) -> str | None:
        if not self.trigger_clauses:
            return None
        return fired_clause(self.trigger_clauses, message_count=len(messages), total_tokens=total,
                            window=self.window_for(model), reported_tokens=self._reported_tokens(messages))

    # -- summary text ---------------------------------------------------------------------
    def _write(self, to_summarize: Sequence[BaseMessage]) -> _Written:
        if not to_summarize:
            return _Written(NO_HISTORY, "", False)
        counter = self.counter
        # LangChain's approximate count of a list is the sum of its messages' counts, scaled by a
        # factor >= 1 (engine.layers.approximate): a floor that spares counting what cannot fit
        floor = counter.count_message if scales_with_usage(counter) else None
        trimmed = trim_for_summary(to_summarize, self.trim_tokens_to_summarize, ScaledCounter(counter), floor=floor)
        if not trimmed:
            return _Written(TOO_LONG, "", True)
        # kept lazily (references to the messages): a prompt per event was most of a Run's memory
        prompt = summary_prompt(self.summary_prompt, trimmed)
        # a summarizer that says it reads the prompt lazily (the offline one) gets it unrendered
        lazy = getattr(self.summarizer, "lazy_prompt", False)
        text = self.summarizer(trimmed, prompt_text=cast(str, prompt) if lazy else str(prompt))
        if not isinstance(text, str):
            raise TypeError(f"`summarizer` must return a str, got {type(text).__name__}.")
        return _Written(text.strip(), prompt, False)

    def _emit_summary(self, written: _Written, *, trigger: str, to_summarize: Sequence[BaseMessage],
                      kept: Sequence[BaseMessage], new_list: Sequence[BaseMessage], before_tokens: int,
                      cutoff: int, summary: HumanMessage, history_path: str | None) -> None:
        removed = [m.id for m in to_summarize]
        self.emit("summarize", tokens_before=before_tokens, tokens_after=self.event_counter(new_list),
                  message=f"{self.mode}: summarized {len(removed)} messages, kept {len(kept)} ({trigger})",
                  summary_text=written.text, summary_id=summary.id, removed_ids=removed,
                  kept_ids=[m.id for m in kept], cutoff_index=cutoff, trigger=trigger, prompt=written.prompt,
                  history_path=history_path, mode=self.mode)
        if written.empty:
            self.emit("summarize_empty", severity="warning", removed_ids=removed,
                      trim_tokens_to_summarize=self.trim_tokens_to_summarize, summary_text=written.text,
                      message=(f"trimming to {self.trim_tokens_to_summarize} tokens left no window starting on a "
                               f"human message: {len(removed)} messages were replaced by {TOO_LONG!r}"))

    def _request_tokens(self, messages: Sequence[BaseMessage], request: Any) -> int:
        """System message, tools and `messages`, usage-scaled (Deep Agents' `_count_tokens`)."""
        system = getattr(request, "system_message", None)
        tools = getattr(request, "tools", None) or ()
        key = tuple(map(id, tools))
        hit = self._tools_tokens.get(key)
        if hit is None:
            if len(self._tools_tokens) >= 256:  # a layer making new tool objects every call
                self._tools_tokens.clear()
            # the entry keeps the tools alive, so their ids cannot be reused by other objects
            hit = self._tools_tokens[key] = (tuple(tools), self.counter.count_tools(list(tools)) if tools else 0)
        counter = self.counter
        lead = (counter.count_message(system) if system else 0) + hit[1]
        return self._view_tokens(messages, lead_tokens=lead, lead_messages=1 if system else 0)

    def _clip(self, preserved: Sequence[BaseMessage], window: int | None) -> tuple[list[BaseMessage], list[ToolMessage]]:
        kind, value = self.keep
        threshold = (int(value) if kind == "tokens" else int(window * value) if kind == "fraction" and window
                     else OVERFLOW_CLIP_TOKENS)
        return clip_overflow_tail(preserved, self.vfs, threshold_tokens=threshold, counter=self.counter,
                                  step=self.current_step())

    def _emit_overflow(self, kind: str, total: int, window: int | None, clipped: Sequence[ToolMessage] = ()) -> None:
        limit = f"the {window}-token window" if window else "the model's context window"
        if kind == "overflow_fallback":
            self.emit(kind, tokens_before=total, message=f"request of {total} tokens exceeds {limit}: "
                      f"summarizing below the trigger, {len(clipped)} trailing tool results clipped",
                      window_tokens=window, clipped_ids=[m.id for m in clipped], mode=self.mode)
        else:
            self.emit(kind, severity="warning", tokens_before=total, window_tokens=window, mode=self.mode,
                      message=f"request of {total} tokens still exceeds {limit}")

    # -- state mode -----------------------------------------------------------------------
    def _state_summary(self, to_summarize: Sequence[BaseMessage]) -> tuple[_Written, HumanMessage]:
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
            return None
        remaining, kept = split_preserved(messages[:cutoff], messages[cutoff:], latest_user_id(messages))
        if not remaining:
            return None
        trimmed = trim_for_summary(remaining, self.trim_tokens_to_summarize, ScaledCounter(self.counter)) or remaining[-1:]
        prompt = deerflow_summary_prompt(self.summary_prompt, trimmed, previous, self.trim_tokens_to_summarize,
                                         ScaledCounter(self.counter))
        if prompt is None:
            written = _Written(TOO_LONG, "", True)
        else:
            text = self.summarizer(trimmed, prompt_text=prompt)
            if not isinstance(text, str):
                raise TypeError(f"`summarizer` must return a str, got {type(text).__name__}.")
            if not text.strip():  # DeerFlow skips compaction this turn rather than commit an empty summary
                self.emit("summary_empty_skipped", severity="warning", message="the summarizer returned no text")
                return None
            written = _Written(text.strip(), prompt, False)
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
            return None
        to_summarize, kept = messages[:cutoff], messages[cutoff:]
        written, summary = self._state_summary(to_summarize)
        self._emit_summary(written, trigger=trigger, to_summarize=to_summarize, kept=kept, new_list=[summary, *kept],
                           before_tokens=self.event_counter(messages), cutoff=cutoff, summary=summary, history_path=None)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), summary, *kept]}

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.before_model(state, runtime)

    def _state_overflow(self, request: Any, forced: bool) -> _Plan:
        """State mode above the window: summarize now and persist `[summary, *clipped kept, response]`."""
        view = list(request.messages)
        window = self.window_for(request.model)
        total = self._request_tokens(view, request)
        if window is None or not (forced or total > window):
            return _Plan(request)
        state_messages = list((request.state or {}).get("messages", view))
        # outer layers may rewrite the request one-for-one (argument truncation); persist the state's own messages
        if [m.id for m in state_messages] != [m.id for m in view]:
            state_messages = view
        cutoff = cutoff_for_keep(view, self.keep, self.counter, window)
        if cutoff <= 0:
            self._emit_overflow("overflow_unrecovered", total, window)
            return _Plan(request)
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
        return _Plan(overridden(request, messages=new_view),
                     {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), summary, *kept_state]}, append_response=True)

    # -- view mode ------------------------------------------------------------------------
    def _history_path(self) -> str:
        thread_id = self.context.thread.thread_id if self.context.thread is not None else _config_thread_id()
        return f"{self.history_dir.rstrip('/')}/{session_id(thread_id)}.md"

    def _stamp(self, step: int) -> str:
        """The history section's time: when the step's model call happened, as recorded (Deep Agents
        writes the current UTC time; a replay has no clock), else the step number."""
        thread = self.context.thread
        if thread is not None:
            if self._ai_indices is None:  # the thread does not change during a run
                self._ai_indices = thread.ai_indices()
            indices = self._ai_indices
            if 0 <= step < len(indices):
                message = thread.messages[indices[step]]
                usage = thread.usage.get(message.id or "")
                if usage is not None and usage.timestamp:
                    return usage.timestamp
        return f"step {step}"

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

    def _view_plan(self, request: Any, overflow_error: bool) -> _Plan:
        """Deep Agents 0.7.32's `wrap_model_call` (view mode), minus the model call itself."""
        state = request.state if isinstance(request.state, Mapping) else {}
        event = state.get(EVENT_KEY)
        messages = request.messages  # read only: projections below are new lists
        self._id_check(messages)
        effective = self._project(messages, event, self._drop)
        total = self._request_tokens(effective, request)
        window = self.window_for(request.model)
        trigger = self._fired(effective, total, self.model if self.model is not None else request.model)
        budget = self._input_budget(window)
        if trigger is None and budget is not None and total > budget:
            trigger = "input_budget"
        if trigger is None and overflow_error:
            trigger = "overflow"
        if trigger is None:
            return _Plan(overridden(request, messages=effective) if event else request)
        cutoff = cutoff_for_keep(effective, self.keep, self.counter, window, total=self._view_tokens(effective))
        if cutoff <= 0:
            view, replacements = self._fit_budget(effective, request, window, overflow_error)
            return _Plan(overridden(request, messages=view), {"messages": replacements} if replacements else None)
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
        return _Plan(overridden(request, messages=new_view), update)

    # -- wrap_model_call ------------------------------------------------------------------
    @property
    def wraps_model_call(self) -> bool:
        """False when `wrap_model_call` only hands the request on and the response back: state mode
        without the overflow fallback (`_plan` returns the request itself, `_finish` the handler's
        response, and a ContextOverflowError is re-raised as it came). LangChain's own
        SummarizationMiddleware has no wrap_model_call at all (langchain 1.5.2, summarization.py:
        before_model only), so the replay driver may leave such a layer out of its model chain."""
        return self.mode == "view" or self.overflow_fallback

    def _plan(self, request: Any, overflow_error: bool = False) -> _Plan:
        if self.mode == "view":
            return self._view_plan(request, overflow_error)
        if not self.overflow_fallback:
            return _Plan(request)
        return self._state_overflow(request, forced=overflow_error)

    def _finish(self, plan: _Plan, response: Any) -> Any:
        if plan.update is None:
            return response
        update = dict(plan.update)
        inner = response.command.update if isinstance(response, ExtendedModelResponse) and response.command else None
        model_response = response.model_response if isinstance(response, ExtendedModelResponse) else response
        if plan.append_response:
            produced = model_response.result if isinstance(model_response, ModelResponse) else [model_response]
            update["messages"] = [*update["messages"], *produced]
        if isinstance(inner, dict):  # keep an inner layer's update (create_agent tracks it itself; replay does not)
            merged_messages = [*inner.get("messages", []), *update.get("messages", [])]
            update = {**inner, **update}
            if merged_messages:
                update["messages"] = merged_messages
        if not isinstance(model_response, ModelResponse):
            model_response = ModelResponse(result=[model_response])
        return ExtendedModelResponse(model_response=model_response, command=Command(update=update))

    def _after_overflow(self, plan: _Plan, request: Any, error: ContextOverflowError) -> _Plan:
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


def _config_thread_id() -> str:
    """The LangGraph thread id when running inside an agent, else "default"."""
    try:
        from langgraph.config import get_config

        thread_id = get_config().get("configurable", {}).get("thread_id")
    except Exception:
        return "default"
    return str(thread_id) if thread_id is not None else "default"


__all__ = [
    "EVENT_KEY",
    "INPUT_BUDGET_FRACTION",
    "OVERFLOW_CLIP_TOKENS",
    "SummarizationLayer",
    "SummarizationState",
]
