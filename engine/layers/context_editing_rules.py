"""Clearing old tool results and thinking: each published rule as a pure function over a message list.

Every rule takes the messages (never mutated) and returns an `Edit`: the edited list, in which the
messages it did not touch are the very same objects, and what it cleared. A cleared result is a copy
of the ToolMessage with the placeholder as content, `artifact=None` and
`response_metadata["context_editing"] = {"cleared": True, "strategy": ...}` — LangChain's marker,
which `engine.thread.kinds.message_kind` reads as a stub.

- `clear_tool_uses_langchain` — LangChain 1.5.2 `ClearToolUsesEdit.apply`
  (`langchain/agents/middleware/context_editing.py`), line for line: strict `>` trigger; the last
  `keep` ToolMessages are kept whatever their tool; already-cleared, unmatched (the nearest earlier
  AIMessage has no call with that id) and excluded results are skipped; `clear_at_least` stops the
  loop once that many tokens were reclaimed (recounted after each clearing); `clear_tool_inputs`
  empties the call's `args` and lists the id in the AI message's
  `response_metadata["context_editing"]["cleared_tool_inputs"]`.
- `clear_tool_uses_anthropic` — Anthropic's `clear_tool_uses_20250919` (platform.claude.com/docs/en/
  build-with-claude/context-editing, "Configuration options"): once the prompt exceeds `trigger`
  input tokens, the oldest tool results are cleared in chronological order, the `keep` most recent
  tool uses kept and `exclude_tools` never cleared; `clear_at_least` "ensures a minimum number of
  tokens is cleared each time", so an edit that would clear less is not applied; `clear_tool_inputs`
  is a bool or a list of tool names.
- `clear_thinking` — Anthropic's `clear_thinking_20251015` (same page, "Thinking block clearing"):
  the thinking of all but the last `keep` assistant turns (a turn runs from one user turn to the
  next, tool loop included) is dropped; `"all"` keeps every turn. Inspect's `keep_thinking_turns`
  counts every assistant message as a turn (`per_message=True`).
- `clear_tool_uses_inspect` — Inspect AI `CompactionEdit` (`src/inspect_ai/model/_compaction/edit.py`):
  excluded tools are left out before the last `keep_tool_uses` tool uses are kept; a cleared result
  reads `(Tool result removed)`; with `keep_tool_inputs=False` the result is removed and the call
  replaced by the text `[Tool call: NAME (parameters and results removed from history)]`.
- `prune_opencode` — OpenCode's `SessionCompaction.prune` (`packages/opencode/src/session/compaction.ts`):
  walking back from the newest message, the last two user turns are never touched, the walk stops at
  a summary or at an already pruned result, protected tools (`skill`) are skipped, and once more than
  `PRUNE_PROTECT` = 40,000 tokens (chars / 4) of tool output are behind it every older result is
  marked; the marks apply only if they free more than `PRUNE_MINIMUM` = 20,000 tokens.
- `microcompact_claude_code` — Claude Code's time-based microcompact (`services/compact/microCompact.ts`,
  as published by ports of the shipped bundle: tetsuo-ai/agenc-core PR #463, lijunzh/koda PR #660):
  of the results of the compactable tools (Read, Bash/PowerShell, Grep, Glob, WebSearch, WebFetch,
  Edit, Write) all but the last 5 read `[Old tool result content cleared]`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.recorded.history import has_thinking, starts_turn, without_thinking
from engine.thread.kinds import message_kind
from engine.tokens.content import message_text

LANGCHAIN_PLACEHOLDER = "[cleared]"  # langchain DEFAULT_TOOL_PLACEHOLDER
INSPECT_PLACEHOLDER = "(Tool result removed)"  # inspect_ai TOOL_RESULT_REMOVED
CLEARED_PLACEHOLDER = "[Old tool result content cleared]"  # Claude Code and OpenCode
INSPECT_CALL_REMOVED = "[Tool call: {name} (parameters and results removed from history)]"
OPENCODE_PRUNE_PROTECT = 40_000
OPENCODE_PRUNE_MINIMUM = 20_000
OPENCODE_PROTECTED_TOOLS: tuple[str, ...] = ("skill",)
OPENCODE_PROTECTED_TURNS = 2
CLAUDE_CODE_KEEP_RECENT = 5
CLAUDE_CODE_COMPACTABLE_TOOLS: tuple[str, ...] = ("Read", "Bash", "PowerShell", "Grep", "Glob", "WebSearch",
                                                  "WebFetch", "Edit", "Write")

Count = Callable[[Sequence[BaseMessage]], int]


@dataclass(frozen=True)
class EditSettings:
    """A style's settings with every default filled in (what `context_editing` runs with)."""

    style: str
    trigger: tuple[str, float] | None  # ("tokens", N) or ("fraction", F); None: no token trigger
    idle_minutes: float | None
    keep: int
    keep_tokens: int | None
    clear_at_least: int
    exclude_tools: tuple[str, ...]
    only_tools: tuple[str, ...] | None
    clear_tool_inputs: bool | tuple[str, ...]
    placeholder: str
    keep_thinking_turns: int | Literal["all"] | None


# Each style's own defaults, from its source (see the module docstring). Anthropic documents no
# placeholder text for a cleared result; LangChain's is used.
STYLE_DEFAULTS: dict[str, dict[str, Any]] = {
    "langchain": {"trigger": ("tokens", 100_000), "keep": 3, "clear_at_least": 0, "placeholder": LANGCHAIN_PLACEHOLDER},
    "anthropic": {"trigger": ("tokens", 100_000), "keep": 3, "clear_at_least": 0, "placeholder": LANGCHAIN_PLACEHOLDER},
    "inspect": {"trigger": ("fraction", 0.9), "keep": 3, "clear_at_least": 0, "placeholder": INSPECT_PLACEHOLDER,
                "keep_thinking_turns": 1},
    "opencode": {"trigger": None, "keep": 0, "keep_tokens": OPENCODE_PRUNE_PROTECT,
                 "clear_at_least": OPENCODE_PRUNE_MINIMUM, "exclude_tools": OPENCODE_PROTECTED_TOOLS,
                 "placeholder": CLEARED_PLACEHOLDER},
    "claude-code": {"trigger": None, "idle_minutes": 60.0, "keep": CLAUDE_CODE_KEEP_RECENT, "clear_at_least": 0,
                    "only_tools": CLAUDE_CODE_COMPACTABLE_TOOLS, "placeholder": CLEARED_PLACEHOLDER},
}


def settings_for(config: Any) -> EditSettings:
    """`config` (a ContextEditingConfig) with the style's defaults where it says null."""
    base = STYLE_DEFAULTS[config.style]

    def pick(name: str, fallback: Any = None) -> Any:
        own = getattr(config, name)
        return own if own is not None else base.get(name, fallback)

    trigger = config.trigger.to_tuple() if config.trigger is not None else base.get("trigger")
    return EditSettings(
        style=config.style, trigger=trigger, idle_minutes=pick("idle_minutes"), keep=int(pick("keep", 0)),
        keep_tokens=pick("keep_tokens"), clear_at_least=int(pick("clear_at_least", 0)),
        exclude_tools=tuple(pick("exclude_tools", ())), only_tools=pick("only_tools"),
        clear_tool_inputs=config.clear_tool_inputs, placeholder=str(pick("placeholder")),
        keep_thinking_turns=pick("keep_thinking_turns"))


@dataclass
class Edit:
    """What a rule did: the edited messages and the ids it cleared (empty lists: nothing)."""

    messages: list[BaseMessage]
    cleared_call_ids: list[str] = field(default_factory=list)  # tool results cleared (or removed)
    cleared_input_ids: list[str] = field(default_factory=list)  # tool calls whose arguments were cleared
    cleared_thinking_ids: list[str] = field(default_factory=list)  # AI messages whose thinking was dropped
    removed_ids: list[str] = field(default_factory=list)  # messages taken out of the list (Inspect)

    @property
    def changed(self) -> bool:
        return bool(self.cleared_call_ids or self.cleared_input_ids or self.cleared_thinking_ids)


def is_cleared(message: BaseMessage) -> bool:
    """A tool result some rule already cleared (LangChain's marker)."""
    meta = message.response_metadata.get("context_editing")
    return isinstance(meta, dict) and bool(meta.get("cleared"))


def cleared_result(message: ToolMessage, placeholder: str, strategy: str) -> ToolMessage:
    """The ToolMessage as a cleared copy (what ClearToolUsesEdit writes; the state's object is untouched)."""
    return message.model_copy(update={
        "artifact": None,
        "content": placeholder,
        "response_metadata": {**message.response_metadata,
                              "context_editing": {"cleared": True, "strategy": strategy}},
    })


def _cleared_input_message(message: AIMessage, tool_call_id: str) -> AIMessage:
    """LangChain's `_build_cleared_tool_input_message`: the call's args emptied, the id listed."""
    updated: list[Any] = []
    cleared_any = False
    for tool_call in message.tool_calls:
        call = dict(tool_call)
        if call.get("id") == tool_call_id:
            call["args"] = {}
            cleared_any = True
        updated.append(call)
    metadata = dict(getattr(message, "response_metadata", {}))
    entry = dict(metadata.get("context_editing", {}))
    if cleared_any:
        ids = set(entry.get("cleared_tool_inputs", []))
        ids.add(tool_call_id)
        entry["cleared_tool_inputs"] = sorted(ids)
        metadata["context_editing"] = entry
    return message.model_copy(update={"tool_calls": updated, "response_metadata": metadata})


def _call_names(messages: Sequence[BaseMessage]) -> dict[str, str]:
    return {str(tc["id"]): str(tc.get("name") or "") for m in messages if isinstance(m, AIMessage)
            for tc in m.tool_calls if tc.get("id")}


# -- LangChain ---------------------------------------------------------------------------------------
def clear_tool_uses_langchain(messages: Sequence[BaseMessage], *, count: Count, trigger: int = 100_000,
                              clear_at_least: int = 0, keep: int = 3, clear_tool_inputs: bool = False,
                              exclude_tools: Collection[str] = (), placeholder: str = LANGCHAIN_PLACEHOLDER,
                              strategy: str = "clear_tool_uses") -> Edit:
    """`ClearToolUsesEdit.apply` on a copy of `messages` (see the module docstring)."""
    out = list(messages)
    edit = Edit(out)
    tokens = count(out)
    if tokens <= trigger:
        return edit
    candidates = [(i, m) for i, m in enumerate(out) if isinstance(m, ToolMessage)]
    if keep >= len(candidates):
        candidates = []
    elif keep:
        candidates = candidates[:-keep]
    excluded = set(exclude_tools)
    for idx, tool_message in candidates:
        if tool_message.response_metadata.get("context_editing", {}).get("cleared"):
            continue
        # the nearest earlier AI message, whichever it is (LangChain does not look further back)
        ai_message = next((m for m in reversed(out[:idx]) if isinstance(m, AIMessage)), None)
        if ai_message is None:
            continue
        tool_call = next((c for c in ai_message.tool_calls if c.get("id") == tool_message.tool_call_id), None)
        if tool_call is None:
            continue
        if (tool_message.name or tool_call["name"]) in excluded:
            continue
        out[idx] = cleared_result(tool_message, placeholder, strategy)
        edit.cleared_call_ids.append(tool_message.tool_call_id)
        if clear_tool_inputs:
            # list.index compares by equality, as LangChain's `messages.index(ai_message)` does
            out[out.index(ai_message)] = _cleared_input_message(ai_message, tool_message.tool_call_id)
            edit.cleared_input_ids.append(tool_message.tool_call_id)
        if clear_at_least > 0:
            cleared_tokens = max(0, tokens - count(out))
            if cleared_tokens >= clear_at_least:
                break
    return edit


# -- Anthropic -----------------------------------------------------------------------------------------
def _tool_uses(messages: Sequence[BaseMessage], exclude_tools: Collection[str]) -> list[tuple[int, str, str]]:
    """(result index, tool_call_id, tool name) of every answered, non-excluded call, oldest first."""
    names = _call_names(messages)
    excluded = set(exclude_tools)
    out = []
    for i, m in enumerate(messages):
        if isinstance(m, ToolMessage) and m.tool_call_id in names:
            name = m.name or names[m.tool_call_id]
            if name not in excluded:
                out.append((i, m.tool_call_id, name))
    return out


def _clears_inputs(clear_tool_inputs: bool | Collection[str], name: str) -> bool:
    if isinstance(clear_tool_inputs, bool):
        return clear_tool_inputs
    return name in set(clear_tool_inputs)


def _clear_inputs(out: list[BaseMessage], call_ids: Collection[str]) -> list[str]:
    """Empty the args of the calls in `call_ids` (one copy per AI message); the ids cleared."""
    wanted = set(call_ids)
    done: list[str] = []
    for i, m in enumerate(out):
        if isinstance(m, AIMessage) and any(tc.get("id") in wanted for tc in m.tool_calls):
            hit = [str(tc["id"]) for tc in m.tool_calls if tc.get("id") in wanted]
            copy_ = m
            for cid in hit:
                copy_ = _cleared_input_message(copy_, cid)
            out[i] = copy_
            done.extend(hit)
    return done


def clear_tool_uses_anthropic(messages: Sequence[BaseMessage], *, input_tokens: int, count: Count,
                              trigger: int = 100_000, keep: int = 3, clear_at_least: int = 0,
                              exclude_tools: Collection[str] = (), clear_tool_inputs: bool | Collection[str] = False,
                              placeholder: str = LANGCHAIN_PLACEHOLDER,
                              strategy: str = "clear_tool_uses_20250919") -> Edit:
    """`clear_tool_uses_20250919` applied to the request `messages` (`input_tokens`: the whole prompt)."""
    out = list(messages)
    edit = Edit(out)
    if input_tokens <= trigger:
        return edit
    uses = _tool_uses(out, exclude_tools)
    chosen = uses[:-keep] if keep else uses
    chosen = [u for u in chosen if not is_cleared(out[u[0]])]
    if not chosen:
        return edit
    before = count(out)
    for idx, call_id, _ in chosen:
        message = out[idx]
        assert isinstance(message, ToolMessage)
        out[idx] = cleared_result(message, placeholder, strategy)
        edit.cleared_call_ids.append(call_id)
    edit.cleared_input_ids = _clear_inputs(out, [cid for _, cid, name in chosen
                                                 if _clears_inputs(clear_tool_inputs, name)])
    if clear_at_least and before - count(out) < clear_at_least:
        return Edit(list(messages))  # the API does not apply an edit that clears less than asked
    return edit


def clear_thinking(messages: Sequence[BaseMessage], *, keep: int | Literal["all"] = 1,
                   per_message: bool = False) -> Edit:
    """Drop the thinking of all but the last `keep` assistant turns (`per_message`: Inspect's count)."""
    out = list(messages)
    edit = Edit(out)
    if keep == "all":
        return edit
    turns = 0
    in_turn = False  # an assistant message of the turn being counted was seen
    for i in range(len(out) - 1, -1, -1):
        m = out[i]
        if isinstance(m, AIMessage):
            if per_message or not in_turn:
                turns += 1
                in_turn = True
            if turns > keep and has_thinking(m):
                out[i] = without_thinking(m)
                edit.cleared_thinking_ids.append(str(m.id))
        elif starts_turn(m):
            in_turn = False
    edit.cleared_thinking_ids.reverse()
    return edit


# -- Inspect -------------------------------------------------------------------------------------------
def clear_tool_uses_inspect(messages: Sequence[BaseMessage], *, keep_tool_uses: int = 3, keep_tool_inputs: bool = True,
                            exclude_tools: Collection[str] = (), placeholder: str = INSPECT_PLACEHOLDER,
                            strategy: str = "inspect_compaction_edit") -> Edit:
    """`CompactionEdit`'s tool phase (its caller checks the threshold)."""
    out = list(messages)
    edit = Edit(out)
    uses = _tool_uses(out, exclude_tools)
    if keep_tool_uses > 0:
        chosen = uses[:-keep_tool_uses] if len(uses) > keep_tool_uses else []
    else:
        chosen = uses
    chosen = [u for u in chosen if not is_cleared(out[u[0]])]
    if not chosen:
        return edit
    if keep_tool_inputs:
        for idx, call_id, _ in chosen:
            message = out[idx]
            assert isinstance(message, ToolMessage)
            out[idx] = cleared_result(message, placeholder, strategy)
            edit.cleared_call_ids.append(call_id)
        return edit
    # the result goes, and the call becomes a line of text in its AI message
    drop = {idx for idx, _, _ in chosen}
    by_call = {cid: name for _, cid, name in chosen}
    kept: list[BaseMessage] = []
    for i, m in enumerate(out):
        if i in drop:
            edit.removed_ids.append(str(m.id))
            continue
        if isinstance(m, AIMessage) and any(tc.get("id") in by_call for tc in m.tool_calls):
            gone = [tc for tc in m.tool_calls if tc.get("id") in by_call]
            text = [{"type": "text", "text": INSPECT_CALL_REMOVED.format(name=tc.get("name"))} for tc in gone]
            content: list[Any] = ([{"type": "text", "text": m.content}] if m.content else []) \
                if isinstance(m.content, str) else list(m.content)
            m = m.model_copy(update={"tool_calls": [tc for tc in m.tool_calls if tc.get("id") not in by_call],
                                     "content": content + text})
            edit.cleared_input_ids.extend(str(tc["id"]) for tc in gone)
        kept.append(m)
    edit.messages = kept
    edit.cleared_call_ids = [cid for _, cid, _ in chosen]
    return edit


# -- OpenCode -----------------------------------------------------------------------------------------
def opencode_estimate(text: str) -> int:
    """OpenCode's `Token.estimate`: characters / 4, rounded."""
    return max(0, round(len(text) / 4))


def prune_opencode(messages: Sequence[BaseMessage], *, protect_tokens: int = OPENCODE_PRUNE_PROTECT,
                   minimum_tokens: int = OPENCODE_PRUNE_MINIMUM,
                   protected_tools: Collection[str] = OPENCODE_PROTECTED_TOOLS,
                   placeholder: str = CLEARED_PLACEHOLDER, strategy: str = "opencode_prune") -> Edit:
    """`SessionCompaction.prune` (see the module docstring)."""
    out = list(messages)
    edit = Edit(out)
    names = _call_names(out)
    protected = set(protected_tools)
    total = pruned = turns = 0
    marked: list[int] = []
    for i in range(len(out) - 1, -1, -1):
        m = out[i]
        if isinstance(m, HumanMessage) and starts_turn(m):
            turns += 1
        if turns < OPENCODE_PROTECTED_TURNS:
            continue
        if message_kind(m) == "summary":
            break
        if not isinstance(m, ToolMessage):
            continue
        if (m.name or names.get(m.tool_call_id, "")) in protected:
            continue
        if is_cleared(m):
            break
        estimate = opencode_estimate(message_text(m))
        total += estimate
        if total > protect_tokens:
            pruned += estimate
            marked.append(i)
    if pruned <= minimum_tokens:
        return edit
    for i in sorted(marked):
        message = out[i]
        assert isinstance(message, ToolMessage)
        out[i] = cleared_result(message, placeholder, strategy)
        edit.cleared_call_ids.append(message.tool_call_id)
    return edit


# -- Claude Code ---------------------------------------------------------------------------------------
def microcompact_claude_code(messages: Sequence[BaseMessage], *, keep: int = CLAUDE_CODE_KEEP_RECENT,
                             tools: Collection[str] = CLAUDE_CODE_COMPACTABLE_TOOLS,
                             placeholder: str = CLEARED_PLACEHOLDER, strategy: str = "claude_code_microcompact") -> Edit:
    """Time-based microcompact: all but the last `keep` compactable results cleared."""
    out = list(messages)
    edit = Edit(out)
    compactable = set(tools)
    ids = [str(tc["id"]) for m in out if isinstance(m, AIMessage) for tc in m.tool_calls
           if tc.get("id") and tc.get("name") in compactable]
    keep_ids = set(ids[-keep:]) if keep else set()
    clear = set(ids) - keep_ids
    for i, m in enumerate(out):
        if isinstance(m, ToolMessage) and m.tool_call_id in clear and not is_cleared(m) \
                and message_text(m) != placeholder:
            out[i] = cleared_result(m, placeholder, strategy)
            edit.cleared_call_ids.append(m.tool_call_id)
    return edit


def deep_copied(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """`copy.deepcopy(list(messages))`, as ContextEditingMiddleware copies its request."""
    return copy.deepcopy(list(messages))
