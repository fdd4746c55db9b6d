"""Static checks as tests: the repo stays ruff-clean and `engine` stays mypy-clean."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run_tool(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_ruff_is_clean() -> None:
    proc = _run_tool("ruff", "check", ".")
    assert proc.returncode == 0, f"ruff check . failed:\n{proc.stdout}{proc.stderr}"


def test_mypy_engine_is_clean() -> None:
    # config lives in pyproject.toml [tool.mypy]
    proc = _run_tool("mypy", "engine")
    assert proc.returncode == 0, f"mypy engine failed:\n{proc.stdout}{proc.stderr}"


def _engine_imports() -> dict[str, set[str]]:
    """`{module: engine modules it imports}`, function-level (lazy) imports included."""
    import ast

    files = {".".join(f.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): f
             for f in (ROOT / "engine").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                subs = {f"{node.module}.{a.name}" for a in node.names} & files.keys()
                deps |= subs or ({node.module} & files.keys())
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names} & files.keys()
        graph[name] = deps - {name, "engine"}  # every module imports the root package first anyway
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            if component:
                found.append(sorted([v, *component]))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_engine_has_no_import_cycles() -> None:
    assert _cycles(_engine_imports()) == []


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_layer_imports_a_sibling_layer() -> None:
    # shared rules live in non-layer modules (scan, offload, thresholds, cutoff, summary_rules)
    from engine.layers import LAYER_CLASSES

    layers = {module for module, _ in LAYER_CLASSES.values()}
    graph = _engine_imports()
    assert {m: sorted(graph[m] & layers) for m in layers if graph[m] & layers} == {}


# -- the engine's layout (docs/architecture.md) ---------------------------------------------------
# Files that may sit at the engine's root beside its packages: the package itself, the typing marker
# and the data folder (YAML tables, not code).
ROOT_FILES = {"__init__.py", "py.typed", "data", "__pycache__"}


def _packages() -> list[Path]:
    return sorted(p for p in (ROOT / "engine").iterdir() if p.is_dir() and (p / "__init__.py").exists())


def test_engine_root_holds_only_packages() -> None:
    stray = sorted(p.name for p in (ROOT / "engine").iterdir()
                   if p.name not in ROOT_FILES and not (p.is_dir() and (p / "__init__.py").exists()))
    assert stray == [], f"put these in the package of their concept (docs/architecture.md): {stray}"


def _allowed_imports(package: Path) -> set[str] | None:
    """The packages `May import:` in the package's docstring names (None: the line is missing)."""
    import ast
    import re

    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    match = re.search(r"May import:\s*(.*?)(?:\.\s*$|\.\n\n|$)", doc, re.S)
    if match is None:
        return None
    words = match.group(1).replace("\n", " ")
    if words.strip().startswith("nothing"):
        return set()
    return {w.strip() for w in words.split(",") if w.strip()}


def _package_imports() -> dict[str, set[str]]:
    """`{package: engine packages its modules import}` (lazy imports included), from the module graph."""
    graph: dict[str, set[str]] = {}
    for module, deps in _engine_imports().items():
        parts = module.split(".")
        if len(parts) < 2:
            continue
        graph.setdefault(parts[1], set()).update(d.split(".")[1] for d in deps if len(d.split(".")) > 1)
    return {p: deps - {p} for p, deps in graph.items()}


def test_every_package_says_what_it_may_import_and_keeps_to_it() -> None:
    names = {p.name for p in _packages()}
    allowed = {p.name: _allowed_imports(p) for p in _packages()}
    assert [n for n, a in allowed.items() if a is None] == [], "each package's docstring needs a `May import:` line"
    unknown = {n: sorted(a - names) for n, a in allowed.items() if a and a - names}
    assert unknown == {}, f"`May import:` names packages that do not exist: {unknown}"
    actual = _package_imports()
    breaking = {n: sorted(actual.get(n, set()) - (allowed[n] or set())) for n in names
                if actual.get(n, set()) - (allowed[n] or set())}
    assert breaking == {}, f"imports their docstring does not allow: {breaking}"
    # what the docstrings allow is itself layered: no package may (even indirectly) import itself
    assert _cycles({n: a or set() for n, a in allowed.items()}) == []


def test_the_layout_checks_catch_a_stray_import(tmp_path: Path) -> None:
    (tmp_path / "__init__.py").write_text('"""A package.\n\nMay import: base, thread.\n"""\n')
    assert _allowed_imports(tmp_path) == {"base", "thread"}
    (tmp_path / "__init__.py").write_text('"""A package.\n\nMay import: nothing from the engine.\n"""\n')
    assert _allowed_imports(tmp_path) == set()
    (tmp_path / "__init__.py").write_text('"""A package with no rule."""\n')
    assert _allowed_imports(tmp_path) is None


def _expects_without_timeout(source: str) -> list[int]:
    """Lines of `expect(...).<assertion>(...)` calls with no `timeout=` (Playwright's default is 5 s)."""
    import ast

    lines = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name)
                and node.func.value.func.id == "expect"
                and not any(k.arg == "timeout" for k in node.keywords)):
            lines.append(node.lineno)
    return lines


def test_every_browser_expect_passes_the_files_timeout() -> None:
    # Playwright's `expect` waits 5 s by default: under load a page takes longer and the test flakes
    # (issue 15: "pass the file's timeout to every expect")
    assert _expects_without_timeout("expect(a).to_be_visible()\nexpect(b).to_be_visible(timeout=T)\n") == [1]
    missing = {str(p.relative_to(ROOT)): lines for p in sorted((ROOT / "tests" / "e2e").glob("*.py"))
               if (lines := _expects_without_timeout(p.read_text(encoding="utf-8")))}
    assert missing == {}, f"expect(...) without timeout= at {missing}"


def test_the_quick_start_has_one_launch_and_one_test_command_and_ci_runs_the_test_one() -> None:
    """README: exactly one command that installs and launches, one that installs and runs the suite, both in a
    virtual environment (stock Debian has no `python` and its pip refuses system installs, issue 35);
    `.ci/run` runs the same test command."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme[readme.index("## Quick start"):readme.index("## What you can do")]
    commands = re.findall(r"```bash\n(.*?)\n```", quick, re.S)
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    launch, test = commands
    assert launch.startswith("python3 -m venv .venv && ") and "streamlit run app.py" in launch
    assert test.startswith("python3 -m venv .venv && ") and test.endswith("-m pytest -n 2")
    ci = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
          if line and not line.startswith("#")]
    assert ci[-1] == test
    assert "PostgreSQL" in quick and "../shared/traces" in quick
