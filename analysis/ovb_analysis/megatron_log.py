"""Parse Megatron-LM training logs into one record per iteration line (docs/megatron.md).

An iteration line (printed by the last rank every --log-interval) looks like
    [2026-11-22 10:20:11.576187] iteration  30/  30 | consumed samples:  120 | ... |
    number of nan iterations:   0 |   (one line)
Accepted variants: with or without the timestamp (with or without microseconds) and the throughput
field; learning rate with 3 or 6 decimals; `lm loss` / `grad norm` absent (skipped fp16 warm-up
iterations); `num zeros`, `params norm`, MoE losses and any other `name: value` field (kept in
`extra`); a launcher prefix before the line (`0: `, `[default0]:`). Every other line (timers, memory
reports, warnings, tracebacks) is ignored. An iteration line that does not end with `|`, or lacks
the final `number of nan iterations` field that the log's other lines have, was cut off: it is
skipped with a warning (the last line of a killed job), never a crash.
"""

import math
import re

from .errors import AnalysisError
from .io_util import read_text

ITERATION_RE = re.compile(
    r"(?:^|[\s\]:])(?:\[(?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?)\]\s*)?"
    r"iteration\s+(?P<it>\d+)\s*/\s*(?P<total>\d+)\s*\|(?P<rest>.*)$")

# Megatron's field name -> (record key, type).
KNOWN_FIELDS = {
    "consumed samples": ("consumed_samples", int),
    "elapsed time per iteration (ms)": ("elapsed_ms", float),
    "throughput per GPU (TFLOP/s/GPU)": ("tflops_per_gpu", float),
    "learning rate": ("learning_rate", float),
    "global batch size": ("global_batch_size", int),
    "lm loss": ("lm_loss", float),
    "loss scale": ("loss_scale", float),
    "grad norm": ("grad_norm", float),
    "number of skipped iterations": ("skipped_iterations", int),
    "number of nan iterations": ("nan_iterations", int),
}

RECORD_KEYS = ("iteration", "train_iters", "consumed_samples", "elapsed_ms", "tflops_per_gpu",
               "learning_rate", "global_batch_size", "lm_loss", "loss_scale", "grad_norm",
               "skipped_iterations", "nan_iterations", "timestamp", "extra")

TRUNCATED_START_RE = re.compile(r"\s*(?:\S*:\s*)?(?:\[\d|iteration)")
ARGS_BEGIN_RE = re.compile(r"-+ arguments -+")
ARGS_END_RE = re.compile(r"-+ end of arguments -+")
ARG_LINE_RE = re.compile(r"^\s*(?:\S*:\s*)?(?P<name>[A-Za-z_][A-Za-z0-9_]*) \.{2,} (?P<value>.*?)\s*$")


def _number(text, kind):
    """int or float from Megatron's text; non-finite values (nan, inf) become None (strict JSON)."""
    text = text.strip()
    if kind is int:
        try:
            return int(text)
        except ValueError:
            value = float(text)  # "12.0"
            if not value.is_integer():
                raise ValueError(text) from None
            return int(value)
    value = float(text)
    return value if math.isfinite(value) else None


def _extra_value(text):
    try:
        return _number(text, float)
    except ValueError:
        return text.strip()


def parse_iteration_line(line):
    """A record dict for an iteration line; None for other lines. A cut-off iteration line raises
    ValueError (the caller decides whether to warn)."""
    m = ITERATION_RE.search(line.rstrip("\r\n"))
    if m is None:
        return None
    rest = m.group("rest").rstrip()
    if not rest.endswith("|") and rest.strip():
        raise ValueError("iteration line cut off (no closing '|')")
    rec = {key: None for key in RECORD_KEYS}
    rec["iteration"] = int(m.group("it"))
    rec["train_iters"] = int(m.group("total"))
    rec["timestamp"] = m.group("ts")
    rec["extra"] = {}
    for field in rest.split("|"):
        if not field.strip():
            continue
        name, sep, value = field.partition(":")
        name = name.strip()
        if not sep or not name:
            raise ValueError(f"field {field.strip()!r} is not 'name: value'")
        if name in KNOWN_FIELDS:
            key, kind = KNOWN_FIELDS[name]
            try:
                rec[key] = _number(value, kind)
            except ValueError:
                raise ValueError(f"field {name!r} has a non-numeric value {value.strip()!r}") from None
        else:
            rec["extra"][name] = _extra_value(value)
    if rec["elapsed_ms"] is None:
        raise ValueError("iteration line without 'elapsed time per iteration (ms)'")
    return rec


def parse_arguments(lines):
    """Megatron's start-up `arguments` block as {name: text}; empty when the log has none."""
    args, inside = {}, False
    for line in lines:
        if not inside:
            inside = ARGS_BEGIN_RE.search(line) is not None and "end of" not in line
            continue
        if ARGS_END_RE.search(line):
            break
        m = ARG_LINE_RE.match(line)
        if m:
            args[m.group("name")] = m.group("value")
    return args


class ParsedLog:
    """Records (one per iteration line), the `arguments` block and the warnings met while parsing."""

    def __init__(self, records, arguments, warnings, source):
        self.records = records
        self.arguments = arguments
        self.warnings = warnings
        self.source = source


def _where(number, lines):
    return "last line" if number == len(lines) else f"line {number}"


def parse_log_text(text, source="<log>"):
    """Parse a whole log; warnings (cut-off or malformed iteration lines) are collected, not raised.

    Megatron ends every iteration line with `number of nan iterations: N |`, so a line without that
    field, in a log whose other lines have it, was cut off (at a `|`, where the first check cannot
    see it); so is a last line without a line end that lacks it."""
    lines = text.splitlines()
    # A job killed while printing leaves a last line without a line end.
    cut_last = bool(lines) and not text.endswith(("\n", "\r"))
    found, warnings = [], []
    for number, line in enumerate(lines, start=1):
        is_cut = cut_last and number == len(lines)
        try:
            rec = parse_iteration_line(line)
            if rec is not None and is_cut and rec["nan_iterations"] is None:
                raise ValueError("iteration line cut off (no line end, fields missing)")
        except ValueError as e:
            warnings.append(f"{source}: {_where(number, lines)} skipped: {e}")
            continue
        if rec is not None:
            found.append((number, rec))
        elif is_cut and TRUNCATED_START_RE.match(line):
            warnings.append(f"{source}: last line skipped: cut off before the iteration fields")
    complete = any(rec["nan_iterations"] is not None for _, rec in found)
    records = []
    for number, rec in found:
        if complete and rec["nan_iterations"] is None:
            warnings.append(f"{source}: {_where(number, lines)} skipped: iteration line cut off "
                            "(its final 'number of nan iterations' field is missing)")
        else:
            records.append(rec)
    return ParsedLog(records, parse_arguments(lines), warnings, source)


def parse_log_file(path):
    """Parse a log file; a missing file or one with no iteration lines raises AnalysisError."""
    parsed = parse_log_text(read_text(path), source=str(path))
    if not parsed.records:
        raise AnalysisError(f"{path}: no Megatron-LM iteration lines found "
                            "(expected lines like ' iteration 1/ 30 | consumed samples: ... |')")
    return parsed


def model_from_arguments(args):
    """GPT shape and parallel layout from the `arguments` block, or None when it is incomplete."""
    keys = {"layers": "num_layers", "hidden": "hidden_size", "heads": "num_attention_heads",
            "seq": "seq_length", "global_batch": "global_batch_size", "world_size": "world_size",
            "tp": "tensor_model_parallel_size", "pp": "pipeline_model_parallel_size"}
    out = {}
    for key, name in keys.items():
        try:
            out[key] = int(args[name])
        except (KeyError, ValueError):
            return None
    vocab = args.get("vocab_size")
    out["vocab"] = int(vocab) if vocab and vocab.isdigit() else None
    out["recompute"] = args.get("recompute_granularity", "None") == "full"
    return out
