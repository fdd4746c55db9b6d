"""research-report: parallel research sub-agents (context isolation and the concurrency clamp)."""

from __future__ import annotations

import random
import re

from engine.scenarios.base import Scenario
from engine.scenarios.policy import Move, Seen

REPORT_PATH = "/reports/context-engineering.md"
# topic -> (words that name it in a task, search query)
TOPICS: dict[str, tuple[tuple[str, ...], str]] = {
    "offloading": (("offload",), "offloading large tool results filesystem"),
    "summarization": (("summar", "compaction"), "summarization trigger keep history"),
    "sub-agents": (("sub-agent", "subagent", "delegat"), "sub-agents task tool isolation concurrency"),
    "memory": (("memory", "memories"), "long-term memory across threads AGENTS.md facts"),
    "todo reminders": (("todo", "reminder", "plan"), "todo list reminders write_todos"),
    "dangling tool calls": (("dangling", "interrupt"), "dangling tool calls interruption patch"),
    "token budgets": (("token", "budget", "window"), "context window token budget counting"),
    "retrieval": (("retriev", "grep"), "retrieval grep reading files exploration"),
}
FOLLOW_UPS: tuple[str, ...] = (
    "pitfalls users report with summarization and todo lists",
    "how offloading and summarization interact over a long run",
    "cost of memory injected at every step",
    "when delegation to sub-agents loses information",
)
_TOPIC_IN_PROMPT = re.compile(r"Research '([^']+)'")
_FOLLOW_UP = re.compile(r"sources: (.+?)\. Cite")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def topics_in(task: str) -> list[str]:
    low = task.lower()
    found = [t for t, (words, _) in TOPICS.items() if any(w in low for w in words)]
    return found or list(TOPICS)[:5]


def research_prompt(topic: str) -> str:
    return (f"Research '{topic}' in agent frameworks (LangChain, Deep Agents, DeerFlow): how it works, its "
            "defaults and thresholds, and the pitfalls users report. Return 4-6 bullet points with concrete "
            "numbers, and cite the page URLs.")


class ResearchReportPolicy:
    """Plan with todos, fan out one sub-agent per topic in a single response, then write the report."""

    def __init__(self, task: str, steps: int) -> None:
        self.topics = topics_in(task)
        self.steps = steps

    def covered(self, seen: Seen) -> dict[str, str]:
        """Topic -> the sub-agent's answer, for every task call whose result is visible."""
        out: dict[str, str] = {}
        for c in seen.calls_named("task"):
            m = _TOPIC_IN_PROMPT.search(str(c.args.get("prompt", "")))
            if m and c.result is not None and c.status != "error":
                out[m.group(1)] = c.result
        for s in seen.summaries:  # a summary may still say which topics were done
            for t in self.topics:
                if f"Research '{t}'" in s and t not in out:
                    out[t] = "(summarized)"
        return out

    def decide(self, seen: Seen, step: int, rng: random.Random) -> Move:
        todos = seen.todos()
        covered = self.covered(seen)
        wrote = any(c.name == "write_file" and c.args.get("file_path") == REPORT_PATH for c in seen.calls)
        if wrote or step >= self.steps - 1:
            return Move(self.final_answer(covered))
        if todos is None:
            plan = [{"content": f"Research {t}", "status": "pending"} for t in self.topics]
            plan.append({"content": f"Write {REPORT_PATH}", "status": "pending"})
            return Move("I'll plan the research, then delegate one topic per sub-agent.",
                        [("write_todos", {"todos": plan})])
        missing = [t for t in self.topics if t not in covered]
        asked = {str(c.args.get("prompt")) for c in seen.calls_named("task")}
        done_follow = [f for f in FOLLOW_UPS if any(f in a for a in asked)]
        if missing and step < self.steps - 2:
            # every missing topic in one response: more than the clamp allows, on purpose
            status = self.todo_update(todos, covered, in_progress=missing)
            return Move(f"Delegating {len(missing)} research topics in parallel.",
                        [("write_todos", {"todos": status})] +
                        [("task", {"description": f"Research {t}"[:40], "prompt": research_prompt(t),
                                   "subagent_type": "general-purpose"}) for t in missing])
        spare = self.steps - 3 - step
        follow = [f for f in FOLLOW_UPS if f not in done_follow]
        if spare > 0 and follow and rng.random() < 0.7:
            picks = follow[: rng.choice((2, 3))]
            return Move("A few follow-up questions before writing.",
                        [("task", {"description": "Follow-up research", "prompt":
                                   f"Answer briefly from the sources: {p}. Cite the page URLs.",
                                   "subagent_type": "general-purpose"}) for p in picks])
        if spare > 0 and not seen.calls_named("web_search"):
            return Move("Let me check one background source myself.",
                        [("web_search", {"query": "context window token budget counting", "max_results": 2})])
        return Move("Writing the report.", [("write_file", {"file_path": REPORT_PATH, "content": self.report(covered)}),
                                            ("write_todos", {"todos": [{"content": t["content"], "status": "completed"}
                                                                       for t in todos]})])

    @staticmethod
    def todo_update(todos: list[dict[str, str]], covered: dict[str, str], in_progress: list[str]) -> list[dict[str, str]]:
        out = []
        for t in todos:
            topic = t["content"].removeprefix("Research ")
            status = "completed" if topic in covered else "in_progress" if topic in in_progress else t["status"]
            out.append({"content": t["content"], "status": status})
        return out

    def report(self, covered: dict[str, str]) -> str:
        lines = ["# Context engineering in agent frameworks", ""]
        for t in self.topics:
            lines += [f"## {t.capitalize()}", "", covered.get(t, "(not researched)").removeprefix(
                "Task Succeeded. Result: "), ""]
        return "\n".join(lines)

    def final_answer(self, covered: dict[str, str]) -> str:
        done = [t for t in self.topics if t in covered]
        return (f"The report is in {REPORT_PATH}. It covers {len(done)} of {len(self.topics)} topics "
                f"({', '.join(done) or 'none'}), each researched by its own sub-agent.")


class ResearcherPolicy:
    """The sub-agent: search, search again for pitfalls, answer with the sentences that carry numbers."""

    def __init__(self, prompt: str) -> None:
        m = _TOPIC_IN_PROMPT.search(prompt) or _FOLLOW_UP.search(prompt)
        self.topic = m.group(1) if m else prompt[:80]
        self.query = TOPICS.get(self.topic, ((), self.topic))[1]

    def decide(self, seen: Seen, step: int, rng: random.Random) -> Move:
        searches = seen.calls_named("web_search")
        if not searches:
            return Move("", [("web_search", {"query": self.query})])
        if len(searches) == 1 and rng.random() < 0.8:
            return Move("", [("web_search", {"query": f"{self.topic} pitfalls defaults", "max_results": 2})])
        return Move(self.findings(seen, rng))

    def findings(self, seen: Seen, rng: random.Random) -> str:
        words = [w for w in re.findall(r"[a-z]{4,}", self.topic.lower())]
        picked: list[str] = []
        urls: list[str] = []
        for c in seen.calls_named("web_search"):
            for block in (c.result or "").split("\n## "):
                url = re.search(r"URL: (\S+)", block)
                body = " ".join(ln for ln in block.splitlines() if ln.strip() and not ln.startswith(("#", "URL:", "[")))
                for sentence in _SENTENCE.split(body):
                    s = sentence.strip()
                    if 40 < len(s) < 320 and any(w[:5] in s.lower() for w in words) and s not in picked \
                            and (re.search(r"\d", s) or rng.random() < 0.3):
                        picked.append(s)
                        if url and url.group(1) not in urls:
                            urls.append(url.group(1))
        picked = picked[:6] or ["The sources say little about this topic."]
        return (f"Findings on {self.topic}:\n" + "\n".join(f"- {s}" for s in picked)
                + ("\nSources: " + ", ".join(urls) if urls else ""))


class ResearchReport(Scenario):
    name = "research-report"
    title = "Research report with parallel sub-agents"
    teaches = ("Each `task` call runs a sub-agent in its own context: it reads thousands of tokens of search "
               "results and returns a few hundred. The model asks for every topic at once; DeerFlow's clamp "
               "keeps the first max_concurrent (3) task calls of a response and drops the rest, so the agent "
               "delegates the remaining topics in a later round.")
    layers = ("subagents",)
    lesson_preset = "deerflow"
    preset = "deerflow"
    default_steps = 10
    sample_steps = 16
    task = ("Write a research report on context engineering for LLM agents: offloading, summarization, "
            "sub-agents, memory, todo reminders and dangling tool calls. Delegate each topic to a research "
            f"sub-agent in parallel, then write the report to {REPORT_PATH}.")

    def make_policy(self, task: str, steps: int) -> ResearchReportPolicy:
        return ResearchReportPolicy(task, steps)

    def subagent_policy(self, prompt: str) -> ResearcherPolicy:
        return ResearcherPolicy(prompt)


SCENARIO = ResearchReport()
