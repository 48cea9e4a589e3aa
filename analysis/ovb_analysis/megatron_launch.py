"""A Megatron-LM run matched to a gpt4d run: its configuration, the checks Megatron itself would
fail on (made here, before anything is submitted), its pretrain_gpt.py arguments and environment.

The command and sbatch text are built in megatron_script.py; see docs/megatron.md.
"""

from dataclasses import asdict, dataclass, replace

from .errors import AnalysisError

# Usual GPT sizes: (layers, hidden, heads). GPT-3 paper sizes up to 13B (1.3B with 16 heads of 128,
# as Megatron's examples), then the Megatron-LM 2021 paper's table and GPT-3 175B.
PRESETS = {
    "125M": (12, 768, 12), "350M": (24, 1024, 16), "760M": (24, 1536, 16),
    "1.3B": (24, 2048, 16), "2.7B": (32, 2560, 32), "6.7B": (32, 4096, 32), "13B": (40, 5120, 40),
    "18B": (40, 6144, 48), "39B": (48, 8192, 64), "76B": (60, 10240, 80), "145B": (80, 12288, 96),
    "175B": (96, 12288, 96), "310B": (96, 16384, 128), "530B": (105, 20480, 128),
    "1T": (128, 25600, 160),
}
# Llama 3 (Meta, "The Llama 3 Herd of Models", 2024): the shapes of core's presets of the same
# names, as Megatron-LM arguments take them.
LLAMA_PRESETS = {
    "llama3-8B": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336},
    "llama3-70B": {"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8, "ffn_hidden": 28672},
    "llama3-405B": {"layers": 126, "hidden": 16384, "heads": 128, "kv_heads": 8,
                    "ffn_hidden": 53248},
}
LLAMA3_VOCAB = 128256
LLAMA3_ROPE_THETA = 500000.0
DEFAULT_ROPE_THETA = 10000.0
DEFAULT_SEQ = 2048
DEFAULT_VOCAB = 50304  # GPT-2's 50257 padded to a multiple of 128

LOCAL_IMPL_ARGS = ("--transformer-impl", "local", "--no-persist-layer-norm",
                   "--no-masked-softmax-fusion", "--no-gradient-accumulation-fusion")


def preset(name):
    """(layers, hidden, heads) of a GPT preset, matched case-insensitively ("1.3b", "gpt-1.3B")."""
    key = name.upper().removeprefix("GPT-").removeprefix("GPT")
    for known, shape in PRESETS.items():
        if known.upper() == key:
            return shape
    raise AnalysisError(f"unknown preset {name!r}; known: {', '.join(list(PRESETS) + list(LLAMA_PRESETS))}")


def model_preset(name):
    """Every model field of a preset, GPT or Llama: layers, hidden, heads, and arch; for Llama also
    kv_heads, ffn_hidden, vocab and rope_theta."""
    for known, shape in LLAMA_PRESETS.items():
        if known.upper() == name.upper():
            return dict(shape, arch="llama", vocab=LLAMA3_VOCAB, rope_theta=LLAMA3_ROPE_THETA)
    return dict(zip(("layers", "hidden", "heads"), preset(name)), arch="gpt")


@dataclass(frozen=True)
class MegatronConfig:
    layers: int
    hidden: int
    heads: int
    seq: int
    vocab: int
    global_batch: int
    micro_batch: int
    gpus: int
    tp: int = 1
    pp: int = 1
    iters: int = 30
    sequence_parallel: bool = False
    distributed_optimizer: bool = False
    overlap_grad_reduce: bool = False
    overlap_param_gather: bool = False
    tp_comm_overlap: bool = False
    local: bool = False
    recompute: bool = False
    recompute_layers: int = 0    # with recompute: the layers of each chunk recomputed (block); 0: all
    selective_recompute: bool = False
    virtual_stages: int = 1
    arch: str = "gpt"            # "llama": RMSNorm, SwiGLU, RoPE, GQA, no biases, untied head
    kv_heads: int = 0            # query groups (GQA); 0: as many as heads
    ffn_hidden: int = 0          # SwiGLU width (Llama); 0: Megatron's 4h
    rope_theta: float = DEFAULT_ROPE_THETA

    @property
    def dp(self):
        return self.gpus // (self.tp * self.pp)


def validate(cfg):
    """Apply Megatron's own rules. Returns (effective config, warnings); raises AnalysisError listing
    every combination Megatron would reject."""
    warnings, errors = [], []
    for name in ("layers", "hidden", "heads", "seq", "vocab", "global_batch", "micro_batch", "gpus",
                 "tp", "pp", "iters"):
        if getattr(cfg, name) <= 0:
            errors.append(f"--{name.replace('_', '-')} must be positive")
    if errors:
        raise AnalysisError("invalid Megatron-LM configuration: " + "; ".join(errors))
    if cfg.tp == 1 and cfg.sequence_parallel:
        warnings.append("sequence parallelism has no effect with TP=1; Megatron drops it, and so "
                        "does this command")
        cfg = replace(cfg, sequence_parallel=False)
    if cfg.gpus % (cfg.tp * cfg.pp):
        errors.append(f"TP*PP = {cfg.tp * cfg.pp} does not divide the GPU count {cfg.gpus}")
    if cfg.heads % cfg.tp:
        errors.append(f"attention heads {cfg.heads} not divisible by TP={cfg.tp}")
    if cfg.hidden % cfg.heads:
        errors.append(f"hidden size {cfg.hidden} not divisible by the attention heads {cfg.heads}")
    if cfg.arch not in ("gpt", "llama"):
        errors.append(f"architecture {cfg.arch!r} is neither gpt nor llama")
    if cfg.arch == "gpt" and (cfg.kv_heads or cfg.ffn_hidden):
        errors.append("--kv-heads and --ffn-hidden need --arch llama")
    if cfg.arch == "llama":
        groups = cfg.kv_heads or cfg.heads
        if cfg.ffn_hidden <= 0:
            errors.append("--arch llama needs --ffn-hidden (the SwiGLU width)")
        elif cfg.ffn_hidden % cfg.tp:
            errors.append(f"ffn hidden size {cfg.ffn_hidden} not divisible by TP={cfg.tp}")
        if cfg.heads % groups:
            errors.append(f"attention heads {cfg.heads} not divisible by the query groups {groups}")
        if groups % cfg.tp:
            errors.append(f"query groups (kv heads) {groups} not divisible by TP={cfg.tp}")
        if cfg.rope_theta <= 0:
            errors.append("--rope-theta must be positive")
    if cfg.layers % cfg.pp:
        errors.append(f"layers {cfg.layers} not divisible by PP={cfg.pp}")
    if not cfg.gpus % (cfg.tp * cfg.pp) and cfg.global_batch % (cfg.micro_batch * cfg.dp):
        errors.append(f"global batch {cfg.global_batch} not divisible by micro batch * DP = "
                      f"{cfg.micro_batch} * {cfg.dp}")
    if cfg.virtual_stages < 1:
        errors.append("virtual stages must be positive")
    elif cfg.virtual_stages > 1 and (cfg.pp < 2 or cfg.layers % (cfg.pp * cfg.virtual_stages)):
        errors.append(f"{cfg.virtual_stages} virtual stages need PP >= 2 and layers {cfg.layers} "
                      f"divisible by PP * virtual stages = {cfg.pp * cfg.virtual_stages}")
    if cfg.recompute and cfg.selective_recompute:
        errors.append("recomputation is full or selective, not both")
    if cfg.overlap_param_gather and not (cfg.distributed_optimizer and cfg.overlap_grad_reduce):
        errors.append("--overlap-param-gather needs --distributed-optimizer and --overlap-grad-reduce")
    if cfg.tp_comm_overlap and not cfg.sequence_parallel:
        errors.append("--tp-comm-overlap needs --sequence-parallel (and so TP > 1)")
    if cfg.tp_comm_overlap and cfg.local:
        errors.append("--tp-comm-overlap needs Transformer Engine; it cannot be used with --local")
    if errors:
        raise AnalysisError("invalid Megatron-LM configuration: " + "; ".join(errors))
    if cfg.pp > 1:
        warnings.append(f"PP={cfg.pp} has no counterpart in the suite's 4D grid; the gpt4d run "
                        "matched to it differs in more than the overlap flags")
    return cfg, warnings


def environment(cfg):
    """Environment variables the run needs: CUDA_DEVICE_MAX_CONNECTIONS=1 with TP > 1 (before
    Blackwell, so that communication kernels are issued in order with the compute they overlap)."""
    return {"CUDA_DEVICE_MAX_CONNECTIONS": "1"} if cfg.tp > 1 else {}


def suite_grid(cfg):
    """The suite's 4D grid matching Megatron's layout: TP=t is Gx=1, Gy=t; DP is Gdata (Megatron's
    distributed optimizer is close to sharding optimizer state over data; Gz, ZeRO-3/FSDP, is 1)."""
    return {"gx": 1, "gy": cfg.tp, "gz": 1, "gdata": cfg.dp, "pp": cfg.pp}


def pretrain_args(cfg):
    """The pretrain_gpt.py argument list (mock data, NullTokenizer, log every iteration)."""
    a = ["--num-layers", cfg.layers, "--hidden-size", cfg.hidden, "--num-attention-heads", cfg.heads,
         "--seq-length", cfg.seq, "--max-position-embeddings", cfg.seq,
         "--micro-batch-size", cfg.micro_batch, "--global-batch-size", cfg.global_batch,
         "--train-iters", cfg.iters, "--bf16",
         "--tensor-model-parallel-size", cfg.tp, "--pipeline-model-parallel-size", cfg.pp]
    if cfg.sequence_parallel:
        a.append("--sequence-parallel")
    if cfg.distributed_optimizer:
        a.append("--use-distributed-optimizer")
    if cfg.overlap_grad_reduce:
        a.append("--overlap-grad-reduce")
    if cfg.overlap_param_gather:
        a.append("--overlap-param-gather")
    if cfg.tp_comm_overlap:
        a.append("--tp-comm-overlap")
    if cfg.recompute and cfg.recompute_layers > 0:
        a += ["--recompute-granularity", "full", "--recompute-method", "block",
              "--recompute-num-layers", cfg.recompute_layers]
    elif cfg.recompute:
        a += ["--recompute-granularity", "full", "--recompute-method", "uniform",
              "--recompute-num-layers", 1]
    if cfg.selective_recompute:
        a += ["--recompute-granularity", "selective"]
    if cfg.virtual_stages > 1:
        a += ["--num-layers-per-virtual-pipeline-stage", cfg.layers // (cfg.pp * cfg.virtual_stages)]
    # gpt4d's GPT, like its Llama, has an LM head of its own (core/include/ovb/gpt_plan.hpp), so the
    # matched run unties Megatron's (tied by default): the same parameters to hold, reduce and step.
    a.append("--untie-embeddings-and-output-weights")
    a += ["--log-interval", 1, "--log-throughput", "--mock-data", "--tokenizer-type", "NullTokenizer",
          "--vocab-size", cfg.vocab, "--lr", "1.0e-5", "--lr-decay-style", "constant",
          "--clip-grad", "1.0", "--eval-iters", 0, "--distributed-backend", "nccl"]
    if cfg.local:
        a += list(LOCAL_IMPL_ARGS)
    if cfg.arch == "llama":
        a += llama_args(cfg)
    return [str(x) for x in a]


def llama_args(cfg):
    """Megatron-LM's arguments for a Llama block (megatron/training/arguments.py): SwiGLU MLP of
    --ffn-hidden-size, RMSNorm, rotary embeddings of base --rotary-base, grouped-query attention,
    no linear biases (the untied embedding and output layer are every run's, pretrain_args)."""
    a = ["--swiglu", "--ffn-hidden-size", cfg.ffn_hidden, "--normalization", "RMSNorm",
         "--position-embedding-type", "rope", "--rotary-base", _number(cfg.rope_theta),
         "--disable-bias-linear"]
    if cfg.kv_heads and cfg.kv_heads != cfg.heads:
        a += ["--group-query-attention", "--num-query-groups", cfg.kv_heads]
    return a


def _number(x):
    return int(x) if float(x).is_integer() else x


def run_record(cfg, warnings=()):
    """The megatron_config.json written beside a run's log: what `results.py` reads to put a Megatron
    run on the scaling plot and match it with a gpt4d run."""
    return {"kind": "megatron_run", "schema_version": 1, "config": asdict(cfg), "dp": cfg.dp,
            "suite_grid": suite_grid(cfg), "environment": environment(cfg),
            "pretrain_args": pretrain_args(cfg), "warnings": list(warnings)}
