"""pass@k, the unbiased estimator of Chen et al. (2021), "Evaluating Large Language Models Trained on Code".

With n samples of which c pass, the probability that at least one of k samples drawn without replacement
passes is

    pass@k = 1 - C(n - c, k) / C(n, k).

C(n, k) overflows floats for realistic n, so (as in the paper's numpy code) the ratio is computed as the
product  prod_{i = n-c+1}^{n} (1 - k / i),  which stays in [0, 1] term by term. When n - c < k every draw of k
contains a passing sample and the estimate is exactly 1.

Deviation from the paper's reference code: k > n raises `ValueError` instead of returning a value (the
estimator is undefined there; with n = 1 sample per task only pass@1 can be reported).
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def _check_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    return value


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task: n samples, c of them correct.

    >>> round(pass_at_k(5, 2, 1), 10)  # 1 - (3/4)(4/5); float products leave ~1e-16 residue
    0.4
    >>> round(pass_at_k(5, 2, 2), 10)  # 1 - C(3,2)/C(5,2) = 1 - 3/10
    0.7
    """
    n, c, k = _check_int("n", n), _check_int("c", c), _check_int("k", k)
    if n < 1:
        raise ValueError(f"n={n}: need at least one sample")
    if not 0 <= c <= n:
        raise ValueError(f"c={c}: the number of correct samples must be in [0, n={n}]")
    if k < 1:
        raise ValueError(f"k={k}: k must be >= 1")
    if k > n:
        raise ValueError(f"k={k} > n={n}: pass@k needs at least k samples per task; sample more or lower k")
    if n - c < k:
        return 1.0
    # C(n-c, k) / C(n, k) = prod_{i=n-c+1}^{n} (1 - k/i): each factor is in [0, 1), no overflow.
    fail_all = math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))
    return 1.0 - fail_all


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """Mean of `pass_at_k(n, c, k)` over tasks; `counts` holds one (n, c) pair per task.

    >>> round(mean_pass_at_k([(5, 2), (5, 0)], 1), 10)
    0.2
    """
    values = [pass_at_k(n, c, k) for n, c in counts]
    if not values:
        raise ValueError("mean_pass_at_k: no tasks; counts must hold at least one (n, c) pair")
    return math.fsum(values) / len(values)
