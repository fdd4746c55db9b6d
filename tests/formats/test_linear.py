"""Reading and inspecting a transcript is linear in its length, for every shape grown to hostile sizes.

Issues 38.4 and 39.6: a Claude Code chain with recorded usage, OpenTelemetry model-call spans and Gemini
rewinds were quadratic. Work is counted, not timed: the profiler events (every Python and built-in
function call and return) of `load_thread` + `inspect_thread`, a deterministic count for the same input,
at n and 4n messages. A loop over the whole history per message shows as ~4x more work per message.
(Timing at 10k / 100k / 1M lives in bench/bench_inspect.py.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.formats import load_thread
from engine.recorded.inspect import inspect_thread
from tests.formats.sized import SIZED, SIZED_FOLDERS


def events(fn: Callable[[], Any]) -> int:
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        count += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def inspected(name: str, n: int) -> Callable[[], Any]:
    generate, file_name, fmt = SIZED[name]
    data = generate(n)

    def run() -> Any:
        thread = load_thread(data=data, name=file_name)
        assert thread.source_format == fmt
        return inspect_thread(thread)

    return run


@pytest.mark.parametrize("name", sorted(SIZED))
def test_work_per_message_does_not_grow_with_the_transcript(name: str) -> None:
    inspected(name, 40)()  # imports, encodings and first-call caches: not the transcript's
    small, large = 300, 1200
    per_message = [events(inspected(name, n)) / n for n in (small, large)]
    assert per_message[1] <= per_message[0] * 1.1, per_message


@pytest.mark.parametrize("name", sorted(SIZED_FOLDERS))
def test_work_per_message_does_not_grow_for_tasks_of_several_files(name: str, tmp_path: Path) -> None:
    """Importers that read the files beside the one opened (an OpenHands export, a Cline task of
    ui_messages.json alone), opened by path."""
    write, fmt = SIZED_FOLDERS[name]

    def inspected_folder(n: int) -> Callable[[], Any]:
        folder = tmp_path / f"{n}"
        folder.mkdir()
        entry = write(folder, n)

        def run() -> Any:
            thread = load_thread(entry)
            assert thread.source_format == fmt
            return inspect_thread(thread)

        return run

    inspected_folder(40)()
    small, large = 300, 1200
    per_message = [events(inspected_folder(n)) / n for n in (small, large)]
    assert per_message[1] <= per_message[0] * 1.1, per_message
