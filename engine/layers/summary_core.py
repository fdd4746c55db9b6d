"""The summarization layer's shared part: its settings, what it counts with, when its trigger fires,
the summary text and the events it records. The two modes' hooks are in engine/layers/summarization.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Literal, NotRequired, Self, cast

from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.base.errors import ConfigError
from engine.base.wording import plural
from engine.config.schema import EngineConfig
from engine.layers.approximate import RunningScaledCount, ScaledCounter, scales_with_usage
from engine.layers.base import ContextLayer, LayerContext
from engine.layers.checks import (
    NEVER,
    TriggerCheck,
    changed_fields,
    checks_of,
    first_fired,
    first_trigger_change,
)
from engine.layers.offload import clip_overflow_tail
from engine.layers.summary_rules import (
    DEEPAGENTS_SUMMARY_PROMPT,
    DEFAULT_TRIM_TOKENS,
    NO_HISTORY,
    SUMMARY_EVENT_KEY,
    TOO_LONG,
    CachedDrop,
    IdCheck,
    Projection,
    SummaryEventState,
    summary_prompt,
    trim_for_summary,
)
from engine.layers.summary_steps import (
    CallableCounter,
    Written,
    reported_total,
)
from engine.layers.thresholds import (
    DEFAULT_KEEP,
    ThresholdError,
    fired_clause,
    fraction_threshold,
    normalize_keep,
    normalize_trigger,
)
from engine.summarizers.choice import make_summarizer
from engine.summarizers.protocol import Summarizer
from engine.thread import decisions
from engine.tokens.counters import TokenCounter

Mode = Literal["state", "view"]

_REPORTED_COUNTS = "the last AI message's reported usage counts (LangChain)"
_NEVER_FIRES = "no trigger: summarization never fires"
PROMPT_RATIO_MESSAGES = 2000  # the messages `_agent_prompt`'s ratio of the two counts is read over
OVERFLOW_CLIP_TOKENS = 5000  # Deep Agents' tail-clip floor when `keep` is message based
EVENT_KEY = SUMMARY_EVENT_KEY

_PROFILE_REQUIRED = (
    "Model profile information is required to use fractional token limits, and is unavailable for the "
    "specified model. Please use absolute token counts instead, or pass window_tokens= (or a model with "
    'profile={"max_input_tokens": ...}).'
)


class SummarizationState(SummaryEventState):
    """Agent state plus the private view-mode event (Deep Agents' key) and DeerFlow HEAD's summary field."""

    summary_text: NotRequired[str | None]


# -- the layer -------------------------------------------------------------------------------
class SummarizationCore(ContextLayer):
    """What both modes share: settings, counters and window, the trigger, the summary text, the events."""

    layer: ClassVar[str] = "summarization"
    state_schema = SummarizationState
    # how a checkpoint keeps each run-time attribute (engine/layers/checkpoint.py); `_ai_indices` is
    # read from the thread again when needed (a resumed replay's thread may have grown)
    checkpoint_kinds: ClassVar[dict[str, str]] = {
        "_id_check": "helper", "_drop": "helper", "_project": "helper", "summarizer": "helper",
        "_state_tokens": "helper", "_view_tokens": "helper", "_tools_tokens": "memo", "_ai_indices": "reset",
        "checks": "grow", "_decision": "value", "_decision_memo": "memo",
        "_prompt_ratio": "memo"}

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
                         else CallableCounter(token_counter))
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
        self._decision: decisions.Decision | None = None
        self._decision_memo: dict[int | None, tuple[list[tuple[int, str]], list[int], dict[str, Any]]] = {}
        self._ai_indices: list[int] | None = None
        # every trigger check's measures and label, in order (engine/layers/checks.py: a resumed replay
        # reads them to find the first step a changed trigger acts at)
        self.checks: list[TriggerCheck] = []
        uses_fraction = any(kind == "fraction" for c in self.trigger_clauses for kind, _ in c) or self.keep[0] == "fraction"
        # state mode runs in before_model, which has no request model to read a profile from
        if mode == "state" and uses_fraction and self.window_for(None) is None:
            raise ThresholdError(_PROFILE_REQUIRED)

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> Self:
        s = config.summarization
        return cls(context, trigger=s.trigger, keep=s.keep, trim_tokens_to_summarize=s.trim_tokens_to_summarize,
                   summary_prompt=s.summary_prompt, mode=s.mode,
                   summarizer=context.summarizer if context.summarizer is not None else s.summarizer,
                   overflow_fallback=s.overflow_fallback, history_dir=s.history_dir,
                   max_output_tokens=config.model.max_output_tokens, provider=config.model.provider, style=s.style)

    def grown_from(self, changed: int) -> bool:
        """The agent prompt in this layer's units is scaled by a ratio read over the thread's first
        PROMPT_RATIO_MESSAGES messages (`_agent_prompt`): a thread that changes among them moves it."""
        uses_ratio = self.counter is not self.context.counter and self.context.calibration is not None
        return not (uses_ratio and changed < PROMPT_RATIO_MESSAGES)

    def thread_grew(self, thread: Any, old_length: int) -> bool:
        if self._ai_indices is not None:  # the thread's AI positions, the new messages' added
            messages = thread.messages
            self._ai_indices.extend(i for i in range(old_length, len(messages)) if isinstance(messages[i], AIMessage))
        return True

    # settings that act only when the layer summarizes (the cutoff, the summary's text, its file)
    _ON_SUMMARY = frozenset({"keep", "trim_tokens_to_summarize", "summary_prompt", "summarizer", "model_name",
                             "history_dir", "skill_file_read_tool_names"})

    def first_change(self, old: EngineConfig, new: EngineConfig, run: Any) -> int:
        """A new trigger acts first where its label differs from the one recorded; the settings used when
        summarizing act first at the first summary decided, or at the first state-mode overflow (which
        summarizes below the trigger with `keep`); the mode, style and fallback from the start."""
        changed = changed_fields(old.summarization, new.summarization)
        if changed - self._ON_SUMMARY - {"trigger"}:
            return 0
        checks = checks_of(run, self.layer)
        first = NEVER
        if "trigger" in changed:
            first = first_trigger_change(checks, self.trigger_clauses)
        if changed - {"trigger"}:
            first = min(first, first_fired(checks))
            if self.mode == "state":  # `_state_overflow`: a request over the window summarizes with `keep`
                first = min(first, next((s.index for s in run.steps for e in s.events
                                         if e.layer == self.layer and e.kind.startswith("overflow")), NEVER))
        return first

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
        """The last AI message's reported total, when its provider is the model's (LangChain's rule)."""
        return reported_total(messages, self.provider, self.model)

    def _fired(self, messages: Sequence[BaseMessage], total: int, model: Any, *, request: bool = False,
               budget: int | None = None, forced: bool = False) -> str | None:
        """The trigger clause that fires, if any; the decision (engine.thread.decisions) is recorded either way.
        `request`: `total` counts the whole request (Deep Agents), else the state's messages (LangChain).
        The check is kept with its measures and the label the layer acts on (engine/layers/checks.py): the
        clause, else "input_budget" when `total` is over Deep Agents' `budget` (view mode), else "overflow"
        when the model refused the request (`forced`); the caller decides those two as the label says."""
        window = self.window_for(model)
        reported = self._reported_tokens(messages)
        fired = fired_clause(self.trigger_clauses, message_count=len(messages), total_tokens=total,
                             window=window, reported_tokens=reported) if self.trigger_clauses else None
        label = fired if fired is not None else (
            "input_budget" if budget is not None and total > budget else "overflow" if forced else None)
        step = self.current_step()
        check = TriggerCheck(step if step is not None else -1, len(messages), total, reported, window, budget, label,
                             request)
        if label is None and step is not None:
            # nothing fired, so nothing amends the decision: made with the run's others when the log is read
            # (`decisions_for`, the fields `_decision_parts` gives), ~6 % of a replay when made one by one
            self._decision = None
            if not decisions.defer(self, check, step):
                self._record_decision(len(messages), total, reported, window, fired, request)
        else:
            self._record_decision(len(messages), total, reported, window, fired, request)
        self.checks.append(check)
        return fired

    def _quantity(self, request: bool) -> str:
        """What this layer's trigger counts, in words (the legend and the Step page say it)."""
        counter = self.counter
        if getattr(counter, "name", "") == "approximate":
            how = "chars/4, usage-scaled" if scales_with_usage(counter) else "chars/4"
        elif counter is self.context.counter:
            # the run's counter: the provider's tokens where the thread's usage calibrates it, else ours
            how = ("provider tokens" if self.context.calibration is not None
                   else f"{getattr(counter, 'name', 'our')} estimate")
        else:
            how = str(getattr(counter, "name", "its own counter"))
        if request:
            return f"Deep Agents' count of the request ({how}; system prompt, tools, agent prompt included)"
        return f"LangChain's count of the state's messages ({how}; no system prompt or tools)"

    def _record_decision(self, n_messages: int, total: int, reported: int | None, window: int | None,
                         fired: str | None, request: bool) -> None:
        layer, rule, measured, threshold, did, quantity, unit, series, op, expression, reason, detail = \
            self._decision_parts(n_messages, total, reported, window, fired, request)
        self._decision = decisions.record(layer, rule, measured=measured, threshold=threshold, fired=did,
                                          quantity=quantity, unit=unit, series=series, op=op, expression=expression,
                                          reason=reason, **detail)

    def _levels(self, window: int | None) -> tuple[list[tuple[int, str]], list[int], dict[str, Any]]:
        """The trigger's token levels and message counts under `window`, and the detail every decision
        carries (the keep level, the message clauses): the same for every check of a run's window."""
        memo = self._decision_memo
        hit = memo.get(window)
        if hit is None:
            tokens: list[tuple[int, str]] = []
            counts: list[int] = []
            for clause in self.trigger_clauses:
                for kind, value in clause:
                    if kind == "tokens":
                        tokens.append((int(value), ""))
                    elif kind == "fraction" and window:
                        tokens.append((fraction_threshold(window, float(value)), f"{value} × {window:,}"))
                    elif kind == "messages":
                        counts.append(int(value))
            keep = self.keep_tokens(window)
            detail: dict[str, Any] = {"keep_tokens": keep} if keep is not None else {}
            if tokens and counts:  # the message clauses fire too, but draw no token level
                detail["message_clauses"] = [f"messages:{n}" for n in counts]
            hit = memo[window] = (tokens, counts, detail)
        return hit

    def _decision_parts(self, n_messages: int, total: int, reported: int | None, window: int | None,
                        fired: str | None, request: bool) -> tuple[Any, ...]:
        """The fields of the decision (engine.thread.decisions.Decision, but its step) for one check."""
        tokens, counts, base = self._levels(window)
        detail = dict(base)
        rule = f"{self.mode} summarization trigger"
        measured = max(total, reported) if reported is not None else total
        if tokens:
            threshold, expression = min(tokens)
            reason = "" if fired is None or measured >= threshold else f"the clause {fired} fired"
            if reported is not None and reported > total:
                reason = (reason + "; " if reason else "") + _REPORTED_COUNTS
            return (self.layer, rule, measured, threshold, fired is not None, self._quantity(request), "tokens",
                    "summarization", ">=", expression,
                    reason if fired is not None or reason.startswith("the last") else "", detail)
        if counts:
            threshold = min(counts)
            return (self.layer, rule, n_messages, threshold, fired is not None, "messages in the state", "messages",
                    "messages", ">=", f"messages:{threshold}", "", detail)
        return (self.layer, rule, measured, None, False, self._quantity(request), "tokens", "summarization", ">=",
                "", _NEVER_FIRES, detail)

    def decisions_for(self, checks: Sequence[TriggerCheck]) -> list[decisions.Decision]:
        """The decisions this layer records for `checks`' measures under its own trigger and keep (a resumed
        replay relabels the decisions it keeps; a caller's amendment is not part of them).

        A check that did not fire (the bulk of a run) is made inline, `_decision_parts` unrolled with the
        label None, the decision's fields set at once (a resume relabels every step before it: ~15,000
        on a 16k thread); a fired one through `_decision_parts`."""
        out: list[decisions.Decision] = []
        append, parts, levels = out.append, self._decision_parts, self._levels
        make, new, set_fields = decisions.Decision, object.__new__, object.__setattr__
        rule, layer = f"{self.mode} summarization trigger", self.layer
        quantity = {False: self._quantity(False), True: self._quantity(True)}
        by_window: dict[int | None, Any] = {}
        for c in checks:
            window, total, reported, fired = c.window, c.tokens, c.reported_tokens, c.fired
            if fired is not None:
                clause = fired if fired not in ("input_budget", "overflow") else None
                f = parts(c.messages, total, reported, window, clause, c.request)
                append(make(f[0], f[1], c.step, *f[2:]))
                continue
            hit = by_window.get(window)
            if hit is None:
                tokens, counts, base = levels(window)
                hit = by_window[window] = (min(tokens) if tokens else None, min(counts) if counts else None, base)
            level, count, base = hit
            over = reported is not None and reported > total
            measured = reported if over else total
            if level is not None:
                fields = {"layer": layer, "rule": rule, "step": c.step, "measured": measured, "threshold": level[0],
                          "fired": False, "quantity": quantity[c.request], "unit": "tokens", "series": "summarization",
                          "op": ">=", "expression": level[1], "reason": _REPORTED_COUNTS if over else "",
                          "detail": dict(base)}
            elif count is not None:
                fields = {"layer": layer, "rule": rule, "step": c.step, "measured": c.messages, "threshold": count,
                          "fired": False, "quantity": "messages in the state", "unit": "messages",
                          "series": "messages", "op": ">=", "expression": f"messages:{count}", "reason": "",
                          "detail": dict(base)}
            else:
                fields = {"layer": layer, "rule": rule, "step": c.step, "measured": measured, "threshold": None,
                          "fired": False, "quantity": quantity[c.request], "unit": "tokens", "series": "summarization",
                          "op": ">=", "expression": "", "reason": _NEVER_FIRES, "detail": dict(base)}
            d = new(make)
            set_fields(d, "__dict__", fields)
            append(d)
        return out

    def keep_tokens(self, window: int | None) -> int | None:
        """`keep` as a token level (for the chart's keep line), or None when it counts messages."""
        kind, value = self.keep
        if kind == "tokens":
            return int(value)
        if kind == "fraction" and window:
            return fraction_threshold(window, float(value))
        return None

    def _decided(self, *, fired: bool, reason: str) -> None:
        """Correct this call's decision: the trigger fired but nothing was summarized, or another limit fired."""
        decision = getattr(self, "_decision", None)
        if decision is not None:
            self._decision = decisions.amend(decision, fired=fired, reason=reason)

    def _agent_prompt(self) -> int:
        """The agent prompt a recorded session's agent sent at this step (engine.recorded.calibration), in this
        layer's counter's units: the run's own counter counts in the provider's tokens already; another one
        (LangChain's approximation) converts by the thread's own ratio of the two counts of its messages."""
        prompt = self.context.agent_prompt(self.current_step())
        if not prompt or self.counter is self.context.counter:
            return prompt
        ratio = getattr(self, "_prompt_ratio", None)
        if ratio is None:
            thread = self.context.thread
            body = list(thread.messages[:PROMPT_RATIO_MESSAGES]) if thread is not None else []
            ours = sum(self.counter.count_message(m) for m in body)
            theirs = sum(self.context.counter.count_message(m) for m in body)
            ratio = self._prompt_ratio = ours / theirs if theirs else 1.0
        return round(prompt * ratio)

    # -- summary text ---------------------------------------------------------------------
    def _write(self, to_summarize: Sequence[BaseMessage]) -> Written:
        if not to_summarize:
            return Written(NO_HISTORY, "", False)
        counter = self.counter
        # LangChain's approximate count of a list is the sum of its messages' counts, scaled by a
        # factor >= 1 (engine.layers.approximate): a floor that spares counting what cannot fit
        floor = counter.count_message if scales_with_usage(counter) else None
        trimmed = trim_for_summary(to_summarize, self.trim_tokens_to_summarize, ScaledCounter(counter), floor=floor)
        if not trimmed:
            return Written(TOO_LONG, "", True)
        # kept lazily (references to the messages): a prompt per event was most of a Run's memory
        prompt = summary_prompt(self.summary_prompt, trimmed)
        # a summarizer that says it reads the prompt lazily (the offline one) gets it unrendered
        lazy = getattr(self.summarizer, "lazy_prompt", False)
        text = self.summarizer(trimmed, prompt_text=cast(str, prompt) if lazy else str(prompt))
        if not isinstance(text, str):
            raise TypeError(f"`summarizer` must return a str, got {type(text).__name__}.")
        return Written(text.strip(), prompt, False)

    def _emit_summary(self, written: Written, *, trigger: str, to_summarize: Sequence[BaseMessage],
                      kept: Sequence[BaseMessage], new_list: Sequence[BaseMessage], before_tokens: int,
                      cutoff: int, summary: HumanMessage, history_path: str | None) -> None:
        removed = [m.id for m in to_summarize]
        self.emit("summarize", tokens_before=before_tokens, tokens_after=self.event_counter(new_list),
                  message=f"{self.mode}: summarized {plural(len(removed), 'message')}, kept {len(kept)} ({trigger})",
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
        # a policy applied to a recorded session decides on the request its agent sent: its prompt included
        lead = (counter.count_message(system) if system else 0) + hit[1] + self._agent_prompt()
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

