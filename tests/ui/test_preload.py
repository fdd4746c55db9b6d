"""The preloader of Streamlit's element code (ui/preload.py): the chunks it names exist in the
installed Streamlit, and a folder without them (another release) gives fewer names, never an error."""

from __future__ import annotations

from pathlib import Path

from ui.preload import CHUNKS, STATIC_JS, chunk_files


def _preloaders(at) -> list[dict]:  # noqa: ANN001
    import json

    sent = [json.loads(e.proto.json or e.proto.mixed.json or "null") for e in at.get("bidi_component")]
    return [d for d in sent if isinstance(d, dict) and "chunks" in d]


def test_every_chunk_is_found_in_the_installed_streamlit() -> None:
    # a Streamlit upgrade that renames one fails here, not silently in the browser
    files = chunk_files()
    assert [f.split(".", 1)[0] for f in files] == list(CHUNKS)
    assert all((STATIC_JS / f).is_file() for f in files)


def test_missing_and_ambiguous_chunks_are_left_out(tmp_path: Path) -> None:
    for name in ("DataFrame.abc123.js", "TextInput.one.js", "TextInput.two.js", "TableChart.esm.x1.js",
                 "Table.t9.js", "Slider.s1.css"):
        (tmp_path / name).write_text("")
    # TextInput: two builds, Streamlit's own loading decides; Slider: no script; TableChart is not Table
    assert chunk_files.__wrapped__(tmp_path) == ("DataFrame.abc123.js", "Table.t9.js")


def test_a_session_mounts_the_preloader_once(start) -> None:  # noqa: ANN001
    at = start()  # the Timeline, the session's first run
    assert [d["chunks"] for d in _preloaders(at)] == [list(chunk_files())]
    at.switch_page("pages/layers.py").run()
    assert not at.exception
    assert _preloaders(at) == []  # its script already ran in this tab: nothing resent
