"""The user's own LangChain `AgentMiddleware`, loaded from the config and replayed as a layer.

`load_middleware` imports the class a `middleware:` entry names and calls it with its kwargs (a kwargs
value `{use: ..., kwargs: ...}` is built the same way, so LangChain's `ClearToolUsesEdit` or a chat
model can be configured in YAML; the string `$model` is the replay's model). What `use:` may name is
checked before anything is imported (`engine.layers.user_code`: a class deriving from AgentMiddleware,
found in the module's source), and again before it is called. Every failure is one ConfigError naming
the entry's key.

`observe` wraps any middleware that is not one of our layers: its hooks are called exactly as
`create_agent` would call them, and what each hook changed — the model request before and after a
`wrap_model_call`, the state before and after a `before_*`/`after_*` update, a tool result before and
after `wrap_tool_call` — becomes an event of the middleware's name (messages removed, replaced,
inserted; tokens before → after). A middleware that emits our events itself is not diffed. A hook
that raises records an `error` event and is skipped for that call; the replay goes on.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.exceptions import ModelError
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.graph.message import add_messages
from langgraph.types import Command

from engine.base.errors import ConfigError
from engine.base.redaction import describe_error
from engine.config.sections import MiddlewareSpec
from engine.layers.base import ContextLayer, LayerContext
from engine.layers.request_diff import MessageDiff, reconcile, same_message, same_system, tool_names
from engine.layers.user_code import (
    MIDDLEWARE_BASES,
    VALUE_BASES,
    UsePlan,
    article,
    base_names,
    check_use,
    derives,
    split_use,
)
from engine.thread import events
from engine.thread.model import stable_id

# A kwargs value that stands for the replay's model: never called, its profile carries the window
# (what `request.model` is inside the replay), e.g. SummarizationMiddleware's `model`.
MODEL_VALUE = "$model"
# LangChain's ContextSize tuple, ("messages", 20): written `[messages, 20]` in YAML, passed as a tuple.
CONTEXT_SIZE_TYPES = frozenset({"messages", "tokens", "fraction"})
STATE_HOOKS: tuple[str, ...] = ("before_agent", "before_model", "after_model", "after_agent")
WRAP_HOOKS: tuple[str, ...] = ("wrap_model_call", "wrap_tool_call")


# -- loading -------------------------------------------------------------------------------------
def resolve(use: str, *, key: str, bases: tuple[type, ...] = MIDDLEWARE_BASES) -> type:
    """The class `package.module:Class` names, checked before it is imported (engine/layers/user_code.py)
    and again before it is returned: a class deriving from one of `bases`, or a ConfigError."""
    check_use(use, key=key, bases=bases)
    module_name, attrs = split_use(use)
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:  # the module's own import errors are the user's to see, in one line
        raise ConfigError(f"cannot import {module_name!r} ({describe_error(exc)})", key=f"{key}.use") from None
    for part in attrs:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"{module_name!r} has no {'.'.join(attrs)!r}", key=f"{key}.use") from None
    if not derives(obj, bases):  # the source said a class like that; the module made something else
        what = "a class" if isinstance(obj, type) else article(type(obj).__name__)
        raise ConfigError(f"{use} is refused: it is {what} not deriving from {base_names(bases)}; nothing was called",
                          key=f"{key}.use")
    return cast(type, obj)


def value_uses(v: Any, *, key: str) -> list[tuple[str, str]]:
    """`(key, use)` of every `{use: ..., kwargs: ...}` value inside a kwargs value, outermost first."""
    out: list[tuple[str, str]] = []
    stack: list[tuple[Any, str]] = [(v, key)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, dict):
            if "use" in node and set(node) <= {"use", "kwargs"}:
                out.append((at, _nested_use(node["use"], key=at)))
                kwargs = node.get("kwargs") or {}
                stack.extend((x, f"{at}.kwargs.{k}") for k, x in reversed(list(kwargs.items()))
                             if isinstance(kwargs, dict))
            else:
                stack.extend((x, f"{at}.{k}") for k, x in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((x, f"{at}.{i}") for i, x in reversed(list(enumerate(node))))
    return out


def _nested_use(use: Any, *, key: str) -> str:
    try:
        return MiddlewareSpec.model_validate({"use": use}).use
    except ValueError:
        raise ConfigError(f"expected a 'package.module:Class' string, got {str(use)[:80]!r}", key=f"{key}.use") from None


def spec_uses(spec: MiddlewareSpec, *, key: str) -> list[tuple[str, str, tuple[type, ...]]]:
    """`(key, use, allowed bases)` of a middleware entry and of every `use:` inside its kwargs."""
    nested = [u for k, v in spec.kwargs.items() for u in value_uses(v, key=f"{key}.kwargs.{k}")]
    return [(key, spec.use, MIDDLEWARE_BASES), *((k, u, VALUE_BASES) for k, u in nested)]


def plan_middleware(config: Any) -> list[UsePlan]:
    """The static check of every `use:` of the config's enabled middleware, nothing imported: what each
    would import (for the dashboard's confirmation and the CLI's refusal), or the first ConfigError."""
    plans: list[UsePlan] = []
    for i, spec in enumerate(config.middleware):
        if spec.enabled:
            plans.extend(check_use(use, key=k, bases=bases) for k, use, bases in spec_uses(spec, key=f"middleware.{i}"))
    return plans


def build(use: str, kwargs: Any, context: LayerContext, *, key: str,
          bases: tuple[type, ...] = MIDDLEWARE_BASES) -> Any:
    """`use(**kwargs)`, kwargs values built recursively; a ConfigError names the key that failed."""
    target = resolve(use, key=key, bases=bases)
    if not isinstance(kwargs, dict):
        raise ConfigError(f"kwargs must be a mapping, got {type(kwargs).__name__}", key=f"{key}.kwargs")
    args = {str(k): _value(v, context, key=f"{key}.kwargs.{k}") for k, v in kwargs.items()}
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):  # a class without a signature: let the call say it
        signature = None
    if signature is not None:
        try:
            signature.bind(**args)
        except TypeError as exc:
            raise ConfigError(f"{use} does not take these kwargs ({exc})", key=f"{key}.kwargs") from None
    try:
        return target(**args)
    except Exception as exc:
        raise ConfigError(f"{use}(...) raised {describe_error(exc)}", key=f"{key}.kwargs") from None


def _value(v: Any, context: LayerContext, *, key: str) -> Any:
    if v == MODEL_VALUE:
        return config_model(context.window_tokens)
    if isinstance(v, dict):
        if "use" in v and set(v) <= {"use", "kwargs"}:
            return build(_nested_use(v["use"], key=key), v.get("kwargs") or {}, context, key=key, bases=VALUE_BASES)
        return {k: _value(x, context, key=f"{key}.{k}") for k, x in v.items()}
    if isinstance(v, list):
        if len(v) == 2 and isinstance(v[0], str) and v[0] in CONTEXT_SIZE_TYPES and isinstance(v[1], (int, float)) and not isinstance(v[1], bool):
            return (v[0], v[1])  # YAML has no tuples; LangChain's ContextSize is one (summarization.py)
        return [_value(x, context, key=f"{key}.{i}") for i, x in enumerate(v)]
    return v


def load_middleware(spec: MiddlewareSpec, context: LayerContext, *, key: str = "middleware") -> AgentMiddleware:
    """A fresh instance of the middleware `spec` names (one per replay: middleware may keep state).

    Every `use:` of the entry, its kwargs' included, passes the static check before anything of it is
    imported; each class is checked again after its import, before it is called."""
    try:
        spec = MiddlewareSpec.model_validate(spec.model_dump())
    except ValueError as exc:  # pragma: no cover - a spec that passed the config passes again
        raise ConfigError(str(exc), key=key) from None
    for at, use, bases in spec_uses(spec, key=key):
        check_use(use, key=at, bases=bases)
    obj = build(spec.use, spec.kwargs, context, key=key)
    if not isinstance(obj, AgentMiddleware):
        raise ConfigError(f"{spec.use} made a {type(obj).__name__}, not a LangChain AgentMiddleware",
                          key=f"{key}.use")
    return obj


def check_middleware(config: Any, context: LayerContext | None = None) -> None:
    """Load every enabled middleware of `config` once, so a bad one is a ConfigError now, not mid-run."""
    for i, spec in enumerate(config.middleware):
        if spec.enabled:
            load_middleware(spec, context or LayerContext(), key=f"middleware.{i}")


# The replay's model as a kwargs value. Nothing in a replay may call a model, so a call is a clear
# error (LangChain's retry wrapper does not retry a non-retryable ModelError).
class ModelNotAvailable(ModelError):
    is_retryable = False


class ConfigModel(GenericFakeChatModel):
    """The replay's model as a middleware's kwarg: its profile is the window, and it writes nothing."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ConfigModel:
        return self

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        raise ModelNotAvailable("the replay's model ($model) writes nothing: give the middleware a summarizer "
                                "(e.g. `summarizer: {use: 'engine.summarizers:OfflineSummarizer'}`) or a real model")


def config_model(window_tokens: int | None) -> ConfigModel:
    """The model `$model` stands for: profile = the replay's window; a call is a ModelNotAvailable error."""
    return ConfigModel(messages=iter(()), profile={"max_input_tokens": window_tokens or 200_000})


# -- observing -----------------------------------------------------------------------------------
class ObservedMiddleware(ContextLayer):
    """A middleware that is not one of our layers, replayed as one: its hooks, plus derived events.

    `observe` makes a subclass per wrapped middleware that defines exactly the hooks the middleware
    overrides, so the replay driver and `create_agent` call the same hooks they would call on it.
    """

    inner: AgentMiddleware

    def __init__(self, inner: AgentMiddleware, context: LayerContext | None = None) -> None:
        super().__init__(context)
        self.inner = inner
        self.tools = list(getattr(inner, "tools", ()) or ())
        self._tools_tokens: dict[tuple[int, ...], int] = {}

    @property
    def name(self) -> str:
        return self.layer

    # -- what changed ----------------------------------------------------------------------------
    def _events_count(self) -> int:
        rec = events.current_recorder()
        return len(rec.events) if rec is not None else 0

    def _failed(self, hook: str, exc: BaseException) -> None:
        self.emit("error", severity="warning", hook=hook, error=describe_error(exc, 500),
                  message=f"{type(self.inner).__name__}.{hook} raised {describe_error(exc, 400)}; "
                          "its effect at this call is skipped")

    def _name_messages(self, messages: Sequence[Any], where: str) -> None:
        """Give new messages without an id a stable one (LangGraph would give a random uuid)."""
        for i, m in enumerate(messages):
            if isinstance(m, BaseMessage) and m.id is None:
                m.id = stable_id(self.layer, f"{self.current_step()}-{where}-{i}", m.content)

    def _payload(self, hook: str, diff: MessageDiff) -> dict[str, Any]:
        out: dict[str, Any] = {"hook": hook, "removed_ids": list(diff.removed), "replaced_ids": list(diff.replaced),
                               "inserted_ids": list(diff.inserted)}
        if diff.reordered:
            out["reordered"] = True
        return out

    def _request_tokens(self, request: ModelRequest[Any]) -> int:
        total = self.counter(request.messages)
        if request.system_message is not None:
            total += self.counter.count_message(request.system_message)
        key = tuple(id(t) for t in request.tools)
        if key not in self._tools_tokens:
            tools = cast(list[Any], list(request.tools))  # BaseTool objects or provider dicts; the counter takes both
            self._tools_tokens[key] = self.counter.count_tools(tools) if tools else 0
        return total + self._tools_tokens[key]

    def record_request(self, before: ModelRequest[Any], after: ModelRequest[Any]) -> ModelRequest[Any]:
        """Record how the middleware rewrote the request; the request with unchanged messages restored."""
        messages, diff = reconcile(before.messages, after.messages)
        if messages is not after.messages:
            # nothing changed: hand back the state's own list (the driver then shares it, no copy)
            kept = messages if messages is before.messages else list(messages)
            after = after.override(messages=cast(list[Any], kept))
        self._name_messages(after.messages, "view")
        system_changed = not same_system(before.system_message, after.system_message)
        old_tools, new_tools = tool_names(before.tools), tool_names(after.tools)
        if not (diff.changed or system_changed or old_tools != new_tools):
            return after
        payload = self._payload("wrap_model_call", diff)
        # the messages as this middleware left them (references, no copies): with several middlewares the
        # step's final view also holds the inner ones' rewrites, so the view alone misreports this one's "after"
        changed = set(diff.replaced) | set(diff.inserted)
        if changed:
            payload["_after_messages"] = {str(m.id): m for m in after.messages if str(m.id) in changed}
        parts = [diff.describe()] if diff.changed else []
        if system_changed:
            payload["system_changed"] = True
            parts.append("rewrote the system prompt")
        if old_tools != new_tools:
            payload["tools_added"] = [t for t in new_tools if t not in old_tools]
            payload["tools_removed"] = [t for t in old_tools if t not in new_tools]
            parts.append(f"tools {len(old_tools)} → {len(new_tools)}")
        self.emit("edit_request", tokens_before=self._request_tokens(before), tokens_after=self._request_tokens(after),
                  message="request: " + "; ".join(parts), **payload)
        return after

    def record_state(self, hook: str, before: Sequence[BaseMessage], update: dict[str, Any]) -> None:
        new = update.get("messages")
        if not isinstance(new, (list, tuple)):
            return
        self._name_messages(new, hook)
        after = cast(list[BaseMessage], add_messages(cast(list[Any], list(before)), list(new)))
        _, diff = reconcile(before, after)
        if diff.changed:
            self.emit("edit_state", tokens_before=self.counter(before), tokens_after=self.counter(after),
                      message="state: " + diff.describe(), **self._payload(hook, diff))

    def record_tool_result(self, recorded: Any, result: Any) -> None:
        if isinstance(result, ToolMessage) and isinstance(recorded, ToolMessage):
            self._name_messages([result], "tool")
            if same_message(recorded, result):
                return
            key = str(recorded.id)
            same_id = result.id == recorded.id
            diff = MessageDiff(replaced=(key,)) if same_id else MessageDiff(removed=(key,), inserted=(str(result.id),))
            self.emit("edit_tool_result", tokens_before=self.counter.count_message(recorded),
                      tokens_after=self.counter.count_message(result), tool_call_id=recorded.tool_call_id,
                      message=f"tool result of {recorded.name or 'a call'}: " + diff.describe(),
                      **self._payload("wrap_tool_call", diff))
        elif isinstance(result, Command) and isinstance(result.update, dict):
            new = result.update.get("messages")
            if isinstance(new, (list, tuple)):
                self._name_messages(new, "tool")
                before = [recorded] if isinstance(recorded, BaseMessage) else []
                _, diff = reconcile(before, list(new))
                if diff.changed:
                    self.emit("edit_tool_result", tokens_before=self.counter(before),
                              tokens_after=self.counter([m for m in new if isinstance(m, BaseMessage)]),
                              message="tool result: " + diff.describe(), **self._payload("wrap_tool_call", diff))

    # -- the hooks (installed on the per-middleware subclass by `observe`) -----------------------
    def _state_hook(self, hook: str, state: Any, runtime: Any) -> Any:
        before = list(state.get("messages", ()))
        mark = self._events_count()
        try:
            update = getattr(self.inner, hook)(state, runtime)
        except Exception as exc:
            self._failed(hook, exc)
            return None
        if isinstance(update, dict) and self._events_count() == mark:
            self.record_state(hook, before, update)
        return update

    def _wrap_model_call(self, request: ModelRequest[Any], handler: Callable[..., Any]) -> Any:
        mark = self._events_count()
        responses: list[Any] = []
        failures: list[BaseException] = []

        def observed(req: ModelRequest[Any]) -> Any:
            if self._events_count() == mark:
                req = self.record_request(request, req)
            try:
                response = handler(req)
            except BaseException as exc:  # an inner layer's or the model's failure is not this middleware's
                failures.append(exc)
                raise
            responses.append(response)
            return response

        try:
            return self.inner.wrap_model_call(request, observed)
        except Exception as exc:
            if any(exc is f for f in failures):
                raise
            self._failed("wrap_model_call", exc)
            return responses[-1] if responses else handler(request)

    def _wrap_tool_call(self, request: Any, handler: Callable[..., Any]) -> Any:
        mark = self._events_count()
        results: list[Any] = []
        failures: list[BaseException] = []

        def observed(req: Any) -> Any:
            try:
                result = handler(req)
            except BaseException as exc:
                failures.append(exc)
                raise
            results.append(result)
            return result

        try:
            out = self.inner.wrap_tool_call(request, observed)
        except Exception as exc:
            if any(exc is f for f in failures):
                raise
            self._failed("wrap_tool_call", exc)
            return results[-1] if results else handler(request)
        if results and self._events_count() == mark:
            self.record_tool_result(results[-1], out)
        return out


def _state_method(hook: str, original: Any) -> Any:
    def method(self: ObservedMiddleware, state: Any, runtime: Any) -> Any:
        return self._state_hook(hook, state, runtime)

    method.__name__ = hook
    for attr in ("__can_jump_to__",):  # create_agent reads the hook's jump targets from the function
        if hasattr(original, attr):
            setattr(method, attr, getattr(original, attr))
    return method


def overridden_hooks(mw: AgentMiddleware) -> list[str]:
    return [h for h in (*STATE_HOOKS, *WRAP_HOOKS) if getattr(type(mw), h) is not getattr(AgentMiddleware, h)]


def observe(mw: AgentMiddleware, context: LayerContext | None = None, *, name: str | None = None) -> AgentMiddleware:
    """`mw` replayed as a layer named `name` (default: its own name); our own layers are returned as is."""
    if isinstance(mw, ContextLayer):
        return mw
    inner = type(mw)
    namespace: dict[str, Any] = {"layer": name or mw.name, "state_schema": mw.state_schema,
                                 "__module__": __name__, "__qualname__": f"Observed{inner.__name__}"}
    for hook in overridden_hooks(mw):
        if hook in STATE_HOOKS:
            namespace[hook] = _state_method(hook, getattr(inner, hook))
        else:
            namespace[hook] = getattr(ObservedMiddleware, f"_{hook}")
    cls = type(f"Observed{inner.__name__}", (ObservedMiddleware,), namespace)
    return cls(mw, context)  # type: ignore[no-any-return]


__all__ = ["MODEL_VALUE", "ObservedMiddleware", "build", "check_middleware", "load_middleware", "observe",
           "plan_middleware", "resolve", "spec_uses", "value_uses"]
