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

Only the standard library: the t quantiles for df ≤ 30 are tabulated (values of scipy.stats.t.ppf(0.975, df),
checked against scipy in tests/tracking/test_stats.py); above 30 the Cornish-Fisher expansion in the normal
quantile is exact to 1e-7.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

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


def mcnemar_exact_p(gained: int, lost: int) -> float:
    """Two-sided p-value of McNemar's exact test: under "training changed nothing" each discordant pair is as
    likely to be a gain as a loss, so `gained` ~ Binomial(gained + lost, 1/2).

    >>> round(mcnemar_exact_p(9, 1), 4)  # 2 * P(X <= 1), X ~ Bin(10, 0.5) = 2 * 11/1024
    0.0215
    """
    if gained < 0 or lost < 0:
        raise ValueError(f"counts must be >= 0, got gained={gained}, lost={lost}")
    n = gained + lost
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(gained, lost) + 1)) / 2**n
    return min(1.0, 2 * tail)


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
