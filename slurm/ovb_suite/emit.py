"""emit-sbatch: Slurm jobs for the best configurations of an `ovb-model search` (like AxoNN's
launcher): one job per top-k configuration, or one job array. Each job runs gpt4d with that grid as
a resumable step (ovb-suite exec) into one shared results folder, so `ovb-model compare` and the
report can then rank the measured configurations against the prediction.

Input: the search JSON (results/SCHEMA.md "Model"), given with --search, or made here: the words
after `--` are `ovb-model search` arguments, and emit-sbatch runs that search with
`--json OUT_DIR/search.json` first (the slurm layer calls the model; the model knows nothing of
Slurm). The model and batch come from its `inputs`
object - `inputs.model.{layers,hidden,heads,seq,vocab}` (or the same keys directly in `inputs`),
for a Llama search also `inputs.model.{arch,kv_heads,ffn_hidden,rope_theta}`,
`inputs.batch`, `inputs.gpus`, optionally `inputs.overlap` (list or comma string) and
`inputs.recompute` - and each configuration from `configs[i].{rank,gx,gy,gz,gdata,order,fits}`,
with its micro-batch and optimizer sharding (`configs[i].{micro_batch,micro_steps,
shard_optimizer}`, what the search chose; older files: `inputs.micro_batch` and
`inputs.shard_optimizer` when they are values).
Configurations that do not fit in memory are left out. `--gpt4d-args` adds words to every gpt4d
command (e.g. "--iters 50 --recompute").
"""

import argparse
import os
import shlex
import stat
import subprocess
import sys

from .launch import find_binary, pick_build
from .util import OneLineParser, SuiteError, atomic_write_text, read_json

from ovb_analysis import overlap_flags  # noqa: E402 (the path is set by .util)
from ovb_analysis.search_choices import choice_args, config_overlap  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
MODEL_KEYS = ("layers", "hidden", "heads", "seq", "vocab")
# A Llama search's further shape: the jobs must train the model that was searched.
LLAMA_KEYS = ("kv_heads", "ffn_hidden", "rope_theta")


def _get(doc, path, where):
    cur = doc
    for k in path.split("."):
        if not isinstance(cur, dict) or k not in cur:
            raise SuiteError(f"{where}: missing '{path}' (see slurm/ovb_suite/emit.py)")
        cur = cur[k]
    return cur


def read_search(path):
    """(model args, batch, gpus, overlap, configs) of a search JSON."""
    doc = read_json(path)
    if doc.get("strategy", "4d") != "4d":
        raise SuiteError(f"{path}: a search of strategy '{doc['strategy']}': the jobs run gpt4d, "
                         "so they need a 4D search (--strategy 4d, the default; for Megatron-LM "
                         "use ovb-analysis megatron-cmd --from-model)")
    inputs = _get(doc, "inputs", path)
    model = inputs.get("model") if isinstance(inputs.get("model"), dict) else inputs
    shape = {k: int(_get(model, k, f"{path}: inputs.model")) for k in MODEL_KEYS}
    arch = model.get("arch", "gpt")
    if arch not in ("gpt", "llama"):
        raise SuiteError(f"{path}: inputs.model.arch '{arch}' is neither gpt nor llama")
    if arch == "llama":
        shape["arch"] = arch
        shape.update({k: _get(model, k, f"{path}: inputs.model") for k in LLAMA_KEYS})
    batch, gpus = int(_get(inputs, "batch", path)), int(_get(inputs, "gpus", path))
    if inputs.get("recompute"):
        shape["recompute"] = True
    overlap = inputs.get("overlap", overlap_flags.NONE)
    if isinstance(overlap, list):
        overlap = overlap_flags.text(overlap)
    configs = _get(doc, "configs", path)
    if not isinstance(configs, list):
        raise SuiteError(f"{path}: 'configs' is not a list")
    out = []
    for i, c in enumerate(configs):
        grid = tuple(int(_get(c, k, f"{path}: configs[{i}]")) for k in ("gx", "gy", "gz", "gdata"))
        if grid[0] * grid[1] * grid[2] * grid[3] != gpus:
            raise SuiteError(f"{path}: configs[{i}] grid {grid} does not multiply to {gpus} GPUs")
        if c.get("fits", True):
            out.append({"rank": int(c.get("rank", i + 1)), "grid": grid,
                        "order": str(c.get("order") or "x,y,z"),
                        "choices": choice_args(c, inputs), "tp_chunks": c.get("tp_chunks")})
    return shape, batch, gpus, str(overlap), sorted(out, key=lambda c: c["rank"])


def job_name(c):
    g = c["grid"]
    order = "" if c["order"] == "x,y,z" else "-" + c["order"].replace(",", "")
    return f"top{c['rank']}-g{g[0]}x{g[1]}x{g[2]}x{g[3]}{order}"


def gpt4d_words(c, shape, batch, overlap, backend, extra):
    g = c["grid"]
    words = ["--backend", backend, "--gx", str(g[0]), "--gy", str(g[1]), "--gz", str(g[2]),
             "--gdata", str(g[3])]
    if c["order"] != "x,y,z":
        words += ["--grid-order", c["order"]]
    for k in MODEL_KEYS:
        words += [f"--{k}", str(shape[k])]
    if shape.get("arch"):
        words += ["--arch", shape["arch"]] + [w for k in LLAMA_KEYS
                                              for w in (f"--{k.replace('_', '-')}", f"{shape[k]:g}")]
    if shape.get("recompute"):
        words.append("--recompute")
    words += c.get("choices", [])
    return words + ["--batch", str(batch), "--overlap", config_overlap(c, overlap), "--data",
                    "synthetic"] + extra


def _header(name, gpus, a, array=None):
    nodes = -(-gpus // a.gpus_per_node) if a.gpus_per_node else 1
    lines = ["#!/bin/bash",
             "# Generated by slurm/emit-sbatch from an `ovb-model search` (do not edit: regenerate).",
             "# Submit with slurm/submit FILE (site options from slurm/site.sh), or sbatch FILE.",
             f"#SBATCH --job-name=ovb-{name}",
             f"#SBATCH --nodes={nodes}",
             f"#SBATCH --ntasks={gpus}"]
    if a.gpus_per_node:
        lines += [f"#SBATCH --ntasks-per-node={min(gpus, a.gpus_per_node)}",
                  f"#SBATCH --gpus-per-node={min(gpus, a.gpus_per_node)}"]
    if array is not None:
        lines.append(f"#SBATCH --array=0-{array - 1}")
    log = os.path.join(a.out_dir_abs, "logs", "%x-%A_%a.out" if array is not None else "%x-%j.out")
    lines += [f"#SBATCH --time={a.time}", "#SBATCH --requeue", "#SBATCH --signal=B:USR1@180",
              "#SBATCH --open-mode=append", f"#SBATCH --output={log}",
              "set -euo pipefail", "export OVB_JOB_NAME=ovb-search-job",
              f"OVB_ROOT=${{OVB_ROOT:-{shlex.quote(a.repo)}}}",
              'source "$OVB_ROOT/slurm/lib/job-env.sh"']
    return lines


def _exec_line(name, words, a):
    return (f'exec "${{OVB_SUITE[@]}}" exec --out {shlex.quote(a.results_abs)} --name gpt4d-{name} '
            f'--group gpt4d --ranks "$SLURM_NTASKS" --output gpt4d/{name}.json '
            f'--stall {a.stall:g} -- \\\n  gpt4d {shlex.join(words)} '
            f'--out "{{tmp}}/gpt4d/{name}.json"')


def emit(a):
    shape, batch, gpus, overlap, configs = read_search(a.search)
    configs = configs[:a.top_k]
    if not configs:
        raise SuiteError(f"{a.search}: no configuration that fits in memory")
    overlap = a.overlap or overlap
    extra = shlex.split(a.gpt4d_args or "")
    written = []
    if a.array:
        lines = _header("search-array", gpus, a, array=len(configs))
        lines.append('case "$SLURM_ARRAY_TASK_ID" in')
        for i, c in enumerate(configs):
            name = job_name(c)
            words = gpt4d_words(c, shape, batch, overlap, a.backend, extra)
            lines += [f"  {i})", "    " + _exec_line(name, words, a).replace("\n", "\n    "), "    ;;"]
        lines += ['  *) echo "no configuration for array task $SLURM_ARRAY_TASK_ID" >&2; exit 2 ;;',
                  "esac", ""]
        written.append(_write(a, "search-array.sbatch", lines))
    else:
        for c in configs:
            name = job_name(c)
            lines = _header(name, gpus, a) + [
                _exec_line(name, gpt4d_words(c, shape, batch, overlap, a.backend, extra), a), ""]
            written.append(_write(a, f"{name}.sbatch", lines))
    submit = ["#!/bin/bash", "# Generated by slurm/emit-sbatch: submits every job of this folder.",
              "set -euo pipefail", f"cd {shlex.quote(a.out_dir_abs)}"]
    submit += [f"{shlex.quote(os.path.join(a.repo, 'slurm', 'submit'))} {os.path.basename(w)}"
               for w in written] + [""]
    written.append(_write(a, "submit-all.sh", submit))
    return written


def _write(a, name, lines):
    path = os.path.join(a.out_dir_abs, name)
    atomic_write_text(path, "\n".join(lines))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def make_parser():
    p = OneLineParser(prog="emit-sbatch", usage="%(prog)s (--search JSON | ... -- SEARCH_ARGS)",
                      description="Slurm jobs (one per top-k configuration, or a job array) from "
                      "an `ovb-model search` JSON, or from a search run here: the words after `--` "
                      "are `ovb-model search` arguments (e.g. -- --machine perlmutter-a100 "
                      "--preset 1.3B --batch 16 --gpus 8), and the search JSON goes to "
                      "OUT_DIR/search.json.")
    p.add_argument("--search", metavar="JSON", help="ovb-model search --json output")
    p.add_argument("--build", metavar="DIR", help="build folder with ovb-model, for a search run "
                   "here (default: $OVB_BUILD_DIR, else the first of build/{default,cuda,host} "
                   "that has it)")
    p.add_argument("--out-dir", required=True, metavar="DIR", help="where the job scripts go")
    p.add_argument("--top-k", type=int, default=3, metavar="K", help="jobs for the K best "
                   "configurations that fit (default 3)")
    p.add_argument("--array", action="store_true", help="one job array instead of K jobs")
    p.add_argument("--results", metavar="DIR", help="results folder all jobs write into "
                   "(default OUT_DIR/results)")
    p.add_argument("--backend", default="cuda", choices=("cuda", "host", "auto"),
                   help="gpt4d --backend (default cuda)")
    p.add_argument("--overlap", help="gpt4d --overlap (default: the search's, else none)")
    p.add_argument("--gpt4d-args", metavar="WORDS", help="more gpt4d arguments, e.g. '--iters 50'")
    p.add_argument("--gpus-per-node", type=int, default=0, metavar="N",
                   help="GPUs (and ranks) per node; 0 (default): leave nodes and GPUs to the site "
                   "configuration (slurm/site.sh)")
    p.add_argument("--time", default="01:00:00", help="time limit per job (default 01:00:00)")
    p.add_argument("--stall", type=float, default=900, metavar="S",
                   help="watchdog: seconds without output before a run counts as hung (900)")
    p.add_argument("--repo", default=REPO, help=argparse.SUPPRESS)
    return p


def ovb_model_path(a):
    """ovb-model of --build, $OVB_BUILD_DIR or the first build folder that has it."""
    build = a.build or os.environ.get("OVB_BUILD_DIR")
    if not build:
        build, _ = pick_build(a.repo, {"ovb-model"}, strict=False)
    if not build or not os.path.isdir(build):
        raise SuiteError(f"no build folder{' ' + build if build else ''} to run ovb-model search "
                         "in: build the suite or pass --build DIR")
    model = find_binary(build, "ovb-model")
    if not model:
        raise SuiteError(f"no ovb-model in {build} (build the analysis part, or pass --build DIR)")
    return model


def run_search(a, words):
    """Runs `ovb-model search WORDS --json OUT_DIR/search.json`; its exit status (0: a.search set).
    Its table and its one-line errors go straight to the user."""
    if "--json" in words or any(w.startswith("--json=") for w in words):
        raise SuiteError("--json among the search arguments: the search JSON goes to "
                         "OUT_DIR/search.json (or give an existing one with --search)")
    a.search = os.path.join(a.out_dir_abs, "search.json")
    cmd = [ovb_model_path(a), "search", *words, "--json", a.search]
    sys.stdout.flush()
    try:
        return subprocess.run(cmd, check=False).returncode
    except OSError as e:
        raise SuiteError(f"cannot run {cmd[0]}: {e.strerror}") from e


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    words = None
    if "--" in argv:  # the search's own arguments: passed on untouched
        words, argv = argv[argv.index("--") + 1:], argv[:argv.index("--")]
    a = make_parser().parse_args(argv)
    try:
        if a.top_k < 1 or a.gpus_per_node < 0:
            raise SuiteError("--top-k must be >= 1 and --gpus-per-node >= 0")
        if (a.search is None) == (words is None):
            raise SuiteError("give either --search JSON or `-- SEARCH_ARGS` (ovb-model search "
                             "arguments), not " + ("both" if a.search else "neither"))
        if words is not None and not words:
            raise SuiteError("no ovb-model search arguments after `--`")
        a.out_dir_abs = os.path.abspath(a.out_dir)
        a.results_abs = os.path.abspath(a.results or os.path.join(a.out_dir, "results"))
        os.makedirs(os.path.join(a.out_dir_abs, "logs"), exist_ok=True)
        if words is not None:
            status = run_search(a, words)
            if status != 0:
                return status  # ovb-model has said why, in its own line
        for path in emit(a):
            print(path)
    except SuiteError as e:
        print(f"emit-sbatch: error: {e}", file=sys.stderr)
        return 2
    return 0

