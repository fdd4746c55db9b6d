"""The summarizers: the offline extractive one, an LLM one through a fake chat model, and the factory."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime

from engine.base.errors import ConfigError
from engine.layers.base import LayerContext
from engine.layers.summarization import SummarizationLayer
from engine.summarizers.choice import CallableSummarizer, make_summarizer
from engine.summarizers.llm import LLMSummarizer
from engine.summarizers.offline import OfflineSummarizer
from engine.summarizers.protocol import Summarizer
from engine.summarizers.reading import prior_sections
from engine.tokens.counters import ApproximateCounter, get_counter


def session() -> list[BaseMessage]:
    todos = [{"content": "Fix the date parser", "status": "completed"},
             {"content": "Add a regression test", "status": "in_progress"},
             {"content": "Update the changelog", "status": "pending"}]
    return [
        HumanMessage("Fix the failing date parsing tests in utils/dates.py.\nThey broke after the upgrade.", id="h0"),
        AIMessage("Let me look at the parser.", id="a0", tool_calls=[
            {"name": "read_file", "args": {"file_path": "/repo/utils/dates.py"}, "id": "c0"},
            {"name": "grep", "args": {"pattern": "parse_date"}, "id": "c1"}]),
        ToolMessage("def parse_date(s):\n    return datetime.strptime(s, FMT)", tool_call_id="c0", name="read_file", id="t0"),
        ToolMessage("utils/dates.py:3: def parse_date", tool_call_id="c1", name="grep", id="t1"),
        AIMessage("The root cause is the removed %Z directive. I decided to normalize offsets first.", id="a1",
                  tool_calls=[{"name": "edit_file", "args": {"file_path": "/repo/utils/dates.py", "old_string": "a",
                                                             "new_string": "b"}, "id": "c2"},
                              {"name": "execute", "args": {"command": "pytest tests/test_dates.py"}, "id": "c3"}]),
        ToolMessage("Edited /repo/utils/dates.py", tool_call_id="c2", name="edit_file", id="t2"),
        ToolMessage("Error: 1 failed, 11 passed\nAssertionError in test_iso", tool_call_id="c3", name="execute",
                    id="t3", status="error"),
        AIMessage("Tracking the plan.", id="a2", tool_calls=[
            {"name": "write_todos", "args": {"todos": todos}, "id": "c4"},
            {"name": "write_file", "args": {"file_path": "/repo/tests/test_iso.py", "content": "..."}, "id": "c5"}]),
        ToolMessage("Updated todo list", tool_call_id="c4", name="write_todos", id="t4"),
        ToolMessage("Wrote /repo/tests/test_iso.py", tool_call_id="c5", name="write_file", id="t5"),
        HumanMessage("Also keep Python 3.9 support.", id="h1"),
        AIMessage("Next I will run the full suite, then update the changelog.", id="a3"),
    ]


EXPECTED = """## SESSION INTENT
- Fix the failing date parsing tests in utils/dates.py. They broke after the upgrade.

## SUMMARY
- The root cause is the removed %Z directive.
- I decided to normalize offsets first.
- Error from execute: Error: 1 failed, 11 passed
- User asked: Also keep Python 3.9 support.
- Next I will run the full suite, then update the changelog.

## ARTIFACTS
- `/repo/utils/dates.py` — read, edited
- `/repo/tests/test_iso.py` — written

## NEXT STEPS
- [ ] Add a regression test (in_progress)
- [ ] Update the changelog (pending)
- [ ] Next I will run the full suite, then update the changelog."""


def test_offline_summary_fills_the_four_sections() -> None:
    counter = get_counter("approximate")
    summarizer = OfflineSummarizer(counter)
    # input tokens = the messages read + the prompt's instructions (here 400 chars = 100 tokens)
    read = counter(session())
    assert summarizer(session(), prompt_text="p" * 400) == EXPECTED
    assert (summarizer.calls, summarizer.input_tokens) == (1, read + 100)
    assert summarizer(session(), prompt_text="p" * 400) == EXPECTED  # same input, same text
    assert (summarizer.calls, summarizer.input_tokens) == (2, 2 * (read + 100))
    framed = OfflineSummarizer(counter)
    framed(session(), prompt_text="head " * 8 + '<message type="human">x</message>' + " tail" * 4)
    assert framed.input_tokens == read + counter.count_text("head " * 8) + counter.count_text(" tail" * 4)


def test_offline_summary_with_nothing_to_report_says_none() -> None:
    text = OfflineSummarizer().summarize([AIMessage("", id="a", tool_calls=[{"name": "ls", "args": {}, "id": "c"}])])
    assert text == "## SESSION INTENT\nNone\n\n## SUMMARY\nNone\n\n## ARTIFACTS\nNone\n\n## NEXT STEPS\nNone"


def test_offline_summary_of_a_summary_carries_sections_forward() -> None:
    first = OfflineSummarizer().summarize(session())
    previous = HumanMessage(f"Here is a summary of the conversation to date:\n\n{first}",
                            additional_kwargs={"lc_source": "summarization"}, id="summary-1-x")
    later = [previous, AIMessage("Verified the fix works on 3.9.", id="a9", tool_calls=[
        {"name": "read_file", "args": {"file_path": "/repo/setup.cfg"}, "id": "c9"}])]
    second = OfflineSummarizer().summarize(later)
    sections = prior_sections(second)
    assert sections["SESSION INTENT"] == ["- Fix the failing date parsing tests in utils/dates.py. They broke after the upgrade."]
    assert sections["SUMMARY"][-1] == "- Verified the fix works on 3.9."
    assert "- The root cause is the removed %Z directive." in sections["SUMMARY"]
    assert sections["ARTIFACTS"] == ["- `/repo/utils/dates.py` — read, edited", "- `/repo/tests/test_iso.py` — written",
                                     "- `/repo/setup.cfg` — read"]
    assert sections["NEXT STEPS"][:2] == ["- [ ] Add a regression test (in_progress)", "- [ ] Update the changelog (pending)"]


def test_offline_summary_is_bounded() -> None:
    messages: list[BaseMessage] = [HumanMessage("Audit everything " * 200, id="h")]
    for k in range(300):
        messages.append(AIMessage(f"Found issue {k} because the cache key {k} was stale. " * 3, id=f"a{k}",
                                  tool_calls=[{"name": "read_file", "args": {"file_path": f"/src/file_{k}.py"}, "id": f"c{k}"}]))
    text = OfflineSummarizer(max_tokens=1500).summarize(messages)
    assert len(text) <= 6000
    assert ApproximateCounter().count_text(text) <= 1500
    assert text.startswith("## SESSION INTENT\n- Audit everything")
    assert "- `/src/file_0.py` — read" in text and "- … and 261 more" in text
    assert "Found issue 299" in text and "Found issue 0 " not in text  # the newest facts are kept


class BindableFake(GenericFakeChatModel):
    prompts: list[Any] = []

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        self.prompts.append((input, config))
        return super().invoke(input, config, **kwargs)


def test_llm_summarizer_with_an_injected_fake_model() -> None:
    model = BindableFake(messages=iter([AIMessage("  ## SESSION INTENT\n- model summary  ")]), prompts=[])
    summarizer = LLMSummarizer("fake:model", model=model, counter=get_counter("approximate"))
    assert summarizer.name == "fake:model"
    assert summarizer([HumanMessage("hi")], prompt_text="x" * 40) == "## SESSION INTENT\n- model summary"
    assert (summarizer.calls, summarizer.input_tokens) == (1, 10)
    [(prompt, config)] = model.prompts
    assert prompt == "x" * 40
    assert config["metadata"]["lc_source"] == "summarization"


def test_layer_sends_its_prompt_to_the_llm_summarizer() -> None:
    model = BindableFake(messages=iter([AIMessage("LLM SUMMARY")]), prompts=[])
    layer = SummarizationLayer(LayerContext(counter=ApproximateCounter(), summarizer=model),
                               trigger=("messages", 3), keep=("messages", 1), summary_prompt="Summarize:\n{messages}\n")
    msgs = [HumanMessage("one", id="1"), AIMessage("two", id="2"), HumanMessage("three", id="3")]
    result = layer.before_model({"messages": msgs}, Runtime())
    assert result["messages"][1].content == "Here is a summary of the conversation to date:\n\nLLM SUMMARY"  # type: ignore[index]
    assert model.prompts[0][0] == ('Summarize:\n<message type="human">one</message>\n'
                                   '<message type="ai">two</message>')
    assert layer.summarizer.calls == 1


def test_init_chat_model_failures_are_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match=r"summarization.summarizer: cannot load 'nosuchprovider:model' \(ValueError\)"):
        LLMSummarizer("nosuchprovider:model")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)
    with pytest.raises(ConfigError, match="cannot load 'openai:gpt-4o-mini'.*OPENAI_API_KEY"):
        make_summarizer("openai:gpt-4o-mini")
    with pytest.raises(ConfigError, match="langchain-ollama"):
        make_summarizer("ollama:llama3")


def test_make_summarizer_dispatch() -> None:
    counter = get_counter("approximate")
    assert isinstance(make_summarizer("offline", counter), OfflineSummarizer)
    assert isinstance(make_summarizer(None, counter), OfflineSummarizer)
    fn = make_summarizer(lambda msgs: " text ", counter)
    assert isinstance(fn, CallableSummarizer) and fn([HumanMessage("abcd")]) == "text"
    offline = OfflineSummarizer()
    assert make_summarizer(offline) is offline and isinstance(offline, Summarizer)
    assert isinstance(make_summarizer(GenericFakeChatModel(messages=iter(()))), LLMSummarizer)
    with pytest.raises(ConfigError, match="'offline' or 'provider:model'"):
        make_summarizer("gpt-4o")
    with pytest.raises(TypeError, match="must return a str, got NoneType"):
        make_summarizer(lambda msgs: None)([HumanMessage("x")])


def test_injected_user_turns_are_not_requests() -> None:
    messages: list[BaseMessage] = [
        HumanMessage("<command-name>/clear</command-name>", id="h0"),
        HumanMessage("Port the sync job to Oban", id="h1"),
        AIMessage("Let me implement the job. The queue was renamed because of a clash.", id="a0"),
        HumanMessage("<system-reminder>PostToolUse hook: [COMPILE ERROR] undefined function run/1</system-reminder>", id="h2"),
        HumanMessage("<system-reminder>All good</system-reminder>", id="h3"),
    ]
    sections = prior_sections(OfflineSummarizer().summarize(messages))
    assert sections["SESSION INTENT"] == ["- Port the sync job to Oban"]
    assert sections["SUMMARY"] == ["- The queue was renamed because of a clash.",
                                   "- Reported: PostToolUse hook: [COMPILE ERROR] undefined function run/1"]


class _RaisingFake(GenericFakeChatModel):
    error: Any = None
    attempts: int = 0

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        self.attempts += 1
        raise self.error


def test_summary_calls_retry_as_langchain_does() -> None:
    import langchain_core.exceptions as lc_errors
    from langchain.agents.middleware._retry import default_retry_on

    from engine.base.errors import ModelCallError
    from engine.summarizers.llm import retryable

    errors: list[BaseException] = [RuntimeError("x"), PermissionError("401"), KeyboardInterrupt()]
    errors += [getattr(lc_errors, n)("x") for n in dir(lc_errors)
               if isinstance(getattr(lc_errors, n), type) and issubclass(getattr(lc_errors, n), lc_errors.ModelError)]
    assert len(errors) > 8
    assert [retryable(e) for e in errors] == [default_retry_on(e) for e in errors]
    assert not retryable(lc_errors.ModelAuthenticationError("x")) and retryable(lc_errors.ModelRateLimitError("x"))
    # an error the provider marks non-retryable is not sent again (before: 3 attempts, with waits)
    model = _RaisingFake(messages=iter(()), error=lc_errors.ModelAuthenticationError("bad key"))
    with pytest.raises(ModelCallError, match="ModelAuthenticationError"):
        LLMSummarizer("fake:model", model=model)([HumanMessage("hi")], prompt_text="summarize")
    assert model.attempts == 1
