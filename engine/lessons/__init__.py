"""The Workshop's lessons as data (`catalog`) and the hand-made coding session one of them uses.

May import: base, thread, tokens, config, run.
"""
