"""The truth of a recorded thread: the context its agent really sent (`history`: recorded compactions,
edits and the provider's thinking rule), counts calibrated to the provider's recorded input
(`calibration`), per-step sums over recorded views, and `ctxi inspect`'s object (`inspect`).

May import: base, thread, tokens.
"""
