"""Warm-up exclusion, medians and percentiles, used the same way for every system compared: the
Python twin of core/include/ovb/timing_stats.hpp (docs/metrics.md, "Timed figures"), pinned to the
same numbers by tests/test_metrics_parity.py."""

import math

# A figure quoted from fewer timed samples than this is flagged; defaults give at least this many.
MIN_TIMED_SAMPLES = 20


def default_warmup(n):
    """Iterations to drop at the start: the larger of 3 and 10% (rounded up) of the n measured,
    but always leaving at least one."""
    if n <= 1:
        return 0
    return min(max(3, (n + 9) // 10), n - 1)


def default_runs():
    """Runs to do so that MIN_TIMED_SAMPLES remain after the warm-up rule (23)."""
    n = MIN_TIMED_SAMPLES
    while n - default_warmup(n) < MIN_TIMED_SAMPLES:
        n += 1
    return n


def percentile(values, q):
    """Percentile q in [0, 100], interpolating linearly between order statistics (numpy's
    default)."""
    vals = sorted(values)
    if not vals:
        raise ValueError("percentile of an empty list")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} outside [0, 100]")
    pos = (len(vals) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(vals) - 1)
    return vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)


def timing_summary(times_ms, warmup=None):
    """The result fields of a timed figure: the first `warmup` times left out (None: the warm-up
    rule), then {"warmup", "iterations_timed", "p10_ms", "p50_ms", "p90_ms", "enough_samples"}."""
    n = len(times_ms)
    w = default_warmup(n) if warmup is None else warmup
    if w >= n:
        raise ValueError(f"warm-up of {w} runs leaves none of {n} timed")
    timed = list(times_ms[w:])
    return {"warmup": w, "iterations_timed": len(timed), "p10_ms": percentile(timed, 10.0),
            "p50_ms": percentile(timed, 50.0), "p90_ms": percentile(timed, 90.0),
            "enough_samples": len(timed) >= MIN_TIMED_SAMPLES}


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
