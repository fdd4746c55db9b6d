"""The thread model every importer produces (`model.Thread`: LangChain messages plus what the source
recorded), message kinds, events, lazily rebuilt texts, per-message memos and synthetic threads.

May import: nothing from the engine.
"""
