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
