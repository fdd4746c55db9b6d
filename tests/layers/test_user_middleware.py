"""The user's own AgentMiddleware from the config: loaded, replayed with the layers, its effect as events."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately

from engine.base.errors import ConfigError
from engine.base.wording import plural
from engine.config.schema import EngineConfig, preset
from engine.layers import LayerContext, build_layers
from engine.layers.request_diff import reconcile
from engine.layers.user import check_middleware, observe
from engine.run.parity import drive_with_create_agent
from engine.run.replay import replay
from engine.thread.kinds import message_kind
from engine.thread.model import Thread

HERE = "tests.layers.test_user_middleware"


# -- a small user's own middleware, as a user would write it -------------------------------------
class KeepRecentResults(AgentMiddleware):
    """Sends only the newest `keep` tool results in full; older ones become a one-line note (view only)."""

    def __init__(self, keep: int = 2, note: str = "(old result hidden)") -> None:
        super().__init__()
        self.keep = keep
        self.note = note

    def wrap_model_call(self, request: ModelRequest[Any], handler: Callable[..., Any]) -> Any:
        tools = [i for i, m in enumerate(request.messages) if isinstance(m, ToolMessage)]
        old = set(tools[: max(0, len(tools) - self.keep)])
        messages = [m.model_copy(update={"content": self.note}) if i in old else m
                    for i, m in enumerate(request.messages)]
        return handler(request.override(messages=messages))


class RemindOnce(AgentMiddleware):
    """Adds one reminder to the state (no id: the replay names it) before the model call at `at_messages`."""

    def __init__(self, at_messages: int) -> None:
        super().__init__()
        self.at_messages = at_messages

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if len(state["messages"]) != self.at_messages:
            return None
        return {"messages": [HumanMessage("Reminder: run the tests before you finish.")]}


class ShortResults(AgentMiddleware):
    """Cuts every tool result to `chars` characters as it comes back (state)."""

    def __init__(self, chars: int) -> None:
        super().__init__()
        self.chars = chars

    def wrap_tool_call(self, request: Any, handler: Callable[..., Any]) -> Any:
        result = handler(request)
        return result.model_copy(update={"content": str(result.content)[: self.chars]})


class BreaksAtStep(AgentMiddleware):
    """Raises inside wrap_model_call once the request has `at_messages` messages."""

    def __init__(self, at_messages: int) -> None:
        super().__init__()
        self.at_messages = at_messages

    def wrap_model_call(self, request: ModelRequest[Any], handler: Callable[..., Any]) -> Any:
        if len(request.messages) == self.at_messages:
            raise RuntimeError("boom in my middleware")
        return handler(request.override(messages=request.messages[1:]))


class Seen(AgentMiddleware):
    """Records the ids of every request it is handed (to check where `order` places it)."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[list[str]] = []

    def wrap_model_call(self, request: ModelRequest[Any], handler: Callable[..., Any]) -> Any:
        self.requests.append([str(m.id) for m in request.messages])
        return handler(request)


NOT_A_MIDDLEWARE = 42


def make_thread(turns: int = 1, steps: int = 10, result_chars: int = 800) -> Thread:
    """`turns` human requests, each answered by `steps` read_file calls and a final answer."""
    messages: list[BaseMessage] = []
    for t in range(turns):
        messages.append(HumanMessage(f"Task {t}: read the files and explain them.", id=f"h{t}"))
        for k in range(steps):
            cid = f"c{t}-{k}"
            messages.append(AIMessage(f"Reading file {k}.", id=f"a{t}-{k}", tool_calls=[
                {"name": "read_file", "args": {"path": f"/src/f{t}{k}.py"}, "id": cid, "type": "tool_call"}]))
            body = " ".join(f"line{t}{k}{i}" for i in range(result_chars // 8))[:result_chars]
            messages.append(ToolMessage(body, tool_call_id=cid, name="read_file", id=f"t{t}-{k}"))
        messages.append(AIMessage(f"Done with task {t}.", id=f"a{t}-end"))
    return Thread(thread_id="user-mw", messages=messages, source_format="native", max_input_tokens=50_000,
                  system_prompt="You are a test agent.",
                  tools=[{"name": "read_file", "description": "Read a file", "parameters": {"type": "object"}}])


BASE = "preset: langchain\ntokens: {counter: approximate}\n"


def config(yaml_middleware: str, extra: str = "") -> EngineConfig:
    return EngineConfig.from_yaml(BASE + extra + "middleware:\n" + yaml_middleware)


def events_of(run: Any, layer: str) -> list[Any]:
    return [e for e in run.events if e.layer == layer]


# -- LangChain's ContextEditingMiddleware --------------------------------------------------------
CONTEXT_EDITING = """\
  - use: langchain.agents.middleware:ContextEditingMiddleware
    kwargs:
      edits:
        - use: langchain.agents.middleware:ClearToolUsesEdit
          kwargs: {trigger: 1500, keep: 2}
"""


def test_context_editing_middleware_from_yaml_clears_old_results_in_the_request() -> None:
    thread = make_thread()
    baseline = replay(thread, EngineConfig.from_yaml(BASE))
    run = replay(thread, config(CONTEXT_EDITING))
    assert run.layer_names == ("input_context", "summarization", "ContextEditingMiddleware")
    fired = []
    for step, base in zip(run.steps, baseline.steps, strict=True):
        state = list(step.state)
        assert [m.id for m in state] == [m.id for m in base.state]  # view only: the state is untouched
        results = [m for m in state if isinstance(m, ToolMessage)]
        # LangChain's rule (context_editing.py ClearToolUsesEdit.apply): count the request's messages
        # approximately; above `trigger`, every tool result but the newest `keep` becomes "[cleared]"
        expected = ([m.id for m in results[:-2]] if count_tokens_approximately(state) > 1500 else [])
        cleared = [m.id for m in step.view if isinstance(m, ToolMessage) and m.content == "[cleared]"]
        assert cleared == expected, step.index
        events = [e for e in step.events if e.layer == "ContextEditingMiddleware"]
        if not expected:
            assert events == [] and step.view == step.state
            continue
        fired.append(step.index)
        (e,) = events
        assert (e.kind, e.payload["hook"], e.payload["replaced_ids"], e.payload["removed_ids"],
                e.payload["inserted_ids"]) == ("edit_request", "wrap_model_call", expected, [], [])
        assert e.message == f"request: replaced {plural(len(expected), 'message')}"
        # tokens before -> after: the request without the middleware, and what the model got with it
        assert (e.tokens_before, e.tokens_after) == (base.view_tokens, step.view_tokens)
        assert e.tokens_after < e.tokens_before
        # the middleware deep-copies the request; the messages it left alone are the state's own again
        kept = [m for m in step.view if m.id not in expected]
        assert all(any(m is s for s in state) for m in kept)
        metadata = next(m for m in step.view if m.id == expected[0]).response_metadata
        assert metadata["context_editing"] == {"cleared": True, "strategy": "clear_tool_uses"}
    assert fired == [7, 8, 9, 10]  # 1 + 2k messages of ~200 tokens: above 1,500 from step 7


def test_a_middleware_placed_in_order_runs_there() -> None:
    thread = make_thread(steps=3)
    seen = Seen()
    ctx = LayerContext()
    # before the dangling layer (outer), the middleware sees the request without its placeholders
    from engine.layers.dangling import DanglingToolCallLayer

    dangling = DanglingToolCallLayer(ctx)
    patched = Thread(**{**thread.__dict__, "messages": [m for m in thread.messages if m.id != "t0-1"]})
    replay(patched, layers=[seen, dangling])
    outer = seen.requests[2]
    seen.requests.clear()
    replay(patched, layers=[dangling, seen])
    inner = seen.requests[2]
    assert "patch-c0-1" not in outer and "patch-c0-1" in inner
    cfg = config(f"  - use: {HERE}:KeepRecentResults\n", "order: [KeepRecentResults, summarization]\n")
    assert cfg.layer_sequence() == ("KeepRecentResults", "summarization")
    names = [getattr(m, "layer", None) for m in build_layers(cfg, LayerContext())]
    assert names == ["input_context", "KeepRecentResults", "summarization"]
    # not named in order: it runs after (inside) every layer that is
    cfg = config(f"  - use: {HERE}:KeepRecentResults\n")
    assert cfg.layer_sequence() == ("summarization", "KeepRecentResults")


# -- LangChain's SummarizationMiddleware ---------------------------------------------------------
SUMMARIZATION = """\
  - use: langchain.agents.middleware:SummarizationMiddleware
    kwargs:
      model: $model
      trigger: [messages, 9]
      keep: [messages, 4]
      summarizer: {use: "engine.summarizers:OfflineSummarizer"}
"""


def test_summarization_middleware_from_yaml_replaces_history_with_a_summary() -> None:
    thread = make_thread()
    run = replay(thread, config(SUMMARIZATION))
    events = events_of(run, "SummarizationMiddleware")
    # state before step k: 1 + 2k messages at first; the trigger (>= 9 messages) fires at step 4, cuts at
    # len - keep = 5 (an AI message, so no tool pair is split), leaving [summary, a, t, a, t]; then every
    # second step the state is back at 9 messages
    assert [e.step for e in events] == [4, 6, 8, 10]
    first = events[0]
    assert (first.kind, first.payload["hook"]) == ("edit_state", "before_model")
    assert first.payload["removed_ids"] == ["h0", "a0-0", "t0-0", "a0-1", "t0-1"]
    assert first.payload["replaced_ids"] == [] and len(first.payload["inserted_ids"]) == 1
    summary_id = first.payload["inserted_ids"][0]
    assert summary_id.startswith("SummarizationMiddleware-4-before_model-")
    assert events[1].payload["removed_ids"] == [summary_id, "a0-2", "t0-2", "a0-3", "t0-3"]
    step4 = run.steps[4]
    assert [m.id for m in step4.state] == [summary_id, "a0-2", "t0-2", "a0-3", "t0-3"]
    summary = step4.state[0]
    assert message_kind(summary) == "summary"  # LangChain marks it lc_source=summarization
    assert str(summary.content).startswith("Here is a summary of the conversation to date:\n\n## SESSION INTENT\n"
                                           "- Task 0: read the files and explain them.")
    baseline = replay(thread, EngineConfig.from_yaml(BASE))
    assert (first.tokens_before, first.tokens_after) == (baseline.steps[4].state_tokens, step4.state_tokens)
    assert first.message == "state: removed 5 messages, inserted 1 message"
    # deterministic: the same ids and texts on a second replay
    again = replay(thread, config(SUMMARIZATION))
    assert [e.to_dict() for e in events_of(again, "SummarizationMiddleware")] == [e.to_dict() for e in events]


def test_summarization_middleware_calling_the_replay_model_is_one_error_event() -> None:
    thread = make_thread()
    yaml = SUMMARIZATION.replace('      summarizer: {use: "engine.summarizers:OfflineSummarizer"}\n', "")
    run = replay(thread, config(yaml))
    errors = [e for e in events_of(run, "SummarizationMiddleware") if e.kind == "error"]
    assert [e.step for e in errors] == [4, 5, 6, 7, 8, 9, 10]  # it retries at every step past the trigger
    assert errors[0].severity == "warning"
    assert errors[0].message == (
        "SummarizationMiddleware.before_model raised ModelNotAvailable: the replay's model ($model) writes "
        "nothing: give the middleware a summarizer (e.g. `summarizer: {use: "
        "'engine.summarizers:OfflineSummarizer'}`) or a real model; its effect at this call is skipped")
    assert [m.id for m in run.steps[10].state] == [m.id for m in thread.messages[:21]]  # nothing was summarized


# -- the user's own classes --------------------------------------------------------------------
def test_a_user_class_from_yaml_rewrites_the_view_and_its_events_name_it() -> None:
    thread = make_thread(steps=4)
    run = replay(thread, config(f"  - use: {HERE}:KeepRecentResults\n    kwargs: {{keep: 1}}\n"))
    events = events_of(run, "KeepRecentResults")
    assert [(e.step, e.payload["replaced_ids"]) for e in events] == [
        (2, ["t0-0"]), (3, ["t0-0", "t0-1"]), (4, ["t0-0", "t0-1", "t0-2"])]
    assert [m.content for m in run.steps[4].view if isinstance(m, ToolMessage)] == [
        "(old result hidden)", "(old result hidden)", "(old result hidden)", thread.messages[8].content]


def test_a_state_update_without_ids_gets_stable_ids_and_an_inserted_event() -> None:
    thread = make_thread(steps=4)
    cfg = EngineConfig.from_yaml(BASE).with_overrides([f"middleware=[{{use: '{HERE}:RemindOnce', kwargs: {{at_messages: 5}}}}]"])
    run = replay(thread, cfg)
    (e,) = events_of(run, "RemindOnce")
    assert (e.step, e.kind, e.payload["removed_ids"], e.payload["replaced_ids"]) == (2, "edit_state", [], [])
    (rid,) = e.payload["inserted_ids"]
    assert rid.startswith("RemindOnce-2-before_model-0-")
    assert [m.id for m in run.steps[2].state] == ["h0", "a0-0", "t0-0", "a0-1", "t0-1", rid]
    assert e.tokens_after - e.tokens_before == count_tokens_approximately([run.steps[2].state[-1]])
    assert replay(thread, cfg).steps[2].state[-1].id == rid


def test_a_tool_result_rewrite_is_an_event_and_the_state_keeps_it() -> None:
    thread = make_thread(steps=3)
    run = replay(thread, config(f"  - use: {HERE}:ShortResults\n    kwargs: {{chars: 20}}\n"))
    events = events_of(run, "ShortResults")
    assert [(e.step, e.kind, e.payload["replaced_ids"], e.payload["tool_call_id"]) for e in events] == [
        (1, "edit_tool_result", ["t0-0"], "c0-0"), (2, "edit_tool_result", ["t0-1"], "c0-1"),
        (3, "edit_tool_result", ["t0-2"], "c0-2")]
    assert [m.content for m in run.steps[3].state if isinstance(m, ToolMessage)] == [
        str(thread.messages[i].content)[:20] for i in (2, 4, 6)]
    assert events[0].tokens_after == count_tokens_approximately([run.steps[3].state[2]])


def test_replay_with_layers_observes_a_middleware_instance() -> None:
    thread = make_thread(steps=4)
    run = replay(thread, layers=[KeepRecentResults(keep=3)])
    assert run.layer_names == ("KeepRecentResults",)
    assert [(e.step, e.payload["replaced_ids"]) for e in run.events] == [(4, ["t0-0"])]


def test_a_middleware_that_raises_is_an_error_event_and_the_replay_goes_on() -> None:
    thread = make_thread(steps=4)
    run = replay(thread, config(f"  - use: {HERE}:BreaksAtStep\n    kwargs: {{at_messages: 5}}\n"))
    events = events_of(run, "BreaksAtStep")
    assert [(e.step, e.kind) for e in events] == [(0, "edit_request"), (1, "edit_request"), (2, "error"),
                                                  (3, "edit_request"), (4, "edit_request")]
    assert events[2].message == ("BreaksAtStep.wrap_model_call raised RuntimeError: boom in my middleware; "
                                 "its effect at this call is skipped")
    assert [m.id for m in run.steps[2].view] == [m.id for m in run.steps[2].state]  # the request as it came
    assert events[3].payload["removed_ids"] == ["h0"]


def test_deep_agents_middleware_from_yaml() -> None:
    pytest.importorskip("deepagents")
    # a turn that left a call unanswered; Deep Agents patches it when the next turn starts
    messages: list[BaseMessage] = [
        HumanMessage("Look around.", id="h0"),
        AIMessage("", id="a0", tool_calls=[{"name": "ls", "args": {}, "id": "c0", "type": "tool_call"},
                                           {"name": "grep", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}]),
        ToolMessage("a.py", tool_call_id="c1", name="grep", id="t1"),
        AIMessage("Found a.py.", id="a1"),
        HumanMessage("Now read it.", id="h1"),
        AIMessage("Reading it.", id="a2"),
    ]
    thread = Thread(thread_id="deep", messages=messages, source_format="native")
    run = replay(thread, config("  - use: deepagents.middleware.patch_tool_calls:PatchToolCallsMiddleware\n"))
    (e,) = events_of(run, "PatchToolCallsMiddleware")
    assert (e.step, e.kind, e.payload["hook"], e.payload["removed_ids"]) == (2, "edit_state", "before_agent", [])
    (pid,) = e.payload["inserted_ids"]
    assert [m.id for m in run.steps[2].state] == ["h0", "a0", pid, "t1", "a1", "h1"]
    patch = run.steps[2].state[2]
    assert (patch.tool_call_id, patch.status) == ("c0", "error")
    assert patch.content == ("Tool call ls with id c0 did not complete - no result was recorded. "
                             "It may have been cancelled or interrupted.")


# -- the same middleware inside a real create_agent ---------------------------------------------
@pytest.mark.parametrize("yaml", [CONTEXT_EDITING, SUMMARIZATION, f"  - use: {HERE}:RemindOnce\n    kwargs: {{at_messages: 5}}\n"],
                         ids=["context-editing", "summarization", "user-class"])
def test_replay_matches_create_agent_with_the_same_middleware(yaml: str) -> None:
    thread = make_thread(turns=2, steps=6)
    cfg = config(yaml)
    observed = drive_with_create_agent(thread, cfg)
    run = replay(thread, cfg)
    assert len(observed) == len(run.steps) == 14
    for seen, step in zip(observed, run.steps, strict=True):
        assert [(m.id, m.content) for m in seen.messages] == [(m.id, m.content) for m in step.view], step.index
    assert any(e.layer not in ("input_context", "summarization") for e in run.events)


# -- errors: one line naming the entry -----------------------------------------------------------
@pytest.mark.parametrize(("yaml", "message"), [
    ("  - use: no_such_package.sub:Thing\n",
     "middleware.0.use: cannot import 'no_such_package.sub' (ModuleNotFoundError: No module named 'no_such_package')"),
    (f"  - use: {HERE}:Missing\n", f"middleware.0.use: {HERE}:Missing is refused: {HERE} defines no 'Missing', "
                                  "not a class deriving from AgentMiddleware; nothing was called"),
    (f"  - use: {HERE}:NOT_A_MIDDLEWARE\n", f"middleware.0.use: {HERE}:NOT_A_MIDDLEWARE is refused: NOT_A_MIDDLEWARE "
                                           "is an int, not a class deriving from AgentMiddleware; nothing was called"),
    ("  - use: collections:OrderedDict\n",
     "middleware.0.use: collections:OrderedDict is refused: 'collections' is Python's standard library, which "
     "defines no AgentMiddleware; nothing was imported"),
    ("  - use: langchain.agents.middleware:ContextEditingMiddleware\n    kwargs: {bogus: 1}\n",
     "middleware.0.kwargs: langchain.agents.middleware:ContextEditingMiddleware does not take these kwargs "
     "(got an unexpected keyword argument 'bogus')"),
    ("  - use: langchain.agents.middleware:SummarizationMiddleware\n    kwargs: {model: $model, keep: [fraction, 2]}\n",
     "middleware.0.kwargs: langchain.agents.middleware:SummarizationMiddleware(...) raised ValueError: "
     "Fractional keep values must be between 0 and 1, got 2."),
    ("  - use: langchain.agents.middleware:ContextEditingMiddleware\n    kwargs:\n      edits: [{use: nowhere:X}]\n",
     "middleware.0.kwargs.edits.0.use: cannot import 'nowhere' (ModuleNotFoundError: No module named 'nowhere')"),
], ids=["import", "attribute", "not-callable", "not-middleware", "kwargs", "init-raises", "nested"])
def test_a_bad_middleware_is_one_config_error_naming_it(yaml: str, message: str) -> None:
    cfg = config(yaml)  # the config itself is valid: nothing is imported until a replay loads it
    with pytest.raises(ConfigError) as err:
        check_middleware(cfg)
    assert str(err.value) == message
    with pytest.raises(ConfigError) as err:
        replay(make_thread(steps=2), cfg)
    assert str(err.value) == message


@pytest.mark.parametrize(("text", "message"), [
    ("middleware: [{use: not-a-path}]", "middleware.0.use: expected 'package.module:Class', got 'not-a-path'"),
    ("middleware: [{use: 'a.b:C', name: memory}]",
     "middleware.0.name: 'memory' is a built-in layer or config key; give it another `name` (got 'memory')"),
    ("middleware: [{use: 'a.b:C'}, {use: 'x:C'}]", "middleware.1.name: two middleware are named 'C'; give each its own `name`"),
    ("order: [summarization, Nope]\nmiddleware: [{use: 'a.b:C'}]",
     "order: unknown layer 'Nope'; layers are recorded, filesystem, subagents, summarization, context_editing, "
     "compaction, todo, "
     "dangling, memory, durable_context, coalesce and the middleware C (got ['summarization', 'Nope'])"),
    ("middleware: [{use: 'a.b:C', kwarg: {}}]", "middleware.0.kwarg: unknown key (got {})"),
])
def test_a_malformed_middleware_entry_is_a_config_error(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        EngineConfig.from_yaml(text)
    assert str(err.value) == message


def test_middleware_round_trips_and_is_hashable() -> None:
    cfg = config(CONTEXT_EDITING + f"  - use: {HERE}:KeepRecentResults\n    name: mine\n    enabled: false\n",
                 "order: [mine, summarization]\n")
    assert EngineConfig.from_yaml(cfg.to_yaml()) == cfg
    assert hash(cfg) == hash(EngineConfig.from_yaml(cfg.to_yaml()))
    assert cfg.layer_sequence() == ("summarization", "ContextEditingMiddleware")  # a disabled one does not run
    assert preset("langchain").diff(cfg)["middleware"][0] == []


def test_reconcile_reports_removed_replaced_inserted_and_order() -> None:
    a, b, c = HumanMessage("a", id="a"), AIMessage("b", id="b"), ToolMessage("c", tool_call_id="x", id="c")
    same, diff = reconcile([a, b, c], [a.model_copy(), b, c])
    assert same == [a, b, c] and not diff.changed
    out, diff = reconcile([a, b, c], [b.model_copy(update={"content": "B"}), HumanMessage("n", id="n"), a])
    assert (diff.removed, diff.replaced, diff.inserted, diff.reordered) == (("c",), ("b",), ("n",), True)
    assert out[2] is a and diff.describe() == "removed 1 message, replaced 1 message, inserted 1 message, reordered"
    assert observe(KeepRecentResults()).name == "KeepRecentResults"


def test_the_cli_replays_middleware_from_a_config_file_and_names_a_bad_one(tmp_path: Any, capsys: Any) -> None:
    from engine.cli.ctxi import main
    from engine.formats.native import dumps

    path = tmp_path / "thread.json"
    path.write_text(dumps(make_thread(steps=4)), encoding="utf-8")
    good = tmp_path / "good.yaml"
    good.write_text(BASE + "middleware:\n" + f"  - use: {HERE}:KeepRecentResults\n    kwargs: {{keep: 1}}\n")
    assert main(["replay", str(path), "--config", str(good)]) == 2  # Python code runs only when allowed
    assert capsys.readouterr().err == (
        f"ctxi replay: error: middleware: the config names Python code that would be imported and run: {HERE}:"
        f"KeepRecentResults ({HERE} is already imported). Add --allow-middleware to run it (only for code you trust: "
        "SECURITY.md)\n")
    assert main(["replay", str(path), "--config", str(good), "--allow-middleware"]) == 0
    out = capsys.readouterr().out
    assert "layers: input_context, summarization, KeepRecentResults" in out
    assert "KeepRecentResults.edit_request 3" in out
    assert main(["replay", str(path), "--preset", "langchain", "--set", "middleware=[{use: 'nowhere:X'}]",
                 "--allow-middleware"]) == 2
    err = capsys.readouterr().err
    assert err == ("ctxi replay: error: middleware.0.use: cannot import 'nowhere' "
                   "(ModuleNotFoundError: No module named 'nowhere')\n")


def test_edited_messages_pair_each_message_before_and_after_the_middleware() -> None:
    from engine.views.middleware import edited_messages, middleware_events, middleware_layers

    thread = make_thread()
    run = replay(thread, config(SUMMARIZATION + f"  - use: {HERE}:KeepRecentResults\n    kwargs: {{keep: 1}}\n"))
    assert middleware_layers(run) == ["SummarizationMiddleware", "KeepRecentResults"]
    summary = middleware_events(run, "SummarizationMiddleware")[0]
    edits = edited_messages(run, summary)
    assert [(x.status, x.id) for x in edits] == [("removed", i) for i in ("h0", "a0-0", "t0-0", "a0-1", "t0-1")] + [
        ("inserted", summary.payload["inserted_ids"][0])]
    assert edits[0].before is thread.messages[0] and edits[0].after is None
    assert edits[-1].before is None and message_kind(edits[-1].after) == "summary"
    hidden = middleware_events(run, "KeepRecentResults")[0]
    (edit,) = edited_messages(run, hidden)
    assert (edit.status, edit.before.content, edit.after.content) == (
        "replaced", run.steps[hidden.step].state[2].content, "(old result hidden)")


def test_each_middleware_shows_its_own_after_when_a_later_one_rewrites_the_same_message() -> None:
    # ContextEditingMiddleware clears old results, then KeepRecentResults replaces the same messages again: the
    # final view holds the user class's note, but the outer middleware's own "after" is its placeholder
    import json

    from engine.views.middleware import edited_messages, middleware_events

    run = replay(make_thread(), config(CONTEXT_EDITING + f"  - use: {HERE}:KeepRecentResults\n"
                                       "    kwargs: {keep: 2, note: \"(hidden by my middleware)\"}\n"))
    cleared = next(e for e in middleware_events(run, "ContextEditingMiddleware") if e.payload["replaced_ids"])
    edits = edited_messages(run, cleared)
    assert edits and all(x.status == "replaced" for x in edits)
    assert {x.after.content for x in edits} == {"[cleared]"}  # ClearToolUsesEdit's placeholder, langchain 1.x
    view = {str(m.id): m for m in run.steps[cleared.step].view}
    assert {view[x.id].content for x in edits} == {"(hidden by my middleware)"}
    hidden = next(e for e in middleware_events(run, "KeepRecentResults") if e.step == cleared.step)
    assert {x.after.content for x in edited_messages(run, hidden)} == {"(hidden by my middleware)"}
    # the references stay out of the event's JSON
    assert "_after_messages" not in cleared.to_dict() and json.dumps(cleared.to_dict(), default=str)
