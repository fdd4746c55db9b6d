"""Gemini CLI's chat compression: when it fires, what it keeps, and when it gives up.

From google-gemini/gemini-cli `packages/core/src/services/chatCompressionService.ts` (and
`core/client.ts`, `utils/fileUtils.ts`, `utils/tokenCalculation.ts`, `config/config.ts`):

- **When**: before every model call (`processTurn` calls `tryCompressChat`), if the *previous*
  request's prompt token count (`lastPromptTokenCount`) is at least `threshold × tokenLimit(model)`,
  `DEFAULT_COMPRESSION_TOKEN_THRESHOLD` = 0.5 (`model.compressionThreshold` replaces it:
  `compaction.trigger=fraction:F`, or `tokens:N`).
- **Reverse token budget** (`truncateHistoryToBudget`): walking from the newest message back, tool
  responses are counted (`estimateTokenCountSync`: 0.25 token per ASCII character, 1.3 per other
  character); once they pass `COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET` = 50,000, every older
  response is saved to a file and replaced by `formatTruncatedToolOutput`: when longer than
  `DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD` = 40,000 characters, its first 20 % and last 80 % of that
  many characters around "... [N characters omitted] ...".
- **Split** (`findCompressSplitPoint(contents, 1 - 0.3)`): the oldest index at which 70 % of the
  history's characters (`JSON.stringify` of each Gemini content) lie before it and which is a plain
  user turn (not function responses); all of it when the history ends with a model answer and no such
  point comes after. The newest ~30 % is kept (`COMPRESSION_PRESERVE_THRESHOLD`), from the truncated
  history; the summarizer reads the untruncated part unless Gemini CLI's estimate of it reaches the model's
  limit (`originalToCompressTokenCount < tokenLimit(model)`).
- **Summary**: a `<state_snapshot>` (the compression prompt's XML: overall_goal, key_knowledge,
  file_system_state, recent_actions, current_plan), checked by a second "probe" call; the history
  becomes `[user: snapshot, model: "Got it. Thanks for the additional context!", ...kept]`.
- **Rejection**: when the new history counts more tokens than the previous prompt
  (`COMPRESSION_FAILED_INFLATED_TOKEN_COUNT`) nothing changes, and afterwards (`hasFailedCompressionAttempt`)
  Gemini CLI only truncates: the truncated history replaces the old one if it is smaller
  (`CONTENT_TRUNCATED`). Both counts of the new history are Gemini CLI's own estimate
  (`calculateRequestTokenCount` → `estimateTokenCountSync` for text-only contents, `estimate_history`), not a
  tokenizer's: the previous prompt is the provider's count, so dense text (~2.5 characters a token) passes
  where a real count of the same history would not.
- **Shell output as recorded** (`scheduler/tool-executor.ts` `truncateOutputIfNeeded`, `config/config.ts`
  `getTruncateToolOutputThreshold`): a shell tool's output longer than
  `min(4 × (tokenLimit(model) − lastPromptTokenCount), truncateToolOutputThreshold = 40,000)` characters is saved
  to a file and recorded as `formatTruncatedToolOutput` of it (`tool_result`, `truncate_result` events). Without
  it a replayed 108,000-character command output entered the history whole.
"""

from __future__ import annotations

import json
import math
import operator
import threading
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engine.base.errors import ConfigError
from engine.config.sections import CompactionConfig
from engine.policies.base import Compaction, Measure, PolicyContext
from engine.summarizers.reading import prior_sections
from engine.thread.kinds import mark, message_kind
from engine.thread.message_memo import MessageMemo
from engine.thread.model import stable_id
from engine.tokens.content import message_text

DEFAULT_COMPRESSION_TOKEN_THRESHOLD = 0.5
COMPRESSION_PRESERVE_THRESHOLD = 0.3
COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET = 50_000
DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD = 40_000
MAX_CHARS_FOR_FULL_HEURISTIC = 100_000  # utils/tokenCalculation.ts
# Gemini CLI truncates `run_shell_command` output as it records it (scheduler/tool-executor.ts); a replayed thread's
# shell tool is its own agent's (the names of engine/evals/actions.py `TOOL_KINDS` that run a command)
SHELL_TOOLS = frozenset({"run_shell_command", "Bash", "bash", "execute", "shell", "local_shell", "exec_command",
                         "exec", "execute_bash", "execute_command"})
ACKNOWLEDGEMENT = "Got it. Thanks for the additional context!"
SUMMARY_PROMPT = (
    "You are the component that summarizes internal chat history into a given structure. When the conversation "
    "history grows too large, you will be invoked to distill the entire history into a concise, structured XML "
    "snapshot. [...] generate the final <state_snapshot> XML object: <overall_goal>, <key_knowledge>, "
    "<file_system_state>, <recent_actions>, <current_plan>."
)
PROBE_PROMPT = (
    "Critically evaluate the <state_snapshot> you just generated. Did you omit any specific technical details, "
    "file paths, tool results, or user constraints mentioned in the history? If anything is missing or could be "
    "more precise, generate a FINAL, improved <state_snapshot>. Otherwise, repeat the exact same <state_snapshot> "
    "again."
)
FAILED = "gemini_failed_compression"


# -- pure rules ---------------------------------------------------------------------------------------
def _text_estimate(text: str) -> float:
    """`estimateTextTokens` (utils/tokenCalculation.ts): 0.25 per ASCII character, 1.3 per other character;
    a text over `MAX_CHARS_FOR_FULL_HEURISTIC` = 100,000 characters is its length / 4."""
    if len(text) > MAX_CHARS_FOR_FULL_HEURISTIC:
        return len(text) / 4
    ascii_chars = len(text.encode("ascii", "ignore"))  # the code points <= 127 (a per-character loop is 40x slower)
    return ascii_chars * 0.25 + (len(text) - ascii_chars) * 1.3


def estimate_tokens(text: str) -> int:
    """`estimateTokenCountSync` for text, floored."""
    return math.floor(_text_estimate(text))


def _json(value: Any) -> str:
    """`JSON.stringify(value)`."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def estimate_parts(parts: Sequence[dict[str, Any]]) -> int:
    """`estimateTokenCountSync(parts)` (utils/tokenCalculation.ts): a text part by `estimateTextTokens`, a function
    response by (its name + `JSON.stringify` of its response) / 4, any other part (a function call) by
    `JSON.stringify` of it / 4; the total floored."""
    total = 0.0
    for part in parts:
        if isinstance(part.get("text"), str):
            total += _text_estimate(part["text"])
        elif "functionResponse" in part:
            response = part["functionResponse"]
            total += (len(response.get("name") or "") + len(_json(response.get("response")))) / 4
        else:
            total += len(_json(part)) / 4
    return math.floor(total)


def estimate_history(messages: Sequence[BaseMessage]) -> int:
    """What Gemini CLI counts a history as when it checks a compression (`calculateRequestTokenCount` of its
    parts: text-only, so `estimateTokenCountSync`; chatCompressionService.ts `newTokenCount`,
    `truncatedTokenCount`): `estimate_parts` of `contents(messages)`' parts.

    Every term is a whole number of twentieths (0.25 and 1.3 a character, a JSON length / 4), so each
    message's terms are kept per message as one whole number of twentieths (`_twentieths`) and the history's
    sum is exact (Gemini CLI adds floats, character by character: the same sum but for rounding). Summed
    again from the JSON of every part at every call, a 1,000-step thread past a rejected compression (every
    later call checks a truncation) took 22 s to replay."""
    return _sum_twentieths(messages) // 20


# The last history summed on this thread and its running sums: the next call (the same history grown, or
# truncated further only near its end) adds only what follows the part they share (compared by identity,
# at C speed). Per thread: each replay runs on one.
_LAST = threading.local()


def _sum_twentieths(messages: Sequence[BaseMessage]) -> int:
    last: tuple[tuple[BaseMessage, ...], list[int]] | None = getattr(_LAST, "sums", None)
    current = tuple(messages)
    if last is None:
        shared = 0
        running = [0]
    else:
        previous, running = last
        same = list(map(operator.is_, previous, current))
        shared = same.index(False) if False in same else len(same)
        running = running[:shared + 1]
    total = running[-1]
    for m in current[shared:]:
        total += _twentieths(m)
        running.append(total)
    _LAST.sums = (current, running)
    return total


# Per message object (and its content, name and tool calls): `_twentieths`, and a tool result's estimate and
# its `truncate_to_budget` cut. Weak on the message (engine.thread.message_memo).
_MEMO = MessageMemo()


def _twentieths(m: BaseMessage) -> int:
    slot = _MEMO.slot(m)
    name, calls = m.name, (m.tool_calls if isinstance(m, AIMessage) else None)
    hit = slot.get("twentieths")
    if hit is not None and hit[0] is name and hit[1] is calls:
        return hit[2]  # type: ignore[no-any-return]
    value = _message_twentieths(m)
    slot["twentieths"] = (name, calls, value)
    return value


def _text_twentieths(text: str) -> int:
    """`_text_estimate(text)` × 20, exactly."""
    if len(text) > MAX_CHARS_FOR_FULL_HEURISTIC:
        return 5 * len(text)
    ascii_chars = len(text.encode("ascii", "ignore"))
    return 5 * ascii_chars + 26 * (len(text) - ascii_chars)


def _message_twentieths(m: BaseMessage) -> int:
    """The terms `estimate_parts` adds for the parts `contents` makes of `m`, × 20."""
    if isinstance(m, ToolMessage):  # a functionResponse: (its name + JSON of its response) / 4
        return 5 * (len(m.name or "") + len(_json({"output": message_text(m)})))
    if isinstance(m, AIMessage):  # its text, then a functionCall per tool call: JSON of the part / 4
        text = message_text(m)
        return (_text_twentieths(text) if text else 0) + sum(
            5 * len(_json({"functionCall": {"name": tc.get("name"), "args": tc.get("args") or {}}})) for tc in m.tool_calls)
    return _text_twentieths(message_text(m))


def compression_threshold(window_tokens: int, trigger: Any = None) -> int:
    if trigger is None:
        return int(DEFAULT_COMPRESSION_TOKEN_THRESHOLD * window_tokens)
    if trigger.type == "fraction":
        return int(float(trigger.value) * window_tokens)
    if trigger.type == "tokens":
        return int(trigger.value)
    raise ConfigError("Gemini CLI compresses on tokens: use fraction:F or tokens:N", key="compaction.trigger")


def contents(messages: Sequence[BaseMessage]) -> list[tuple[dict[str, Any], list[int]]]:
    """The history as Gemini `Content`s (consecutive tool results are one user content), with the
    message positions each one comes from."""
    out: list[tuple[dict[str, Any], list[int]]] = []
    for i, m in enumerate(messages):
        if isinstance(m, ToolMessage):
            part = {"functionResponse": {"id": m.tool_call_id, "name": m.name or "",
                                         "response": {"output": message_text(m)}}}
            if out and out[-1][0]["role"] == "user" and out[-1][0]["parts"] \
                    and "functionResponse" in out[-1][0]["parts"][0]:
                out[-1][0]["parts"].append(part)
                out[-1][1].append(i)
            else:
                out.append(({"role": "user", "parts": [part]}, [i]))
        elif isinstance(m, AIMessage):
            parts: list[dict[str, Any]] = [{"text": message_text(m)}] if message_text(m) else []
            parts += [{"functionCall": {"name": tc.get("name"), "args": tc.get("args") or {}}} for tc in m.tool_calls]
            out.append(({"role": "model", "parts": parts}, [i]))
        else:
            out.append(({"role": "user", "parts": [{"text": message_text(m)}]}, [i]))
    return out


def find_compress_split_point(items: Sequence[dict[str, Any]], fraction: float) -> int:
    """`findCompressSplitPoint`, line for line (an index into `items`; len(items) = everything)."""
    if fraction <= 0 or fraction >= 1:
        raise ValueError("Fraction must be between 0 and 1")
    char_counts = [len(json.dumps(c, ensure_ascii=False, separators=(",", ":"))) for c in items]
    target = sum(char_counts) * fraction
    last_split = 0
    cumulative = 0
    for i, c in enumerate(items):
        if c["role"] == "user" and not any("functionResponse" in p for p in c.get("parts", [])):
            if cumulative >= target:
                return i
            last_split = i
        cumulative += char_counts[i]
    last = items[-1] if items else None
    if last is not None and last["role"] == "model" and not any("functionCall" in p for p in last.get("parts", [])):
        return len(items)
    return last_split


def truncated_output(text: str, output_file: str, max_chars: int = DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD) -> str:
    """`formatTruncatedToolOutput`: the first 20 % and last 80 % of `max_chars`."""
    if len(text) <= max_chars:
        return text
    head_chars = math.floor(max_chars * 0.2)
    tail_chars = max_chars - head_chars
    omitted = len(text) - head_chars - tail_chars
    return (f"Output too large. Showing first {head_chars:,} and last {tail_chars:,} characters. "
            f"For full output see: {output_file}\n{text[:head_chars]}\n\n... [{omitted:,} characters omitted] ..."
            f"\n\n{text[-tail_chars:]}")


def shell_output_threshold(window_tokens: int, previous_request_tokens: int | None) -> int:
    """`getTruncateToolOutputThreshold` (config/config.ts): the window left after the previous prompt, at 4
    characters a token, at most `truncateToolOutputThreshold` (40,000); an unknown window leaves 40,000."""
    if not window_tokens:
        return DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD
    return min(4 * (window_tokens - (previous_request_tokens or 0)), DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD)


def truncate_to_budget(messages: Sequence[BaseMessage], budget: int = COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET,
                       max_chars: int = DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD) -> list[BaseMessage]:
    """`truncateHistoryToBudget`: older tool responses beyond the reverse budget are truncated.

    A result's estimate and its cut copy are made once per message and `max_chars` (`_cut`): the check runs
    before every call past the threshold, and the same copy keeps the counters' caches hitting."""
    out = list(messages)
    used = 0
    for i in range(len(out) - 1, -1, -1):
        m = out[i]
        if not isinstance(m, ToolMessage):
            continue
        tokens, short, short_tokens = _cut(m, max_chars)
        if used + tokens > budget:
            if short is not m:
                out[i] = short
            used += short_tokens
        else:
            used += tokens
    return out


def _cut(m: ToolMessage, max_chars: int) -> tuple[int, BaseMessage, int]:
    """(the result's estimate, the result cut to `max_chars` — itself when that changes nothing —, its estimate)."""
    slot = _MEMO.slot(m)
    key = (m.name, m.tool_call_id, max_chars)
    hit = slot.get("cut")
    if hit is not None and hit[0] == key:
        return hit[1]  # type: ignore[no-any-return]
    text = message_text(m)
    short = truncated_output(text, f"tool-outputs/{m.name or 'unknown_tool'}_{m.tool_call_id}.txt", max_chars)
    copy = m if short == text else m.model_copy(update={"content": short})
    value = (estimate_tokens(text), copy, estimate_tokens(short))
    slot["cut"] = (key, value)
    return value


def state_snapshot(summary: str) -> str:
    """The offline summary's sections in the `<state_snapshot>` the compression prompt asks for."""
    if "<state_snapshot>" in summary:
        return summary
    sections = prior_sections(summary)

    def block(tag: str, lines: list[str]) -> str:
        body = "\n".join(f"        {ln}" for ln in lines) if lines else "        None"
        return f"    <{tag}>\n{body}\n    </{tag}>"

    facts = sections.get("SUMMARY", [])
    return "\n".join(["<state_snapshot>",
                      block("overall_goal", sections.get("SESSION INTENT", [])),
                      block("key_knowledge", facts[:-5] if len(facts) > 5 else []),
                      block("file_system_state", sections.get("ARTIFACTS", [])),
                      block("recent_actions", facts[-5:]),
                      block("current_plan", sections.get("NEXT STEPS", [])),
                      "</state_snapshot>"])


_TAG_SECTIONS = (("overall_goal", "SESSION INTENT"), ("key_knowledge", "SUMMARY"), ("recent_actions", "SUMMARY"),
                 ("file_system_state", "ARTIFACTS"), ("current_plan", "NEXT STEPS"))


def snapshot_sections(snapshot: str) -> str:
    """An offline `<state_snapshot>` back in the offline summarizer's sections, so the next snapshot keeps
    what this one held (the compression prompt tells the model to integrate a previous snapshot)."""
    merged: dict[str, list[str]] = {}
    for tag, section in _TAG_SECTIONS:
        start, end = snapshot.find(f"<{tag}>"), snapshot.find(f"</{tag}>")
        lines = [ln.strip() for ln in snapshot[start:end].splitlines()] if 0 <= start < end else []
        merged.setdefault(section, []).extend(ln for ln in lines if ln.startswith("- "))
    return "\n\n".join(f"## {section}\n" + ("\n".join(lines) or "None") for section, lines in merged.items())


def for_offline_summary(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Earlier snapshots as the offline summarizer reads earlier summaries (see `snapshot_sections`)."""
    return [m.model_copy(update={"content": snapshot_sections(message_text(m))})
            if message_kind(m) == "summary" and message_text(m).startswith("<state_snapshot>") else m
            for m in messages]


# -- the policy ---------------------------------------------------------------------------------------
class GeminiCliPolicy:
    name = "gemini-cli"
    summary_prompt = SUMMARY_PROMPT

    def threshold_tokens(self, window_tokens: int, max_output_tokens: int | None, config: CompactionConfig,
                         *, thread: Any = None) -> int:
        return compression_threshold(window_tokens, config.trigger)

    def should_compact(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> bool:
        last = ctx.previous_request_tokens
        return last is not None and last >= compression_threshold(ctx.window_tokens, ctx.config.trigger)

    def measure(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> Measure:
        """The previous request's size (`lastPromptTokenCount`) against the compression threshold."""
        threshold = compression_threshold(ctx.window_tokens, ctx.config.trigger)
        trigger = ctx.config.trigger
        expression = (f"{DEFAULT_COMPRESSION_TOKEN_THRESHOLD:.0%} of {ctx.window_tokens:,}" if trigger is None
                      else f"{trigger} of {ctx.window_tokens:,}")
        return Measure(ctx.previous_request_tokens, threshold, quantity="the previous request (lastPromptTokenCount)",
                       series="previous request", expression=expression)

    def rebuild(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> Compaction:
        original_tokens = ctx.previous_request_tokens or 0
        truncated = truncate_to_budget(history)
        if ctx.memory.get(FAILED):
            smaller = estimate_history(truncated) < original_tokens  # `truncatedTokenCount`
            if smaller and truncated != list(history):
                return Compaction(truncated, kind="trim", detail={"status": "CONTENT_TRUNCATED"})
            return Compaction(None, detail={"status": "NOOP"})
        keep = COMPRESSION_PRESERVE_THRESHOLD
        if ctx.config.keep is not None:
            if ctx.config.keep.type != "fraction":
                raise ConfigError("Gemini CLI keeps a fraction of the history: use fraction:F", key="compaction.keep")
            keep = float(ctx.config.keep.value)
        items = contents(truncated)
        split = find_compress_split_point([c for c, _ in items], 1 - keep)
        if split == 0:
            return Compaction(None, detail={"status": "NOOP"})  # nothing before the split point
        cut = items[split][1][0] if split < len(items) else len(history)
        originals = list(history[:cut])
        # "High Fidelity Decision" (chatCompressionService.ts): the untruncated part when its estimate is under the
        # model's limit (no version of the file keeps a 20,000-token buffer here)
        for_summary = originals if estimate_history(originals) < ctx.window_tokens else truncated[:cut]
        if ctx.offline:
            for_summary = for_offline_summary(for_summary)
        draft = ctx.summarize(for_summary, self.summary_prompt)
        probe = ctx.summarize([*for_summary, AIMessage(draft, id="gemini-draft")], PROBE_PROMPT)
        # the probe call is made (and costs what it costs); the offline summarizer would only repeat itself
        final = draft if ctx.offline else (probe.strip() or draft)
        snapshot = state_snapshot(final) if ctx.offline else final
        rebuilt: list[BaseMessage] = [
            mark(HumanMessage(content=snapshot, id=stable_id("gemini-snapshot", ctx.step, snapshot)), "summary"),
            AIMessage(content=ACKNOWLEDGEMENT, id=stable_id("gemini-ack", ctx.step, ACKNOWLEDGEMENT)),
            *[m for m in truncated[cut:] if not isinstance(m, SystemMessage)],
        ]
        # `newTokenCount`: Gemini CLI's estimate of the new history against the previous prompt's recorded count
        # (chatCompressionService.ts); a tokenizer's count of it would reject compressions Gemini CLI keeps
        new_tokens = estimate_history(rebuilt)
        if new_tokens > original_tokens:
            ctx.memory[FAILED] = True
            return Compaction(None, rejected=f"the compressed history (Gemini CLI's estimate: {new_tokens:,} tokens) "
                                             f"would be larger than the previous prompt ({original_tokens:,})",
                              detail={"status": "COMPRESSION_FAILED_INFLATED_TOKEN_COUNT", "new_tokens": new_tokens})
        return Compaction(rebuilt, summary=snapshot, detail={"status": "COMPRESSED", "split_message_index": cut,
                                                              "kept_from": cut})

    def tool_result(self, message: ToolMessage, ctx: PolicyContext) -> ToolMessage:
        """A shell tool's output as Gemini CLI records it (`truncateOutputIfNeeded`, scheduler/tool-executor.ts):
        over `shell_output_threshold` characters (and that threshold above 0), saved to a file and cut to its
        first 20 % and last 80 % of the threshold (`formatTruncatedToolOutput`)."""
        if message.name not in SHELL_TOOLS or not isinstance(message.content, str):
            return message
        threshold = shell_output_threshold(ctx.window_tokens, ctx.previous_request_tokens)
        if threshold <= 0 or len(message.content) <= threshold:
            return message
        path = f"tool-outputs/{message.name}_{message.tool_call_id}.txt"
        return message.model_copy(update={"content": truncated_output(message.content, path, threshold)})


POLICY = GeminiCliPolicy()
