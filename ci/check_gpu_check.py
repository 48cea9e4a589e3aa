#!/usr/bin/env python3
"""ci/check_gpu_check.py: slurm/gpu-check.sh's dry run against a configured CUDA build, so that the
one GPU call cannot leave a GPU test out or fail on a program it did not build. From the dry run's
output: the configure line names one CUDA architecture; the ctest steps are exactly the build's
GPU-labelled tests (`ctest -N -L gpu`), in ctest's order, each selecting its own test; every file
of the build that a GPU test runs or loads (its command words and ENVIRONMENT values that are
outputs of the build, e.g. ovb-gpu-probe, gpt4d, libovb-inject.so) is an output of a target on
the build line; every program a step runs comes from those targets; every step shows its limit.
Exit status 0 when all hold, 1 with one line per problem, 2 on bad usage.
Usage: ci/check_gpu_check.py REPO BUILD NINJA (ctest: tree.gpu_check_dry_run)."""

import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import ctest_list  # noqa: E402

STEP = re.compile(r"^(\S+) \((\S+)\)(.*)$")
NOT_BUILT = re.compile(r"cannot run: (\S+) not built")


def parse_dry_run(text):
    """{configure, build: [words], steps: [(name, group, notes, command words)]}."""
    out = {"configure": [], "build": [], "steps": []}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        for key in ("configure", "build"):
            if line.startswith(key + ": "):
                out[key] = shlex.split(line[len(key) + 2:])
        m = STEP.match(line)
        if m and i + 1 < len(lines) and lines[i + 1].startswith("    "):
            out["steps"].append((m.group(1), m.group(2), m.group(3),
                                 shlex.split(lines[i + 1].strip())))
    return out


def gpu_tests(build):
    """[(name, [words of its command and ENVIRONMENT values])] of the build's label gpu."""
    return [(t["name"], t["words"]) for t in ctest_list.ctests(build, "gpu")]


def check(dry, tests, build, outputs_of, is_output):
    """Problems of a parsed dry run. tests: gpu_tests(); outputs_of(target): the build files a
    target makes (empty when it is no target); is_output(relpath): a file the build makes."""
    problems = []
    archs = [w.split("=", 1)[1] for w in dry["configure"]
             if w.startswith("-DCMAKE_CUDA_ARCHITECTURES=")]
    if len(archs) != 1 or not re.fullmatch(r"\d+a?", archs[0]):
        problems.append(f"configure line: expected one CUDA architecture, got {archs}")
    b = dry["build"]
    targets = b[b.index("--target") + 1:] if "--target" in b else []
    if not targets:
        problems.append("build line: no --target list (the whole build would be built)")
    made = set()
    for t in targets:
        files = outputs_of(t)
        if not files:
            problems.append(f"build line: {t} is not a target of {build}")
        made |= set(files)
    steps = [s for s in dry["steps"] if s[1] == "ctest"]
    got = [s[0].removeprefix("ctest-") for s in steps]
    want = [name for name, _ in tests]
    for name in sorted(set(want) - set(got)):
        problems.append(f"GPU-labelled ctest {name} has no step")
    for name in sorted(set(got) - set(want)):
        problems.append(f"step ctest-{name} is not a GPU-labelled ctest")
    if not problems and got != want:
        problems.append("the ctest steps are not in ctest's order (fixtures run out of order)")
    for name, _, _, cmd in steps:
        rx = cmd[cmd.index("-R") + 1] if "-R" in cmd else ""
        test = name.removeprefix("ctest-")
        # ctest -R searches (a match anywhere in the name selects the test).
        if not rx or not re.search(rx, test) or any(re.search(rx, w) for w in want if w != test):
            problems.append(f"{name}: -R {rx!r} does not select exactly {test}")
    prefix = build.rstrip("/") + "/"
    for name, words in tests:
        for w in words:
            rel = w[len(prefix):] if w.startswith(prefix) else None
            if rel and is_output(rel) and rel not in made:
                problems.append(f"ctest {name} needs {rel}, which no target on the build line "
                                "makes")
    for name, _, notes, cmd in dry["steps"]:
        if "[limit " not in notes:
            problems.append(f"step {name}: no time limit shown")
        m = NOT_BUILT.search(notes)
        if m and m.group(1) not in targets:
            problems.append(f"step {name} runs {m.group(1)}, which is not on the build line")
        for w in cmd:
            if w.startswith(prefix) and is_output(w[len(prefix):]) and w[len(prefix):] not in made:
                problems.append(f"step {name} runs {w}, which no target on the build line makes")
    return problems


def ninja_queries(build, ninja):
    def query(name):
        r = subprocess.run([ninja, "-C", build, "-t", "query", name], capture_output=True,
                           text=True)
        return r.stdout if r.returncode == 0 else ""

    def outputs_of(target):
        # A CMake target is a phony edge whose inputs are the files it makes, or, when the file
        # has the target's name (ovb-trace at the build's top), that file's own edge.
        text = query(target)
        m = re.search(r"input: phony\n((?:    .*\n)*)", text)
        if m:
            return [ln.strip() for ln in m.group(1).splitlines()]
        return [target] if re.search(r"^\s+input: \S", text, re.M) else []

    def is_output(rel):
        text = query(rel)
        return bool(re.search(r"^\s+input: (?!phony)", text, re.M))
    return outputs_of, is_output


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    repo, build, ninja = argv[1], os.path.abspath(argv[2]), argv[3]
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([os.path.join(repo, "slurm", "gpu-check.sh"),
                            os.path.join(tmp, "out"), "--dry-run", "--build", build],
                           capture_output=True, text=True)
    if r.returncode != 0:
        print(f"check_gpu_check.py: the dry run failed ({r.returncode}): {r.stderr.strip()}")
        return 1
    dry = parse_dry_run(r.stdout)
    tests = gpu_tests(build)
    if not tests:
        print(f"check_gpu_check.py: {build} has no GPU-labelled ctest (not a CUDA build?)")
        return 1
    problems = check(dry, tests, build, *ninja_queries(build, ninja))
    for p in problems:
        print(f"check_gpu_check.py: {p}")
    if not problems:
        print(f"check_gpu_check.py: ok: {len(tests)} GPU ctests, {len(dry['steps'])} steps, "
              f"{len(dry['build']) - dry['build'].index('--target') - 1} targets")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
