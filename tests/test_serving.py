"""agentic_rl.serving, what the environment and sampler servers share (their own tests: tests/envs/test_serve.py,
tests/rollout/test_sampler_service.py): a starting server's URL is found past anything a library prints first, a
server's stdout carries that line alone, a client reports a dead server, a refusal and a protocol's own status each
as what they are, and a route that fails leaves the server serving."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from agentic_rl.serving import BadRequest, JSONClient, JSONServer, announced_url


def spawn(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_the_url_is_found_past_lines_a_library_printed_first():
    proc = spawn("print('INFO engine starting'); print('listening on http://127.0.0.1:5', flush=True)")
    assert announced_url(proc, 60, "sampler server") == "http://127.0.0.1:5"
    proc.wait()
    quiet = spawn("print('INFO engine failed'); raise SystemExit(3)")
    with pytest.raises(RuntimeError, match=r"a sampler server did not start \(exited with 3; .*'INFO engine failed'"):
        announced_url(quiet, 60, "sampler server")


def test_a_servers_stdout_carries_the_announce_line_alone():
    proc = spawn(
        "import os, sys\n"
        "from agentic_rl.serving import reserve_stdout\n"
        "announce = reserve_stdout()\n"
        "print('a library log line')\n"
        "os.system('echo a child process')\n"
        "announce.write('listening on http://127.0.0.1:7\\n'); announce.close()\n"
        "print('after')\n"
    )
    out, err = proc.communicate(timeout=60)
    assert out == "listening on http://127.0.0.1:7\n"
    assert "a library log line" in err and "a child process" in err and "after" in err


class Echo(JSONServer):
    what = "echo server"
    statuses = ((BadRequest, 400), (KeyError, 404))

    def get_routes(self):
        return {"/health": lambda: {"protocol": 1}}

    def post_routes(self):
        def echo(body):
            if "missing" in body:
                raise KeyError("no such thing")
            if "bad" in body:
                raise BadRequest("bad is not a field")
            if "crash" in body:
                raise ZeroDivisionError("boom")
            return body

        return {"/echo": echo}


class Client(JSONClient):
    what = "echo server"
    status_causes = {404: "lost"}  # noqa: RUF012  (a test's table)

    def down(self, cause, message):
        return ConnectionError(cause, message)

    def refused(self, message):
        return PermissionError(message)


@pytest.fixture
def echo():
    server = Echo("127.0.0.1", 0, "t0ken")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_a_client_tells_refusals_from_failures_and_a_failing_route_leaves_the_server_up(echo):
    client = Client(echo.url, "t0ken", timeout_s=30)
    assert client.health() == {"protocol": 1} and client.post("echo", {"x": 1}) == {"x": 1}
    with pytest.raises(PermissionError, match=r"refused the request \(401\).*needs its token"):
        Client(echo.url, "wrong").post("echo", {"x": 1})
    with pytest.raises(PermissionError, match=r"refused the request \(400\): bad is not a field"):
        client.post("echo", {"bad": 1})
    with pytest.raises(ConnectionError) as lost:
        client.post("echo", {"missing": 1})
    assert lost.value.args[0] == "lost"
    with pytest.raises(ConnectionError) as crashed:
        client.post("echo", {"crash": 1})
    assert crashed.value.args[0] == "server_error" and "ZeroDivisionError: boom" in crashed.value.args[1]
    assert client.post("echo", {"y": 2}) == {"y": 2}  # still serving
    with pytest.raises(ConnectionError) as gone:
        Client("http://127.0.0.1:1").health()
    assert gone.value.args[0] == "server_died"
    with pytest.raises(ValueError, match="needs a token"):
        Echo("0.0.0.0", 0, None)
