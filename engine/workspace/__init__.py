"""Where things live on disk and in the virtual filesystem: the workspace (memories, saved threads), the
session library of uploads, and the virtual filesystem layers write to (`vfs`).

May import: base, thread, tokens, config, formats, recorded.
"""
