"""The one framing of the sandbox's channels: each message a 4-byte big-endian length and UTF-8 JSON.

Used by the client-server protocol (`client.py`, `server.py`), the runner's request pipe
(`supervisor.py`) and the channel between the tests' process and the candidate's (`remote.py`, strict:
no NaN or infinity in the JSON, a smaller size limit). Standard library only: it runs under the sandbox
interpreter too.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time

MAX_MESSAGE_BYTES = 256 * 1024 * 1024


def write_msg(fd: int, obj: object, *, strict: bool = False) -> None:
    """Write one message. `strict`: JSON as the standard has it (NaN or infinity raise ValueError)."""
    data = json.dumps(obj, allow_nan=not strict, separators=(",", ":")).encode("utf-8")
    view = memoryview(struct.pack(">I", len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def read_msg(fd: int, timeout_s: float | None = None, max_bytes: int = MAX_MESSAGE_BYTES) -> object:
    """Read one message; EOFError when the other side closed, TimeoutError past `timeout_s`, ValueError
    for one over `max_bytes` or not JSON (RecursionError for JSON nested past the parser's depth)."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    (n,) = struct.unpack(">I", _read_exact(fd, 4, deadline))
    if n > max_bytes:
        raise ValueError(f"message of {n} bytes is too large")
    return json.loads(_read_exact(fd, n, deadline).decode("utf-8"))


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError("no reply from the sandbox server")
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise EOFError("the sandbox server closed the channel")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


# --------------------------------------------------------------------------------------------------
# thin libc wrappers
