"""ovb-overlap rows of two scenarios never mix: the real host-run file (labels written before they
named a scenario, read as the default one) beside a copy of its rows relabelled as a second
scenario with other numbers; the heatmaps, the overlap table and the busbw-under-overlap series
keep them apart, and the default scenario is core's."""

import copy
import json
import re

import numpy as np

from conftest import ANALYSIS, FIXTURES
from ovb_analysis import results, tables
from ovb_analysis.plots import Options, collective, overlap

OTHER = "attn_ag"


def two_scenarios(tmp_path):
    """The host-run overlap file plus its rows as scenario OTHER, each overlap_efficiency + 5 (so
    a cell mixing both would move by 2.5); returns the loaded set and the original rows."""
    doc = json.loads((FIXTURES / "host_run" / "overlap.json").read_text())
    other = []
    for b in doc["benchmarks"]:
        c = copy.deepcopy(b)
        for key in ("name", "run_name"):
            if key in c:
                c[key] = c[key].replace("overlap/", f"overlap/{OTHER}/", 1)
        c["label"] += f" scenario={OTHER}"
        c["overlap_efficiency"] = b["overlap_efficiency"] + 5
        other.append(c)
    original = results.overlap_rows(doc)
    doc["benchmarks"] += other
    (tmp_path / "overlap.json").write_text(json.dumps(doc))
    rs = results.load_inputs([tmp_path])
    assert rs.failed == []
    return rs, original


def test_default_scenario_is_cores():
    header = (ANALYSIS.parent / "core" / "include" / "ovb" / "metrics.hpp").read_text()
    (name,) = re.findall(r'kDefaultOverlapScenario = "(\w+)"', header)
    assert results.DEFAULT_OVERLAP_SCENARIO == name


def test_blocking_wait_scenario_is_cores_and_not_an_overlap_row(tmp_path):
    header = (ANALYSIS.parent / "core" / "include" / "ovb" / "metrics.hpp").read_text()
    (name,) = re.findall(r'kBlockingWaitScenario = "(\w+)"', header)
    assert results.BLOCKING_WAIT_SCENARIO == name
    # A blocking_wait row beside the host run's overlap rows: the file loads (its own counters
    # checked), and the overlap readers see only the others.
    doc = json.loads((FIXTURES / "host_run" / "overlap.json").read_text())
    n = len(results.overlap_rows(doc))
    wait = {"name": "overlap/blocking_wait/all_reduce/world/65536/fp32/128x128x128/nn/equal/"
                    "sequence/manual_time", "run_type": "iteration",
            "label": "coll=all_reduce prio=equal order=sequence scenario=blocking_wait",
            "m": 128, "n": 128, "k": 128, "bytes": 65536, "t_compute_mean_us": 50.0,
            "t_comm_us": 20.0, "t_sequence_us": 100.0, "wait_us": 30.0}
    doc["benchmarks"].append(wait)
    (tmp_path / "overlap-wait.json").write_text(json.dumps(doc))
    rs = results.load_inputs([tmp_path])
    assert rs.failed == []
    assert len(results.overlap_rows(doc)) == n
    del wait["wait_us"]
    (tmp_path / "overlap-wait.json").write_text(json.dumps(doc))
    assert results.load_inputs([tmp_path]).failed


def test_old_labels_read_as_the_default_scenario(tmp_path):
    rs, original = two_scenarios(tmp_path)
    assert original and all(r["label_fields"]["scenario"] == "gemm_coll" for r in original)
    rows = overlap.overlap_rows(rs)
    assert {r["label_fields"]["scenario"] for r in rows} == {"gemm_coll", OTHER}
    assert len(rows) == 2 * len(original)


def test_heatmaps_one_figure_per_scenario(tmp_path):
    rs, original = two_scenarios(tmp_path)
    rows = overlap.overlap_rows(rs)
    keys = overlap.setting_keys(rows)
    assert "scenario" in keys
    groups = {}
    for r in rows:
        groups.setdefault(overlap.setting(r, keys), []).append(r)
    assert len(groups) == 2
    want = overlap._grids(original, "overlap_efficiency", 1.0)
    for values, members in groups.items():
        shift = 5 if dict(zip(keys, values))["scenario"] == OTHER else 0
        got = overlap._grids(members, "overlap_efficiency", 1.0)
        assert len(got) == len(want)
        for g, w in zip(got, want):  # the cell medians of that scenario's rows alone
            np.testing.assert_allclose(g, w + shift, rtol=0, atol=1e-9, equal_nan=True)
    outputs = overlap.make(rs, tmp_path / "plots", Options())
    assert sorted(o.stem for o in outputs) == ["overlap_heatmap_all_reduce_scenario-attn_ag",
                                              "overlap_heatmap_all_reduce_scenario-gemm_coll"]


def test_table_and_busbw_series_keep_scenarios_apart(tmp_path):
    rs, original = two_scenarios(tmp_path)
    t = tables.overlap_table(rs)
    col = t.header.index("scenario")
    assert sorted(r[col] for r in t.rows) == sorted(["gemm_coll", OTHER] * (len(t.rows) // 2))
    points = t.header.index("points")
    assert sum(int(r[points]) for r in t.rows) == 2 * len(original)
    series = {s for _, s, _, _ in collective.overlap_points(rs)}
    assert series and all(s.endswith(", gemm_coll") or s.endswith(f", {OTHER}") for s in series)
