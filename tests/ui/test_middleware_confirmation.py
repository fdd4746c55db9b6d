"""The Config page applies a config that names middleware only after the user confirmed its exact list.

#38.1: a YAML uploaded or typed on the Config page ran `os:system` with its kwargs. Now: what is no
middleware class is refused before anything is imported; a real class is listed (with the file its
module would be imported from) and imported only after a click in this session; a server listening
beyond this machine refuses it unless it was started with `ctxi ui --host … --allow-middleware`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from streamlit import config as st_config

from ui.session import NETWORK_CODE_ENV

ROOT = Path(__file__).resolve().parents[2]
FX = "tests.safety.side_effect_module"
FX_FILE = ROOT / "tests" / "safety" / "side_effect_module.py"


def plain(elements) -> list[str]:  # noqa: ANN001
    return [re.sub(r"\\(.)", r"\1", e.value) for e in elements]


@pytest.fixture
def mark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the side-effect module writes when it is imported; it starts not imported."""
    path = tmp_path / "imported.txt"
    monkeypatch.setenv("CTXI_SIDE_EFFECT_MARK", str(path))
    monkeypatch.delitem(sys.modules, FX, raising=False)
    return path


def upload(at, name: str, text: str):  # noqa: ANN001, ANN201
    return at.file_uploader(key="yaml_upload").upload(name, text.encode(), "application/yaml").run()


@pytest.mark.parametrize("entry,message", [
    ('{use: "os:system", kwargs: {command: "touch TARGET"}}',
     "middleware.0.use: os:system is refused: 'os' is Python's standard library, which defines no AgentMiddleware; "
     "nothing was imported"),
    ('{use: "builtins:open", kwargs: {file: "TARGET", mode: w}}',
     "middleware.0.use: builtins:open is refused: 'builtins' is Python's standard library, which defines no "
     "AgentMiddleware; nothing was imported"),
    ('{use: "subprocess:Popen", kwargs: {args: [touch, "TARGET"]}}',
     "middleware.0.use: subprocess:Popen is refused: 'subprocess' is Python's standard library, which defines no "
     "AgentMiddleware; nothing was imported"),
    (f'{{use: "{FX}:make_middleware", kwargs: {{note: "TARGET"}}}}',
     f"middleware.0.use: {FX}:make_middleware is refused: make_middleware is a function, not a class deriving from "
     f"AgentMiddleware; {FX} ({FX_FILE}) was not imported"),
    (f'{{use: "{FX}:Plain"}}',
     f"middleware.0.use: {FX}:Plain is refused: Plain is a class whose bases lead elsewhere, not a class deriving "
     f"from AgentMiddleware; {FX} ({FX_FILE}) was not imported"),
])
def test_an_uploaded_config_naming_no_middleware_class_is_refused_without_effect(
        start, tmp_path: Path, mark: Path, entry: str, message: str) -> None:  # noqa: ANN001
    target = tmp_path / "pwned"
    at = start("pages/config.py", preset="langchain", tab="YAML")
    before = at.session_state["config"]
    upload(at, "sent.yaml", f"preset: langchain\nmiddleware: [{entry.replace('TARGET', str(target))}]\n")
    assert not at.exception
    assert plain(at.error) == [f"sent.yaml not applied: {message}"]
    assert at.session_state["config"] == before
    assert not _has(at, "middleware_confirm")
    assert not target.exists() and not mark.exists() and FX not in sys.modules


def listed(at) -> list[str]:  # noqa: ANN001
    """The confirmation's list: one Markdown bullet per class."""
    return [line[2:] for m in plain(at.markdown) for line in m.splitlines() if line.startswith("- ")]


def _has(at, key: str) -> bool:  # noqa: ANN001
    return any(getattr(b, "key", None) == key for b in at.button)


def test_a_real_middleware_waits_for_the_confirmation_listing_its_file(start, mark: Path) -> None:  # noqa: ANN001
    at = start("pages/config.py", preset="langchain", tab="YAML")
    before = at.session_state["config"]
    upload(at, "mine.yaml", f"preset: langchain\nmiddleware:\n  - use: {FX}:RealMiddleware\n    kwargs: {{}}\n")
    assert not at.exception and not at.error
    assert at.session_state["config"] == before and not mark.exists() and FX not in sys.modules
    assert listed(at) == [f"{FX}:RealMiddleware (imports {FX} from {FX_FILE})"]
    assert any(w.startswith("mine.yaml names middleware: Python code this server would import and run")
               for w in (re.sub(r"\*\*", "", t) for t in plain(at.warning)))
    at.button(key="middleware_cancel").click().run()
    assert not _has(at, "middleware_confirm") and at.session_state["config"] == before and not mark.exists()

    upload(at, "mine-again.yaml", f"preset: langchain\nmiddleware:\n  - use: {FX}:RealMiddleware\n")
    at.button(key="middleware_confirm").click().run()
    assert not at.exception and not at.error
    assert [m.use for m in at.session_state["config"].middleware] == [f"{FX}:RealMiddleware"]
    assert mark.read_text() == "imported\n"  # allowed, so imported: once


def test_a_changed_list_asks_again(start, mark: Path) -> None:  # noqa: ANN001
    at = start("pages/config.py", preset="langchain", tab="YAML")
    upload(at, "one.yaml", f"preset: langchain\nmiddleware: [{{use: {FX}:RealMiddleware}}]\n")
    at.button(key="middleware_confirm").click().run()
    applied = at.session_state["config"]
    # the same class with other kwargs, and a second class: neither was confirmed
    upload(at, "two.yaml", f"preset: langchain\nmiddleware: [{{use: {FX}:RealMiddleware}}, "
                           "{use: 'langchain.agents.middleware:ContextEditingMiddleware'}]\n")
    assert at.session_state["config"] == applied and _has(at, "middleware_confirm")
    assert listed(at) == [f"{FX}:RealMiddleware ({FX} is already imported)",
                          "langchain.agents.middleware:ContextEditingMiddleware (langchain.agents.middleware is "
                          "already imported)"]


def test_a_server_open_to_the_network_refuses_middleware(start, mark: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.delenv(NETWORK_CODE_ENV, raising=False)
    at = start("pages/config.py", preset="langchain", tab="YAML")
    old = st_config.get_option("server.address")
    st_config.set_option("server.address", "0.0.0.0")
    try:
        upload(at, "mine.yaml", f"preset: langchain\nmiddleware: [{{use: {FX}:RealMiddleware}}]\n")
        assert plain(at.error) == [
            "mine.yaml not applied: middleware: this dashboard listens on 0.0.0.0, so a config that names middleware "
            "(Python code) is not applied here; start it with `ctxi ui --host ADDRESS --allow-middleware` to allow it "
            "after a confirmation (SECURITY.md)"]
        assert not _has(at, "middleware_confirm") and not mark.exists()
        monkeypatch.setenv(NETWORK_CODE_ENV, "1")  # what `ctxi ui --host 0.0.0.0 --allow-middleware` sets
        upload(at, "mine-2.yaml", f"preset: langchain\nmiddleware: [{{use: {FX}:RealMiddleware}}]\n")
        assert not at.error and _has(at, "middleware_confirm") and not mark.exists()
    finally:
        st_config.set_option("server.address", old)


def test_a_sweep_on_the_dashboard_does_not_vary_middleware(start, mark: Path) -> None:  # noqa: ANN001
    at = start("pages/evals.py", tab="Sweep")
    at.text_area(key="ev_grid").set_value(f"middleware=[{{use: '{FX}:RealMiddleware'}}];[]").run()
    at.radio(key="ev_executor").set_value("serial").run()
    at.button(key="ev_sweep_run").click().run()
    assert not at.exception
    assert plain(at.error) == ["grid: a sweep on the dashboard does not vary middleware (Python code): apply each list "
                               "on the Config page, which asks first, or sweep it with ctxi sweep --allow-middleware"]
    assert not mark.exists()
