"""How many threads a batch of texts is encoded on (engine.tokens.counters._encode_workers), and that every
split gives the counts one thread gives."""

from __future__ import annotations

import os

import pytest

from engine.tokens import counters as tokens
from engine.tokens.counters import TEXTS_PER_WORKER, TiktokenCounter


@pytest.mark.parametrize(("cpus", "load", "texts", "workers"), [
    (2, 0.0, 10_000, 2),   # a quiet machine: both cores
    (2, 0.4, 10_000, 2),   # 1.6 cores idle: rounds to 2
    (2, 1.0, 10_000, 1),   # one core busy: the other one, no second thread
    (2, 8.0, 10_000, 1),   # every core taken: one thread, the cheaper in CPU and no slower
    (8, 2.2, 10_000, 6),   # 5.8 idle cores
    (8, 0.0, 10_000, 8),
    (8, 0.0, 3 * TEXTS_PER_WORKER, 3),  # no share smaller than TEXTS_PER_WORKER texts
    (8, 0.0, 2 * TEXTS_PER_WORKER - 1, 1),
])
def test_workers_are_the_idle_cores(monkeypatch: pytest.MonkeyPatch, cpus: int, load: float, texts: int,
                                    workers: int) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: cpus)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(tokens, "_ENCODE_THREADS", min(8, cpus))
    assert tokens._encode_workers(texts) == workers


def test_no_load_average_means_all_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> tuple[float, float, float]:
        raise OSError("no load average")

    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(os, "getloadavg", missing)
    monkeypatch.setattr(tokens, "_ENCODE_THREADS", 4)
    assert tokens._encode_workers(10_000) == 4


def test_a_small_batch_does_not_read_the_load(monkeypatch: pytest.MonkeyPatch) -> None:
    def unexpected() -> tuple[float, float, float]:
        raise AssertionError("the load was read for a batch too small to share out")

    monkeypatch.setattr(os, "getloadavg", unexpected)
    monkeypatch.setattr(tokens, "_ENCODE_THREADS", 8)
    assert tokens._encode_workers(2 * TEXTS_PER_WORKER - 1) == 1


def _texts() -> list[str]:
    # short texts, texts over the segment size (cut into segments shared out with the rest) and
    # an empty one, so a share boundary falls inside a long text's segments
    long = " ".join(f"word{i} {i * 7919 % 1000}, and more;" for i in range(3000))
    return [f"text {i}: {'x' * (i % 13)} done." for i in range(700)] + [long, long[:9000] + "!", ""] + \
        [f"tail {i}" for i in range(300)]


def test_every_split_counts_what_one_thread_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = TiktokenCounter("o200k_base")
    encode = counter._encoding.encode_ordinary
    texts = _texts()
    expected = [len(encode(t)) for t in texts]
    seen = []
    for workers in (1, 2, 3, 8):
        monkeypatch.setattr(tokens, "_encode_workers", lambda n, w=workers: w)
        assert counter._token_lengths(texts) == expected
        seen.append(workers)
    assert seen == [1, 2, 3, 8]


def test_one_worker_starts_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    class NoPool:
        def __init__(self, *args: object, **kwargs: object) -> None:
            raise AssertionError("a thread pool was started for one worker")

    monkeypatch.setattr(tokens, "ThreadPoolExecutor", NoPool)
    monkeypatch.setattr(tokens, "_encode_workers", lambda n: 1)
    counter = TiktokenCounter("o200k_base")
    texts = _texts()
    assert sum(counter._token_lengths(texts)) == sum(len(counter._encoding.encode_ordinary(t)) for t in texts)
