"""A config's `use:` names code: nothing is called before its type is checked, nothing imported that
its source does not show to be a middleware class, and nothing run from the CLI without --allow-middleware.

The finding (#38.1): `middleware: [{use: "os:system", kwargs: {command: "touch /tmp/x"}}]` ran the command
and only then said "os:system made a int, not a LangChain AgentMiddleware"; `builtins:open` created a file.
And a real AgentMiddleware runs code too: LangChain's ShellToolMiddleware runs its `startup_commands`
in a shell when the agent starts, so a config file naming it ran `touch` from `ctxi replay`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.base.errors import ConfigError
from engine.config.schema import EngineConfig
from engine.layers.user import check_middleware, plan_middleware
from engine.layers.user_code import check_use

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_threads" / "needle.json"
FX = "tests.safety.side_effect_module"
FX_FILE = ROOT / "tests" / "safety" / "side_effect_module.py"


def ctxi(tmp_path: Path, *argv: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`ctxi` in a fresh process (nothing imported yet), the side-effect mark pointed into tmp_path."""
    mark = tmp_path / "mark.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CTXI_SIDE_EFFECT_MARK": str(mark)}
    proc = subprocess.run([sys.executable, "-m", "engine.cli", *argv], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    return proc, mark


def config_file(tmp_path: Path, middleware: str) -> Path:
    path = tmp_path / "sent.yaml"
    path.write_text(f"preset: langchain\nmiddleware:\n{middleware}", encoding="utf-8")
    return path


STDLIB = "is refused: {mod!r} is Python's standard library, which defines no AgentMiddleware; nothing was imported"


@pytest.mark.parametrize("entry,message", [
    ('  - use: "os:system"\n    kwargs: {{command: "touch {target}"}}\n',
     "middleware.0.use: os:system " + STDLIB.format(mod="os")),
    ('  - use: "builtins:open"\n    kwargs: {{file: "{target}", mode: w}}\n',
     "middleware.0.use: builtins:open " + STDLIB.format(mod="builtins")),
    ('  - use: "subprocess:Popen"\n    kwargs: {{args: [touch, "{target}"]}}\n',
     "middleware.0.use: subprocess:Popen " + STDLIB.format(mod="subprocess")),
    (f'  - use: "{FX}:make_middleware"\n    kwargs: {{{{note: "{{target}}"}}}}\n',
     f"middleware.0.use: {FX}:make_middleware is refused: make_middleware is a function, not a class deriving from "
     f"AgentMiddleware; {FX} ({FX_FILE}) was not imported"),
    (f'  - use: "{FX}:Plain"\n    kwargs: {{{{note: "{{target}}"}}}}\n',
     f"middleware.0.use: {FX}:Plain is refused: Plain is a class whose bases lead elsewhere, not a class deriving "
     f"from AgentMiddleware; {FX} ({FX_FILE}) was not imported"),
    (f'  - use: "{FX}:NOT_A_CLASS"\n',
     f"middleware.0.use: {FX}:NOT_A_CLASS is refused: NOT_A_CLASS is assigned a value, not defined by a class "
     f"statement, not a class deriving from AgentMiddleware; {FX} ({FX_FILE}) was not imported"),
    # inside a real middleware's kwargs, as LangChain's ContextEditingMiddleware takes its edits
    ('  - use: langchain.agents.middleware:ContextEditingMiddleware\n    kwargs:\n      edits:\n'
     '        - {{use: "os:system", kwargs: {{command: "touch {target}"}}}}\n',
     "middleware.0.kwargs.edits.0.use: os:system is refused: 'os' is Python's standard library, which defines no "
     "AgentMiddleware, ContextEdit, BaseChatModel or OfflineSummarizer; nothing was imported"),
])
@pytest.mark.parametrize("how", ["config", "set"])
def test_the_cli_refuses_what_is_no_middleware_class_before_importing_or_calling_it(
        tmp_path: Path, entry: str, message: str, how: str) -> None:
    target = tmp_path / "pwned"
    text = entry.format(target=target)
    if how == "config":
        argv = ["--config", str(config_file(tmp_path, text))]
    else:  # the same entry typed on the command line, in flow style
        argv = ["--preset", "langchain", "--set", "middleware=" + _flow(text)]
    proc, mark = ctxi(tmp_path, "replay", str(SAMPLE), *argv, "--allow-middleware")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == f"ctxi replay: error: {message}\n"
    assert not target.exists() and not mark.exists()  # nothing ran, the side-effect module was not imported


def _flow(block: str) -> str:
    """A one-entry `middleware:` block list as the YAML flow value `--set` takes."""
    import yaml

    return yaml.safe_dump(yaml.safe_load(block), default_flow_style=True, width=10_000).strip()


def test_without_allow_middleware_a_real_middleware_is_refused_naming_the_file(tmp_path: Path) -> None:
    """ShellToolMiddleware is a real AgentMiddleware from LangChain that runs `startup_commands` in a shell."""
    target = tmp_path / "pwned"
    path = config_file(tmp_path, "  - use: langchain.agents.middleware:ShellToolMiddleware\n"
                                 f'    kwargs: {{startup_commands: ["touch {target}"]}}\n'
                                 f"  - use: {FX}:RealMiddleware\n")
    proc, mark = ctxi(tmp_path, "replay", str(SAMPLE), "--config", str(path))
    assert proc.returncode == 2
    assert proc.stderr == (
        "ctxi replay: error: middleware: the config names Python code that would be imported and run: "
        "langchain.agents.middleware:ShellToolMiddleware (langchain.agents.middleware is already imported); "
        f"{FX}:RealMiddleware (imports {FX} from {FX_FILE}). "
        "Add --allow-middleware to run it (only for code you trust: SECURITY.md)\n")
    assert not target.exists() and not mark.exists()


def test_with_allow_middleware_the_users_own_middleware_runs(tmp_path: Path) -> None:
    path = config_file(tmp_path, f"  - use: {FX}:RealMiddleware\n  - use: {FX}:Alias\n    name: again\n")
    proc, mark = ctxi(tmp_path, "replay", str(SAMPLE), "--config", str(path), "--allow-middleware")
    assert proc.returncode == 0, proc.stderr
    assert "layers: input_context, summarization, RealMiddleware, again" in proc.stdout
    assert mark.read_text() == "imported\n"  # the user allowed it: the module ran, once


def test_a_sweep_grid_naming_middleware_is_checked_too(tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    grid = f'middleware=[{{use: "os:system", kwargs: {{command: "touch {target}"}}}}];[]'
    proc, mark = ctxi(tmp_path, "sweep", str(SAMPLE), "--grid", grid, "--workers", "1", "--executor", "serial",
                      "--allow-middleware")
    assert proc.returncode == 2
    assert proc.stderr == "ctxi sweep: error: middleware.0.use: os:system " + STDLIB.format(mod="os") + "\n"
    assert not target.exists()


# -- the static check, in this process ------------------------------------------------------------
def test_the_static_check_follows_re_exports_without_importing(tmp_path: Path) -> None:
    """LangChain re-exports its middleware from `langchain.agents.middleware`; Deep Agents' classes live in
    submodules of a package whose __init__ imports much more: none of it is imported to decide. (In a fresh
    process: this one may have imported Deep Agents for other tests.)"""
    script = (
        "import sys\n"
        "from engine.layers.user_code import VALUE_BASES, check_use\n"
        "before = set(sys.modules)\n"
        "plan = check_use('deepagents.middleware.patch_tool_calls:PatchToolCallsMiddleware', key='middleware.0')\n"
        "check_use('langchain.agents.middleware:ClearToolUsesEdit', key='x', bases=VALUE_BASES)\n"
        "check_use('engine.summarizers:OfflineSummarizer', key='x', bases=VALUE_BASES)\n"
        "print(plan.module, plan.imported, plan.file.endswith('deepagents/middleware/patch_tool_calls.py'))\n"
        "print(sorted(m for m in set(sys.modules) - before if m.startswith(('deepagents', 'tests'))))\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["deepagents.middleware.patch_tool_calls False True", "[]"]


@pytest.mark.parametrize("use,bases,message", [
    ("langchain.agents.middleware:ClearToolUsesEdit", None,
     "x.use: langchain.agents.middleware:ClearToolUsesEdit is refused: ClearToolUsesEdit is a class "
     "(langchain.agents.middleware.context_editing.ClearToolUsesEdit), not a class deriving from AgentMiddleware; "
     "nothing was called"),
    ("nope_pkg.sub:X", None, "x.use: cannot import 'nope_pkg.sub' (ModuleNotFoundError: No module named 'nope_pkg')"),
    ("antigravity:geohash", None, "x.use: antigravity:geohash is refused: 'antigravity' is Python's standard library, "
                                  "which defines no AgentMiddleware; nothing was imported"),
])
def test_static_refusals(use: str, bases: tuple[type, ...] | None, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        check_use(use, key="x", **({"bases": bases} if bases else {}))
    assert str(err.value) == message


def test_the_dashboards_list_is_every_use_of_the_config_nothing_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, FX, raising=False)  # another test of this process may have imported it
    config = EngineConfig.from_yaml(
        "preset: langchain\nmiddleware:\n"
        "  - use: langchain.agents.middleware:ContextEditingMiddleware\n"
        "    kwargs:\n      edits: [{use: langchain.agents.middleware:ClearToolUsesEdit, kwargs: {keep: 2}}]\n"
        f"  - use: {FX}:RealMiddleware\n    enabled: false\n")
    plans = plan_middleware(config)
    assert [(p.key, p.use) for p in plans] == [
        ("middleware.0", "langchain.agents.middleware:ContextEditingMiddleware"),
        ("middleware.0.kwargs.edits.0", "langchain.agents.middleware:ClearToolUsesEdit")]  # a disabled one runs nothing
    assert FX not in sys.modules


def test_a_class_the_module_replaces_at_import_is_checked_again_before_it_is_called(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The source says `class Sneaky(AgentMiddleware)`, the module rebinds the name when it runs."""
    (tmp_path / "sneaky_mod.py").write_text(
        "from langchain.agents.middleware import AgentMiddleware\n"
        "class Sneaky(AgentMiddleware):\n    pass\n"
        "import os\nSneaky = os.system\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "sneaky_mod", raising=False)
    config = EngineConfig.from_yaml("middleware: [{use: 'sneaky_mod:Sneaky', kwargs: {command: 'touch x'}}]")
    with pytest.raises(ConfigError) as err:
        check_middleware(config)
    assert str(err.value) == ("middleware.0.use: sneaky_mod:Sneaky is refused: it is a builtin_function_or_method "
                              "not deriving from AgentMiddleware; nothing was called")
