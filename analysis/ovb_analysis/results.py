"""Find and load the result files in folders, recognising each by its shape (results/SCHEMA.md).

Kinds: `gbench` (Google Benchmark JSON of ovb-collective / ovb-gemm / ovb-overlap), `gpt4d`,
`trace` (ovb-trace analysis), `merged_trace` (ovb-trace merge's output, its header kept; one
above SNIFF_ABOVE_BYTES is known by its header alone), `model_search`, `model_compare`
and `model_validation` (ovb-model), `megatron` (a Megatron-LM log, a parsed log as JSON, or a run
folder with megatron_config.json beside its log). Files are visited in sorted order so every
output built from a ResultSet is deterministic. Files that cannot be read are kept in `failed`
with the reason, so a failed step shows up in the report.
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import megatron_log, schema
from .errors import AnalysisError
from .io_util import load_json

LOG_SUFFIXES = (".log", ".out", ".txt")
RUN_CONFIG = "megatron_config.json"
# JSON files at least this big are sniffed for Chrome-trace keys in their first SNIFF_BYTES.
SNIFF_ABOVE_BYTES = 16 * 2**20
SNIFF_BYTES = 2**20
RAW_TRACE_KEYS = (b'"traceEvents"', b'"distributedInfo"', b'"deviceProperties"')
TRACE_EVENTS_LINE = b',\n  "traceEvents": ['  # where the suite's trace writer ends its header
# Signs that Megatron-LM itself ran: its start-up lines or a traceback through its files.
MEGATRON_RUN_RE = re.compile(r"-+ arguments -+|^> building \S+ tokenizer|"
                             r'File "[^"]*(?:megatron/|pretrain_gpt\.py)', re.MULTILINE)


class NotAResult(AnalysisError):
    """A JSON file of no known shape: listed as not read (e.g. a driver's state file)."""


@dataclass
class ResultFile:
    path: Path
    rel: str
    kind: str
    doc: object


@dataclass
class ResultSet:
    files: list = field(default_factory=list)
    failed: list = field(default_factory=list)  # (rel path, reason)
    ignored: list = field(default_factory=list)  # (rel path, reason): known files that are no result
    warnings: list = field(default_factory=list)

    def of(self, kind):
        return [f for f in self.files if f.kind == kind]


def classify(doc):
    """The kind of a loaded JSON document by its distinguishing key (results/SCHEMA.md), or None
    when it is not a result file of the suite. The kind's required keys are checked afterwards
    (schema.py), so a result file that lacks one fails with the key's name instead of being taken
    for a foreign file."""
    if isinstance(doc, list):
        if doc and isinstance(doc[0], dict) and "iteration" in doc[0]:
            return "megatron"
        return None
    if not isinstance(doc, dict):
        return None
    if "benchmarks" in doc:
        return "gbench"
    if "traceEvents" in doc:
        # `ovb-trace merge`'s output is listed for Perfetto (its header only); any other
        # Chrome/Kineto trace is input of ovb-trace analyze, not a result.
        return "merged_trace" if "mergedFrom" in doc else "raw_trace"
    if {"gpu", "comm", "interference"} <= doc.keys():
        return "machine"  # an ovb-model machine description (e.g. from calibrate): not a result
    if doc.get("kind") == "megatron_run":
        return "megatron_run"
    if "iterations" in doc and "torch" in (doc.get("context") or {}):
        return "pytorch"  # endtoend/reference/pytorch_gpt.py: a reference beside gpt4d, not a suite result
    if "iterations" in doc:
        return "gpt4d"
    if "ranks" in doc:
        return "trace"
    if "rows" in doc and "tolerance_pct" in doc:
        return "model_validation"  # ovb-model validate --json
    if "configs" in doc:
        configs = doc["configs"] if isinstance(doc["configs"], list) else []
        if "spearman" in doc or any(isinstance(c, dict) and "measured_ms" in c for c in configs):
            return "model_compare"
        return "model_search"
    return None


def _checked(kind, doc, path):
    try:
        schema.check(kind, doc)
    except AnalysisError as e:
        raise AnalysisError(f"{path}: {e}") from None
    return doc


def _megatron_doc(records, config=None, warnings=()):
    return {"records": records, "config": config, "warnings": list(warnings)}


def _run_config(folder):
    """The megatron_config.json of a run folder as the plain config dict, or None."""
    path = folder / RUN_CONFIG
    if not path.is_file():
        return None
    doc = load_json(path)
    if classify(doc) != "megatron_run":
        raise AnalysisError(f"{path}: not a megatron_config.json written by megatron-cmd")
    cfg = dict(_checked("megatron_run", doc, path)["config"])
    cfg["dp"] = doc.get("dp")
    if "peak_tflops" in doc:
        cfg["peak_tflops"] = doc["peak_tflops"]
    return cfg


def _load_log(path):
    parsed = megatron_log.parse_log_file(path)
    config = _run_config(path.parent)
    if config is None:
        args_cfg = megatron_log.model_from_arguments(parsed.arguments)
        if args_cfg is not None:
            config = dict(args_cfg, gpus=args_cfg.pop("world_size"))
    return _megatron_doc(parsed.records, config, parsed.warnings)


def big_trace_head(path):
    """The first SNIFF_BYTES of a big JSON file whose start names Chrome-trace keys, else None: such
    a file is not parsed whole (a trace can be gigabytes; reading it only to ignore it would cost
    minutes and memory)."""
    try:
        if path.stat().st_size < SNIFF_ABOVE_BYTES:
            return None
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError:
        return None
    return head if any(key in head for key in RAW_TRACE_KEYS) else None


def trace_header(head):
    """The top-level keys of a trace the suite's writer wrote (core/src/trace_writer.cpp: they come
    first, then `"traceEvents": [` on a line of its own), parsed from its head with an empty event
    list; None when the head holds no such line or does not parse."""
    end = head.find(TRACE_EVENTS_LINE)
    if end < 0:
        return None
    try:
        return json.loads(head[:end] + b',"traceEvents": []}')
    except ValueError:
        return None


def load_file(path):
    """(kind, doc) of one file; AnalysisError when it cannot be read, is not a result file, or
    lacks a required key."""
    path = Path(path)
    if path.suffix in LOG_SUFFIXES:
        return "megatron", _load_log(path)
    head = big_trace_head(path)
    if head is not None:
        header = trace_header(head)
        if header is not None and classify(header) == "merged_trace":
            return "merged_trace", _checked("merged_trace", header, path)
        return "raw_trace", None
    doc = load_json(path)
    kind = classify(doc)
    if kind is None:
        raise NotAResult(f"{path}: not a result file of a known shape (see results/SCHEMA.md)")
    if kind in ("machine", "pytorch"):
        return kind, doc
    if kind == "megatron":
        return kind, _megatron_doc(_checked("megatron_records", doc, path),
                                   _run_config(path.parent))
    return kind, _checked(kind, doc, path)


def _candidates(root, exclude):
    if root.is_file():
        return [root]
    out = []
    for p in sorted(root.rglob("*")):
        parts = p.relative_to(root).parts
        if any(part.startswith(".") for part in parts) or not p.is_file():
            continue
        resolved = p.resolve()
        if any(ex == resolved or ex in resolved.parents for ex in exclude):
            continue
        if p.suffix == ".json" or p.suffix in LOG_SUFFIXES:
            out.append(p)
    return out


def _failed_megatron_run(path):
    """Whether a log without iteration lines is a Megatron-LM run that failed (listed as failed)
    rather than some other job's output (listed as not read): it lies in a Megatron run folder, or
    it shows Megatron's start-up or a traceback through its code. Merely naming pretrain_gpt.py (a
    step that printed the command) does not count."""
    if (path.parent / RUN_CONFIG).is_file():
        return True
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return MEGATRON_RUN_RE.search(text) is not None


def _skipped_benchmarks(rel, doc):
    """A warning for the entries Google Benchmark marks as skipped (SkipWithError), if any."""
    bad = [b for b in doc["benchmarks"] if isinstance(b, dict) and b.get("error_occurred")
           and schema.benchmark_prefix(b.get("name", ""))]
    if not bad:
        return []
    first = bad[0]
    return [f"{rel}: {len(bad)} benchmark entries skipped with an error (first: "
            f"{first.get('name')}: {first.get('error_message', 'no message')})"]


def load_inputs(paths, exclude=()):
    """Load every result file under the given files/folders (sorted); unreadable ones go to
    `failed`, files that are no result of the suite to `ignored`."""
    rs, seen_megatron = ResultSet(), {}
    exclude = [Path(e).resolve() for e in exclude]
    for given in paths:
        root = Path(given)
        if not root.exists():
            raise AnalysisError(f"{root}: no such file or folder")
        base = root if root.is_dir() else root.parent
        for p in _candidates(root, exclude):
            rel = p.relative_to(base).as_posix()
            if p.name == RUN_CONFIG:
                if not any(q.suffix in LOG_SUFFIXES for q in p.parent.iterdir()):
                    rs.ignored.append((rel, "Megatron-LM run configuration without a log (not "
                                            "run yet, or the job failed before starting)"))
                continue  # otherwise read together with the log beside it
            try:
                kind, doc = load_file(p)
            except NotAResult as e:
                rs.ignored.append((rel, str(e).removeprefix(f"{p}: ")))
                continue
            except AnalysisError as e:
                reason = str(e).removeprefix(f"{p}: ")
                if p.suffix in LOG_SUFFIXES and not _failed_megatron_run(p):
                    rs.ignored.append((rel, "log without Megatron-LM iteration lines"))
                else:
                    rs.failed.append((rel, reason))
                continue
            if kind == "merged_trace":
                doc = {k: v for k, v in doc.items() if k != "traceEvents"}
            if kind == "raw_trace":
                rs.ignored.append((rel, "raw trace (analyse it with ovb-trace analyze)"))
                continue
            if kind == "machine":
                rs.ignored.append((rel, "machine description (input of ovb-model)"))
                continue
            if kind == "pytorch":
                rs.ignored.append((rel, "PyTorch reference run (endtoend/reference/pytorch_gpt.py)"))
                continue
            if kind == "megatron":
                # A log and its `megatron-log --json` output side by side are one run, not two.
                key = tuple((r["iteration"], r["elapsed_ms"]) for r in doc["records"])
                if key in seen_megatron:
                    rs.ignored.append((rel, f"same Megatron-LM iterations as {seen_megatron[key]}"))
                    continue
                seen_megatron[key] = rel
                rs.warnings.extend(doc["warnings"])
            if kind == "gbench":
                rs.warnings.extend(_skipped_benchmarks(rel, doc))
            rs.files.append(ResultFile(p.resolve(), rel, kind, doc))
    return rs


def benchmark_rows(doc, prefix):
    """One row per benchmark run of a Google Benchmark document whose name starts with `prefix`:
    its `median` aggregate when repetitions were run, else its `mean`, else the plain iteration entry
    (the last one if there are several). Rows keep every counter and the parsed `label`."""
    by_run = {}
    for b in doc.get("benchmarks", []):
        if not isinstance(b, dict) or not str(b.get("name", "")).startswith(prefix):
            continue
        if b.get("error_occurred"):
            continue
        run = b.get("run_name", b.get("name"))
        rank = {"median": 0, "mean": 1}.get(b.get("aggregate_name"), 2) \
            if b.get("run_type") == "aggregate" else 3
        if b.get("run_type") == "aggregate" and rank == 2:
            continue  # stddev, cv: not a measurement
        best = by_run.get(run)
        if best is None or rank <= best[0]:
            by_run[run] = (rank, b)
    rows = []
    for run in by_run:
        row = dict(by_run[run][1])
        row["label_fields"] = parse_label(row.get("label", ""))
        row["run"] = run
        rows.append(row)
    return rows


# The ovb-overlap scenario of a row whose label names none (files written before the label carried
# "scenario="): ovb-overlap's default, the GEMM + collective one (core/include/ovb/metrics.hpp,
# kDefaultOverlapScenario; tests/test_results.py pins the two together).
DEFAULT_OVERLAP_SCENARIO = "gemm_coll"
# The scenario that runs nothing concurrently (kBlockingWaitScenario there): its rows have no
# overlap metrics and are left out of overlap_rows.
BLOCKING_WAIT_SCENARIO = "blocking_wait"


def overlap_rows(doc):
    """benchmark_rows(doc, "overlap") with label_fields["scenario"] on every row (the default
    scenario where the label names none), so that rows of two scenarios never share a key; the
    blocking_wait scenario's rows, which measure no overlap, left out."""
    rows = benchmark_rows(doc, "overlap")
    for row in rows:
        row["label_fields"].setdefault("scenario", DEFAULT_OVERLAP_SCENARIO)
    return [r for r in rows if r["label_fields"]["scenario"] != BLOCKING_WAIT_SCENARIO]


def parse_label(label):
    """`key=value key=value` label text as a dict."""
    out = {}
    for word in str(label).split():
        key, sep, value = word.partition("=")
        if sep:
            out[key] = value
    return out


def context_of(doc):
    return doc.get("context", {}) if isinstance(doc, dict) else {}
