"""Each fact class's extractor and its kept rule, on hand-written text with known answers."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine.evals.actions import (
    COMMAND,
    OTHER,
    READ,
    SEARCH,
    WRITE,
    action_of,
    same_path,
    shell_action,
)
from engine.evals.fact_classes import (
    Fact,
    Holder,
    decisions_in,
    errors_in,
    facts_in_message,
    identifiers_in,
    numbers_in,
    open_todos,
    path_tail,
    paths_in,
)


# -- paths ---------------------------------------------------------------------------------------------
def test_paths_are_absolute_home_relative_and_windows_paths_never_urls() -> None:
    text = ("Read /home/u/p/src/app.py:12 and src/lib/x.ts, see https://a.b/c/d.py and/or ./run.sh, "
            "~/notes/todo.md, C:\\work\\build.log, the /tmp dir, 12/05/2024.")
    assert paths_in(text) == ["/home/u/p/src/app.py", "src/lib/x.ts", "./run.sh", "~/notes/todo.md",
                              "C:\\work\\build.log"]
    # a folder's trailing slash, a sentence's last dot, two extensions; never a path cut short to fit
    assert paths_in("ls /srv/app/deps/ash_computer/ then read docs/app.tar.gz. Done") == [
        "/srv/app/deps/ash_computer", "docs/app.tar.gz"]


def test_a_path_is_kept_whole_or_by_its_last_two_components() -> None:
    view = Holder(["Edited tests/test_upload.py and the README."])
    assert path_tail("/srv/app/tests/test_upload.py") == "tests/test_upload.py"
    assert view.holds(Fact("path", "/srv/app/tests/test_upload.py"))  # by its tail
    assert view.holds(Fact("path", "tests/test_upload.py"))  # whole
    assert not view.holds(Fact("path", "/srv/app/lib/test_upload.py"))  # same name, other folder: lost
    assert not view.holds(Fact("path", "/srv/app/config/settings.py"))


# -- commands ------------------------------------------------------------------------------------------
def test_a_command_is_the_first_line_of_a_shell_call_and_the_users_bang_command() -> None:
    call = AIMessage("", id="a", tool_calls=[{"name": "Bash", "id": "c1", "args": {
        "command": "cd /w &&  pytest -x\n  tests/unit"}}])
    codex = AIMessage("", id="b", tool_calls=[{"name": "shell", "id": "c2", "args": {
        "command": ["bash", "-lc", "rg -n TODO src"]}}])
    bang = HumanMessage("<bash-input>git status</bash-input>", id="h")
    assert [f for f in facts_in_message(call) if f.cls == "command"] == [Fact("command", "cd /w && pytest -x")]
    assert [f for f in facts_in_message(codex) if f.cls == "command"] == [Fact("command", "rg -n TODO src")]
    assert [f for f in facts_in_message(bang) if f.cls == "command"] == [Fact("command", "git status")]


def test_a_command_is_kept_whole_or_without_its_cd() -> None:
    view = Holder(["We ran `pytest   -x` and `make build`."])
    assert view.holds(Fact("command", "pytest -x"))  # whitespace collapsed
    assert view.holds(Fact("command", "cd /w && make build"))
    assert not view.holds(Fact("command", "make test"))


# -- numbers with units ------------------------------------------------------------------------------
def test_numbers_keep_their_unit_and_drop_thousands_separators() -> None:
    text = "took 120 ms, then 1,200ms; 42 passed in 3.21s; 98% coverage, $4,200 budget, port 8443, 2s, 3x, 30 days"
    assert numbers_in(text) == ["120 ms", "1200 ms", "42 passed", "3.21 s", "98 %", "$4200", "port 8443", "30 day"]
    assert numbers_in("see /var/log/120ms/x and a1b2c3d 7 and #12 items") == []


def test_a_number_is_kept_only_with_the_same_unit() -> None:
    view = Holder(["The request took 1500ms and 41 tests passed (41 passed)."])
    assert view.holds(Fact("number", "1500 ms"))
    assert not view.holds(Fact("number", "1500 s"))
    assert view.holds(Fact("number", "41 passed"))
    assert not view.holds(Fact("number", "42 passed"))


# -- errors -------------------------------------------------------------------------------------------
def test_error_lines_are_what_happened_never_code_that_names_an_error() -> None:
    output = ("Traceback (most recent call last):\n  File \"a.py\", line 3\nModuleNotFoundError: No module named foo\n"
              "error[E0308]: mismatched types\nfatal: not a git repository\n   99→    raise CompileError,\n"
              "class ParseError(Exception):\nall good")
    assert errors_in(output) == ["ModuleNotFoundError: No module named foo", "error[E0308]: mismatched types",
                                 "fatal: not a git repository"]
    assert errors_in("permission denied\nsecond line", failed=True) == ["permission denied"]
    assert errors_in("permission denied") == []


def test_an_error_is_kept_whole_or_by_its_name_and_most_of_its_words() -> None:
    error = Fact("error", "ModuleNotFoundError: No module named yaml_loader")
    assert Holder(["ModuleNotFoundError:  no module named yaml_loader"]).holds(error)
    assert Holder(["Import failed (ModuleNotFoundError): the module yaml_loader is missing"]).holds(error)
    assert not Holder(["The module yaml_loader is missing"]).holds(error)  # no error name
    assert not Holder(["ModuleNotFoundError", "module named yaml_loader"]).holds(error)  # not in one message


def test_a_file_read_back_states_no_errors_or_numbers() -> None:
    read = {"c1": action_of({"name": "Read", "args": {"file_path": "/w/a.py"}, "id": "c1"})}
    body = ToolMessage("raise ValueError('x')\nerror: 42 ms\nTimeoutError: 30 s", tool_call_id="c1", id="t")
    assert facts_in_message(body, read) == []
    ran = {"c1": action_of({"name": "Bash", "args": {"command": "python a.py"}, "id": "c1"})}
    assert facts_in_message(body, ran) == [Fact("number", "42 ms"), Fact("number", "30 s"), Fact("error", "error: 42 ms"),
                                           Fact("error", "TimeoutError: 30 s")]


# -- identifiers and URLs -----------------------------------------------------------------------------
def test_identifiers_are_urls_codes_names_issue_numbers_and_hashes() -> None:
    text = ("See https://github.com/a/b/pull/12 and OPS-2210, spotter-a0y, TranscriptRenderer, `parse_config`, "
            "`app.py`, #1234, commit 3fa9c2e1 in src/app.py")
    assert identifiers_in(text) == ["https://github.com/a/b/pull/12", "OPS-2210", "spotter-a0y", "TranscriptRenderer",
                                    "parse_config", "#1234", "3fa9c2e1"]


def test_an_identifier_is_kept_in_any_case_and_a_hash_by_its_short_form() -> None:
    view = Holder(["fixed in 3fa9c2e, see ops-2210"])
    assert view.holds(Fact("identifier", "3fa9c2e1d0c4b"))
    assert view.holds(Fact("identifier", "OPS-2210"))
    assert not view.holds(Fact("identifier", "OPS-2211"))


# -- decisions and open todos ------------------------------------------------------------------------
def test_decisions_are_sentences_that_decide() -> None:
    text = "Let me look. I'll switch the parser to streaming mode. The fix is to reset the cache before each call. Ok."
    assert decisions_in(text) == ["I'll switch the parser to streaming mode.",
                                  "The fix is to reset the cache before each call."]


def test_a_decision_is_kept_when_most_of_its_words_are_in_one_message() -> None:
    decision = Fact("decision", "The fix is to reset the cache before each call.")  # fix reset cache call
    assert Holder(["Decided: reset the cache on every call (the fix)."]).holds(decision)
    assert not Holder(["The cache was slow."]).holds(decision)
    assert not Holder(["reset the fix", "cache call"]).holds(decision)


def test_open_todos_are_the_items_not_done() -> None:
    call = {"name": "TodoWrite", "args": {"todos": [{"content": "Write the migration", "status": "completed"},
                                                    {"content": "Run the backfill on staging", "status": "in_progress"},
                                                    {"content": "Announce the cutover", "status": "pending"}]}}
    assert open_todos(call) == ["Run the backfill on staging", "Announce the cutover"]
    plan = {"name": "update_plan", "args": {"plan": [{"step": "Ship it", "status": "pending"}]}}
    assert open_todos(plan) == ["Ship it"]
    assert open_todos({"name": "Bash", "args": {"command": "ls"}}) is None


# -- actions ----------------------------------------------------------------------------------------
def test_tool_calls_become_actions_across_agents() -> None:
    def act(name: str, **args: object) -> tuple[str, str]:
        a = action_of({"name": name, "args": args, "id": "x"})
        return a.kind, a.target

    assert act("Read", file_path="/w/a.py") == (READ, "/w/a.py")
    assert act("read_file", file_path="/w/a.py") == (READ, "/w/a.py")
    assert act("Edit", file_path="/w/a.py", old_string="a", new_string="b") == (WRITE, "/w/a.py")
    assert act("Grep", pattern="foo", path="/w") == (SEARCH, "foo @ /w")
    assert act("Bash", command="cd /w && cat src/a.py") == (READ, "src/a.py")
    assert act("Bash", command="sed -i s/a/b/ f.py") == (WRITE, "f.py")
    assert act("Bash", command="echo hi > out.txt") == (WRITE, "out.txt")
    assert act("Bash", command="pytest  -x") == (COMMAND, "pytest -x")
    assert act("shell", command=["bash", "-lc", "rg foo src"]) == (SEARCH, "rg foo src")
    assert act("apply_patch", input="*** Begin Patch\n*** Update File: src/a.py\n@@") == (WRITE, "src/a.py")
    assert act("str_replace_editor", command="view", path="/w/a.py") == (READ, "/w/a.py")
    assert act("str_replace_editor", command="str_replace", path="/w/a.py") == (WRITE, "/w/a.py")
    assert act("run_shell_command", command="ls -la") == (SEARCH, "ls -la")
    assert act("get_user_details", user_id="u1") == (OTHER, 'get_user_details({"user_id": "u1"})')
    assert shell_action("cat a.py | grep x") == (COMMAND, "cat a.py | grep x")  # a pipeline is not a plain read
    assert same_path("src/a.py", "/w/src/a.py") and not same_path("a.py", "/w/a.py")
