"""What `ctxi` prints is safe for a terminal, and a closed stdout or a library's warning does not spoil it (#39.7).

Findings: the CLI printed a transcript's control characters raw (terminal escape injection: a tool
name `evil\\x1b[31m…` recoloured the terminal); `ctxi inspect F >&-` ended in "internal error:
AttributeError: 'NoneType' object has no attribute 'flush'"; LangGraph's "Blocked deserialization of
os.system" warning reached stderr before ctxi's own line.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import ormsgpack
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine.cli.run import ProgressBar
from engine.cli.terminal import ESCAPES, TerminalWriter, terminal_text
from engine.formats.native import dumps
from engine.thread.model import Thread

ROOT = Path(__file__).resolve().parents[2]
ACTIVE = "\x1b]0;PWNED\x07 \x1b[31mRED\x1b[0m \r\x08 \x9b2J \u202eevil\u202c \u2066x\u2069"


def hostile_thread() -> Thread:
    """Control characters where the CLI prints: title, thread id, tool names and arguments, message texts."""
    messages = [HumanMessage(f"do it {ACTIVE}", id="h0")]
    for k in range(4):
        messages.append(AIMessage(f"step {k} {ACTIVE}", id=f"a{k}", tool_calls=[
            {"id": f"c{k}", "name": f"read\x1b[2J{k}", "args": {"path": f"/x/\x1b]52;c;cGF3bmVk\x07{k}.py"}}]))
        messages.append(ToolMessage("data " * 3000 + ACTIVE, tool_call_id=f"c{k}", name=f"read\x1b[2J{k}", id=f"t{k}"))
    messages.append(AIMessage(f"done {ACTIVE}", id="a-end"))
    return Thread(thread_id=f"id\x1b[8m{k}", messages=messages, source_format="native", max_input_tokens=8_000,
                  title=f"Title {ACTIVE}", tools=[{"name": "read\x1b[2J0", "description": "d", "parameters": {}}])


def ctxi(*argv: str, cwd: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "engine.cli", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, **kwargs)  # type: ignore[call-overload]


def assert_inert(text: str) -> None:
    active = sorted({f"U+{ord(c):04X}" for c in text if ord(c) in ESCAPES})
    assert active == [], active


@pytest.fixture(scope="module")
def thread_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "hostile.json"
    path.write_text(dumps(hostile_thread()), encoding="utf-8")
    return path


@pytest.mark.parametrize("argv,shown", [
    (["inspect", "FILE"], "tool calls:  4  (read\\u001b[2J0 1, read\\u001b[2J1 1, read\\u001b[2J2 1, read\\u001b[2J3 1)"),
    (["replay", "FILE", "--preset", "stress"], "thread       id\\u001b[8m3 (native), counter o200k_base"),
    (["eval", "needle", "FILE", "--preset", "stress"], None),
    (["sweep", "FILE", "--grid", "summarization.keep=messages:2,messages:3", "--executor", "serial"], None),
], ids=["inspect", "replay", "eval", "sweep"])
def test_text_output_shows_control_characters_as_escapes(thread_file: Path, argv: list[str], shown: str | None) -> None:
    proc = ctxi(*(str(thread_file) if a == "FILE" else a for a in argv), cwd=thread_file.parent)
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc.stdout + proc.stderr)
    if shown is not None:  # shown as escapes, not dropped
        assert shown in proc.stdout.splitlines(), proc.stdout


@pytest.mark.parametrize("command", ["inspect", "replay"])
def test_json_output_stays_valid_json_with_the_same_values(thread_file: Path, command: str) -> None:
    proc = ctxi(command, str(thread_file), "--json", cwd=thread_file.parent)
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc.stdout)
    doc = json.loads(proc.stdout)
    assert doc["thread_id"] == "id\x1b[8m3"  # the escapes are JSON's own: the value is unchanged
    if command == "inspect":
        assert doc["title"] == f"Title {ACTIVE}"


def test_an_error_line_is_inert_too(tmp_path: Path) -> None:
    proc = ctxi("inspect", str(tmp_path / "no\x1b[31mfile\u202e.json"), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == f"ctxi inspect: error: {tmp_path}/no\\u001b[31mfile\\u202e.json: file not found\n"


def test_terminal_text_keeps_newlines_tabs_and_ordinary_unicode() -> None:
    assert terminal_text("a\tb\nc — ü 😀 שלום") == "a\tb\nc — ü 😀 שלום"
    assert terminal_text("x\x1b[0m\x7f\x85\u200f\ud800") == "x\\u001b[0m\\u007f\\u0085\\u200f\\ud800"


def test_the_progress_bar_keeps_its_own_control_sequence_and_escapes_the_models_words() -> None:
    from engine.scenarios.live import StepProgress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    raw = Tty()
    bar = ProgressBar(TerminalWriter(raw), 3)
    bar(StepProgress(agent="main", step=1, max_steps=3, view_tokens=10, raw_tokens=10, window_tokens=100,
                     action="ls \x1b]0;pwned\x07"))
    assert raw.getvalue().startswith("\r\x1b[2K[")
    assert raw.getvalue().endswith("ls \\u001b]0;pwned\\u0007")


def test_a_closed_stdout_is_not_an_internal_error(thread_file: Path) -> None:
    closed = ctxi("inspect", str(thread_file), cwd=thread_file.parent, preexec_fn=lambda: os.close(1))
    assert (closed.returncode, closed.stderr) == (0, "")
    # a reader that went away before the first write (`| head -0`)
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "inspect", str(thread_file)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    assert proc.wait(300) == 0 and proc.stderr.read() == b""


def test_langgraphs_warning_about_a_class_it_did_not_rebuild_stays_off_stderr(tmp_path: Path) -> None:
    from tests.formats.test_langgraph_sqlite import modern_database

    call_me = ormsgpack.Ext(1, ormsgpack.packb(["os", "system", ["touch /tmp/never"]]))
    bad = ormsgpack.packb({"v": 4, "channel_values": {"messages": [{"role": "user", "content": 5}], "x": call_me}})
    path = modern_database(tmp_path / "ext.sqlite", [("t", "1ef-1", None, "msgpack", bad, {"step": 1})])
    proc = ctxi("inspect", str(path), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (f"ctxi inspect: error: {path}, format langgraph_sqlite, at thread 't': 'messages' item 0 is "
                           "not a message (at content): expected a string or an array, got number\n")
    good = ormsgpack.packb({"v": 4, "channel_values": {"messages": [{"role": "user", "content": "hi"}], "x": call_me}})
    path = modern_database(tmp_path / "ok.sqlite", [("t", "1ef-1", None, "msgpack", good, {"step": 1})])
    proc = ctxi("inspect", str(path), cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
