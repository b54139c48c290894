"""The pairs of the table's section "Tool sets compared" (issue #46, the tools ablation): each arm's trained policy
in the evaluation mode of the tool set it trained with, set against the other arms' on the same seeds, tasks and
samples.

The modes-compared section asks one policy in three modes, so a policy trained only with every tool is asked in
modes it never practised. This one asks three policies, each trained for its own tools: the arm `tools=code` in
`code_only`, the default in `multi_tool`. An arm's mode is read from its runs' own config: the evaluation mode whose
tool set has the run's `tools.name` (the format baselines, which grade another mode's episodes, left out).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Collection
from pathlib import Path

from agentic_rl.reports.run_files import read_config, read_eval_records
from agentic_rl.reports.runs import run_seed, scored_outcomes

logger = logging.getLogger(__name__)

FEWER_TOOLS_FIRST = ("none", "code", "multi")  # side a has fewer tools, so b - a reads as what the extra tools add
Pair = tuple[str, bool, bool]  # (task id, passed on side a, passed on side b)


def own_mode(run: Path, format_baselines: Collection[str]) -> tuple[str, str] | None:
    """(the run's tool set name, the first evaluated mode with that tool set), or None where its config does not
    say (no `.hydra/config.yaml`, or no evaluated mode with its tools)."""
    cfg = read_config(run)
    tools = (cfg.get("tools") or {}).get("name")
    evaluator = cfg.get("evaluator") or {}
    toolsets = evaluator.get("toolsets") or {}
    for mode in evaluator.get("modes") or []:
        if mode not in format_baselines and (toolsets.get(mode) or {}).get("name") == tools:
            return tools, mode
    return None


def arm_mode(label: str, runs: list[Path], format_baselines: Collection[str]) -> tuple[str, str] | None:
    """The arm's (tool set, mode), when every run of it agrees on one; else None, with a warning."""
    found = {own_mode(run, format_baselines) for run in runs}
    if len(found) == 1 and None not in found:
        return found.pop()
    logger.warning("table: the arm `%s` has no one tool set and mode in its runs' configs (%s): left out", label, found)
    return None


def _order(tools: str) -> tuple[int, str]:
    known = tools in FEWER_TOOLS_FIRST
    return (FEWER_TOOLS_FIRST.index(tools) if known else len(FEWER_TOOLS_FIRST), tools)


def tool_set_pairs(
    arms: dict[str, list[Path]], format_baselines: Collection[str]
) -> list[tuple[dict[str, str | int], list[Pair]]]:
    """For each two arms trained with different tool sets: the row's keys (arm, tool set and mode of each side, the
    seeds both ran) and the (task, passed a, passed b) pairs of their episodes after training on the same (seed,
    task, sample), side a the arm with fewer tools."""
    sides = {}
    for label, runs in arms.items():
        if (found := arm_mode(label, runs, format_baselines)) is not None:
            tools, mode = found
            outcomes = {
                (seed, task, sample): passed
                for run in runs
                if (seed := run_seed(run)) is not None
                for (m, task, sample), passed in scored_outcomes(read_eval_records(run, "after")).items()
                if m == mode
            }
            sides[label] = (tools, mode, outcomes)
    found_pairs = []
    for a, b in itertools.combinations(sorted(sides, key=lambda label: _order(sides[label][0])), 2):
        (tools_a, mode_a, out_a), (tools_b, mode_b, out_b) = sides[a], sides[b]
        matched = sorted(out_a.keys() & out_b.keys())
        if tools_a == tools_b or not matched:
            continue
        keys = {"a": a, "tools_a": tools_a, "mode_a": mode_a, "b": b, "tools_b": tools_b, "mode_b": mode_b}
        keys["seeds"] = len({key[0] for key in matched})
        found_pairs.append((keys, [(key[1], out_a[key], out_b[key]) for key in matched]))
    return found_pairs
