"""The driver's state inside a results folder (every file written atomically):

  DIR/.suite/suite.json          how the folder was started (preset, backend, ranks, build) and the
                                 jobs that worked on it; a rerun must match it
  DIR/.suite/state/STEP.json     one record per step: status running|finished|failed|interrupted
                                 (|unfit|skipped, campaign presets: suite.py),
                                 attempt count, times, exit status or signal, error, log tail
  DIR/.suite/status.json         all steps' records in suite order (what `ovb-suite status` shows)
  DIR/.suite/tmp/STEP/           the running step's outputs before they are moved into place
  DIR/.suite/partial/STEP.N/     what an interrupted or failed attempt N left behind
  DIR/logs/STEP.txt              the step's output (every attempt appended, with a header line)
  DIR/suite-status.md            the same table for people

A step is finished only when its record says so; the record is written after its outputs were moved
into the results folder, so a job killed at any moment leaves either a finished step with all its
results or an unfinished one that the next run redoes. The folder starts with a dot so that the
report (analysis/ovb-analysis report DIR) does not read it as results.
"""

import os

from .util import atomic_write_json, atomic_write_text, iso, now, read_json, SuiteError

FINISHED, FAILED, INTERRUPTED, RUNNING = "finished", "failed", "interrupted", "running"
# "unfit": the step ran and its configuration does not fit in memory (a result, not a failure);
# "skipped": a conditional step that was not needed. Both count as done.
UNFIT, SKIPPED = "unfit", "skipped"
DONE = (FINISHED, UNFIT, SKIPPED)


class ResultsFolder:
    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.meta = os.path.join(self.root, ".suite")

    def state_path(self, name):
        return os.path.join(self.meta, "state", name + ".json")

    def tmp_dir(self, name):
        return os.path.join(self.meta, "tmp", name)

    def partial_dir(self, name, attempt):
        return os.path.join(self.meta, "partial", f"{name}.{attempt}")

    def log_rel(self, name):
        return os.path.join("logs", name + ".txt")

    def log_path(self, name):
        return os.path.join(self.root, self.log_rel(name))

    def suite_path(self):
        return os.path.join(self.meta, "suite.json")

    def read_state(self, name):
        """The step's record, or None when it never started. A record that cannot be read counts as
        never started (the step is redone), with a note in the record that replaces it."""
        path = self.state_path(name)
        if not os.path.exists(path):
            return None
        try:
            rec = read_json(path)
        except SuiteError:
            return None
        return rec if isinstance(rec, dict) and rec.get("status") else None

    def write_state(self, name, rec):
        atomic_write_json(self.state_path(name), rec)

    def read_suite(self):
        path = self.suite_path()
        return read_json(path) if os.path.exists(path) else None

    def write_suite(self, doc):
        atomic_write_json(self.suite_path(), doc)

    def recorded_steps(self):
        folder = os.path.join(self.meta, "state")
        names = [n[:-5] for n in os.listdir(folder) if n.endswith(".json")] \
            if os.path.isdir(folder) else []
        return sorted(names)

    def write_status(self, steps, suite_doc, deferred=None):
        """status.json and suite-status.md: every step of this suite with its current record, then
        those of other runs into the same folder (ovb-suite exec, --only, a steps file). Steps in
        `deferred` (name -> why) were left for the next call: shown pending with that reason."""
        rows = []
        deferred = deferred or {}
        for s in steps:
            rec = self.read_state(s.name) or {"status": "pending"}
            if s.missing and rec["status"] == "pending":
                rec = {"status": "pending", "error": s.missing}
            if s.name in deferred:
                rec = {"status": "pending", "error": deferred[s.name],
                       "previous": rec.get("status")}
            rows.append(dict(rec, step=s.name, group=s.group))
        listed = {s.name for s in steps}
        others = [r for r in (self.read_state(n) for n in self.recorded_steps() if n not in listed)
                  if r]
        rows += sorted(others, key=lambda r: (r.get("started_epoch", 0), r.get("step", "")))
        counts = {}
        for r in rows:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        doc = {"suite": suite_doc, "updated_at": iso(now()), "counts": counts, "steps": rows}
        atomic_write_json(os.path.join(self.meta, "status.json"), doc)
        atomic_write_text(os.path.join(self.root, "suite-status.md"), status_markdown(doc))
        return doc


def status_markdown(doc):
    s = doc["suite"] or {}
    setup = ", ".join(f"{k} `{s[k]}`" for k in ("preset", "backend", "ranks", "build")
                      if s.get(k) is not None)
    lines = ["# OverlapBench suite status", "",
             f"{setup + '; ' if setup else ''}updated {doc['updated_at']}.", "",
             "| step | status | attempts | time (s) | error |", "|---|---|---|---|---|"]
    for r in doc["steps"]:
        dur = r.get("duration_s")
        err = (r.get("error") or "").replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r['step']} | {r['status']} | {r.get('attempt', 0)} | "
                     f"{'' if dur is None else f'{dur:.1f}'} | {err} |")
    counts = ", ".join(f"{v} {k}" for k, v in sorted(doc["counts"].items()))
    lines += ["", f"Totals: {counts}. Logs: `logs/STEP.txt`; records: `.suite/state/STEP.json`.", ""]
    return "\n".join(lines)
