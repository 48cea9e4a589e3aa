"""io_util's writer never replaces what is not its own: "-" is standard output (and keeps it
clean), devices, FIFOs and links to them are written through, planted temporary names are neither
followed nor truncated, a failed write leaves the old file and no temporary one."""

import json
import os
import socket
import stat

import pytest

from ovb_analysis import io_util
from ovb_analysis.errors import AnalysisError


def temporaries(folder):
    return sorted(p.name for p in folder.iterdir() if ".tmp." in p.name)


def test_dash_is_standard_output_and_keeps_it_for_the_result(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a writer taking "-" for a file name would leave it here
    with io_util.stdout_for_results(True):
        print("a table for people")
        io_util.atomic_write_json("-", {"a": 1})
    out, err = capsys.readouterr()
    assert json.loads(out) == {"a": 1}
    assert err == "a table for people\n"
    io_util.atomic_write("/dev/stdout", "x\n")
    assert capsys.readouterr().out == "x\n"
    assert list(tmp_path.iterdir()) == []


def test_cli_json_dash_prints_only_the_json(cli):
    rc, out, err = cli("ab", "--a", "true", "--b", "true", "--pairs", "5", "--json", "-")
    assert rc == 0, err
    assert json.loads(out)["pairs"] == 5
    assert "B/A per pair" in err


def test_fifo_is_written_through(tmp_path):
    # The reader end is open first (as with `--json >(jq .)`), so the writer never waits; a FIFO
    # replaced by a file would leave it empty.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        io_util.atomic_write(fifo, "through the pipe\n")
        got = os.read(fd, 4096)
    finally:
        os.close(fd)
    assert got == b"through the pipe\n"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert temporaries(tmp_path) == []


def test_link_to_a_device_keeps_link_and_device(tmp_path):
    # /dev/null itself only as a user: as root a regression would replace the machine's /dev/null.
    dev = "/dev/null"
    if os.geteuid() == 0:
        dev = tmp_path / "null"
        try:
            os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("root without CAP_MKNOD: no device to write to")
        io_util.atomic_write(dev, "gone")
    else:
        io_util.atomic_write(dev, "gone")
    assert stat.S_ISCHR(os.stat(dev).st_mode)
    link = tmp_path / "to-null"
    link.symlink_to(dev)
    io_util.atomic_write_json(link, {"a": 1})
    assert link.is_symlink() and os.readlink(link) == str(dev)
    assert stat.S_ISCHR(os.stat(dev).st_mode)
    assert temporaries(tmp_path) == []


def test_link_to_a_regular_file_replaces_the_file_keeps_the_link(tmp_path):
    (tmp_path / "real.json").write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to("real.json")
    io_util.atomic_write(link, "new")
    assert link.is_symlink() and (tmp_path / "real.json").read_text() == "new"
    assert temporaries(tmp_path) == []


def test_planted_temporary_names_are_neither_followed_nor_truncated(tmp_path):
    target, victim = tmp_path / "r.txt", tmp_path / "victim"
    target.write_text("old")
    victim.write_text("precious")
    stem = f".r.txt.tmp.{os.getpid()}."
    (tmp_path / f"{stem}0").symlink_to(victim)
    (tmp_path / f"{stem}1").symlink_to(tmp_path / "created")
    (tmp_path / f"{stem}2").write_text("planted")
    io_util.atomic_write(target, "new", mode=0o640)
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert victim.read_text() == "precious"
    assert not os.path.lexists(tmp_path / "created")
    assert (tmp_path / f"{stem}2").read_text() == "planted"
    assert temporaries(tmp_path) == [f"{stem}0", f"{stem}1", f"{stem}2"]


def test_replaced_not_rewritten_in_place(tmp_path):
    p = tmp_path / "r.json"
    p.write_text("old")
    with open(p) as reader:
        io_util.atomic_write(p, "new content")
        assert reader.read() == "old"
    assert p.read_text() == "new content"


def test_failure_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    p = tmp_path / "r.json"
    p.write_text("old")

    def fail(*_):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(AnalysisError, match=r"^cannot write .*r\.json: No space left on device$"):
        io_util.atomic_write(p, "new")
    assert p.read_text() == "old"
    assert temporaries(tmp_path) == []


def test_folder_socket_and_dangling_link_are_refused_in_one_line(tmp_path):
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "nowhere")
    sock = tmp_path / "sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock))
    try:
        for p in (tmp_path, link, sock):
            with pytest.raises(AnalysisError, match=r"^cannot write ") as e:
                io_util.atomic_write(p, "x")
            assert str(p) in str(e.value) and "\n" not in str(e.value)
    finally:
        s.close()
    assert link.is_symlink() and not os.path.lexists(tmp_path / "nowhere")
    assert temporaries(tmp_path) == []

