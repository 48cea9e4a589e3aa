"""Unit tests of ci/check_backend_neutral.py on made-up test lists and build recipes: a labelled test
whose program is built differently (a link line with CUDA), made by one build only, compiled
against a configured header that differs between the builds, or handed a
folder holding such a program (the build's top), one that needs a test that is not neutral, one
the host build lacks or does not label, one whose command differs and a GPU test are each
reported; neutral tests (same recipes, scratch paths of their own, Python from the source tree)
pass, and unlabelled tests that would pass are listed as candidates.

Run: python3 -m unittest discover -s ci/tests -v      (ctest: tree.layering_selftest)
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import check_backend_neutral as cbn  # noqa: E402

C, H = "/r/build/cuda", "/r/build/host"
N = cbn.LABEL
MADE = {"cuda": {"model/ovb-model", "model/gen/m_pb2.py", "endtoend/gpt4d", "core/ovb-probe"},
        "host": {"model/ovb-model", "model/gen/m_pb2.py", "endtoend/gpt4d"}}
RECIPES = {"model/ovb-model": ["c++ -I<build>/core/generated -c model.cpp",
                               "c++ -o model/ovb-model"],
           "model/gen/m_pb2.py": ["protoc --python_out=<build>/model/gen m.proto"],
           "endtoend/gpt4d": ["c++ -c gpt4d.cpp", "c++ -o endtoend/gpt4d"]}


def recipe(which, rel):
    steps = list(RECIPES.get(rel, ["nvcc -c probe.cu"]))
    if which == "cuda" and rel == "endtoend/gpt4d":
        steps[1] += " -lcudart"
    return sorted(steps)


def test(name, words, labels=(N,), depends=(), build=C):
    words = [w.replace("{B}", build) for w in words]
    return {"name": name, "labels": list(labels), "words": words, "depends": list(depends),
            "has_command": True, "sets_up": False}


def run(cuda, host=None, configured=()):
    """check() on the tests; configured: files of core/generated that differ between builds."""
    if host is None:
        host = [dict(t, words=[w.replace(C, H) for w in t["words"]]) for t in cuda]
    return cbn.check(cuda, host, C, H, MADE, recipe,
                     lambda d: list(configured) if d == "core/generated" else [])


MODEL = test("model.cli", ["/bin/bash", "/r/model/cli.sh", "{B}/model/ovb-model",
                           "{B}/model/tests/cli"])
PY = test("tree.lint", ["/r/.venv/bin/python", "/r/ci/lint.py", "/r"])


class CheckBackendNeutral(unittest.TestCase):
    def test_neutral_tests_pass(self):
        chakra = test("model.chakra", ["/usr/bin/python3", "/r/decode.py", "{B}/model/gen",
                                       "--out={B}/model/tests/chakra"])
        self.assertEqual(run([MODEL, PY, chakra]), ([], []))

    def test_program_built_differently(self):
        got, _ = run([test("gpt4d.parity", ["/r/parity.py", "{B}/endtoend/gpt4d"])])
        self.assertEqual(len(got), 1)
        self.assertIn("gpt4d.parity: names endtoend/gpt4d, and endtoend/gpt4d is built "
                      "differently in the two builds (the cuda build runs: c++ -o endtoend/gpt4d "
                      "-lcudart)", got[0])

    def test_program_of_one_build_only(self):
        got, _ = run([test("probe", ["{B}/core/ovb-probe"])])
        self.assertEqual(got, ["probe: names core/ovb-probe, and only the cuda build makes "
                               "core/ovb-probe"])

    def test_build_folder_is_never_neutral(self):
        got, _ = run([test("pipeline", ["/r/pipeline.sh", "/r", "{B}"])])
        self.assertEqual(len(got), 1)
        self.assertIn("pipeline: names the build folder, and only the cuda build makes the "
                      "build folder's core/ovb-probe",
                      got[0])
        got, _ = run([test("end", ["/r/x.sh", "{B}/endtoend"])])
        self.assertIn("end: names endtoend, and the build folder's endtoend/gpt4d is built "
                      "differently", got[0])

    def test_configured_header_differs(self):
        got, _ = run([MODEL], configured=["ovb/build_info.hpp"])
        self.assertEqual(got, ["model.cli: names model/ovb-model, whose compiles read "
                               "core/generated/ovb/build_info.hpp, which differs between the "
                               "builds (a configured file)"])

    def test_needs_a_test_that_is_not_neutral(self):
        run_test = test("mb.run", ["{B}/endtoend/gpt4d", "--out", "{B}/r.json"], labels=())
        check = test("mb.json", ["/r/check.py", "{B}/r.json"], depends=["mb.run"])
        got, _ = run([run_test, check])
        self.assertEqual(got, ["mb.json: needs test mb.run, which is not backend-neutral (it "
                               "may read what a backend-dependent program wrote)"])

    def test_host_build_lacks_or_does_not_label_it(self):
        got, _ = run([MODEL], host=[])
        self.assertEqual(got, ["model.cli: the host build has no such test (the host pass "
                               "would not run it)"])
        host = [dict(MODEL, labels=[], words=[w.replace(C, H) for w in MODEL["words"]])]
        got, _ = run([MODEL], host=host)
        self.assertEqual(got, [f"model.cli: not labelled {N} in the host build"])

    def test_command_differs(self):
        host = [dict(MODEL, words=[w.replace(C, H) for w in MODEL["words"]] + ["--cuda"])]
        got, _ = run([MODEL], host=host)
        self.assertEqual(got, ["model.cli: its command differs between the builds"])

    def test_gpu_and_unbuilt_tests(self):
        got, _ = run([test("g", ["{B}/model/ovb-model"], labels=(N, "gpu"))])
        self.assertEqual(got, ["g: a GPU test is never backend-neutral"])
        got, _ = run([dict(MODEL, has_command=False)])
        self.assertEqual(got, ["model.cli: its program is not built in both builds (build both "
                               "first)"])

    def test_unlabelled_candidates(self):
        plain = dict(MODEL, labels=["smoke"])
        gpt = test("gpt4d.smoke", ["{B}/endtoend/gpt4d"], labels=["smoke"])
        clean = dict(test("p.clean", ["/usr/bin/cmake", "-E", "rm", "-rf", "{B}/p"], labels=()),
                     sets_up=True)
        self.assertEqual(run([plain, gpt, clean]), ([], ["model.cli"]))

    def test_named_files(self):
        self.assertEqual(cbn.named_files(["x", C, C + "/a/b", "--out=" + C + "/c",
                                          "text:" + C + "/d", C + "x/e"], C),
                         ["", "a/b", "c", "d"])


if __name__ == "__main__":
    unittest.main()
