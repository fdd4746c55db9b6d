"""OpenTelemetry GenAI traces (OTLP JSON or flattened span dumps): one thread per conversation.

Spans are read by engine/formats/otel_spans.py and their messages by otel_messages.py. A thread is
the spans sharing `gen_ai.conversation.id` (on the span or an ancestor), else a trace id; its model
calls are the LLM spans (`gen_ai.operation.name` chat / text_completion / generate_content, or
any-agent's `call_llm`), innermost only when a framework span wraps a provider span, in start order.

Each call adds to the history what its own input holds beyond it, then its output as one AIMessage
with the span's usage. A call without recorded input was sent the history so far (any-agent records
`gen_ai.input.messages` on a run's first call only: callbacks/span_generation, `first_llm_calls`);
the results of `execute_tool` spans since the previous call are added before it (paired with the
open calls by `gen_ai.tool.call.id`, else by tool name in order). A call whose input does not extend
the history was sent a rewritten one: a RecordedCompaction whose replacement is that input (kept
messages keep their ids), "summary" when it brings a message the history lacks, else "trim";
`gen_ai.conversation.compacted` on the span names the source. A message with a `compaction` part
(semantic-conventions-genai PR #162, a provider's compaction block) is a server-side compaction: from
the next message on, the model saw the compaction content instead of the history before it.

Usage (registry/attributes/gen-ai.md): `gen_ai.usage.input_tokens` SHOULD include cached tokens, and
`gen_ai.usage.cache_read.input_tokens` / `cache_creation.input_tokens` are parts of it, so both are
split out; `gen_ai.usage.reasoning.output_tokens` is the reasoning part of the output. The older
`prompt_tokens` / `completion_tokens` and OpenLLMetry's `cache_read_input_tokens` names are read too.
LLM spans under an `execute_tool` span are a sub-agent, keyed by that tool call's id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats.jsonshape import Where, first_byte, guarded_sniff, json_type, jsonl_head, leading
from engine.formats.otel_messages import (
    COMPACTION_KEY,
    FORMAT,
    decoded,
    span_input,
    span_output,
    system_instructions,
    to_messages,
)
from engine.formats.otel_spans import Span, flat_spans, is_flat_span, is_otlp, otlp_spans
from engine.formats.source import Source, ThreadRef
from engine.thread.kinds import mark
from engine.thread.model import RecordedCompaction, RecordedUsage, Thread, title_line
from engine.tokens.content import message_text

LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "call_llm", "completion"})
SNIFF_SPANS = 200
SHOWN_IDS = 5


# -- reading spans --------------------------------------------------------------------------------


def _has_genai(spans: list[dict[str, Any]]) -> bool:
    return any(isinstance(k, str) and k.startswith("gen_ai.") for s in spans for k in s.get("attributes", {}))


def _otlp_has_genai(doc: dict[str, Any]) -> bool:
    resources = doc.get("resourceSpans")
    for resource in leading(resources if isinstance(resources, list) else [], SNIFF_SPANS):
        scopes = resource.get("scopeSpans", resource.get("instrumentationLibrarySpans"))
        for scope in leading(scopes if isinstance(scopes, list) else [], SNIFF_SPANS):
            spans = scope.get("spans")
            for span in leading(spans if isinstance(spans, list) else [], SNIFF_SPANS):
                attrs = span.get("attributes")
                if isinstance(attrs, list) and any(isinstance(a, dict) and str(a.get("key", "")).startswith("gen_ai.")
                                                   for a in attrs):
                    return True
    return False


def _claims(doc: Any) -> bool:
    if is_otlp(doc):
        return _otlp_has_genai(doc)
    items = doc.get("spans") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        return False
    head = leading(items, SNIFF_SPANS)
    return bool(head) and is_flat_span(head[0]) and _has_genai(head)


def sniff(source: Source) -> bool:
    if first_byte(source) in (b"[", b"{"):
        doc = source.try_json()
        if doc is not None:
            return _claims(doc)
    rows = jsonl_head(source, 5)
    return bool(rows) and (_claims(rows[0]) if is_otlp(rows[0]) else _claims(rows))


def read_spans(source: Source, where: Where) -> list[Span]:
    spans: list[Span] = []
    try:
        doc: Any = source.json()
        docs = [(doc, "$")]
    except ThreadLoadError as exc:
        if first_byte(source) != b"{":
            raise where.unparseable(exc) from None
        try:
            docs = [(row, f"line {n}: $") for n, row in source.jsonl()]
        except ThreadLoadError as line_error:
            raise where.unparseable(line_error) from None
        if docs and not is_otlp(docs[0][0]):  # flattened spans one a line
            docs = [([row for row, _ in docs], "$")]
    for doc, base in docs:
        if is_otlp(doc):
            otlp_spans(doc, where, base, spans)
        elif isinstance(doc, dict) and "spans" in doc:
            flat_spans(where.want_list(doc["spans"], f"{base}.spans", "an array of spans"), where, f"{base}.spans", spans)
        elif isinstance(doc, list):
            flat_spans(doc, where, base, spans)
        else:
            where.fail(base, f"expected OTLP JSON (resourceSpans) or a list of spans, got {json_type(doc)}")
    return spans


# -- grouping --------------------------------------------------------------------------------------


def _op(span: Span) -> Any:
    return span.attributes.get("gen_ai.operation.name")


def is_llm(span: Span) -> bool:
    op = _op(span)
    if op in LLM_OPERATIONS:
        return True
    return op is None and span.name.startswith(("chat ", "text_completion ", "generate_content ")) and any(
        k.startswith(("gen_ai.usage.", "gen_ai.input", "gen_ai.output", "gen_ai.prompt", "gen_ai.completion"))
        for k in span.attributes)


def is_tool(span: Span) -> bool:
    return _op(span) == "execute_tool"


@dataclass
class Group:
    thread_id: str
    calls: list[Span] = field(default_factory=list)
    tools: list[Span] = field(default_factory=list)
    owner: str | None = None  # the tool call id a sub-agent answers


@dataclass
class _Facts:
    """What a span's ancestors say about it: the nearest LLM ancestor, the nearest `execute_tool`
    ancestor, and the nearest conversation id on the span itself or an ancestor."""

    llm: Span | None = None
    tool: Span | None = None
    conversation: str | None = None


def _conversation_of(span: Span) -> str | None:
    value = span.attributes.get("gen_ai.conversation.id")
    return str(value) if isinstance(value, (str, int)) else None


def ancestry(spans: list[Span]) -> dict[int, _Facts]:
    """Per span (by `id()`), what its ancestors say, each parent link followed once: a span's facts are
    its parent's, updated by the parent itself. Deep nesting costs the spans, not depth x spans. A cycle
    of parent ids (never in a real trace) is cut where the walk meets it."""
    by_id = {s.span_id: s for s in spans if s.span_id}
    facts: dict[int, _Facts] = {}
    for span in spans:
        path: list[Span] = []
        on_path: set[int] = set()
        node: Span | None = span
        while node is not None and id(node) not in facts and id(node) not in on_path:
            path.append(node)
            on_path.add(id(node))
            parent_id = node.parent_id
            node = by_id.get(parent_id) if parent_id else None
        above = facts.get(id(node)) if node is not None else None
        parent = node if above is not None else None
        for child in reversed(path):  # from the top down: each takes its parent's facts
            if parent is None or above is None:
                mine = _Facts()
            else:
                own = _conversation_of(parent)
                mine = _Facts(parent if is_llm(parent) else above.llm, parent if is_tool(parent) else above.tool,
                              own if own is not None else above.conversation)
            facts[id(child)] = mine
            parent, above = child, mine
    return facts


def groups(spans: list[Span]) -> list[Group]:
    facts = ancestry(spans)
    llm = [s for s in spans if is_llm(s)]
    # an LLM span wraps another when it is one of its ancestors: the nearest LLM ancestor of each, and
    # by induction every LLM ancestor, is the nearest LLM ancestor of some LLM span
    wrapping = {f.llm.span_id for s in llm if (f := facts[id(s)]).llm is not None}
    calls = [s for s in llm if s.span_id not in wrapping]
    found: dict[str, Group] = {}
    last_conversation: dict[str | None, str] = {}  # per trace, the conversation of its latest call
    for span in sorted(calls + [s for s in spans if is_tool(s)], key=lambda s: (s.start if s.start is not None else 0, s.order)):
        owner_span = facts[id(span)].tool
        conversation = _conversation_of(span)
        if conversation is None:
            conversation = facts[id(span)].conversation
        if conversation is None and is_tool(span):
            conversation = last_conversation.get(span.trace_id)  # a tool run answers the call before it
        if conversation is not None and is_llm(span):
            last_conversation[span.trace_id] = conversation
        tid = conversation or (f"trace-{span.trace_id}" if span.trace_id else "trace")
        owner = None
        if owner_span is not None:
            call_id = owner_span.attributes.get("gen_ai.tool.call.id")
            owner = call_id if isinstance(call_id, str) and call_id else f"span-{owner_span.span_id}"
            tid = f"{tid}/{owner}"
        group = found.setdefault(tid, Group(tid, owner=owner))
        (group.calls if is_llm(span) else group.tools).append(span)
    return [g for g in found.values() if g.calls]


# -- one thread ------------------------------------------------------------------------------------


def _int_attr(span: Span, keys: tuple[str, ...], where: Where) -> int | None:
    for key in keys:
        if key in span.attributes:
            value = span.attributes[key]
            if isinstance(value, str) and value.isdigit():
                return int(value)
            return where.want_int(value, f"{span.at}.attributes.{key}")
    return None


def usage_of(span: Span, where: Where) -> RecordedUsage | None:
    inp = _int_attr(span, ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"), where)
    out = _int_attr(span, ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"), where)
    read = _int_attr(span, ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens"), where)
    write = _int_attr(span, ("gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_creation_input_tokens"), where)
    reasoning = _int_attr(span, ("gen_ai.usage.reasoning.output_tokens",), where)
    if inp is None and out is None:
        return None
    fresh = inp
    if inp is not None and (read or 0) + (write or 0) <= inp:
        fresh = inp - (read or 0) - (write or 0)
    model = span.attributes.get("gen_ai.response.model") or span.attributes.get("gen_ai.request.model")
    when = datetime.fromtimestamp(span.start / 1e9, tz=UTC).isoformat() if span.start else None
    return RecordedUsage(input_tokens=fresh, output_tokens=out, cache_read_input_tokens=read,
                         cache_creation_input_tokens=write, reasoning_tokens=reasoning, timestamp=when,
                         model=model if isinstance(model, str) else None)


def fingerprint(message: BaseMessage) -> str:
    calls = [(tc["name"], json.dumps(tc["args"], sort_keys=True, default=str)) for tc in getattr(message, "tool_calls", [])]
    return json.dumps([message.type, message_text(message).strip(), calls], default=str)


@dataclass
class Builder:
    """One conversation's thread, built call by call. Messages are only appended, so what each call needs
    to know about the history (its fingerprints, the tool calls still open) is kept up to date as they
    are: a call costs its own spans and input, not the history (10,000 model-call spans took 576 s)."""

    where: Where
    thread_id: str
    messages: list[BaseMessage] = field(default_factory=list)
    usage: dict[str, RecordedUsage] = field(default_factory=dict)
    compactions: list[RecordedCompaction] = field(default_factory=list)
    pending_tools: list[Span] = field(default_factory=list)
    model: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    # -- what the messages up to `_indexed` are known by (`_index`)
    _indexed: int = 0
    _prints: list[str] = field(default_factory=list)  # each message's fingerprint
    _known: dict[str, BaseMessage] = field(default_factory=dict)  # a fingerprint's last message
    _answered: set[Any] = field(default_factory=set)  # tool call ids a ToolMessage answers
    # the calls no ToolMessage answers, in message order: by object, by call id and by tool name
    _open: dict[int, dict[str, Any]] = field(default_factory=dict)
    _open_by_id: dict[Any, dict[int, dict[str, Any]]] = field(default_factory=dict)
    _open_by_name: dict[Any, dict[int, dict[str, Any]]] = field(default_factory=dict)
    _server_at: set[int] = field(default_factory=set)  # where server-side compactions take effect

    def _index(self) -> None:
        """Bring what the history is known by up to the messages appended since the last call."""
        for i in range(self._indexed, len(self.messages)):
            m = self.messages[i]
            fp = fingerprint(m)
            self._prints.append(fp)
            self._known[fp] = m
            if isinstance(m, ToolMessage):
                self._answered.add(m.tool_call_id)
                for tc in self._open_by_id.pop(m.tool_call_id, {}).values():
                    self._close(tc, by_id=False)
            elif isinstance(m, AIMessage):
                for tc in cast(list[dict[str, Any]], m.tool_calls):
                    if tc["id"] not in self._answered:
                        self._open[id(tc)] = tc
                        self._open_by_id.setdefault(tc["id"], {})[id(tc)] = tc
                        self._bucket(tc["name"])[id(tc)] = tc
        self._indexed = len(self.messages)

    def _bucket(self, name: Any) -> dict[int, dict[str, Any]]:
        try:
            return self._open_by_name.setdefault(name, {})
        except TypeError:  # an unhashable name (a hostile span): compared one by one instead
            return {}

    def _close(self, tc: dict[str, Any], *, by_id: bool = True) -> None:
        self._open.pop(id(tc), None)
        if by_id:
            self._open_by_id.get(tc["id"], {}).pop(id(tc), None)
        self._bucket(tc["name"]).pop(id(tc), None)

    def _open_call(self, call_id: Any, name: Any) -> dict[str, Any] | None:
        """The first open call (in message order) with this call id, else with this tool name."""
        self._index()
        if isinstance(call_id, str):
            match = next(iter(self._open_by_id.get(call_id, {}).values()), None)
            if match is not None:
                return match
        try:
            return next(iter(self._open_by_name.get(name, {}).values()), None)
        except TypeError:
            return next((tc for tc in self._open.values() if tc["name"] == name), None)

    def flush_tools(self) -> None:
        for span in self.pending_tools:
            attrs = span.attributes
            call_id = attrs.get("gen_ai.tool.call.id")
            name = attrs.get("gen_ai.tool.name")
            match = self._open_call(call_id, name)
            if match is not None and match["id"] != call_id and isinstance(call_id, str) and call_id:
                self._open_by_id.get(match["id"], {}).pop(id(match), None)
                match["id"] = call_id  # the call's own id, recorded on its execution
                self._open_by_id.setdefault(call_id, {})[id(match)] = match
            result = attrs.get("gen_ai.tool.call.result", attrs.get("gen_ai.output"))
            text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
            tid = match["id"] if match is not None else (call_id if isinstance(call_id, str) else f"otel-{span.span_id}-orphan")
            self.messages.append(ToolMessage(content=text, tool_call_id=tid, name=name if isinstance(name, str) else None,
                                             id=f"otel-{span.span_id or span.order}",
                                             status="error" if attrs.get("error.type") else "success"))
        self.pending_tools = []

    def call(self, span: Span) -> None:
        where = self.where
        prefix = f"{FORMAT}-{span.span_id or span.order}"
        raw_input = span_input(span, where)
        if raw_input is None:
            self.flush_tools()
        else:
            self.pending_tools = []  # the input holds the results the model was sent
            sent: list[BaseMessage] = []
            for i, raw in enumerate(raw_input):
                sent += to_messages(raw, where, prefix, f"in{i}")
            instructions = system_instructions(span)
            if instructions and not any(isinstance(m, SystemMessage) for m in sent):
                sent.insert(0, SystemMessage(content=instructions, id=f"{prefix}-system"))
            self._align(sent, span)
        definitions = decoded(span.attributes.get("gen_ai.tool.definitions"))
        if isinstance(definitions, list) and not self.tools:
            self.tools = [t for t in definitions if isinstance(t, dict)]
        raw_output = span_output(span, where) or []
        produced = [m for raw in raw_output[:1] for m in to_messages(raw, where, prefix, "out")]
        ai = next((m for m in produced if isinstance(m, AIMessage)), None)
        if ai is None:
            ai = AIMessage(content="", id=f"otel-{span.span_id or span.order}")
        ai.id = f"otel-{span.span_id or span.order}"
        self.messages.append(ai)
        recorded = usage_of(span, where)
        if recorded is not None:
            self.usage[str(ai.id)] = recorded
            self.model = self.model or recorded.model
        if COMPACTION_KEY in ai.additional_kwargs:
            self._server_compaction(ai, len(self.messages) - 1, "otel_genai:compaction part")

    def _server_compaction(self, message: BaseMessage, position: int, source: str) -> None:
        summary = str(message.additional_kwargs[COMPACTION_KEY])
        index = position + 1
        if index in self._server_at:
            return
        self._server_at.add(index)
        block = mark(HumanMessage(content=summary, id=f"{message.id}-compaction"), "summary")
        self.compactions.append(RecordedCompaction(index=index, summary=summary, message_id=block.id,
                                                   replacement=[block], kind="server", source=source))

    def _align(self, sent: list[BaseMessage], span: Span) -> None:
        self._index()
        history, known = self._prints, self._known
        k = 0
        while k < len(sent) and k < len(history) and fingerprint(sent[k]) == history[k]:
            k += 1
        compacted = span.attributes.get("gen_ai.conversation.compacted") is True
        if k == len(history) and not compacted:
            self.messages += sent[k:]
            self._mark_input_compactions(sent[k:])
            return
        last_ai = next((i for i in range(len(sent) - 1, -1, -1) if isinstance(sent[i], AIMessage)
                        and fingerprint(sent[i]) in known), None)
        anchor = last_ai if last_ai is not None else max(
            (i for i, m in enumerate(sent) if fingerprint(m) in known), default=-1)
        cut = anchor + 1
        if compacted:
            # The compacted view ends with the new turn: trailing tool results, or the user's message.
            j = len(sent)
            while j > cut and isinstance(sent[j - 1], ToolMessage) and fingerprint(sent[j - 1]) not in known:
                j -= 1
            if j == len(sent) and j > cut and isinstance(sent[j - 1], HumanMessage):
                j -= 1
            cut = j
        replacement = [known.get(fingerprint(m), m) for m in sent[:cut]]
        fresh = [m for m in replacement if fingerprint(m) not in known and not isinstance(m, SystemMessage)]
        for m in fresh:
            mark(m, "summary")
        index = len(self.messages)
        self.compactions.append(RecordedCompaction(
            index=index, summary="\n\n".join(message_text(m) for m in fresh), replacement=replacement,
            kind="summary" if fresh else "trim", trigger="compacted" if compacted else None,
            source="otel_genai:gen_ai.conversation.compacted" if compacted else "otel_genai:input"))
        self.messages += sent[cut:]
        self._mark_input_compactions(sent[cut:])

    def _mark_input_compactions(self, added: list[BaseMessage]) -> None:
        start = len(self.messages) - len(added)  # `added` were just appended
        for i, m in enumerate(added):
            if COMPACTION_KEY in m.additional_kwargs:
                self._server_compaction(m, start + i, "otel_genai:compaction part")


def build(group: Group, where: Where) -> Thread:
    builder = Builder(where, group.thread_id)
    events = sorted([(s.start if s.start is not None else 0, s.order, "llm", s) for s in group.calls] +
                    [(s.start if s.start is not None else 0, s.order, "tool", s) for s in group.tools],
                    key=lambda e: (e[0], e[1]))
    for _, _, kind, span in events:
        if kind == "tool":
            builder.pending_tools.append(span)
        else:
            builder.call(span)
    builder.flush_tools()
    messages = builder.messages
    first_model = next((s.attributes.get("gen_ai.response.model") or s.attributes.get("gen_ai.request.model")
                        for s in group.calls), None)
    human = next((m for m in messages if isinstance(m, HumanMessage)), None)
    title = title_line(message_text(human)) if human is not None and message_text(human).strip() else None
    return Thread(thread_id=group.thread_id, messages=messages, source_format=FORMAT,
                  model=builder.model or (first_model if isinstance(first_model, str) else None),
                  system_prompt=next((message_text(m) for m in messages if isinstance(m, SystemMessage)), None),
                  tools=builder.tools, usage=builder.usage, compactions=builder.compactions, title=title,
                  extra={"llm_spans": len(group.calls), "tool_spans": len(group.tools)})


def _subagent_groups(found: list[Group]) -> dict[str, list[Group]]:
    """The sub-agent groups under each thread id that starts theirs (`<thread>/<call id>`), in file order:
    one pass over the groups' ids, not one over every group per thread (10,000 conversations)."""
    out: dict[str, list[Group]] = {}
    for sub in found:
        if sub.owner is None:
            continue
        tid = sub.thread_id
        for cut in dict.fromkeys(i for i, ch in enumerate(tid) if ch == "/"):
            out.setdefault(tid[:cut], []).append(sub)
    return out


class OtelGenAIImporter:
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        return guarded_sniff(sniff, source)

    def _threads(self, source: Source) -> tuple[list[Group], Where]:
        where = Where(source.label, FORMAT)
        found = groups(read_spans(source, where))
        if not found:
            where.fail("$", "no GenAI model-call spans (gen_ai.operation.name chat, text_completion, "
                            "generate_content or call_llm)")
        return found, where

    def list_threads(self, source: Source) -> list[ThreadRef]:
        found, where = self._threads(source)
        main = [g for g in found if g.owner is None] or found
        subs = _subagent_groups(found)
        return [ThreadRef(t.thread_id, t.title, len(t.messages))
                for t in (self._with_subagents(g, subs, where) for g in main)]

    def _with_subagents(self, group: Group, subs: dict[str, list[Group]], where: Where) -> Thread:
        thread = build(group, where)
        for sub in subs.get(group.thread_id, ()):
            thread.subagents[sub.owner] = build(sub, where)  # type: ignore[index]  # sub-agent groups have owners
        return thread

    def load(self, source: Source, thread_id: str | None) -> Thread:
        found, where = self._threads(source)
        main = [g for g in found if g.owner is None] or found
        ids = [g.thread_id for g in main]
        subs = _subagent_groups(found)
        if thread_id is None:
            return self._with_subagents(main[0], subs, where)
        if thread_id not in ids:
            shown = ", ".join(ids[:SHOWN_IDS]) + (f" … ({len(ids)} threads)" if len(ids) > SHOWN_IDS else "")
            raise ThreadNotFoundError(f"thread {thread_id!r} not found; threads: {shown}", path=source.label, format=FORMAT)
        return self._with_subagents(main[ids.index(thread_id)], subs, where)


IMPORTER = OtelGenAIImporter()
