"""Megatron-LM log parser: every variant of docs/megatron.md, exact field values."""

import json

import pytest

from conftest import LOGS
from ovb_analysis import megatron_log
from ovb_analysis.errors import AnalysisError

SPEC_LINE = (" [2026-11-22 10:20:11.576187] iteration       30/      30 | consumed samples:          "
             "120 | elapsed time per iteration (ms): 395.4 | throughput per GPU (TFLOP/s/GPU): 175.5 "
             "| learning rate: 1.000000E-05 | global batch size:     4 | lm loss: 5.031966E+00 | "
             "loss scale: 1.0 | grad norm: 19.815 | number of skipped iterations:   0 | number of "
             "nan iterations:   0 |")


def test_spec_line_every_field():
    rec = megatron_log.parse_iteration_line(SPEC_LINE)
    assert rec == {"iteration": 30, "train_iters": 30, "consumed_samples": 120, "elapsed_ms": 395.4,
                   "tflops_per_gpu": 175.5, "learning_rate": 1e-05, "global_batch_size": 4,
                   "lm_loss": 5.031966, "loss_scale": 1.0, "grad_norm": 19.815,
                   "skipped_iterations": 0, "nan_iterations": 0,
                   "timestamp": "2026-11-22 10:20:11.576187", "extra": {}}
    assert list(rec) == list(megatron_log.RECORD_KEYS)


def test_non_log_lines_are_not_records():
    for line in ("", " time (ms) | forward-compute: 3456.78 | backward-compute: 6789.01",
                 "[Rank 0] (after 1 iterations) memory (MB) | allocated: 20512.3 | max allocated: 1",
                 "Traceback (most recent call last):", "training ...",
                 "  File \"x.py\", line 3, in <module>"):
        assert megatron_log.parse_iteration_line(line) is None


def test_launcher_prefixes_accepted():
    for prefix in ("0: ", "[default7]:", "rank7: "):
        rec = megatron_log.parse_iteration_line(prefix + SPEC_LINE.lstrip())
        assert rec["iteration"] == 30 and rec["elapsed_ms"] == 395.4


def test_current_log_with_timers_memory_and_arguments():
    p = megatron_log.parse_log_file(LOGS / "current.log")
    assert p.warnings == []
    assert [r["iteration"] for r in p.records] == [1, 2, 3, 4, 30]
    assert [r["elapsed_ms"] for r in p.records] == [3104.2, 410.7, 396.1, 395.0, 395.4]
    assert [r["tflops_per_gpu"] for r in p.records] == [22.4, 168.9, 175.2, 175.6, 175.5]
    first = p.records[0]
    assert first["timestamp"] == "2026-11-22 10:19:59.215014"
    assert first["lm_loss"] == 10.93385 and first["grad_norm"] == 45.123
    assert first["consumed_samples"] == 4 and first["global_batch_size"] == 4
    assert first["learning_rate"] == 1e-05 and first["train_iters"] == 30
    assert megatron_log.model_from_arguments(p.arguments) == {
        "layers": 24, "hidden": 2048, "heads": 16, "seq": 2048, "global_batch": 4, "world_size": 1,
        "tp": 1, "pp": 1, "vocab": 50304, "recompute": False}


def test_pre2024_no_timestamp_no_throughput_three_decimal_lr():
    p = megatron_log.parse_log_file(LOGS / "pre2024.log")
    assert len(p.records) == 2 and p.warnings == []
    r = p.records[0]
    assert r["timestamp"] is None and r["tflops_per_gpu"] is None
    assert r["learning_rate"] == 1.5e-4 and r["train_iters"] == 500
    assert r["consumed_samples"] == 512 and r["global_batch_size"] == 512
    assert r["loss_scale"] == 4294967296.0 and r["lm_loss"] == 11.02345
    assert r["extra"] == {"num zeros": 0.0, "params norm": 254.123}
    assert p.records[1]["elapsed_ms"] == 8123.4
    assert megatron_log.model_from_arguments(p.arguments) is None


def test_fp16_skipped_iterations_without_loss_and_timestamps_without_microseconds():
    recs = megatron_log.parse_log_file(LOGS / "fp16_skipped.log").records
    assert [r["iteration"] for r in recs] == [1, 2, 3, 4]
    assert recs[0]["timestamp"] == "2024-03-05 14:02:11"
    assert recs[0]["lm_loss"] is None and recs[0]["grad_norm"] is None
    assert recs[0]["skipped_iterations"] == 1 and recs[0]["loss_scale"] == 4294967296.0
    assert recs[1]["loss_scale"] == 2147483648.0 and recs[1]["learning_rate"] == 0.0
    assert recs[2]["lm_loss"] == 10.98765 and recs[2]["grad_norm"] == 7.5
    # nan/inf are not JSON: they become null; the nan-iteration count still tells
    assert recs[3]["lm_loss"] is None and recs[3]["grad_norm"] is None
    assert recs[3]["nan_iterations"] == 1


def test_moe_extra_loss_fields_kept():
    recs = megatron_log.parse_log_file(LOGS / "moe.log").records
    assert recs[0]["extra"] == {"load_balancing_loss": 1.012345, "z_loss": 0.00321}
    assert recs[0]["lm_loss"] == 10.8125 and recs[0]["grad_norm"] == 3.456
    assert recs[1]["extra"]["load_balancing_loss"] == 1.008
    assert recs[1]["timestamp"] == "2025-06-10 09:00:03.400456"


def test_killed_log_traceback_and_truncated_last_line():
    p = megatron_log.parse_log_file(LOGS / "killed.log")
    assert [r["iteration"] for r in p.records] == [1, 2]
    assert [r["elapsed_ms"] for r in p.records] == [1500.0, 1498.5]
    assert len(p.warnings) == 1 and "last line skipped" in p.warnings[0]


def test_truncated_last_line_ending_in_a_bar_is_still_skipped():
    cut = SPEC_LINE[:SPEC_LINE.index("learning rate")]  # ends with "| " after the throughput
    p = megatron_log.parse_log_text(SPEC_LINE + "\n" + cut.rstrip(), "t.log")
    assert len(p.records) == 1 and p.warnings == [
        "t.log: last line skipped: iteration line cut off (no line end, fields missing)"]


def test_truncated_before_the_fields():
    p = megatron_log.parse_log_text(SPEC_LINE + "\n [2026-11-22 10:20:1", "t.log")
    assert len(p.records) == 1 and "cut off before the iteration fields" in p.warnings[0]


def test_garbled_line_in_the_middle_is_skipped_with_its_line_number():
    bad = SPEC_LINE.replace("elapsed time per iteration (ms): 395.4", "elapsed time per "
                            "iteration (ms): 39x")
    p = megatron_log.parse_log_text(SPEC_LINE + "\n" + bad + "\n" + SPEC_LINE + "\n", "g.log")
    assert len(p.records) == 2
    assert p.warnings == ["g.log: line 2 skipped: field 'elapsed time per iteration (ms)' has a "
                          "non-numeric value '39x'"]


def test_no_iteration_lines_and_missing_file_raise():
    with pytest.raises(AnalysisError, match="no Megatron-LM iteration lines"):
        megatron_log.parse_log_file(LOGS / "no_iterations.log")
    with pytest.raises(AnalysisError, match="no such file"):
        megatron_log.parse_log_file(LOGS / "absent.log")


def test_cli_json_keys_and_values(cli):
    rc, out, err = cli("megatron-log", LOGS / "moe.log", "--json")
    assert rc == 0 and err == ""
    recs = json.loads(out)
    assert len(recs) == 2
    assert set(recs[0]) == {"iteration", "train_iters", "consumed_samples", "elapsed_ms",
                            "tflops_per_gpu", "learning_rate", "global_batch_size", "lm_loss",
                            "loss_scale", "grad_norm", "skipped_iterations", "nan_iterations",
                            "timestamp", "extra"}
    assert recs[1]["elapsed_ms"] == 2399.9 and recs[1]["extra"]["z_loss"] == 0.0031


def test_cli_truncated_log_warns_on_stderr(cli):
    rc, out, err = cli("megatron-log", LOGS / "killed.log", "--json")
    assert rc == 0 and len(json.loads(out)) == 2
    assert err.startswith("warning: ") and "last line skipped" in err and err.count("\n") == 1


def test_cli_table_and_summary(cli):
    rc, out, _ = cli("megatron-log", LOGS / "current.log")
    assert rc == 0
    assert out.splitlines()[-1] == ("5 iteration lines; after 3 warm-up: median 395.2 ms "
                                    "(p10 395.0, p90 395.4)")


def test_cli_no_iteration_lines_is_one_error_line(cli):
    rc, out, err = cli("megatron-log", LOGS / "no_iterations.log", "--json")
    assert rc == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("ovb-analysis: error: ")
    assert "no Megatron-LM iteration lines" in err


def test_line_cut_at_a_bar_before_more_output_is_skipped():
    # Killed while printing; Slurm's own message follows on the next line. The cut line ends
    # with '|' and has a line end, but lacks the final field every other line has.
    cut = SPEC_LINE[:SPEC_LINE.index("lm loss")].rstrip()
    text = (SPEC_LINE + "\n" + cut + "\n"
            "slurmstepd: error: *** JOB 1234 ON nid001 CANCELLED AT 2026-11-22T10:21:00 ***\n")
    p = megatron_log.parse_log_text(text, "k.log")
    assert len(p.records) == 1 and p.records[0]["lm_loss"] == 5.031966
    assert p.warnings == ["k.log: line 2 skipped: iteration line cut off (its final 'number of "
                          "nan iterations' field is missing)"]


def test_windows_line_ends_and_no_final_newline():
    p = megatron_log.parse_log_text(SPEC_LINE + "\r\n" + SPEC_LINE.replace("395.4", "396.0"), "w")
    assert [r["elapsed_ms"] for r in p.records] == [395.4, 396.0] and p.warnings == []


def test_three_and_six_decimal_learning_rates_parse_to_the_same_value():
    six = megatron_log.parse_iteration_line(SPEC_LINE)
    three = megatron_log.parse_iteration_line(SPEC_LINE.replace("1.000000E-05", "1.000E-05"))
    assert six["learning_rate"] == three["learning_rate"] == 1e-05


def test_timestamp_without_microseconds_and_without_timestamp():
    no_us = SPEC_LINE.replace("10:20:11.576187", "10:20:11")
    assert megatron_log.parse_iteration_line(no_us)["timestamp"] == "2026-11-22 10:20:11"
    bare = SPEC_LINE.replace(" [2026-11-22 10:20:11.576187]", "")
    rec = megatron_log.parse_iteration_line(bare)
    assert rec["timestamp"] is None and rec["iteration"] == 30 and rec["elapsed_ms"] == 395.4


def test_unknown_fields_kept_not_rejected():
    line = SPEC_LINE.replace("| loss scale", "| mtp_1 loss: 2.500000E+00 | router: topk | loss scale")
    rec = megatron_log.parse_iteration_line(line)
    assert rec["extra"] == {"mtp_1 loss": 2.5, "router": "topk"}
    assert rec["loss_scale"] == 1.0


def test_garbage_and_binary_input_never_crash(tmp_path):
    f = tmp_path / "noise.log"
    f.write_bytes(b"\x00\xff\xfe iteration 3/ | x\n iteration 1/2 |||\n" + bytes(range(256)))
    with pytest.raises(AnalysisError, match="no Megatron-LM iteration lines"):
        megatron_log.parse_log_file(f)
