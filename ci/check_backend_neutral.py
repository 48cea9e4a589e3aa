#!/usr/bin/env python3
"""ci/check_backend_neutral.py: a ctest labelled backend-neutral runs the same thing in the host and
the CUDA build, so ci/test.sh's CUDA pass leaves it out (`-LE backend-neutral`) and the host pass
alone runs it. Proved here for each such test of the CUDA build, against the host build:
- the host build has the test, with the label, and the same command (build folder aside);
- every file of the build its command or ENVIRONMENT names is made by the same commands in both
  builds (`ninja -t commands FILE`: every compile, link and generation step up to it, build folder
  aside; order-only dependencies too, so a program the target depends on and runs, ovb-trace for
  profiling.large_trace, is covered), so the program is the same; a folder it names must hold only such files (the build's
  top folder holds gpt4d, so a test handed the whole build is never neutral); a file neither build
  makes (a scratch folder, an output of its own) is no program;
- every test it needs (DEPENDS, the setup of its FIXTURES_REQUIRED) is backend-neutral too, so it
  reads nothing a backend-dependent program wrote; and it is no GPU test.
What the check cannot see: a script that finds a program by itself (a path it derives, PATH);
a neutral test names every program it runs on its command line. Tests that pass every rule but
are not labelled are listed as a note (they could be), fixture setups aside (ctest runs those
for the tests that need them whatever the labels).
Exit status 0 when all hold, 1 with one line per problem, 2 on bad usage, 77 (ctest: Skipped)
when there is no host build to compare with.
Usage: ci/check_backend_neutral.py CUDA_BUILD HOST_BUILD NINJA (ctest: tree.backend_neutral)."""

import filecmp
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import ctest_list  # noqa: E402

LABEL = "backend-neutral"
BUILD = "<build>"


def normalized(words, build):
    return [w.replace(build, BUILD) for w in words]


def named_files(words, build):
    """Paths relative to `build` that the words name ('' for the build folder itself)."""
    out = []
    for w in words:
        i = w.find(build)
        if i < 0:
            continue
        rest = w[i + len(build):]
        if rest == "" or rest.startswith("/"):
            out.append(rest.strip("/").split()[0] if rest.strip("/") else "")
    return out


def test_problems(test, cuda_build, host_test, host_build, made, recipe, differing,
                  neutral_names):
    """Problems that keep `test` (a ctest_list dict of the CUDA build) from being neutral.
    made: {"cuda": set, "host": set} of files each build makes; recipe(which, rel): the commands
    that make rel in that build, build folder written <build>; differing(dir): the files of that
    build folder (relative to it) that no step makes and whose bytes differ between the builds
    (configure_file's headers); neutral_names: labelled tests."""
    name = test["name"]
    if "gpu" in test["labels"]:
        return [f"{name}: a GPU test is never backend-neutral"]
    if host_test is None:
        return [f"{name}: the host build has no such test (the host pass would not run it)"]
    if not test["has_command"] or not host_test["has_command"]:
        return [f"{name}: its program is not built in both builds (build both first)"]
    out = []
    if normalized(test["words"], cuda_build) != normalized(host_test["words"], host_build):
        out.append(f"{name}: its command differs between the builds")
    for dep in test["depends"]:
        if dep not in neutral_names:
            out.append(f"{name}: needs test {dep}, which is not backend-neutral (it may read "
                       "what a backend-dependent program wrote)")
    for rel in dict.fromkeys(named_files(test["words"], cuda_build)):
        files = sorted(f for f in made["cuda"] | made["host"]
                       if not rel or f == rel or f.startswith(rel + "/"))
        for f in files:
            where = "cuda" if f in made["cuda"] else "host"
            shown = f"the build folder's {f}" if f != rel else rel
            if f not in made["cuda"] or f not in made["host"]:
                out.append(f"{name}: names {rel or 'the build folder'}, and only the {where} "
                           f"build makes {shown}")
                break
            if recipe("cuda", f) != recipe("host", f):
                c, h = set(recipe("cuda", f)), set(recipe("host", f))
                which, step = ("cuda", min(c - h)) if c - h else ("host", min(h - c, default=""))
                out.append(f"{name}: names {rel or 'the build folder'}, and {shown} is built "
                           f"differently in the two builds (the {which} build runs: "
                           f"{step[:160]})")
                break
            for d in include_dirs(recipe("cuda", f)):
                for g in differing(d):
                    out.append(f"{name}: names {rel or 'the build folder'}, whose compiles read "
                               f"{d}/{g}, which differs between the builds (a configured file)")
    return list(dict.fromkeys(out))


def include_dirs(steps):
    """Folders of the build that the steps' compiles read headers from (-I, -isystem)."""
    return sorted({m for s in steps
                   for m in re.findall(r"(?:-I|-isystem ?)" + re.escape(BUILD) + r"/(\S+)", s)})


def check(cuda_tests, host_tests, cuda_build, host_build, made, recipe, differing):
    """(problems of the labelled tests, names of unlabelled tests that would pass)."""
    by_name = {t["name"]: t for t in host_tests}
    neutral = {t["name"] for t in cuda_tests if LABEL in t["labels"]}
    problems, candidates = [], []
    for t in cuda_tests:
        host_test = by_name.get(t["name"])
        if t["name"] in neutral:
            problems += test_problems(t, cuda_build, host_test, host_build, made, recipe, differing,
                                      neutral)
            if host_test is not None and LABEL not in host_test["labels"]:
                problems.append(f"{t['name']}: not labelled {LABEL} in the host build")
        elif (not t["sets_up"] and "gpu" not in t["labels"] and host_test is not None
              and not test_problems(
                  t, cuda_build, host_test, host_build, made, recipe, differing,
                  neutral | {t["name"]})):
            candidates.append(t["name"])
    return problems, candidates


def ninja_files(build, ninja):
    """The files the build makes (relative to it), from `ninja -t targets all`."""
    r = subprocess.run([ninja, "-C", build, "-t", "targets", "all"], capture_output=True,
                       text=True, check=True)
    out = set()
    for line in r.stdout.splitlines():
        path, _, rule = line.rpartition(": ")
        if path and rule != "phony":
            out.add(path[len(build) + 1:] if path.startswith(build + "/") else path)
    return out


def ninja_recipe(builds, ninja):
    cache = {}

    def recipe(which, rel):
        if (which, rel) not in cache:
            r = subprocess.run([ninja, "-C", builds[which], "-t", "commands", rel],
                               capture_output=True, text=True, check=True)
            cache[which, rel] = sorted(normalized(r.stdout.splitlines(), builds[which]))
        return cache[which, rel]
    return recipe


def configured_differences(builds, made):
    """differing(rel_dir) of check(): the files of a build folder that no build step makes
    (configure_file's) and that one build lacks or holds with other bytes."""
    cache = {}
    made_any = made["cuda"] | made["host"]

    def differing(rel_dir):
        if rel_dir not in cache:
            names = set()
            for build in builds.values():
                top = os.path.join(build, rel_dir)
                for root, _, files in os.walk(top):
                    names |= {os.path.relpath(os.path.join(root, f), top) for f in files}
            out = []
            for n in sorted(names):
                if os.path.normpath(os.path.join(rel_dir, n)) in made_any:
                    continue
                paths = [os.path.join(b, rel_dir, n) for b in builds.values()]
                if not all(map(os.path.isfile, paths)) or not filecmp.cmp(*paths, shallow=False):
                    out.append(n)
            cache[rel_dir] = out
        return cache[rel_dir]
    return differing


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    cuda_build, host_build = (os.path.abspath(a).rstrip("/") for a in argv[1:3])
    ninja = argv[3]
    if not os.path.isfile(os.path.join(host_build, "build.ninja")):
        print(f"check_backend_neutral.py: skipped: no host build in {host_build} to compare with "
              "(ci/test.sh builds it first; or cmake --preset host && cmake --build --preset host)")
        return 77
    builds = {"cuda": cuda_build, "host": host_build}
    try:
        cuda_tests = ctest_list.ctests(cuda_build)
        host_tests = ctest_list.ctests(host_build)
        made = {k: ninja_files(b, ninja) for k, b in builds.items()}
        problems, candidates = check(cuda_tests, host_tests, cuda_build, host_build, made,
                                     ninja_recipe(builds, ninja),
                                     configured_differences(builds, made))
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"check_backend_neutral.py: error: cannot list the builds' tests or files: {e}")
        return 2
    for p in problems:
        print(f"check_backend_neutral.py: {p}")
    labelled = sum(1 for t in cuda_tests if LABEL in t["labels"])
    if candidates:
        print(f"check_backend_neutral.py: note: {len(candidates)} more test(s) pass every rule but "
              f"are not labelled {LABEL}: {', '.join(candidates)}")
    print(f"check_backend_neutral.py: {labelled} tests labelled {LABEL}, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
