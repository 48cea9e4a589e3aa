"""slurm/lib/pack.sh: the results folder of a one-call GPU script kept as one current archive
(OVB_PACK): whole at a normal exit, current to within OVB_PACK_EVERY_S when the call is cut off,
never containing itself, nothing without OVB_PACK, and a failing tar never stops a `set -e`
script. Run: python3 -m unittest discover -s slurm/tests -p test_pack.py"""

import os
import subprocess
import tarfile
import tempfile
import time
import unittest

PACK = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "lib",
                    "pack.sh")


def script(body):
    return f"set -euo pipefail\nsource {PACK}\nout=$1\nmkdir -p \"$out\"\n{body}\n"


def names(archive):
    with tarfile.open(archive) as t:
        return sorted(os.path.basename(n) for n in t.getnames() if n not in (".", "./"))


class Pack(unittest.TestCase):
    def test_normal_exit_packs_everything_but_itself(self):
        d = tempfile.mkdtemp(prefix="pack-")
        out = os.path.join(d, "out")
        body = 'pack_start "$out"; echo a > "$out/a"; mkdir "$out/s"; echo b > "$out/s/b"'
        r = subprocess.run(["bash", "-c", script(body), "t", out],
                           env=dict(os.environ, OVB_PACK=os.path.join(out, "all.tgz")),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(names(os.path.join(out, "all.tgz")), ["a", "b", "s"])
        self.assertEqual(sorted(os.listdir(out)), ["a", "all.tgz", "s"])  # no part file left

    def test_cut_off_call_leaves_a_recent_archive(self):
        d = tempfile.mkdtemp(prefix="pack-")
        archive = os.path.join(d, "keep", "all.tgz")
        out = os.path.join(d, "out")
        body = 'pack_start "$out"; echo a > "$out/a"; sleep 2.5; echo b > "$out/b"; sleep 60'
        r = subprocess.run(["timeout", "5", "bash", "-c", script(body), "t", out],
                           env=dict(os.environ, OVB_PACK=archive, OVB_PACK_EVERY_S="1"),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 124)
        self.assertEqual(names(archive), ["a", "b"])
        self.assertEqual([f for f in os.listdir(os.path.dirname(archive))], ["all.tgz"])
        # The loop ended with the script: after a pack in flight at the cut-off (if any) has
        # landed, the archive is not rewritten any more.
        time.sleep(1.5)
        before = os.stat(archive).st_mtime_ns
        time.sleep(2.5)
        self.assertEqual(os.stat(archive).st_mtime_ns, before)

    def test_without_ovb_pack_nothing(self):
        env = {k: v for k, v in os.environ.items() if k != "OVB_PACK"}
        d = tempfile.mkdtemp(prefix="pack-")
        out = os.path.join(d, "out")
        r = subprocess.run(["bash", "-c", script('pack_start "$out"; echo a > "$out/a"'), "t", out],
                           env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.listdir(out), ["a"])

    def test_a_failing_tar_does_not_stop_the_script(self):
        d = tempfile.mkdtemp(prefix="pack-")
        out = os.path.join(d, "out")
        # The archive's folder cannot be written: every pack fails, the script goes on.
        r = subprocess.run(["bash", "-c", script('pack_start "$out"; echo done'), "t", out],
                           env=dict(os.environ, OVB_PACK="/proc/no-such/all.tgz"),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("done", r.stdout)


if __name__ == "__main__":
    unittest.main()
