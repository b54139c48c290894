"""A stand-in for an OpenAI-compatible endpoint: a stdlib HTTP server in a thread that answers
POST /v1/chat/completions with replies a test writes (`responder(body) -> reply`).

A reply is the assistant's text, or a dict directive: {"refusal": text}, {"status": code, "text": body},
{"sleep": seconds, "then": reply} (an answer later than the client's timeout), {"raw": bytes} (a body that is not
the protocol's). Every request body is kept in `requests`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class StubEndpoint:
    def __init__(self, responder: Callable[[dict[str, Any]], Any]) -> None:
        self.responder, self.requests = responder, []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server hook's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append(body)
                status, payload = stub.answer(stub.responder(body))
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, reply: Any) -> tuple[int, bytes]:
        if isinstance(reply, dict) and "sleep" in reply:
            time.sleep(reply["sleep"])
            return self.answer(reply.get("then", "late"))
        if isinstance(reply, dict) and "raw" in reply:
            return 200, reply["raw"]
        if isinstance(reply, dict) and "status" in reply:
            return reply["status"], reply.get("text", "").encode()
        if isinstance(reply, str):
            message = {"role": "assistant", "content": reply}
        else:
            message = {"role": "assistant", "content": None, "refusal": reply["refusal"]}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return 200, json.dumps({"id": "x", "object": "chat.completion", "choices": [choice]}).encode()

    def __enter__(self) -> StubEndpoint:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
