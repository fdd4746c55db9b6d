"""Static checks as tests: the repo stays ruff-clean and `engine` stays mypy-clean."""

from __future__ import annotations

import importlib.util
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
