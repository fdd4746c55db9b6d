"""The scenario tools on the virtual filesystem, the offline shell and web corpus, the policy's parsing."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine.config.schema import preset
from engine.scenarios.bundle import load_project, project_files, search_web, web_documents
from engine.scenarios.long_refactor import logger_call, planned_edits
from engine.scenarios.policy import Seen
from engine.scenarios.tools import AgentFiles, Toolbox, run_shell
from engine.thread.kinds import mark
from engine.workspace.vfs import VirtualFilesystem


def toolbox() -> tuple[AgentFiles, dict]:
    files = AgentFiles(VirtualFilesystem(), VirtualFilesystem())
    load_project(files.world)
    tools = Toolbox(vfs=files, config=preset("deepagents")).tools()
    return files, {t.name: t for t in tools}


def test_read_file_numbers_lines_and_pages() -> None:
    _, t = toolbox()
    out = t["read_file"].invoke({"file_path": "/project/src/ledgerline/tax.py", "offset": 2, "limit": 2})
    assert out.splitlines()[:2] == ["     3\tfrom __future__ import annotations", "     4\t"]
    assert out.endswith("[showing lines 3-4 of 31; read more with offset=4]")
    assert t["read_file"].invoke({"file_path": "/nope"}) == "Error: File '/nope' not found"


def test_write_edit_grep_glob_ls() -> None:
    files, t = toolbox()
    assert t["write_file"].invoke({"file_path": "/notes/a.md", "content": "x = 1\nx = 2\n"}) == "Updated file /notes/a.md"
    assert t["write_file"].invoke({"file_path": "/notes/a.md", "content": ""}).startswith("Cannot write to /notes/a.md")
    assert t["edit_file"].invoke({"file_path": "/notes/a.md", "old_string": "x", "new_string": "y"}).startswith(
        "Error: string occurs 2 times")
    assert t["edit_file"].invoke({"file_path": "/notes/a.md", "old_string": "x", "new_string": "y",
                                  "replace_all": True}) == "Successfully replaced 2 instance(s) of the string in '/notes/a.md'"
    assert t["grep"].invoke({"pattern": "y = ", "path": "/notes", "output_mode": "content"}) == \
        "/notes/a.md:1: y = 1\n/notes/a.md:2: y = 2"
    assert t["grep"].invoke({"pattern": "y = ", "path": "/notes", "output_mode": "count"}) == "/notes/a.md: 2"
    assert t["glob"].invoke({"pattern": "*.md", "path": "/notes"}) == "/notes/a.md"
    assert t["ls"].invoke({"path": "/project"}).splitlines() == [
        "/project/README.md (21 lines)", "/project/logs/", "/project/pyproject.toml (8 lines)", "/project/src/",
        "/project/tests/"]


def test_agent_files_overlay_layer_files() -> None:
    files = AgentFiles(VirtualFilesystem(), VirtualFilesystem())
    files.layers.write("/large_tool_results/call-1", "big\ntext\n")
    files.world.write("/a.txt", "a")
    assert files.read("/large_tool_results/call-1") == "big\ntext\n"
    assert files.ls("/") == ["/a.txt", "/large_tool_results/"]
    files.edit("/large_tool_results/call-1", "big", "small")  # copied up: the layer's copy is untouched
    assert files.layers.read("/large_tool_results/call-1") == "big\ntext\n"
    assert files.read("/large_tool_results/call-1") == "small\ntext\n"


def test_offline_shell() -> None:
    files = AgentFiles(VirtualFilesystem())
    load_project(files.world)
    assert run_shell(files, "cat /project/pyproject.toml") == project_files()["/project/pyproject.toml"]
    assert run_shell(files, "wc -l src/ledgerline/tax.py") == "     31 src/ledgerline/tax.py\n     31 total"
    log = run_shell(files, "pytest -q")
    assert log.splitlines()[-1] == "========================= 1 failed, 79 passed in 3.52s ========================="
    assert run_shell(files, "rm -rf /") == "bash: rm: command not found"
    assert run_shell(files, "cat /missing").startswith("cat: ")


def test_large_generated_files_exceed_the_offload_limit() -> None:
    sizes = {p: len(t) for p, t in project_files().items() if len(t) > 80_000}
    assert sorted(sizes) == ["/project/logs/server.log", "/project/src/ledgerline/currency_data.py",
                             "/project/src/ledgerline/legacy_import.py", "/project/src/ledgerline/tax_tables.py"]


def test_web_search_ranks_by_topic() -> None:
    assert len(web_documents()) == 8
    assert [d.slug for d in search_web("sub-agents concurrency clamp", 2)] == ["subagents", "memory"]
    assert search_web("zzzz") == []


def test_seen_parses_calls_results_reminders_and_summaries() -> None:
    ai = AIMessage("", tool_calls=[{"name": "write_todos", "args": {"todos": [{"content": "a", "status": "pending"}]},
                                    "id": "c1"}, {"name": "ls", "args": {"path": "/p"}, "id": "c2"}])
    summary = mark(HumanMessage("Here is a summary"), "summary")
    reminder = HumanMessage("<system_reminder>\n- [in_progress] Refactor x\n</system_reminder>", name="todo_reminder")
    seen = Seen.parse([summary, HumanMessage("task"), ai, ToolMessage("/p/a.py (3 lines)\n/p/d/", tool_call_id="c2")])
    assert seen.task == "task" and seen.summaries == ["Here is a summary"]
    assert [c.result for c in seen.calls] == [None, "/p/a.py (3 lines)\n/p/d/"]
    assert seen.listed_files() == {"/p/a.py": 3} and seen.listed_dirs() == ["/p/d/"]
    assert seen.todos() == [{"content": "a", "status": "pending"}]
    assert Seen.parse([HumanMessage("t"), reminder]).todos() == [{"content": "Refactor x", "status": "in_progress"}]


def test_refactor_edits() -> None:
    assert logger_call('    print("charging", p.id, "attempt", n)') == \
        '    logger.info("charging %s attempt %s", p.id, n)'
    assert logger_call("x = print") is None
    edits = planned_edits("/p/a.py", ["from x import compute_total", "", "X = 1", "def f():",
                                      '    print("hi", compute_total(1))'])
    assert [e["old_string"] for e in edits] == ["compute_total", '    print("hi", compute_total(1))',
                                                "from x import compute_total", "X = 1"]
