"""Keys never leak: provider errors are redacted everywhere, and real models are called only when allowed.

A local fake provider (tests/fake_provider.py) answers every call with a 401 that quotes the key it
was sent, as a careless provider or proxy could; the CLI, the pages and the saved files must not
show it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import HumanMessage

import engine.cli.ctxi as cli
from engine.base.errors import ModelCallError
from engine.base.redaction import REDACTED, describe_error, redact
from engine.summarizers.llm import LLMSummarizer
from tests.fake_provider import FakeProvider

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_threads" / "memory-two-threads-1.json"
OPENAI_KEY = "sk-proj-TESTkey0123456789abcdefghijklmnopQRST"
ANTHROPIC_KEY = "sk-ant-api03-TESTkey0123456789abcdefghijklmn"
CUSTOM_TOKEN = "Zq7hunter2hunter2hunter2"  # not key-shaped: only its env var name says it is a secret
KEYS = (OPENAI_KEY, ANTHROPIC_KEY, CUSTOM_TOKEN)


# -- the redaction rules ------------------------------------------------------------------------
@pytest.mark.parametrize("text,expected", [
    (f"Error code: 401 - Incorrect API key provided: {OPENAI_KEY}", f"Error code: 401 - Incorrect API key provided: {REDACTED}"),
    (f"headers={{'Authorization': 'Bearer {CUSTOM_TOKEN}', 'x-api-key': 'abc'}}",
     f"headers={{'Authorization': 'Bearer {REDACTED}', 'x-api-key': '{REDACTED}'}}"),
    ("authorization: Basic dXNlcjpwYXNzd29yZA==", f"authorization: Basic {REDACTED}"),
    ("ChatOpenAI(api_key='whatever-it-is', model='gpt')", f"ChatOpenAI(api_key='{REDACTED}', model='gpt')"),
    (f"key {ANTHROPIC_KEY}.", f"key {REDACTED}."),
    (f"token in text {CUSTOM_TOKEN} here", f"token in text {REDACTED} here"),
    ("AIzaSyA1234567890abcdefghijklmnopqrstuv and ghp_abcdefghij0123456789ABCD", f"{REDACTED} and {REDACTED}"),
    # ordinary words and paths stay as they are
    ("the sk-learn-experiment-results.json skeleton; API key provided by the user", None),
    ("tokens: 1,234 (token counter o200k_base)", None),
])
def test_redact(text: str, expected: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", CUSTOM_TOKEN)
    assert redact(text) == (text if expected is None else expected)


def test_an_exception_is_one_redacted_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "plainvalue-no-shape-1234")
    line = describe_error(RuntimeError("bad\nkey plainvalue-no-shape-1234\n  at line 3"))
    assert line == f"RuntimeError: bad key {REDACTED} at line 3"


class _FailingChat(GenericFakeChatModel):
    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        raise PermissionError(f"401 Unauthorized: Authorization: Bearer {OPENAI_KEY}\nrequest id req_1")


def test_a_failing_summarizer_model_raises_one_redacted_line() -> None:
    summarizer = LLMSummarizer("openai:gpt-4o-mini", model=_FailingChat(messages=iter(())))
    with pytest.raises(ModelCallError) as info:
        summarizer([HumanMessage("hi")], prompt_text="summarize")
    text = str(info.value)
    assert text == ("summarization.summarizer: openai:gpt-4o-mini failed to write a summary (PermissionError: "
                    f"401 Unauthorized: Authorization: Bearer {REDACTED} request id req_1)")
    assert info.value.__suppress_context__  # the original exception (with the key) is not chained


# -- against a fake provider that echoes the key -----------------------------------------------
@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with FakeProvider("echo") as fake:
        yield fake


def provider_env(provider: FakeProvider, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC", "CTXI_"))}
    return {**env, "OPENAI_API_KEY": OPENAI_KEY, "ANTHROPIC_API_KEY": ANTHROPIC_KEY, "MY_SERVICE_TOKEN": CUSTOM_TOKEN,
            "OPENAI_BASE_URL": provider.url, "CTXI_WORKSPACE": str(tmp_path / "workspace"), "PYTHONPATH": str(ROOT)}


def ctxi(env: dict[str, str], *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine.cli", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def assert_no_key(*texts: str) -> None:
    for text in texts:
        for key in KEYS:
            assert key not in text


def files_text(folder: Path) -> str:
    return "".join(p.read_text(encoding="utf-8", errors="replace") for p in folder.rglob("*") if p.is_file())


def test_cli_replay_with_a_failing_summarizer_prints_one_line_without_the_key(provider: FakeProvider,
                                                                             tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    proc = ctxi(provider_env(provider, tmp_path), "replay", str(SAMPLE), "--set", "summarization.trigger=messages:4",
                "--set", "summarization.keep=messages:2",
                "--set", "summarization.summarizer=openai:gpt-4o-mini", "--out", str(report), cwd=tmp_path)
    assert provider.requests, "the summarizer never reached the fake provider: the test would prove nothing"
    assert provider.requests[0]["headers"]["authorization"] == f"Bearer {OPENAI_KEY}"
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("ctxi replay: error: summarization.summarizer: openai:gpt-4o-mini failed to write "
                                  "a summary (")
    assert "AuthenticationError: Error code: 401" in proc.stderr
    assert f"Incorrect API key provided: Bearer {REDACTED}" in proc.stderr
    assert_no_key(proc.stdout, proc.stderr)
    assert not report.exists()


def test_cli_live_run_with_a_rejected_key_saves_no_key(provider: FakeProvider, tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    env = provider_env(provider, tmp_path)
    proc = ctxi(env, "run", "openai:gpt-4o-mini", "--task", "look around", "--out", str(out), "--save", "--quiet",
                cwd=tmp_path)
    assert provider.requests
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and f"Bearer {REDACTED}" in proc.stderr
    assert_no_key(proc.stdout, proc.stderr, out.read_text(encoding="utf-8"), files_text(tmp_path / "workspace"))


def test_an_unexpected_error_is_one_redacted_line(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)

    def boom(args: Any) -> int:
        raise RuntimeError(f"proxy said: x-api-key: {OPENAI_KEY}\nsecond line")

    parser = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda *argv: _with_run(parser(*argv), boom))
    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    assert cli.main(["inspect", "x.json"]) == 1
    err = capsys.readouterr().err
    assert err == (f"ctxi inspect: internal error: RuntimeError: proxy said: x-api-key: {REDACTED} second line "
                   "(set CTXI_DEBUG=1 for the traceback)\n")
    monkeypatch.setenv(cli.DEBUG_ENV, "1")
    assert cli.main(["inspect", "x.json"]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and OPENAI_KEY not in err


def _with_run(parser: Any, fn: Any) -> Any:
    for action in parser._subparsers._group_actions:
        for sub in action.choices.values():
            sub.set_defaults(_run=fn)
    return parser


# -- the dashboard ------------------------------------------------------------------------------
def page_text(at: Any) -> str:
    """Every element's content on the page and in the sidebar (their protobuf text)."""
    def walk(node: Any) -> Iterator[Any]:
        yield node
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            for child in children.values():
                yield from walk(child)
    return "\n".join(str(n.proto) for n in walk(at._tree) if getattr(n, "proto", None) is not None)


@pytest.fixture
def provider_session(provider: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    for key, value in provider_env(provider, tmp_path).items():
        if key.startswith(("OPENAI", "ANTHROPIC", "MY_", "CTXI_WORKSPACE")):
            monkeypatch.setenv(key, value)
    monkeypatch.setenv("CTXI_SAMPLES_DIR", str(ROOT / "sample_threads"))
    return provider


def test_a_summarizer_model_is_called_only_after_the_user_allows_it(start, provider_session: FakeProvider) -> None:  # noqa: ANN001
    at = start("pages/config.py", thread="sample:memory-two-threads-1")
    text = at.session_state["config"].with_overrides(["summarization.summarizer=openai:gpt-4o-mini",
                                                      "summarization.trigger=messages:4",
                                                      "summarization.keep=messages:2"]).to_yaml()
    next(t for t in at.text_area if str(t.key).startswith("yaml_")).set_value(text)
    at.button(key="yaml_apply").click().run()
    assert at.session_state["config"].summarization.summarizer == "openai:gpt-4o-mini"
    at.switch_page("pages/timeline.py").run()
    assert not at.exception
    assert provider_session.requests == []  # configured is not allowed
    assert "is not called until you allow real models" in page_text(at)
    assert at.metric[5].value == "7"  # the summaries were written offline instead (as `ctxi replay` counts them)
    at.toggle(key="sb_allow_models").set_value(True).run()
    assert not at.exception
    assert provider_session.requests  # now it is called, with the key from the environment
    errors = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]
    assert errors[0].startswith("The engine failed on this thread with these settings: summarization.summarizer: "
                                "openai:gpt-4o-mini failed to write a summary (")
    assert f"Bearer {REDACTED}" in errors[0]
    assert_no_key(page_text(at))


def test_a_real_model_run_needs_the_user_to_allow_it(start, provider_session: FakeProvider, tmp_path: Path) -> None:  # noqa: ANN001
    at = start("pages/threads.py")
    at.radio(key="run_kind").set_value("Real model").run()
    at.text_input(key="run_model").set_value("openai:gpt-4o-mini").run()
    at.text_area(key="run_task").set_value("look around").run()
    at.button(key="run_start").click().run()
    assert provider_session.requests == []
    assert [e.value for e in at.error] == ["A real model is called with the API key in the server's environment: "
                                           "turn on \"Allow real models\" in the sidebar first."]
    at.toggle(key="sb_allow_models").set_value(True).run()
    at.button(key="run_start").click().run()
    handle = at.session_state["run_handle"]
    assert handle.wait(120)
    at.run()
    assert provider_session.requests
    assert not at.exception
    # the 401 is a failed run (issue 11, nothing lost): shown as failed, saved as partial, not opened
    errors = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]
    assert errors and errors[-1].startswith("The run failed after 0 steps: ") and not at.success
    assert "saved as a partial run" in errors[-1] and errors[-1].endswith("the open thread is unchanged.")
    assert_no_key(page_text(at), files_text(tmp_path / "workspace") if (tmp_path / "workspace").exists() else "")


def test_every_model_summarizer_is_gated_not_only_summarization() -> None:
    from engine.config.schema import preset
    from engine.summarizers.choice import model_summarizers, with_offline_summaries

    config = preset("stress").with_overrides(["summarization.summarizer=openai:gpt-4o-mini",
                                              "compaction.summarizer=anthropic:claude-haiku"])
    assert model_summarizers(config) == {"compaction.summarizer": "anthropic:claude-haiku",
                                         "summarization.summarizer": "openai:gpt-4o-mini"}
    offline = with_offline_summaries(config)
    assert model_summarizers(offline) == {}
    assert offline.diff(config).keys() == {"compaction.summarizer", "summarization.summarizer"}
    assert with_offline_summaries(preset("stress")) == preset("stress") and model_summarizers(preset("stress")) == {}


# -- what a model writes (#38.5): the keys the process holds, whole or in pieces -----------------------
def assert_no_fragment(text: str, *keys: str) -> None:
    """No run of FRAGMENT_CHARS characters of any key in `text`."""
    from engine.base.redaction import FRAGMENT_CHARS

    for key in keys or KEYS:
        for i in range(len(key) - FRAGMENT_CHARS + 1):
            assert key[i:i + FRAGMENT_CHARS] not in text, key[i:i + FRAGMENT_CHARS]


@pytest.mark.parametrize("text,expected", [
    (f"error near xx{CUSTOM_TOKEN[:15]}yy end", f"error near xx{REDACTED}yy end"),  # cut short, glued to text
    (f"key was {OPENAI_KEY[8:30]}... truncated", f"key was {REDACTED}... truncated"),
    (f"{OPENAI_KEY[:12]} and {OPENAI_KEY[-12:]}", f"{REDACTED} and {REDACTED}"),
    (f"only {CUSTOM_TOKEN[:11]} of it", None),  # 11 characters: not a fragment
    (f"twice {CUSTOM_TOKEN[2:20]}-{CUSTOM_TOKEN[2:20]}", f"twice {REDACTED}-{REDACTED}"),
])
def test_redact_takes_out_fragments_of_the_held_keys(text: str, expected: str | None,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", CUSTOM_TOKEN)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    assert redact(text) == (text if expected is None else expected)


@pytest.mark.parametrize("joiner", ["\u200b", "\u200d", "\u2060", "\u00ad", "\ufeff", "\u200b\u200c"])
def test_a_key_cut_by_invisible_characters_is_still_redacted(joiner: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", CUSTOM_TOKEN)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    for key in (CUSTOM_TOKEN, OPENAI_KEY, CUSTOM_TOKEN[3:18]):
        spread = joiner.join(key[i:i + 3] for i in range(0, len(key), 3))
        out = redact(f"the key: {spread} (end)")
        assert out == f"the key: {REDACTED} (end)", (key, out)
    # a key shape with no env var behind it (rule 3), and text that only has invisible characters
    other = "sk-ant-api03-" + "Q" * 30
    assert redact(f"x {joiner.join(other)} y") == f"x {REDACTED} y"
    plain = f"zero{joiner}width{joiner}text and {CUSTOM_TOKEN[:11]}"
    assert redact(plain) == plain


def test_every_fragment_of_a_key_is_found_wherever_it_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    for length in range(12, len(OPENAI_KEY) + 1):
        for start in range(len(OPENAI_KEY) - length + 1):
            piece = OPENAI_KEY[start:start + length]
            assert redact(f"<{piece}>") == f"<{REDACTED}>", piece


def test_model_output_redaction_covers_every_chat_model_call_inside_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from langchain_core.messages import AIMessage

    from engine.base.redaction import model_output_redaction

    monkeypatch.setenv("MY_SERVICE_TOKEN", CUSTOM_TOKEN)

    def model() -> GenericFakeChatModel:
        return GenericFakeChatModel(messages=iter([AIMessage(f"it is {CUSTOM_TOKEN}", tool_calls=[
            {"name": "ls", "args": {"path": f"/x/{CUSTOM_TOKEN[1:14]}"}, "id": "c1"}])]))

    with model_output_redaction():
        reply = model().invoke("hi")
        # in a thread of its own: a browser test on this worker may have left an event loop running in
        # this one (Playwright's sync API), where asyncio.run refuses to start
        # (the redaction's context goes along: copy_context)
        import contextvars
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            later = pool.submit(contextvars.copy_context().run, lambda: asyncio.run(model().ainvoke("hi"))).result()
    assert (reply.content, reply.tool_calls[0]["args"]) == (f"it is {REDACTED}", {"path": f"/x/{REDACTED}"})
    assert later.content == f"it is {REDACTED}"
    assert model().invoke("hi").content == f"it is {CUSTOM_TOKEN}"  # only inside a replay or a live run


@pytest.fixture
def leaking() -> Iterator[FakeProvider]:
    with FakeProvider("leak") as fake:
        yield fake


def test_a_live_run_against_an_endpoint_that_echoes_the_key_saves_none_of_it(leaking: FakeProvider,
                                                                            tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    proc = ctxi(provider_env(leaking, tmp_path), "run", "openai:gpt-4o-mini", "--task", "look around", "--out",
                str(out), "--save", "--quiet", "--steps", "3", cwd=tmp_path)
    assert len(leaking.requests) >= 2, proc.stderr  # the tool call, then the answer that quotes the key
    assert proc.returncode == 0, proc.stderr
    saved = out.read_text(encoding="utf-8")
    assert f"Your key is {REDACTED}; again: id={REDACTED}xyz" in saved
    assert f"/project/{REDACTED}" in saved and f"Listing {REDACTED}" in saved
    texts = (saved, files_text(tmp_path / "workspace"), proc.stdout, proc.stderr)
    assert "threads" in {p.name for p in (tmp_path / "workspace").iterdir()}
    for text in texts:
        assert_no_fragment(text)


def test_a_replay_with_a_summarizer_that_echoes_the_key_reports_none_of_it(leaking: FakeProvider,
                                                                          tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    argv = ["replay", str(SAMPLE), "--set", "summarization.trigger=messages:4", "--set", "summarization.keep=messages:2",
            "--set", "summarization.summarizer=openai:gpt-4o-mini"]
    proc = ctxi(provider_env(leaking, tmp_path), *argv, "--out", str(report), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr and leaking.requests
    shown = ctxi(provider_env(leaking, tmp_path), *argv, "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    for text in (report.read_text(encoding="utf-8"), proc.stdout, proc.stderr, shown.stdout, shown.stderr):
        assert_no_fragment(text)
    assert f"Your key is {REDACTED}; again: id={REDACTED}xyz" in shown.stdout


def test_a_failing_compaction_summarizer_is_reported_under_its_own_key() -> None:
    from engine.base.errors import ConfigError
    from engine.config.schema import preset
    from engine.formats import load_thread
    from engine.run.replay import replay

    config = preset("claude-code").with_overrides(["compaction.summarizer=nosuchprovider:model",
                                                   "compaction.trigger=tokens:2000"])
    with pytest.raises(ConfigError) as err:
        replay(load_thread(ROOT / "sample_threads" / "long-refactor.json"), config)
    assert str(err.value).startswith("compaction.summarizer: cannot load 'nosuchprovider:model' (ValueError): ")
    summarizer = LLMSummarizer("openai:gpt-4o-mini", model=_FailingChat(messages=iter(())), key="compaction.summarizer")
    with pytest.raises(ModelCallError) as failed:
        summarizer([HumanMessage("hi")], prompt_text="summarize")
    assert str(failed.value).startswith("compaction.summarizer: openai:gpt-4o-mini failed to write a summary (")


@pytest.mark.parametrize(("name", "secret"), [
    ("OPENAI_API_KEY", True), ("OPENAI_APIKEY", True), ("KEY", True), ("AWS_SECRET_ACCESS_KEY", True),
    ("GITHUB_TOKEN", True), ("ANTHROPIC_AUTH_TOKEN", True), ("DB_PASSWORD", True), ("CLIENT_SECRET", True),
    ("GOOGLE_CREDENTIALS", True),
    # a word inside another word, or a name of a place, is not a secret's name
    ("TIKTOKEN_CACHE_DIR", False), ("TOKENIZERS_PARALLELISM", False), ("RAY_AUTH_TOKEN_PATH", False),
    ("PASSWORD_FILE", False), ("AWS_ACCESS_KEY_ID", False), ("MAX_TOKENS", False), ("HOME", False),
])
def test_which_environment_names_hold_secrets(name: str, secret: bool) -> None:
    from engine.base.redaction import is_secret_name

    assert is_secret_name(name) is secret


def test_a_path_under_tiktokens_cache_folder_is_not_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    """tiktoken's own cache variable held a path; every error line naming a file under it read
    '[redacted]est_errors…/missing.json' (TOKEN matched inside TIKTOKEN)."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "/tmp/pytest-of-root/pytest-1/cache")
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-9f8e7d6c5b4a39281706")
    text = "/tmp/pytest-of-root/pytest-1/cache/x.json: file not found; sent tok-9f8e7d6c5b4a39281706"
    assert redact(text) == f"/tmp/pytest-of-root/pytest-1/cache/x.json: file not found; sent {REDACTED}"
