#!/usr/bin/env python3
"""Chakra traces of `ovb-model export-chakra` read back in Python (ctest model.chakra.python).

The files are decoded here without the C++ code: the framing (a varint size before each message)
by hand, the messages with the module protoc generates from analysis/model/chakra/et_def.proto
and Python's protobuf package. Checked against what ovb-model says by other paths and against
the grid's rank layout computed here: the nodes' ids and dependencies (every dependency an earlier
node), the collectives per group and kind and their summed time equal `explain --json`'s overlap
table, the compute time equals its compute term, each collective's pg_name names a group of
comm_groups.json whose members are the rank's group along that dimension. Then a 1024-GPU 4D
export of the 80B GPT with --ranks 0,1023 (files for those two ranks only), and bad input: an
unknown rank and a folder that cannot be written each end with one error line and exit status 2.
Usage: chakra_decode.py OVB_MODEL PB2_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import time

model, pb2_dir, work = sys.argv[1:4]
sys.path.insert(0, pb2_dir)
import et_def_pb2 as pb  # noqa: E402  (generated at build time)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def read_varint(data, pos):
    value, shift = 0, 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def decode(path):
    with open(path, "rb") as f:
        data = f.read()
    pos, messages = 0, []
    while pos < len(data):
        size, pos = read_varint(data, pos)
        messages.append(data[pos:pos + size])
        pos += size
    check(pos == len(data), f"{path}: the last message runs past the end")
    meta = pb.GlobalMetadata.FromString(messages[0])
    return meta, [pb.Node.FromString(m) for m in messages[1:]]


def attrs(node):
    return {a.name: a for a in node.attr}


def coords(rank, g):  # default order: X fastest, then Y, Z, data
    gx, gy, gz, gd = g
    return (rank % gx, rank // gx % gy, rank // (gx * gy) % gz, rank // (gx * gy * gz))


def group_members(rank, dim, g):
    world = g[0] * g[1] * g[2] * g[3]
    if dim == "world":
        return list(range(world))
    k = "xyzd".index(dim[0])
    c = coords(rank, g)
    same = [q for q in range(world)
            if all(coords(q, g)[i] == c[i] for i in range(4) if i != k)]
    return sorted(same, key=lambda q: coords(q, g)[k])


def run(args, **kw):
    return subprocess.run([model] + args, capture_output=True, text=True, **kw)


KINDS = {pb.ALL_REDUCE: "all_reduce", pb.REDUCE_SCATTER: "reduce_scatter",
         pb.ALL_GATHER: "all_gather"}


def export_and_check(name, grid, args, ranks):
    out = os.path.join(work, name)
    g = tuple(int(x) for x in grid.split("x"))
    r = run(["export-chakra", grid, "--out", out] + args +
            (["--ranks", ",".join(map(str, ranks))] if ranks else []))
    check(r.returncode == 0, f"{name}: export-chakra exited {r.returncode}: {r.stderr}")
    if r.returncode != 0:
        return
    e = run(["explain", grid, "--json", os.path.join(work, name + ".explain.json")] + args)
    check(e.returncode == 0, f"{name}: explain exited {e.returncode}: {e.stderr}")
    explain = json.load(open(os.path.join(work, name + ".explain.json")))
    groups = json.load(open(os.path.join(out, "ovb.comm_groups.json")))
    summary = json.load(open(os.path.join(out, "ovb.json")))
    world = g[0] * g[1] * g[2] * g[3]
    ranks = ranks or list(range(world))
    written = sorted(int(f.split(".")[1]) for f in os.listdir(out) if f.endswith(".et"))
    check(written == sorted(ranks), f"{name}: files for ranks {written}, asked {sorted(ranks)}")
    for rank in ranks:
        meta, nodes = decode(os.path.join(out, f"ovb.{rank}.et"))
        check(meta.version == "0.0.4", f"{name}: version {meta.version}")
        check([n.id for n in nodes] == list(range(1, len(nodes) + 1)), f"{name}: ids not 1..N")
        check(all(d < n.id for n in nodes for d in list(n.data_deps) + list(n.ctrl_deps)),
              f"{name}: a dependency on a later node")
        comp = [n for n in nodes if n.type == pb.COMP_NODE]
        comm = [n for n in nodes if n.type == pb.COMM_COLL_NODE]
        check(len(comp) + len(comm) == len(nodes), f"{name}: a node of another type")
        check(len(comp) == summary["nodes"]["compute"] and len(comm) == summary["nodes"]["collective"],
              f"{name}: node counts differ from ovb.json")
        counts, alone_ns = {}, {}
        for n in comm:
            a = attrs(n)
            check(not a["is_cpu_op"].bool_val, f"{name}: {n.name} on the CPU")
            members = groups[a["pg_name"].string_val]
            dim = next((d for d in ("x", "y", "z", "data", "world")
                        if (d == "world" or g["xyzd".index(d[0])] > 1)
                        and group_members(rank, d, g) == members), None)
            check(dim is not None, f"{name}: rank {rank} {n.name}: group {members} is not one of its groups")
            check(f" {dim}(" in n.name, f"{name}: {n.name} sent to the {dim} group")
            key = (dim, KINDS[a["comm_type"].int64_val])
            counts[key] = counts.get(key, 0) + 1
            alone_ns[key] = alone_ns.get(key, 0) + a["ovb_duration_ns"].int64_val
            check(a["comm_size"].int64_val > 0, f"{name}: {n.name} moves no bytes")
        want = {(o["group"], o["kind"]): o for o in explain["overlap"]}
        check(set(counts) == set(want), f"{name}: groups/kinds {sorted(counts)} vs {sorted(want)}")
        for k, o in want.items():
            check(counts.get(k) == o["count"], f"{name}: {k}: {counts.get(k)} nodes, model {o['count']}")
            # Each node's time rounded to a nanosecond: within half a nanosecond per node.
            check(abs(alone_ns.get(k, 0) - o["alone_ms"] * 1e6) <= 0.5 * o["count"] + 1e-9 * o["alone_ms"] * 1e6,
                  f"{name}: {k}: {alone_ns.get(k, 0)} ns, model {o['alone_ms'] * 1e6}")
        comp_ns = sum(attrs(n)["ovb_duration_ns"].int64_val for n in comp)
        total_ns = explain["compute"]["total_ms"] * 1e6
        check(abs(comp_ns - total_ns) <= 0.5 * len(comp) + 1e-9 * total_ns,
              f"{name}: compute {comp_ns} ns, model {total_ns}")
        check(abs(sum(n.duration_micros for n in comp) - summary["compute_us"]["whole_microseconds"]) < 0.5,
              f"{name}: whole microseconds differ from ovb.json")


os.makedirs(work, exist_ok=True)
tiny = ["--machine", "perlmutter-a100", "--preset", "tiny", "--seq", "32", "--vocab", "256"]
export_and_check("all-2x2x2x1", "2x2x2x1", tiny + ["--batch", "8", "--overlap", "all"], None)
export_and_check("recompute-micro-2x1x2x2", "2x1x2x2",
                 tiny + ["--batch", "8", "--overlap", "oar,ors", "--recompute", "--micro-batch", "1",
                         "--shard-optimizer"], None)
start = time.time()
big = ["--machine", "perlmutter-a100", "--layers", "42", "--hidden", "12288", "--heads", "96",
       "--seq", "2048", "--vocab", "50304", "--batch", "1024", "--overlap", "all", "--recompute"]
export_and_check("80B-4x4x8x8", "4x4x8x8", big, [0, 1023])
print(f"1024-GPU export of two ranks, explain and decode: {time.time() - start:.1f} s")

for label, args, text in [
    ("unknown rank", ["--ranks", "0,8"], "rank 8 is not in the grid's 8 ranks"),
    ("bad range", ["--ranks", "3-1"], "ends before it starts"),
    ("not a rank", ["--ranks", "x"], "is not a rank"),
    ("unwritable folder", ["--out", os.path.join(os.path.abspath(__file__), "sub")], "sub"),
]:
    out = ["--out", os.path.join(work, "bad")] if label != "unwritable folder" else []
    r = run(["export-chakra", "2x2x2x1"] + tiny + ["--batch", "8"] + out + args)
    lines = [x for x in (r.stdout + r.stderr).splitlines() if x.strip()]
    check(r.returncode == 2, f"{label}: exit status {r.returncode}, expected 2")
    check(len(lines) == 1 and lines[0].startswith("ovb-model: error:") and text in lines[0],
          f"{label}: expected one error line with '{text}', got {lines}")
check(not os.path.exists(os.path.join(work, "bad")) or not any(
    f.endswith(".et") for f in os.listdir(os.path.join(work, "bad"))), "bad input wrote traces")

shutil.rmtree(os.path.join(work, "80B-4x4x8x8"), ignore_errors=True)
print("chakra_decode: " + ("FAILED" if failures else "passed"))
sys.exit(1 if failures else 0)
