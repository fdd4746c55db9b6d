"""A link may never name code: `middleware` (and anything inside it) is refused, from the engine to the page."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from engine.config.links import REFUSED_SETTINGS, refusal
from engine.config.schema import preset
from engine.config.settings import config_from_params, url_params

CANARY = "tests.safety.canary_middleware"
SPEC = f"[{{use: '{CANARY}:Canary'}}]"


@pytest.fixture
def mark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "imported.txt"
    monkeypatch.setenv("CTXI_CANARY_MARK", str(path))
    monkeypatch.delitem(sys.modules, CANARY, raising=False)
    return path


def test_the_middleware_key_is_refused_with_its_reason() -> None:
    assert REFUSED_SETTINGS["middleware"] == "it names Python code, which would be imported and run on the server"
    assert refusal("middleware.0.use") == (
        "middleware.0.use: not taken from a link (it names Python code, which would be imported and run on "
        "the server); set it on the Config page if you want it")


@pytest.mark.parametrize("key", ["middleware", "middleware.0.use", "middleware.0.kwargs"])
def test_a_link_naming_middleware_is_refused_and_nothing_is_imported(key: str, mark: Path) -> None:
    value = SPEC if key == "middleware" else f"{CANARY}:Canary"
    config, errors = config_from_params({"preset": "stress", key: value, "order": "[filesystem, Canary]"})
    assert config == preset("stress") and config.middleware == ()
    assert errors[0] == refusal(key)
    assert errors[1].startswith("order: unknown layer 'Canary'")
    assert not mark.exists() and CANARY not in sys.modules


def test_a_config_with_middleware_never_writes_it_into_a_link(mark: Path) -> None:
    chosen = preset("stress").with_overrides([f"middleware={SPEC}", "order=[filesystem, Canary, summarization]",
                                              "summarization.keep=messages:5"])
    assert chosen.layer_sequence()[:3] == ("filesystem", "Canary", "summarization")
    params = url_params(chosen)
    assert not any(k.startswith("middleware") for k in params)
    assert "Canary" not in params.get("order", "")
    assert params["summarization.keep"] == "messages:5"
    # the link it makes opens the same replay settings without the middleware
    again, errors = config_from_params(params)
    assert errors == [] and again.middleware == () and again.summarization.keep == chosen.summarization.keep
    assert not mark.exists() and CANARY not in sys.modules


def test_the_dashboard_refuses_a_link_naming_middleware(start, mark: Path) -> None:  # noqa: ANN001
    at = start(**{"preset": "stress", "middleware": SPEC})
    assert not at.exception
    assert at.session_state["config"].middleware == ()
    notices = [re.sub(r"\\(.)", r"\1", w.value) for w in at.sidebar.warning]
    assert notices == [f"Ignored a setting from the link: {refusal('middleware')}"]
    assert "middleware" not in dict(at.query_params)
    assert not mark.exists() and CANARY not in sys.modules
