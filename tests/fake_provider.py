"""A local stand-in for a model provider's HTTP API, for tests that must prove no key leaks.

Every request is recorded. In "echo" mode the server answers 401 with an error whose message quotes
the credentials it was sent (`Authorization`, `x-api-key`), the worst a provider or a proxy could do;
in "ok" mode it answers an OpenAI chat completion (and an Anthropic message) with a fixed text; in
"leak" mode a 200 answer whose text quotes the key it was sent, whole and cut short, and whose first
answer is a tool call whose argument holds a piece of it (a compromised endpoint, or a proxy echoing
headers into the body).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

OK_TEXT = "## SESSION INTENT\n- from the fake provider"


class FakeProvider:
    def __init__(self, mode: str = "echo") -> None:
        self.mode = mode
        self.requests: list[dict[str, Any]] = []
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length).decode("utf-8", "replace")
                provider.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                if provider.mode == "ok":
                    status, doc = 200, _ok_response(self.path)
                elif provider.mode == "leak":
                    key = (self.headers.get("Authorization") or "").removeprefix("Bearer ") or \
                        self.headers.get("x-api-key") or ""
                    status, doc = 200, _leak_response(key, first=len(provider.requests) == 1)
                else:
                    status, doc = 401, {"error": {
                        "message": f"Incorrect API key provided: {self.headers.get('Authorization')} "
                                   f"(x-api-key: {self.headers.get('x-api-key')})",
                        "type": "invalid_request_error", "code": "invalid_api_key"}}
                raw = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeProvider:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()


def leaked_text(key: str) -> str:
    """What a leaking endpoint writes: the key whole, then 20 characters of it glued to other text."""
    return f"{OK_TEXT}\nYour key is {key}; again: id={key[5:25]}xyz"


def _leak_response(key: str, *, first: bool) -> dict[str, Any]:
    if first:  # a tool call whose argument carries part of the key
        message: dict[str, Any] = {"role": "assistant", "content": f"Listing {key[3:19]}", "tool_calls": [
            {"id": "call_leak", "type": "function",
             "function": {"name": "ls", "arguments": json.dumps({"path": f"/project/{key[8:28]}"})}}]}
        finish = "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": leaked_text(key)}, "stop"
    return {"id": "chatcmpl-leak", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def _ok_response(path: str) -> dict[str, Any]:
    if path.endswith("/messages"):  # Anthropic Messages
        return {"id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake",
                "content": [{"type": "text", "text": OK_TEXT}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 5}}
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": OK_TEXT}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
