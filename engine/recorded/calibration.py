"""Calibrated counts: every token of a recorded request in the provider's tokens, in a named category.

A transcript does not hold everything its agent sent, and the provider's tokenizer is not ours.
Where the source recorded the input of each call, the recorded requests are walked in order
(engine.recorded.walk over engine.recorded.history: recorded compactions and edits, the provider's
thinking rule, Codex's tool-output truncation) and every token is laid onto what brought it:

- **the fitted ratio** (engine.recorded.fit): provider tokens per token of ours, per thread and model,
  from the growth between calls. A message never measured (made by a layer in a what-if, or sent
  before the first recorded call) costs the ratio times our count.
- **a recorded message** costs its share of the growth at the first recorded call that sent it: the
  new messages of that call share what the request grew by, in proportion to our counts, at a local
  ratio clamped to [LOCAL_FLOOR, LOCAL_CAP] × the fitted one. Its categories are scaled together.
- **agent prompt** (`agent_prompt`): the first recorded call's input beyond its messages is the
  agent's own prompt and tool schemas plus first-turn content the transcript lacks. The constant
  part is measured (1) from the Anthropic prompt cache: "Cache prefixes are created in the following
  order: tools, system, then messages" (platform.claude.com/docs/en/build-with-claude/prompt-caching,
  *How prompt caching works*), so a later call's cache read that stops short of the first request is
  the prompt (Claude Code breaks the cache at the end of its system prompt); else (2) at the first
  recorded call after a recorded compaction: what the request lacks there was first-turn content the
  compaction removed. It is sent with every request; after a recorded compaction it is measured again
  and lowered from that call on when the request shows it shrank (a schedule by step). An agent that
  rebuilds its prompt as it goes (Gemini CLI: REBUILT_PROMPT_FORMATS) has it lowered the same way at any
  call whose request grew by less than its new messages' text.
- **first-turn context** (`first_turn_context`): step 0's hidden input beyond the constant prompt
  (CLAUDE.md and context reminders Claude Code puts in the first prompt), carried by the first turn's
  human message: a what-if that summarizes it away loses it.
- **restored context** (`restored_context`): right after a recorded compaction, what the request holds
  beyond the prompt and the replacement's own tokens: what the agent re-attached (Claude Code: files,
  CLAUDE.md, the plan, todos; code.claude.com/docs/en/context-window, *What survives compaction*),
  carried by the replacement.
- **thinking** (`thinking`): a Codex reasoning item costs its recorded `reasoning_output_tokens`, not
  its summary (openai/codex codex-rs/core/src/context_manager/history.rs
  `estimate_response_item_model_visible_bytes` counts the encrypted content only); a Claude message's
  full thinking is not in the transcript (summarized), so the growth beyond the fitted ratio at the call
  after a new AI message with thinking is its thinking. Where the provider's rule drops earlier
  thinking (engine.recorded.history `provider_view`), the stripped message carries neither.
- **unexplained** (`unexplained`): growth above LOCAL_CAP × the ratio, carried by the new messages of
  that call (a what-if dropping them drops it too). Never negative: growth below the floor is not
  taken from anywhere; it shows as the view above the recorded input until later calls absorb it.

On the as-recorded run every recorded step's view equals its recorded input up to those floors
(`Calibration.deviation`). Messages the replay's layers create are counted as ratio × ours.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from engine.recorded.fit import Interval, TokenizerFit, fit_models
from engine.recorded.history import OPAQUE_REASONING_KEY, RecordedHistory, has_thinking, recorded_history
from engine.recorded.prompt import AgentPrompt, agent_prompt
from engine.recorded.walk import SentCall, SentWalk
from engine.thread.kinds import message_kind
from engine.thread.model import Thread
from engine.tokens.counters import TokenCounter, framing_for_thread, prime_thread

AGENT_PROMPT = "agent_prompt"
FIRST_TURN = "first_turn_context"
RESTORED = "restored_context"
THINKING = "thinking"
UNEXPLAINED = "unexplained"
# A recorded message's own share of the growth, as a multiple of the fitted ratio: within these a
# message costs what the request grew by (box-drawing output runs 2.3x o200k in Claude's tokenizer,
# an Edit result carries a file snippet its JSONL text lacks: 2.8x); above the cap the rest is
# unexplained, below the floor the request shrank by something the transcript does not show.
LOCAL_FLOOR = 0.5
LOCAL_CAP = 3.0
# A shortfall above this share of a call's recorded input is said in one line (Calibration.note).
SHORTFALL_NOTED = 0.03
# Agents whose prompt is not one constant text: Gemini CLI builds its system instruction again
# (getCoreSystemPrompt) whenever the user memory (GEMINI.md), the tools, the approval mode or the
# agents change, and appends the active topic to it (google-gemini/gemini-cli packages/core/src/core/
# client.ts `updateSystemInstruction`, config/config.ts `updateSystemInstructionIfInitialized`: "Whenever
# the user memory (GEMINI.md files) is updated", prompts/promptProvider.ts "Context Reinjection (Active
# Topic)"). A request of theirs that grew by less than its new messages' text, with no recorded
# compaction, is the prompt that shrank: measured again from that call on (`_Valuer._prompt_shrank`).
REBUILT_PROMPT_FORMATS = frozenset({"gemini_cli"})


@dataclass
class StepFit:
    """One recorded call as the calibration saw it (reports, tests, the Step page's note)."""

    step: int
    message_index: int
    model: str | None
    recorded: int
    prompt: int = 0  # the agent prompt this call carried
    expected: int = 0  # prompt + recorded prompt/tools + what the messages already sent cost
    growth: int = 0  # recorded - expected: what the new messages cost together
    new: int = 0  # how many messages were new in this call
    unexplained: int = 0
    restored: int = 0
    thinking: int = 0  # hidden thinking laid on this call's new AI messages
    first_turn: int = 0
    shortfall: int = 0  # the request fell below what the floor lets its new messages cost (view above recorded)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def scale(breakdown: Mapping[str, int], target: float) -> dict[str, int]:
    """`breakdown` scaled to add up to round(target), largest remainder first (deterministic)."""
    total = sum(breakdown.values())
    want = max(0, round(target))
    if not total or not want:
        return {c: 0 for c in breakdown}
    exact = [(c, n * want / total) for c, n in breakdown.items()]
    out = {c: int(x) for c, x in exact}
    left = want - sum(out.values())
    for c, _x in sorted(exact, key=lambda p: (-(p[1] - int(p[1])), p[0]))[:left]:
        out[c] += 1
    return out


def spread(total: int, weights: Sequence[int]) -> list[int]:
    """`total` (>= 0) shared by `weights` (largest remainder), adding up exactly."""
    if not weights:
        return []
    w = [max(1, x) for x in weights]
    s = sum(w)
    shares = [total * x // s for x in w]
    for k in sorted(range(len(w)), key=lambda k: (-w[k], k))[: total - sum(shares)]:
        shares[k] += 1
    return shares


@dataclass
class Calibration:
    """Provider tokens of every recorded message of one thread (and its sub-agents), and its agent prompt."""

    fit: TokenizerFit  # the fit of the model that made most recorded calls
    fits: dict[str | None, TokenizerFit]
    prompt_tokens: int  # the constant agent prompt at the first recorded call
    first_turn_tokens: int
    prompt_source: str
    values: dict[int, dict[str, int]]  # id(message object) -> its categories in provider tokens
    totals: dict[int, int]
    steps: list[StepFit] = field(default_factory=list)
    prompt_schedule: list[tuple[int, int]] = field(default_factory=list)  # (from step, prompt tokens)
    agent: AgentPrompt | None = None
    subagents: dict[str, Calibration] = field(default_factory=dict)
    # The message objects keyed in `values`, kept alive so their ids stay theirs.
    _keep: list[BaseMessage] = field(default_factory=list, repr=False)

    @property
    def ratio(self) -> float:
        return self.fit.ratio

    def prompt_at(self, step: int) -> int:
        """The agent prompt a call at `step` carries (measured again after a recorded compaction)."""
        value = self.prompt_tokens
        for start, tokens in self.prompt_schedule:
            if start > step:
                break
            value = tokens
        return value

    @property
    def subagent_prompt_tokens(self) -> dict[str, int]:
        return {k: c.prompt_tokens for k, c in self.subagents.items()}

    def hidden_of(self, message: BaseMessage) -> dict[str, int]:
        """The tokens a recorded message carries that its text does not show, by category."""
        v = self.values.get(id(message), {})
        return {c: v[c] for c in (FIRST_TURN, RESTORED, UNEXPLAINED) if v.get(c)}

    @property
    def unexplained_tokens(self) -> int:
        return sum(v.get(UNEXPLAINED, 0) for v in self.values.values())

    def note(self, tolerance: float = SHORTFALL_NOTED) -> str | None:
        """One line when some recorded call holds less than its messages' text (beyond `tolerance` of its
        input): the agent sent less than the transcript keeps (a context edit, a truncation, a prompt or
        tool list it dropped) and the file does not say what. None otherwise."""
        short = [s for s in self.steps if s.shortfall > tolerance * s.recorded]
        if not short:
            return None
        worst = max(short, key=lambda s: s.shortfall / s.recorded)
        where = f"step {worst.step}" + (f" and {len(short) - 1} more" if len(short) > 1 else "")
        return (f"At {where} the recorded input is {worst.shortfall:,} tokens ({worst.shortfall / worst.recorded:.1%}) "
                f"below what the messages' text costs at half the fitted ratio: the agent sent less than the "
                f"transcript keeps (a context edit, a truncation or a smaller prompt the file does not record), "
                f"so the view stays above the recorded input there.")

    def to_dict(self) -> dict[str, Any]:
        """The calibration as `ctxi replay --json` reports it (docs/replay-json.md)."""
        return {"fit": self.fit.to_dict(), "fits": [f.to_dict() for f in self.fits.values()],
                "agent_prompt_tokens": self.prompt_tokens, "agent_prompt_source": self.prompt_source,
                "agent_prompt": self.agent.to_dict() if self.agent else None,
                "agent_prompt_schedule": [{"from_step": s, "tokens": t} for s, t in self.prompt_schedule],
                "first_turn_context_tokens": self.first_turn_tokens, "note": self.note(),
                "subagents": {k: {"fit": c.fit.to_dict(), "agent_prompt_tokens": c.prompt_tokens}
                              for k, c in sorted(self.subagents.items())}}


def system_tokens(counter: TokenCounter, thread: Thread, history: RecordedHistory) -> int:
    """What the recorded prompt and tool schemas cost in our tokens, the way the replay sends them."""
    start = history.body_start()
    prompt = thread.system_prompt
    if prompt is None and start:
        prompt = "\n\n".join(str(m.content) for m in thread.messages[:start])
    total = counter.count_message(SystemMessage(content=prompt, id="system")) if prompt else 0
    return total + (counter.count_tools(thread.tools) if thread.tools else 0)


def hidden_reasoning(thread: Thread, message: BaseMessage) -> int | None:
    """What an AI message's opaque reasoning (a Codex encrypted reasoning item) costs: its call's recorded
    `reasoning_output_tokens`; None for anything else."""
    if not isinstance(message, AIMessage) or not message.additional_kwargs.get(OPAQUE_REASONING_KEY):
        return None
    usage = thread.usage.get(message.id or "")
    return usage.reasoning_tokens if usage is not None and usage.reasoning_tokens is not None else None


def cache_prompt(thread: Thread, first_id: str | None, below: int) -> int | None:
    """The largest cache read of a later call that stops short of `below` tokens (the first request's
    prompt part): where an Anthropic cache breaks at the end of the system prompt, or None."""
    reads = [u.cache_read_input_tokens for mid, u in thread.usage.items()
             if mid != first_id and u.cache_read_input_tokens and 0 < u.cache_read_input_tokens < below]
    return max(reads) if reads else None


class _Valuer:
    """The walk of one thread: fits its ratios, then lays every recorded call's input onto its messages."""

    def __init__(self, thread: Thread, counter: TokenCounter, values: dict[int, dict[str, int]],
                 totals: dict[int, int], keep: list[BaseMessage]) -> None:
        self.thread = thread
        self.counter = counter
        self.history = recorded_history(thread)
        self.base = system_tokens(counter, thread, self.history)
        self.values, self.totals, self.keep = values, totals, keep
        recorded = {mid for mid, u in thread.usage.items() if u.context_tokens}
        self.calls = list(SentWalk(self.history).calls(recorded))

    def recorded(self, call: SentCall) -> int:
        usage = self.thread.usage[call.view.response.id or ""]
        return int(usage.context_tokens or 0)

    def model_of(self, call: SentCall) -> str | None:
        usage = self.thread.usage.get(call.view.response.id or "")
        return (usage.model if usage is not None and usage.model else None) or self.thread.model

    def visible(self, m: BaseMessage) -> dict[str, int]:
        """Our breakdown of a message, without the thinking that a recorded hidden count stands for."""
        bd = dict(self.counter.breakdown(m))
        if hidden_reasoning(self.thread, m) is not None:
            bd.pop(THINKING, None)
        return bd

    def intervals(self) -> list[Interval]:
        out: list[Interval] = []
        previous: int | None = None
        for call in self.calls:
            recorded = self.recorded(call)
            if previous is not None and call.grows and call.new:
                hidden = sum(hidden_reasoning(self.thread, m) or 0 for m in call.new)
                ours = sum(sum(self.visible(m).values()) for m in call.new)
                if ours:
                    out.append(Interval(call.view.step, self.model_of(call), recorded - previous - hidden, ours))
            previous = recorded
        return out

    def settle(self, m: BaseMessage, own: Mapping[str, int], extra: Mapping[str, int] | None = None) -> None:
        v = dict(own)
        for c, n in (extra or {}).items():
            if n:
                v[c] = v.get(c, 0) + n
        self.values[id(m)] = v
        self.totals[id(m)] = sum(v.values())
        self.keep.append(m)

    def lay(self, new: Sequence[BaseMessage], own_total: int, **extra: Mapping[int, int]) -> None:
        """Settle `new` with `own_total` tokens shared by our counts (exactly), plus per-message extras."""
        weights = [self.ours[id(m)] for m in new]
        for m, share in zip(new, spread(max(0, own_total), weights), strict=True):
            self.settle(m, scale(self.visible_of[id(m)], share),
                        {category: got.get(id(m), 0) for category, got in extra.items()})

    def run(self) -> Calibration | None:
        if not self.calls:
            return None
        models = [self.model_of(c) for c in self.calls]
        fits = fit_models(self.intervals(), models, self.counter.name)
        dominant = max(fits.values(), key=lambda f: (models.count(f.model), f.calls, f.model or ""))
        self.fits, self.dominant = fits, dominant
        self.steps: list[StepFit] = []
        self.schedule: list[tuple[int, int]] = []
        self.prompt = self.first_turn = 0
        self.carriers: list[BaseMessage] = []
        self.cache_measured = False
        self.source = ""
        in_request = 0  # calibrated tokens of the last request's messages (kept as the walk goes)
        for k, call in enumerate(self.calls):
            fit_k = fits.get(self.model_of(call))
            r = fit_k.ratio if fit_k is not None and fit_k.fitted else dominant.ratio
            for stripped_from, copy in call.stripped:
                # stripped of its thinking by the provider's rule: the rest costs what it cost before
                self.settle(copy, {c: n for c, n in self.values.get(id(stripped_from), {}).items()
                                   if c not in (THINKING, UNEXPLAINED)})
                in_request += self.totals[id(copy)] - self.totals.get(id(stripped_from), 0)
            new, pre = [], 0
            for m in call.new:
                source = self.history.original_of(m)
                if source is not None and id(source) in self.values:
                    self.settle(m, {c: n for c, n in self.values[id(source)].items()
                                    if c not in (THINKING, UNEXPLAINED)})
                    pre += self.totals[id(m)]
                else:
                    new.append(m)
            old = (sum(self.totals.get(id(m), 0) for m in call.sent) if call.rebuilt or k == 0
                   else in_request + pre)
            self.visible_of = {id(m): self.visible(m) for m in new}
            self.ours = {id(m): sum(self.visible_of[id(m)].values()) for m in new}
            self.hidden = {id(m): h for m in new if (h := hidden_reasoning(self.thread, m)) is not None}
            fit = StepFit(call.view.step, call.view.message_index, self.model_of(call), self.recorded(call),
                          new=len(new))
            base = round(r * self.base)
            if k == 0:
                self._first(call, new, fit, r, base)
            else:
                p = self.schedule[-1][1]
                fit.growth = self.recorded(call) - base - p - old - sum(self.hidden.values())
                if call.view.compactions:
                    p = self._after_compaction(call, new, fit, r, p)
                else:
                    if self.thread.source_format in REBUILT_PROMPT_FORMATS:
                        p = self._prompt_shrank(call, new, fit, r, p)
                    self._grown(call, new, fit, r)
                fit.prompt, fit.expected = p, base + p + old
            in_request = old + sum(self.totals[id(m)] for m in new) + (fit.unexplained if not new else 0)
            self.steps.append(fit)
        return Calibration(fit=dominant, fits=fits, prompt_tokens=self.prompt, first_turn_tokens=self.first_turn,
                           prompt_source=self.source, values=self.values, totals=self.totals, steps=self.steps,
                           prompt_schedule=self.schedule, agent=agent_prompt(self.thread, self.prompt, self.source))

    def _first(self, call: SentCall, new: list[BaseMessage], fit: StepFit, r: float, base: int) -> None:
        """The first recorded call: its input beyond its messages is the agent's prompt and first turn."""
        c_new = sum(self.ours.values())
        own_total = round(r * c_new)
        hidden0 = fit.recorded - base - own_total - sum(self.hidden.values())
        prompt, self.source = hidden0, "the first recorded call"
        if framing_for_thread(self.thread) == "anthropic":
            read = cache_prompt(self.thread, call.view.response.id, hidden0 + base)
            if read is not None and read > base:
                prompt, self.cache_measured, self.source = read - base, True, "the prompt cache's prefix"
        if prompt < -base:
            # the provider counts less than the recorded prompt and tools can account for: the messages too
            own_total = max(round(LOCAL_FLOOR * r * c_new), own_total + prompt + base)
            prompt = -base
        self.first_turn = max(0, hidden0 - prompt) if self.cache_measured else 0
        self.carriers = [m for m in new if isinstance(m, HumanMessage) and message_kind(m) == "original"] or new[:1]
        carried = dict(zip(map(id, self.carriers), spread(self.first_turn, [self.ours[id(m)] for m in self.carriers]),
                           strict=True))
        self.lay(new, own_total, **{FIRST_TURN: carried, THINKING: self.hidden})
        self.prompt = prompt
        self.schedule.append((call.view.step, prompt))
        fit.prompt, fit.first_turn, fit.expected = prompt, self.first_turn, base + prompt
        fit.growth = fit.recorded - fit.expected
        fit.shortfall = max(0, base + prompt + sum(self.totals[id(m)] for m in new) - fit.recorded)

    def _after_compaction(self, call: SentCall, new: list[BaseMessage], fit: StepFit, r: float, p: int) -> int:
        """The first recorded call after a recorded compaction: the prompt measured again, the rest the
        replacement's own tokens and what the agent re-attached with it. Returns the prompt it carried."""
        c_new = sum(self.ours.values())
        surplus = fit.growth - round(r * c_new)
        sent = {id(x) for x in call.sent}
        if (surplus < 0 and not self.cache_measured and self.first_turn == 0 and self.carriers
                and not any(id(m) in sent for m in self.carriers)):
            # what the first call held beyond the prompt was first-turn content this compaction removed
            move = min(-surplus, p)
            weights = [sum(self.visible(m).values()) for m in self.carriers]
            for m, share in zip(self.carriers, spread(move, weights), strict=True):
                self.values[id(m)][FIRST_TURN] = self.values[id(m)].get(FIRST_TURN, 0) + share
                self.totals[id(m)] += share
            self.first_turn = move
            self.schedule[:] = [(s0, t - move) for s0, t in self.schedule]
            self.prompt -= move
            p -= move
            surplus += move
            fit.growth += move
            self.source = f"the first recorded call after the compaction at step {call.view.step}"
            first = self.steps[0]
            first.prompt, first.first_turn, first.expected, first.growth = (
                self.prompt, move, first.expected - move, first.growth + move)
        if surplus < 0 and p > 0:
            lower = min(-surplus, p)  # the agent's prompt shrank: measured again from this call on
            p -= lower
            self.schedule.append((call.view.step, p))
            surplus += lower
            fit.growth += lower
        restored = max(0, surplus)
        made = {id(m) for c in call.view.compactions for m in self.history.replacement(c)}
        owners = [m for m in new if id(m) in made] or new
        shares = dict(zip(map(id, owners), spread(restored, [self.ours[id(m)] for m in owners]), strict=True))
        own_total = max(fit.growth - restored, round(LOCAL_FLOOR * r * c_new))
        fit.shortfall = max(0, own_total - (fit.growth - restored))
        self.lay(new, own_total, **{RESTORED: shares, THINKING: self.hidden})
        fit.restored = restored
        return p

    def _prompt_shrank(self, call: SentCall, new: list[BaseMessage], fit: StepFit, r: float, p: int) -> int:
        """A request that grew by less than its new messages cost at LOCAL_FLOOR, where the agent rebuilds
        its prompt (REBUILT_PROMPT_FORMATS): the prompt shrank. It is measured again from this call on (as
        after a recorded compaction), the new messages costing the fitted ratio. Returns the prompt."""
        c_new = sum(self.ours.values())
        if p <= 0 or fit.growth >= round(LOCAL_FLOOR * r * c_new):
            return p
        lower = min(round(r * c_new) - fit.growth, p)
        p -= lower
        self.schedule.append((call.view.step, p))
        fit.growth += lower
        return p

    def _grown(self, call: SentCall, new: list[BaseMessage], fit: StepFit, r: float) -> None:
        """A call whose request grew: its new messages share the growth (module docstring)."""
        growth = fit.growth
        c_new = sum(self.ours.values())
        if not new or not c_new:
            for m in new:
                self.settle(m, {}, {THINKING: self.hidden.get(id(m), 0)})
            fit.shortfall = max(0, -growth)
            if growth > 0 and call.sent:
                # the request grew with nothing of ours new: unexplained, carried by its last message
                last = call.sent[-1]
                self.values[id(last)][UNEXPLAINED] = self.values[id(last)].get(UNEXPLAINED, 0) + growth
                self.totals[id(last)] += growth
                fit.unexplained = growth
            return
        thinkers = [m for m in new if isinstance(m, AIMessage) and has_thinking(m) and id(m) not in self.hidden]
        extra_thinking = extra_unexplained = 0
        if thinkers and growth > r * c_new:
            # a Claude message's full thinking is not in the transcript: what it cost beyond the ratio
            own_total = round(r * c_new)
            extra_thinking = growth - own_total
        elif growth > LOCAL_CAP * r * c_new:
            own_total = round(LOCAL_CAP * r * c_new)
            extra_unexplained = growth - own_total
        else:
            own_total = max(growth, round(LOCAL_FLOOR * r * c_new))
            fit.shortfall = own_total - growth
        think = dict(zip(map(id, thinkers), spread(
            extra_thinking, [self.visible_of[id(m)].get(THINKING, 0) or self.ours[id(m)] for m in thinkers]),
            strict=True))
        thinking = {i: think.get(i, 0) + self.hidden.get(i, 0) for i in {*think, *self.hidden}}
        unexplained = dict(zip(map(id, new), spread(extra_unexplained, [self.ours[id(m)] for m in new]), strict=True))
        self.lay(new, own_total, **{THINKING: thinking, UNEXPLAINED: unexplained})
        fit.thinking, fit.unexplained = extra_thinking + sum(self.hidden.values()), extra_unexplained


def calibrate(thread: Thread, counter: TokenCounter) -> Calibration | None:
    """The calibration of `thread` (and its sub-agents) for `counter`, or None when no call recorded its input."""
    if not thread.usage and not any(sub.usage for sub in thread.subagents.values()):
        return None  # nothing recorded: no walk over the views (a followed session's update costs its new lines)
    prime_thread(counter, thread)
    values: dict[int, dict[str, int]] = {}
    totals: dict[int, int] = {}
    keep: list[BaseMessage] = []
    main = _Valuer(thread, counter, values, totals, keep).run()
    subs: dict[str, Calibration] = {}
    for call_id, sub in thread.subagents.items():
        got = _Valuer(sub, counter, values, totals, keep).run()
        if got is not None:
            subs[call_id] = got
    if main is None and not subs:
        return None
    if main is None:
        first = next(iter(subs.values()))
        main = Calibration(fit=first.fit, fits={}, prompt_tokens=0, first_turn_tokens=0, prompt_source="",
                           values=values, totals=totals)
    main.subagents = subs
    main._keep = keep
    return main


_cache: dict[tuple[int, str, str], tuple[weakref.ref[Thread], Calibration | None]] = {}
_cache_lock = threading.Lock()


def thread_calibration(thread: Thread, counter: TokenCounter) -> Calibration | None:
    """`calibrate` once per (thread object, counter): every replay of a thread shares it."""
    key = (id(thread), counter.name, str(getattr(counter, "framing", "")))
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0]() is thread:
            return hit[1]
    result = calibrate(thread, counter)

    def _drop(_ref: weakref.ref[Thread], key: tuple[int, str, str] = key) -> None:
        # no lock here: a weakref callback may run inside a locked section (a GC pass), and a dict
        # pop is atomic; at interpreter exit the module globals may already be gone
        entries = _cache
        if entries is not None:
            entry = entries.get(key)
            if entry is not None and entry[0] is _ref:
                entries.pop(key, None)

    with _cache_lock:
        _cache[key] = (weakref.ref(thread, _drop), result)
    return result


class CalibratedCounter:
    """A token counter in the provider's tokens: recorded messages cost what the calibration measured
    (their categories, hidden ones included), anything else our count times the fitted ratio.

    Texts and tool schemas are scaled the same way, so every count a layer makes (a summary's size, a
    restored file's cap) is in the unit the chart draws. Scaled breakdowns are made once per base
    breakdown object (the base counter caches those per message).
    """

    def __init__(self, base: TokenCounter, calibration: Calibration) -> None:
        self.base = base
        self.calibration = calibration
        self.name = base.name
        self.framing = getattr(base, "framing", None)
        self.ratio = calibration.ratio
        self._values = calibration.values
        self._totals = calibration.totals
        # id(base breakdown) -> (that breakdown, scaled, its total): the breakdown is kept alive with it
        self._scaled: dict[int, tuple[Mapping[str, int], dict[str, int], int]] = {}
        self._lock = threading.Lock()

    def _scale(self, bd: Mapping[str, int]) -> tuple[dict[str, int], int]:
        hit = self._scaled.get(id(bd))
        if hit is not None and hit[0] is bd:
            return hit[1], hit[2]
        out = scale(bd, self.ratio * sum(bd.values())) if self.ratio != 1.0 else dict(bd)
        total = sum(out.values())
        with self._lock:
            if len(self._scaled) > 200_000:
                self._scaled.clear()
            self._scaled[id(bd)] = (bd, out, total)
        return out, total

    def count_text(self, text: str) -> int:
        return round(self.ratio * self.base.count_text(text))

    def breakdown(self, message: BaseMessage) -> Mapping[str, int]:
        known = self._values.get(id(message))
        if known is not None:
            return known
        return self._scale(self.base.breakdown(message))[0]

    def count_message(self, message: BaseMessage) -> int:
        known = self._totals.get(id(message))
        if known is not None:
            return known
        return self._scale(self.base.breakdown(message))[1]

    def count_tools(self, tools: Sequence[Any]) -> int:
        return round(self.ratio * self.base.count_tools(tools))

    def prime(self, messages: Iterable[BaseMessage]) -> None:
        prime = getattr(self.base, "prime", None)
        if prime is not None:
            prime(messages)

    def invalidate(self, message: BaseMessage) -> None:
        invalidate = getattr(self.base, "invalidate", None)
        if invalidate is not None:
            invalidate(message)

    def __call__(self, messages: Iterable[BaseMessage], **kwargs: Any) -> int:
        totals = self._totals
        total = 0
        for m in messages:
            known = totals.get(id(m))
            total += known if known is not None else self.count_message(m)
        tools = kwargs.get("tools")
        if tools:
            total += self.count_tools(tools)
        return total
