"""Warm-up exclusion, medians and percentiles, used the same way for every system compared."""

import math


def default_warmup(n):
    """Iterations to drop at the start: the larger of 3 and 10% (rounded up) of the n measured,
    but always leaving at least one."""
    if n <= 1:
        return 0
    return min(max(3, math.ceil(0.1 * n)), n - 1)


def percentile(values, q):
    """Percentile q in [0, 100], interpolating linearly between order statistics (numpy's
    default)."""
    vals = sorted(values)
    if not vals:
        raise ValueError("percentile of an empty list")
    pos = (len(vals) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(vals) - 1)
    return vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)


def finite(values):
    """The values that are finite numbers: None, NaN and inf (Google Benchmark writes NaN for an
    undefined ratio such as fraction_of_ideal when serial == ideal) are left out."""
    return [float(v) for v in values if v is not None and math.isfinite(float(v))]


def median(values):
    return percentile(values, 50.0)


def spread(values):
    """(median, p10, p90) of a non-empty list."""
    return median(values), percentile(values, 10.0), percentile(values, 90.0)


def ranks(values):
    """1-based ranks; tied values get their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return out


def spearman(a, b):
    """Spearman's rank correlation (Pearson correlation of the ranks); None when undefined."""
    if len(a) != len(b) or len(a) < 2:
        return None
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else None
