"""Unit tests of ci/check_cuda_links.py on made-up ldd and nm output: a program without CUDA code
that maps a CUDA library (by soname, resolved or not) or contains a CUDA function is reported by
name; the suite's own C++ symbols (ovb::cuda::..., mangled) are not CUDA functions; a program with
CUDA code that links no CUDA library, or lacks the CUDA backend's hooks, is reported too; a program
that does not exist is an error.

Run: python3 -m unittest discover -s ci/tests -v      (ctest: tree.layering_selftest)
"""

import io
import os
import sys
import unittest
from contextlib import redirect_stderr

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import check_cuda_links  # noqa: E402

LDD_HOST = """\
\tlinux-vdso.so.1 (0x00007ffd)
\tlibmpi.so.40 => /lib/x86_64-linux-gnu/libmpi.so.40 (0x00007f1)
\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f2)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f3)
"""
LDD_CUDA = LDD_HOST + """\
\tlibcudart.so.13 => /usr/local/cuda/lib/libcudart.so.13 (0x00007f4)
\tlibnccl.so.2 => not found
"""
NM_HOST = """\
_ZN3ovb10cuda_entry5builtEv T 0000000000401000 0000000000000010
_ZN3ovb4cuda19visible_device_countEv U
main T 0000000000400000 0000000000000020
MPI_Init U
"""
NM_CUDA = NM_HOST + """\
cudaGetDeviceCount@libcudart.so.13 U
ncclCommInitRank U
"""
NM_BACKEND = NM_CUDA + "_ZN3ovb4cuda13backend_hooksE D 000000000132d320 0000000000000038\n"


def check(host, cuda, ldd, nm):
    return check_cuda_links.findings(host, cuda, ldd=lambda p: ldd[p], nm=lambda p: nm[p])


class CheckCudaLinks(unittest.TestCase):
    def test_clean_build_passes(self):
        out = check(["ovb-model"], ["gpt4d"], {"ovb-model": LDD_HOST, "gpt4d": LDD_CUDA},
                    {"ovb-model": NM_HOST, "gpt4d": NM_BACKEND})
        self.assertEqual(out, [])

    def test_cuda_library_in_an_analysis_program_is_reported(self):
        out = check(["bin/ovb-trace"], ["gpt4d"], {"bin/ovb-trace": LDD_CUDA, "gpt4d": LDD_CUDA},
                    {"bin/ovb-trace": NM_HOST, "gpt4d": NM_BACKEND})
        self.assertEqual(out, [
            "ovb-trace: links libcudart.so.13 (/usr/local/cuda/lib/libcudart.so.13), but runs "
            "no CUDA code",
            "ovb-trace: links libnccl.so.2 (not found), but runs no CUDA code",
        ])

    def test_static_cuda_code_is_reported(self):
        out = check(["ovb-model"], ["gpt4d"], {"ovb-model": LDD_HOST, "gpt4d": LDD_CUDA},
                    {"ovb-model": NM_CUDA, "gpt4d": NM_BACKEND})
        self.assertEqual(len(out), 1)
        self.assertIn("ovb-model: contains 2 CUDA function(s) (cudaGetDeviceCount, "
                      "ncclCommInitRank)", out[0])

    def test_cuda_program_without_cuda_is_reported(self):
        out = check(["ovb-model"], ["gpt4d"], {"ovb-model": LDD_HOST, "gpt4d": LDD_HOST},
                    {"ovb-model": NM_HOST, "gpt4d": NM_BACKEND})
        self.assertEqual(out, ["gpt4d: links no CUDA library, but runs CUDA code (or ldd's "
                               "output could not be read)"])

    def test_cuda_program_without_the_backend_hooks_is_reported(self):
        # CUDA's libraries but not the backend's entry: it would run on the host backend.
        out = check(["ovb-model"], ["gpt4d"], {"ovb-model": LDD_HOST, "gpt4d": LDD_CUDA},
                    {"ovb-model": NM_HOST, "gpt4d": NM_CUDA})
        self.assertEqual(out, ["gpt4d: lacks the CUDA backend's hooks (ovb::cuda::backend_hooks): "
                               "link ovb::cuda_backend, which links the backend whole"])

    def test_bad_usage(self):
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertEqual(check_cuda_links.main(["check", "--host", "/nonexistent/ovb-model",
                                                    "--cuda", "/nonexistent/gpt4d"]), 2)
            self.assertEqual(check_cuda_links.main(["check", "ovb-model"]), 2)
            self.assertEqual(check_cuda_links.main(["check", "--host", "x"]), 2)
        self.assertIn("no such program: /nonexistent/ovb-model, /nonexistent/gpt4d",
                      err.getvalue())


if __name__ == "__main__":
    unittest.main()
