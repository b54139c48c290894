"""The base class of the built-in CodeGym environments (standalone: it is sent to the sandbox as source text).

`ToolEnv` implements the paper's format once: `func_mapping` holds every method whose name starts with a
capital letter (the tools, `Observe` and `Done` included); `step(action)` parses the JSON action
`{"name": ..., "parameters": {...}}` and calls the tool (a result that is not a string is returned as JSON);
`Done(answer)` compares with the reference and ends the episode with reward 1 or 0. A subclass sets its task
configuration in `load(options)` and answers `Observe`, `get_ref_answer` (computed once, at reset, into
`ref_answer`, since the tools may change the state it reads) and its own tools. It keeps its state in
JSON-able attributes: the sandbox driver serializes them between calls. This file imports only the standard
library and gymnasium.
"""

import json

import gymnasium


class ToolEnv(gymnasium.Env):
    """Base of the built-in environments (see the module docstring)."""

    def __init__(self):
        super().__init__()
        self.func_mapping = {
            name: getattr(self, name)
            for name in dir(type(self))
            if name[:1].isupper() and callable(getattr(self, name))
        }

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.load(dict(options or {}))
        # fixed at reset: the tools may change the state the reference is computed from (a ledger's balances)
        self.ref_answer = self.get_ref_answer()
        return json.dumps(self.Observe()), {}

    def load(self, options):
        raise NotImplementedError

    def get_ref_answer(self):
        raise NotImplementedError

    def step(self, action):
        call = json.loads(action) if isinstance(action, str) else action
        name, params = call["name"], call.get("parameters") or {}
        if name not in self.func_mapping:
            raise KeyError(f"unknown tool {name!r}")
        if name == "Done":
            if "answer" not in params:
                raise TypeError("Done needs the parameter 'answer'")
            right = self._same(params["answer"], self.ref_answer)
            return (
                f"Your answer {params['answer']!r} is {'correct' if right else 'wrong'}.",
                1.0 if right else 0.0,
                True,
                False,
                {},
            )
        result = self.func_mapping[name](**params)
        # JSON, so that an agent (and the scripted oracle) reads numbers, lists and booleans back exactly
        return (result if isinstance(result, str) else json.dumps(result)), 0.0, False, False, {}

    @staticmethod
    def _same(a, b):
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)

    def Done(self, answer):
        """Submit the final answer; ends the episode (reward 1 if it is right, else 0). Parameters: answer."""
        return answer
