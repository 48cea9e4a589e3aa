"""Required keys of each result-file kind (results/SCHEMA.md), checked when a file is loaded.

Readers are tolerant of extra keys and strict on the ones the plots and tables need: a file without
one fails with a message naming the key (e.g. "missing key 'config.model.hidden'"), which the
report lists beside the file name. Paths: "a.b" is key b inside object a; "a[].b" is key b in every
element of list a; a ":num" / ":list" / ":dict" suffix also checks the value's type.
"""

import numbers

from .errors import AnalysisError

REQUIRED = {
    "gpt4d": ("config:dict", "config.model:dict", "config.model.layers:num",
              "config.model.hidden:num", "config.model.heads:num", "config.model.seq:num",
              "config.model.vocab:num", "config.batch:num", "config.grid:dict",
              "config.grid.gx:num", "config.grid.gy:num", "config.grid.gz:num",
              "config.grid.gdata:num", "iterations:list", "iterations[].time_ms:num",
              "summary:dict", "summary.collectives:list", "summary.collectives[].group",
              "summary.collectives[].exposed_ms:num"),
    "trace": ("ranks:list", "summary:dict", "summary.span_us:num", "summary.busy_us:num",
              "summary.idle_us:num", "summary.compute_us:num", "summary.comm_us:num",
              "summary.exposed_comm_us:num", "summary.overlap_pct:num"),
    "merged_trace": ("mergedFrom:list", "mergedFrom[].rank:num", "mergedFrom[].file"),
    "model_compare": ("configs:list", "configs[].gx:num", "configs[].gy:num", "configs[].gz:num",
                      "configs[].gdata:num", "configs[].predicted_ms:num",
                      "configs[].measured_ms:num"),
    # Every configuration has these; each strategy's own keys are in STRATEGY_KEYS.
    "model_search": ("configs:list", "configs[].predicted_ms:num", "configs[].fits"),
    "model_validation": ("tolerance_pct:num", "rows:list", "rows[].id",
                         "rows[].published_tflops_per_gpu:num",
                         "rows[].predicted_tflops_per_gpu:num", "rows[].error_pct:num"),
    "megatron_records": ("[].iteration:num", "[].elapsed_ms:num"),
    "megatron_run": ("config:dict", "config.layers:num", "config.hidden:num", "config.heads:num",
                     "config.seq:num", "config.vocab:num", "config.global_batch:num",
                     "config.gpus:num", "config.tp:num", "config.pp:num"),
}

# Google Benchmark entries of the suite's microbenchmarks: name prefix -> required counters.
BENCHMARK_COUNTERS = {
    "all_reduce": ("bytes", "busbw"), "reduce_scatter": ("bytes", "busbw"),
    "all_gather": ("bytes", "busbw"),
    "gemm": ("m", "n", "k", "tflops"),
    # ovb-overlap's blocking_wait scenario (no overlap: a GEMM, then a collective waited for);
    # before "overlap", whose prefix it shares (the first matching prefix wins).
    "overlap/blocking_wait/": ("m", "n", "k", "bytes", "t_compute_mean_us", "t_comm_us",
                               "t_sequence_us", "wait_us"),
    "overlap": ("m", "n", "k", "bytes", "t_comm_under_us", "overlap_efficiency",
                "speedup_vs_serial", "fraction_of_ideal", "compute_slowdown", "comm_slowdown"),
}


# model_search configurations, by their "strategy" (absent: 4d, the files before Megatron-LM).
STRATEGY_KEYS = {
    "4d": ("gx:num", "gy:num", "gz:num", "gdata:num", "compute_ms:num", "exposed_comm_ms:num"),
    "megatron": ("tp:num", "pp:num", "dp:num", "micro_batch:num", "virtual_stages:num",
                 "memory_bytes:num"),
}


def _is_number(v):
    # NaN is allowed (Google Benchmark writes NaN for an undefined ratio); the readers skip it.
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


TYPES = {"num": (_is_number, "a number"), "list": (lambda v: isinstance(v, list), "a list"),
         "dict": (lambda v: isinstance(v, dict), "an object")}


def _walk(value, parts, done, kind):
    """Check the remaining path `parts` below `value` (reached by the path `done`)."""
    if not parts:
        if kind and not TYPES[kind][0](value):
            raise AnalysisError(f"key '{done}' is not {TYPES[kind][1]} (got {value!r:.40})")
        return
    part, rest = parts[0], parts[1:]
    each = part.endswith("[]")
    name = part[:-2] if each else part
    if name:
        if not isinstance(value, dict) or name not in value:
            raise AnalysisError(f"missing key '{done}{'.' if done else ''}{name}'")
        value, done = value[name], f"{done}{'.' if done else ''}{name}"
    if not each:
        return _walk(value, rest, done, kind)
    if not isinstance(value, list):
        raise AnalysisError(f"key '{done or 'top level'}' is not a list")
    for i, item in enumerate(value):
        _walk(item, rest, f"{done}[{i}]", kind)


def check(kind, doc):
    """Raise AnalysisError naming the first required key of `kind` that `doc` lacks."""
    for spec in REQUIRED.get(kind, ()):
        path, _, typ = spec.partition(":")
        _walk(doc, path.split("."), "", typ or None)
    if kind == "gbench":
        check_benchmarks(doc)
    if kind == "model_search":
        check_strategies(doc)


def check_strategies(doc):
    """Each search configuration carries its strategy's keys (named with its index)."""
    for i, c in enumerate(doc["configs"]):
        strategy = c.get("strategy", "4d") if isinstance(c, dict) else "4d"
        if strategy not in STRATEGY_KEYS:
            raise AnalysisError(f"key 'configs[{i}].strategy' is not 4d or megatron "
                                f"(got {strategy!r:.40})")
        for spec in STRATEGY_KEYS[strategy]:
            path, _, typ = spec.partition(":")
            _walk(c, path.split("."), f"configs[{i}]", typ or None)


def benchmark_prefix(name):
    """The suite microbenchmark an entry belongs to (by name prefix), or None."""
    for prefix in BENCHMARK_COUNTERS:
        if str(name).startswith(prefix):
            return prefix
    return None


def check_benchmarks(doc):
    """Every measured entry of a suite microbenchmark carries its counters; entries that Google
    Benchmark marks as skipped (error_occurred) carry none and are left out by the readers."""
    for b in doc["benchmarks"]:
        if not isinstance(b, dict) or b.get("error_occurred"):
            continue
        prefix = benchmark_prefix(b.get("name", ""))
        if prefix is None:
            continue
        for counter in BENCHMARK_COUNTERS[prefix]:
            if counter not in b:
                raise AnalysisError(f"missing key '{counter}' in benchmark '{b['name']}'")
            if not _is_number(b[counter]):
                raise AnalysisError(f"key '{counter}' of benchmark '{b['name']}' is not a number")
        if prefix == "overlap" and not _is_number((doc.get("context") or {}).get("world_size")):
            raise AnalysisError("missing key 'context.world_size' (needed for the bus bandwidth "
                                "under overlap)")
