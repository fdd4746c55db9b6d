"""The session library under concurrency and broken files (#39.4, #39.5, #39.7's upload names).

400 concurrent `Library.add` calls in 16 threads (how Streamlit runs sessions) failed 23-99 times ("cannot
save t.json (File exists)", "file not found", "file is empty"): every thread of a process staged in the
same `.staging-<id>-<pid>` folder and removed it first. One entry.json whose `steps` is `1e999` (or
nested too deeply for JSON) emptied the Threads page's library and put a traceback on Compare sessions.
An upload that did not load was reported at its staging path instead of its name.
"""

from __future__ import annotations

import multiprocessing
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from engine.base.errors import ThreadLoadError
from engine.formats.native import dumps
from engine.workspace.library import LIBRARY_DIR, Library, entry_id
from tests.ui.builders import build_thread


def uploads() -> list[tuple[str, bytes]]:
    """Four different uploads of the same file name (`t.json`), as several users would send them."""
    out = []
    for i in range(4):
        thread = build_thread(4 + i, thread_id=f"t{i}")
        out.append(("t.json", dumps(thread).encode()))
    return out


def _add(args: tuple[str, int]) -> str:
    root, i = args
    name, data = uploads()[i % 4]
    try:
        return Library(root).add(name, data).id
    except Exception as exc:  # what the race produced: any failure is one of the test's counts
        return f"error: {type(exc).__name__}: {exc}"


def test_many_threads_add_at_once_and_every_call_gets_its_entry(tmp_path: Path) -> None:
    lib = Library(tmp_path)
    data = uploads()
    expected = [entry_id([d], None) for d in data]
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda i: _add((str(tmp_path), i)), range(400)))
    assert [r for r in results if r.startswith("error")] == []
    assert results == [expected[i % 4] for i in range(400)]
    assert sorted(e.id for e in lib.entries()) == sorted(expected)
    assert sorted(p.name for p in (tmp_path / LIBRARY_DIR).iterdir()) == sorted(expected)  # no staging left
    for eid, (_, blob) in zip(expected, data, strict=True):
        assert (tmp_path / LIBRARY_DIR / eid / "files" / "t.json").read_bytes() == blob


def test_many_processes_add_at_once(tmp_path: Path) -> None:
    expected = [entry_id([d], None) for d in uploads()]
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        results = pool.map(_add, [(str(tmp_path), i) for i in range(48)])
    assert [r for r in results if r.startswith("error")] == []
    assert results == [expected[i % 4] for i in range(48)]
    assert sorted(p.name for p in (tmp_path / LIBRARY_DIR).iterdir()) == sorted(expected)


@pytest.mark.parametrize("bad,reason", [
    ('"steps": 1e999', "steps: expected a count, got inf"),
    ('"steps": -3', "steps: expected a count, got -3"),
    ('"steps": "many"', "steps: expected a count, got many"),
    ('"files": "t.json"', "files: expected a list of file names"),
    ('"x": ' + "[" * 100_000 + "]" * 100_000, "nested too deeply"),
])
def test_one_broken_entry_is_skipped_with_one_line_naming_it(tmp_path: Path, bad: str, reason: str) -> None:
    lib = Library(tmp_path)
    good, broken = (lib.add(f"{n}.json", dumps(build_thread(5, thread_id=n)).encode()) for n in ("good", "broken"))
    path = tmp_path / LIBRARY_DIR / broken.id / "entry.json"
    text = path.read_text()
    key = bad.split(":", 1)[0]
    if key in text:  # replace that field's value
        text = re.sub(key + r': (\d+|\[[^\]]*\])', lambda m: bad, text, count=1)
    else:
        text = text.replace("{", "{" + bad + ",", 1)
    path.write_text(text)
    entries, problems = lib.scan()
    assert [e.id for e in entries] == [good.id]
    assert problems == [f"{path}: not a library entry ({reason})"]
    assert [e.id for e in lib.entries()] == [good.id] and lib.entry(good.id) == good


def test_an_upload_that_does_not_load_is_named_as_uploaded(tmp_path: Path) -> None:
    lib = Library(tmp_path)
    with pytest.raises(ThreadLoadError) as err:
        lib.add("my session.json", b'{"messages": [1,2')
    assert str(err.value) == "my session.json, at line 1, column 18: invalid JSON (Expecting ',' delimiter)"
    with pytest.raises(ThreadLoadError) as err:
        lib.add("../odd name?.json", b'[{"role": "user", "content": 5}]')
    assert str(err.value) == ("../odd name?.json, format openai_messages, at $[0].content: expected a string, a list "
                              "of content parts or null, got number")
    assert ".staging" not in str(err.value) and list((tmp_path / LIBRARY_DIR).iterdir()) == []


def test_an_entry_whose_texts_hold_lone_surrogates_lists_them_replaced(tmp_path: Path) -> None:
    """An edited entry.json whose title (or thread id, format) holds `"\\ud800"`: listed with U+FFFD, as any
    transcript text is read, so the Threads and Compare pages can encode it (they raised UnicodeEncodeError)."""
    lib = Library(tmp_path)
    entry = lib.add("s.json", dumps(build_thread(5, thread_id="s")).encode())
    path = tmp_path / LIBRARY_DIR / entry.id / "entry.json"
    text = re.sub(r'"title": "[^"]*"', lambda m: '"title": "x\\ud800 y"', path.read_text())
    path.write_text(text.replace('"source_format": "native"', '"source_format": "na\\udfff"'))
    [found], problems = lib.scan()
    assert (found.title, found.source_format, problems) == ("x\ufffd y", "na\ufffd", [])
    (found.title + found.source_format).encode("utf-8")
