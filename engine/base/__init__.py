"""What every other package stands on: typed errors, bounded file reads, key redaction, counts in words,
and pausing the garbage collector while many objects are built.

May import: nothing from the engine.
"""
