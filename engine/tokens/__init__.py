"""Token counting and model windows: tiktoken's encodings offline (`encodings`), what a message is made of
(`content`), the counters and their caches (`counters`), image prices, linear segmenting of long texts,
and each model's context window and output limit (`windows`, from engine/data/models.yaml).

May import: base, thread.
"""
