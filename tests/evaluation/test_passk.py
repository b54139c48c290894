"""pass@k against hand-computed values and the closed form 1 - C(n-c, k) / C(n, k)."""

from __future__ import annotations

import math

import pytest

from agentic_rl.evaluation.passk import mean_pass_at_k, pass_at_k


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),  # c / n
        (5, 2, 2, 0.7),  # 1 - C(3,2)/C(5,2) = 1 - 3/10
        (5, 2, 3, 0.9),  # 1 - C(3,3)/C(5,3) = 1 - 1/10
        (5, 2, 4, 1.0),  # n - c = 3 < k: every draw has a correct one
        (5, 0, 1, 0.0),
        (5, 0, 5, 0.0),
        (5, 5, 1, 1.0),
        (1, 1, 1, 1.0),
        (1, 0, 1, 0.0),
        (10, 1, 1, 0.1),
        (10, 3, 5, 1 - 21 / 252),  # C(7,5) = 21, C(10,5) = 252
        (4, 1, 2, 0.5),  # 1 - C(3,2)/C(4,2) = 1 - 3/6
    ],
)
def test_hand_computed(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_matches_closed_form_on_a_grid() -> None:
    for n in range(1, 16):
        for c in range(n + 1):
            for k in range(1, n + 1):
                exact = 1.0 - math.comb(n - c, k) / math.comb(n, k)
                assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-12), (n, c, k)


def test_large_n_is_stable() -> None:
    # C(1000, 500) overflows a float; the product form does not.
    assert pass_at_k(1000, 1, 1) == pytest.approx(0.001, abs=1e-15)
    assert pass_at_k(1000, 1, 500) == pytest.approx(0.5, abs=1e-12)
    value = pass_at_k(1000, 10, 100)
    assert 0.0 < value < 1.0 and math.isfinite(value)
    assert pass_at_k(1000, 10, 100) == pytest.approx(1 - math.comb(990, 100) / math.comb(1000, 100), rel=1e-12)


def test_monotone_in_k_and_c() -> None:
    assert [pass_at_k(20, 3, k) for k in range(1, 21)] == sorted(pass_at_k(20, 3, k) for k in range(1, 21))
    assert [pass_at_k(20, c, 4) for c in range(21)] == sorted(pass_at_k(20, c, 4) for c in range(21))


@pytest.mark.parametrize(
    ("n", "c", "k", "match"),
    [
        (5, 6, 1, "c=6"),  # more correct than samples
        (5, -1, 1, "c=-1"),
        (5, 2, 0, "k=0"),
        (5, 2, -1, "k=-1"),
        (5, 2, 6, "k=6 > n=5"),
        (0, 0, 1, "n=0"),
    ],
)
def test_invalid_arguments(n: int, c: int, k: int, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        pass_at_k(n, c, k)


@pytest.mark.parametrize("args", [(5.0, 2, 1), (5, 2.0, 1), (5, 2, True), ("5", 2, 1)])
def test_non_int_arguments(args: tuple) -> None:
    with pytest.raises(TypeError):
        pass_at_k(*args)


def test_mean_pass_at_k() -> None:
    assert mean_pass_at_k([(5, 2), (5, 0)], 1) == pytest.approx(0.2)
    assert mean_pass_at_k([(5, 2), (5, 5), (5, 0)], 2) == pytest.approx((0.7 + 1.0 + 0.0) / 3)
    assert mean_pass_at_k([(1, 1), (1, 0), (1, 1), (1, 1)], 1) == pytest.approx(0.75)
    assert mean_pass_at_k(iter([(3, 1)]), 1) == pytest.approx(1 / 3)


def test_mean_pass_at_k_errors() -> None:
    with pytest.raises(ValueError, match="no tasks"):
        mean_pass_at_k([], 1)
    with pytest.raises(ValueError, match="k=2 > n=1"):
        mean_pass_at_k([(5, 1), (1, 1)], 2)
