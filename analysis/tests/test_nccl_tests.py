"""nccl-tests output parsing and the busbw comparison with ovb-collective (ovb-analysis
nccl-compare), on a hand-written sample in nccl-tests' documented text layout
(fixtures/nccl_tests/) and ovb-collective entries made up here, with exact expected values.

Run: pytest analysis/tests/test_nccl_tests.py
"""

import json

import pytest

from conftest import FIXTURES
from ovb_analysis import nccl_tests
from ovb_analysis.errors import AnalysisError

SAMPLE = FIXTURES / "nccl_tests" / "all_reduce_perf-2ranks.txt"


def bench(placement, size, busbw, ranks=2, run_type="iteration", op="all_reduce"):
    return {"name": f"{op}/bf16/world/{placement}/{size}/min_time:0.050/manual_time",
            "run_type": run_type, "bytes": float(size), "busbw": busbw, "ranks": float(ranks)}


OVB = [
    bench("oop", 65536, 0.30), bench("ip", 65536, 0.44),
    bench("oop", 1048576, 1.5198), bench("ip", 1048576, 1.444),
    bench("oop", 4194304, 2.56), bench("oop", 4194304, 2.58),   # two repetitions: median 2.57
    bench("oop", 4194304, 99.0, run_type="aggregate"),          # aggregates are not samples
    bench("ip", 4194304, 2.45),
    bench("oop", 16777216, 3.00),
    bench("oop", 16777216, 1.0).copy() | {"name": "all_reduce/bf16/x/oop/16777216/m"},  # group x
]


def test_parse_sample_exact():
    doc = nccl_tests.parse_file(SAMPLE)
    assert (doc["program"], doc["op"], doc["ranks"], doc["avg_busbw"]) == \
        ("all_reduce_perf", "all_reduce", 2, 1.86875)
    assert [r["size"] for r in doc["rows"]] == [65536, 1048576, 4194304, 16777216]
    first = doc["rows"][0]
    assert (first["count"], first["dtype"], first["redop"], first["root"]) == \
        (32768, "bf16", "sum", -1)
    assert first["oop"] == {"time_us": 160.2, "algbw": 0.41, "busbw": 0.41, "wrong": 0}
    assert doc["rows"][3]["ip"] == {"time_us": 5478.8, "algbw": 3.06, "busbw": 3.06, "wrong": 0}


def test_parse_per_iteration_layout_and_unchecked_wrong():
    text = "\n".join([
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
        "    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max"
        "    i_p99    i_cv%",
        "     1048576        262144     float    none      -1    500.0    2.10    1.57     N/A"
        "    490.0    530.0    528.0      1.5    510.0    2.06    1.54     N/A    495.0    540.0"
        "    538.0      1.9",
        "# Collective test concluded: all_gather_perf"])
    doc = nccl_tests.parse_text(text)
    assert doc["op"] == "all_gather"
    row = doc["rows"][0]
    assert row["dtype"] == "fp32" and row["redop"] == "none"
    assert row["oop"] == {"time_us": 500.0, "algbw": 2.10, "busbw": 1.57, "wrong": None}
    assert row["ip"] == {"time_us": 510.0, "algbw": 2.06, "busbw": 1.54, "wrong": None}


@pytest.mark.parametrize("text, message", [
    ("# nThread 1\n# Avg bus bandwidth : 0\n", "no nccl-tests result lines"),
    ("1048576 262144 float sum -1 500.0 2.10\n", "7 columns, expected at least 13"),
    ("1048576 262144 float sum -1 fast 2.10 1.57 0 510.0 2.06 1.54 0\n", "time 'fast' is not a number"),
])
def test_parse_rejects_bad_text(text, message):
    with pytest.raises(AnalysisError, match=message):
        nccl_tests.parse_text(text)


def test_compare_exact_ratios_and_verdicts():
    result = nccl_tests.compare([nccl_tests.parse_file(SAMPLE)], OVB, tolerance_pct=3.0,
                                min_bytes=1 << 20)
    got = {(r["placement"], r["size"]): (round(r["ratio"], 6), r["judged"], r["within"])
           for r in result["rows"]}
    assert got == {
        ("oop", 65536): (round(0.30 / 0.41, 6), False, False),
        ("ip", 65536): (round(0.44 / 0.43, 6), False, False),
        ("oop", 1048576): (1.02, True, True),
        ("ip", 1048576): (0.95, True, False),
        ("oop", 4194304): (1.028, True, True),
        ("ip", 4194304): (0.98, True, True),
        ("oop", 16777216): (1.0, True, True),
    }
    assert (result["judged"], result["outside"]) == (5, 1)
    assert result["missing"] == ["all_reduce/bf16/ip/16777216"]
    loose = nccl_tests.compare([nccl_tests.parse_file(SAMPLE)], OVB, tolerance_pct=6.0)
    assert loose["outside"] == 0


def test_compare_refuses_other_ranks_and_nothing_in_common():
    other = [b | {"ranks": 4.0} for b in OVB]
    with pytest.raises(AnalysisError, match="nccl-tests ran 2 ranks, ovb-collective 4"):
        nccl_tests.compare([nccl_tests.parse_file(SAMPLE)], other)
    with pytest.raises(AnalysisError, match="no collective, dtype, size and placement in both"):
        nccl_tests.compare([nccl_tests.parse_file(SAMPLE)],
                           [bench("oop", 1048576, 1.0, op="all_gather")])


def test_cli_exit_status_and_json(cli, tmp_path):
    ovb = tmp_path / "collective.json"
    ovb.write_text(json.dumps({"context": {}, "benchmarks": OVB}))
    out = tmp_path / "cmp.json"
    rc, stdout, _ = cli("nccl-compare", "--nccl-tests", SAMPLE, "--ovb", ovb, "--json", out)
    assert rc == 1  # one judged size outside 3 %
    assert "| all_reduce | bf16 | ip | 1048576 | 1.52 | 1.44 | 0.950 | **no** |" in stdout
    assert "5 judged (size >= 1048576 B), 1 outside 3 %" in stdout
    doc = json.loads(out.read_text())
    assert doc["nccl_tests_avg_busbw"] == {"all_reduce": 1.86875}
    rc, _, _ = cli("nccl-compare", "--nccl-tests", SAMPLE, "--ovb", ovb, "--tolerance", "6")
    assert rc == 0
    rc, _, err = cli("nccl-compare", "--nccl-tests", SAMPLE, "--ovb", ovb, "--min-bytes",
                     str(1 << 30))
    assert rc == 1 and "nothing judged" in err
    rc, _, err = cli("nccl-compare", "--nccl-tests", tmp_path / "none.txt", "--ovb", ovb)
    assert rc == 1 and "none.txt: cannot read" in err


def test_reads_a_real_ovb_collective_file():
    """The committed H100 run of ovb-collective (2 ranks): every world entry keyed, and the busbw
    the microbenchmark summary printed for it (results/h100/microbench/summary.md)."""
    doc = json.loads((FIXTURES.parents[2] / "results" / "h100" / "microbench" /
                      "collective-2.json").read_text())
    found = nccl_tests.ovb_busbw(doc["benchmarks"])
    assert len(found) == 42  # 3 collectives x 7 sizes x in/out of place
    busbw, ranks = found[("all_reduce", "bf16", "oop", 16777216)]
    assert (round(busbw, 2), ranks) == (3.07, 2.0)
    assert round(found[("all_gather", "bf16", "ip", 16777216)][0], 2) == 2.89
