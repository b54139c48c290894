"""What the project's HTTP servers share: the environment servers (`envs.serve`) and the sampler servers
(`rollout.service`) speak their own protocols over one serving layer, stdlib only on both sides.

- `JSONServer` + `JSONHandler`: JSON objects in and out; GET and POST routes the server names; a bearer token
  checked before anything is read (401 without it); a server off loopback refuses to start without a token
  (`is_loopback`); a request that is not the protocol (`BadRequest`) is answered 400 with its reason, a failure of
  the handler 500, and the server lives on.
- `JSONClient`: one fresh connection per request (requests come from several threads; a dropped connection never
  has to be noticed and reopened). Failures come out as the two kinds a caller acts on: the server or the link
  failed (`down`: try another server) or the request was refused (`refused`: every server would refuse it).
- `LocalServers`: server processes a run starts on loopback with a fresh token, each announcing its URL on its
  first line of stdout, stopped together; each watches the run's pid (`watch_parent`, `die_with_parent`), so none
  outlives its run; `serve_until_stopped` is the server side of that contract.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, TextIO
from urllib.parse import urlsplit

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 << 20  # a request or reply larger than this is refused: no episode or turn batch needs it
ANNOUNCE = "listening on "  # a starting server's first line of stdout, followed by its URL
LOOPBACK = "127.0.0.1"

Route = Callable[..., dict[str, Any]]


def a(noun: str) -> str:
    """`noun` with its indefinite article (messages name "an environment server", "a sampler server")."""
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


class BadRequest(ValueError):
    """A request that is not the protocol: answered 400 with this message (each protocol's `ProtocolError`)."""


def is_loopback(host: str) -> bool:
    """True when every address `host` resolves to is a loopback address."""
    try:
        infos = socket.getaddrinfo(host, None)
    except socket.gaierror:
        return False
    return bool(infos) and all(ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos)


class JSONServer(ThreadingHTTPServer):
    """A threaded HTTP server of JSON routes. A subclass names itself (`what`), says where its token goes
    (`token_advice`), and gives its routes (`get_routes`, `post_routes`) and which exceptions are not failures of
    the server (`statuses`: exception type -> HTTP status, first match wins; anything else is 500)."""

    daemon_threads = True
    what = "server"
    token_advice = "set a token on both sides"
    statuses: tuple[tuple[type[BaseException], int], ...] = ((BadRequest, 400),)

    def __init__(self, host: str, port: int, token: str | None) -> None:
        if not token and not is_loopback(host):
            raise ValueError(
                f"{a(self.what)} on {host!r} is reachable from other machines: it needs a token. {self.token_advice}, "
                f"or listen on {LOOPBACK}"
            )
        self.token = token or None
        super().__init__((host, port), JSONHandler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host.decode() if isinstance(host, bytes) else host}:{port}"

    def get_routes(self) -> dict[str, Route]:
        return {}

    def post_routes(self) -> dict[str, Route]:
        return {}

    def status_of(self, exc: BaseException) -> int:
        return next((code for kind, code in self.statuses if isinstance(exc, kind)), 500)


class JSONHandler(BaseHTTPRequestHandler):
    server: JSONServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802  (the name http.server dispatches to)
        if self._authorized():
            self._dispatch(self.server.get_routes(), post=False)

    def do_POST(self) -> None:  # noqa: N802
        if self._authorized():
            self._dispatch(self.server.post_routes(), post=True)

    def _dispatch(self, routes: dict[str, Route], post: bool) -> None:
        if self.path not in routes:
            known = f"GET {' '.join(self.server.get_routes())}, POST {' '.join(self.server.post_routes())}"
            self._reply(404, {"error": f"no such {'operation' if post else 'path'} {self.path!r}; {known}"})
            return
        try:
            code, reply = 200, routes[self.path](self._body()) if post else routes[self.path]()
        except Exception as exc:  # the server survives a request it fails on; the client may retry elsewhere
            code = self.server.status_of(exc)
            if code >= 500:
                logger.exception("%s: %s failed", self.server.what, self.path)
            reply = {"error": f"{type(exc).__name__}: {exc}" if code >= 500 else str(exc)}
        self._reply(code, reply)

    def _authorized(self) -> bool:
        token = self.server.token
        given = self.headers.get("Authorization", "")
        if token is None or secrets.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return True
        self._reply(401, {"error": f"this {self.server.what} needs its token (Authorization: Bearer <token>)"})
        return False

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY_BYTES:
            raise BadRequest(f"a request body of {length} bytes: expected 1 to {MAX_BODY_BYTES}")
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError as exc:
            raise BadRequest(f"the request body is not JSON: {exc}") from None
        if not isinstance(body, dict):
            raise BadRequest(f"the request body must be a JSON object, got {type(body).__name__}")
        return body

    def _reply(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (http.server's signature)
        logger.debug(f"{self.server.what}: " + format, *args)


class JSONClient:
    """Requests to the server at `url` (http://host:port), with `token` where it needs one; `timeout_s` bounds each.

    A subclass names the server (`what`), its protocol version (`protocol`), where the token goes
    (`token_advice`), and the exceptions it raises: `down(cause, message)` (causes: server_died, server_timeout,
    bad_reply, server_error, or what `status_causes` names) and `refused(message)`."""

    what = "server"
    protocol: int = 1
    token_advice = "Give the client the server's token"
    status_causes: ClassVar[dict[int, str]] = {}  # statuses that say more than "server_error" (the protocol's own)

    def __init__(self, url: str, token: str | None = None, timeout_s: float = 300.0) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname or parts.port is None:
            raise ValueError(f"{a(self.what)} URL is http://HOST:PORT, got {url!r}")
        self.url, self.host, self.port = url.rstrip("/"), parts.hostname, parts.port
        self.token, self.timeout_s = token, timeout_s

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url})"

    def down(self, cause: str, message: str) -> Exception:
        return ConnectionError(f"{cause}: {message}")

    def refused(self, message: str) -> Exception:
        return PermissionError(message)

    def health(self) -> dict[str, Any]:
        """The server's health reply; a server of another protocol version is refused."""
        reply = self.request("GET", "/health")
        if reply.get("protocol") != self.protocol:
            raise self.refused(
                f"{self.url} speaks {self.what} protocol {reply.get('protocol')!r}, this client {self.protocol}: "
                "run the same version of agentic_rl on both sides"
            )
        return reply

    def post(self, op: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.request("POST", f"/{op}", body or {})

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = None if body is None else json.dumps(body).encode()
        where = f"{self.url}{path}"
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            status, raw = response.status, response.read(MAX_BODY_BYTES + 1)
        except TimeoutError as exc:
            raise self.down("server_timeout", f"{where}: no answer in {self.timeout_s:g} s") from exc
        except http.client.HTTPException as exc:  # a status line or headers that are not HTTP
            raise self.down("bad_reply", f"{where}: {type(exc).__name__}: {exc}") from exc
        except OSError as exc:  # refused, reset, closed: the server is not there (any more)
            raise self.down("server_died", f"{where}: {type(exc).__name__}: {exc}") from exc
        finally:
            conn.close()
        return self.decode(status, raw, where)

    def decode(self, status: int, raw: bytes, where: str) -> dict[str, Any]:
        try:
            reply = json.loads(raw) if len(raw) <= MAX_BODY_BYTES else None
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            raise self.down("bad_reply", f"{where} answered {status} with a body that is not a JSON object")
        error = str(reply.get("error", ""))
        if status in (401, 403):
            raise self.refused(f"{where} refused the request ({status}): {error}. {self.token_advice}")
        if status == 400:
            raise self.refused(f"{where} refused the request (400): {error}")
        if status in self.status_causes:
            raise self.down(self.status_causes[status], f"{where}: {error}")
        if status != 200:
            raise self.down("server_error", f"{where} answered {status}: {error}")
        return reply


# ---- server processes a run starts --------------------------------------------------------------------------------


@dataclass
class LocalServers:
    """Server processes on loopback started by this run (`start`), their URLs and their shared token."""

    processes: list[subprocess.Popen] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    token: str = ""

    @staticmethod
    def start(args: list[str], n: int, token_env: str, timeout_s: float, what: str) -> LocalServers:
        """`n` processes of `args` (a server's command line, without host, port, parent and token flags), each on
        loopback with a fresh token in `$token_env` and told to end with this process. Any failure stops them all."""
        servers = LocalServers(token=secrets.token_hex(16))
        args = [*args, "--host", LOOPBACK, "--port", "0", "--parent-pid", str(os.getpid()), "--token-env", token_env]
        env = {**os.environ, token_env: servers.token}
        try:
            for _ in range(n):
                servers.processes.append(subprocess.Popen(args, stdout=subprocess.PIPE, env=env, text=True))
            servers.urls = [announced_url(p, timeout_s, what) for p in servers.processes]
        except BaseException:
            servers.stop()
            raise
        return servers

    def stop(self) -> None:
        stop_processes(self.processes)


def announced_url(proc: subprocess.Popen, timeout_s: float, what: str) -> str:
    """The URL a starting server prints on stdout (`ANNOUNCE`); an error if it exits or takes too long. Lines before
    it (a library that prints on import) are passed over."""
    found: list[str] = []
    seen: list[str] = []

    def read() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            if line.startswith(ANNOUNCE + "http://"):
                found.append(line.split()[-1])
                return
            seen.append(line.strip())

    reader = threading.Thread(target=read, daemon=True)
    started = time.monotonic()
    reader.start()
    reader.join(timeout_s)
    if not found:
        if not reader.is_alive():  # its stdout closed: the process is gone or on its way
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
        state = f"exited with {proc.poll()}" if proc.poll() is not None else f"said nothing in {timeout_s:g} s"
        last = f"; its last line on stdout {seen[-1]!r}" if seen else ""
        raise RuntimeError(f"{a(what)} did not start ({state}{last}); its errors are on stderr above")
    logger.info("%s %s up in %.1f s", what, found[0], time.monotonic() - started)
    return found[0]


def stop_processes(procs: list[subprocess.Popen]) -> None:
    """SIGTERM (a server closes what it holds), then SIGKILL for any still there after 10 s."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def watch_parent(pid: int, on_gone: Callable[[], Any], what: str, interval_s: float = 0.5) -> None:
    """Call `on_gone` once process `pid` (the run that started this server) is no longer this process's parent."""

    def watch() -> None:
        while os.getppid() == pid:
            time.sleep(interval_s)
        logger.warning("the run that started this %s (pid %d) is gone: stopping", what, pid)
        on_gone()

    threading.Thread(target=watch, daemon=True).start()


PR_SET_PDEATHSIG = 1  # Linux prctl option: a signal this process gets when its parent dies


def die_with_parent(pid: int, what: str) -> None:
    """This process ends when process `pid` is gone, however it ended: SIGKILL from the kernel at the parent's death
    where Linux offers it, and a watch on the parent's pid everywhere (it also covers a parent that died before the
    signal was asked for). For a server whose engine threads and child processes would keep it alive."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    watch_parent(pid, lambda: os._exit(0), what)


def reserve_stdout() -> TextIO:
    """Keep this process's stdout for the announce line alone: returns it, and sends everything else written to
    file descriptor 1 from now on (an engine's logs, a library's prints, child processes) to stderr. Nothing comes
    before the announce line, and no output fills a pipe that nobody reads once the URL is known."""
    sys.stdout.flush()
    announce = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return announce


def serve_until_stopped(server: JSONServer, announce: TextIO | None = None) -> None:
    """Announce the server's URL (the line `LocalServers` waits for) on `announce` (default: stdout) and serve until
    SIGTERM or SIGINT."""
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    out = announce or sys.stdout
    out.write(f"{ANNOUNCE}{server.url}\n")
    out.flush()
    if announce is not None:
        announce.close()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
