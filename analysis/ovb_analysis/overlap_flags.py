"""The overlap flags of gpt4d and ovb-model (`--overlap`) for the suite's Python: the names of
core's one table, overlap_flags() in core/src/run_config.cpp, in its order (FLAGS, then OPT_IN). The Python side plans
and summarises without a build, so the names are restated here, once; slurm/tests/config_parity.py
pins them to what `gpt4d --check-config --json --overlap ...` writes (ctest gpt4d.config_parity)."""

import itertools

FLAGS = ("oar", "ors", "oag")  # AxoNN's three: what --overlap all sets
# Flags that "all" leaves out (the table's in_all = false), named to be used: tp, the forward
# tensor-parallel all-reduce chunked under its GEMM (--tp-chunks). Left out so that "all", which
# the presets and the committed results use, keeps meaning the schedule they were measured with.
OPT_IN = ("tp",)
NONE = "none"
ALL = ",".join(FLAGS)  # every flag of FLAGS, as --overlap takes it and a run's flags are spelled


def text(flags):
    """A run's overlap flags (its config's "overlap" list) as --overlap spells them: "oar,ors" or
    "none"."""
    return ",".join(flags or []) or NONE


def subsets():
    """"none", each flag alone, each pair, ..., ALL: every --overlap value without the opt-in
    flags, fewest flags first."""
    return (NONE,) + tuple(",".join(c) for n in range(1, len(FLAGS) + 1)
                           for c in itertools.combinations(FLAGS, n))
