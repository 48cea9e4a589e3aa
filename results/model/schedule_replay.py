"""What the pipeline-schedule scripts of this folder share: two replays of per-stage orders of
passes, one for exchanges that nothing waits for but their receiver (a delay after the pass that
produces them), one for exchange calls that block both stages until every exchange of the call
is done (a rendezvous).

Both run every stage's order in turn, each step as soon as it can, until all are done, and exit
with a one-line error naming the stage positions if no stage can move (a deadlock: an order read
wrongly).
"""

import sys


def replay_delayed(orders, needs, duration, x, stage_of, what):
    """(the iteration's length, each pass's (start, end) by its key). `orders`: per stage, the
    keys of its passes in order; `needs(key)`: the key of the pass whose output it needs, or
    None; `duration(key)`: its time; an output used on another stage (`stage_of(key)`) arrives x
    after its pass ends. `what` names the schedule in the error."""
    end, clock, at = {}, [0.0] * len(orders), [0] * len(orders)
    while any(at[s] < len(o) for s, o in enumerate(orders)):
        moved = False
        for s, order in enumerate(orders):
            while at[s] < len(order):
                key = order[at[s]]
                need = needs(key)
                if need is not None and need not in end:
                    break
                ready = 0.0 if need is None else end[need][1] + (0.0 if stage_of(need) == s else x)
                start = max(clock[s], ready)
                clock[s] = start + duration(key)
                end[key] = (start, clock[s])
                at[s] += 1
                moved = True
        if not moved:
            sys.exit(f"{what}: the order deadlocks at {at}")
    return max(clock), end


def replay_rendezvous(orders, duration, x, what):
    """The iteration's length when stages block on exchange calls. `orders`: per stage, passes
    (anything but an ("X", ends) pair; `duration(pass)` is its time) and exchange calls
    ("X", [(send | recv, tensor, peer, label), ...]). A send and the receive that matches it
    (same tensor and label, in the peer's current call) take x from when both calls have been
    reached; a call ends with its last exchange. `what` names the schedule in the error."""
    at, clock, done = [0] * len(orders), [0.0] * len(orders), {}
    while any(at[s] < len(o) for s, o in enumerate(orders)):
        moved = False
        for s, order in enumerate(orders):
            while at[s] < len(order):
                step = order[at[s]]
                if step[0] != "X":
                    clock[s] += duration(step)
                    at[s] += 1
                    moved = True
                    continue
                ends = step[1]
                for i, (way, tensor, peer, label) in enumerate(ends):
                    if (s, at[s], i) in done or at[peer] >= len(orders[peer]):
                        continue
                    other_step = orders[peer][at[peer]]
                    other = ("recv" if way == "send" else "send", tensor, s, label)
                    if other_step[0] == "X" and other in other_step[1]:
                        t = max(clock[s], clock[peer]) + x
                        done[(s, at[s], i)] = t
                        done[(peer, at[peer], other_step[1].index(other))] = t
                if all((s, at[s], i) in done for i in range(len(ends))):
                    clock[s] = max(done[(s, at[s], i)] for i in range(len(ends)))
                    at[s] += 1
                    moved = True
                    continue
                break
        if not moved:
            sys.exit(f"{what}: the order deadlocks at {at}")
    return max(clock)
