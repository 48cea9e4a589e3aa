"""Steps of a suite run (slurm/ovb-suite) that did not finish, for the report's problem list.

The suite driver keeps its state in RESULTS_DIR/.suite/status.json ({"steps": [{"step", "group",
"status", "error", ...}]}); a step that failed or never ran has no result file, so without this the
report could only show its absence. A folder without that file (results from elsewhere) has no
such list; an unreadable one is reported as such, never fatal.
"""

import json
from pathlib import Path

STATUS_FILE = Path(".suite") / "status.json"
# Statuses of steps that are done: "unfit" (ran; its configuration does not fit in memory) and
# "skipped" (a conditional step that was not needed) are outcomes, not problems.
DONE = ("finished", "unfit", "skipped")


def unfinished_steps(results_dir):
    """[(step, group, status, error)] of the steps not done, in suite order; the report step
    itself (running while it writes this) is left out."""
    path = Path(results_dir) / STATUS_FILE
    if not path.is_file():
        return []
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        steps = doc["steps"]
        rows = [(str(s["step"]), str(s.get("group", "")), str(s["status"]),
                 " ".join(str(s.get("error") or "").split())) for s in steps]
    except (OSError, ValueError, KeyError, TypeError) as e:
        return [(str(STATUS_FILE), "", "unreadable", f"{type(e).__name__}: {e}")]
    return [r for r in rows if r[2] not in DONE and r[1] != "report"]
