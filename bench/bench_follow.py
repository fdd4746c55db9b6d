"""A followed session costs per new line: replaying 10 appended lines after 100, 1,000 and 10,000 steps.

    python bench/bench_follow.py [--sizes 100,1000,10000] [--lines 10] [--runs 5] [--what-if stress]

For each size, a thread of that many steps (`synthetic_thread`, ~2 messages a step) and the same
thread before its last `--lines` messages (a follower's previous update: the same message objects).
Timed: bringing both runs a followed session shows up to date, `replay(grown, config, previous=run)`
for the as-recorded run and the `--what-if` preset (engine/run/resume.py: each takes its previous
run's ended driver over and replays only the new messages). The previous runs are made untimed
before each timed run (a driver is taken over once). The floor, in this process: `json.loads` of the
appended lines (each message as LangChain's dict, one JSON line each): the least a follower does
with them. Target: the cost at the largest size within 1.5x of the smallest's (flat: per new line,
not per step of the session). Also printed, no target: the same update replayed in full, and from a
checkpoint when the last reply before the new lines was rewritten (a reply still streaming).
Agreement: every continued run equals a full replay of the grown thread (its report).

This measures the replay side; the follower's incremental parse of the appended bytes is the
sessions engine's (engine/sessions), and is not in these figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable
from typing import Any

from harness import Samples, interleaved, machine_line
from langchain_core.messages import AIMessage, messages_to_dict

from engine.config.presets import RECORDED_PRESET
from engine.config.schema import EngineConfig, preset
from engine.run.replay import replay
from engine.run.run import Run
from engine.thread.model import Thread
from engine.thread.synthetic import synthetic_thread
from engine.tokens.counters import TiktokenCounter

TARGET_FLAT = 1.5


def _cut(thread: Thread, n: int) -> Thread:
    return dataclasses.replace(thread, messages=thread.messages[:n])


def _rewritten(thread: Thread, n: int) -> Thread:
    """The first `n` messages, the last AI message among them a copy (a reply still streaming)."""
    messages = list(thread.messages[:n])
    last = max(i for i, m in enumerate(messages) if isinstance(m, AIMessage))
    messages[last] = messages[last].model_copy(update={"content": f"{messages[last].content} …"})
    return dataclasses.replace(thread, messages=messages)


def _text(run: Run) -> str:
    return json.dumps(run.to_report(include_views=False), sort_keys=True, default=str)


class Case:
    """One size: the thread, its state before the appended lines, a warm counter, the two configs."""

    def __init__(self, steps: int, lines: int, what_if: EngineConfig) -> None:
        self.thread = synthetic_thread(steps, seed=0)
        self.cut = len(self.thread.messages) - lines
        self.appended = "\n".join(json.dumps(d) for d in messages_to_dict(self.thread.messages[self.cut:]))
        self.counter = TiktokenCounter("o200k_base")
        self.configs = (preset(RECORDED_PRESET), what_if)
        for config in self.configs:  # counts warm, as in a session already open
            replay(self.thread, config, token_counter=self.counter)

    def previous(self, rewritten: bool = False) -> list[Run]:
        before = _rewritten(self.thread, self.cut) if rewritten else _cut(self.thread, self.cut)
        return [replay(before, c, token_counter=self.counter) for c in self.configs]

    def update(self, previous: list[Run] | None, hint: bool = True) -> list[Run]:
        grown = dataclasses.replace(self.thread)  # a follower's new Thread object, the same messages
        # the follower says where its parse changed the thread (engine/run/resume.py `changed_message`)
        changed = self.cut if hint and previous is not None else None
        return [replay(grown, c, token_counter=self.counter, previous=p, changed_from=changed)
                for c, p in zip(self.configs, previous or [None, None], strict=True)]


def _ms(s: Samples, kind: str) -> str:
    """Median [range] in milliseconds (an update costs a few: seconds to 3 decimals would hide it)."""
    lo, hi = s.spread(kind)
    return f"{s.median(kind) * 1000:9.2f} ms  [{lo * 1000:.2f}–{hi * 1000:.2f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--lines", type=int, default=10)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--what-if", default="stress")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(machine_line())
    cases = {n: Case(n, args.lines, preset(args.what_if)) for n in sizes}
    sides: dict[str, Callable[..., Any]] = {}
    setup: dict[str, Callable[[], Any]] = {}
    for n, case in cases.items():
        sides[f"floor: json.loads of the {args.lines} lines ({n})"] = lambda case=case: json.loads(
            "[" + case.appended.replace("\n", ",") + "]")
        sides[f"{args.lines} lines after {n:,} steps"] = lambda prev, case=case: case.update(prev)
        setup[f"{args.lines} lines after {n:,} steps"] = case.previous
    res = interleaved(sides, args.runs, setup=setup)
    for n, case in cases.items():
        continued: list[Run] = res[f"{args.lines} lines after {n:,} steps"].result
        full = case.update(None)
        for c, f in zip(continued, full, strict=True):
            assert _text(c) == _text(f), f"the continued run after {n} steps differs from a full replay"
        print(f"  {n:,} steps: continued from step {continued[0].resumed_from} (as-recorded) and "
              f"{continued[1].resumed_from} ({args.what_if}); both equal full replays of the grown thread")
    others = interleaved({**{f"full replay, {n:,} steps": (lambda case=case: case.update(None))
                             for n, case in cases.items()},
                          **{f"last reply rewritten, {n:,} steps": (lambda prev, case=case: case.update(prev, False))
                             for n, case in cases.items()}},
                         max(1, args.runs // 2), setup={f"last reply rewritten, {n:,} steps":
                                                        (lambda case=case: case.previous(rewritten=True))
                                                        for n, case in cases.items()}, progress=False)
    print(f"\n{args.lines} appended lines, as-recorded + {args.what_if} brought up to date "
          "(CPU median [range], wall median [range], ms)")
    width = 44
    for name, s in [*res.items(), *others.items()]:
        print(f"  {name:<{width}}{_ms(s, 'cpu'):>30}{_ms(s, 'wall'):>32}")
    first: Samples = res[f"{args.lines} lines after {sizes[0]:,} steps"]
    last: Samples = res[f"{args.lines} lines after {sizes[-1]:,} steps"]
    ratio = last.median() / first.median()
    floor = res[f"floor: json.loads of the {args.lines} lines ({sizes[-1]})"].median()
    ok = ratio <= TARGET_FLAT
    print(f"\n  {sizes[-1]:,} / {sizes[0]:,} steps: {ratio:.2f}x CPU, {last.median('wall') / first.median('wall'):.2f}x "
          f"wall; target <= {TARGET_FLAT}x: {'met' if ok else 'MISSED'}; {sizes[-1]:,}-step update / floor "
          f"{last.median() / floor:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
