"""Subcommand megatron-cmd: print (and optionally write, run or submit) a Megatron-LM launch matched
to a gpt4d run. Generating needs no Megatron-LM checkout; --run and --submit need MEGATRON_PATH."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from . import megatron_launch as ml
from . import megatron_script as ms
from . import results, runs
from .cli_types import positive_float
from .errors import AnalysisError
from .io_util import atomic_write, dumps_json, load_json

CONFIG_NAME = "megatron_config.json"


def add_cmd_parser(sub):
    p = sub.add_parser("megatron-cmd", help="generate a Megatron-LM command line / sbatch script",
                       description="Generate the Megatron-LM pretrain_gpt.py command (and an sbatch "
                       "script) for a model, batch and GPU count matching a gpt4d run. Combinations "
                       "Megatron rejects are reported before anything is written or submitted.")
    m = p.add_argument_group("model")
    m.add_argument("--gpt4d", metavar="RESULT.json",
                   help="match this gpt4d result: its model, global batch, GPU count, "
                   "recomputation and peak (explicit options override, with a warning)")
    m.add_argument("--from-model", metavar="SEARCH.json",
                   help="take the performance model's best Megatron configuration from an "
                   "ovb-model search --strategy megatron|all or versus JSON: model, batch, GPUs, TP, "
                   "PP, micro batch, virtual stages, recomputation, SP and the distributed optimizer "
                   "(with its overlaps)")
    m.add_argument("--preset", help=f"model: {', '.join(list(ml.PRESETS) + list(ml.LLAMA_PRESETS))}"
                   " (sets layers/hidden/heads; for Llama also the architecture, kv-heads, "
                   "ffn-hidden, vocabulary and RoPE base)")
    m.add_argument("--arch", choices=("gpt", "llama"),
                   help="architecture (default gpt; llama: SwiGLU, RMSNorm, RoPE, GQA, no biases, "
                   "untied embeddings)")
    m.add_argument("--layers", type=int)
    m.add_argument("--hidden", type=int)
    m.add_argument("--heads", type=int)
    m.add_argument("--kv-heads", type=int, help="query groups of grouped-query attention (llama)")
    m.add_argument("--ffn-hidden", type=int, help="SwiGLU width (llama)")
    m.add_argument("--rope-theta", type=positive_float, help="rotary base (llama; default 10000)")
    m.add_argument("--seq", type=int, help="sequence length (default 2048)")
    m.add_argument("--vocab", type=int, help="vocabulary (default 50304)")
    t = p.add_argument_group("training and parallelism")
    t.add_argument("--global-batch", type=int, help="global batch in sequences (required unless "
                   "--gpt4d)")
    t.add_argument("--micro-batch", type=int, help="micro batch (default 1)")
    t.add_argument("--gpus", type=int, help="total GPU count (required unless --gpt4d)")
    t.add_argument("--tp", type=int, help="tensor parallel size (suite grid: Gy; default 1)")
    t.add_argument("--pp", type=int, help="pipeline parallel size (default 1)")
    t.add_argument("--iters", type=int, default=30, help="training iterations (default 30)")
    t.add_argument("--recompute", action="store_true", help="full activation recomputation")
    o = p.add_argument_group("overlap flags")
    o.add_argument("--sequence-parallel", action="store_true")
    o.add_argument("--distributed-optimizer", action="store_true",
                   help="--use-distributed-optimizer")
    o.add_argument("--overlap-grad-reduce", action="store_true")
    o.add_argument("--overlap-param-gather", action="store_true")
    o.add_argument("--tp-comm-overlap", action="store_true")
    o.add_argument("--local", action="store_true",
                   help="no Transformer Engine: --transformer-impl local and the fusions off")
    r = p.add_argument_group("output and launch")
    r.add_argument("--sbatch", metavar="OUT.sbatch", help="write a Slurm batch script")
    r.add_argument("--nodes", type=int, help="nodes (default: GPUs / 8, at least 1)")
    r.add_argument("--gpus-per-node", type=int, help="GPUs per node (default: up to 8)")
    r.add_argument("--time", default="00:30:00", help="Slurm time limit (default 00:30:00)")
    r.add_argument("--run-dir", metavar="DIR", help="where megatron_config.json and the log go "
                   "(default: the sbatch script's folder; megatron-run for --run)")
    r.add_argument("--megatron-path", help="Megatron-LM checkout (default: $MEGATRON_PATH)")
    r.add_argument("--peak", type=positive_float, metavar="TFLOPS",
                   help="dense peak TFLOP/s per GPU, recorded for %% of peak in the plots "
                   "(default with --gpt4d: its context's peak)")
    r.add_argument("--run", action="store_true", help="run it now on this node with torchrun")
    r.add_argument("--submit", action="store_true", help="submit the sbatch script with sbatch")
    r.add_argument("--list-presets", action="store_true", help="list the GPT presets and exit")
    p.set_defaults(handler=cmd_megatron)


def matched_to_gpt4d(path):
    """Model, batch, GPU count, recomputation and peak of a gpt4d result, as megatron-cmd values."""
    kind, doc = results.load_file(path)
    if kind != "gpt4d":
        raise AnalysisError(f"{path}: not a gpt4d result (found {kind})")
    run = runs.from_gpt4d(results.ResultFile(Path(path), str(path), kind, doc))
    m = run.model
    return {"layers": int(m["layers"]), "hidden": int(m["hidden"]), "heads": int(m["heads"]),
            "seq": int(m["seq"]), "vocab": int(m["vocab"]), "global_batch": run.batch,
            "gpus": run.gpus, "recompute": run.extra["recompute"], "preset": m.get("preset"),
            "peak": run.peak, **_arch_values(doc["config"]["model"])}


def _arch_values(m):
    """The architecture fields of a run configuration's model (absent before Llama: GPT)."""
    if m.get("arch", "gpt") != "llama":
        return {"arch": "gpt"}
    return {"arch": "llama", "kv_heads": int(m["kv_heads"]), "ffn_hidden": int(m["ffn_hidden"]),
            "rope_theta": float(m["rope_theta"])}


def from_model(path):
    """The best fitting Megatron configuration of an ovb-model search/versus JSON, as megatron-cmd
    values (the first "megatron" entry: the search ranks fitting configurations first)."""
    doc = load_json(path)
    configs = doc.get("configs") if isinstance(doc, dict) else None
    if not isinstance(configs, list) or "inputs" not in doc:
        raise AnalysisError(f"{path}: not an ovb-model search or versus JSON (no inputs/configs)")
    best = next((c for c in configs if c.get("strategy") == "megatron" and c.get("fits")), None)
    if best is None:
        raise AnalysisError(f"{path}: no fitting Megatron configuration (search with --strategy "
                            "megatron or all, or ovb-model versus)")
    if best.get("first_stage_layers") or best.get("last_stage_layers"):
        # The launch splits the layers evenly; an uneven split would be a different run.
        raise AnalysisError(f"{path}: the best Megatron configuration has uneven pipeline stages "
                            "(first_stage_layers / last_stage_layers), which megatron-cmd does "
                            "not emit")
    m, inputs = doc["inputs"]["model"], doc["inputs"]
    return {"layers": int(m["layers"]), "hidden": int(m["hidden"]), "heads": int(m["heads"]),
            "seq": int(m["seq"]), "vocab": int(m["vocab"]), "global_batch": int(inputs["batch"]),
            "gpus": int(inputs["gpus"]), "preset": m.get("preset"), "tp": int(best["tp"]),
            "pp": int(best["pp"]), "micro_batch": int(best["micro_batch"]),
            "virtual_stages": int(best["virtual_stages"]),
            "recompute": best["recompute"] == "full",
            "recompute_layers": int(best.get("recompute_layers", 0)),
            "selective_recompute": best["recompute"] == "selective",
            "sequence_parallel": bool(best["sequence_parallel"]) and int(best["tp"]) > 1,
            "distributed_optimizer": bool(best["distributed_optimizer"]),
            "predicted_ms": best.get("predicted_ms"), **_arch_values(m)}


def config_from_args(args):
    """(MegatronConfig, preset label, peak, warnings) from the options; with --gpt4d the model,
    batch, GPU count and recomputation come from that result unless given explicitly; with
    --from-model everything comes from the model's best Megatron configuration."""
    if args.gpt4d and args.from_model:
        raise AnalysisError("give --gpt4d or --from-model, not both")
    if args.from_model:
        return _config_from_model(args)
    base = matched_to_gpt4d(args.gpt4d) if args.gpt4d else {}
    warnings = []
    values = dict(base)
    if args.preset:
        values.update(ml.model_preset(args.preset))
        values["preset"] = args.preset
    if args.arch and args.preset and values["arch"] != args.arch:
        raise AnalysisError(f"--arch {args.arch} contradicts --preset {args.preset} (a "
                            f"{values['arch']} model)")
    for name in ("arch", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "rope_theta", "seq",
                 "vocab", "global_batch", "gpus"):
        given = getattr(args, name)
        if given is not None:
            values[name] = given
    for name in ("arch", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "seq", "vocab",
                 "global_batch", "gpus"):
        if name in base and values[name] != base[name]:
            warnings.append(f"--{name.replace('_', '-')} {values[name]} differs from the gpt4d run "
                            f"({base[name]}): the two runs are not matched")
    values.setdefault("seq", ml.DEFAULT_SEQ)
    values.setdefault("vocab", ml.DEFAULT_VOCAB)
    missing = [f"--{n.replace('_', '-')}" for n in ("layers", "hidden", "heads", "global_batch",
                                                     "gpus") if values.get(n) is None]
    if missing:
        raise AnalysisError(f"megatron-cmd needs {', '.join(missing)} (or --preset for the model, "
                            "or --gpt4d RESULT.json for everything)")
    cfg = ml.MegatronConfig(
        layers=values["layers"], hidden=values["hidden"], heads=values["heads"], seq=values["seq"],
        vocab=values["vocab"], global_batch=values["global_batch"],
        micro_batch=args.micro_batch or 1, gpus=values["gpus"], tp=args.tp or 1, pp=args.pp or 1,
        iters=args.iters,
        sequence_parallel=args.sequence_parallel, distributed_optimizer=args.distributed_optimizer,
        overlap_grad_reduce=args.overlap_grad_reduce, overlap_param_gather=args.overlap_param_gather,
        tp_comm_overlap=args.tp_comm_overlap, local=args.local,
        recompute=args.recompute or bool(values.get("recompute")), **_arch_config(values))
    peak = args.peak if args.peak is not None else values.get("peak")
    return cfg, values.get("preset"), peak, warnings


def _arch_config(values):
    """The MegatronConfig architecture fields from megatron-cmd values."""
    return {"arch": values.get("arch") or "gpt", "kv_heads": values.get("kv_heads") or 0,
            "ffn_hidden": values.get("ffn_hidden") or 0,
            "rope_theta": values.get("rope_theta") or ml.DEFAULT_ROPE_THETA}


def _config_from_model(args):
    v = from_model(args.from_model)
    warnings = []
    for name in ("preset", "arch", "layers", "hidden", "heads", "kv_heads", "ffn_hidden",
                 "rope_theta", "seq", "vocab", "global_batch", "gpus", "micro_batch", "tp", "pp"):
        if getattr(args, name) is not None:
            warnings.append(f"--{name.replace('_', '-')} ignored: --from-model sets it")
    dist = v["distributed_optimizer"]
    cfg = ml.MegatronConfig(
        layers=v["layers"], hidden=v["hidden"], heads=v["heads"], seq=v["seq"], vocab=v["vocab"],
        global_batch=v["global_batch"], micro_batch=v["micro_batch"], gpus=v["gpus"], tp=v["tp"],
        pp=v["pp"], iters=args.iters, sequence_parallel=v["sequence_parallel"],
        distributed_optimizer=dist, overlap_grad_reduce=dist, overlap_param_gather=dist,
        tp_comm_overlap=args.tp_comm_overlap, local=args.local, recompute=v["recompute"],
        recompute_layers=v["recompute_layers"], selective_recompute=v["selective_recompute"],
        virtual_stages=v["virtual_stages"],
        **_arch_config(v))
    print(f"# the model's best Megatron configuration ({args.from_model}): TP={cfg.tp} PP={cfg.pp} "
          f"micro batch {cfg.micro_batch}, {cfg.virtual_stages} virtual stage(s), predicted "
          f"{v['predicted_ms']:.1f} ms per iteration")
    return cfg, v.get("preset"), args.peak, warnings


def megatron_path(args, needed):
    path = args.megatron_path or os.environ.get("MEGATRON_PATH")
    if not path:
        if needed:
            raise AnalysisError("MEGATRON_PATH is not set: point it (or --megatron-path) at a "
                                "Megatron-LM checkout to run or submit")
        return None
    if needed and not (Path(path) / "pretrain_gpt.py").is_file():
        raise AnalysisError(f"{path}/pretrain_gpt.py not found: MEGATRON_PATH must be a Megatron-LM "
                            "checkout")
    return path


def _write_record(cfg, warnings, run_dir, peak, preset):
    record = ml.run_record(cfg, warnings)
    record["config"]["preset"] = preset
    if peak:
        record["peak_tflops"] = peak
    return atomic_write(Path(run_dir) / CONFIG_NAME, dumps_json(record))


def cmd_megatron(args):
    if args.list_presets:
        for name, (layers, hidden, heads) in ml.PRESETS.items():
            print(f"{name:>5}: --layers {layers} --hidden {hidden} --heads {heads}")
        for name, m in ml.LLAMA_PRESETS.items():
            print(f"{name}: --arch llama --layers {m['layers']} --hidden {m['hidden']} --heads "
                  f"{m['heads']} --kv-heads {m['kv_heads']} --ffn-hidden {m['ffn_hidden']} "
                  f"--vocab {ml.LLAMA3_VOCAB} --rope-theta {int(ml.LLAMA3_ROPE_THETA)}")
        return 0
    raw, preset, peak, warnings = config_from_args(args)
    cfg, rule_warnings = ml.validate(raw)
    warnings += rule_warnings
    if args.submit and not args.sbatch:
        raise AnalysisError("--submit needs --sbatch OUT.sbatch")
    nodes, gpn = ms.node_layout(cfg.gpus, args.nodes, args.gpus_per_node)
    if args.run and nodes > 1:
        raise AnalysisError(f"--run starts one node; {cfg.gpus} GPUs need {nodes} nodes: use "
                            "--sbatch and --submit")
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    path = megatron_path(args, needed=args.run or args.submit)
    grid = ml.suite_grid(cfg)
    print(f"# suite grid: Gx={grid['gx']} Gy={grid['gy']} Gz={grid['gz']} Gdata={grid['gdata']}"
          f" (Megatron TP={cfg.tp} PP={cfg.pp} DP={cfg.dp})")
    print(ms.local_command(cfg, nodes, gpn))
    if path is None:
        print("note: the command uses $MEGATRON_PATH: set it (or pass --megatron-path) to a "
              "Megatron-LM checkout before running it", file=sys.stderr)
    run_dir = args.run_dir
    if args.sbatch:
        run_dir = run_dir or str(Path(args.sbatch).parent)
        text = ms.sbatch_script(cfg, nodes, gpn, path, run_dir, args.time)
        atomic_write(args.sbatch, text, mode=0o755)
        _write_record(cfg, warnings, run_dir, peak, preset)
        print(f"# wrote {args.sbatch} and {Path(run_dir) / CONFIG_NAME}")
    if args.submit:
        if shutil.which("sbatch") is None:
            raise AnalysisError("sbatch not found: --submit needs Slurm on this machine")
        return subprocess.call(["sbatch", args.sbatch])
    if args.run:
        return _run_local(cfg, path, run_dir or "megatron-run", warnings, peak, preset)
    return 0


def _run_local(cfg, path, run_dir, warnings, peak, preset):
    if shutil.which("torchrun") is None:
        raise AnalysisError("torchrun not found: --run needs the Python environment with PyTorch")
    _write_record(cfg, warnings, run_dir, peak, preset)
    env = dict(os.environ, MEGATRON_PATH=path, **ml.environment(cfg))
    env["PYTHONPATH"] = path + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = ["torchrun", "--standalone", "--nproc_per_node", str(cfg.gpus),
           str(Path(path) / "pretrain_gpt.py")] + ml.pretrain_args(cfg)
    log_path = Path(run_dir) / "megatron.log"
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        for line in proc.stdout:
            sys.stdout.write(line)
            log.write(line)
        rc = proc.wait()
    print(f"# log: {log_path} (parse with: ovb-analysis megatron-log {log_path})")
    return rc
