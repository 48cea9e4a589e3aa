"""Unit tests of ci/check_layering.py on small made-up trees: a clean tree passes; an include from a
lower part into a higher one, an include between two parts of one level, a kernel including the
trainer, a cycle between modules, two headers of one name and a Python import upwards are each
reported with the file and line.

Run: python3 -m unittest discover -s ci/tests -v      (ctest: tree.layering_selftest)
"""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import check_layering  # noqa: E402


class CheckLayering(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="layering-test-")
        self.root = self.tmp.name
        self.write("core/include/ovb/error.hpp", "#pragma once\n")
        self.write("core/src/error.cpp", '#include "ovb/error.hpp"\n')
        self.write("profiling/src/trace_writer.hpp", '#include "ovb/error.hpp"\n')
        self.write("endtoend/src/kernels/kernels.hpp", '#include "ovb/error.hpp"\n')
        self.write("endtoend/src/train/trainer.hpp", '#include "kernels/kernels.hpp"\n')

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)

    def test_a_clean_tree_passes(self):
        self.assertEqual(check_layering.check(self.root), [])

    def test_an_include_upwards_is_reported(self):
        self.write("core/src/grid.cpp", '#include "ovb/error.hpp"\n#include "trace_writer.hpp"\n')
        self.assertEqual(check_layering.check(self.root),
                         ["core/src/grid.cpp:2: core includes profiling/src/trace_writer.hpp of "
                          "profiling, a part of the same or a higher level"])

    def test_an_include_between_parts_of_one_level_is_reported(self):
        self.write("analysis/model/src/x.cpp", '#include "trace_writer.hpp"\n')
        [p] = check_layering.check(self.root)
        self.assertIn("analysis/model/src/x.cpp:1: analysis includes", p)

    def test_a_kernel_including_the_trainer_is_reported(self):
        self.write("endtoend/src/kernels/kernels.hpp", '#include "train/trainer.hpp"\n')
        problems = check_layering.check(self.root)
        self.assertIn("endtoend/src/kernels/kernels.hpp:1: endtoend/src/kernels includes "
                      "endtoend/src/train/trainer.hpp, of the same or a higher layer", problems)
        self.assertIn("include cycle between modules: endtoend/src/kernels/kernels -> "
                      "endtoend/src/train/trainer", problems)

    def test_a_cycle_through_a_source_is_reported(self):
        self.write("core/include/ovb/a.hpp", "#pragma once\n")
        self.write("core/include/ovb/b.hpp", '#include "ovb/a.hpp"\n')
        self.write("core/include/ovb/a.cpp", '#include "ovb/b.hpp"\n')  # a's source needs b
        self.assertEqual(check_layering.check(self.root),
                         ["include cycle between modules: core/include/ovb/a -> core/include/ovb/b"])

    def test_two_headers_of_one_name_are_reported(self):
        self.write("endtoend/src/io/trace_writer.hpp", "#pragma once\n")
        problems = check_layering.check(self.root)
        self.assertIn("one file name, several files: endtoend/src/io/trace_writer.hpp, "
                      "profiling/src/trace_writer.hpp", problems)

    def test_an_unknown_include_is_reported(self):
        self.write("core/src/x.cpp", '#include "ovb/nothing.hpp"\n')
        self.assertEqual(check_layering.check(self.root),
                         ['core/src/x.cpp:1: #include "ovb/nothing.hpp" names no file of the tree'])

    def test_a_python_import_upwards_is_reported(self):
        self.write("analysis/ovb_analysis/x.py", "import json\nfrom ovb_suite import emit\n")
        self.assertEqual(check_layering.check(self.root),
                         ["analysis/ovb_analysis/x.py:2: analysis imports ovb_suite of slurm, a "
                          "part of the same or a higher level"])


if __name__ == "__main__":
    unittest.main()
