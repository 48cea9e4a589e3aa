"""Rendering a Report as a self-contained HTML page (PNGs as base64) and as Markdown."""

import base64
import html
from pathlib import Path

from .io_util import atomic_write

CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.85em}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left}th{background:#f0f0f0}
figure{margin:1em 0 2em}img{max-width:100%;border:1px solid #eee}
figcaption{font-size:.9em;color:#444}.note{font-size:.85em;color:#555}"""
STEP_HEADER = ["step", "group", "status", "error"]


def _e(text):
    return html.escape(str(text), quote=True)


def _html_table(header, rows):
    out = ["<table>", "<tr>" + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr>"]
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def to_html(rep, outdir):
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>OverlapBench report: {_e(rep.name)}</title>", f"<style>{CSS}</style>",
             "</head><body>", f"<h1>OverlapBench report: {_e(rep.name)}</h1>"]
    if rep.failed or rep.missing or rep.steps:
        parts.append("<h2>Problems</h2>")
    if rep.steps:
        parts.append("<h3>Suite steps that did not finish</h3>")
        parts.append(_html_table(STEP_HEADER, rep.steps))
    if rep.failed:
        parts.append("<h3>Files that could not be read</h3>")
        parts.append(_html_table(["file", "reason"], rep.failed))
    if rep.missing:
        parts.append("<h3>Plots not made</h3>")
        parts.append(_html_table(["plot", "reason"], [(f"{t} ({k})", r) for k, t, r in rep.missing]))
    if rep.warnings:
        parts.append("<h3>Warnings</h3><ul>" + "".join(f"<li>{_e(w)}</li>" for w in rep.warnings)
                     + "</ul>")
    for t in rep.tables:
        parts.append(f"<h2>{_e(t.title)}</h2>")
        if t.rows:
            parts.append(_html_table(t.header, t.rows))
        if t.note:
            parts.append(f'<p class="note">{_e(t.note)}</p>')
    if rep.outputs:
        parts.append("<h2>Plots</h2>")
    for o in rep.outputs:
        png = Path(o.files[1])
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        parts.append(f'<figure id="{_e(o.stem)}"><h3>{_e(o.title)}</h3>'
                     f'<img alt="{_e(o.title)}" src="data:image/png;base64,{data}">'
                     f"<figcaption>{_e(o.caption)} "
                     f'(<a href="{_e(Path(o.files[0]).name)}">PDF</a>)</figcaption></figure>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _md_cell(c):
    return str(c).replace("|", "\\|").replace("\n", " ")


def md_table(header, rows):
    """A Markdown table: the header, its rule, one line per row (cells' "|" escaped)."""
    out = ["| " + " | ".join(_md_cell(h) for h in header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def to_markdown(rep):
    parts = [f"# OverlapBench report: {rep.name}", ""]
    if rep.steps:
        parts += ["## Suite steps that did not finish", "", md_table(STEP_HEADER, rep.steps), ""]
    if rep.failed:
        parts += ["## Files that could not be read", "", md_table(["file", "reason"], rep.failed), ""]
    if rep.missing:
        parts += ["## Plots not made", "",
                  md_table(["plot", "reason"], [(f"{t} ({k})", r) for k, t, r in rep.missing]), ""]
    if rep.warnings:
        parts += ["## Warnings", ""] + [f"- {w}" for w in rep.warnings] + [""]
    for t in rep.tables:
        parts += [f"## {t.title}", ""]
        if t.rows:
            parts += [md_table(t.header, t.rows), ""]
        if t.note:
            parts += [t.note, ""]
    if rep.outputs:
        parts += ["## Plots", ""]
    for o in rep.outputs:
        pdf, png = (Path(p).name for p in o.files)
        parts += [f"### {o.title}", "", f"![{o.title}]({png})", "", f"{o.caption} ([PDF]({pdf}))", ""]
    return "\n".join(parts)


def write_html(rep, outdir):
    return atomic_write(Path(outdir) / "report.html", to_html(rep, outdir))


def write_markdown(rep, outdir):
    return atomic_write(Path(outdir) / "report.md", to_markdown(rep))
