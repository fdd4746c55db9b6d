"""Transcripts of any size in several formats, for linearity tests and bench/ (issues 38.4 and 39.6).

Each generator returns the bytes of a file holding about `n` messages of a few words each: the shapes
the red-team pass grew to hostile sizes (Claude Code chains with and without recorded usage, OpenTelemetry
model-call spans, Inspect `.eval` archives, OpenAI message lists) and the ones whose readers keep state
across records (Codex rollouts, Gemini CLI sessions with rewinds).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SESSION = "55604662-cf2a-4331-851a-ec234028f8ca"


def _jsonl(rows: Iterator[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in rows)


def claude_code(n: int, usage: bool = True) -> bytes:
    """A Claude Code session of `n` records in one parent chain: a prompt, then tool_use / tool_result
    pairs, the assistant records with (or without) their `usage`."""

    def rows() -> Iterator[dict[str, Any]]:
        parent = None
        for i in range(n):
            base = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/p",
                    "sessionId": SESSION, "version": "2.1.38", "uuid": f"u-{i:08d}",
                    "timestamp": f"2026-02-10T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"}
            k = i // 2
            if i % 2 == 0:
                content: Any = "start" if i == 0 else [
                    {"type": "tool_result", "tool_use_id": f"toolu_{k - 1}", "content": f"r{k}"}]
                yield {**base, "type": "user", "message": {"role": "user", "content": content}}
            else:
                message: dict[str, Any] = {
                    "model": "claude-opus-4-6", "id": f"msg_{k}", "type": "message", "role": "assistant",
                    "content": [{"type": "tool_use", "id": f"toolu_{k}", "name": "Bash", "input": {"command": f"ls {k}"}}],
                    "stop_reason": "tool_use"}
                if usage:
                    message["usage"] = {"input_tokens": 3, "cache_creation_input_tokens": 10,
                                        "cache_read_input_tokens": 2_000 + 12 * k, "output_tokens": 7}
                yield {**base, "type": "assistant", "message": message, "requestId": f"req_{k}"}
            parent = f"u-{i:08d}"

    return _jsonl(rows())


def claude_code_no_usage(n: int) -> bytes:
    return claude_code(n, usage=False)


def otel(n: int, usage: bool = True, nested: bool = False) -> bytes:
    """any-agent's flat spans: `n` messages as n/2 `call_llm` spans (input recorded on the first only,
    a tool call as output) each followed by an `execute_tool` span; `nested`: each call a child of the
    previous one's tool span's sibling chain (deep parent chains)."""
    spans: list[dict[str, Any]] = [{"name": "invoke_agent [a]", "context": {"trace_id": 7, "span_id": 1},
                                    "parent": None, "start_time": 0, "end_time": 10**15,
                                    "attributes": {"gen_ai.operation.name": "invoke_agent"}}]
    t, parent = 1000, 1
    for k in range(max(1, n // 2)):
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "call_llm", "gen_ai.request.model": "mistral/mistral-small-latest",
            "gen_ai.output": json.dumps([{"tool.name": "ls", "tool.args": json.dumps({"p": str(k)})}]),
            "gen_ai.output.type": "json"}
        if k == 0:
            attrs["gen_ai.input.messages"] = json.dumps([{"role": "system", "content": "be brief"},
                                                         {"role": "user", "content": "go"}])
        if usage:
            attrs["gen_ai.usage.input_tokens"] = 100 + 20 * k
            attrs["gen_ai.usage.output_tokens"] = 10
        call_id = 10 + 2 * k
        spans.append({"name": "call_llm m", "context": {"trace_id": 7, "span_id": call_id},
                      "parent": {"trace_id": 7, "span_id": parent}, "start_time": t, "end_time": t + 1,
                      "attributes": attrs})
        spans.append({"name": "execute_tool ls", "context": {"trace_id": 7, "span_id": call_id + 1},
                      "parent": {"trace_id": 7, "span_id": 1}, "start_time": t + 2, "end_time": t + 3,
                      "attributes": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ls",
                                     "gen_ai.tool.args": json.dumps({"p": str(k)}), "gen_ai.output": f"out {k}"}})
        if nested:
            # the next call's parent is an agent span under this one: a chain as deep as the session
            spans.append({"name": "invoke_agent [step]", "context": {"trace_id": 7, "span_id": 10**9 + k},
                          "parent": {"trace_id": 7, "span_id": parent}, "start_time": t, "end_time": t + 4,
                          "attributes": {"gen_ai.operation.name": "invoke_agent"}})
            parent = 10**9 + k
        t += 4
    return json.dumps({"spans": spans}).encode()


def otel_no_usage(n: int) -> bytes:
    return otel(n, usage=False)


def otel_nested(n: int) -> bytes:
    return otel(n, nested=True)


EVAL_HEADER = {"version": 2, "status": "success",
               "eval": {"run_id": "r", "created": "2025-02-11T15:18:04-05:00", "task": "sized", "task_id": "t",
                        "task_version": 0, "dataset": {"name": "sized", "samples": 1}, "model": "openai/gpt-4o",
                        "config": {}},
               "plan": {"name": "plan", "steps": []}, "results": {"total_samples": 1, "completed_samples": 1},
               "stats": {"started_at": "2025-02-11T15:18:04-05:00", "completed_at": "2025-02-11T15:18:05-05:00"}}


def eval_archive(n: int) -> bytes:
    """An Inspect `.eval` zip whose one sample holds `n` tiny user/assistant messages (deflated at level 9:
    3 million such messages fit in a few hundred KB)."""
    sample = {"id": 1, "epoch": 1, "input": "go", "target": "", "messages": "@@", "output": {}, "scores": {},
              "metadata": {}, "store": {}, "events": [], "model_usage": {}, "attachments": {}}
    head, tail = json.dumps(sample).split('"@@"')
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("header.json", json.dumps(EVAL_HEADER))
        with zf.open("samples/1_epoch_1.json", "w", force_zip64=True) as fh:
            fh.write(head.encode() + b"[")
            user, assistant = b'{"role":"user","content":"m"}', b'{"role":"assistant","content":"m"}'
            chunk = 100_000
            for start in range(0, n, chunk):
                part = [user if i % 2 == 0 else assistant for i in range(start, min(n, start + chunk))]
                fh.write((b"," if start else b"") + b",".join(part))
            fh.write(b"]" + tail.encode())
    return out.getvalue()


def openai_messages(n: int) -> bytes:
    """A JSON list of `n` alternating user/assistant {role, content} messages (issue 11's 1M repro)."""
    parts = (json.dumps({"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"}) for i in range(n))
    return ("[" + ",".join(parts) + "]").encode()


def codex(n: int) -> bytes:
    """A Codex rollout: session meta, a prompt, then function calls and outputs, a token count per call."""

    def rows() -> Iterator[dict[str, Any]]:
        ts = "2026-08-03T10:48:56.000Z"
        yield {"timestamp": ts, "type": "session_meta", "payload": {"id": "019fc8be-3658-7ca3-9e29-000000000000",
                                                                   "timestamp": ts, "cwd": "/r", "originator": "codex_cli_rs",
                                                                   "cli_version": "0.146.0"}}
        yield {"timestamp": ts, "type": "response_item",
               "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}}
        for k in range(max(1, n // 2)):
            yield {"timestamp": ts, "type": "event_msg", "payload": {"type": "token_count", "info": {
                "last_token_usage": {"input_tokens": 1_000 + 30 * k, "cached_input_tokens": 900, "output_tokens": 9,
                                     "reasoning_output_tokens": 0, "total_tokens": 1_009 + 30 * k}}}}
            yield {"timestamp": ts, "type": "response_item",
                   "payload": {"type": "function_call", "call_id": f"call-{k}", "name": "shell",
                               "arguments": json.dumps({"command": ["ls", str(k)]})}}
            yield {"timestamp": ts, "type": "response_item",
                   "payload": {"type": "function_call_output", "call_id": f"call-{k}", "output": f"f{k}"}}

    return _jsonl(rows())


GEMINI_META = {"sessionId": "s-1", "projectHash": "ph", "startTime": "2026-05-01T10:00:00Z",
               "lastUpdated": "2026-05-01T10:00:00Z", "kind": "main"}


def gemini(n: int, rewinds: bool = False) -> bytes:
    """A Gemini CLI JSONL session of `n` user/gemini messages with usage; `rewinds`: then as many
    `$rewindTo` lines, each to the last message left (the reader drops one message per line)."""

    def rows() -> Iterator[dict[str, Any]]:
        yield GEMINI_META
        for i in range(n):
            if i % 2 == 0:
                yield {"id": f"m{i}", "timestamp": "2026-05-01T10:00:01Z", "type": "user", "content": f"q{i}"}
            else:
                yield {"id": f"m{i}", "timestamp": "2026-05-01T10:00:01Z", "type": "gemini", "content": f"a{i}",
                       "model": "gemini-3-flash-preview",
                       "tokens": {"input": 100 + i, "output": 5, "cached": 0, "thoughts": 0, "tool": 0, "total": 105 + i}}
        if rewinds:
            for i in range(n - 1, n // 2, -1):
                yield {"$rewindTo": f"m{i}"}

    return _jsonl(rows())


def gemini_rewinds(n: int) -> bytes:
    return gemini(n, rewinds=True)


def _log_messages(k: int) -> list[dict[str, Any]]:
    """The k-th exchange of a logged conversation: a tool call and its result."""
    return [{"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{k}", "type": "function", "function": {"name": "ls", "arguments": json.dumps({"p": str(k)})}}]},
            {"role": "tool", "tool_call_id": f"c{k}", "content": f"r{k}"}]


LOG_WINDOW = 10  # messages a logged request keeps past its system prompt and task (an agent trimming its history)


def request_log(n: int, lhar: bool = False) -> bytes:
    """A request log (context-profiler `{model, messages, metadata}` lines; `lhar`: Context Lens LHAR entries
    with streamed response bodies) of about `n` messages: one request per exchange, each holding the task and
    the last LOG_WINDOW messages, so from the window's end on every request trims its history (a recorded
    compaction at every call) and the file stays linear in `n`."""
    head = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "go"}]

    def rows() -> Iterator[dict[str, Any]]:
        history: list[dict[str, Any]] = []
        if lhar:
            yield {"type": "session", "trace_id": "t1", "started_at": "2026-02-10T12:00:00Z", "tool": "codex", "model": "gpt-4.1"}
        for k in range(max(1, n // 2)):
            sent = head + history[-LOG_WINDOW:]
            answer = _log_messages(k)[0]
            if not lhar:
                yield {"model": "gpt-4.1", "messages": sent, "response": {"choices": [{"message": answer}]},
                       "usage": {"prompt_tokens": 100 + k, "completion_tokens": 5}, "metadata": {"request_id": f"q{k}"}}
            else:
                call = answer["tool_calls"][0]
                chunks = [{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4.1", "choices": [
                              {"index": 0, "delta": {"role": "assistant", "tool_calls": [
                                  {"index": 0, "id": call["id"], "type": "function",
                                   "function": {"name": "ls", "arguments": call["function"]["arguments"][:4]}}]}}]},
                          {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4.1", "choices": [
                              {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {
                                  "arguments": call["function"]["arguments"][4:]}}]}, "finish_reason": "tool_calls"}]}]
                yield {"type": "entry", "id": f"e{k}", "trace_id": "t1", "timestamp": "2026-02-10T12:00:01Z", "sequence": k,
                       "source": {"tool": "codex", "agent_role": "main"},
                       "gen_ai": {"system": "openai", "request": {"model": "gpt-4.1"},
                                  "usage": {"input_tokens": 100 + k, "output_tokens": 5}},
                       "raw": {"request_body": {"model": "gpt-4.1", "messages": sent},
                               "response_body": "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"}}
            history += _log_messages(k)

    return _jsonl(rows())


def lhar(n: int) -> bytes:
    return request_log(n, lhar=True)


def sse_anthropic(n: int) -> bytes:
    """One streamed Anthropic response of about `n` events: a text block of n/2 deltas, then n/8 tool_use
    blocks whose input arrives in 3 partial-JSON pieces each (an SSE body as sent)."""
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                                              "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}]
    events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": f"w{i} "}}
               for i in range(max(1, n // 2))]
    events.append({"type": "content_block_stop", "index": 0})
    for k in range(1, max(1, n // 8) + 1):
        events.append({"type": "content_block_start", "index": k,
                       "content_block": {"type": "tool_use", "id": f"tu{k}", "name": "ls", "input": {}}})
        for piece in ('{"p"', ': "', f'{k}"}}'):
            events.append({"type": "content_block_delta", "index": k, "delta": {"type": "input_json_delta", "partial_json": piece}})
        events.append({"type": "content_block_stop", "index": k})
    events += [{"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": n}},
               {"type": "message_stop"}]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def openai_chunks(n: int) -> bytes:
    """One streamed Chat Completion of about `n` chunks (the Vercel AI SDK's chunk-per-line fixtures): text
    in n/2 chunks, then n/8 tool calls whose arguments arrive in 3 pieces each."""
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    rows = [chunk({"role": "assistant", "content": f"w{i} "}) for i in range(max(1, n // 2))]
    for k in range(max(1, n // 8)):
        rows.append(chunk({"tool_calls": [{"index": k, "id": f"call_{k}", "type": "function",
                                           "function": {"name": "ls", "arguments": '{"p"'}}]}))
        rows += [chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]}) for piece in (': "', f'{k}"}}')]
    rows.append(chunk({}, "tool_calls"))
    return _jsonl(iter(rows))


def openhands_events(n: int) -> list[dict[str, Any]]:
    """OpenHands V1 events of about `n` messages: a system prompt, a task, then an action and its observation
    per call, with a Condensation after every 50 calls forgetting all but the last 10 calls (a bounded view,
    as OpenHands' condensers keep it)."""
    events: list[dict[str, Any]] = [
        {"kind": "SystemPromptEvent", "id": "e0", "timestamp": "2026-01-01T00:00:00", "source": "agent",
         "system_prompt": {"type": "text", "text": "You are OpenHands."}, "tools": [{"name": "terminal"}]},
        {"kind": "MessageEvent", "id": "e1", "timestamp": "t", "source": "user",
         "llm_message": {"role": "user", "content": [{"type": "text", "text": "go"}]}, "activated_skills": [],
         "extended_content": []}]
    kept: list[str] = []
    for k in range(max(1, n // 2)):
        action, seen = f"a{k}", f"o{k}"
        events.append({"kind": "ActionEvent", "id": action, "timestamp": "t", "source": "agent", "thought": [],
                       "thinking_blocks": [], "action": {"kind": "ExecuteBashAction", "command": "ls"}, "tool_name": "terminal",
                       "tool_call_id": f"c{k}", "tool_call": {"id": f"c{k}", "name": "terminal",
                                                              "arguments": json.dumps({"command": f"ls {k}"})},
                       "llm_response_id": f"r{k}"})
        events.append({"kind": "ObservationEvent", "id": seen, "timestamp": "t", "source": "environment",
                       "tool_name": "terminal", "tool_call_id": f"c{k}", "action_id": action,
                       "observation": {"kind": "ExecuteBashObservation", "content": [{"type": "text", "text": f"f{k}"}],
                                       "exit_code": 0}})
        kept += [action, seen]
        if k % 50 == 49:  # the condenser keeps the view bounded (LLMSummarizingCondenser: keep_first + a tail)
            forgotten, kept = kept[:-20], kept[-20:]
            events.append({"kind": "Condensation", "id": f"x{k}", "timestamp": "t", "source": "environment",
                           "forgotten_event_ids": forgotten, "summary": f"summary {k}", "summary_offset": 1,
                           "llm_response_id": f"cond{k}"})
    return events


def openhands(n: int) -> bytes:
    return json.dumps(openhands_events(n)).encode()


# name -> (generator, file name, the format it must be read as)
SIZED: dict[str, tuple[Callable[[int], bytes], str, str]] = {
    "claude_code": (claude_code, "session.jsonl", "claude_code"),
    "claude_code_no_usage": (claude_code_no_usage, "session.jsonl", "claude_code"),
    "otel": (otel, "trace.json", "otel_genai"),
    "otel_no_usage": (otel_no_usage, "trace.json", "otel_genai"),
    "otel_nested": (otel_nested, "trace.json", "otel_genai"),
    "eval": (eval_archive, "log.eval", "inspect_ai"),
    "openai_messages": (openai_messages, "messages.json", "openai_messages"),
    "codex": (codex, "rollout-2026-08-03T10-48-56-019fc8be.jsonl", "codex"),
    "gemini": (gemini, "session-2026-05-01T10-00-s1.jsonl", "gemini_cli"),
    "gemini_rewinds": (gemini_rewinds, "session-2026-05-01T10-00-s1.jsonl", "gemini_cli"),
    "request_log": (request_log, "profile.jsonl", "request_log"),
    "lhar": (lhar, "session.lhar", "request_log"),
    "sse_anthropic": (sse_anthropic, "response.sse.txt", "sse_response"),
    "openai_chunks": (openai_chunks, "response.chunks.txt", "sse_response"),
    "openhands": (openhands, "events.json", "openhands"),
}


def openhands_export(folder: Path, n: int) -> Path:
    """An exported OpenHands V1 conversation: events.json with trajectory.json (its baseState) beside it; the
    state file is the one opened (the importer reads the events beside it)."""
    (folder / "events.json").write_bytes(openhands(n))
    state = {"id": "conv1", "agent": {"kind": "Agent", "llm": {"model": "litellm_proxy/claude-sonnet-4-5", "max_input_tokens": 200_000},
                                      "condenser": {"kind": "LLMSummarizingCondenser", "max_size": 120, "keep_first": 2}}}
    (folder / "trajectory.json").write_text(json.dumps({"baseState": state, "conversation_id": "conv1"}))
    return folder / "trajectory.json"


def cline_ui_only(folder: Path, n: int) -> Path:
    """A Cline task exported with its ui_messages.json alone, about `n` messages: a request row per exchange
    (its text what Cline displayed, its usage), the answer's text and a command row after it."""
    task = folder / "1733000000000"
    task.mkdir()
    rows: list[dict[str, Any]] = [{"ts": 1000, "type": "say", "say": "task", "text": "List everything", "conversationHistoryIndex": -1}]
    for k in range(max(1, n // 2)):
        request = "<task>\nList everything\n</task>" if k == 0 else f"[execute_command for 'ls {k - 1}'] Result:\nf{k - 1}"
        info = {"request": request, "tokensIn": 10, "tokensOut": 5, "cacheWrites": 100, "cacheReads": 1_000 + 10 * k}
        index = 2 * k - 1
        rows.append({"ts": 2000 + 10 * k, "type": "say", "say": "api_req_started", "text": json.dumps(info),
                     "conversationHistoryIndex": index})
        rows.append({"ts": 2001 + 10 * k, "type": "say", "say": "text", "text": f"step {k}", "conversationHistoryIndex": index + 1})
        rows.append({"ts": 2002 + 10 * k, "type": "ask", "ask": "command", "text": f"ls {k}", "conversationHistoryIndex": index + 1})
    (task / "ui_messages.json").write_text(json.dumps(rows))
    return task / "ui_messages.json"


# name -> (writer of the files into a folder, returning the one to open; the format it must be read as)
SIZED_FOLDERS: dict[str, tuple[Callable[[Path, int], Path], str]] = {
    "openhands_export": (openhands_export, "openhands"),
    "cline_ui_only": (cline_ui_only, "cline"),
}
