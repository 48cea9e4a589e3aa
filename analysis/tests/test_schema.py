"""Readers are strict on required keys (the error names the file and the key) and tolerant of extra
keys; skipped Google Benchmark entries and NaN ratios are handled, not fatal."""

import copy
import json

import pytest

from conftest import RESULTS
from ovb_analysis import results, schema
from ovb_analysis.errors import AnalysisError
from ovb_analysis.plots import Options, kinds

GPT4D = RESULTS / "gpt4d" / "gpt4d_1.3B_g8_all.json"
TRACE = RESULTS / "trace" / "megatron_tp2.analysis.json"
COMPARE = RESULTS / "model" / "compare.json"
SEARCH = RESULTS / "model" / "search.json"
COLLECTIVE = RESULTS / "microbench" / "collective.json"
GEMM = RESULTS / "microbench" / "gemm.json"
OVERLAP = RESULTS / "microbench" / "overlap.json"


def _delete(doc, path):
    """Remove the key at a path like 'config.model.hidden' or 'iterations.2.time_ms'."""
    *parents, last = path.split(".")
    for p in parents:
        doc = doc[int(p)] if isinstance(doc, list) else doc[p]
    if isinstance(doc, list):
        del doc[int(last)]
    else:
        del doc[last]


def _load_modified(tmp_path, src, change):
    doc = json.loads(src.read_text())
    change(doc)
    path = tmp_path / src.name
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("src, path, message", [
    (GPT4D, "config.model.hidden", "missing key 'config.model.hidden'"),
    (GPT4D, "config.batch", "missing key 'config.batch'"),
    (GPT4D, "config.grid.gdata", "missing key 'config.grid.gdata'"),
    (GPT4D, "iterations.2.time_ms", "missing key 'iterations[2].time_ms'"),
    (GPT4D, "summary", "missing key 'summary'"),
    (GPT4D, "summary.collectives.1.exposed_ms", "missing key 'summary.collectives[1].exposed_ms'"),
    (TRACE, "summary.idle_us", "missing key 'summary.idle_us'"),
    (TRACE, "summary", "missing key 'summary'"),
    (COMPARE, "configs.0.measured_ms", "missing key 'configs[0].measured_ms'"),
    (SEARCH, "configs.3.exposed_comm_ms", "missing key 'configs[3].exposed_comm_ms'"),
    (COLLECTIVE, "benchmarks.0.busbw", "missing key 'busbw' in benchmark "
                                       "'all_reduce/1048576/group:world'"),
    (GEMM, "benchmarks.0.tflops", "missing key 'tflops' in benchmark"),
    (OVERLAP, "benchmarks.1.t_comm_under_us", "missing key 't_comm_under_us' in benchmark "
                                              "'overlap/gemm:4096/bytes:268435456/prio:equal'"),
    (OVERLAP, "context.world_size", "missing key 'context.world_size'"),
])
def test_missing_required_key_names_file_and_key(tmp_path, src, path, message):
    bad = _load_modified(tmp_path, src, lambda d: _delete(d, path))
    with pytest.raises(AnalysisError) as e:
        results.load_file(bad)
    assert str(e.value).startswith(f"{bad}: {message}")
    rs = results.load_inputs([tmp_path])
    assert rs.files == [] and rs.failed[0][0] == src.name
    assert rs.failed[0][1].startswith(message)


def test_wrong_type_is_named(tmp_path):
    bad = _load_modified(tmp_path, GPT4D, lambda d: d["config"].update(batch="sixteen"))
    with pytest.raises(AnalysisError, match="key 'config.batch' is not a number"):
        results.load_file(bad)
    bad = _load_modified(tmp_path, TRACE, lambda d: d.update(ranks={}))
    with pytest.raises(AnalysisError, match="key 'ranks' is not a list"):
        results.load_file(bad)


def test_megatron_records_and_run_config_required_keys(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "parsed.json").write_text('[{"iteration": 1, "elapsed_ms": 2.0}, '
                                                '{"iteration": 2}]')
    with pytest.raises(AnalysisError, match=r"missing key '\[1\].elapsed_ms'"):
        results.load_file(tmp_path / "a" / "parsed.json")
    cfg = json.loads((RESULTS / "megatron" / "tp2_g8" / "megatron_config.json").read_text())
    del cfg["config"]["tp"]
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "megatron_config.json").write_text(json.dumps(cfg))
    (tmp_path / "b" / "parsed.json").write_text('[{"iteration": 1, "elapsed_ms": 2.0}]')
    with pytest.raises(AnalysisError, match="megatron_config.json: missing key 'config.tp'"):
        results.load_file(tmp_path / "b" / "parsed.json")


def _add_extras(doc):
    """Unknown keys everywhere a producer might add one."""
    if isinstance(doc, dict):
        for v in list(doc.values()):
            _add_extras(v)
        doc["zz_new_field"] = {"nested": [1, 2]}
    elif isinstance(doc, list):
        for v in doc:
            _add_extras(v)


@pytest.mark.parametrize("src", [GPT4D, TRACE, COMPARE, SEARCH, COLLECTIVE, GEMM, OVERLAP])
def test_extra_keys_are_tolerated(tmp_path, src):
    kind, doc = results.load_file(src)
    kind2, doc2 = results.load_file(_load_modified(tmp_path, src, _add_extras))
    assert kind2 == kind
    assert doc2["zz_new_field"] == {"nested": [1, 2]}


def test_skipped_benchmark_entries_are_warned_not_fatal(tmp_path):
    def change(doc):
        doc["benchmarks"].append({"name": "gemm_bf16/65536/65536/65536", "run_type": "iteration",
                                  "error_occurred": True,
                                  "error_message": "does not fit in device memory"})
    path = _load_modified(tmp_path, GEMM, change)
    rs = results.load_inputs([tmp_path])
    assert [f.rel for f in rs.files] == ["gemm.json"] and rs.failed == []
    assert rs.warnings == ["gemm.json: 1 benchmark entries skipped with an error (first: "
                           "gemm_bf16/65536/65536/65536: does not fit in device memory)"]
    rows = results.benchmark_rows(results.load_file(path)[1], "gemm")
    assert all(not r.get("error_occurred") for r in rows)


def test_nan_ratio_from_google_benchmark_is_left_out(tmp_path):
    # Google Benchmark writes NaN for fraction_of_ideal when serial == ideal (t_m = 0).
    text = OVERLAP.read_text().replace('"fraction_of_ideal": 0.378', '"fraction_of_ideal": NaN')
    assert "NaN" in text
    (tmp_path / "overlap.json").write_text(text)
    rs = results.load_inputs([tmp_path])
    assert rs.failed == []
    from ovb_analysis import tables
    (table,) = [t for t in tables.all_tables(rs, Options()) if t.title.startswith("Overlap")]
    col = table.header.index("fraction of ideal")
    by_prio = {row[table.header.index("prio")]: row[col] for row in table.rows}
    assert by_prio == {"comm_high": "0.30", "equal": "-0.76"}  # median of the 3 finite values
    outputs = kinds()["overlap"].make(rs, tmp_path / "out", Options())
    assert outputs and all(p.stat().st_size > 1000 for o in outputs for p in o.files)


def test_schema_paths_are_well_formed():
    for kind, specs in schema.REQUIRED.items():
        for spec in specs:
            path, _, typ = spec.partition(":")
            assert typ in ("", "num", "list", "dict"), (kind, spec)
            assert path and " " not in path, (kind, spec)
    doc = copy.deepcopy({"a": [{"b": 1}, {"b": "x"}]})
    with pytest.raises(AnalysisError, match=r"key 'a\[1\].b' is not a number"):
        schema._walk(doc, ["a[]", "b"], "", "num")
