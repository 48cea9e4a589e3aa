"""Formula tests: the suite's GPT FLOP count, TFLOP/s and bandwidths against hand-computed values."""

import pytest

from ovb_analysis import metrics, stats


def test_gpt_flop_tiny_hand_example():
    # B=1, s=12, L=1, h=1, V=12: 72*12 * (1 + 12/12 + 12/12) = 864 * 3
    assert metrics.gpt_model_flop(1, 12, 1, 1, 12) == 2592.0


def test_gpt_flop_spec_h100_run():
    # GPT 24 x 2048, seq 2048, batch 4, V 50304: 72*4*2048*24*2048^2 = 13.5 * 2^42 and
    # 1 + 1/12 + 50304/(12*24*2048) = (1536 + 128 + 131) / 1536 = 1795/1536, so F = 8077.5 * 2^33.
    f = metrics.gpt_model_flop(4, 2048, 24, 2048, 50304)
    assert f == pytest.approx(8077.5 * 2**33, rel=1e-12)
    assert f == pytest.approx(69_385_196_666_880, rel=1e-12)
    # 395.4 ms on one GPU: Megatron printed 175.5 TFLOP/s/GPU for that run.
    tf = metrics.tflops_per_gpu(f, 0.3954, 1)
    assert tf == pytest.approx(69.38519666688 / 0.3954, rel=1e-9)
    assert round(tf, 1) == 175.5


def test_tflops_per_gpu_divides_by_gpus_and_recompute_adds_a_forward():
    assert metrics.tflops_per_gpu(8e12, 0.5, 4) == pytest.approx(4.0)
    assert metrics.gpt_hardware_flop(3.0, True) == pytest.approx(4.0)
    assert metrics.gpt_hardware_flop(3.0, False) == 3.0
    assert metrics.gpt_selective_recompute_flop(2, 4, 3, 5) == 2.0 * 2 * 16 * 3 * 5
    assert metrics.mfu(494.5, 989.0) == pytest.approx(0.5)
    assert metrics.mfu(100.0, None) is None


def test_bandwidth_conventions():
    assert metrics.bus_factor("all_reduce", 8) == 1.75
    assert metrics.bus_factor("reduce_scatter", 8) == 0.875
    assert metrics.bus_factor("all_gather", 2) == 0.5
    assert metrics.bus_factor("broadcast", 8) == 1.0
    # 256 MiB all-reduce on 8 ranks in 1.25 ms: algbw 214.748 GB/s, busbw x 1.75
    assert metrics.algbw_gbps(2**28, 1.25e-3) == pytest.approx(214.7483648)
    assert metrics.busbw_gbps("all_reduce", 8, 2**28, 1.25e-3) == pytest.approx(375.8096384)
    assert metrics.gemm_flop(4096, 4096, 4096) == 2 * 4096**3
    with pytest.raises(ValueError):
        metrics.bus_factor("all_reduce", 0)


def test_percentiles_and_warmup_rule():
    assert stats.percentile([5, 1, 3, 2, 4], 10) == pytest.approx(1.4)
    assert stats.median([4, 1, 3, 2]) == 2.5
    assert stats.spread([10.0]) == (10.0, 10.0, 10.0)
    assert [stats.default_warmup(n) for n in (0, 1, 2, 4, 5, 30, 31, 100)] == [0, 0, 1, 3, 3, 3, 4, 10]
    with pytest.raises(ValueError):
        stats.percentile([], 50)


def test_rank_correlation():
    assert stats.ranks([30, 10, 20, 10]) == [4.0, 1.5, 3.0, 1.5]
    assert stats.spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert stats.spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert stats.spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    assert stats.spearman([1], [1]) is None
