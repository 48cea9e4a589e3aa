"""Reading JSON and writing result files that never replace what is not theirs.

Standard library only: this is the repository's one writer for Python, used by ovb-analysis, the
suite driver (slurm/ovb_suite/util.py) and the reference scripts, so that a reader or a job killed
half-way sees the old file or the new one, never a torn one. The rules are core's
(core/include/ovb/output_file.hpp):
  "-", /dev/stdout: standard output (the one kept by stdout_for_results); /dev/stderr, /dev/fd/N,
    /proc/self/fd/N: that open descriptor, written at its position and left open;
  an existing device, FIFO, or a symbolic link to one: written through, never replaced;
  a symbolic link to a regular file: the file it leads to is replaced, the link kept;
  anything else: a temporary file .NAME.tmp.PID.N created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW)
    in the target's folder, fsynced and os.replace'd over the target; removed on any failure.
A folder, a socket or a symbolic link that leads nowhere is refused with one line."""

import contextlib
import json
import os
import re
import stat
import sys
from pathlib import Path

from .errors import AnalysisError


def load_json(path):
    """Parse a JSON file; a missing or malformed file raises AnalysisError naming it."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise AnalysisError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise AnalysisError(f"{path}: is a folder, expected a JSON file") from None
    except json.JSONDecodeError as e:
        raise AnalysisError(f"{path}: malformed JSON ({e.msg} at line {e.lineno} "
                            f"column {e.colno})") from None
    except UnicodeDecodeError:
        raise AnalysisError(f"{path}: not UTF-8 text") from None
    except OSError as e:
        raise AnalysisError(f"{path}: {e.strerror}") from None


def read_text(path):
    """The text of a file (undecodable bytes replaced); a missing file raises AnalysisError."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        raise AnalysisError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise AnalysisError(f"{path}: is a folder, expected a file") from None
    except OSError as e:
        raise AnalysisError(f"{path}: {e.strerror}") from None


def dumps_json(obj):
    """Stable JSON text: sorted keys, two-space indent, trailing newline, no NaN."""
    return json.dumps(obj, indent=2, sort_keys=True, allow_nan=False) + "\n"


_TEMP_TRIES = 100
_FD_NAME = re.compile(r"/(?:dev|proc/self)/fd/(\d{1,9})")
_results = None  # the stream "-" writes to while stdout_for_results is active


def is_stdout_name(path):
    """True for the names of standard output: "-" and /dev/stdout."""
    return isinstance(path, (str, os.PathLike)) and os.fspath(path) in ("-", "/dev/stdout")


@contextlib.contextmanager
def stdout_for_results(active=True):
    """While active, print() and other text to sys.stdout go to stderr and only a result written
    to "-" or /dev/stdout reaches standard output, which then stays parseable."""
    global _results
    if not active:
        yield
        return
    saved = _results
    _results = sys.stdout
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        _results = saved


def _write_stream(stream, data):
    stream.flush()
    if hasattr(stream, "buffer"):
        stream.buffer.write(data)
        stream.buffer.flush()
    else:
        stream.write(data.decode("utf-8"))
    stream.flush()


def _write_fd(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _target(path):
    """("stream", stream) | ("fd", n) | ("through", path) | ("replace", file) for `path`."""
    name = os.fspath(path)
    if is_stdout_name(name):
        return "stream", _results or sys.stdout
    if name == "/dev/stderr":
        return "stream", sys.stderr
    if m := _FD_NAME.fullmatch(name):
        fd = int(m.group(1))
        return ("stream", _results or sys.stdout) if fd == 1 else ("fd", fd)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "replace", path
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(path)
        except OSError as e:
            raise AnalysisError(f"cannot write {path}: a symbolic link that leads nowhere "
                                f"({e.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise AnalysisError(f"cannot write {path}: is a folder, not a file name")
    if stat.S_ISSOCK(st.st_mode):
        raise AnalysisError(f"cannot write {path}: is a socket, not a file name")
    if stat.S_ISREG(st.st_mode):
        return "replace", Path(os.path.realpath(path))
    return "through", path


def _create_temp(file):
    stem = file.parent / f".{file.name}.tmp.{os.getpid()}."
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for n in range(_TEMP_TRIES):
        try:
            return os.open(f"{stem}{n}", flags, 0o600), Path(f"{stem}{n}")
        except FileExistsError:
            continue
    raise FileExistsError(f"{_TEMP_TRIES} temporary names taken ({stem}N)")


def _replace(file, data, mode):
    fd, tmp = _create_temp(file)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(tmp, file)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write(path, data, mode=0o644):
    """Write bytes or text to `path` by the module's rules (a new or regular file: atomically,
    with permissions `mode`); returns `path`. A failure raises AnalysisError naming it."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        how, where = _target(path)
        if how == "stream":
            _write_stream(where, data)
        elif how == "fd":
            _write_fd(where, data)
        elif how == "through":
            fd = os.open(where, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
            try:
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    raise AnalysisError(f"cannot write {path}: changed while being opened")
                _write_fd(fd, data)
            finally:
                os.close(fd)
        else:
            _replace(where, data, mode)
    except OSError as e:
        raise AnalysisError(f"cannot write {path}: {e.strerror or e}") from None
    return path


def atomic_write_json(path, obj):
    """`obj` as stable JSON text (dumps_json), written atomically."""
    return atomic_write(path, dumps_json(obj))
