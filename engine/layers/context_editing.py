"""The `context_editing` layer: old tool results (and thinking) cleared in place, the history kept.

One layer for the published variants of "clear old tool results", chosen by `context_editing.style`
(the rules themselves are pure functions in `engine.layers.context_editing_rules`):

| style | where | trigger | what is cleared |
|---|---|---|---|
| `langchain` | the request only (`wrap_model_call`; the state is untouched) | messages > `trigger` tokens | LangChain's `ClearToolUsesEdit` |
| `anthropic` | the request only (the API edits server-side, the client keeps its history) | whole prompt > `trigger` input tokens | `clear_tool_uses_20250919`, and `clear_thinking_20251015` when `keep_thinking_turns` is set |
| `inspect` | the state (Inspect keeps its compacted input) | prompt + tools + messages > `trigger` | `CompactionEdit` |
| `opencode` | the state (parts are marked `compacted`) | every user turn | OpenCode's prune |
| `claude-code` | the state (the transcript records a `microcompact_boundary`) | gap since the last assistant message > `idle_minutes` | time-based microcompact |

Inside a user's `create_agent` (no replay thread) a `langchain`-style request is deep-copied first,
exactly as `ContextEditingMiddleware.wrap_model_call` does. In a replay only the messages an edit
changes are copied (each once, re-used at later steps): the state is untouched either way, and the
calibrated per-message counts of the untouched messages stay theirs.

Events: `clear` (tool results and inputs) and `clear_thinking`, with the cleared ids, the trigger
and the tokens before and after; in the request-only styles an event is emitted when the set of
cleared results grows, not again at every later step that re-applies it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any, ClassVar

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage, SystemMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from engine.base.errors import ConfigError
from engine.base.wording import plural
from engine.config.schema import EngineConfig
from engine.config.sections import ContextEditingConfig
from engine.layers import context_editing_rules as rules
from engine.layers.base import ContextLayer, LayerContext
from engine.recorded.history import starts_turn
from engine.thread import decisions
from engine.tokens.counters import ApproximateCounter, TokenCounter, approximate_counter

VIEW_STYLES = frozenset({"langchain", "anthropic"})


def idle_minutes(messages: Sequence[BaseMessage], timestamps: dict[str, str]) -> float | None:
    """Minutes between the last assistant message and the newest message after it (None: not recorded)."""
    last_ai: datetime | None = None
    newest: datetime | None = None
    for m in reversed(messages):
        when = _parse(timestamps.get(m.id or ""))
        if isinstance(m, AIMessage):
            last_ai = when
            break
        if newest is None and when is not None:
            newest = when
    if last_ai is None or newest is None:
        return None
    return (newest - last_ai).total_seconds() / 60


def _parse(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


class ContextEditingLayer(ContextLayer):
    """Clears old tool results the way `config.style` says (see the module docstring)."""

    layer = "context_editing"
    # how a checkpoint keeps each run-time attribute (engine/layers/checkpoint.py): the ids already
    # reported as cleared are dicts only added to (a set has no order to cut at a checkpoint's length)
    checkpoint_kinds: ClassVar[dict[str, str]] = {"_shown": "ordered", "_thinking_shown": "ordered",
                                                  "_copies": "memo"}

    def __init__(self, context: LayerContext | None = None, *, config: ContextEditingConfig | None = None,
                 **settings: Any) -> None:
        super().__init__(context)
        cfg = config or ContextEditingConfig()
        self.reconfigure(ContextEditingConfig.model_validate({**cfg.model_dump(), **settings}) if settings else cfg)

    def reconfigure(self, config: ContextEditingConfig) -> None:
        """Run with other settings from the next call on (an agent built once can be re-used)."""
        self.config = config
        self.settings = rules.settings_for(config)
        self._shown: dict[str, None] = {}  # request-only styles: results already reported as cleared
        self._thinking_shown: dict[str, None] = {}
        self._copies: dict[tuple[int, str], BaseMessage] = {}

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> ContextEditingLayer:
        return cls(context, config=config.context_editing)

    # -- thresholds --------------------------------------------------------------------------------
    def threshold_tokens(self) -> int | None:
        """The trigger as tokens (fractions of the window as LangChain resolves them), or None."""
        trigger = self.settings.trigger
        if trigger is None:
            return None
        kind, value = trigger
        if kind == "tokens":
            return int(value)
        window = self.window_tokens()
        if not window:
            raise ConfigError("a fraction trigger needs the context window", key="context_editing.trigger")
        return max(1, int(window * float(value)))

    @property
    def langchain_counter(self) -> TokenCounter:
        """What the `langchain` style decides with: LangChain's own counter.

        langchain 1.5.2 `ContextEditingMiddleware._resolve_token_counter` (token_count_method
        "approximate", its default) returns `count_tokens_approximately` itself: 4 characters per
        token whatever the model (the 3.3 for Claude is SummarizationMiddleware's choice, not this
        one's), no usage scaling, and `ClearToolUsesEdit.apply` counts the messages alone. So where
        the layers measure with the approximate counter (`tokens.layer_counter: approximate`, the
        `langchain` preset) that counter is used unscaled at 4.0; with another layer counter, that one.
        """
        chosen = self.decision_counter
        return approximate_counter(4.0) if isinstance(chosen, ApproximateCounter) else chosen

    def _prompt_tokens(self, system: SystemMessage | None, tools: Sequence[Any]) -> int:
        """What the request carries besides its messages: system prompt, tool schemas, the agent prompt."""
        total = self.context.agent_prompt(self.current_step())
        if system is not None:
            total += self.counter.count_message(system)
        if tools:
            total += self.counter.count_tools(list(tools))
        return total

    def _thread_prompt(self) -> SystemMessage | None:
        thread = self.context.thread
        if thread is None:
            return None
        prompt = thread.system_prompt
        leading = [m for m in thread.messages[:8] if isinstance(m, SystemMessage)]
        if prompt is None and leading:
            prompt = "\n\n".join(str(m.content) for m in leading)
        return SystemMessage(content=prompt, id="system") if prompt else None

    # -- the request-only styles ---------------------------------------------------------------------
    def _prepare(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        if not request.messages:
            return request
        in_replay = self.context.thread is not None
        original: list[BaseMessage] = list(request.messages)
        messages = original if in_replay else rules.deep_copied(original)
        cfg = self.settings
        edit = rules.Edit(messages)
        threshold = self.threshold_tokens()
        counted_with: dict[str, Any] = {}
        if cfg.style == "langchain":
            count = self.langchain_counter
            if threshold is not None:
                edit = rules.clear_tool_uses_langchain(
                    messages, count=count, trigger=threshold, clear_at_least=cfg.clear_at_least, keep=cfg.keep,
                    clear_tool_inputs=bool(cfg.clear_tool_inputs), exclude_tools=cfg.exclude_tools,
                    placeholder=cfg.placeholder)
            # the quantity the trigger compares, in LangChain's count (the event's `request_tokens`)
            request_tokens = count(messages)
            counted_with = {"counter": getattr(count, "name", type(count).__name__)}
        else:  # anthropic: the API counts the whole prompt
            request_tokens = self._prompt_tokens(request.system_message, request.tools) + self.counter(messages)
            if threshold is not None:
                edit = rules.clear_tool_uses_anthropic(
                    messages, input_tokens=request_tokens, count=self.counter, trigger=threshold, keep=cfg.keep,
                    clear_at_least=cfg.clear_at_least, exclude_tools=cfg.exclude_tools,
                    clear_tool_inputs=cfg.clear_tool_inputs, placeholder=cfg.placeholder)
            if cfg.keep_thinking_turns is not None:
                thinking = rules.clear_thinking(edit.messages, keep=cfg.keep_thinking_turns)
                edit.messages = thinking.messages
                edit.cleared_thinking_ids = thinking.cleared_thinking_ids
        if in_replay:
            edit.messages = self._stable(original, edit.messages)
        quantity = ("the request's messages" if cfg.style == "langchain"
                    else "the whole prompt (system, tools, messages, agent prompt)")
        self._decide(request_tokens, threshold, edit.changed, quantity, **counted_with)
        self._report_view(original, edit, request_tokens, threshold, **counted_with)
        if in_replay and not edit.changed:
            return request
        return request.override(messages=edit.messages)  # type: ignore[arg-type]

    def _decide(self, measured: int, threshold: int | None, changed: bool, quantity: str, **detail: Any) -> None:
        """The trigger's decision (engine.thread.decisions): reached at `>` (ClearToolUsesEdit acts only above it)."""
        reached = threshold is not None and measured > threshold
        decisions.record(self.layer, f"{self.settings.style} context editing", measured=measured, threshold=threshold,
                         fired=changed, quantity=quantity, op=">",
                         series="view" if "prompt" in quantity or quantity == "the request" else "context editing",
                         reason="nothing left to clear" if reached and not changed else
                         ("no trigger: never clears" if threshold is None else ""), **detail)

    def _stable(self, original: list[BaseMessage], edited: list[BaseMessage]) -> list[BaseMessage]:
        """The same copy for the same cleared message at every step (counts and prefix sums re-used)."""
        if len(original) != len(edited):
            return edited
        out = []
        for before, after in zip(original, edited, strict=True):
            if after is not before:
                key = (id(before), repr((after.content, getattr(after, "tool_calls", None),
                                         after.response_metadata.get("context_editing"))))
                after = self._copies.setdefault(key, after)
            out.append(after)
        return out

    def _report_view(self, original: list[BaseMessage], edit: rules.Edit, request_tokens: int,
                     threshold: int | None, **extra: Any) -> None:
        new = [c for c in edit.cleared_call_ids if c not in self._shown]
        if new:
            self._shown.update(dict.fromkeys(new))
            self._emit_clear(original, edit, request_tokens, threshold, newly=new, **extra)
        new_thinking = [t for t in edit.cleared_thinking_ids if t not in self._thinking_shown]
        if new_thinking:
            self._thinking_shown.update(dict.fromkeys(new_thinking))
            self.emit("clear_thinking", tokens_before=self.counter(original), tokens_after=self.counter(edit.messages),
                      message=f"{self.config.style}: thinking of "
                              f"{plural(len(edit.cleared_thinking_ids), 'earlier assistant message')} cleared",
                      style=self.config.style, cleared_ids=list(edit.cleared_thinking_ids), newly_cleared=new_thinking,
                      keep_thinking_turns=self.settings.keep_thinking_turns, view=True)

    def wrap_model_call(self, request: ModelRequest[Any],
                        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]) -> Any:
        if self.config.style not in VIEW_STYLES:
            return handler(request)
        return handler(self._prepare(request))

    async def awrap_model_call(self, request: ModelRequest[Any],
                               handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]) -> Any:
        if self.config.style not in VIEW_STYLES:
            return await handler(request)
        return await handler(self._prepare(request))

    # -- the state styles ----------------------------------------------------------------------------
    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        cfg = self.settings
        if cfg.style in VIEW_STYLES:
            return None
        messages: list[BaseMessage] = list(state["messages"])
        if not messages:
            return None
        threshold = self.threshold_tokens()
        request_tokens = self._prompt_tokens(self._thread_prompt(), self.context.thread.tools if self.context.thread
                                             else []) + self.counter(messages)
        trigger: dict[str, Any] = {}
        if cfg.style == "inspect":
            self._decide(request_tokens, threshold, threshold is not None and request_tokens > threshold,
                         "the prompt, tools and messages")
            if threshold is None or request_tokens <= threshold:
                return None
            edit = rules.Edit(messages)
            if cfg.keep_thinking_turns is not None:
                edit = rules.clear_thinking(messages, keep=cfg.keep_thinking_turns, per_message=True)
            tools = rules.clear_tool_uses_inspect(edit.messages, keep_tool_uses=cfg.keep,
                                                  keep_tool_inputs=not cfg.clear_tool_inputs,
                                                  exclude_tools=cfg.exclude_tools, placeholder=cfg.placeholder)
            tools.cleared_thinking_ids = edit.cleared_thinking_ids
            edit = tools
        elif cfg.style == "opencode":
            if not starts_turn(messages[-1]):
                return None  # OpenCode prunes when a turn ends, so the next turn's first call sees it
            # the history as the previous turn left it (OpenCode prunes before the new message is added)
            edit = rules.prune_opencode(messages[:-1], protect_tokens=cfg.keep_tokens or rules.OPENCODE_PRUNE_PROTECT,
                                        minimum_tokens=cfg.clear_at_least, protected_tools=cfg.exclude_tools,
                                        placeholder=cfg.placeholder)
            edit.messages.append(messages[-1])
        else:  # claude-code
            if cfg.idle_minutes is None:
                self._decide(request_tokens, threshold, threshold is not None and request_tokens > threshold,
                             "the request")
                if threshold is None or request_tokens <= threshold:
                    return None
            else:
                gap = idle_minutes(messages, self.context.thread.timestamps if self.context.thread else {})
                decisions.record(self.layer, "claude-code microcompact", measured=None if gap is None else round(gap),
                                 threshold=round(cfg.idle_minutes), fired=gap is not None and gap > cfg.idle_minutes,
                                 quantity="minutes since the last assistant message", unit="minutes", op=">",
                                 series="idle minutes")
                if gap is None or gap <= cfg.idle_minutes:
                    return None
                trigger["idle_minutes"] = round(gap, 2)
            edit = rules.microcompact_claude_code(messages, keep=cfg.keep,
                                                  tools=cfg.only_tools if cfg.only_tools is not None
                                                  else rules.CLAUDE_CODE_COMPACTABLE_TOOLS,
                                                  placeholder=cfg.placeholder)
        if not edit.changed:
            return None
        self._emit_clear(messages, edit, request_tokens, threshold, newly=edit.cleared_call_ids, **trigger)
        if edit.cleared_thinking_ids:
            self.emit("clear_thinking", message=f"inspect: thinking of {plural(len(edit.cleared_thinking_ids), 'message')} cleared",
                      style=cfg.style, cleared_ids=list(edit.cleared_thinking_ids),
                      keep_thinking_turns=cfg.keep_thinking_turns)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *edit.messages]}

    def _emit_clear(self, original: list[BaseMessage], edit: rules.Edit, request_tokens: int, threshold: int | None,
                    *, newly: list[str], **extra: Any) -> None:
        by_call = {m.tool_call_id: m.id for m in original if isinstance(m, ToolMessage)}
        before, after = self.counter(original), self.counter(edit.messages)
        what = f"{plural(len(edit.cleared_call_ids), 'old tool result')} cleared"
        if edit.cleared_input_ids:
            what += f", {plural(len(edit.cleared_input_ids), 'call input')}"
        self.emit("clear", tokens_before=before, tokens_after=after,
                  message=f"{self.config.style}: {what} (saved {before - after:,} tokens)",
                  style=self.config.style, cleared_ids=[by_call.get(c) for c in edit.cleared_call_ids],
                  tool_call_ids=list(edit.cleared_call_ids), newly_cleared=list(newly),
                  cleared_inputs=list(edit.cleared_input_ids), removed_ids=list(edit.removed_ids),
                  request_tokens=request_tokens, threshold_tokens=threshold, keep=self.settings.keep,
                  placeholder=self.settings.placeholder, view=self.config.style in VIEW_STYLES, **extra)
