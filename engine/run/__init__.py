"""Replay and the Run it makes: `replay.replay(thread, config) -> Run`, the hook chains it drives
(`chain`), what it keeps per step (`step_sums`), the `Run` and `StepRecord` (`run`), the run cache
bounded by memory (`cache`, `size`), a what-if against the as-recorded run (`whatif`) and the parity
check against a real `create_agent` (`parity`).

May import: base, thread, tokens, config, recorded, summarizers, workspace, policies, layers.
"""
