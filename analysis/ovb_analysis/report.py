"""`ovb-analysis report RESULTS_DIR`: every plot, the key-number tables and the run context of a
results folder, as one self-contained HTML page (PNGs embedded) and a Markdown summary.

Deterministic: files are read in sorted order, figures carry no dates, and the page has no time
stamps except the dates read from the result files. Plots that cannot be made, files that could
not be read and suite steps that did not finish (slurm/ovb-suite's .suite/status.json) are listed
with the reason.
"""

import os
from dataclasses import dataclass, field
from pathlib import Path

from . import render, results, suite_status, tables
from .errors import AnalysisError
from .plots import NoData, Options, kinds


@dataclass
class Report:
    name: str
    outputs: list = field(default_factory=list)   # plots.Output
    missing: list = field(default_factory=list)   # (kind, title, reason)
    failed: list = field(default_factory=list)    # (file, reason)
    steps: list = field(default_factory=list)     # (step, group, status, error) not finished
    warnings: list = field(default_factory=list)
    tables: list = field(default_factory=list)


def make_plots(rs, outdir, options, only=None):
    """(outputs, missing) for every plot kind (or only the kinds named)."""
    outputs, missing = [], []
    for name, module in kinds().items():
        if only is not None and name not in only:
            continue
        try:
            outputs.extend(module.make(rs, outdir, options))
        except (NoData, AnalysisError) as e:
            missing.append((name, module.TITLE, str(e)))
        except Exception as e:  # noqa: BLE001  one broken plot must not cost the whole report
            if os.environ.get("OVB_ANALYSIS_DEBUG"):
                raise
            missing.append((name, module.TITLE, f"unexpected data ({type(e).__name__}: {e})"))
    return outputs, missing


def _remove_stale_figures(outdir, written):
    """A figure of an earlier report that this one did not make (its data is gone, or the plot
    failed) would sit in the folder looking current: PNG and PDF files not written now go."""
    keep = {Path(p).resolve() for p in written}
    for p in list(outdir.glob("*.png")) + list(outdir.glob("*.pdf")):
        if p.resolve() not in keep:
            p.unlink(missing_ok=True)


def build(results_dir, outdir=None, options=None):
    """Build the report; returns (Report, [written paths])."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise AnalysisError(f"{results_dir}: not a folder")
    outdir = Path(outdir) if outdir is not None else results_dir / "report"
    options = options or Options()
    try:  # fail before the work when the output folder cannot be made
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise AnalysisError(f"cannot write {outdir}: {e.strerror or e}") from None
    rs = results.load_inputs([results_dir], exclude=[outdir])
    rep = Report(results_dir.resolve().name, failed=list(rs.failed), warnings=list(rs.warnings),
                 steps=suite_status.unfinished_steps(results_dir))
    previous = (outdir / "report.html").exists()
    rep.outputs, rep.missing = make_plots(rs, outdir, options)
    rep.tables = tables.all_tables(rs, options)
    written = [p for o in rep.outputs for p in o.files]
    if previous:
        _remove_stale_figures(outdir, written)
    written.append(render.write_html(rep, outdir))
    written.append(render.write_markdown(rep, outdir))
    return rep, written
