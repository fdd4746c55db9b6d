"""The link allow-list and the listen address: what a URL may set, where the dashboard listens."""

from __future__ import annotations

import argparse
import re
import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel

from engine.cli import ui as ui_command
from engine.config.links import (
    LINK_SETTINGS,
    NOT_SETTINGS,
    REFUSED_SETTINGS,
    VIEW_PARAMS,
    refusal,
    sample_path,
)
from engine.config.schema import EngineConfig, preset
from engine.config.settings import config_from_params, url_params
from engine.config.sizes import AllOf, ContextSize
from ui.config_form import all_fields

ROOT = Path(__file__).resolve().parents[2]


def test_the_allow_list_is_the_sidebar_and_form_settings_minus_paths_and_models() -> None:
    form = {f.key for f in all_fields()}
    assert LINK_SETTINGS <= form
    assert set(REFUSED_SETTINGS) <= form and not set(REFUSED_SETTINGS) & LINK_SETTINGS
    # every form field is classified: on the allow-list, or refused with a reason (an unclassified key
    # is refused from links anyway; this only makes the choice explicit and documented)
    unclassified = form - LINK_SETTINGS - set(REFUSED_SETTINGS)
    assert not unclassified, (f"new config keys {sorted(unclassified)}: add each to engine.config.links.LINK_SETTINGS if a "
                              "link may set it, else to REFUSED_SETTINGS with the reason (and to docs/dashboard.md)")


def config_keys(model: type[BaseModel] = EngineConfig, prefix: str = "") -> set[str]:
    """Every settable key of the config schema, dotted: a section's fields, recursively; a size or
    trigger (ContextSize, AllOf) is one value, set as one key."""
    out: set[str] = set()
    for name, field in model.model_fields.items():
        key = prefix + name
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel) and not issubclass(kind, (ContextSize, AllOf)):
            out |= config_keys(kind, key + ".")
        else:
            out.add(key)
    return out


def test_every_config_key_is_classified_by_engine_links() -> None:
    # not only the Config form's fields: every key of the schema, so a key added to engine/config/schema.py
    # fails here until engine/config/links.py says whether a link may set it
    keys = config_keys()
    assert len(keys) > 60 and "memory.workspace" in keys and "summarization.keep" in keys  # the walk reached the leaves

    def classified(key: str) -> bool:
        return (key in LINK_SETTINGS or key in NOT_SETTINGS or key in VIEW_PARAMS
                or any(key == r or key.startswith(r + ".") for r in REFUSED_SETTINGS))

    assert sorted(k for k in keys if not classified(k)) == [], (
        "add each new config key to engine.config.links.LINK_SETTINGS if a link may set it, else to REFUSED_SETTINGS "
        "with the reason (and to docs/dashboard.md)")
    assert LINK_SETTINGS <= keys  # the allow-list names real keys only


def test_an_unknown_key_and_a_schema_key_are_refused_from_a_link() -> None:
    for key, value in (("version", "2"), ("summarization.output_dir", "/tmp/x"), ("model.base_url", "http://x")):
        config, errors = config_from_params({"preset": "stress", key: value})
        assert config == preset("stress") and errors == [refusal(key)]


def test_docs_list_exactly_the_allow_list_and_the_refused_keys() -> None:
    text = (ROOT / "docs" / "dashboard.md").read_text(encoding="utf-8")
    section = text[text.index("## Links"):text.index("## Safety")]
    table = section[section.index("| from |"):section.index("Never from a link")]
    documented = set(re.findall(r"`([a-z_.]+)`", table))
    assert documented == LINK_SETTINGS
    refused_text = section[section.index("Never from a link"):]
    assert set(REFUSED_SETTINGS) <= set(re.findall(r"`([a-z_.]+)`", refused_text))


@pytest.mark.parametrize("key", sorted(REFUSED_SETTINGS))
def test_refused_settings_never_come_from_a_link_and_never_go_into_one(key: str) -> None:
    value = {"memory.workspace": "/tmp/x", "memory.sources": "[/memories/a.md]", "summarization.history_dir": "/h",
             "summarization.summarizer": "openai:gpt-4o-mini", "summarization.model_name": "gpt-4o",
             "compaction.summarizer": "openai:gpt-4o-mini",
             "cost.prices": "[{prefix: claude, input: 0, output: 0}]",

             "middleware": "[{use: 'os:system', kwargs: {command: 'touch /tmp/ctxi-pwned'}}]"}[key]
    config, errors = config_from_params({"preset": "stress", key: value})
    assert config == preset("stress")
    assert errors == [refusal(key)]
    chosen = preset("stress").with_overrides([f"{key}={value}"])  # set on the Config page
    assert key not in url_params(chosen)


def test_a_refusal_is_one_line_and_clips_a_long_key() -> None:
    text = refusal("k" * 5000)
    assert "\n" not in text and len(text) < 250


def test_sample_path_accepts_only_plain_names_inside_the_folder(tmp_path: Path) -> None:
    (tmp_path / "ok.json").write_text("{}")
    (tmp_path / "dir.json").mkdir()
    assert sample_path(tmp_path, "ok") == tmp_path / "ok.json"
    for name in ("", "../ok", "./ok", "ok/", "/ok", "o\\k", "dir", "missing", "..ok", ".hidden", "x" * 300):
        assert sample_path(tmp_path, name) is None, name


def test_streamlit_run_listens_on_localhost_by_config() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["address"] == "127.0.0.1"


def _ui_command(monkeypatch: pytest.MonkeyPatch, *argv: str) -> list[str]:
    seen: list[list[str]] = []
    # `launch` execs into Streamlit (the test process would become the server): it is replaced here
    monkeypatch.setattr(ui_command, "launch", lambda cmd, env: seen.append(cmd) or 0)
    parser = argparse.ArgumentParser()
    ui_command.add_arguments(parser)
    assert ui_command.run(parser.parse_args(list(argv))) == 0
    return seen[0]


def test_ctxi_ui_listens_on_localhost_unless_asked(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    cmd = _ui_command(monkeypatch)
    assert cmd[cmd.index("--server.address") + 1] == "127.0.0.1"
    assert capsys.readouterr().err == ""
    cmd = _ui_command(monkeypatch, "--host", "0.0.0.0")
    assert cmd[cmd.index("--server.address") + 1] == "0.0.0.0"
    err = capsys.readouterr().err
    assert err.startswith("ctxi ui: warning: listening on 0.0.0.0: anyone who can reach this address")
    assert "SECURITY.md" in err and err.count("\n") == 1
