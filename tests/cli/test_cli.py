"""`ctxi` as a whole: what start-up imports, one meaning of --json everywhere, help texts, plurals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.base.wording import plural
from engine.cli.ctxi import COMMANDS, build_parser, main
from engine.formats.native import dumps
from tests.conftest import ROOT, trace_path
from tests.evals.threads import needle_thread

HEAVY = ("langchain.agents", "langgraph.graph", "langchain_core", "numpy", "pydantic", "streamlit", "plotly",
         "engine.run.replay", "engine.layers", "engine.formats")


def _imported_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code` (stdout discarded)."""
    probe = (f"import sys, io, contextlib\nwith contextlib.redirect_stdout(io.StringIO()):\n"
             f"    try:\n        {code}\n    except SystemExit:\n        pass\n"
             "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return set(done.stderr.split())


def test_help_imports_no_engine_machinery() -> None:
    modules = _imported_after("from engine.cli.ctxi import main; main(['--help'])")
    assert "engine.cli.inspect" in modules  # the listing reads every command module
    assert sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)) == []


def test_inspect_help_needs_no_tokenizer_or_messages() -> None:
    modules = _imported_after("from engine.cli.ctxi import main; main(['inspect', '--help'])")
    assert not {"langchain_core", "numpy", "engine.tokens.counters", "engine.thread.model", "langchain.agents"} & modules


def test_inspect_imports_no_agent_factory() -> None:
    session = trace_path("claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    modules = _imported_after(f"from engine.cli.ctxi import main; main(['inspect', {str(session)!r}])")
    assert "engine.recorded.inspect" in modules and "engine.formats.claude_code" in modules
    assert not {"langchain.agents", "langgraph.graph", "engine.run.replay", "engine.layers", "streamlit", "plotly"} & modules


def test_choices_named_in_commands_match_the_engine() -> None:
    from engine.cli import inspect as inspect_command
    from engine.cli import sweep as sweep_command
    from engine.evals.sweep import EXECUTORS
    from engine.tokens.counters import COUNTERS, DEFAULT_COUNTER

    assert (inspect_command.COUNTERS, inspect_command.DEFAULT_COUNTER) == (COUNTERS, DEFAULT_COUNTER)
    assert sweep_command.EXECUTORS == EXECUTORS


def test_from_engine_import_replay_is_the_function_after_the_submodule() -> None:
    import engine
    import engine.run.replay  # noqa: F401 - binds the submodule on the package
    from engine import replay

    assert callable(replay) and replay.__module__ == "engine.run.replay"
    assert engine.Thread.__module__ == "engine.thread.model"
    with pytest.raises(AttributeError):
        engine.no_such_name  # noqa: B018


@pytest.fixture()
def thread_file(tmp_path: Path) -> str:
    path = tmp_path / "needle.json"
    path.write_text(dumps(needle_thread()), encoding="utf-8")
    return str(path)


COUNTS = ["--set", "tokens.counter=approximate"]


@pytest.mark.parametrize("args", [
    ["inspect", "{f}", "--json"],
    ["inspect", "{f}", "--list", "--json"],
    ["replay", "{f}", *COUNTS, "--json"],
    ["eval", "needle", "{f}", *COUNTS, "--json"],
    ["eval", "drift", "{f}", *COUNTS, "--json"],
    ["sweep", "{f}", *COUNTS, "--grid", "summarization.keep=messages:2,messages:4", "--executor", "serial", "--json"],
    ["scenario", "--list", "--json"],
])
def test_json_is_one_document_on_stdout(thread_file: str, capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    assert main([a.format(f=thread_file) for a in args]) == 0
    out = capsys.readouterr().out
    json.loads(out)  # the whole of stdout, nothing before or after


def test_scenario_json_says_what_was_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.json"
    assert main(["scenario", "needle", "--steps", "6", "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["out"] == str(out) and doc["steps"] >= 1 and doc["related"] == []
    assert doc["thread_id"] == json.loads(out.read_text())["thread_id"]
    assert main(["scenario", "needle", "--out", "-", "--json"]) == 2
    assert "--json" in capsys.readouterr().err


def test_old_json_path_spelling_says_what_to_type(thread_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["replay", thread_file, "--json", "report.json"])
    assert exc.value.code == 2
    assert "write a file with --out PATH" in capsys.readouterr().err


@pytest.mark.parametrize("spelling", [["--json", "-"], ["--json=-"]])
def test_json_dash_is_stdout(thread_file: str, capsys: pytest.CaptureFixture[str], spelling: list[str]) -> None:
    assert main(["replay", thread_file, "--preset", "as-recorded", *spelling]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "context-inspector/run" and doc["steps"]


def test_every_json_option_has_the_same_help() -> None:
    parser = build_parser()
    helps: dict[str, str] = {}

    def walk(p, name: str) -> None:  # noqa: ANN001
        for action in p._actions:
            if "--json" in action.option_strings:
                helps[name] = action.help
            for sub_name, sub in getattr(action, "choices", None).items() if isinstance(action.choices, dict) else ():
                walk(sub, f"{name} {sub_name}")

    walk(parser, "ctxi")
    assert set(helps) == {"ctxi inspect", "ctxi replay", "ctxi scenario", "ctxi eval needle", "ctxi eval drift",
                          "ctxi eval survival", "ctxi eval cache", "ctxi sweep", "ctxi sessions", "ctxi watch",
                          "ctxi export-config"}
    assert all(h.startswith("print ") and h.endswith(" as JSON on stdout instead of text") for h in helps.values())
    assert {c.replace("_", "-") for c in COMMANDS} == {a for a in parser._subparsers._group_actions[0].choices}


def test_plurals() -> None:
    assert [plural(0, "call"), plural(1, "call"), plural(2, "call"), plural(1204, "message")] == [
        "0 calls", "1 call", "2 calls", "1,204 messages"]
    assert plural(1, "summary") == "1 summary" and plural(3, "summary") == "3 summaries"


def test_replay_summary_says_1_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.evals.test_cli import SETS

    path = tmp_path / "needle.json"
    path.write_text(dumps(needle_thread()), encoding="utf-8")
    assert main(["replay", str(path), *SETS]) == 0
    out = capsys.readouterr().out
    assert "1 call," in out and "1 calls" not in out
