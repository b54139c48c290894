"""The intervals and the power calculation against hand-computed values (and scipy, where it is installed)."""

from __future__ import annotations

import math

import pytest

from agentic_rl.reports.stats import mean_ci, t975, tasks_to_separate, wilson_interval


def test_t_quantiles_match_scipy_for_small_and_large_df():
    stats = pytest.importorskip("scipy.stats")
    for df in [*range(1, 61), 100, 200, 1000]:
        assert t975(df) == pytest.approx(stats.t.ppf(0.975, df), abs=2e-6), df


def test_t_quantiles_known_values_and_bad_df():
    assert t975(2) == pytest.approx(4.302653, abs=1e-6)  # 3 seeds
    assert t975(4) == pytest.approx(2.776445, abs=1e-6)  # 5 seeds
    with pytest.raises(ValueError, match="at least 2 values"):
        t975(0)


def test_mean_ci_is_the_t_interval_of_the_mean():
    # mean 0.3, sample sd 0.1, n 3: half width t(0.975, 2) * 0.1 / sqrt(3) = 4.302653 * 0.057735 = 0.248414
    mean, low, high = mean_ci([0.2, 0.3, 0.4])
    assert (mean, low, high) == (
        pytest.approx(0.3),
        pytest.approx(0.051586, abs=1e-6),
        pytest.approx(0.548414, abs=1e-6),
    )
    assert mean_ci([0.1, 0.1, 0.1]) == pytest.approx((0.1, 0.1, 0.1))  # no spread, no width
    assert mean_ci([0.7]) == (0.7, 0.7, 0.7)  # one value: no spread to estimate
    with pytest.raises(ValueError):
        mean_ci([])


def test_wilson_interval_over_pooled_tasks():
    # 9 of 30: centre (0.3 + z^2/60) / (1 + z^2/30) = 0.322703, half 0.156055
    assert wilson_interval(9, 30) == (pytest.approx(0.166647, abs=1e-6), pytest.approx(0.478758, abs=1e-6))
    stats = pytest.importorskip("scipy.stats")
    ci = stats.binomtest(3, 10).proportion_ci(method="wilson")
    assert wilson_interval(3, 10) == (pytest.approx(ci.low), pytest.approx(ci.high))


def test_tasks_to_separate_two_proportions():
    # p 0.1 vs 0.2: p_bar 0.15; (1.959964 * sqrt(0.255) + 0.841621 * sqrt(0.25))^2 / 0.01 = 198.97 -> 199
    assert tasks_to_separate(0.1, 0.2) == 199
    # p 0.3 vs 0.5: (1.959964 * sqrt(0.48) + 0.841621 * sqrt(0.46))^2 / 0.04 = 92.9987 -> 93
    assert tasks_to_separate(0.3, 0.5) == tasks_to_separate(0.5, 0.3) == 93
    assert tasks_to_separate(0.3, 0.5, power=0.9) > 93  # more power needs more tasks
    assert math.isinf(tasks_to_separate(0.25, 0.25))
    with pytest.raises(ValueError, match="not a proportion"):
        tasks_to_separate(1.5, 0.2)
