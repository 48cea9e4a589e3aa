"""What every campaign preset builds its steps with: binaries of the build, the step constructor
with the campaign's defaults, the summary step (ovb-analysis summarize), and its parameters.

A campaign is a module with NAME, DESCRIPTION, BACKENDS (those it can run on), BUDGET_S (the
default --budget of a call, None: none; or {backend: seconds or None}), MPS (start CUDA MPS on the cuda backend: its multi-rank
steps share one GPU), PARAMS ({name: (default, help)}, set with --param NAME=VALUE) and
plan(builder) adding its steps in the order they run. Optional: BUILD_S, the estimated seconds a
call spends building before the driver starts (a budget counted with --budget-start includes
them), added to the steps' estimates (`estimate=`) in the plan's header.
"""

import os
import shlex

from ..launch import find_binary
from ..plan import report_python
from ..step import Step, check_steps
from ..util import SuiteError


class Builder:
    def __init__(self, campaign, target, params):
        self.c, self.t, self.params = campaign, target, params
        self.steps = []
        self.binaries = set()  # the suite executables the steps run (to pick the build folder)

    @property
    def backend(self):
        return self.t.backend

    def param(self, name):
        return self.params[name]

    def words(self, name):
        """A parameter holding command-line words (shell quoting)."""
        return shlex.split(self.params[name])

    def items(self, name):
        """A parameter holding a list (comma or space separated)."""
        return [w for w in self.params[name].replace(",", " ").split() if w]

    def number(self, name):
        try:
            x = float(self.params[name])
        except ValueError:
            x = -1.0
        if not x > 0:
            raise SuiteError(f"--param {name}={self.params[name]}: expected a number > 0")
        return x

    def exe(self, name):
        """(path, "") when built, else (name, why not)."""
        self.binaries.add(name)
        path = find_binary(self.t.build, name)
        return (path, "") if path else (name, f"{name} not built (not found in {self.t.build})")

    def script(self, rel):
        """(absolute path, "") of a file of this repository, else (path, why not)."""
        path = os.path.join(self.t.repo, rel)
        return (path, "") if os.path.exists(path) else (path, f"{path} not found")

    def add(self, name, cmd, *, group, ranks=0, outputs=(), timeout=600.0, stall=0.0, needs=(),
            after=(), env=None, unfit="", if_unfit="", unless_unfit=(), always=False,
            description="", estimate=0.0):
        """cmd: [(word, missing), ...] for the executable parts, then plain words; a step whose
        executables are missing is listed with the reason and fails when its turn comes."""
        words, missing = [], ""
        for w in cmd:
            if isinstance(w, tuple):
                words.append(w[0])
                missing = missing or w[1]
            else:
                words.append(str(w))
        self.steps.append(Step(
            name=name, group=group, command=words, ranks=ranks, outputs=list(outputs),
            timeout_s=float(timeout), stall_s=float(stall), needs=list(needs), after=list(after),
            env=dict(env or {}), missing=missing, description=description, unfit=unfit,
            if_unfit=if_unfit, unless_unfit=list(unless_unfit), always=always,
            estimate_s=float(estimate)))
        return name

    def names(self, group=None):
        return [s.name for s in self.steps if group is None or s.group == group]

    def summary(self, kind):
        """The campaign's last step: `ovb-analysis summarize KIND` of the folder, at every call.
        It writes summary.md (and the kind's JSON) straight into the folder, so that the summary
        is there even when one of its checks fails (exit status 1: the step fails)."""
        script = self.script(os.path.join("analysis", "ovb-analysis"))
        return self.add("summary", [report_python(self.t.repo), script, "summarize", kind, "{out}"],
                        group="report", timeout=300, after=self.names(), always=True,
                        description=f"ovb-analysis summarize {kind}: summary.md of the folder")


# gpt4d's memory check before allocating, or an allocation that fails anyway: "does not fit".
UNFIT_MEMORY = r"needs .* GiB per rank|out of memory|MemoryAllocation"
# PyTorch's out-of-memory error: the reference does not fit at that shape and batch.
UNFIT_TORCH = r"OutOfMemoryError|CUDA out of memory"

# Where the third-party comparison tools' source tarballs are looked for, relative to the
# repository root: a git-ignored folder that travels with the checkout to the GPU machine. They
# are never part of the suite; their path is a campaign parameter.
BASELINES = os.path.join("shared", "baselines")



def parse_params(campaign, given, recorded=None):
    """{name: value} for the campaign: its defaults, then the folder's recorded values, then
    --param NAME=VALUE words; unknown names and malformed words are SuiteErrors."""
    params = {k: v[0] for k, v in campaign.PARAMS.items()}
    params.update(recorded or {})
    for word in given or []:
        name, eq, value = word.partition("=")
        if not eq or not name:
            raise SuiteError(f"--param {word}: expected NAME=VALUE")
        if name not in campaign.PARAMS:
            known = ", ".join(campaign.PARAMS) or "none"
            raise SuiteError(f"--param {name}: preset {campaign.NAME} has no such parameter "
                             f"(known: {known})")
        params[name] = value
    return params


def default_budget(campaign, backend):
    """The campaign's --budget default on `backend` (None: no budget)."""
    b = getattr(campaign, "BUDGET_S", None)
    return b.get(backend) if isinstance(b, dict) else b


def build(campaign, target, params, check_backend=True):
    """The campaign's Builder with its steps planned for `target`."""
    if check_backend and target.backend not in campaign.BACKENDS:
        raise SuiteError(f"preset {campaign.NAME} runs on the {' or '.join(campaign.BACKENDS)} "
                         f"backend, not {target.backend}")
    b = Builder(campaign, target, params)
    campaign.plan(b)
    check_steps(b.steps)
    return b
