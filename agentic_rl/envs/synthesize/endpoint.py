"""A client of any OpenAI-compatible chat-completions endpoint (vLLM's server, a hosted API, a local stand-in).

`ChatEndpoint.complete(messages)` POSTs `{"model", "messages", "temperature", "max_tokens"}` to
`URL/chat/completions` and returns the first choice's text. Everything that can go wrong with the endpoint is an
`EndpointFailure` with a `kind` the synthesis report counts, never another exception:
  - "timeout": no answer within `timeout_s` (also a connection that hangs);
  - "unreachable": the connection was refused or the host is unknown;
  - "http_error": an HTTP status other than 200 (the body's first characters say why);
  - "malformed_reply": a body that is not the protocol's JSON, or a choice without text;
  - "refused": the model refused (the protocol's `refusal` field, or `finish_reason` "content_filter").
`transient` says whether trying again later may help (timeouts, unreachable hosts, 429 and 5xx answers): a
problem that failed that way is tried again when the synthesis command is rerun; the others are final.
Only the standard library is used, so the client runs wherever the trainer does.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

FAILURE_KINDS = ("timeout", "unreachable", "http_error", "malformed_reply", "refused")


class EndpointFailure(Exception):
    """The endpoint gave no usable reply (see the module docstring for the kinds)."""

    def __init__(self, kind: str, detail: str, transient: bool = False) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail, self.transient = kind, detail, transient


@dataclass
class ChatEndpoint:
    """url: the API base (e.g. http://127.0.0.1:8000/v1) or its /chat/completions address. api_key_env: the
    environment variable that holds a bearer token, if the endpoint needs one (its value is never logged)."""

    url: str
    model: str
    timeout_s: float = 120.0
    temperature: float = 0.7
    max_tokens: int = 2048
    api_key_env: str | None = "OPENAI_API_KEY"

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"--endpoint {self.url!r}: give an http(s) URL such as http://127.0.0.1:8000/v1")
        if self.timeout_s <= 0:
            raise ValueError(f"endpoint timeout must be > 0 s, got {self.timeout_s}")

    @property
    def address(self) -> str:
        base = self.url.rstrip("/")
        return base if base.endswith("/chat/completions") else base + "/chat/completions"

    def complete(self, messages: list[dict[str, str]], temperature: float | None = None) -> str:
        """The reply's text; raises EndpointFailure (never anything else) when there is none."""
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature if temperature is None else temperature,
            "max_tokens": self.max_tokens,
        }
        return reply_text(self._post(json.dumps(body).encode()))

    def _post(self, data: bytes) -> bytes:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.address, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            text = exc.read()[:300].decode("utf-8", "replace")
            transient = exc.code == 429 or exc.code >= 500
            raise EndpointFailure("http_error", f"HTTP {exc.code}: {text}", transient) from None
        except TimeoutError as exc:  # socket.timeout is TimeoutError since 3.10
            raise EndpointFailure("timeout", f"no reply within {self.timeout_s:g} s ({exc})", True) from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise EndpointFailure("timeout", f"no reply within {self.timeout_s:g} s", True) from None
            raise EndpointFailure("unreachable", f"{self.address}: {exc.reason}", True) from None
        except (ConnectionError, OSError) as exc:  # a connection reset mid-reply
            raise EndpointFailure("unreachable", f"{self.address}: {exc}", True) from None


def reply_text(raw: bytes) -> str:
    """The first choice's text of a chat-completions body (EndpointFailure when it is malformed or a refusal)."""
    try:
        body: Any = json.loads(raw)
        choice = body["choices"][0]
        message = choice.get("message") or {}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise EndpointFailure("malformed_reply", f"not a chat-completions body: {raw[:200]!r}") from None
    if message.get("refusal") or choice.get("finish_reason") == "content_filter":
        raise EndpointFailure("refused", str(message.get("refusal") or "finish_reason content_filter")[:300])
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        raise EndpointFailure("malformed_reply", "the reply has no text")
    return content
