"""OpenHands V0 trajectories: the event array `openhands/events/serialization/event.py` writes.

Each event is `{id, timestamp, source: user|agent|environment, message, action|observation,
args|extras, cause, content, tool_call_metadata {function_name, tool_call_id, model_response,
total_calls_in_response}, llm_metrics}`. The saved trajectory is the agent's history, from which
OpenHands already dropped null and agent-state events (`AgentController`, `filter_out`).

Messages follow `openhands/memory/conversation_memory.py`:
- an action with `tool_call_metadata` is part of one model response: the response's message
  (`model_response.choices[0].message`: content, all its `tool_calls`, `reasoning_content`) is one
  AIMessage, placed where its first action is; its `usage` is that call's recorded usage;
- an observation with `tool_call_metadata` is the ToolMessage answering `tool_call_id`, its text the
  observation's `content` (OpenHands may append a short note, e.g. an exit code; not reproduced);
- `message` actions are human (source user) or AI (source agent) text, with `image_urls` as images;
  `system` is the system prompt and its `tools`; `finish`/`reject` without metadata are AI text;
- other observations reach the model as user text (errors, user commands' output, recall results);
- `condensation` actions are recorded compactions (engine/formats/openhands_view.py), a stored
  `condense` observation (AgentCondensationObservation) a summary;
- `change_agent_state`, `null`, `recall` actions, `agent_state_changed` and `null` observations
  never reach the model: counted in `extra["skipped_records"]`.

Usage per call comes from the response's LiteLLM `usage`, else from the event's
`llm_metrics.token_usages` entry for that response, else from the difference between consecutive
`llm_metrics.accumulated_token_usage` snapshots (never an accumulated total as one call).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import tool_call

from engine.formats.jsonshape import Where, json_type, parse_arguments
from engine.formats.openhands_usage import (
    context_window,
    difference,
    from_litellm,
    from_token_usage,
    split_litellm,
)
from engine.thread.kinds import mark
from engine.thread.model import RecordedUsage

FORMAT = "openhands"
SOURCES = ("user", "agent", "environment")
SILENT_ACTIONS = frozenset({"change_agent_state", "null", "recall", "condensation_request", "pause", "resume"})
SILENT_OBSERVATIONS = frozenset({"agent_state_changed", "null"})
# RecallObservation fields whose text OpenHands puts in the workspace-context user message.
RECALL_TEXT = ("repo_instructions", "additional_agent_instructions", "runtime_hosts", "date",
               "custom_secrets_descriptions", "conversation_instructions")


def is_v0_event(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("id"), int)
        and value.get("source") in SOURCES
        and (isinstance(value.get("action"), str) or isinstance(value.get("observation"), str))
    )


def message_id(event: dict[str, Any]) -> str:
    return f"openhands-{event['id']}"


@dataclass
class Converted:
    """Messages from a run of events, and for each event how many messages preceded it."""

    messages: list[BaseMessage] = field(default_factory=list)
    before: list[int] = field(default_factory=list)
    usage: dict[str, RecordedUsage] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    model: str | None = None
    window: int | None = None
    system_prompt: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)


class V0Converter:
    """Events to messages; the same pass serves the whole file and a condensation's view."""

    def __init__(self, where: Where) -> None:
        self.where = where

    def convert(self, events: list[tuple[dict[str, Any], str]], *, in_view: bool = False) -> Converted:
        out = Converted()
        responses: dict[str, AIMessage] = {}
        accumulated: dict[str, Any] | None = None
        for event, at in events:
            out.before.append(len(out.messages))
            metrics = event.get("llm_metrics")
            snapshot = metrics.get("accumulated_token_usage") if isinstance(metrics, dict) else None
            if "action" in event:
                produced = self._action(event, at, out, responses, accumulated)
            else:
                produced = self._observation(event, at, out, in_view)
            if isinstance(snapshot, dict):
                accumulated = snapshot
                out.window = out.window or context_window(snapshot)
            if produced is not None:
                out.messages.append(produced)
        if in_view:
            # A result whose call was forgotten is never sent: ConversationMemory only emits a tool
            # message together with the response that called it.
            called = {tc["id"] for m in out.messages if isinstance(m, AIMessage) for tc in m.tool_calls}
            out.messages = [m for m in out.messages if not (isinstance(m, ToolMessage) and m.tool_call_id not in called)]
        return out

    # -- actions ---------------------------------------------------------------------------------
    def _action(self, event: dict[str, Any], at: str, out: Converted, responses: dict[str, AIMessage],
                accumulated: dict[str, Any] | None) -> BaseMessage | None:
        where = self.where
        kind = where.want_text(event["action"], f"{at}.action")
        args = event.get("args")
        args = {} if args is None else where.want_dict(args, f"{at}.args")
        meta = event.get("tool_call_metadata")
        if meta is not None:
            return self._tool_action(event, at, where.want_dict(meta, f"{at}.tool_call_metadata"), args, out,
                                     responses, accumulated)
        if kind == "condensation":
            return None  # a recorded compaction, read by the importer
        if kind in SILENT_ACTIONS:
            out.skipped[f"action:{kind}"] += 1
            return None
        if kind == "system":
            text = _text(args.get("content"))
            out.system_prompt = out.system_prompt or text
            tools = args.get("tools")
            if isinstance(tools, list) and not out.tools:
                out.tools = [t for t in tools if isinstance(t, dict)]
            return SystemMessage(content=text, id=message_id(event))
        text = _text(args.get("content")) if kind == "message" else _text(args.get("thought")) or _text(event.get("message"))
        if kind == "message" and event["source"] == "user":
            return HumanMessage(content=_with_images(text, args.get("image_urls")), id=message_id(event))
        if event["source"] == "agent":
            message = AIMessage(content=_with_images(text, args.get("image_urls")), id=message_id(event))
            self._metrics_usage(event, at, message, out, accumulated, None)
            return message
        # A user's own action (e.g. a command run in the terminal) reaches the agent as user text.
        return HumanMessage(content=_text(event.get("message")) or text, id=message_id(event))

    def _tool_action(self, event: dict[str, Any], at: str, meta: dict[str, Any], args: dict[str, Any], out: Converted,
                     responses: dict[str, AIMessage], accumulated: dict[str, Any] | None) -> BaseMessage | None:
        where = self.where
        call_id = where.want_text(meta.get("tool_call_id"), f"{at}.tool_call_metadata.tool_call_id")
        name = where.want_text(meta.get("function_name"), f"{at}.tool_call_metadata.function_name")
        response = meta.get("model_response")
        response = {} if response is None else where.want_dict(response, f"{at}.tool_call_metadata.model_response")
        raw_id = response.get("id")
        rid = raw_id if isinstance(raw_id, str) else f"event-{event['id']}"
        if rid in responses:
            message = responses[rid]
            if all(tc["id"] != call_id for tc in message.tool_calls):
                message.tool_calls.append(tool_call(name=name, args=_own_args(args), id=call_id))
            return None
        message = self._response_message(event, at, response, out)
        if not response.get("choices"):
            message.content = _text(args.get("thought"))  # no response recorded: the action's thought is its text
        if all(tc["id"] != call_id for tc in message.tool_calls):
            message.tool_calls.append(tool_call(name=name, args=_own_args(args), id=call_id))
        responses[rid] = message
        recorded = from_litellm(response.get("usage"), where, f"{at}.tool_call_metadata.model_response.usage")
        if recorded is not None:
            recorded.timestamp = event.get("timestamp") if isinstance(event.get("timestamp"), str) else None
            recorded.model = response.get("model") if isinstance(response.get("model"), str) else None
            out.usage[str(message.id)] = recorded
        else:
            self._metrics_usage(event, at, message, out, accumulated, rid)
        return message

    def _response_message(self, event: dict[str, Any], at: str, response: dict[str, Any], out: Converted) -> AIMessage:
        where = self.where
        base = f"{at}.tool_call_metadata.model_response"
        model = response.get("model")
        if isinstance(model, str) and model:
            out.model = out.model or model
        choices = response.get("choices")
        raw: dict[str, Any] = {}
        if isinstance(choices, list) and choices:
            first = where.want_dict(choices[0], f"{base}.choices[0]")
            raw = where.want_dict(first.get("message") or {}, f"{base}.choices[0].message")
        content: str | list[Any] = _text(raw.get("content")) if not isinstance(raw.get("content"), list) else raw["content"]
        reasoning = raw.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            content = [{"type": "reasoning", "reasoning": reasoning}] + ([{"type": "text", "text": content}]
                                                                         if isinstance(content, str) and content else
                                                                         [] if isinstance(content, str) else content)
        calls = []
        raw_calls = raw.get("tool_calls")
        for k, item in enumerate(where.want_list(raw_calls, f"{base}.choices[0].message.tool_calls") if raw_calls else []):
            cat = f"{base}.choices[0].message.tool_calls[{k}]"
            item = where.want_dict(item, cat, "a tool call object")
            fn = where.want_dict(item.get("function"), f"{cat}.function")
            parsed, error = parse_arguments(fn.get("arguments"))
            if parsed is None:
                where.fail(f"{cat}.function.arguments", error or "arguments are not a JSON object")
            calls.append(tool_call(name=where.want_text(fn.get("name"), f"{cat}.function.name"), args=parsed,
                                   id=where.want_text(item.get("id"), f"{cat}.id")))
        meta = {"model": model} if isinstance(model, str) and model else {}
        return AIMessage(content=content, tool_calls=calls, id=message_id(event), response_metadata=meta)

    def _metrics_usage(self, event: dict[str, Any], at: str, message: AIMessage, out: Converted,
                       accumulated: dict[str, Any] | None, rid: str | None) -> None:
        metrics = event.get("llm_metrics")
        if not isinstance(metrics, dict):
            return
        usages = metrics.get("token_usages")
        if isinstance(usages, list) and usages:
            match = [u for u in usages if isinstance(u, dict) and rid is not None and u.get("response_id") == rid]
            if match:
                recorded = from_token_usage(match[-1], self.where, f"{at}.llm_metrics.token_usages")
                if recorded is not None:
                    out.usage[str(message.id)] = recorded
                return
        snapshot = metrics.get("accumulated_token_usage")
        if isinstance(snapshot, dict) and snapshot != accumulated:
            d = difference(snapshot, accumulated)
            recorded = split_litellm(d["prompt_tokens"], d["completion_tokens"], d["cache_read_tokens"],
                                     d["cache_write_tokens"], d["reasoning_tokens"])
            if recorded is not None:
                out.usage[str(message.id)] = recorded

    # -- observations ----------------------------------------------------------------------------
    def _observation(self, event: dict[str, Any], at: str, out: Converted, in_view: bool) -> BaseMessage | None:
        where = self.where
        kind = where.want_text(event["observation"], f"{at}.observation")
        text = observation_text(event, kind)
        meta = event.get("tool_call_metadata")
        if meta is not None:
            meta = where.want_dict(meta, f"{at}.tool_call_metadata")
            call_id = where.want_text(meta.get("tool_call_id"), f"{at}.tool_call_metadata.tool_call_id")
            name = meta.get("function_name")
            return ToolMessage(content=text, tool_call_id=call_id, name=name if isinstance(name, str) else None,
                               status="error" if kind == "error" else "success", id=message_id(event))
        if kind in SILENT_OBSERVATIONS:
            out.skipped[f"observation:{kind}"] += 1
            return None
        if kind == "condense":
            if not in_view:
                return None  # the importer records it as a compaction
            return mark(HumanMessage(content=text, id=message_id(event)), "summary")
        if kind == "recall":
            extras = event.get("extras")
            text = _recall_text(extras) if isinstance(extras, dict) else text
            if not text:
                out.skipped["observation:recall"] += 1
                return None
        return HumanMessage(content=text, id=message_id(event))


def observation_text(event: dict[str, Any], kind: str) -> str:
    """What the model was shown for an observation (conversation_memory.py, `_process_observation`)."""
    text = _text(event.get("content"))
    raw_extras = event.get("extras")
    extras: dict[str, Any] = raw_extras if isinstance(raw_extras, dict) else {}
    if kind == "edit":
        # FileEditObservation.__str__ (openhands/events/observation/files.py): the ACI editor's own
        # output, or a note for a new file, else the content (its diff).
        formatted = extras.get("formatted_output_and_error")
        if extras.get("impl_source") == "oh_aci" and isinstance(formatted, str):
            return formatted
        if extras.get("prev_exist") is False and isinstance(extras.get("path"), str):
            return f"[New file {extras['path']} is created with the provided content.]\n"
    if kind == "run" and isinstance(extras.get("metadata"), dict):
        # CmdOutputObservation.to_agent_observation: the shell's prefix and suffix around the output.
        meta = extras["metadata"]
        prefix, suffix = meta.get("prefix"), meta.get("suffix")
        return f"{prefix if isinstance(prefix, str) else ''}{text}{suffix if isinstance(suffix, str) else ''}"
    return text


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(b.get("text", "")) for b in value if isinstance(b, dict) and b.get("type") == "text")
    return json.dumps(value, ensure_ascii=False, default=str)


def _with_images(text: str, urls: Any) -> str | list[Any]:
    images = [u for u in urls if isinstance(u, str)] if isinstance(urls, list) else []
    if not images:
        return text
    return [{"type": "text", "text": text}] + [{"type": "image_url", "image_url": {"url": u}} for u in images]


def _own_args(args: dict[str, Any]) -> dict[str, Any]:
    """An action's arguments without OpenHands' own bookkeeping, when the response message is missing."""
    return {k: v for k, v in args.items() if k not in ("thought", "impl_source", "translated_ipython_code",
                                                       "security_risk", "confirmation_state", "is_confirmed")}


def _recall_text(extras: dict[str, Any]) -> str:
    parts = [extras[k] for k in RECALL_TEXT if isinstance(extras.get(k), str) and extras[k]]
    for item in extras.get("microagent_knowledge") or []:
        if isinstance(item, dict) and isinstance(item.get("content"), str):
            parts.append(item["content"])
    return "\n\n".join(parts)


def check_events(doc: Any, where: Where, base: str) -> list[tuple[dict[str, Any], str]]:
    items = where.want_list(doc, base, "an array of OpenHands events")
    out = []
    for i, raw in enumerate(items):
        at = f"{base}[{i}]"
        event = where.want_dict(raw, at, "an event object")
        if isinstance(event.get("id"), bool) or not isinstance(event.get("id"), int):
            where.fail(f"{at}.id", f"expected an integer event id, got {json_type(event.get('id'))}")
        if event.get("source") not in SOURCES:
            where.fail(f"{at}.source", f"expected one of {', '.join(SOURCES)}, got {json.dumps(event.get('source'))[:40]}")
        if not isinstance(event.get("action"), str) and not isinstance(event.get("observation"), str):
            where.fail(at, "event has neither an 'action' nor an 'observation' string")
        out.append((event, at))
    return out
