"""Hostile links through AppTest: a link may not write or read the server's disk, nor choose a model."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from engine.config.schema import preset
from engine.formats.native import dumps
from tests.ui.builders import build_thread, write_samples

ROOT = Path(__file__).resolve().parents[2]
REAL_SAMPLES = ROOT / "sample_threads"


def plain(elements) -> list[str]:  # noqa: ANN001
    return [re.sub(r"\\(.)", r"\1", e.value) for e in elements]


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_link_cannot_point_the_memory_layer_at_a_folder(start, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    # The finding: this link created <dir>/memories/AGENTS.md with names and text from the thread.
    monkeypatch.setenv("CTXI_SAMPLES_DIR", str(REAL_SAMPLES))
    target = tmp_path / "victim"
    target.mkdir()
    at = start(thread="sample:memory-two-threads-1", **{"memory.workspace": str(target)})
    assert files_under(target) == []
    assert at.session_state["thread_key"] == "sample:memory-two-threads-1"
    assert at.session_state["config"].memory.workspace is None
    assert plain(at.sidebar.warning) == [
        "Ignored a setting from the link: memory.workspace: not taken from a link (it is a folder on the "
        "server's disk); set it on the Config page if you want it"]
    assert "memory.workspace" not in dict(at.query_params)
    at.run()  # the notice is shown once, the parameter stays dropped
    assert plain(at.sidebar.warning) == []
    assert "memory.workspace" not in dict(at.query_params) and files_under(target) == []


@pytest.mark.parametrize("key,value", [
    ("summarization.summarizer", "openai:gpt-4o-mini"),
    ("summarization.model_name", "gpt-4o"),
    ("summarization.history_dir", "/etc"),
    ("memory.sources", "[/memories/../../etc/passwd]"),
    ("version", "1"),
    ("user_middleware", "os:system"),  # a key the config may grow later is refused by default
])
def test_settings_outside_the_allow_list_are_refused_with_one_notice(start, key: str, value: str) -> None:  # noqa: ANN001
    at = start(preset="stress", **{key: value, "summarization.keep": "messages:7"})
    assert at.session_state["config"] == preset("stress").with_overrides(["summarization.keep=messages:7"])
    notices = plain(at.sidebar.warning)
    assert len(notices) == 1 and notices[0].startswith(f"Ignored a setting from the link: {key}: not taken from a link")
    assert key not in dict(at.query_params)
    assert dict(at.query_params)["summarization.keep"] == "messages:7"


@pytest.mark.parametrize("name", ["../outside", "/abs/outside", "sub/inner", "..", "a_demo/../../outside",
                                  "a_demo\x00", "a_demo.json", "escape"])
def test_sample_names_stay_inside_the_samples_folder(start, tmp_path: Path, monkeypatch, name: str) -> None:  # noqa: ANN001
    samples = write_samples(tmp_path / "samples", a_demo=build_thread(4, thread_id="inside"))
    secret = build_thread(6, thread_id="outside-secret")
    (tmp_path / "outside.json").write_text(dumps(secret), encoding="utf-8")
    (tmp_path / "abs").mkdir()
    (tmp_path / "abs" / "outside.json").write_text(dumps(secret), encoding="utf-8")
    write_samples(samples / "sub", inner=secret)
    os.symlink(tmp_path / "outside.json", samples / "escape.json")  # a symlink that leads out
    monkeypatch.setenv("CTXI_SAMPLES_DIR", str(samples))
    if name.startswith("/abs"):
        name = str(tmp_path) + name
    at = start(thread=f"sample:{name}")
    assert at.session_state["thread_key"] == "sample:a_demo"
    assert all("outside-secret" not in m.value for m in at.sidebar.markdown)
    notices = plain(at.sidebar.warning)
    assert len(notices) == 1 and "from the link is not available here" in notices[0]


def test_a_symlink_inside_the_samples_folder_to_another_sample_still_opens(start, tmp_path: Path,  # noqa: ANN001
                                                                          monkeypatch) -> None:
    samples = write_samples(tmp_path / "samples", a_demo=build_thread(4, thread_id="inside"))
    os.symlink(samples / "a_demo.json", samples / "alias.json")
    monkeypatch.setenv("CTXI_SAMPLES_DIR", str(samples))
    at = start(thread="sample:alias")
    assert at.session_state["thread_key"] == "sample:alias" and plain(at.sidebar.warning) == []


def test_a_file_key_only_opens_the_file_given_to_ctxi_ui(start, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    given = tmp_path / "given.json"
    given.write_text(dumps(build_thread(4, thread_id="given")), encoding="utf-8")
    other = tmp_path / "other.json"
    other.write_text(dumps(build_thread(4, thread_id="other")), encoding="utf-8")
    monkeypatch.setenv("CTXI_OPEN", str(given))
    for key in (f"file:{other}", f"file:{tmp_path}/./other.json", f"file:{tmp_path}/x/../other.json"):
        at = start(thread=key)
        assert at.session_state["thread_key"] == f"file:{given.resolve()}", key
