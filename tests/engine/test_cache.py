"""The prompt-cache model, one rule per test, on hand-made requests (engine/cost/cache.py cites each rule)."""

from __future__ import annotations

from engine.cost.cache import Block, CacheRules, PromptCache, Request, simulate

ANTHROPIC = CacheRules("anthropic", ttl="5m", min_tokens=1024)
PROMPT = Block("system", 5000, 1, True, "prompt")


def msg(key: str, tokens: int, blocks: int = 1) -> Block:
    return Block(key, tokens, blocks)


def req(*blocks: Block, t: float | None = None) -> Request:
    return Request(tuple(blocks), t)


def test_a_growing_conversation_reads_the_previous_request_and_writes_only_what_is_new() -> None:
    first, second = simulate([req(PROMPT, msg("u1", 100)), req(PROMPT, msg("u1", 100), msg("a1", 30), msg("t1", 200))],
                             ANTHROPIC)
    assert (first.read, first.write, first.uncached) == (0, 5100, 0)
    assert (second.read, second.write, second.uncached, second.total) == (5100, 230, 0, 5330)
    assert second.previous_cached == 5100 and second.lost == 0


def test_entries_expire_after_the_ttl_measured_from_the_request_that_last_used_them() -> None:
    stream = [req(PROMPT, msg("u1", 100), t=0.0), req(PROMPT, msg("u1", 100), msg("u2", 50), t=301.0)]
    late = simulate(stream, ANTHROPIC)[1]
    assert (late.read, late.write) == (0, 5150)
    assert late.expired == 5100 and late.rewritten == 0
    # a 1-hour TTL keeps it
    kept = simulate(stream, CacheRules("anthropic", ttl="1h", min_tokens=1024))[1]
    assert (kept.read, kept.write, kept.expired) == (5100, 50, 0)


def test_a_hit_refreshes_the_lifetime() -> None:
    a, b, c = (req(PROMPT, *[msg(f"m{i}", 10) for i in range(n)], t=t) for n, t in ((1, 0.0), (2, 200.0), (3, 400.0)))
    uses = simulate([a, b, c], ANTHROPIC)
    # 400 s after the first request, but 200 s after the read that refreshed it
    assert uses[2].read == 5020 and uses[2].expired == 0


def test_a_rewritten_history_falls_back_to_the_system_prompt_breakpoint() -> None:
    history = [msg(f"m{i}", 1000) for i in range(5)]
    before = req(PROMPT, *history)
    after = req(PROMPT, msg("summary", 300), msg("m5", 50))  # a compaction replaced m0..m4
    use = simulate([before, after], ANTHROPIC)[1]
    assert (use.read, use.write) == (5000, 350)
    assert use.rewritten == 5000  # the message tokens after the prompt, cached before, gone now
    assert use.previous_cached == 10000 and use.lost == 5000


def test_without_a_prompt_breakpoint_a_rewrite_loses_everything() -> None:
    unmarked = Block("system", 5000, 1, False)
    before = req(unmarked, msg("m0", 1000))
    after = req(unmarked, msg("summary", 300))
    use = simulate([before, after], ANTHROPIC)[1]
    assert (use.read, use.write, use.rewritten) == (0, 5300, 6000)


def test_the_lookback_window_is_twenty_blocks_counting_the_breakpoint() -> None:
    base = req(PROMPT, msg("u1", 100))
    within = req(PROMPT, msg("u1", 100), msg("calls", 300, blocks=19))  # the old entry is 19 blocks back
    beyond = req(PROMPT, msg("u1", 100), msg("calls", 300, blocks=20))  # 20 blocks back: out of the window
    hit = simulate([base, within], ANTHROPIC)[1]
    miss = simulate([base, beyond], ANTHROPIC)[1]
    assert (hit.read, hit.write) == (5100, 300)
    # the search resumes from the prompt breakpoint, which finds its own entry
    assert (miss.read, miss.write, miss.out_of_window, miss.rewritten) == (5000, 400, 100, 0)


def test_a_prompt_below_the_minimum_is_not_cached() -> None:
    short = [req(msg("u1", 600)), req(msg("u1", 600), msg("u2", 300)), req(msg("u1", 600), msg("u2", 300), msg("u3", 200))]
    uses = simulate(short, ANTHROPIC)
    assert [(u.read, u.write, u.uncached, u.too_short) for u in uses] == [
        (0, 0, 600, True), (0, 0, 900, True), (0, 1100, 0, False)]
    # Opus 4.6's minimum is 4,096: the same 1,100 tokens stay uncached
    assert simulate(short, CacheRules("anthropic", min_tokens=4096))[2].uncached == 1100


def test_a_copy_is_an_independent_cache() -> None:
    cache = PromptCache(ANTHROPIC)
    cache.send(req(PROMPT, msg("u1", 100)))
    fork = cache.copy()
    fork.send(req(PROMPT, msg("other", 10)))
    assert cache.send(req(PROMPT, msg("u1", 100), msg("u2", 5))).read == 5100


def test_openai_caches_the_longest_prefix_in_128_token_increments_from_1024() -> None:
    rules = CacheRules("openai", min_tokens=1024, ttl_s=300.0)
    system = Block("sys", 2000)
    uses = simulate([req(system), req(system, msg("u", 500)), req(Block("sys2", 900)), req(Block("sys2", 900), msg("x", 50))],
                    rules)
    # 2,000 tokens cached: 1024 + 7 × 128 = 1,920 are billed as cached; no write fee, no write count
    assert (uses[1].read, uses[1].write, uses[1].uncached) == (1920, 0, 580)
    # under 1,024 tokens nothing is cached
    assert (uses[3].read, uses[3].uncached, uses[3].too_short) == (0, 950, True)


def test_openai_prefixes_expire_after_five_minutes_of_inactivity() -> None:
    rules = CacheRules("openai", min_tokens=1024, ttl_s=300.0)
    a = req(Block("sys", 2000), t=0.0)
    b = req(Block("sys", 2000), msg("u", 10), t=400.0)
    assert simulate([a, b], rules)[1].read == 0


def test_no_cache_provider_sends_everything_uncached() -> None:
    uses = simulate([req(PROMPT), req(PROMPT, msg("u", 5))], CacheRules("none"))
    assert [(u.read, u.write, u.uncached) for u in uses] == [(0, 0, 5000), (0, 0, 5005)]


def test_request_builder_keeps_a_few_steps_and_rebuilds_older_ones_equal() -> None:
    from engine.config.schema import preset
    from engine.cost.cache_run import KEPT_STEPS, RequestBuilder
    from engine.run.replay import replay
    from engine.thread.synthetic import synthetic_thread

    run = replay(synthetic_thread(40, seed=3), preset("langchain"))
    first = [RequestBuilder(run).messages(s) for s in run.steps]  # a fresh builder per step: nothing shared
    builder = RequestBuilder(run)
    walked = [builder.messages(s) for s in run.steps]
    assert len(builder._per_step) == KEPT_STEPS < len(run.steps)  # memory stays flat, not steps x view
    assert walked == first
    assert builder.messages(run.steps[0]) == first[0]  # an evicted step is rebuilt the same


def test_pricing_shortcuts_give_what_computing_every_step_afresh_gives() -> None:
    """The running sums (request totals, kept blocks without a compaction) and the shared-prefix checks
    that trust a Snapshot's list (engine.run.replay) price a run exactly as plain tuples of the same messages,
    which take none of the shortcuts, and every request total is its blocks' sum."""
    import dataclasses
    import json

    from engine.config.schema import preset
    from engine.cost.cache_run import RequestBuilder
    from engine.cost.run_cost import run_cost
    from engine.run.replay import replay
    from engine.thread.synthetic import synthetic_thread

    for name, cache in [("stress", "anthropic"), ("stress", "openai"), ("deepagents", "anthropic"), ("langchain", "none")]:
        run = replay(synthetic_thread(120, seed=7), preset(name).with_overrides([f"cost.cache={cache}"]))
        assert any(e.kind == "summarize" for s in run.steps for e in s.events) or name == "langchain"
        plain = dataclasses.replace(run, steps=[dataclasses.replace(s, view=tuple(s.view), events=list(s.events))
                                                for s in run.steps], derived={})
        assert all(not hasattr(s.view, "src") for s in plain.steps) and all(hasattr(s.view, "src") for s in run.steps)
        assert json.dumps(run_cost(run).to_dict()) == json.dumps(run_cost(plain).to_dict())
        builder = RequestBuilder(run)
        for s in run.steps:
            walked, fresh = builder.request(s), RequestBuilder(run).request(s)
            assert walked.blocks == fresh.blocks
            assert walked.total == fresh.total == sum(b.tokens for b in walked.blocks)
