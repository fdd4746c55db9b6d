"""Issue 11, bounded inputs: only regular files are read, and a size limit holds while reading.

Repros: `ctxi inspect /dev/zero` read until MemoryError (its size of 0 was trusted); a FIFO hung
forever. Each test here failed on main before engine/base/files.py (a FIFO test would have hung: it
runs the CLI in a subprocess with a timeout so a regression fails instead of blocking the suite).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.base.errors import ConfigError, FileTooLargeError, ThreadLoadError
from engine.base.files import RefusedFile, read_regular
from engine.cli.ctxi import main
from engine.config.loading import load_config
from engine.formats import load_thread
from engine.workspace.workspace import Workspace, WorkspaceError

ROOT = Path(__file__).resolve().parents[2]
THREAD = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    return err


def test_inspect_dev_zero_is_refused_as_a_device(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "/dev/zero"]) == 2
    assert one_error_line(capsys) == (
        "ctxi inspect: error: /dev/zero: is a character device, not a regular file; only regular files are read")


def test_load_thread_refuses_devices_and_directories(tmp_path: Path) -> None:
    with pytest.raises(ThreadLoadError, match="is a character device, not a regular file"):
        load_thread("/dev/null")
    with pytest.raises(ThreadLoadError, match="is a directory, not a thread file"):
        load_thread(tmp_path)
    with pytest.raises(ThreadLoadError, match="file not found"):
        load_thread(tmp_path / "missing.json")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "thread.json"
    os.mkfifo(fifo)
    # a subprocess with a timeout: on a regression open() blocks forever waiting for a writer
    proc = subprocess.run([sys.executable, "-m", "engine.cli", "inspect", str(fifo)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"ctxi inspect: error: {fifo}: is a FIFO (named pipe), not a regular file; only regular files are read")
    assert proc.stdout == ""


def test_size_limit_holds_while_reading_when_stat_says_zero() -> None:
    # /proc files are regular files whose stat size is 0, whatever they hold
    proc_file = Path("/proc/self/maps")
    if not proc_file.is_file() or proc_file.stat().st_size != 0:
        pytest.skip("no procfs here")
    with pytest.raises(RefusedFile) as info:
        read_regular(proc_file, 64)
    assert info.value.limit_bytes == 64 and info.value.size_bytes is None
    with pytest.raises(FileTooLargeError, match="file holds more than the size limit of 64 bytes"):
        load_thread(proc_file, max_bytes=64)
    assert len(read_regular(proc_file, 1 << 24)) > 64  # the same file under a large limit is read whole


def test_size_limit_from_stat_and_exact_limit(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(THREAD), encoding="utf-8")
    size = path.stat().st_size
    assert read_regular(path, size) == path.read_bytes()  # exactly at the limit: read
    with pytest.raises(FileTooLargeError, match=f"file is {size:,} bytes, above the size limit of {size - 1:,} bytes"):
        load_thread(path, max_bytes=size - 1)
    assert len(load_thread(path).messages) == 2


def test_config_file_on_a_device_is_one_config_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file is a character device, not a regular file"):
        load_config("/dev/zero")
    thread = tmp_path / "t.json"
    thread.write_text(json.dumps(THREAD), encoding="utf-8")
    assert main(["replay", str(thread), "--config", "/dev/zero"]) == 2
    assert "config file is a character device" in one_error_line(capsys)
    bad = tmp_path / "c.yaml"
    bad.write_bytes(b"\xff\xfe summarization: {}")
    with pytest.raises(ConfigError, match=r"config file is not UTF-8 text \(invalid byte at offset 0\)"):
        load_config(str(bad))


def test_workspace_files_are_read_within_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace(tmp_path)
    ws.write_memory("/memories/AGENTS.md", "x" * 100)
    monkeypatch.setattr("engine.workspace.workspace.MAX_MEMORY_FILE_BYTES", 99)
    with pytest.raises(WorkspaceError, match=r"AGENTS\.md: memory file is above 99 bytes"):
        ws.read_memory("/memories/AGENTS.md")
    if hasattr(os, "mkfifo"):  # a FIFO among the memories is not a memory file: skipped, never opened
        os.mkfifo(ws.memories_dir / "pipe.md")
        monkeypatch.setattr("engine.workspace.workspace.MAX_MEMORY_FILE_BYTES", 1000)
        assert list(ws.memory_files()) == ["/memories/AGENTS.md"]
        assert ws.read_memory("/memories/pipe.md") is None
