"""One recorded provider call (Anthropic Messages or OpenAI Responses) as messages plus what it recorded.

The request and the response are read with the Anthropic and Responses importers' own readers
(`anthropic.MessageReader`, `openai_responses.ItemBuilder`); what only a call shows is taken out
first:

- Anthropic `compaction` content blocks (docs: platform.claude.com/docs/en/build-with-claude/compaction,
  "How compaction works": the API summarizes, "creates a compaction block containing the summary",
  and on later requests "automatically drops all message blocks prior to the compaction block").
  A block in a request's assistant turn is a `Marker`: the server ignores everything before it.
  A block in the response is the compaction this call made before answering.
- `usage.iterations` (same page, and the SDK's `BetaCompactionIterationUsage`): with compaction
  inside one call the usage lists a `compaction` iteration and a `message` iteration. The message
  iteration is the call's usage (what produced the answer); the compaction iteration gives the
  compaction's `pre_tokens` (its input, cache reads and writes included) and `post_tokens` (its
  output: the summary).
- `context_management.applied_edits` of the response, read with the request's
  `context_management.edits` config (see `cleared_tool_uses`).
- OpenAI `compaction` items (developers.openai.com/api/docs/guides/compaction: an opaque
  `encrypted_content`; "you can drop items that came before the most recent compaction item ... The
  latest compaction item carries the necessary context"): in a request a `Marker`, in a response's
  output the compaction the server ran in this call; `POST /responses/compact` returns
  `{object: "response.compaction", output: [user messages..., compaction], usage}`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

from engine.formats.anthropic import MessageReader, system_text, usage_from_anthropic
from engine.formats.anthropic import tool_schemas as anthropic_tools
from engine.formats.cassette_bodies import FORMAT, Interaction
from engine.formats.jsonshape import Where, json_type, usage_from_openai
from engine.formats.openai_responses import ItemBuilder, is_output
from engine.formats.openai_responses import tool_schemas as responses_tools
from engine.thread.model import RecordedUsage, stable_id

ANTHROPIC = "anthropic"
OPENAI = "openai_responses"


@dataclass
class Marker:
    """A compaction a request carries (or a response produced): the server drops what came before it."""

    position: int  # index in `Call.messages` where the messages after it start
    key: str  # identity across calls: the OpenAI item id, or a hash of the summary / encrypted content
    summary: str = ""
    item_id: str | None = None
    encrypted_chars: int | None = None


@dataclass
class Produced:
    """A compaction this call made: before its answer (Anthropic) or after it (an OpenAI output item)."""

    marker: Marker
    before_reply: bool
    pre_tokens: int | None = None
    post_tokens: int | None = None


@dataclass
class Call:
    interaction: Interaction
    provider: str
    compact_endpoint: bool = False
    system: SystemMessage | None = None
    messages: list[BaseMessage] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    reply: AIMessage | None = None
    usage: RecordedUsage | None = None
    produced: list[Produced] = field(default_factory=list)
    applied_edits: list[dict[str, Any]] = field(default_factory=list)
    edit_config: list[dict[str, Any]] = field(default_factory=list)
    model: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    previous_response_id: str | None = None
    # The server-compaction threshold the request asked for (Anthropic `compact_*` edit trigger,
    # OpenAI `compaction.compact_threshold`), so a replay can use the agent's own setting.
    compaction_threshold: int | None = None


def provider_of(interaction: Interaction) -> str | None:
    """Which API the call went to, from its path and body shapes (None: not a call we read)."""
    path = interaction.uri.split("?", 1)[0].rstrip("/")
    request, response = interaction.request, interaction.response
    if path.endswith("/v1/messages") or (isinstance(request, dict) and isinstance(request.get("messages"), list)
                                         and isinstance(response, dict) and response.get("type") == "message"):
        return ANTHROPIC
    if path.endswith("/responses") or path.endswith("/responses/compact") or (
            isinstance(request, dict) and "input" in request and isinstance(response, dict)
            and str(response.get("object", "")).startswith("response")):
        return OPENAI
    return None


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _where(source_label: str, interaction: Interaction) -> Where:
    return _CallWhere(source_label, FORMAT, interaction.location)


@dataclass(frozen=True)
class _CallWhere(Where):
    """Errors name the interaction: `interactions[3].request.$.messages[2].content`."""

    prefix: str = ""

    def fail(self, location: str, message: str):  # type: ignore[no-untyped-def]
        return super().fail(f"{self.prefix}.{location}", message)


# -- Anthropic ----------------------------------------------------------------------------------
def anthropic_call(interaction: Interaction, label: str) -> Call:
    call = Call(interaction, ANTHROPIC)
    where = _where(label, interaction)
    request = where.want_dict(interaction.request, "request", "a Messages request body")
    reader = MessageReader(where)
    if request.get("system") is not None:
        system = system_text(request["system"], where)
        call.system = SystemMessage(content=system, id=stable_id(FORMAT, "system", system))
    raw_messages = where.want_list(request.get("messages"), "request.messages", "an array of messages")
    for i, raw in enumerate(raw_messages):
        raw, marker = _strip_compaction(raw, len(reader.messages), where, f"request.messages[{i}]")
        if marker is not None:
            call.markers.append(marker)
        if raw is not None:
            reader.read(raw, f"request.messages[{i}]", i)
    call.messages = reader.messages
    call.model = request.get("model") if isinstance(request.get("model"), str) else None
    call.tools = anthropic_tools(request, where)
    config = request.get("context_management")
    if isinstance(config, dict) and isinstance(config.get("edits"), list):
        call.edit_config = [e for e in config["edits"] if isinstance(e, dict)]
        for edit in call.edit_config:
            trigger = edit.get("trigger")
            if str(edit.get("type", "")).startswith("compact_") and isinstance(trigger, dict):
                call.compaction_threshold = _positive_int(trigger.get("value"))
    response = interaction.response
    if not isinstance(response, dict) or response.get("type") != "message":
        return call
    response, produced = _strip_compaction(response, len(reader.messages), where, "response")
    iterations = _iterations(response, where)
    if produced is not None:
        before = iterations.get("compaction")
        call.produced.append(Produced(
            produced, before_reply=True,
            pre_tokens=before.context_tokens if before is not None else None,
            post_tokens=before.output_tokens if before is not None else None,
        ))
    if response is not None:
        reply_reader = MessageReader(where)
        reply_reader.tool_names = reader.tool_names
        reply_reader.read({**response, "role": "assistant"}, "response", len(raw_messages))
        reply = reply_reader.messages[-1]
        if isinstance(reply, AIMessage):
            call.reply = reply
            call.usage = iterations.get("message") or (reply_reader.usage[-1][1] if reply_reader.usage else None)
    if isinstance(interaction.response, dict):
        cm = interaction.response.get("context_management")
        if isinstance(cm, dict) and isinstance(cm.get("applied_edits"), list):
            call.applied_edits = [e for e in cm["applied_edits"] if isinstance(e, dict)]
        if call.model is None and isinstance(interaction.response.get("model"), str):
            call.model = interaction.response["model"]
    return call


def _strip_compaction(raw: Any, position: int, where: Where, location: str) -> tuple[Any, Marker | None]:
    """An assistant turn without its compaction blocks (what follows the last one), and the marker."""
    if not (isinstance(raw, dict) and raw.get("role") in ("assistant", None) and isinstance(raw.get("content"), list)):
        return raw, None
    content = raw["content"]
    last = max((j for j, b in enumerate(content) if isinstance(b, dict) and b.get("type") == "compaction"), default=None)
    if last is None:
        return raw, None
    summary = content[last].get("content")
    if summary is not None and not isinstance(summary, str):
        where.fail(f"{location}.content[{last}].content", f"expected the summary string, got {json_type(summary)}")
    summary = summary or ""
    marker = Marker(position=position, key="anthropic:" + _digest(summary), summary=summary)
    rest = content[last + 1:]
    return ({**raw, "content": rest} if rest else None), marker


def _iterations(response: Any, where: Where) -> dict[str, RecordedUsage]:
    """`usage.iterations` by type: the last `compaction` and the last `message` iteration."""
    usage = response.get("usage") if isinstance(response, dict) else None
    found: dict[str, RecordedUsage] = {}
    raw = usage.get("iterations") if isinstance(usage, dict) else None
    if raw is None:
        return found
    for k, item in enumerate(where.want_list(raw, "response.usage.iterations")):
        item = where.want_dict(item, f"response.usage.iterations[{k}]", "a usage iteration object")
        kind = item.get("type")
        if isinstance(kind, str):
            found[kind] = usage_from_anthropic(item, where, f"response.usage.iterations[{k}]")
    return found


def cleared_tool_uses(messages: list[BaseMessage], count: int, config: dict[str, Any]) -> list[tuple[str, str]]:
    """The tool uses a `clear_tool_uses_20250919` edit cleared: the oldest `count`, excluded tools skipped.

    Docs (platform.claude.com/docs/en/build-with-claude/context-editing, "How it works"): the API
    "clears the oldest tool results in chronological order"; `exclude_tools` lists "tool names whose
    results are never cleared". Returned as (tool call id, tool name), oldest first.
    """
    excluded = {t for t in config.get("exclude_tools") or [] if isinstance(t, str)}
    calls = [(tc["id"], tc["name"]) for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls
             if tc.get("id") and tc.get("name") not in excluded]
    return [(str(i), str(n)) for i, n in calls[:max(count, 0)]]


# -- OpenAI Responses ---------------------------------------------------------------------------
def responses_call(interaction: Interaction, label: str) -> Call:
    call = Call(interaction, OPENAI)
    where = _where(label, interaction)
    request = where.want_dict(interaction.request, "request", "a Responses request body")
    call.compact_endpoint = interaction.uri.split("?", 1)[0].rstrip("/").endswith("/responses/compact")
    previous = request.get("previous_response_id")
    call.previous_response_id = previous if isinstance(previous, str) and previous else None
    managed = request.get("context_management")
    for entry in managed if isinstance(managed, list) else []:
        if isinstance(entry, dict) and entry.get("type") == "compaction":
            call.compaction_threshold = _positive_int(entry.get("compact_threshold"))
    instructions = request.get("instructions")
    if isinstance(instructions, str) and instructions:
        call.system = SystemMessage(content=instructions, id=stable_id(FORMAT, "instructions", instructions))
    inputs = request.get("input")
    if isinstance(inputs, str):
        inputs = [{"role": "user", "content": inputs}]
    builder = ItemBuilder(where)
    for i, item in enumerate(where.want_list(inputs if inputs is not None else [], "request.input")):
        if isinstance(item, dict) and item.get("type") == "compaction":
            builder.close()
            call.markers.append(_openai_marker(item, len(builder.messages)))
            continue
        builder.add(item, f"request.input[{i}]", i)
    builder.close()
    call.messages = builder.messages
    call.model = request.get("model") if isinstance(request.get("model"), str) else None
    call.tools = responses_tools(request, where)
    response = interaction.response
    if not isinstance(response, dict) or not isinstance(response.get("output"), list):
        return call
    usage = usage_from_openai(where.want_dict(response["usage"], "response.usage"), where, "response.usage") \
        if response.get("usage") is not None else None
    if isinstance(response.get("model"), str):
        call.model = response["model"]
    rid = response.get("id") if isinstance(response.get("id"), str) else None
    if call.compact_endpoint:
        for item in response["output"]:
            if isinstance(item, dict) and item.get("type") == "compaction":
                call.produced.append(Produced(
                    _openai_marker(item, len(call.messages)), before_reply=False,
                    pre_tokens=usage.context_tokens if usage is not None else None,
                    post_tokens=usage.output_tokens if usage is not None else None,
                ))
        return call
    out = ItemBuilder(where)
    out.call_names = builder.call_names
    seen_output = False
    for i, item in enumerate(response["output"]):
        if isinstance(item, dict) and item.get("type") == "compaction":
            # Before any answer item, the server compacted first and answered from the compacted context.
            call.produced.append(Produced(_openai_marker(item, len(call.messages)), before_reply=not seen_output))
            continue
        if isinstance(item, dict) and is_output(item) and rid is not None:
            item = {"created_by": rid, **item}
            seen_output = True
        out.add(item, f"response.output[{i}]", i)
    out.close()
    replies = [m for m in out.messages if isinstance(m, AIMessage)]
    if replies:
        call.reply = replies[-1]
        call.usage = usage
    return call


def _openai_marker(item: dict[str, Any], position: int) -> Marker:
    encrypted = item.get("encrypted_content")
    encrypted = encrypted if isinstance(encrypted, str) else ""
    item_id = item.get("id") if isinstance(item.get("id"), str) and item.get("id") else None
    key = "openai:" + (item_id or _digest(encrypted))
    return Marker(position=position, key=key, item_id=item_id, encrypted_chars=len(encrypted))


def read_call(interaction: Interaction, label: str, provider: str) -> Call:
    return anthropic_call(interaction, label) if provider == ANTHROPIC else responses_call(interaction, label)
