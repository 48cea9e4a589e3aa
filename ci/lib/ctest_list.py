"""ci/lib/ctest_list.py: a build's ctests as ctest lists them (`ctest -N --show-only=json-v1`), one
dict each, in ctest's order: name, labels, words (the command's words and the ENVIRONMENT
values: every file the test runs or loads that the command names), depends (DEPENDS and the
tests that set up its FIXTURES_REQUIRED), sets_up (it sets up a fixture: ctest runs it for the
tests that require it, whatever the selection). Used by the tree checks in ci/ (check_gpu_check.py,
check_backend_neutral.py). A test whose program is not built yet lists no command: build first."""

import json
import subprocess


def _props(test):
    return {p["name"]: p["value"] for p in test.get("properties", [])}


def ctests(build, label=None):
    """The tests of `build` (those ctest's `-L label` selects, a regular expression, when given).
    Raises CalledProcessError when ctest fails (no such build)."""
    cmd = ["ctest", "--test-dir", build, "-N", "--show-only=json-v1"]
    if label:
        cmd += ["-L", label]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    raw = json.loads(r.stdout)["tests"]
    setup = {}
    for t in raw:
        for fixture in _props(t).get("FIXTURES_SETUP", []):
            setup.setdefault(fixture, []).append(t["name"])
    out = []
    for t in raw:
        p = _props(t)
        words = list(t.get("command", []))
        words += [v.partition("=")[2] for v in p.get("ENVIRONMENT", [])]
        depends = list(p.get("DEPENDS", []))
        for fixture in p.get("FIXTURES_REQUIRED", []):
            depends += [s for s in setup.get(fixture, []) if s != t["name"]]
        out.append({"name": t["name"], "labels": list(p.get("LABELS", [])), "words": words,
                    "depends": sorted(set(depends)), "has_command": "command" in t,
                    "sets_up": bool(p.get("FIXTURES_SETUP"))})
    return out
