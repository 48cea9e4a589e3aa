"""Unit tests of ci/check_cuda_objects.py on made-up compile commands: objects outside the CUDA code
compiled with a CUDA switch or a CUDA include folder (-isystem, -I, joined or not) are reported by
name; the CUDA code itself (.cu, cuda/ folders, the tracing session) may use both; a build folder
without compile_commands.json is an error.

Run: python3 -m unittest discover -s ci/tests -v      (ctest: tree.layering_selftest)
"""

import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout, redirect_stderr

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import check_cuda_objects  # noqa: E402

CUDA_INC = "/usr/local/cuda/include"


def entry(path, flags):
    return {"file": path, "command": f"/usr/bin/c++ {flags} -o x.o -c {path}"}


class CheckCudaObjects(unittest.TestCase):
    def run_on(self, commands):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "compile_commands.json"), "w") as f:
                json.dump(commands, f)
            out = io.StringIO()
            with redirect_stdout(out):
                rc = check_cuda_objects.main(["check", d, CUDA_INC])
            return rc, out.getvalue()

    def test_clean_build_passes(self):
        rc, out = self.run_on([
            entry("/r/core/src/grid.cpp", "-I/r/core/include -DOMPI_SKIP_MPICXX=1"),
            entry("/r/core/src/cuda/entry.cpp", f"-DOVB_HAVE_CUDA=1 -isystem {CUDA_INC}"),
            entry("/r/endtoend/src/kernels/cuda/attention.cu", f"-DOVB_HAVE_CUDNN=1 -I{CUDA_INC}"),
            entry("/r/profiling/src/trace_session.cpp",
                  f"-DOVB_TRACE_HAVE_CUPTI=1 -isystem {CUDA_INC}"),
        ])
        self.assertEqual(rc, 0, out)
        self.assertIn("1 objects outside the CUDA code, 0 finding(s)", out)

    def test_switches_and_include_folders_outside_cuda_code_are_reported(self):
        rc, out = self.run_on([
            entry("/r/core/src/grid.cpp", "-DOVB_HAVE_CUDA=1"),
            entry("/r/endtoend/src/train/block.cpp", f"-isystem {CUDA_INC}"),
            entry("/r/endtoend/src/kernels/factory.cpp", f"-isystem{CUDA_INC}/"),
            entry("/r/profiling/src/host_timeline.cpp", f"-I {CUDA_INC} -DOVB_TRACE_HAVE_CUPTI=1"),
            entry("/r/microbench/gemm/ovb_gemm.cpp", "-I/usr/include -DOVB_HAVE_CUDNN"),
        ])
        self.assertEqual(rc, 1)
        self.assertIn("/r/core/src/grid.cpp: compiled with -DOVB_HAVE_CUDA=1", out)
        self.assertIn(f"/r/endtoend/src/train/block.cpp: sees the CUDA include folder {CUDA_INC}",
                      out)
        self.assertIn("/r/endtoend/src/kernels/factory.cpp: sees the CUDA include folder", out)
        self.assertIn("/r/profiling/src/host_timeline.cpp: sees the CUDA include folder", out)
        self.assertIn("/r/profiling/src/host_timeline.cpp: compiled with -DOVB_TRACE_HAVE_CUPTI=1",
                      out)
        self.assertIn("/r/microbench/gemm/ovb_gemm.cpp: compiled with -DOVB_HAVE_CUDNN", out)
        self.assertIn("5 objects outside the CUDA code, 6 finding(s)", out)

    def test_missing_build_folder_is_an_error(self):
        err = io.StringIO()
        with redirect_stderr(err):
            rc = check_cuda_objects.main(["check", "/nonexistent/build"])
        self.assertEqual(rc, 2)
        self.assertIn("cannot read /nonexistent/build/compile_commands.json", err.getvalue())


if __name__ == "__main__":
    unittest.main()
