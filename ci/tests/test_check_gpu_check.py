"""Unit tests of ci/check_gpu_check.py on a made-up dry run and ctest label list: a GPU test
without a step, a step that is no GPU test, steps out of ctest's order, a -R that selects another
test too, a program or library a test loads that no target makes, a step's program missing from
the build line, a step without its limit and a configure line with several architectures are
each reported; the consistent dry run passes.

Run: python3 -m unittest discover -s ci/tests -v      (ctest: tree.layering_selftest)
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import check_gpu_check  # noqa: E402

B = "/b"
TESTS = [("p.clean", ["/usr/bin/cmake", "-E", "rm", "-rf", "/b/p/out"]),
         ("p.run", ["/b/core/ovb-gpu-probe", "/b/ovb-inject-sample", "8", "/b/libovb-inject.so"]),
         ("p.run2", ["/b/core/ovb-gpu-probe", "/b/endtoend/gpt4d"])]
OUTPUTS = {"ovb-gpu-probe": ["core/ovb-gpu-probe"], "ovb-inject-sample": ["ovb-inject-sample"],
           "ovb-inject": ["libovb-inject.so"], "gpt4d": ["endtoend/gpt4d"]}
MADE = {f for files in OUTPUTS.values() for f in files}


def dry_run(targets=("ovb-gpu-probe", "ovb-inject-sample", "ovb-inject", "gpt4d"),
            tests=("p.clean", "p.run", "p.run2"), arch="90", rx=None, limit="  [limit 60 s]",
            extra=""):
    lines = [f"configure: cmake --preset cuda -B /b -DCMAKE_CUDA_ARCHITECTURES={arch}",
             "build: cmake --build /b -j 16 --target " + " ".join(targets)]
    for t in tests:
        sel = (rx or {}).get(t, "^" + t.replace(".", "\\.") + "$")
        lines += [f"ctest-{t} (ctest){limit}",
                  f"    ctest --test-dir /b -R '{sel}' -FA '.*' --output-junit x.xml"]
    lines += [f"memory-default (memory){extra}{limit}", "    /b/endtoend/gpt4d --backend cuda"]
    return check_gpu_check.parse_dry_run("\n".join(lines))


def problems(dry):
    return check_gpu_check.check(dry, TESTS, B, lambda t: OUTPUTS.get(t, []),
                                 lambda rel: rel in MADE)


class CheckGpuCheck(unittest.TestCase):
    def test_consistent_dry_run_passes(self):
        self.assertEqual(problems(dry_run()), [])

    def test_gpu_test_without_a_step(self):
        got = problems(dry_run(tests=("p.clean", "p.run")))
        self.assertIn("GPU-labelled ctest p.run2 has no step", got)

    def test_step_that_is_no_gpu_test_and_order(self):
        self.assertIn("step ctest-other is not a GPU-labelled ctest",
                      problems(dry_run(tests=("p.clean", "p.run", "p.run2", "other"))))
        self.assertEqual(problems(dry_run(tests=("p.run", "p.clean", "p.run2"))),
                         ["the ctest steps are not in ctest's order (fixtures run out of order)"])

    def test_selection_of_more_than_one_test(self):
        got = problems(dry_run(rx={"p.run": "^p.run"}))
        self.assertIn("ctest-p.run: -R '^p.run' does not select exactly p.run", got)

    def test_library_a_test_loads_without_its_target(self):
        got = problems(dry_run(targets=("ovb-gpu-probe", "ovb-inject-sample", "gpt4d")))
        self.assertEqual(got, ["ctest p.run needs libovb-inject.so, which no target on the build "
                               "line makes"])

    def test_unknown_target_and_no_target_list(self):
        got = problems(dry_run(targets=("ovb-gpu-probe", "ovb-inject-sample", "ovb-inject",
                                        "gpt4d", "nonesuch")))
        self.assertEqual(got, ["build line: nonesuch is not a target of /b"])
        self.assertIn("build line: no --target list (the whole build would be built)",
                      problems(dry_run(targets=())))

    def test_step_program_not_built_by_the_list(self):
        got = problems(dry_run(extra="  [cannot run: ovb-gemm not built (not found in /b)]"))
        self.assertIn("step memory-default runs ovb-gemm, which is not on the build line", got)
        got = problems(dry_run(targets=("ovb-gpu-probe", "ovb-inject-sample", "ovb-inject")))
        self.assertIn("step memory-default runs /b/endtoend/gpt4d, which no target on the build "
                      "line makes", got)

    def test_limit_and_architecture(self):
        self.assertIn("step memory-default: no time limit shown", problems(dry_run(limit="")))
        self.assertEqual(problems(dry_run(arch="80;90")),
                         ["configure line: expected one CUDA architecture, got ['80;90']"])


if __name__ == "__main__":
    unittest.main()
