"""Uncertainty of the numbers a study reports: a mean across seeds, a pass rate over tasks, and the number of
tasks a comparison would need.

- `mean_ci`: mean of per-seed values with a two-sided 95% Student-t interval, mean ± t(0.975, n-1)·s/√n, s the
  sample standard deviation. With 3 seeds t = 4.30: seeds are few, and the interval says so.
- `wilson_interval`: 95% Wilson score interval of a proportion (Wilson 1927); sound at small n and at 0 or n
  successes, where the normal approximation collapses to a zero-width bar.
- `tasks_to_separate`: tasks per arm a two-sided two-proportion z-test needs to tell two pass rates apart
  (Fleiss, "Statistical Methods for Rates and Proportions", the formula without continuity correction):

      n = (z(1-α/2)·√(2·p̄·(1-p̄)) + z(power)·√(p1·(1-p1) + p2·(1-p2)))² / (p1 - p2)²,  p̄ = (p1 + p2) / 2.

  It treats each task as an independent trial at the measured rates, so it is a lower bound when tasks differ in
  difficulty more than the arms do.
- `PairedChange`: before vs after training on the same tasks. Each task (and seed) is a pair of outcomes, so
  what carries the information is the discordant pairs: tasks gained (failed before, passed after) and tasks
  lost. The test is McNemar's exact test (a two-sided binomial test of gained against gained + lost at 1/2); the
  95% interval of the change in pass rate is Newcombe's hybrid score interval for paired proportions ("Improved
  confidence intervals for the difference between binomial proportions based on paired data", Statistics in
  Medicine 1998, method 10), built from the two rates' Wilson intervals and the pairs' phi correlation; the
  pairs a paired test would need is Connor's formula (Biometrics 1987):

      n = (z(1-α/2)·√ψ + z(power)·√(ψ - δ²))² / δ²,  ψ = p(gained) + p(lost),  δ = p(gained) - p(lost).

  Pooling seeds × tasks × samples into pairs treats them as independent; they are not (the base evaluation is one
  greedy run copied into every seed; the seeds agree on most tasks), so `PairedChange` is only a secondary,
  "pooled pairs" figure: its interval is too narrow and its p too small by the design effect.
- The primary test takes the task as the unit (`TaskDifference`): each task's outcomes are averaged over its pairs
  (seeds and samples) into one mean per side, and the claim is about the mean over tasks of the task differences:
  its 95% interval is the percentile bootstrap over tasks (Efron & Tibshirani 1993, ch. 13; `bootstrap_interval`,
  seeded, so a table rewrites byte for byte) and its p-value the exact two-sided sign test on the tasks whose mean
  rose against those whose mean fell (ties dropped; `sign_test_p`). Neither assumes a distribution of the task
  differences, which here are few distinct values in [-1, 1].
- `holm_adjust`: Holm's step-down adjustment of a family of p-values (Holm 1979), valid under any dependence
  between the tests: p_(i) -> max over j <= i of min(1, (m - j + 1) · p_(j)), p sorted ascending.

Intervals are never clipped: a bound outside [0, 1] (a t interval of few seeds) says that the seeds are too few.

The t quantiles for df ≤ 30 are tabulated (values of scipy.stats.t.ppf(0.975, df), checked against scipy in
tests/reports/test_stats.py); above 30 the Cornish-Fisher expansion in the normal quantile is exact to 1e-7. The
bootstrap draws with numpy (a dependency of matplotlib and transformers), vectorised over resamples.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

# t(0.975, df) for df = 1..30
_T975 = (
    12.706205,
    4.302653,
    3.182446,
    2.776445,
    2.570582,
    2.446912,
    2.364624,
    2.306004,
    2.262157,
    2.228139,
    2.200985,
    2.178813,
    2.160369,
    2.144787,
    2.131450,
    2.119905,
    2.109816,
    2.100922,
    2.093024,
    2.085963,
    2.079614,
    2.073873,
    2.068658,
    2.063899,
    2.059539,
    2.055529,
    2.051831,
    2.048407,
    2.045230,
    2.042272,
)
Z975 = NormalDist().inv_cdf(0.975)


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with `df` degrees of freedom (the 95% two-sided critical value)."""
    if df < 1:
        raise ValueError(f"a t interval needs at least 2 values (df >= 1), got df={df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = Z975
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
        + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * df**4)
    )


def mean_ci(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, low, high): the 95% t interval of the mean of `values` (one per seed).

    >>> [round(x, 4) for x in mean_ci([0.1, 0.2, 0.3])]  # s = 0.1, t(0.975, 2) = 4.3027
    [0.2, -0.0484, 0.4484]

    A single value has no spread to estimate: its interval is the point (callers that know the value's own
    sampling error, e.g. a pass rate over n tasks, show `wilson_interval` instead).
    """
    if not values:
        raise ValueError("mean_ci of no values")
    n = len(values)
    mean = sum(values) / n
    if n == 1:
        return mean, mean, mean
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t975(n - 1) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def wilson_interval(successes: float, n: int, z: float = Z975) -> tuple[float, float]:
    """95% Wilson score interval of `successes` out of `n` (n <= 0: nothing measured, the whole range)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def tasks_to_separate(p1: float, p2: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Tasks per arm for a two-sided two-proportion test at level `alpha` to detect p1 != p2 with `power`.

    >>> tasks_to_separate(0.1, 0.2)  # the textbook case: 199 per arm
    199

    Equal rates give math.inf: no number of tasks tells apart arms that measured the same.
    """
    for name, p in (("p1", p1), ("p2", p2)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name}={p} is not a proportion in [0, 1]")
    if p1 == p2:
        return math.inf
    z_alpha = NormalDist().inv_cdf(1 - alpha / 2)
    z_power = NormalDist().inv_cdf(power)
    pooled = (p1 + p2) / 2
    root = z_alpha * math.sqrt(2 * pooled * (1 - pooled)) + z_power * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return math.ceil(root**2 / (p1 - p2) ** 2)


def sign_test_p(up: int, down: int) -> float:
    """Two-sided p-value of the exact sign test: under "no difference" each untied unit is as likely to go up as
    down, so `up` ~ Binomial(up + down, 1/2); ties are left out before calling.

    >>> round(sign_test_p(9, 1), 4)  # 2 * P(X <= 1), X ~ Bin(10, 0.5) = 2 * 11/1024
    0.0215
    """
    if up < 0 or down < 0:
        raise ValueError(f"counts must be >= 0, got up={up}, down={down}")
    n = up + down
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(up, down) + 1)) / 2**n
    return min(1.0, 2 * tail)


def mcnemar_exact_p(gained: int, lost: int) -> float:
    """Two-sided p-value of McNemar's exact test: the sign test on the discordant pairs (under "training changed
    nothing" a discordant pair is as likely to be a gain as a loss)."""
    return sign_test_p(gained, lost)


def pairs_to_resolve(p_gained: float, p_lost: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Pairs (tasks x seeds) a two-sided paired test at level `alpha` needs to detect the measured change with
    `power` (Connor 1987). No discordant difference (p_gained == p_lost) gives math.inf."""
    for name, p in (("p_gained", p_gained), ("p_lost", p_lost)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name}={p} is not a proportion in [0, 1]")
    if p_gained + p_lost > 1.0 + 1e-12:
        raise ValueError(f"p_gained + p_lost = {p_gained + p_lost} exceeds 1")
    delta = p_gained - p_lost
    if delta == 0:
        return math.inf
    psi = p_gained + p_lost
    z_alpha = NormalDist().inv_cdf(1 - alpha / 2)
    z_power = NormalDist().inv_cdf(power)
    root = z_alpha * math.sqrt(psi) + z_power * math.sqrt(max(psi - delta**2, 0.0))
    return math.ceil(root**2 / delta**2)


def _combined_gap(gap_after: float, gap_before: float, phi: float) -> float:
    """One arm of Newcombe's interval: the two Wilson half-widths combined, less their correlation."""
    return math.sqrt(max(gap_after**2 - 2 * phi * gap_after * gap_before + gap_before**2, 0.0))


@dataclass(frozen=True)
class PairedChange:
    """Outcomes of the same tasks before and after: `both` passed both times, `gained` only after, `lost` only
    before, `neither` never."""

    both: int
    gained: int
    lost: int
    neither: int

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[bool, bool]]) -> PairedChange:
        """From (passed before, passed after) pairs."""
        counts = {(True, True): 0, (False, True): 0, (True, False): 0, (False, False): 0}
        for before, after in pairs:
            counts[(bool(before), bool(after))] += 1
        return cls(counts[(True, True)], counts[(False, True)], counts[(True, False)], counts[(False, False)])

    @property
    def n(self) -> int:
        return self.both + self.gained + self.lost + self.neither

    @property
    def before(self) -> float:
        return (self.both + self.lost) / self.n if self.n else 0.0

    @property
    def after(self) -> float:
        return (self.both + self.gained) / self.n if self.n else 0.0

    @property
    def change(self) -> float:
        """after - before, in pass rate."""
        return (self.gained - self.lost) / self.n if self.n else 0.0

    def interval(self, z: float = Z975) -> tuple[float, float]:
        """Newcombe's hybrid score interval (method 10) of `change`; (-1, 1) with no pairs."""
        if self.n == 0:
            return -1.0, 1.0
        a, b, c, d = self.both, self.gained, self.lost, self.neither  # b: after only, c: before only
        after, before = self.after, self.before
        low_after, high_after = wilson_interval(a + b, self.n, z)
        low_before, high_before = wilson_interval(a + c, self.n, z)
        margins = (a + b) * (c + d) * (a + c) * (b + d)
        phi = (a * d - b * c) / math.sqrt(margins) if margins else 0.0
        below = _combined_gap(after - low_after, high_before - before, phi)
        above = _combined_gap(high_after - after, before - low_before, phi)
        return max(-1.0, self.change - below), min(1.0, self.change + above)

    @property
    def p_value(self) -> float:
        return mcnemar_exact_p(self.gained, self.lost)

    @property
    def pairs_needed(self) -> float:
        """Pairs that would resolve the measured change (math.inf when gained == lost)."""
        if self.n == 0:
            return math.inf
        return pairs_to_resolve(self.gained / self.n, self.lost / self.n)

    def as_dict(self) -> dict[str, float | int]:
        low, high = self.interval()
        return {
            "n": self.n,
            "both": self.both,
            "gained": self.gained,
            "lost": self.lost,
            "neither": self.neither,
            "before": self.before,
            "after": self.after,
            "change": self.change,
            "low": low,
            "high": high,
            "p_value": self.p_value,
            "pairs_needed": self.pairs_needed,
        }


@dataclass(frozen=True)
class Bootstrap:
    """How a bootstrap interval is drawn: `resamples` resamples from numpy's default generator seeded with `seed`
    (a fixed seed makes a table reproducible byte for byte)."""

    resamples: int = 10_000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.resamples < 1:
            raise ValueError(f"bootstrap resamples must be >= 1, got {self.resamples}")


DEFAULT_BOOTSTRAP = Bootstrap()  # 10,000 resamples, seed 0: what `python -m agentic_rl.table` draws unless told


def bootstrap_interval(values: Sequence[float], spec: Bootstrap = DEFAULT_BOOTSTRAP) -> tuple[float, float]:
    """The 95% percentile bootstrap interval of the mean of `values` (one per task): the 2.5% and 97.5% quantiles
    of the means of `spec.resamples` resamples of the values with replacement. Deterministic given `spec.seed`
    and the order of `values` (callers pass them in task-id order). Resamples are drawn in blocks of 1,000 so
    that memory stays at 1,000 x len(values) indices.

    >>> bootstrap_interval([0.5, 0.5, 0.5])  # no spread: the interval is the point
    (0.5, 0.5)
    """
    if not values:
        raise ValueError("a bootstrap interval of no values")
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(spec.seed)
    means = []
    for start in range(0, spec.resamples, 1000):
        block = min(1000, spec.resamples - start)
        means.append(data[rng.integers(0, len(data), size=(block, len(data)))].mean(axis=1))
    low, high = np.quantile(np.concatenate(means), [0.025, 0.975])
    return float(low), float(high)


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: sorted ascending, the i-th smallest (from 1) is
    multiplied by m - i + 1, capped at 1, and made non-decreasing along the order. A test holds at level alpha
    after the correction when its adjusted p is at most alpha.

    >>> holm_adjust([0.01, 0.04, 0.03])  # 3 * 0.01, max(0.03, 2 * 0.03), max(0.06, 1 * 0.04)
    [0.03, 0.06, 0.06]
    """
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def task_sums(pairs: Iterable[tuple[str, bool, bool]]) -> dict[str, tuple[int, int, int]]:
    """Task id -> (pairs, passed on side a, passed on side b) over its (task id, a passed, b passed) pairs: one pair
    per seed and sample of the task. Integer sums, so a task's sign is exact (no float residue of its mean)."""
    sums: dict[str, tuple[int, int, int]] = {}
    for task, a, b in pairs:
        n, k_a, k_b = sums.get(task, (0, 0, 0))
        sums[task] = (n + 1, k_a + bool(a), k_b + bool(b))
    return sums


@dataclass(frozen=True)
class TaskDifference:
    """The primary paired test, tasks as the unit: `rate_a`, `rate_b` the means over tasks of each task's pass
    rate (over its seeds and samples), `difference` = rate_b - rate_a with its percentile bootstrap 95% interval
    over tasks, and the sign test on the tasks whose mean went up against those whose mean went down."""

    tasks: int
    rate_a: float
    rate_b: float
    difference: float
    low: float
    high: float
    up: int
    down: int
    tied: int
    resamples: int
    seed: int

    @classmethod
    def from_sums(cls, sums: Mapping[str, tuple[int, int, int]], spec: Bootstrap = DEFAULT_BOOTSTRAP) -> TaskDifference:
        """From `task_sums`; tasks in id order, so the bootstrap does not depend on the order pairs came in."""
        if not sums:
            raise ValueError("a task-level difference of no tasks")
        rows = [sums[task] for task in sorted(sums)]
        a = [k_a / n for n, k_a, _ in rows]
        b = [k_b / n for n, _, k_b in rows]
        low, high = bootstrap_interval([y - x for x, y in zip(a, b)], spec)
        up = sum(k_b > k_a for _, k_a, k_b in rows)
        down = sum(k_b < k_a for _, k_a, k_b in rows)
        rate_a, rate_b = sum(a) / len(a), sum(b) / len(b)
        tied = len(rows) - up - down
        return cls(len(rows), rate_a, rate_b, rate_b - rate_a, low, high, up, down, tied, spec.resamples, spec.seed)

    @property
    def p_value(self) -> float:
        return sign_test_p(self.up, self.down)

    def as_dict(self) -> dict[str, float | int]:
        return {**self.__dict__, "p_value": self.p_value}


def task_rate(outcomes: Iterable[tuple[str, bool]]) -> dict[str, float | int]:
    """A pass rate with the task as the unit, from (task id, passed) episodes (several seeds and samples of a
    task): the mean over tasks of each task's pass rate, with the 95% Wilson interval of that sum over the tasks.
    A task's pass rate lies in [0, 1], so its variance is at most that of a single pass/fail at the same mean: the
    interval is the binomial one at worst conservative, and unlike a bootstrap it keeps its width at 0/n and n/n.
    `episodes` and `passed` count the episodes behind it.

    >>> {k: round(v, 3) for k, v in task_rate([("a", True), ("a", False), ("b", False)]).items()}
    {'tasks': 2, 'rate': 0.25, 'low': 0.027, 'high': 0.802, 'episodes': 3, 'passed': 1}
    """
    sums = task_sums((task, False, passed) for task, passed in outcomes)
    if not sums:
        raise ValueError("a task-level pass rate of no episodes")
    means = [k / n for n, _, k in (sums[task] for task in sorted(sums))]
    low, high = wilson_interval(sum(means), len(means))
    episodes, passed = sum(n for n, _, _ in sums.values()), sum(k for _, _, k in sums.values())
    return {
        "tasks": len(means),
        "rate": sum(means) / len(means),
        "low": low,
        "high": high,
        "episodes": episodes,
        "passed": passed,
    }
