"""`ctxi replay T --config F` with a bad config file: one line naming the file or the setting and what is
wrong, exit status 2, never a traceback — a binary file picked by mistake, and a setting of the wrong kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli.ctxi import main
from tests.conftest import ROOT

SAMPLE = ROOT / "sample_threads" / "first-look.json"


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(("data", "what"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "a byte that is not UTF-8 (0x89) at byte 0 (line 1)"),
    (b"PK\x03\x04\x14\x00\x00\x00\x08\x00", "a control character (0x03) at byte 2 (line 1)"),
])
def test_a_binary_config_file_is_said_to_be_binary(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   data: bytes, what: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(data)
    assert main(["replay", str(SAMPLE), "--config", str(path)]) == 2
    assert _error_line(capsys) == f"ctxi replay: error: {path}: a binary file, not a text YAML file: {what}"


@pytest.mark.parametrize(("written", "got"), [("-5", "-5"), ("abc", "'abc'"), ("1.5", "1.5"), ("[1, 2]", "[1, 2]")])
def test_a_bad_window_in_a_config_file_says_what_is_allowed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            written: str, got: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(f"preset: stress\nmodel:\n  max_input_tokens: {written}\n", encoding="utf-8")
    assert main(["replay", str(SAMPLE), "--config", str(path)]) == 2
    assert _error_line(capsys) == f"ctxi replay: error: model.max_input_tokens: must be a whole number from 1 to 500,000,000, got {got}"
