"""A step of the suite: one command, its ranks, the files it produces, its watchdog limits and the
steps it depends on. Steps come from the built-in plan (plan.py) or from a steps file (JSON, see
slurm/README.md "Steps files"), which the unit tests and custom suites use.

Command words are templates: `{tmp}` is the step's private work folder (outputs are written there
and moved into the results folder when the step succeeds), `{out}` the results folder, and a word
`{glob:PATTERN}` expands, when the step starts, into the sorted paths matching PATTERN (itself
templated), e.g. the per-rank trace files of an earlier step; a word `{args:FILE:I}` expands into
the words of entry I of the list "runs" of the JSON file FILE (itself templated; each entry
{"args": [words]}), written by an earlier step - e.g. the configurations a search picked.
"""

import glob
import os
import re
from dataclasses import dataclass, field

from .util import COMM_VAR, SuiteError, parse_comm_timeout, read_json

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
GLOB_RE = re.compile(r"^\{glob:(.*)\}$")
ARGS_RE = re.compile(r"^\{args:(.*):(\d+)\}$")


@dataclass
class Step:
    name: str
    command: list
    group: str = "custom"
    ranks: int = 0             # 0: a plain process; N >= 1: N MPI ranks through srun/mpirun
    outputs: list = field(default_factory=list)  # paths relative to the results folder
    timeout_s: float = 600.0   # watchdog: wall-clock limit
    stall_s: float = 0.0       # watchdog: limit without new output in the step's log (0: off)
    needs: list = field(default_factory=list)   # must have finished; else this step fails
    after: list = field(default_factory=list)   # only ordering and staleness
    env: dict = field(default_factory=dict)
    missing: str = ""          # why the step cannot run here (e.g. "gpt4d not built"); "" if it can
    description: str = ""
    binary: str = ""           # the suite executable it runs (built-in plan only; not a file key)
    unfit: str = ""            # regex: a failure whose log matches it means "does not fit" (memory)
    if_unfit: str = ""         # run only when this earlier step ended "unfit", else skip
    unless_unfit: list = field(default_factory=list)  # skip when one of these ended "unfit"
    always: bool = False       # run at every call, finished or not (summaries of the folder)
    estimate_s: float = 0.0    # expected duration, for the plan's time estimate (0: none)

    def inputs(self):
        """Steps whose results this one reads: when one of them finished after this step started,
        this step's results are stale and it runs again."""
        return list(dict.fromkeys(self.needs + self.after))

    def conditions(self):
        """Earlier steps whose "unfit" outcome decides whether this one runs."""
        return ([self.if_unfit] if self.if_unfit else []) + list(self.unless_unfit)


def expand(word, tmp, out):
    """The argument words of one template word (several for {glob:...}, possibly none)."""
    m = GLOB_RE.match(word)
    if m:
        pattern = m.group(1).replace("{tmp}", tmp).replace("{out}", out)
        return sorted(glob.glob(pattern))
    m = ARGS_RE.match(word)
    if m:
        path = m.group(1).replace("{tmp}", tmp).replace("{out}", out)
        doc = read_json(path) if os.path.exists(path) else None
        runs = doc.get("runs") if isinstance(doc, dict) else None
        i = int(m.group(2))
        if not isinstance(runs, list):
            raise SuiteError(f"{path}: no list \"runs\" to take arguments from")
        if i >= len(runs) or not isinstance(runs[i], dict) or \
                not isinstance(runs[i].get("args"), list):
            raise SuiteError(f"{path}: no entry {i} with \"args\" in \"runs\" "
                             f"({len(runs)} entries)")
        return [str(w) for w in runs[i]["args"]]
    return [word.replace("{tmp}", tmp).replace("{out}", out)]


def expand_command(command, tmp, out):
    words = []
    for w in command:
        words.extend(expand(str(w), tmp, out))
    return words


def check_steps(steps):
    """Names unique and well-formed, dependencies known and earlier in the list."""
    seen = set()
    for s in steps:
        if not NAME_RE.match(s.name):
            raise SuiteError(f"step name '{s.name}': use letters, digits and _ . + - only")
        if s.name in seen:
            raise SuiteError(f"step '{s.name}' is defined twice")
        for d in s.inputs() + s.conditions():
            if d not in seen:
                raise SuiteError(f"step '{s.name}' depends on '{d}', which is not an earlier step")
        if not s.command and not s.missing:
            raise SuiteError(f"step '{s.name}' has no command")
        if s.unfit:
            try:
                re.compile(s.unfit)
            except re.error as e:
                raise SuiteError(f"step '{s.name}': unfit pattern: {e}") from None
        for o in s.outputs:
            if o.startswith("/") or ".." in o.split("/") or o.startswith("."):
                raise SuiteError(f"step '{s.name}': output '{o}' must be a relative path inside "
                                 "the results folder, not hidden")
        seen.add(s.name)
    return steps


_FIELDS = {"name": str, "command": list, "group": str, "ranks": int, "outputs": list,
           "timeout_s": (int, float), "stall_s": (int, float), "needs": list, "after": list,
           "env": dict, "missing": str, "description": str, "unfit": str, "if_unfit": str,
           "unless_unfit": list, "always": bool, "estimate_s": (int, float)}


def step_from_dict(d, where):
    if not isinstance(d, dict):
        raise SuiteError(f"{where}: a step must be a JSON object")
    unknown = sorted(set(d) - set(_FIELDS))
    if unknown:
        raise SuiteError(f"{where}: unknown key(s) {', '.join(unknown)} "
                         f"(known: {', '.join(_FIELDS)})")
    for key in ("name", "command"):
        if key not in d:
            raise SuiteError(f"{where}: missing '{key}'")
    for key, typ in _FIELDS.items():
        if key in d and not isinstance(d[key], typ):
            raise SuiteError(f"{where}: '{key}' has the wrong type")
    if d.get("ranks", 0) < 0 or d.get("timeout_s", 1) <= 0 or d.get("stall_s", 0) < 0 or \
            d.get("estimate_s", 0) < 0:
        raise SuiteError(f"{where}: ranks, stall_s and estimate_s must be >= 0 and timeout_s > 0")
    step = Step(**d)
    step.command = [str(w) for w in step.command]
    step.env = {str(k): str(v) for k, v in step.env.items()}
    if COMM_VAR in step.env:
        parse_comm_timeout(step.env[COMM_VAR], f"{where}: env {COMM_VAR}")
    return step


def load_steps_file(path):
    """Steps from a JSON file: {"steps": [{"name": ..., "command": [...], ...}, ...]}."""
    doc = read_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list) or not doc["steps"]:
        raise SuiteError(f"{path}: expected {{\"steps\": [ ... ]}} with at least one step")
    steps = [step_from_dict(d, f"{path}: step {i + 1}") for i, d in enumerate(doc["steps"])]
    try:
        return check_steps(steps)
    except SuiteError as e:
        raise SuiteError(f"{path}: {e}") from None
