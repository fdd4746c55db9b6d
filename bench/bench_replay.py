"""Replay speed figures (issue 3), on generated 1,000- and 4,000-step threads with every layer on.

    python bench/bench_replay.py [--steps 1000] [--repeat 5] [--skip-agent]

1. re-run after a config change (counts cached) vs the same layers through create_agent: >= 20x faster
2. first run (cold token cache) vs tokenizing the thread alone with tiktoken: <= 2x
3. 4,000 steps vs 1,000 steps: <= 4.5x
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.config import preset  # noqa: E402
from engine.parity import drive_with_create_agent  # noqa: E402
from engine.replay import replay  # noqa: E402
from engine.synthetic import synthetic_thread  # noqa: E402
from engine.tokens import TiktokenCounter, content_parts, load_encoding, tool_call_text  # noqa: E402


def all_texts(thread) -> list[str]:
    texts: list[str] = []
    for m in thread.messages:
        parts, _ = content_parts(m.content)
        texts.extend(parts)
        texts.extend(tool_call_text(tc) for tc in getattr(m, "tool_calls", []) or [])
    return texts


def timed(fn, repeat: int = 1):
    """Best wall time over `repeat` runs (the minimum filters out other load on the machine)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--skip-agent", action="store_true")
    ap.add_argument("--repeat", type=int, default=5, help="best of this many runs per figure")
    args = ap.parse_args()
    n = args.repeat
    config = preset("stress")  # all six layers on, compaction forced early
    changed = config.with_overrides(["summarization.keep=fraction:0.08"])
    thread = synthetic_thread(args.steps, seed=0)
    enc = load_encoding("o200k_base")
    texts = all_texts(thread)

    t_tok, n_tokens = timed(lambda: sum(len(enc.encode(t, disallowed_special=())) for t in texts), n)
    # a fresh counter each time: nothing cached
    t_first, run = timed(lambda: replay(thread, config, token_counter=TiktokenCounter("o200k_base")), n)
    counter = TiktokenCounter("o200k_base")
    replay(thread, config, token_counter=counter)
    t_rerun, run2 = timed(lambda: replay(thread, changed, token_counter=counter), n)
    print(f"thread: {args.steps} steps, {len(thread.messages)} messages, {n_tokens:,} raw text tokens")
    print(f"events: {run.totals()['events_by_kind']}")
    print(f"tokenize alone (tiktoken encode)   {t_tok:7.2f} s")
    print(f"first replay (cold counts)         {t_first:7.2f} s   ratio {t_first / t_tok:5.2f}x  (target <= 2x)")
    print(f"re-run after a config change       {t_rerun:7.2f} s")
    if not args.skip_agent:
        t_agent, observed = timed(lambda: drive_with_create_agent(thread, changed, token_counter=counter))
        assert len(observed) == len(run2.steps)
        print(f"create_agent, same layers          {t_agent:7.2f} s   replay is {t_agent / t_rerun:5.1f}x faster (target >= 20x)")
    big = synthetic_thread(args.steps * 4, seed=0)
    counter4 = TiktokenCounter("o200k_base")
    replay(big, config, token_counter=counter4)  # warm the counts, measure the engine's own growth
    replay(thread, config, token_counter=counter)
    t1, _ = timed(lambda: replay(thread, config, token_counter=counter), n)
    t4, _ = timed(lambda: replay(big, config, token_counter=counter4), n)
    print(f"replay {args.steps} steps {t1:6.2f} s, {args.steps * 4} steps {t4:6.2f} s: ratio {t4 / t1:4.2f}x (target <= 4.5x)")
    t1c, _ = timed(lambda: replay(thread, config, token_counter=TiktokenCounter("o200k_base")), n)
    t4c, _ = timed(lambda: replay(big, config, token_counter=TiktokenCounter("o200k_base")), n)
    print(f"cold: {args.steps} steps {t1c:6.2f} s, {args.steps * 4} steps {t4c:6.2f} s: ratio {t4c / t1c:4.2f}x (target <= 4.5x)")


if __name__ == "__main__":
    main()
