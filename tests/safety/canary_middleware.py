"""A middleware whose import leaves a mark: a link naming it must never get it imported or run."""

from __future__ import annotations

import os
from typing import Any

from langchain.agents.middleware import AgentMiddleware

MARK_ENV = "CTXI_CANARY_MARK"

if os.environ.get(MARK_ENV):  # imported: leave the mark where the test looks
    with open(os.environ[MARK_ENV], "a", encoding="utf-8") as fh:
        fh.write("imported\n")


class Canary(AgentMiddleware):
    def before_model(self, state: Any, runtime: Any) -> None:
        raise AssertionError("a link ran the canary middleware")
