"""Issue 11: every CLI output path and every workspace state is one clear line, and no saved run is lost.

Repros (each a traceback or lost work on main before this series): `--json`/`--out` at a folder or at
/dev/full; CTXI_WORKSPACE set to a file; the memory writer on `/memories/a` then `/memories/a/b`,
a 300-character name, lone surrogates (an empty `.tmp` was left behind); one unreadable file in
the workspace hid every saved run; a saved file whose `thread_id` differs from its name could not
be opened; the atomic save used a fixed `<name>.json.tmp`, so concurrent saves raced; a later run
with the same id overwrote an earlier saved one.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from engine.cli.ctxi import main
from engine.formats.native import dumps
from engine.layers.memory import MemoryLayer
from engine.thread.model import Thread
from engine.workspace.workspace import Workspace, WorkspaceError

THREAD = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}


def thread(thread_id: str = "run", text: str = "hello") -> Thread:
    return Thread(thread_id=thread_id, messages=[HumanMessage("hi", id="h"), AIMessage(text, id="a")])


def err_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.fixture
def thread_file(tmp_path: Path) -> Path:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(THREAD), encoding="utf-8")
    return path


# -- CLI output paths ------------------------------------------------------------------------------------------------

def test_replay_out_at_a_folder_is_refused_before_the_replay(thread_file: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(thread_file), "--out", str(tmp_path)]) == 2
    out = capsys.readouterr()
    assert out.out == ""  # refused before any work
    assert out.err.strip() == f"ctxi replay: error: --out {tmp_path}: is a folder; give a file name"
    assert main(["replay", str(thread_file), "--out", str(tmp_path / "missing" / "r.json")]) == 2
    assert err_line(capsys) == f"ctxi replay: error: --out {tmp_path / 'missing' / 'r.json'}: the folder {tmp_path / 'missing'} does not exist"


def test_replay_out_on_a_full_disk_names_the_file(thread_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    assert main(["replay", str(thread_file), "--out", "/dev/full"]) == 2
    assert err_line(capsys) == "ctxi replay: error: --out /dev/full: cannot write (No space left on device)"


def test_run_out_at_a_folder_is_refused_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "needle", "--steps", "2", "--out", str(tmp_path), "--quiet"]) == 2
    assert err_line(capsys) == f"ctxi run: error: --out {tmp_path}: is a folder; give a file name"


# -- the workspace ---------------------------------------------------------------------------------------------------

def test_workspace_set_to_a_file_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "not-a-folder"
    afile.write_text("x", encoding="utf-8")
    ws = Workspace(afile)
    message = f"{afile}: the workspace is a file, not a folder (set CTXI_WORKSPACE to a folder)"
    for action in (lambda: ws.save_thread(thread()), lambda: ws.write_memory("/memories/a.md", "x"), ws.list_threads):
        with pytest.raises(WorkspaceError) as info:
            action()
        assert str(info.value) == message
    monkeypatch.setenv("CTXI_WORKSPACE", str(afile))
    assert main(["run", "needle", "--steps", "2", "--save", "--quiet"]) == 2
    assert err_line(capsys) == f"ctxi run: error: {message}"


def test_memory_writer_edge_cases_are_one_line_and_leave_no_tmp(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    ws.write_memory("/memories/a", "x")
    with pytest.raises(WorkspaceError) as info:
        ws.write_memory("/memories/a/b", "y")
    assert str(info.value) == f"{ws.memories_dir / 'a' / 'b'}: cannot write: {ws.memories_dir / 'a'} is a file, not a folder"
    ws.write_memory("/memories/c/d", "x")
    with pytest.raises(WorkspaceError, match="cannot write: it is a folder"):
        ws.write_memory("/memories/c", "y")
    with pytest.raises(WorkspaceError, match="a name is longer than 255 bytes, the file system's limit"):
        ws.write_memory("/memories/" + "n" * 300, "x")
    with pytest.raises(WorkspaceError) as info:
        ws.write_memory("/memories/s.md", "bad \ud800 text")
    assert str(info.value) == (f"{ws.memories_dir / 's.md'}: cannot write: the text holds a lone surrogate "
                               "(U+D800 at character 4), which is not valid Unicode")
    with pytest.raises(WorkspaceError, match="a name holds a lone surrogate"):
        ws.write_memory("/memories/s\udc80.md", "ok")
    on_disk = sorted(p.relative_to(ws.memories_dir).as_posix() for p in ws.memories_dir.rglob("*"))
    assert on_disk == ["a", "c", "c/d"]  # nothing half-written, no .tmp left behind


def test_memory_layer_reports_a_memory_it_cannot_save_and_saves_the_others(tmp_path: Path) -> None:
    from engine.layers.base import LayerContext
    from engine.thread.events import recording

    ws = Workspace(tmp_path)
    layer = MemoryLayer(LayerContext(), workspace=ws)
    layer.vfs.write("/memories/good.md", "kept", layer="memory")
    layer.vfs.write("/memories/bad.md", "lone \udfff", layer="memory")
    with recording() as recorder:
        layer.after_agent({"messages": []}, None)  # type: ignore[arg-type]
    assert ws.read_memory("/memories/good.md") == "kept"
    warnings = [e.message for e in recorder.events if e.severity == "warning"]
    assert warnings == [f"memory not saved: {ws.memories_dir / 'bad.md'}: cannot write: the text holds a lone "
                        "surrogate (U+DFFF at character 5), which is not valid Unicode"]


def test_an_unreadable_saved_file_is_skipped_with_its_name(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    ws.save_thread(thread("good"))
    (ws.threads_dir / "broken.json").write_text("{not json", encoding="utf-8")
    (ws.threads_dir / "binary.json").write_bytes(b"\xff\xfe")
    scan = ws.scan_threads()
    assert [r.thread_id for r in scan.refs] == ["good"]
    assert scan.skipped == [
        f"{ws.threads_dir / 'binary.json'}, format native: not UTF-8 text (invalid byte at offset 0)",
        f"{ws.threads_dir / 'broken.json'}, format native, at line 1, column 2: invalid JSON: "
        "Expecting property name enclosed in double quotes",
    ]
    assert [r.thread_id for r in ws.list_threads()] == ["good"]


def test_a_saved_file_whose_thread_id_differs_from_its_name_opens(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    ws.threads_dir.mkdir(parents=True)
    (ws.threads_dir / "renamed-by-hand.json").write_text(dumps(thread("original-id")), encoding="utf-8")
    [ref] = ws.list_threads()
    assert ref.thread_id == "original-id"
    assert ws.saved_path("original-id") == ws.threads_dir / "renamed-by-hand.json"
    loaded = Workspace(tmp_path).load("original-id")  # a fresh workspace object finds it too
    assert [m.content for m in loaded.messages] == ["hi", "hello"]


def test_a_different_run_with_the_same_id_never_overwrites_a_saved_one(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    first = ws.save_thread(thread("live-x", "first"))
    again = ws.save_thread(thread("live-x", "first"))  # the same thread: the same file, unchanged
    assert again == first
    later = thread("live-x", "a failed run, 0 steps")
    second = ws.save_thread(later)
    assert second == ws.threads_dir / "live-x-2.json" and later.thread_id == "live-x-2"
    assert ws.load("live-x").messages[1].content == "first"
    assert ws.load("live-x-2").messages[1].content == "a failed run, 0 steps"


def test_concurrent_saves_all_succeed_and_leave_no_tmp(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    failures: list[BaseException] = []
    same = thread("same")

    def save() -> None:
        try:
            for _ in range(10):
                ws.save_thread(same)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            failures.append(exc)

    workers = [threading.Thread(target=save) for _ in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert failures == []
    assert sorted(p.name for p in ws.threads_dir.iterdir()) == ["same.json"]


@pytest.mark.parametrize("args", [["inspect", "--json"], ["inspect"], ["replay", "--json"]], ids=" ".join)
def test_stdout_on_a_full_disk_is_one_line(thread_file: Path, args: list[str]) -> None:
    import subprocess
    import sys

    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "engine.cli", args[0], str(thread_file), *args[1:]], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=300, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 2
    assert done.stderr == f"ctxi {args[0]}: error: stdout: No space left on device\n"


def test_concurrent_saves_of_different_threads_under_one_id_lose_none(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    saved: list[Path] = []
    runs = [thread(f"t{i % 4}", f"run {i}") for i in range(120)]
    workers = [threading.Thread(target=lambda t=t: saved.append(ws.save_thread(t))) for t in runs]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(set(saved)) == 120  # on main: a few saves that raced for one <id>-n name overwrote each other
    texts = sorted(json.loads(p.read_text(encoding="utf-8"))["messages"][1]["data"]["content"] for p in set(saved))
    assert texts == sorted(f"run {i}" for i in range(120))
    assert not [p for p in ws.threads_dir.iterdir() if p.name.endswith(".tmp")]
