"""A module that acts when it is imported (it writes a mark), as a hostile config would pick one.

Naming it in `use:` must not import it unless it really defines the middleware class named, and the
user allowed it (tests/safety/test_config_code.py).
"""

from __future__ import annotations

import os
from typing import Any

from langchain.agents.middleware import AgentMiddleware

MARK_ENV = "CTXI_SIDE_EFFECT_MARK"

if os.environ.get(MARK_ENV):  # the side effect: imported at all leaves this mark
    with open(os.environ[MARK_ENV], "a", encoding="utf-8") as fh:
        fh.write("imported\n")


def make_middleware(**kwargs: Any) -> AgentMiddleware:
    """A factory function: not a class, so never called from a config."""
    return RealMiddleware()


class Plain:
    """A class that is no middleware."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


class RealMiddleware(AgentMiddleware):
    """A real middleware: imported (and the module's side effect happens) only when the user allows it."""


Alias = RealMiddleware
NOT_A_CLASS = 42
