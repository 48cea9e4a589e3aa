"""What every campaign summary returns, and the step table they all start with (from the suite
driver's .suite/status.json: results/SCHEMA.md)."""

import json
from dataclasses import dataclass, field
from pathlib import Path



def load_optional(path):
    """A run's JSON result, or None when it is missing or unreadable: a campaign's summary reports
    the runs it has and names what is absent, rather than stopping at the first gap."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None

@dataclass
class Summary:
    markdown: str                 # the body of summary.md (title and step table come first)
    doc: dict = None              # written as the kind's JSON_NAME, when it has one
    ok: bool = True               # False: a check of the campaign failed (exit status 1)
    problems: list = field(default_factory=list)  # one line per failed check


def steps_table(folder):
    """Markdown rows of the folder's steps (status, attempts, time, error), or a note."""
    path = Path(folder) / ".suite" / "status.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        rows = doc["steps"]
    except FileNotFoundError:
        return ["(no .suite/status.json: not an ovb-suite folder, no step table)"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        return [f"(.suite/status.json unreadable: {type(e).__name__}: {e})"]
    out = ["| step | status | attempts | time | error |", "|---|---|---|---|---|"]
    for r in rows:
        if r.get("group") == "report":
            continue  # the summary itself, running while it writes this
        dur = r.get("duration_s")
        err = " ".join(str(r.get("error") or "").split()).replace("|", "\\|")
        out.append(f"| {r.get('step')} | {r.get('status')} | {r.get('attempt', 0)} | "
                   f"{'' if dur is None else f'{dur:.0f} s'} | {err} |")
    return out


def last_log_line(folder, step):
    """The last line a step printed (e.g. nvidia-smi's GPU line), without the driver's lines."""
    path = Path(folder) / "logs" / f"{step}.txt"
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    own = [ln for ln in lines if ln.strip() and not ln.startswith("==== ovb-suite:")]
    return own[-1].strip() if own else None


def log_body(folder, step):
    """A step's output without the driver's header and footer lines ("" when there is none)."""
    path = Path(folder) / "logs" / f"{step}.txt"
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    start = max((i for i, ln in enumerate(lines) if ln.startswith("==== ovb-suite:")
                 and " attempt " in ln and " at " in ln), default=-1)
    return "\n".join(ln for ln in lines[start + 1:] if not ln.startswith("==== ovb-suite:"))
