#!/usr/bin/env python3
"""How many point-to-point exchanges Megatron-Core's interleaved pipeline leaves on its critical
path when it overlaps them with compute (--overlap-p2p-communication, on by default with
interleaving): a replay of the schedule against the model's closed form.

The replay takes each stage's order of chunk passes from Megatron-Core's
forward_backward_pipelining_with_interleaving (megatron/core/pipeline_parallel/schedules.py at
f2e5db402c, the H100 table's commit): (pp - rank - 1) 2 + (v - 1) pp warm-up forwards (all m v
when m = pp), then one forward and one backward in turn, then the remaining backwards; the k-th
forward runs model chunk (k mod pp v) div pp of micro-batch (k div pp v) pp + k mod pp, the k-th
backward the chunks in reverse. Virtual stage c pp + s (chunk c on stage s) needs the forward of
virtual stage c pp + s - 1 and the backward of c pp + s + 1; the last one's backward needs its own
forward. A stage runs its passes in order, each as soon as its input is there; an exchange
between two stages is a delay of x after the pass that produces it (the overlapped exchange:
nothing else waits for it). Times are in units of a chunk's forward; a chunk's backward takes 2.

The model's form (predict_megatron): m v (1 + 2) + (pp - 1)(1 + 2) (the 1F1B time and its bubble,
a stage's passes over v) + 2 (pp v - 1) x (the fill and the drain, which cross every virtual stage
boundary, the last stage handing chunk c to the first stage's chunk c + 1) + 2 v m max(0, x - 1)
(what an exchange takes beyond the shorter pass of a chunk). Before this replay the fill and drain
were charged 2 (pp - 1) exchanges, as without interleaving. Printed: the replay, both forms and
their differences, for every pipeline, chunk count and micro-batch count of the grid and
exchanges of 0 to 1.5 chunk forwards; and how far apart a stage's chunks start their forwards
and end their backwards, which times each chunk's data-parallel reduction in the model:
pp (F + x) and pp (B + x). Last, stages of unequal work (uneven layer counts, the LM head on the
last one): the model takes m times the slowest stage's total, which the replay follows while
the stage with the heaviest chunk is also the one with the most work, and not otherwise (the
first and last stages one layer short with the head on the last, as Llama 3 405B's). And the
schedule without interleaving (every era), whose exchange calls block until their sends and
receives are done, replayed with each exchange a rendezvous of the two stages: the model's
2 (m + pp - 1) exchanges on the critical path. And Megatron-Core's data-parallel reduction
launches, each a pass over its chunk's gradients on the compute stream (the NaN check and the
1/dp scaling), in the interleaved order: with the default delay of each stage's launches by its
pipeline rank the iteration grows by one stage's passes (predict_megatron charges the first
stage's), without it by all stages'. (Without interleaving the other stages launch theirs after
their last backward, so only the first stage's lie on the path, as the schedule shows directly.)

Usage: results/model/interleaved-schedule.py [--write | --check]
Prints the table; --write also writes it beside this script as interleaved-schedule.txt; --check
exits 1 when that file is not today's output (ctest model.interleaved_schedule).
"""

import sys

import committed_output  # this folder's: the scripts' --write / --check
from schedule_replay import replay_delayed, replay_rendezvous

FORWARD, BACKWARD = 1.0, 2.0


def stage_order(pp, v, m, s):
    """Stage s's passes in Megatron-Core's order: ("F" | "B", virtual stage, micro-batch)."""
    total = m * v
    warmup = total if m == pp else min((pp - s - 1) * 2 + (v - 1) * pp, total)

    def chunk(k, forward):
        c = k % (pp * v) // pp
        return c if forward else v - 1 - c

    def micro_batch(k):
        return k // (pp * v) * pp + k % pp

    order = [("F", k) for k in range(warmup)]
    for k in range(total - warmup):
        order += [("F", warmup + k), ("B", k)]
    order += [("B", k) for k in range(total - warmup, total)]
    return [(kind, chunk(k, kind == "F") * pp + s, micro_batch(k)) for kind, k in order]


def replay(pp, v, m, x):
    """The iteration's length with each exchange between stages a delay of x."""
    return replay_passes(pp, v, m, x)[0]


def replay_passes(pp, v, m, x, forward=None, backward=None, added=None, after=None):
    """(the iteration's length, each pass's (start, end) by (kind, virtual stage, micro-batch))
    with each exchange between stages a delay of x; `forward`, `backward`: a pass's time by
    virtual stage (default: FORWARD and BACKWARD for every one); `added`: time added to passes by
    key, before their output leaves; `after`: per stage, the times of passes ("S", stage, j) run
    after its last one, needing nothing."""
    forward = forward or (lambda vs: FORWARD)
    backward = backward or (lambda vs: BACKWARD)
    added, after = added or {}, after or [[] for _ in range(pp)]
    last = pp * v - 1

    def needs(key):
        kind, vs, mb = key
        if kind == "S":
            return None
        if kind == "F":
            return ("F", vs - 1, mb) if vs > 0 else None
        return ("B", vs + 1, mb) if vs < last else ("F", vs, mb)

    def duration(key):
        kind, vs, j = key
        if kind == "S":
            return after[vs][j]
        return (forward(vs) if kind == "F" else backward(vs)) + added.get(key, 0.0)

    orders = [stage_order(pp, v, m, s) + [("S", s, j) for j in range(len(after[s]))]
              for s in range(pp)]
    return replay_delayed(orders, needs, duration, x, lambda k: k[1] % pp,
                          f"interleaved-schedule (pp {pp}, v {v}, m {m})")


def uneven(pp, v, m, layers, head):
    """The replay against the model's form for stages of `layers` layers (a chunk holds 1/v of a
    stage's) and an LM head on the last virtual stage taking `head` layers' time: the model
    takes m times the slowest stage's total plus the others' over v (pp - 1 of them when even),
    as predict_megatron does; exchanges free."""
    last = pp * v - 1

    def per(vs, unit):
        return layers[vs % pp] / v * unit + (head * unit if vs == last else 0.0)

    t = replay_passes(pp, v, m, 0.0, lambda vs: per(vs, FORWARD), lambda vs: per(vs, BACKWARD))[0]
    stages = [(layers[s] + (head if s == pp - 1 else 0.0)) * (FORWARD + BACKWARD)
              for s in range(pp)]
    form = m * max(stages) + (sum(stages) - max(stages)) / v
    return t, form


def blocking_order(pp, m, s):
    """Stage s's passes and exchanges in Megatron-LM's schedule without interleaving
    (forward_backward_pipelining_without_interleaving at f2e5db402c, the same in the 2021 and
    2022 code): each exchange call is one batch of sends and receives that blocks until all are
    done (batch_isend_irecv, then batch_p2p_sync's device synchronisation). Passes are ("F" |
    "B", micro-batch); a call is ("X", [(send | recv, A | G, peer, micro-batch), ...])."""
    warmup = min(pp - s - 1, m)
    first, last = s == 0, s == pp - 1

    def ends(*pairs):
        return [e for e, skip in pairs if not skip]

    order = []

    def call(*pairs):
        if ends(*pairs):
            order.append(("X", ends(*pairs)))

    for j in range(warmup):
        call((("recv", "A", s - 1, j), first))
        order.append(("F", j))
        call((("send", "A", s + 1, j), last))
    steady = m - warmup
    if steady:
        call((("recv", "A", s - 1, warmup), first))
    for k in range(steady):
        f = warmup + k
        order.append(("F", f))
        call((("send", "A", s + 1, f), last), (("recv", "G", s + 1, k), last))
        order.append(("B", k))
        call((("send", "G", s - 1, k), first),
             (("recv", "A", s - 1, f + 1), first or k == steady - 1))
    for k in range(steady, m):
        call((("recv", "G", s + 1, k), last))
        order.append(("B", k))
        call((("send", "G", s - 1, k), first))
    return order


def replay_blocking(pp, m, x):
    """The schedule without interleaving, each exchange a rendezvous: a send and its receive,
    each in a call of its stage, take x from when both calls have been reached; a call ends with
    its last exchange."""
    return replay_rendezvous([blocking_order(pp, m, s) for s in range(pp)],
                             lambda p: FORWARD if p[0] == "F" else BACKWARD, x,
                             f"interleaved-schedule, without interleaving (pp {pp}, m {m})")


def chunk_spacing(pp, v, m, x):
    """The largest difference, over stages and neighbouring chunks, between the spacing of
    their first forwards (last backwards) and the model's pp (F + x) (pp (B + x)), where the
    data-parallel reduction of each chunk is timed (predict_megatron)."""
    _, passes = replay_passes(pp, v, m, x)
    worst = 0.0
    for s in range(pp):
        first_f = [min(p[0] for (k, vs, _), p in passes.items() if k == "F" and vs == c * pp + s)
                   for c in range(v)]
        last_b = [max(p[1] for (k, vs, _), p in passes.items() if k == "B" and vs == c * pp + s)
                  for c in range(v)]
        for c in range(v - 1):
            worst = max(worst, abs(first_f[c + 1] - first_f[c] - pp * (FORWARD + x)),
                        abs(last_b[c] - last_b[c + 1] - pp * (BACKWARD + x)))
    return worst


def replay_grad_sync(pp, v, m, x, sync, delay):
    """The interleaved replay with each model chunk's data-parallel reduction launch a pass of
    `sync` on its stage (Megatron-Core's DDP checks and scales the chunk's gradients on the
    compute stream before its collective): in the backward step of the chunk's last micro-batch
    (is_last_microbatch_for_model_chunk) or, with `delay` (--delay-grad-reduce, the default;
    today --align-grad-reduce), as many backward steps later as the stage's pipeline rank, where
    it delays that step's output, and after the stage's last pass for those that fall past its
    end (schedules.py at f2e5db402c: backward_step_helper, and "Launch any remaining grad
    reductions")."""
    total, group = m * v, pp * v
    last_of_chunk = [(total // group - 1) * group + c * pp + pp - 1 for c in range(v)]
    added, after = {}, []
    for s in range(pp):
        backwards = [key for key in stage_order(pp, v, m, s) if key[0] == "B"]
        after.append([])
        for k in last_of_chunk:
            k += s if delay else 0
            if k < total:
                added[backwards[k]] = added.get(backwards[k], 0.0) + sync
            else:
                after[s].append(sync)
    return replay_passes(pp, v, m, x, added=added, after=after)[0]


def closed_form(pp, v, m, x, fill):
    """The model's time with `fill` exchanges on the fill and drain's critical path."""
    step = FORWARD + BACKWARD
    return m * v * step + (pp - 1) * step + fill * x + 2 * v * m * max(0.0, x - FORWARD)


def main():
    write, check, _ = committed_output.parse_args(sys.argv[1:])
    lines = ["pp v m x: replay, the model's form with 2 (pp v - 1) exchanges on the fill and drain "
             "(difference %), with 2 (pp - 1) (difference %); times in chunk forwards"]
    worst = {}
    for pp in (2, 4, 6, 8, 16):
        for v in (2, 4, 8):
            for m in (pp, 4 * pp):
                for x in (0.0, 0.1, 0.5, 1.0, 1.5):
                    t = replay(pp, v, m, x)
                    new = closed_form(pp, v, m, x, 2 * (pp * v - 1))
                    old = closed_form(pp, v, m, x, 2 * (pp - 1))
                    d_new, d_old = 100 * (new / t - 1), 100 * (old / t - 1)
                    lines.append(f"{pp:>2} {v} {m:>2} {x:.1f}: {t:8.2f}  {new:8.2f} "
                                 f"({d_new:+6.2f})  {old:8.2f} ({d_old:+6.2f})")
                    key = "x <= 1" if x <= FORWARD else "x > 1"
                    w = worst.setdefault(key, [0.0, 0.0])
                    w[0] = max(w[0], abs(d_new), key=abs)
                    w[1] = min(w[1], d_old)
    for key, (d_new, d_old) in worst.items():
        lines.append(f"exchanges {key} chunk forward: the model's form within {d_new:.2f} % of the "
                     f"replay; with 2 (pp - 1) exchanges down to {d_old:+.2f} %")
    spacing = max(chunk_spacing(pp, v, 4 * pp, x) for pp in (2, 4, 6, 8) for v in (2, 4, 8)
                  for x in (0.0, 0.1, 0.5, 1.0))
    over = {}
    for pp in (2, 4, 8, 16):
        for m in (pp, 4 * pp, 16 * pp):
            for x in (0.02, 0.1, 0.3):
                t = replay_blocking(pp, m, x)
                form = (m + pp - 1) * (FORWARD + BACKWARD) + 2 * (m + pp - 1) * x
                lo, hi = over.get(x, (1e9, -1e9))
                over[x] = (min(lo, 100 * (form / t - 1)), max(hi, 100 * (form / t - 1)))
    lines.append("without interleaving, blocking exchanges (every era's schedule), pp 2-16, "
                 "m = pp, 4 pp, 16 pp: the model's (m + pp - 1)(F + B) + 2 (m + pp - 1) x "
                 "against the replay: " + ", ".join(f"x {x}: {lo:+.2f}..{hi:+.2f} %"
                                        for x, (lo, hi) in sorted(over.items())))
    llama = [7] + [8] * 14 + [7]
    for layers, head, what in (
            ([8] * 16, 0.47, "16 stages of 8 layers, a head of 0.47 layer"),
            (llama, 0.0, "7 + 14 x 8 + 7 layers, no head"),
            (llama, 0.47, "7 + 14 x 8 + 7 layers, a head of 0.47 layer (Llama 3 405B as the "
                          "model prices it)")):
        t, form = uneven(16, 4, 32, layers, head)
        lines.append(f"v 4, m 32, {what}: replay {t:.2f} layer forwards, the model's form "
                     f"{form:.2f} ({100 * (form / t - 1):+.2f} %)")
    added = {True: [1e9, -1e9], False: [1e9, -1e9]}
    for pp in (2, 4, 8, 16):
        for v in (2, 4, 8):
            for m in (pp, 4 * pp):
                for x in (0.02, 0.1):
                    for sync in (0.05, 0.15, 0.3):
                        t = replay(pp, v, m, x)
                        for delay, per in ((True, v * sync), (False, pp * v * sync)):
                            r = (replay_grad_sync(pp, v, m, x, sync, delay) - t) / per
                            added[delay] = [min(added[delay][0], r), max(added[delay][1], r)]
    lines.append("each chunk's gradient check and scaling a pass of 0.05-0.3 chunk forwards before "
                 "its reduction (Megatron-Core's DDP), pp 2-16, v 2-8, m = pp and 4 pp, x 0.02 "
                 "and 0.1: the iteration grows by {:.3f}..{:.3f} times one stage's passes with "
                 "each stage's launch delayed by its rank (the default), {:.3f}..{:.3f} times "
                 "all stages' without the delay".format(*added[True], *added[False]))
    lines.append(f"a stage's chunks, first forwards and last backwards: pp (F + x) and pp (B + x) "
                 f"apart, as the model times each chunk's data-parallel reduction, to within "
                 f"{spacing:.2f} chunk forwards (m = 4 pp, x <= 1)")
    committed_output.finish(__file__, "\n".join(lines) + "\n", write, check)


if __name__ == "__main__":
    main()
