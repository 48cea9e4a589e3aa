"""analysis/validation/calculon/run_calculon.py without Calculon: the files it writes for
Calculon are the published settings (one Table 5 run against the execution Calculon's own
validation uses, written out here), the candidate set is ovb-model's search rule (counted by
hand), the published seconds of a TFLOP/s run are Narayanan et al.'s count over it, a
configuration Calculon refuses is recorded while a broken Calculon stops the run with one line,
and an interrupted run resumes from what it wrote. A stand-in `bin/calculon` plays Calculon.
"""

import json
import stat
import sys
from pathlib import Path

import pytest

from conftest import ANALYSIS, load_script
from ovb_analysis.errors import AnalysisError

SCRIPT = ANALYSIS / "validation" / "calculon" / "run_calculon.py"
RUNS = ANALYSIS / "validation" / "published_runs.json"


def load():
    return load_script(SCRIPT, "run_calculon")


rc = load()


def shipped(run_id):
    return next(r for r in json.loads(RUNS.read_text())["runs"] if r["id"] == run_id)


def test_table5_run_is_calculons_own_execution():
    # Calculon's validation/seqsel/tab5/gpt3-175B_seqsel.json at caa4b11, field for field.
    want = {"num_procs": 64, "tensor_par": 8, "pipeline_par": 8, "data_par": 1,
            "tensor_par_net": 0, "pipeline_par_net": 1, "data_par_net": 1, "batch_size": 64,
            "microbatch_size": 1, "datatype": "float16", "fused_activation": False,
            "attention_type": "multihead", "activation_recompute": "attn_only",
            "pipeline_interleaving": 3, "optimizer_sharding": False,
            "tensor_par_comm_type": "rs_ag", "tensor_par_overlap": "none",
            "seq_par_ag_redo": True, "data_par_overlap": False, "weight_offload": False,
            "activations_offload": False, "optimizer_offload": False, "training": True}
    run = shipped("korthikanti-175b-selective-64")
    assert rc.why_not(run) is None
    assert rc.candidates(run) == [(1, 3)]
    assert rc.execution(run, 1, 3) == want
    # ... and its models/gpt3-175B.json
    assert rc.application(run) == {"hidden": 12288, "feedforward": 49152, "seq_size": 2048,
                                   "attn_heads": 96, "attn_size": 128, "num_blocks": 96}
    full = rc.execution(shipped("korthikanti-175b-full-64"), 1, 3)
    assert (full["activation_recompute"], full["tensor_par_comm_type"],
            full["seq_par_ag_redo"]) == ("full", "ar", False)


def open_choice(run):
    """The entry with its micro-batch and interleaving left to the search (as the SC21 rows were
    before they took the authors' launcher's values)."""
    run = dict(run)
    run["config"] = {k: v for k, v in run["config"].items()
                     if k not in ("micro_batch", "virtual_stages")}
    return run


def test_candidates_are_the_searchs():
    # SC21 76B: dp 32, 56 sequences per pipeline, 15 layers per stage of pp 4: micro-batches
    # 1, 2, 4, 8; chunks 1, 3, 5, 15, interleaved only when 56 / mb is a multiple of 4.
    run = open_choice(shipped("megatron-sc21-76b-1024"))
    assert rc.candidates(run) == [(1, 1), (1, 3), (1, 5), (1, 15), (2, 1), (2, 3), (2, 5),
                                  (2, 15), (4, 1), (8, 1)]
    assert rc.execution(run, 2, 3)["data_par"] == 32
    # The shipped entry pins the launcher's micro-batch 2 and 3 chunks: the only candidate.
    assert rc.candidates(shipped("megatron-sc21-76b-1024")) == [(2, 3)]


def test_published_seconds():
    run = shipped("megatron-sc21-18b-256")
    # 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) / (135e12 x 256), by hand
    flop = 96 * 1024 * 2048 * 40 * 6144**2 * (1 + 2048 / (6 * 6144) + 51200 / (16 * 40 * 6144))
    assert rc.published_seconds(run) == pytest.approx(flop / (135e12 * 256), rel=1e-12)
    assert rc.published_seconds(shipped("korthikanti-1t-full-512")) == 94.42


def test_runs_calculon_cannot_express_say_why():
    assert "4D" in rc.why_not(shipped("axonn-sc23-80b-perlmutter-1024"))
    assert "Llama" in rc.why_not(shipped("llama3-405b-8192"))
    assert "perlmutter-a100" in rc.why_not(shipped("axonn-sc23-80b-perlmutter-1024-megatron"))


def fake_calculon(root, body):
    """A stand-in Calculon: bin/calculon runs `body` (Python) with the llm arguments."""
    (root / "bin").mkdir(parents=True)
    (root / "systems").mkdir()
    (root / "systems" / "a100_80g.json").write_text("{}")
    exe = root / "bin" / "calculon"
    exe.write_text(f"import json, sys\nargs = sys.argv[2:]\n{body}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)


def args_for(root, work):
    class A:
        pass
    a = A()
    a.calculon, a.python, a.work = str(root), sys.executable, str(work)
    return a


def test_refusals_recorded_broken_calculon_stops_and_resume(tmp_path):
    root = tmp_path / "calculon-abc1234"
    # Refuses micro-batches above 1 (as Calculon does for memory); 2 s per micro-batch otherwise.
    fake_calculon(root, """
exe = json.load(open(args[1]))
if exe["microbatch_size"] > 1:
    print("ERROR: Mem tier1 needs 90 GiB but only has 80 GiB"); sys.exit(255)
json.dump({"total_time": 2.0 * exe["batch_size"], "proc_mem_tier1_cap_req": 2**30},
          open(args[3], "w"))
""")
    run = open_choice(shipped("megatron-sc21-18b-256"))  # 6 micro-batch candidates, pp 1
    work = tmp_path / "work"
    result, why = rc.predict(args_for(root, work), run)
    assert why is None
    assert (result["candidates"], result["accepted"]) == (6, 1)
    assert result["predicted_iteration_s"] == 2.0 * 1024
    assert result["execution"]["microbatch_size"] == 1
    assert result["error_pct"] == pytest.approx(
        100 * (rc.published_seconds(run) / 2048 - 1), rel=1e-12)
    assert json.loads((work / run["id"] / "stats-mb2-v1.json").read_text())["error"].startswith(
        "ERROR: Mem tier1")
    # Resume: with Calculon gone, the kept outputs give the same prediction.
    (root / "bin" / "calculon").write_text("raise SystemExit('not run')\n")
    again, _ = rc.predict(args_for(root, work), run)
    assert again == result
    # A Calculon that cannot start is an error, not a refusal.
    broken = tmp_path / "calculon-def5678"
    fake_calculon(broken, "import no_such_module_here")
    with pytest.raises(AnalysisError, match="calculon llm failed .*No module named"):
        rc.predict(args_for(broken, tmp_path / "work2"), run)


def test_commit_from_folder_name():
    assert rc.commit_of("/x/calculon-caa4b11") == "caa4b11"
    assert rc.commit_of("/x/calculon") is None


def test_committed_results_are_of_todays_entries():
    # Each committed Calculon run was given what the script writes for the entry as it stands
    # (the same application, one of its candidates, as many candidates): an entry whose settings
    # changed since makes this fail until run_calculon.py is run again.
    results = json.loads((ANALYSIS / "validation" / "calculon_results.json").read_text())
    assert results["runs"]
    for r in results["runs"]:
        run = shipped(r["id"])
        exe = r["execution"]
        pair = (exe["microbatch_size"], exe["pipeline_interleaving"])
        again = f"{r['id']}: its entry changed; run analysis/validation/calculon/run_calculon.py"
        assert r["application"] == rc.application(run), again
        assert pair in rc.candidates(run), again
        assert exe == rc.execution(run, *pair), again
        assert r["candidates"] == len(rc.candidates(run)), again
        assert r["published_iteration_s"] == pytest.approx(rc.published_seconds(run), rel=1e-12)
    listed = {r["id"] for r in results["runs"]} | {r["id"] for r in results["not_predicted"]}
    assert listed == {r["id"] for r in json.loads(RUNS.read_text())["runs"]}, \
        "the validation file's runs changed: run analysis/validation/calculon/run_calculon.py again"
