"""The driver's file writes (ovb_suite.util) follow the repository's one writer
(analysis/ovb_analysis/io_util.py): a FIFO is written through, never replaced, and a target that
cannot take a file is a one-line SuiteError.

Run: python3 -m unittest discover -s slurm/tests -v      (ctest: slurm_driver_unit)
"""

import json
import os
import stat
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from ovb_suite.util import SuiteError, atomic_write_json, atomic_write_text  # noqa: E402


class UtilWrites(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="ovb-suite-io-test-")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_fifo_is_written_through(self):
        fifo = os.path.join(self.dir, "status.json")
        os.mkfifo(fifo)
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            atomic_write_json(fifo, {"a": 1})
            self.assertEqual(json.loads(os.read(fd, 4096)), {"a": 1})
        finally:
            os.close(fd)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        self.assertEqual(os.listdir(self.dir), ["status.json"])

    def test_folder_is_one_line_suite_error(self):
        with self.assertRaisesRegex(SuiteError, r"^cannot write .*: is a folder, not a file name$"):
            atomic_write_text(self.dir, "x")


if __name__ == "__main__":
    unittest.main()
