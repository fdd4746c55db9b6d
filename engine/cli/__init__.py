"""`ctxi`, the engine from the command line: `ctxi.py` parses and dispatches, one module per command.

Each command imports the engine inside its `run`, so `ctxi --help` reads the command modules alone.
May import: base, thread, tokens, config, formats, recorded, summarizers, workspace, policies, layers, run,
views, cost, evals, scenarios, lessons, sessions.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The `ctxi` console script (`engine.cli:main` in pyproject.toml)."""
    from engine.cli.ctxi import main as run

    return run(argv)
