"""Reading JSON and writing files atomically (temporary file in the same folder + os.replace).

Standard library only: this is the repository's one atomic writer for Python, used by ovb-analysis
and by the suite driver (slurm/ovb_suite/util.py), so that a reader or a job killed half-way sees
the old file or the new one, never a torn one."""

import json
import os
import tempfile
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


def atomic_write(path, data, mode=0o644):
    """Write bytes or text to `path` via a temporary file in the same folder and os.replace."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise AnalysisError(f"cannot write {path}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise AnalysisError(f"cannot write {path}: {e.strerror or e}") from None
        raise
    return path


def atomic_write_json(path, obj):
    """`obj` as stable JSON text (dumps_json), written atomically."""
    return atomic_write(path, dumps_json(obj))
