"""The suite's metric formulas (docs/metrics.md), mirrored from core/include/ovb/metrics.hpp.

Python cannot call the C++ library, so the few formulas the plots and the Megatron comparison need
are written here once, each with its formula, the same expression as in core/src/metrics.cpp;
every other module of this package calls these. tests/test_metrics_parity.py pins both to the same
hand-computed numbers and compiles metrics.cpp to compare the two on the same inputs.

There is no peak table here: the one table is the C++ one (ovb::metrics::peak_tflops). Python reads
peaks from what the C++ side wrote (a result's context.device.peak_tflops, the pct_peak counter of
ovb-gemm) or from the user (--peak, megatron_config.json's peak_tflops).
"""

COLLECTIVES = ("all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "reduce",
               "send_recv")


def gpt_model_flop(batch, seq, layers, hidden, vocab):
    """Model FLOP of one training iteration of a GPT (no recomputation, causal attention as half):

        F = 72 * B * s * L * h^2 * (1 + s / (12 h) + V / (12 L h))

    B = global batch in sequences, s = sequence length, L = layers, h = hidden size, V = vocabulary.
    """
    b, s, n_l, h, v = (float(x) for x in (batch, seq, layers, hidden, vocab))
    return 72.0 * b * s * n_l * h * h * (1.0 + s / (12.0 * h) + v / (12.0 * n_l * h))


def transformer_model_flop(batch, seq, layers, hidden, vocab, block_linear_params):
    """Model FLOP of one training iteration of any decoder of this form (GPT, Llama): 2 FLOP per
    weight per token forward, 4 backward, on the block linears and the LM head, plus the attention
    core over all query heads (causal half counted; grouped K/V heads change no FLOP there):

        F = 6 * B * s * (L * P + h * V) + 6 * B * s^2 * L * h

    P = weight elements of one block's linear layers (GPT: 12 h^2, which gives gpt_model_flop).
    """
    b, s, n_l, h, v, p = (float(x) for x in (batch, seq, layers, hidden, vocab,
                                             block_linear_params))
    return 6.0 * b * s * (n_l * p + h * v) + 6.0 * b * s * s * n_l * h


def llama_block_linear_params(hidden, heads, kv_heads, ffn_hidden):
    """Weights of one Llama block's linears: QKV h x (heads + 2 kv) d, output h x h, SwiGLU 3 h f."""
    d = hidden // heads
    return hidden * (heads + 2 * kv_heads) * d + hidden * hidden + 3 * hidden * ffn_hidden


def gpt_hardware_flop(model_flop, full_recompute):
    """Hardware FLOP: full activation recomputation runs one more forward, F * 4/3."""
    return model_flop * 4.0 / 3.0 if full_recompute else model_flop


def narayanan_flop(batch, seq, layers, hidden, vocab):
    """The Megatron-LM papers' count (Narayanan et al., SC21, Eq. (3)): full recomputation, full
    attention products, the LM head three times: 96*B*s*L*h^2 * (1 + s/(6h) + V/(16*L*h))."""
    return (96.0 * float(batch) * float(seq) * float(layers) * float(hidden) ** 2 *
            (1.0 + float(seq) / (6.0 * hidden) + float(vocab) / (16.0 * layers * hidden)))


def gpt_selective_recompute_flop(batch, seq, layers, hidden):
    """FLOP selective recomputation adds (attention core again): 2 * B * s^2 * L * h."""
    return 2.0 * float(batch) * float(seq) ** 2 * float(layers) * float(hidden)


def tflops_per_gpu(flop, seconds, n_gpus):
    """TFLOP/s per GPU = F / t / n_gpus / 1e12."""
    return flop / seconds / n_gpus / 1e12


def mfu(tflops, peak):
    """MFU = achieved TFLOP/s per GPU / peak (a fraction); None when the peak is unknown."""
    if not peak:
        return None
    return tflops / peak


def percent_of_peak(achieved_tflops, peak):
    """100 * achieved / peak; None when the peak is unknown."""
    if not peak:
        return None
    return 100.0 * achieved_tflops / peak


def gemm_flop(m, n, k):
    """FLOP = 2 * M * N * K."""
    return 2.0 * m * n * k


def tflops(flop, seconds):
    """TFLOP/s = FLOP / t / 1e12."""
    return flop / seconds / 1e12


def bus_factor(kind, n):
    """busbw factor F: 2(n-1)/n all-reduce; (n-1)/n reduce-scatter, all-gather, all-to-all; 1 else."""
    if n <= 0:
        raise ValueError("group size must be positive")
    if kind == "all_reduce":
        return 2.0 * (n - 1) / n
    if kind in ("reduce_scatter", "all_gather", "all_to_all"):
        return (n - 1) / n
    return 1.0


def algbw_gbps(nbytes, seconds):
    """algbw = S / t in GB/s (1e9 bytes/s); S = bytes of the full buffer (nccl-tests convention)."""
    return nbytes / seconds / 1e9


def busbw_gbps(kind, n, nbytes, seconds):
    """busbw = algbw * F(kind, n), in GB/s."""
    return algbw_gbps(nbytes, seconds) * bus_factor(kind, n)


def overlap_efficiency(t_compute, t_comm, t_overlapped):
    """(serial - t_o) / min(t_c, t_m), serial = t_c + t_m: 1 = the shorter of compute and
    communication fully hidden, 0 = no better than serial, < 0 worse (metrics.hpp OverlapMetrics)."""
    shorter = min(t_compute, t_comm)
    if shorter <= 0:
        raise ValueError("compute and communication times must be positive")
    return (t_compute + t_comm - t_overlapped) / shorter
