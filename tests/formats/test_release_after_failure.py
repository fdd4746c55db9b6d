"""A failed load hands the heap back only when the input could have filled it (engine.formats._released)."""

from __future__ import annotations

import io
import zipfile

import pytest

import engine.formats as formats
from engine.base.errors import ThreadLoadError


@pytest.fixture
def releases(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(formats, "release_memory", lambda: calls.append(1))
    return calls


def test_a_small_bad_file_costs_no_full_collection(releases: list[int]) -> None:
    with pytest.raises(ThreadLoadError, match="bad.json"):
        formats.load_thread(data=b'{"messages": [{"role": 5}', name="bad.json")
    with pytest.raises(ThreadLoadError, match="bad.json"):
        formats.list_threads(data=b'{"messages": [{"role": 5}', name="bad.json")
    assert releases == []


def test_a_large_bad_file_gives_its_heap_back(releases: list[int]) -> None:
    blob = b'{"messages": [' + b'{"role": "user", "content": "x"},' * 40_000 + b'{"role": 5'
    assert len(blob) >= formats.RELEASE_AFTER_BYTES
    with pytest.raises(ThreadLoadError, match="big.json"):
        formats.load_thread(data=blob, name="big.json")
    assert releases == [1]


def test_a_small_archive_may_expand_so_it_is_released_after(releases: list[int]) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("header.json", "{")
    with pytest.raises(ThreadLoadError, match="log.eval"):
        formats.load_thread(data=buf.getvalue(), name="log.eval")
    assert releases == [1]
