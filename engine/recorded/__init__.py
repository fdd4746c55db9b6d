"""The truth of a recorded thread: the context its agent really sent (`history`: recorded compactions,
edits, the provider's thinking rule and Codex's tool-output truncation, `codex_rules`), walked call by call in
linear time (`walk`), counts in the provider's tokens (`fit`: its tokenizer against ours; `calibration`: every
recorded token laid onto a named category; `prompt`: what the agent's unrecorded prompt is made of), per-step
sums over recorded views, and `ctxi inspect`'s object (`inspect`).

May import: base, thread, tokens.
"""
