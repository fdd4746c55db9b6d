"""What a run costs: prices from a dated table (`prices`), the provider's prompt cache (`cache`,
`cache_run`), one call's bill (`bill`), the run's cost and its causes (`run_cost`), whether a compaction
paid for itself (`payback`), and the cost as the pages show it (`views`).

May import: base, thread, tokens, config, policies, run.
"""
