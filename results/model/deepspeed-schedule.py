#!/usr/bin/env python3
"""Is DeepSpeed's pipeline schedule of 2021 slower than Megatron-LM's 1F1B for MT-NLG's pipeline?

MT-NLG (530B, 35 stages, 240 or 160 micro-batches per pipeline) ran under DeepSpeed's pipeline
engine. Its TrainSchedule (deepspeed/runtime/pipe/schedule.py at the commit of Oct. 2021, read
in DeepSpeed's history) gives every stage 2 (m + p - 1) steps; in a step a stage does one
forward or one backward, even stages taking forwards on even steps and odd stages on odd steps.
A forward step first receives its activation, then sends the previous step's input gradient,
then computes; a backward step first sends the previous step's activation, then receives its
output gradient, then computes. Its send and receive (p2p.py) are blocking and one at a time.
Megatron-LM's 1F1B (warm-up forwards, then one forward and one backward in turn) has only the
data dependencies here, each crossing costing c.

This simulation runs both with every exchange a rendezvous of the two stages that takes c (the
sender and the receiver both wait for each other, then both spend c), F per forward and B per
backward (B = 3F with full recomputation: the backward's two GEMMs per forward GEMM and the
recomputed forward), and prints the iteration's length in units of F. MT-NLG's c/F is at most
about 0.02: an activation of b s h / tp fp16 values, 1 x 2048 x 20480 / 8 x 2 bytes = 10.5 MB,
over a 25 GB/s HDR link is 0.42 ms, against three layers' forward of 7.9 TFLOP per GPU, 25 ms at
the A100's 312 TFLOP/s peak and more at any real rate.

Usage: results/model/deepspeed-schedule.py   (writes the table to stdout; deepspeed-schedule.txt
is its committed output)
"""

from schedule_replay import replay_delayed, replay_rendezvous


def deepspeed_commands(p, m, s):
    """Stage s's commands in order, as DeepSpeed's TrainSchedule issues them:
    ("recv_act" | "send_act" | "recv_grad" | "send_grad", peer, micro-batch) or ("F" | "B", None,
    micro-batch)."""

    def micro_batch(t):
        if t % 2 == 0 and s % 2 == 0:
            return t // 2 - s // 2, True
        if t % 2 == 1 and s % 2 == 1:
            return (t - 1) // 2 - s // 2, True
        if t % 2 == 0:
            return t // 2 - p + (s + 1) // 2, False
        return (t - 1) // 2 - p + 1 + s // 2, False

    def valid(mb):
        return 0 <= mb < m

    cmds, prev = [], -1
    for t in range(2 * (m + p - 1)):
        mb, forward = micro_batch(t)
        if forward and s > 0:
            if valid(mb):
                cmds.append(("recv_act", s - 1, mb))
            if valid(prev):
                cmds.append(("send_grad", s - 1, prev))
        if not forward and s < p - 1:
            if valid(prev):
                cmds.append(("send_act", s + 1, prev))
            if valid(mb):
                cmds.append(("recv_grad", s + 1, mb))
        if valid(mb):
            cmds.append(("F" if forward else "B", None, mb))
        prev = mb
    return cmds


# DeepSpeed's commands as exchange ends (schedule_replay): what travels, and which way.
ENDS = {"recv_act": ("recv", "act"), "send_act": ("send", "act"),
        "recv_grad": ("recv", "grad"), "send_grad": ("send", "grad")}


def deepspeed_time(p, m, f, b, c):
    """The iteration's length under blocking one-at-a-time rendezvous."""
    def order(s):
        return [(op, mb) if op in ("F", "B") else ("X", [(*ENDS[op], peer, mb)])
                for op, peer, mb in deepspeed_commands(p, m, s)]

    return replay_rendezvous([order(s) for s in range(p)],
                             lambda step: f if step[0] == "F" else b, c, "deepspeed-schedule")


def one_f_one_b_time(p, m, f, b, c):
    """Megatron-LM's non-interleaved 1F1B with only its data dependencies, c per crossing."""
    def order(s):
        warm = min(p - s - 1, m)
        seq = [("F", s, j) for j in range(warm)]
        nf = warm
        for j in range(m):
            if nf < m:
                seq.append(("F", s, nf))
                nf += 1
            seq.append(("B", s, j))
        return seq

    def needs(key):
        kind, s, j = key
        if kind == "F":
            return ("F", s - 1, j) if s > 0 else None
        return ("B", s + 1, j) if s < p - 1 else ("F", s, j)

    return replay_delayed([order(s) for s in range(p)], needs,
                          lambda k: f if k[0] == "F" else b, c, lambda k: k[1],
                          "deepspeed-schedule: 1F1B")[0]


def main():
    p, f, b = 35, 1.0, 3.0
    print("MT-NLG's pipeline: 35 stages; F = 1 per forward, B = 3 per backward (full recomputation);")
    print("c = one exchange of an activation or gradient (MT-NLG: c/F <= 0.02)")
    print(f"{'micro-batches':>13} {'c/F':>5} {'DeepSpeed 2021':>15} {'1F1B':>8} {'ratio':>6}")
    for m in (240, 160):
        for c in (0.0, 0.02, 0.05, 0.1):
            ds, mg = deepspeed_time(p, m, f, b, c), one_f_one_b_time(p, m, f, b, c)
            print(f"{m:>13} {c:>5.2f} {ds:>15.1f} {mg:>8.1f} {ds / mg:>6.3f}")


if __name__ == "__main__":
    main()
