"""`python -m agentic_rl.envs.verify`: what it drops and why, and the loader's errors for a malformed file."""

from __future__ import annotations

import json

import pytest

from agentic_rl.envs.builtin import builtin_records
from agentic_rl.envs.tasks import load_codegym, read_environments
from agentic_rl.envs.verify import main

GOOD = {k: v for k, v in builtin_records()[0].items() if k != "oracle_calls"}  # MaxSubarraySumEnv, 12 configs


def write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def variant(env_id, **changes):
    return {**GOOD, "env_id": env_id, **changes}


def run_verify(tmp_path, records, *extra):
    src = write(tmp_path / "envs.jsonl", records)
    assert main([str(src), "--out", str(tmp_path / "kept.jsonl"), *extra]) == 0
    report = json.loads((tmp_path / "kept.report.json").read_text())
    kept = {r["env_id"]: r for r in read_environments(tmp_path / "kept.jsonl")} if report["environments_kept"] else {}
    return kept, report


def test_the_report_says_what_was_dropped_and_why(tmp_path):
    lenient = GOOD["code"] + "\n\ndef lenient_done(self, answer):\n    return ('ok', 1.0, True, False, {})\n"
    lenient = lenient.replace(
        "class MaxSubarraySumEnv(ToolEnv):",
        "class MaxSubarraySumEnv(ToolEnv):\n"
        "    def step(self, action):\n"
        "        out = ToolEnv.step(self, action)\n"
        "        return (out[0], 1.0, True, False, {}) if out[2] else out\n",
        1,
    )
    records = [
        variant("ok"),
        variant("bad_oracle", oracle="oracle_rotate"),  # another env's oracle: wrong tools
        variant("no_class", class_name="Missing"),
        variant(
            "few_tools",
            class_name="FewTools",
            code=GOOD["code"] + "\n\nclass FewTools(ToolEnv):\n"
            "    def load(self, o):\n        self.nums = o['nums']\n"
            "    def Observe(self):\n        return len(self.nums)\n"
            "    def get_ref_answer(self):\n        return 0\n",
        ),
        variant("rewards_anything", code=lenient),
        variant("short", configs=[{"nums": [1, 2]}]),  # 2 elements: fewer than 10 calls
    ]
    kept, report = run_verify(tmp_path, records)
    assert set(kept) == {"ok"} and kept["ok"]["oracle_calls"] and len(kept["ok"]["configs"]) == 12
    reasons = {d["env_id"]: d["reason"] for d in report["dropped_configs"]}
    assert reasons["bad_oracle"] in ("oracle_failed", "error")
    assert reasons["no_class"] == "error" and reasons["rewards_anything"] == "wrong_answer_rewarded"
    assert reasons["short"] == "too_few_calls"
    assert report["dropped_environments"]["few_tools"].startswith("too_few_tools")
    assert report["environments_in"] == 6 and report["environments_kept"] == 1


def test_difficulty_filter_and_pass_at_k_use_a_policys_measured_success(tmp_path):
    ids = [f"codegym/ok/{i:03d}" for i in range(12)]
    success = tmp_path / "results.jsonl"
    rows = [{"task_id": ids[0], "passed": p} for p in (True, True, False, False)]  # 50%: too easy
    rows += [{"task_id": ids[1], "passed": p} for p in (True, False, False, False)]  # 25%: kept
    success.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kept, report = run_verify(tmp_path, [variant("ok")], "--success", str(success))
    assert [d["config_index"] for d in report["dropped_configs"] if d["reason"] == "too_easy"] == [0]
    assert len(kept["ok"]["configs"]) == 11
    # the policy's success beside the constant-answer baseline's on the same two configurations (their reference
    # answers differ, 25 and 0: the best constant solves one of the two)
    beside = report["success_vs_constant"]
    assert beside["configs"] == 2 and beside["success_rate"] == pytest.approx(3 / 8)
    assert beside["constant_success_rate"] == pytest.approx(0.5)
    # without an oracle, only configurations some sample solved (pass@K) are kept
    kept, report = run_verify(tmp_path, [variant("ok", oracle=None)], "--success", str(success))
    assert len(kept["ok"]["configs"]) == 1 and kept["ok"]["configs"][0] == GOOD["configs"][1]
    assert report["dropped_reasons"] == {"too_easy": 1, "unsolved": 10}


@pytest.mark.parametrize(
    "line, message",
    [
        ("not json", "not JSON"),
        ('["a list"]', "must be a JSON object"),
        ('{"env_id": "x", "class_name": "C", "code": "", "configs": []}', "non-empty list"),
        ('{"env_id": "x", "class_name": "C", "code": ""}', "'configs' must be a list"),
        ('{"env_id": "x", "class_name": "C", "code": "", "configs": [{}], "split": "test"}', "split must be"),
    ],
)
def test_a_file_in_the_wrong_format_is_a_clear_error(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(ValueError, match=message) as err:
        load_codegym(path=str(path))
    assert "line 1" in str(err.value)
    assert main([str(path)]) == 2  # the command says so and exits, no traceback


def test_missing_file_names_the_setting(tmp_path):
    with pytest.raises(FileNotFoundError, match="data.path"):
        load_codegym(path=str(tmp_path / "none.jsonl"))
