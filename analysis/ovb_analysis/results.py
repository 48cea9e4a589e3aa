"""Find and load the result files in folders, recognising each by its shape (results/SCHEMA.md).

Kinds: `gbench` (Google Benchmark JSON of ovb-collective / ovb-gemm / ovb-overlap), `gpt4d`,
`trace` (ovb-trace analysis), `model_search` and `model_compare` (ovb-model), `megatron` (a Megatron-LM
log, a parsed log as JSON, or a run folder with megatron_config.json beside its log). Files are
visited in sorted order so every output built from a ResultSet is deterministic. Files that cannot be
read are kept in `failed` with the reason, so a failed step shows up in the report.
"""

from dataclasses import dataclass, field
from pathlib import Path

from . import megatron_log
from .errors import AnalysisError
from .io_util import load_json

LOG_SUFFIXES = (".log", ".out")
RUN_CONFIG = "megatron_config.json"


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
    """The kind of a loaded JSON document, or None when it is not a result file of the suite."""
    if isinstance(doc, list):
        if doc and all(isinstance(r, dict) and "iteration" in r and "elapsed_ms" in r for r in doc):
            return "megatron"
        return None
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("benchmarks"), list):
        return "gbench"
    if "traceEvents" in doc:
        return "raw_trace"  # a Chrome/Kineto trace: input of ovb-trace analyze, not a result
    if doc.get("kind") == "megatron_run":
        return "megatron_run"
    if isinstance(doc.get("iterations"), list) and "config" in doc and "summary" in doc:
        return "gpt4d"
    if isinstance(doc.get("ranks"), list) and "summary" in doc:
        return "trace"
    configs = doc.get("configs")
    if isinstance(configs, list):
        if any(isinstance(c, dict) and "measured_ms" in c for c in configs) or "spearman" in doc:
            return "model_compare"
        return "model_search"
    return None


def _check_gpt4d(doc):
    try:
        model, cfg = doc["config"]["model"], doc["config"]
        for key in ("layers", "hidden", "seq", "vocab"):
            float(model[key])
        float(cfg["batch"])
    except (KeyError, TypeError, ValueError) as e:
        raise AnalysisError(f"gpt4d result without a usable config.model/config.batch ({e})") from None
    if not any("time_ms" in it for it in doc["iterations"]) and \
            "median_time_ms" not in (doc.get("summary") or {}):
        raise AnalysisError("gpt4d result without iteration times")


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
    cfg = dict(doc["config"])
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


def load_file(path):
    """(kind, doc) of one file; AnalysisError when it cannot be read or is not a result file."""
    path = Path(path)
    if path.suffix in LOG_SUFFIXES:
        return "megatron", _load_log(path)
    doc = load_json(path)
    kind = classify(doc)
    if kind is None:
        raise AnalysisError(f"{path}: not a result file of a known shape (see results/SCHEMA.md)")
    if kind == "gpt4d":
        try:
            _check_gpt4d(doc)
        except AnalysisError as e:
            raise AnalysisError(f"{path}: {e}") from None
    if kind == "megatron":
        doc = _megatron_doc(doc, _run_config(path.parent))
    return kind, doc


def _candidates(root, exclude):
    if root.is_file():
        return [root]
    out = []
    for p in sorted(root.rglob("*")):
        parts = p.relative_to(root).parts
        if any(part.startswith(".") for part in parts) or not p.is_file():
            continue
        if any(ex == p or ex in p.parents for ex in exclude):
            continue
        if p.suffix == ".json" or p.suffix in LOG_SUFFIXES:
            out.append(p)
    return out


def _mentions_megatron(path):
    """Whether a log that has no iteration lines came from Megatron-LM (then it is a failed run,
    not some other job's output)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return False
    return "megatron" in text or "pretrain_gpt" in text


def load_inputs(paths, exclude=()):
    """Load every result file under the given files/folders (sorted); unreadable ones go to
    `failed`, known non-result files to `ignored`."""
    rs = ResultSet()
    exclude = [Path(e).resolve() for e in exclude]
    for given in paths:
        root = Path(given)
        if not root.exists():
            raise AnalysisError(f"{root}: no such file or folder")
        base = root if root.is_dir() else root.parent
        for p in _candidates(root, exclude):
            rel = p.relative_to(base).as_posix()
            if p.name == RUN_CONFIG:
                continue  # read together with the log beside it
            try:
                kind, doc = load_file(p)
            except AnalysisError as e:
                reason = str(e).removeprefix(f"{p}: ")
                if p.suffix in LOG_SUFFIXES and not _mentions_megatron(p):
                    rs.ignored.append((rel, "log without Megatron-LM iteration lines"))
                else:
                    rs.failed.append((rel, reason))
                continue
            if kind == "raw_trace":
                rs.ignored.append((rel, "raw trace (analyse it with ovb-trace analyze)"))
                continue
            if kind == "megatron":
                rs.warnings.extend(doc["warnings"])
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
