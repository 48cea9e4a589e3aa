"""nccl-tests output beside ovb-collective: parse the text table that NVIDIA's nccl-tests
(all_reduce_perf, reduce_scatter_perf, all_gather_perf) print, and compare its busbw with
ovb-collective's on the same collective, element type, size and placement.

The table read here is the documented text output of nccl-tests: comment lines start with "#";
each data line is `size count type redop root`, then out-of-place `time algbw busbw #wrong` and
in-place `time algbw busbw #wrong` (with -c 0 `#wrong` reads N/A). With per-iteration timing
(`i_min i_max i_p99 i_cv%` after each `#wrong`) the in-place group starts 4 columns later; the
header line says which. The footer names the program ("Collective test concluded: NAME") and the
average bus bandwidth. `size` is the larger of the send and receive buffers, which is
ovb-collective's S (docs/metrics.md), and busbw has the same definition in both.
"""

import re
from pathlib import Path

from . import stats
from .errors import AnalysisError

# nccl-tests type names -> the suite's dtype names
TYPES = {"bfloat16": "bf16", "half": "fp16", "float": "fp32", "double": "fp64", "int8": "int8",
         "uint8": "uint8", "int32": "int32", "uint32": "uint32", "int64": "int64",
         "uint64": "uint64", "f8e4m3": "fp8_e4m3", "f8e5m2": "fp8_e5m2"}
PROGRAMS = {"all_reduce_perf": "all_reduce", "reduce_scatter_perf": "reduce_scatter",
            "all_gather_perf": "all_gather"}
PLACEMENTS = ("oop", "ip")
CONCLUDED = re.compile(r"^#\s*Collective test concluded:\s*(\S+)")
AVG_BUSBW = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*([0-9.eE+-]+)")
NPROCS = re.compile(r"^#\s+Rank\s+(\d+)\s")


def _number(word, what, where):
    try:
        return float(word)
    except ValueError:
        raise AnalysisError(f"{where}: {what} '{word}' is not a number") from None


def _group(words, start, where):
    time_us, algbw, busbw, wrong = words[start:start + 4]
    return {"time_us": _number(time_us, "time", where), "algbw": _number(algbw, "algbw", where),
            "busbw": _number(busbw, "busbw", where),
            "wrong": None if wrong == "N/A" else int(_number(wrong, "#wrong", where))}


def parse_text(text, source="nccl-tests output"):
    """{"op", "program", "ranks", "avg_busbw", "rows": [{size, count, dtype, redop, root, oop, ip}]}
    of one nccl-tests run; AnalysisError when the text holds no table."""
    program, avg, ranks, per_iter, rows = None, None, set(), False, []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            if m := CONCLUDED.match(s):
                program = m.group(1)
            elif m := AVG_BUSBW.match(s):
                avg = float(m.group(1))
            elif m := NPROCS.match(s):
                ranks.add(int(m.group(1)))
            elif "i_min" in s and "busbw" in s:
                per_iter = True
            continue
        words = s.split()
        if not (words[0].isdigit() and len(words) > 1 and words[1].isdigit()):
            continue  # NCCL INFO/WARN lines and the like
        where = f"{source}: line {n}"
        ip_at = 13 if per_iter else 9
        if len(words) < ip_at + 4:
            raise AnalysisError(f"{where}: {len(words)} columns, expected at least {ip_at + 4} "
                                "(size count type redop root, then out-of-place and in-place "
                                "time algbw busbw #wrong)")
        rows.append({"size": int(words[0]), "count": int(words[1]),
                     "dtype": TYPES.get(words[2], words[2]), "redop": words[3],
                     "root": int(_number(words[4], "root", where)),
                     "oop": _group(words, 5, where), "ip": _group(words, ip_at, where)})
    if not rows:
        raise AnalysisError(f"{source}: no nccl-tests result lines (size count type redop root "
                            "time algbw busbw #wrong ...)")
    op = PROGRAMS.get(Path(program).name) if program else None
    return {"program": program, "op": op, "ranks": len(ranks) or None, "avg_busbw": avg,
            "rows": rows}


def parse_file(path):
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise AnalysisError(f"{path}: cannot read ({e.strerror})") from None
    doc = parse_text(text, str(path))
    if doc["op"] is None:
        # No footer (a run cut short): the file name may still say which program ran.
        doc["op"] = next((op for prog, op in PROGRAMS.items() if prog in Path(path).name or
                          op in Path(path).name), None)
    if doc["op"] is None:
        raise AnalysisError(f"{path}: cannot tell which collective ran (no 'Collective test "
                            "concluded' line and no all_reduce/reduce_scatter/all_gather in the "
                            "file name)")
    return doc


def ovb_busbw(benchmarks, group="world"):
    """{(op, dtype, placement, bytes): (busbw median over repetitions, ranks)} of ovb-collective's
    Google Benchmark entries (names op/dtype/group/oop|ip/bytes[/...])."""
    found = {}
    for b in benchmarks:
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred"):
            continue
        parts = str(b.get("name", "")).split("/")
        if len(parts) < 5 or parts[2] != group or parts[3] not in PLACEMENTS or "cta=" in b["name"]:
            continue
        if b.get("busbw") is None or b.get("bytes") is None:
            continue
        key = (parts[0], parts[1], parts[3], int(b["bytes"]))
        found.setdefault(key, ([], b.get("ranks")))[0].append(float(b["busbw"]))
    return {k: (stats.median(v), r) for k, (v, r) in found.items()}


def compare(nccl_runs, benchmarks, tolerance_pct=3.0, min_bytes=1 << 20):
    """Rows of (op, dtype, placement, size, nccl busbw, ovb busbw, ratio, judged, within) for every
    nccl-tests row that ovb-collective also measured. Sizes below min_bytes are listed but not
    judged: their busbw is latency, not bandwidth. Returns {"rows", "judged", "outside",
    "missing", "tolerance_pct", "min_bytes"}."""
    ovb = ovb_busbw(benchmarks)
    rows, missing = [], []
    for run in nccl_runs:
        for r in run["rows"]:
            for place in PLACEMENTS:
                key = (run["op"], r["dtype"], place, r["size"])
                nccl = r[place]["busbw"]
                if key not in ovb:
                    missing.append("/".join(map(str, key)))
                    continue
                mine, ranks = ovb[key]
                if run["ranks"] and ranks and int(ranks) != run["ranks"]:
                    raise AnalysisError(f"{run['op']}: nccl-tests ran {run['ranks']} ranks, "
                                        f"ovb-collective {int(ranks)}: not the same ranks")
                judged = r["size"] >= min_bytes and nccl > 0
                ratio = mine / nccl if nccl > 0 else None
                within = judged and abs(ratio - 1.0) * 100.0 <= tolerance_pct
                rows.append({"op": run["op"], "dtype": r["dtype"], "placement": place,
                             "size": r["size"], "nccl_busbw": nccl, "ovb_busbw": mine,
                             "ratio": ratio, "judged": judged, "within": within})
    if not rows:
        raise AnalysisError("no collective, dtype, size and placement in both the nccl-tests "
                            "output and the ovb-collective results")
    judged = [r for r in rows if r["judged"]]
    return {"rows": rows, "judged": len(judged),
            "outside": sum(1 for r in judged if not r["within"]), "missing": missing,
            "tolerance_pct": tolerance_pct, "min_bytes": min_bytes}


def format_table(result):
    out = [f"| collective | dtype | placement | size (B) | nccl-tests busbw GB/s | ovb-collective "
           f"busbw GB/s | ovb / nccl | within {result['tolerance_pct']:g} % |",
           "|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}"
        verdict = ("yes" if r["within"] else "**no**") if r["judged"] else "(not judged)"
        out.append(f"| {r['op']} | {r['dtype']} | {r['placement']} | {r['size']} | "
                   f"{r['nccl_busbw']:.2f} | {r['ovb_busbw']:.2f} | {ratio} | {verdict} |")
    out.append("")
    out.append(f"{result['judged']} judged (size >= {result['min_bytes']} B), "
               f"{result['outside']} outside {result['tolerance_pct']:g} %; "
               f"{len(result['missing'])} nccl-tests rows without an ovb-collective twin")
    return "\n".join(out) + "\n"
