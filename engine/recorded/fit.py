"""The provider's tokens per token of ours, fitted per thread and model from the recorded growth between calls.

A provider bills its own tokenizer's tokens; we count with o200k (or cl100k). Between two recorded calls
whose requests differ only by what was appended (the same messages, in the same order, then new ones;
no recorded compaction or edit in between), the recorded input grew by what the provider charged for
the appended messages. Each such interval gives a ratio growth ÷ our count, weighted by our count.

The fit is their weighted median, not the ratio of the sums: a few intervals carry content the
transcript does not hold (Claude Code sends a snippet of the file with an `Edit` result whose JSONL
text is one line; box-drawing output costs Claude's tokenizer 2.3× o200k), and they pull a sum, not
a median. Measured on shared/traces: 1.12 / 1.19 on two Opus 4.6 sessions (137 / 155 intervals),
1.005 on a GPT-5 Codex rollout (18), 0.95–1.14 on Gemini 3 (5).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

MIN_INTERVAL_TOKENS = 20  # an interval whose new messages count fewer tokens says more about framing than text
FEW_INTERVALS = 3  # below this many intervals a fit must pass the plausibility checks below
FEW_MIN_TOKENS = 500  # ... count at least this many of our tokens in all
# A tokenizer of another provider counts the same text within these bounds of ours; a ratio beyond
# them is content the transcript lacks, not a tokenizer (tighter when one or two intervals fit it).
PLAUSIBLE = (0.5, 2.0)
PLAUSIBLE_FEW = (0.7, 1.5)

# The provider's name in the sentence the dashboard shows, by the model's name.
_PROVIDERS = (("claude", "Claude"), ("gpt", "OpenAI"), ("o1", "OpenAI"), ("o3", "OpenAI"), ("o4", "OpenAI"),
              ("codex", "OpenAI"), ("gemini", "Gemini"), ("gemma", "Gemma"), ("mistral", "Mistral"),
              ("codestral", "Mistral"), ("qwen", "Qwen"), ("deepseek", "DeepSeek"), ("llama", "Llama"))


def provider_name(model: str | None) -> str:
    low = (model or "").lower()
    return next((name for key, name in _PROVIDERS if key in low), "the provider's")


@dataclass(frozen=True)
class Interval:
    """One recorded call's growth over the previous one: what the provider charged for the new messages."""

    step: int
    model: str | None
    growth: int  # recorded input of this call minus the previous call's, less hidden reasoning recorded apart
    ours: int  # our count of the messages new in this call

    @property
    def ratio(self) -> float:
        return self.growth / self.ours


@dataclass(frozen=True)
class TokenizerFit:
    """Provider tokens per token of our counter for one model of one thread."""

    model: str | None
    counter: str
    ratio: float
    calls: int  # intervals the ratio was fitted on
    fitted: bool
    reason: str = ""  # why it is not fitted (ratio 1.0 then)
    p10: float | None = None
    p90: float | None = None

    def statement(self) -> str:
        """One sentence for the pages and the CLI."""
        who = provider_name(self.model)
        tokenizer = f"{who} tokenizer" if who != "the provider's" else "the provider's tokenizer"
        if self.fitted:
            calls = "call" if self.calls == 1 else "calls"
            return (f"{tokenizer[0].upper()}{tokenizer[1:]} ≈ {self.ratio:.2f} × {self.counter} on this session, "
                    f"fitted on {self.calls:,} {calls}")
        return f"Counts in {self.counter} tokens: {tokenizer} not fitted ({self.reason})"

    def to_dict(self) -> dict[str, object]:
        return {"model": self.model, "counter": self.counter, "ratio": round(self.ratio, 4), "calls": self.calls,
                "fitted": self.fitted, "reason": self.reason or None,
                "p10": None if self.p10 is None else round(self.p10, 4),
                "p90": None if self.p90 is None else round(self.p90, 4), "statement": self.statement()}


def weighted_quantile(pairs: Sequence[tuple[float, int]], q: float) -> float:
    """The q-quantile of values weighted by their weights (the lower one at a tie)."""
    ordered = sorted(pairs)
    total = sum(w for _, w in ordered)
    acc = 0
    for value, weight in ordered:
        acc += weight
        if acc >= q * total:
            return value
    return ordered[-1][0]


def fit_ratio(intervals: Sequence[Interval], model: str | None, counter: str) -> TokenizerFit:
    """The weighted-median ratio of `intervals` (see the module docstring), or 1.0 with the reason."""
    usable = [iv for iv in intervals if iv.ours >= MIN_INTERVAL_TOKENS]
    if not usable:
        why = ("no growth between two recorded calls to fit it on" if not intervals
               else f"the growth between recorded calls is under {MIN_INTERVAL_TOKENS} tokens each")
        return TokenizerFit(model, counter, 1.0, 0, False, why)
    pairs = [(iv.ratio, iv.ours) for iv in usable]
    ratio = weighted_quantile(pairs, 0.5)
    p10, p90 = weighted_quantile(pairs, 0.1), weighted_quantile(pairs, 0.9)
    if len(usable) < FEW_INTERVALS:
        ours = sum(iv.ours for iv in usable)
        if ours < FEW_MIN_TOKENS:
            return TokenizerFit(model, counter, 1.0, len(usable), False,
                                f"{len(usable)} growth interval{'s' if len(usable) > 1 else ''} of {ours:,} tokens "
                                f"is too little to fit on")
    low, high = PLAUSIBLE_FEW if len(usable) < FEW_INTERVALS else PLAUSIBLE
    if not low <= ratio <= high:
        return TokenizerFit(model, counter, 1.0, len(usable), False,
                            f"{ratio:.2f} from {len(usable)} interval{'s' if len(usable) > 1 else ''} is outside "
                            f"{low}–{high}: content the transcript lacks, not a tokenizer")
    return TokenizerFit(model, counter, ratio, len(usable), True, "", p10, p90)


def fit_models(intervals: Iterable[Interval], models: Sequence[str | None], counter: str) -> dict[str | None, TokenizerFit]:
    """One fit per model (the model of each interval's second call); every model in `models` gets one."""
    by_model: dict[str | None, list[Interval]] = {m: [] for m in models}
    for iv in intervals:
        by_model.setdefault(iv.model, []).append(iv)
    return {m: fit_ratio(ivs, m, counter) for m, ivs in by_model.items()}
