"""VCR cassettes of provider calls (vcrpy / pytest-recording YAML, or their JSON form) as threads.

A cassette records HTTP calls; the calls to Anthropic's Messages API and OpenAI's Responses API
(`cassette_calls`) are read, anything else is skipped and counted in `extra["skipped_interactions"]`.
The thread is what the calls form: each request is matched against the thread so far (messages
compared by role, text and tool-call ids), the messages it adds are appended, then the AI message
its response produced, with that call's usage. So the thread is the last request's messages plus
the last response, and every earlier response keeps its own usage, placed where later requests
echoed it. A request that does not continue the thread starts another one: a cassette holding
several conversations lists one thread each (`<stem>-1`, `<stem>-2`, ...; the last is the default).

Recorded context management (see `cassette_calls` for the rules and their sources):
- an Anthropic `compaction` block or an OpenAI `compaction` item / `/responses/compact` call is a
  RecordedCompaction(kind="server") at the step that first ran on the compacted context; its
  replacement is the system prompt (always sent) plus the summary as one human message (an OpenAI
  compaction is opaque: an empty message whose `additional_kwargs["openai_compaction"]` names the
  item, so its size counts as unrecorded). Later requests carry the block or item; the server drops
  what came before it, so the request is matched from there on.
- a request that sends the thread with its oldest messages left out (or replaced by new ones, e.g. a
  client-side summary) is a RecordedCompaction(kind="trim" or "summary",
  source="vcr_cassette:request") whose replacement is what it sent in their place.
- Anthropic `context_management.applied_edits` are RecordedEdits at the step they applied to; each
  lists only the tool uses (or thinking turns) no earlier edit had cleared. Anthropic does not
  publish the placeholder text, so a cleared result is counted as empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats.cassette_bodies import FORMAT, Interaction, fail, is_cassette, read_interactions
from engine.formats.cassette_calls import ANTHROPIC, Call, Marker, cleared_tool_uses, provider_of, read_call
from engine.formats.jsonshape import default_thread_id, first_byte
from engine.formats.source import Source, ThreadRef
from engine.thread.kinds import mark
from engine.thread.model import RecordedCompaction, RecordedEdit, RecordedUsage, Thread, stable_id

SNIFF_BYTES = 4096


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content.strip()
    parts = [b if isinstance(b, str) else str(b.get("text", "")) for b in content
             if isinstance(b, str) or (isinstance(b, dict) and b.get("type") in ("text", "input_text", "output_text"))]
    return "\n".join(parts).strip()


def fingerprint(message: BaseMessage) -> tuple[Any, ...]:
    """What must agree for a request's message to be the thread's: role, text, tool-call ids."""
    if isinstance(message, AIMessage):
        return ("ai", _text(message), tuple(str(tc.get("id")) for tc in message.tool_calls))
    if isinstance(message, ToolMessage):
        return ("tool", message.tool_call_id)
    return (message.type, _text(message))


@dataclass
class _Chain:
    """One conversation being rebuilt from the calls that continue it."""

    body: list[BaseMessage] = field(default_factory=list)
    system: SystemMessage | None = None
    compactions: list[RecordedCompaction] = field(default_factory=list)
    by_key: dict[str, RecordedCompaction] = field(default_factory=dict)
    edits: list[RecordedEdit] = field(default_factory=list)
    usage: dict[str, RecordedUsage] = field(default_factory=dict)
    cleared: set[str] = field(default_factory=set)
    # What the client itself sends as history: `prefix` (messages not in body) + body[start:].
    view_start: int = 0
    view_prefix: list[BaseMessage] = field(default_factory=list)
    interactions: list[int] = field(default_factory=list)
    model: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    compaction_threshold: tuple[str, int] | None = None  # (provider, tokens)

    def view(self) -> list[BaseMessage]:
        return [*self.view_prefix, *self.body[self.view_start:]]

    def append(self, message: BaseMessage) -> None:
        if message.id is not None and message.id in self.ids:
            message.id = f"{message.id}~{len(self.body)}"
        if message.id is not None:
            self.ids.add(message.id)
        self.body.append(message)


def _same(a: list[BaseMessage], b: list[BaseMessage]) -> bool:
    return len(a) == len(b) and all(fingerprint(x) == fingerprint(y) for x, y in zip(a, b, strict=True))


def _adopt(kept: list[BaseMessage], sent: list[BaseMessage]) -> None:
    """Thread messages take the content the later request sent (what the model saw), keeping their ids."""
    for mine, theirs in zip(kept, sent, strict=True):
        if isinstance(mine, AIMessage) and isinstance(theirs, AIMessage):
            mine.content = theirs.content


def _summary_message(marker: Marker, at: str) -> HumanMessage:
    if marker.item_id is not None or marker.encrypted_chars is not None:
        message = HumanMessage(content="", id=marker.item_id or stable_id(FORMAT, at, marker.key),
                               additional_kwargs={"openai_compaction": {"id": marker.item_id,
                                                                        "encrypted_chars": marker.encrypted_chars}})
    else:
        message = HumanMessage(content=marker.summary, id=stable_id(FORMAT, at, marker.summary))
    return mark(message, "summary")  # type: ignore[return-value]


def _compaction(chain: _Chain, marker: Marker, index: int, source: str, *, trigger: str | None,
                pre: int | None = None, post: int | None = None) -> RecordedCompaction:
    compaction = RecordedCompaction(
        index=index, trigger=trigger, pre_tokens=pre, post_tokens=post, summary=marker.summary,
        replacement=[_summary_message(marker, f"compaction-{len(chain.compactions)}")], kind="server", source=source,
    )
    compaction.message_id = compaction.replacement[0].id if compaction.replacement else None
    chain.compactions.append(compaction)
    chain.by_key[marker.key] = compaction
    # From here the client's own history is the thread from this point (the server holds the rest).
    chain.view_start, chain.view_prefix = index, []
    return compaction


def _continue(chain: _Chain, call: Call) -> list[BaseMessage] | None:
    """Append what the call's request adds; returns the messages the server saw (thread objects), or None."""
    request = call.messages
    last = call.markers[-1] if call.markers else None
    known = chain.by_key.get(last.key) if last is not None else None
    if known is not None and last is not None:
        expected = chain.body[known.index:]
        sent = request[last.position:]
        if not _same(sent[:len(expected)], expected):
            return None
        _adopt(expected, sent[:len(expected)])
        for message in sent[len(expected):]:
            chain.append(message)
        return chain.body[known.index:]
    if call.previous_response_id is not None and any(m.id == call.previous_response_id for m in chain.body):
        # `previous_response_id` chaining: the server holds the history, the request only adds to it.
        for message in request:
            chain.append(message)
        return [*chain.view()]
    view = chain.view()
    if _same(request[:len(view)], view):
        matched = len(view)
        _adopt(view, request[:matched])
        for message in request[matched:]:
            chain.append(message)
        seen = [*view, *chain.body[len(chain.body) - (len(request) - matched):]] if len(request) > matched else view
        if last is not None:  # a compaction this cassette did not record being made
            at = _position(chain.body, seen[last.position]) if last.position < len(seen) else len(chain.body)
            _compaction(chain, last, at, _source(call), trigger=None)
        return seen
    return _client_compaction(chain, call)


def _position(body: list[BaseMessage], message: BaseMessage) -> int:
    return next((i for i, m in enumerate(body) if m is message), len(body))


def _client_compaction(chain: _Chain, call: Call) -> list[BaseMessage] | None:
    """A request that resends only the newest part of the history, maybe after new messages (a summary)."""
    view, request = chain.view(), call.messages
    prints = [fingerprint(m) for m in request]
    for p in range(1, len(view)):
        tail = [fingerprint(m) for m in view[p:]]
        for q in range(0, len(request) - len(tail) + 1):
            if prints[q:q + len(tail)] == tail:
                kept, added = view[p:], request[:q]
                index = len(chain.body)
                replacement = [*added, *kept]
                compaction = RecordedCompaction(
                    index=index, summary="\n".join(_text(m) for m in added), replacement=replacement,
                    kind="summary" if added else "trim", source="vcr_cassette:request",
                    message_id=added[0].id if added else None,
                )
                chain.compactions.append(compaction)
                _adopt(kept, request[q:q + len(tail)])
                for message in request[q + len(tail):]:
                    chain.append(message)
                chain.view_start, chain.view_prefix = index, replacement
                return chain.view()
    return None


def _source(call: Call) -> str:
    return "anthropic:compaction" if call.provider == ANTHROPIC else "openai:compaction"


def _trigger(call: Call) -> str | None:
    for edit in call.edit_config:
        if str(edit.get("type", "")).startswith("compact"):
            return "auto"
    return "manual" if call.compact_endpoint else "auto"


def _record_call(chain: _Chain, call: Call, seen: list[BaseMessage]) -> None:
    chain.interactions.append(call.interaction.position)
    chain.model = call.model or chain.model
    chain.tools = call.tools or chain.tools
    if call.compaction_threshold is not None:
        chain.compaction_threshold = (call.provider, call.compaction_threshold)
    if call.system is not None:
        chain.system = call.system
    for produced in (p for p in call.produced if p.before_reply):
        _compaction(chain, produced.marker, len(chain.body), _source(call), trigger=_trigger(call),
                    pre=produced.pre_tokens, post=produced.post_tokens)
        seen = []
    if call.reply is not None:
        at = len(chain.body)
        chain.append(call.reply)
        if call.usage is not None and call.reply.id is not None:
            chain.usage[call.reply.id] = call.usage
        _record_edits(chain, call, seen, at)
    for produced in (p for p in call.produced if not p.before_reply):
        _compaction(chain, produced.marker, len(chain.body), _source(call), trigger=_trigger(call),
                    pre=produced.pre_tokens, post=produced.post_tokens)


def _record_edits(chain: _Chain, call: Call, seen: list[BaseMessage], at: int) -> None:
    configs = {str(e.get("type")): e for e in call.edit_config}
    for applied in call.applied_edits:
        kind = str(applied.get("type", ""))
        config = configs.get(kind, {})
        saved = applied.get("cleared_input_tokens")
        saved = saved if isinstance(saved, int) and not isinstance(saved, bool) else None
        common: dict[str, Any] = {"index": at, "tokens_saved": saved, "message_id": call.reply.id if call.reply else None,
                  "source": f"anthropic:{kind}", "trigger": "auto"}
        if kind.startswith("clear_tool_uses"):
            count = applied.get("cleared_tool_uses")
            cleared = [c for c in cleared_tool_uses(seen, count if isinstance(count, int) else 0, config)
                       if c[0] not in chain.cleared]
            inputs = config.get("clear_tool_inputs", False)
            groups: dict[bool, list[str]] = {}
            for call_id, name in cleared:
                clear = inputs is True or (isinstance(inputs, list) and name in inputs)
                groups.setdefault(clear, []).append(call_id)
            for clear, ids in groups.items():
                chain.edits.append(RecordedEdit(kind="clear_tool_results", tool_call_ids=ids, clear_inputs=clear,
                                                placeholder="", **common))
                chain.cleared.update(ids)
        elif kind.startswith("clear_thinking"):
            count = applied.get("cleared_thinking_turns")
            thinking = [m.id for m in seen if isinstance(m, AIMessage) and m.id and m.id not in chain.cleared
                        and isinstance(m.content, list)
                        and any(isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking") for b in m.content)]
            ids = [str(i) for i in thinking[:count if isinstance(count, int) else 0]]
            if ids:
                chain.edits.append(RecordedEdit(kind="clear_thinking", message_ids=ids, **common))
                chain.cleared.update(ids)


def _thread(chain: _Chain, thread_id: str, skipped: dict[str, int]) -> Thread:
    offset = 1 if chain.system is not None else 0
    head = [chain.system] if chain.system is not None else []
    for compaction in chain.compactions:
        compaction.index += offset
        compaction.replacement = [*head, *(compaction.replacement or [])]
    for edit in chain.edits:
        edit.index += offset
    extra: dict[str, Any] = {"calls": len(chain.interactions), "interactions": chain.interactions}
    if skipped:
        extra["skipped_interactions"] = dict(sorted(skipped.items()))
    if chain.compaction_threshold is not None:
        # e.g. "anthropic_compaction_threshold": 50000 (the compact edit's trigger, or compact_threshold)
        provider, tokens = chain.compaction_threshold
        extra[f"{provider}_compaction_threshold"] = tokens
    return Thread(
        thread_id=thread_id, messages=[*head, *chain.body], source_format=FORMAT, model=chain.model,
        system_prompt=_text(chain.system) if chain.system is not None else None, tools=chain.tools,
        usage=chain.usage, compactions=chain.compactions, edits=chain.edits, extra=extra,
    )


def build_threads(source: Source) -> list[Thread]:
    interactions = read_interactions(source)
    chains: list[_Chain] = []
    skipped: dict[str, int] = {}
    for interaction in interactions:
        reason = _skip_reason(interaction)
        provider = provider_of(interaction) if reason is None else None
        if reason is None and provider is None:
            reason = "not an Anthropic Messages or OpenAI Responses call"
        if reason is not None or provider is None:
            skipped[reason or "unknown"] = skipped.get(reason or "unknown", 0) + 1
            continue
        call = read_call(interaction, source.label, provider)
        seen = _continue(chains[-1], call) if chains else None
        if seen is None:
            for chain in reversed(chains[:-1]):
                seen = _continue(chain, call)
                if seen is not None:
                    chains.remove(chain)
                    chains.append(chain)
                    break
        if seen is None:
            chain = _Chain()
            chains.append(chain)
            seen = _continue(chain, call) or []
        _record_call(chains[-1], call, seen)
    if not chains:
        detail = "; ".join(f"{n} × {why}" for why, n in sorted(skipped.items())) or "no interactions"
        raise fail(source, f"no Anthropic Messages or OpenAI Responses calls in this cassette ({detail})", "interactions")
    stem = default_thread_id(source)
    ordered = sorted(chains, key=lambda c: c.interactions[0])
    names = [stem] if len(ordered) == 1 else [f"{stem}-{k}" for k in range(1, len(ordered) + 1)]
    return [_thread(c, name, skipped) for c, name in zip(ordered, names, strict=True)]


def _skip_reason(interaction: Interaction) -> str | None:
    if interaction.status is not None and interaction.status >= 400:
        return f"HTTP {interaction.status}"
    if not isinstance(interaction.request, dict):
        return "no JSON request body"
    if interaction.problem is not None:
        return "unreadable body"
    return None


def _looks_like_yaml_cassette(source: Source) -> bool:
    head = source.data[:SNIFF_BYTES].decode("utf-8", "replace")
    lines = [ln for ln in head.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return bool(lines) and lines[0].rstrip() == "interactions:" and any(
        ln.lstrip("- ").startswith("request:") for ln in lines[1:])


class VcrCassetteImporter:
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        if source.is_sqlite():
            return False
        if first_byte(source) == b"{":
            return is_cassette(source.try_json())
        return _looks_like_yaml_cassette(source)

    def _threads(self, source: Source) -> list[Thread]:
        try:
            return build_threads(source)
        except ThreadLoadError as exc:
            if exc.format is None:
                raise ThreadLoadError(exc.message, path=exc.path or source.label, format=FORMAT,
                                      location=exc.location) from None
            raise

    def list_threads(self, source: Source) -> list[ThreadRef]:
        return [ThreadRef(t.thread_id, t.title, len(t.messages)) for t in self._threads(source)]

    def load(self, source: Source, thread_id: str | None) -> Thread:
        threads = self._threads(source)
        if thread_id is None:
            return threads[-1]
        for thread in threads:
            if thread.thread_id == thread_id:
                return thread
        raise ThreadNotFoundError(f"thread {thread_id!r} not found; threads: {', '.join(t.thread_id for t in threads)}",
                                  path=source.label, format=FORMAT)


IMPORTER = VcrCassetteImporter()

__all__ = ["IMPORTER", "build_threads", "fingerprint", "Path"]
