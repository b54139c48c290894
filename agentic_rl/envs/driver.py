"""The program that runs a CodeGym environment inside the sandbox (`DRIVER_SOURCE`), and how its answer is read.

Environment code is untrusted, so the trainer never imports or calls it: every reset and step is one sandbox
call that runs `DRIVER_SOURCE` with a JSON payload. The driver executes the environment's code in a fresh
namespace, rebuilds the environment from its serialized state, performs one operation and prints one result
line, prefixed by a per-call nonce, holding the new state as JSON.

Operations (`payload["op"]`):
  - "reset": build the class, `reset(options=...)`; answer the state, the tools (`func_mapping` names and
    their docstrings) and the class docstring;
  - "step": build the class, restore `state`, `step(action)`; answer observation, reward, terminated, state;
  - "verify": for each configuration, reset, run the scripted oracle (a function of the code named by the
    record's `oracle`, called as `oracle(call)` where `call(name, **parameters)` steps the environment and
    returns the observation), then check `Done(oracle answer)` scores 1, `get_ref_answer()` equals it, and
    `Done(wrong answer)` scores 0; answer one verdict per configuration (with `"trace": true` in the payload, each
    verdict also lists the oracle's actions, its Done last: `envs.verify.oracle_actions`).
State is the instance's attributes that JSON can hold (private names and gymnasium's own excluded); anything
else (func_mapping, spaces) is rebuilt by the constructor. A tuple therefore comes back as a list.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

DRIVER_SOURCE = r"""
import json, sys

_PAYLOAD = json.loads(__PAYLOAD__)
_NONCE = _PAYLOAD["nonce"]
_SKIP = {"np_random", "spec", "render_mode", "metadata", "action_space", "observation_space", "func_mapping"}


def _reply(obj):
    sys.stdout.write("\n" + _NONCE + json.dumps(obj) + "\n")
    sys.stdout.flush()


def _failure(exc):
    text = str(exc).strip().splitlines()
    return type(exc).__name__ + (": " + text[-1] if text else "")


def _state(env):
    out = {}
    for key, value in vars(env).items():
        if key.startswith("_") or key in _SKIP or callable(value):
            continue
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue
        out[key] = value
    return out


def _build(ns):
    cls = ns.get(_PAYLOAD["class_name"])
    if not isinstance(cls, type):
        raise LookupError("the environment code defines no class " + repr(_PAYLOAD["class_name"]))
    return cls()


def _tools(env):
    mapping = getattr(env, "func_mapping", None)
    if not isinstance(mapping, dict) or not mapping:
        raise TypeError("the environment has no func_mapping (a dict: tool name -> method)")
    # the public release maps names to action codes (ints): the documentation is then the method of that name's
    docs = {}
    for name, fn in mapping.items():
        fn = fn if callable(fn) else getattr(env, str(name), None)
        docs[str(name)] = (getattr(fn, "__doc__", None) or "").strip() if callable(fn) else ""
    return docs


def _step(env, action):
    out = env.step(action)
    if not (isinstance(out, tuple) and len(out) == 5):
        raise TypeError("step() must return (observation, reward, terminated, truncated, info)")
    obs, reward, terminated, truncated, _info = out
    return {"observation": str(obs), "reward": float(reward), "terminated": bool(terminated or truncated)}


def _verify(env_code_ns):
    oracle = env_code_ns.get(_PAYLOAD.get("oracle") or "")
    results = []
    for options in _PAYLOAD["configs"]:
        row = {"ok": False}
        try:
            env = _build(env_code_ns)
            env.reset(options=options)
            ref = env.get_ref_answer()  # before the oracle's calls change the state
            row["n_tools"] = len(_tools(env))
            calls = []

            def call(name, **parameters):
                if name == "Done":
                    raise RuntimeError("the oracle must return its answer, not call Done")
                calls.append({"name": name, "parameters": parameters})
                return _step(env, json.dumps({"name": name, "parameters": parameters}))["observation"]

            if oracle is None:
                raise LookupError("no oracle function " + repr(_PAYLOAD.get("oracle")) + " in the code")
            answer = oracle(call)
            row["calls"] = len(calls) + 1  # the oracle's tool calls and its Done
            row["distinct_tools"] = len({c["name"] for c in calls} | {"Done"})
            if _PAYLOAD.get("trace"):  # the oracle's actions, its Done last: a demonstration to replay
                row["actions"] = calls + [{"name": "Done", "parameters": {"answer": answer}}]
            row["matches_ref"] = json.dumps(answer, sort_keys=True) == json.dumps(ref, sort_keys=True)
            wrong_env = _build(env_code_ns)
            wrong_env.reset(options=options)
            row["wrong_reward"] = _step(wrong_env, _done(_wrong_answer(ref)))["reward"]
            row["reward"] = _step(env, _done(answer))["reward"]
            row["ok"] = True
        except BaseException as exc:
            row["error"] = _failure(exc)
        results.append(row)
    return results


def _done(answer):
    return json.dumps({"name": "Done", "parameters": {"answer": answer}})


def _wrong_answer(ref):
    if isinstance(ref, bool):
        return not ref
    if isinstance(ref, int):
        return ref + 1
    if isinstance(ref, float):
        return ref + 1.5
    if isinstance(ref, str):
        return ref + "#"
    if isinstance(ref, list):
        return ref + [ref[-1] if ref else 0] if ref else [0]
    if ref is None:
        return 0
    return [ref]


def _main():
    ns = {"__name__": "codegym_environment"}
    try:
        exec(compile(_PAYLOAD["code"], "<environment>", "exec"), ns)
    except BaseException as exc:
        _reply({"ok": False, "error": "the environment code does not run: " + _failure(exc)})
        return
    op = _PAYLOAD["op"]
    try:
        if op == "verify":
            _reply({"ok": True, "results": _verify(ns)})
            return
        env = _build(ns)
        if op == "reset":
            first = env.reset(options=_PAYLOAD["options"])
            obs = first[0] if isinstance(first, tuple) and len(first) == 2 else first
            _reply({"ok": True, "state": _state(env), "tools": _tools(env),
                    "doc": (type(env).__doc__ or "").strip(), "observation": str(obs)})
        elif op == "step":
            for key, value in _PAYLOAD["state"].items():
                setattr(env, key, value)
            out = _step(env, _PAYLOAD["action"])
            _reply({"ok": True, **out, "state": _state(env)})
        else:
            _reply({"ok": False, "error": "unknown driver operation " + repr(op)})
    except BaseException as exc:
        _reply({"ok": False, "error": _failure(exc)})


_main()
"""


def driver_program(payload: dict[str, Any]) -> tuple[str, str]:
    """The program text for one sandbox call and the nonce its result line starts with."""
    nonce = f"@@codegym-{secrets.token_hex(8)}@@"
    body = json.dumps({**payload, "nonce": nonce})
    return DRIVER_SOURCE.replace("__PAYLOAD__", repr(body), 1), nonce


def read_reply(stdout: str, nonce: str) -> dict[str, Any] | None:
    """The driver's result (the last line that starts with `nonce`), or None when it never answered."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(nonce):
            try:
                reply = json.loads(line[len(nonce) :])
            except ValueError:
                return None
            return reply if isinstance(reply, dict) else None
    return None
