"""Command line of ovb-suite: run, status, list. Documented in slurm/README.md.

  ovb-suite run --out DIR [--preset quick|full|CAMPAIGN] [--param NAME=VALUE]... [--budget S]
                [--backend auto|cuda|host] [--ranks N] ...
  ovb-suite exec --out DIR --name STEP [--ranks N] [--output PATH]... -- COMMAND ARGS...
  ovb-suite status DIR [--json]
  ovb-suite list [--preset ...] [--backend ...] [--ranks N]     (the steps and their commands)
Exit status of run: 0 every step finished, 1 some failed, 2 bad usage, 128+N stopped by signal N.
"""

import argparse
import json
import os
import shlex
import signal
import socket
import subprocess
import sys

from . import __version__
from .campaigns import CAMPAIGNS, build as build_campaign, default_budget, parse_params
from .launch import (BUILD_CANDIDATES, choose_launcher, default_ranks, find_binary, pick_build,
                     resolve_backend)
from .plan import GROUPS, Target, build_plan
from . import presets
from .presets import ARCHS, PRESETS
from .runner import SignalWatch
from .state import DONE, ResultsFolder
from .step import Step, check_steps, load_steps_file
from .suite import Suite
from .mps import Mps
from .util import COMM_VAR, OneLineParser, SuiteError, iso, now, parse_comm_timeout, progress

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
# Options recorded in .suite/suite.json: a rerun into the same folder must not change them.
RECORDED = ("preset", "arch", "rounds", "backend", "ranks", "ranks_per_gpu", "steps_file")


def _positive(v):
    try:
        x = float(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{v}' is not a number") from None
    if x <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {v}")
    return x


def _seconds(v):
    try:
        x = float(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{v}' is not a number of seconds") from None
    if not 0 <= x < float("inf"):
        raise argparse.ArgumentTypeError(f"must be >= 0 (0: off), got {v}")
    return x


def _epoch(v):
    try:
        x = float(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{v}' is not a time in seconds since the epoch") \
            from None
    if not now() - 86400 <= x <= now():
        raise argparse.ArgumentTypeError(f"{v} is not within the last day (seconds since the "
                                         "epoch, e.g. from `date +%s`)")
    return x


def _comm_option(p):
    p.add_argument("--comm-timeout", type=_seconds, metavar="S",
                   help="OVB_COMM_TIMEOUT_S for multi-rank steps: the binaries' in-process "
                   "collective watchdog (0: off; default $OVB_COMM_TIMEOUT_S, else 0.8 x the "
                   "step's stall limit, or time limit)")


def _count(v):
    if not v.isdigit() or int(v) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got '{v}'")
    return int(v)


def _target_options(p):
    names = PRESETS + tuple(CAMPAIGNS)
    p.add_argument("--preset", choices=names, metavar="NAME", help="the suite's size (quick, "
                   "the default, or full) or a campaign preset: " + "; ".join(
                       f"{k}: {m.DESCRIPTION}" for k, m in CAMPAIGNS.items()))
    p.add_argument("--arch", choices=ARCHS, help="the model the quick and full presets train: "
                   "gpt (default) or llama (the preset's Llama model; host backend)")
    p.add_argument("--rounds", type=_count, metavar="N", help="the quick and full presets: run "
                   "every gpt4d configuration N times, in interleaved rounds, compared at the "
                   "median of its runs (default: the preset's, 3 on the host, 1 on GPUs)")
    p.add_argument("--param", action="append", default=None, metavar="NAME=VALUE",
                   help="a campaign preset's parameter (repeatable; slurm/README.md lists them); "
                   "recorded in the folder like the preset")
    p.add_argument("--backend", choices=("auto", "cuda", "host"),
                   help="auto: cuda when the build's GPU probe finds a GPU, else host (default)")
    p.add_argument("--ranks", type=_count, help="ranks of the multi-rank steps (default: "
                   "SLURM_NTASKS in a job; else GPUs x --ranks-per-gpu, or 4 on the host backend)")
    p.add_argument("--ranks-per-gpu", type=_count, help="ranks sharing one GPU "
                   "(sets OVB_RANKS_PER_GPU for the steps; default 1)")
    p.add_argument("--build", metavar="DIR", help="build folder with the suite's executables "
                   "(default $OVB_BUILD_DIR, else the first of build/default, build/cuda, "
                   "build/host that has every executable the run needs)")
    p.add_argument("--steps-file", metavar="FILE", help="run the steps of this JSON file instead "
                   "of the built-in suite (format: slurm/README.md)")


def make_parser():
    ap = OneLineParser(prog="ovb-suite", description="OverlapBench suite driver: runs "
                                 "named steps into one results folder, resumably, with a watchdog; "
                                 "under Slurm or on a workstation.")
    ap.add_argument("--version", action="version", version=f"ovb-suite {__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run (or resume) the suite into a results folder")
    r.add_argument("--out", metavar="DIR", help="results folder; a rerun with the same folder "
                   "resumes (default in a Slurm job: ovb-results-$SLURM_JOB_ID)")
    _target_options(r)
    r.add_argument("--only", metavar="LIST", help=f"comma-separated groups ({', '.join(GROUPS)}) "
                   "or step names to run")
    r.add_argument("--redo", metavar="LIST", help="steps or groups to run again even if finished")
    r.add_argument("--keep-failed", action="store_true",
                   help="do not retry steps that failed before (default: retry them)")
    r.add_argument("--timeout-scale", type=_positive, default=1.0, metavar="F",
                   help="multiply every watchdog limit by F (default 1)")
    r.add_argument("--grace", type=_positive, default=60.0, metavar="S", help="seconds between "
                   "SIGTERM and SIGKILL when a step is stopped (default 60; keep it below the "
                   "#SBATCH --signal lead time)")
    _comm_option(r)
    r.add_argument("--heartbeat", type=_positive, default=300.0, metavar="S",
                   help="progress line every S seconds while a step runs (default 300)")
    r.add_argument("--requeue", choices=("auto", "no"), default="auto", help="auto: after "
                   "SIGUSR1 (the #SBATCH --signal warning) inside a Slurm job, requeue the job "
                   "with scontrol so the unfinished steps run in the next allocation")
    r.add_argument("--budget", type=_seconds, metavar="S", help="time budget of this call in "
                   "seconds: steps get at most what is left, and those that would start with "
                   "less than 20 s left are left for the next call (default: the campaign "
                   "preset's, else none; 0: none)")
    r.add_argument("--budget-start", type=_epoch, metavar="T", help="count the budget from T "
                   "(seconds since the epoch, e.g. `date +%%s` taken before a build the budget "
                   "must include; default: the driver's start)")
    r.add_argument("--dry-run", action="store_true", help="print the plan and exit")
    e = sub.add_parser("exec", help="run one command as a resumable, watchdogged step",
                       description="Runs COMMAND as step STEP of a results folder: skipped when "
                       "finished, under the watchdog, SIGTERM forwarded, outputs moved into place "
                       "on success. Words {tmp} and {out} are replaced as in steps files; a "
                       "COMMAND without '/' is looked up in the build folder first, then PATH.")
    e.add_argument("--out", metavar="DIR", help="results folder (default in a Slurm job: "
                   "ovb-results-$SLURM_JOB_ID)")
    e.add_argument("--name", required=True, metavar="STEP", help="the step's name")
    e.add_argument("--group", default="custom", help="its group (default custom)")
    e.add_argument("--ranks", type=int, default=0, metavar="N",
                   help="run it as N MPI ranks through srun/mpirun (default 0: one plain process)")
    e.add_argument("--output", action="append", default=[], metavar="PATH",
                   help="a file or folder it writes as {tmp}/PATH (repeatable)")
    e.add_argument("--timeout", type=_positive, default=3600.0, metavar="S",
                   help="watchdog wall-clock limit (default 3600)")
    e.add_argument("--stall", type=float, default=0.0, metavar="S",
                   help="watchdog limit without new output (default 0: off)")
    e.add_argument("--backend", choices=("auto", "cuda", "host"), default="auto",
                   help="for the launcher's GPU binding only (default auto)")
    e.add_argument("--build", metavar="DIR", help="where COMMAND is looked up first")
    e.add_argument("--grace", type=_positive, default=60.0, metavar="S")
    _comm_option(e)
    e.add_argument("--redo", action="store_true", help="run it even if finished")
    e.add_argument("--requeue", choices=("auto", "no"), default="auto",
                   help="as for run: requeue the Slurm job after SIGUSR1")
    e.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS...")
    s = sub.add_parser("status", help="the steps of a results folder and their state")
    s.add_argument("dir", metavar="DIR")
    s.add_argument("--json", action="store_true", help="print .suite/status.json")
    ls = sub.add_parser("list", help="the suite's steps and commands for a target")
    _target_options(ls)
    ls.add_argument("--binaries", action="store_true", help="print only the suite executables "
                    "a run of the plan needs (the build targets), one a line: those its steps "
                    "run, and with --backend cuda the GPU probe")
    return ap


def _split(v):
    return [x.strip() for x in (v or "").split(",") if x.strip()]


def _settle_options(args, folder):
    """Fills unset options from the folder's suite.json (a resumed run keeps its set-up) and
    refuses explicit ones that differ from it."""
    doc = folder.read_suite() if folder else None
    if doc:
        clash = [f"--{k.replace('_', '-')} {getattr(args, k)} (folder: {doc.get(k)})"
                 for k in RECORDED if getattr(args, k) is not None and doc.get(k) is not None
                 and k != "backend" and getattr(args, k) != doc.get(k)]
        if args.backend not in (None, "auto") and args.backend != doc.get("backend"):
            clash.append(f"--backend {args.backend} (folder: {doc.get('backend')})")
        recorded = doc.get("params") or {}
        for word in args.param or []:
            name, _, value = word.partition("=")
            if name in recorded and recorded[name] != value:
                clash.append(f"--param {word} (folder: {name}={recorded[name]})")
        if clash:
            raise SuiteError(f"{folder.root} was started with other options: {'; '.join(clash)}; "
                             "resume with the same options or use a new --out")
        for k in RECORDED:
            if getattr(args, k) is None or k == "backend":
                setattr(args, k, doc.get(k))
    args.preset = args.preset or "quick"
    _check_arch(args)
    args.ranks_per_gpu = args.ranks_per_gpu or 1
    args.params = _params(args, (doc or {}).get("params"))
    return doc


def _check_arch(args):
    """--arch chooses the model of the quick and full presets and --rounds their repetitions;
    campaigns name their own models and runs."""
    own = args.preset in CAMPAIGNS or args.steps_file
    for flag, value in (("--arch", args.arch), ("--rounds", getattr(args, "rounds", None))):
        if value is not None and own:
            raise SuiteError(f"{flag}: {'a steps file' if args.steps_file else 'preset ' + args.preset}"
                             f" names its own models and runs ({flag} applies to the presets "
                             f"{', '.join(PRESETS)})")
    args.arch = args.arch or ("gpt" if args.preset in PRESETS and not args.steps_file else None)


def _effective_rounds(args, target):
    """The rounds the folder runs (recorded, so that a resume with another --rounds is refused):
    --rounds, else the preset's; None for campaigns and steps files."""
    if args.steps_file or args.preset in CAMPAIGNS:
        return None
    return args.rounds or presets.preset(args.preset, target.backend, target.arch).rounds


def _params(args, recorded=None):
    """The campaign preset's parameters ({} for quick/full, which take none)."""
    if args.preset in CAMPAIGNS:
        return parse_params(CAMPAIGNS[args.preset], args.param, recorded)
    if args.param:
        raise SuiteError(f"--param: preset {args.preset} takes no parameters (campaign presets "
                         f"do: {', '.join(CAMPAIGNS)})")
    return {}


def _plan_binaries(args):
    """The suite executables the selected steps of the built-in plan run (none for a steps file)."""
    if args.steps_file:
        return set()
    if args.preset in CAMPAIGNS:
        return build_campaign(CAMPAIGNS[args.preset], Target(REPO, "", "host", 1, args.preset),
                              args.params, check_backend=False).binaries
    steps = build_plan(Target(REPO, "", "host", args.ranks or default_ranks("host", 1),
                              args.preset, arch=args.arch or "gpt",
                              rounds=getattr(args, "rounds", None) or 0))
    try:
        steps = _select(steps, getattr(args, "only", None))
    except SuiteError:
        pass  # step names of another rank count: the whole plan's; _select reports it later
    return {s.binary for s in steps if s.binary}


def default_build(needed, strict=True):
    """pick_build under this repository, saying which folder was chosen (and which passed over)."""
    build, note = pick_build(REPO, needed, strict)
    if build:
        has = needed and all(find_binary(build, n) for n in needed)
        progress(f"build folder {build} (the first of "
                 f"{', '.join('build/' + c for c in BUILD_CANDIDATES)}"
                 f"{' with ' + ', '.join(sorted(needed)) if has else ''}"
                 f"{'; ' + note if note else ''})")
    return build


def _resolve_target(args):
    build = args.build or os.environ.get("OVB_BUILD_DIR") or default_build(_plan_binaries(args))
    if args.steps_file is None and not build:
        raise SuiteError("no build folder: build the suite (cmake --preset host && cmake --build "
                         "--preset host) or pass --build DIR")
    if build and not os.path.isdir(build):
        raise SuiteError(f"--build {build}: no such folder")
    build = os.path.abspath(build) if build else ""
    if args.backend == "cuda" and getattr(args, "plan_only", False):
        backend = "cuda"  # a plan to look at: no GPU needed to print it
    else:
        backend = resolve_backend(args.backend or "auto", build)
    ranks = args.ranks or default_ranks(backend, args.ranks_per_gpu)
    return Target(REPO, build, backend, ranks, args.preset, arch=args.arch or "gpt",
                  rounds=getattr(args, "rounds", None) or 0)


def _steps(args, target):
    if args.steps_file:
        return load_steps_file(args.steps_file)
    if args.preset in CAMPAIGNS:
        return build_campaign(CAMPAIGNS[args.preset], target, args.params).steps
    return build_plan(target)


def _select(steps, only):
    want = _split(only)
    if not want:
        return steps
    groups = list(dict.fromkeys(s.group for s in steps)) or list(GROUPS)
    known = set(GROUPS) | {s.name for s in steps} | set(groups)
    bad = [w for w in want if w not in known]
    if bad:
        raise SuiteError(f"--only: unknown group or step {', '.join(bad)} "
                         f"(groups: {', '.join(groups)}; `ovb-suite list` shows the steps)")
    # `always` steps (a campaign's summary) belong to every selection.
    keep = [s for s in steps if s.name in want or s.group in want or s.always]
    names = {s.name for s in keep}
    for s in keep:
        s.after = [d for d in s.after if d in names]
    return keep


def _campaign_line(args, budget, steps):
    """The plan's second header line for a campaign preset: its budget, the time estimate (the
    campaign's build plus the steps' estimates; the `always` steps are outside the budget) and
    its parameters."""
    if args.preset not in CAMPAIGNS or getattr(args, "steps_file", None):
        return None
    params = "; ".join(f"{k}={v}" for k, v in args.params.items()) or "none"
    timed = [s.estimate_s for s in steps if s.estimate_s > 0 and not s.always]
    build = getattr(CAMPAIGNS[args.preset], "BUILD_S", None) or 0.0
    estimate = ""
    if timed:
        estimate = f"; estimated {build + sum(timed):.1f} s (" + \
            (f"build {build:g} s + " if build else "") + \
            f"{len(timed)} steps {sum(timed):.1f} s)"
    return f"# campaign {args.preset}: budget {f'{budget:g} s' if budget else 'none'}" \
           f"{estimate}; parameters: {params}"


def _print_plan(steps, target, launcher, note=None, budget_notes=False):
    """Every step with its command; with budget_notes (a campaign with a time budget) each
    step's watchdog limit too: its share of the call's budget."""
    print(f"# backend {target.backend}, {target.ranks} ranks, preset {target.preset}"
          f"{' (' + target.arch + ')' if target.arch != 'gpt' else ''}, build "
          f"{target.build or '-'}, launcher {launcher.describe()}")
    if note:
        print(note)
    for s in steps:
        cmd = (launcher.prefix(s.ranks, target.backend) if s.ranks and launcher.kind != "none"
               else []) + s.command
        notes = [f"cannot run: {s.missing}"] if s.missing else []
        notes += [f"only if {s.if_unfit} does not fit"] if s.if_unfit else []
        notes += [f"unless {', '.join(s.unless_unfit)} did not fit"] if s.unless_unfit else []
        notes += ["at every call"] if s.always else []
        notes += [f"~{s.estimate_s:g} s"] if s.estimate_s > 0 else []
        notes += [f"env {' '.join(f'{k}={v}' for k, v in s.env.items())}"] if s.env else []
        notes += [f"{s.ranks} ranks"] if s.ranks and launcher.kind == "none" else []
        notes += [f"limit {s.timeout_s:g} s"] if budget_notes else []
        state = "".join(f"  [{n}]" for n in notes)
        print(f"{s.name} ({s.group}){state}\n    {shlex.join(cmd)}")


def _default_out():
    job = os.environ.get("SLURM_JOB_ID")
    if not job:
        raise SuiteError("--out DIR is required outside a Slurm job")
    root = os.environ.get("OVB_RESULTS_ROOT", ".")
    return os.path.join(root, f"ovb-results-{job}")


def _requeue(signals, args):
    job = os.environ.get("SLURM_JOB_ID")
    if signals.received != signal.SIGUSR1 or args.requeue == "no" or not job:
        return
    progress(f"requeueing job {job} (scontrol requeue): the next start resumes this folder")
    try:
        r = subprocess.run(["scontrol", "requeue", job], capture_output=True, text=True,
                           timeout=60)
        if r.returncode:
            progress(f"scontrol requeue failed ({r.returncode}): {(r.stderr or r.stdout).strip()}")
    except (OSError, subprocess.SubprocessError) as e:
        progress(f"scontrol requeue failed: {e}")


def _check_comm_env():
    """A bad OVB_COMM_TIMEOUT_S from the site file stops the driver before it touches a folder
    (every step's binaries would reject it)."""
    if os.environ.get(COMM_VAR, "") != "":
        parse_comm_timeout(os.environ[COMM_VAR], COMM_VAR)


def cmd_run(args):
    signals = SignalWatch()
    signals.install()  # from the start: a signal during set-up must not lose the folder's state
    _check_comm_env()
    folder = ResultsFolder(args.out or _default_out())
    doc = _settle_options(args, folder)
    args.plan_only = args.dry_run
    target = _resolve_target(args)
    launcher = choose_launcher()
    steps = _select(_steps(args, target), args.only)
    campaign = CAMPAIGNS.get(args.preset) if not args.steps_file else None
    budget = args.budget if args.budget is not None else \
        (default_budget(campaign, target.backend) if campaign else None)
    if args.dry_run:
        _print_plan(steps, target, launcher, _campaign_line(args, budget, steps), bool(budget))
        return 0
    t = now()
    doc = doc or {"created_at": iso(t), "jobs": []}
    doc.update(preset=args.preset if not args.steps_file else "custom", arch=args.arch,
               rounds=_effective_rounds(args, target),
               backend=target.backend,
               ranks=target.ranks, ranks_per_gpu=args.ranks_per_gpu, build=target.build,
               steps_file=os.path.abspath(args.steps_file) if args.steps_file else None,
               params=args.params or None)
    doc["jobs"].append({"started_at": iso(t), "host": socket.gethostname(),
                        "job_id": os.environ.get("SLURM_JOB_ID"),
                        "restart_count": os.environ.get("SLURM_RESTART_COUNT"),
                        "only": args.only, "pid": os.getpid(),
                        "budget_s": budget or None,
                        "budget_start": iso(args.budget_start) if args.budget_start else None})
    os.makedirs(folder.root, exist_ok=True)
    mps = Mps()
    # Ranks that share a GPU run their kernels concurrently under MPS: the campaign presets that
    # say so, and any run with --ranks-per-gpu > 1.
    shared = campaign.MPS if campaign is not None else args.ranks_per_gpu > 1
    if shared and target.backend == "cuda":
        doc["jobs"][-1]["mps"] = mps.start()
        progress(f"CUDA MPS {doc['jobs'][-1]['mps']}")
    folder.write_suite(doc)
    env = {"OVB_RANKS_PER_GPU": str(args.ranks_per_gpu)} if args.ranks_per_gpu > 1 else {}
    suite = Suite(folder, steps, launcher=launcher, backend=target.backend, signals=signals,
                  grace_s=args.grace, heartbeat_s=args.heartbeat,
                  timeout_scale=args.timeout_scale, extra_env=env, redo=_split(args.redo),
                  keep_failed=args.keep_failed, suite_doc=doc, comm_timeout_s=args.comm_timeout,
                  budget_s=budget or None, budget_start=args.budget_start)
    try:
        rc = suite.run()
    finally:
        mps.stop()
    suite.release_locks()
    if signals.received:
        _requeue(signals, args)
    return rc


def cmd_exec(args):
    signals = SignalWatch()
    signals.install()
    _check_comm_env()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        raise SuiteError("exec: no command given (ovb-suite exec --name STEP ... -- COMMAND ...)")
    if args.ranks < 0:
        raise SuiteError(f"--ranks must be >= 0, got {args.ranks}")
    build = args.build or os.environ.get("OVB_BUILD_DIR") or \
        default_build({cmd[0]} if "/" not in cmd[0] else set(), strict=False) or ""
    if "/" not in cmd[0] and build:
        cmd[0] = find_binary(build, cmd[0]) or cmd[0]
    step = check_steps([Step(name=args.name, command=cmd, group=args.group, ranks=args.ranks,
                             outputs=args.output, timeout_s=args.timeout, stall_s=args.stall)])[0]
    folder = ResultsFolder(args.out or _default_out())
    doc = folder.read_suite() or {"created_at": iso(now()), "jobs": []}
    backend = doc.get("backend") or resolve_backend(args.backend, build)
    doc.setdefault("backend", backend)
    doc["jobs"].append({"started_at": iso(now()), "host": socket.gethostname(),
                        "job_id": os.environ.get("SLURM_JOB_ID"), "exec": args.name,
                        "restart_count": os.environ.get("SLURM_RESTART_COUNT"), "pid": os.getpid()})
    os.makedirs(folder.root, exist_ok=True)
    folder.write_suite(doc)
    suite = Suite(folder, [step], launcher=choose_launcher(), backend=backend, signals=signals,
                  grace_s=args.grace, redo=[args.name] if args.redo else [], suite_doc=doc,
                  shared=True, comm_timeout_s=args.comm_timeout)
    rc = suite.run()
    suite.release_locks()
    if signals.received:
        _requeue(signals, args)
    return rc


def cmd_status(args):
    folder = ResultsFolder(args.dir)
    path = os.path.join(folder.meta, "status.json")
    if not os.path.exists(path):
        raise SuiteError(f"{args.dir}: not a results folder of ovb-suite ({path} missing)")
    if args.json:
        with open(path, encoding="utf-8") as f:
            sys.stdout.write(f.read())
        return 0
    with open(os.path.join(folder.root, "suite-status.md"), encoding="utf-8") as f:
        sys.stdout.write(f.read())
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    return 0 if all(r["status"] in DONE for r in doc["steps"]) else 1


def cmd_list(args):
    args.preset = args.preset or "quick"
    _check_arch(args)
    args.ranks_per_gpu = args.ranks_per_gpu or 1
    args.params = _params(args)
    if args.binaries:
        # run --backend cuda also runs the build's GPU probe (launch.resolve_backend)
        probe = {"ovb-gpu-probe"} if args.backend == "cuda" else set()
        print("\n".join(sorted(_plan_binaries(args) | probe)))
        return 0
    args.plan_only = True
    target = _resolve_target(args)
    budget = default_budget(CAMPAIGNS[args.preset], target.backend) \
        if args.preset in CAMPAIGNS else None
    steps = _steps(args, target)
    _print_plan(steps, target, choose_launcher(), _campaign_line(args, budget, steps),
                bool(budget))
    return 0


def main(argv=None):
    args = make_parser().parse_args(argv)
    try:
        cmds = {"run": cmd_run, "exec": cmd_exec, "status": cmd_status, "list": cmd_list}
        return cmds[args.cmd](args)
    except SuiteError as e:
        print(f"ovb-suite: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `ovb-suite list | head`: not an error; keep Python quiet at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("ovb-suite: interrupted", file=sys.stderr)
        return 130
