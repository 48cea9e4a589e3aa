"""`ovb-analysis summarize KIND DIR` (summary.md, and the kind's JSON, of a campaign folder) and
`ovb-analysis pick-configs SEARCH.json` (the configurations a model check runs): the suite's
campaign presets end with these steps (slurm/README.md "Campaign presets")."""

from pathlib import Path

from .errors import AnalysisError
from .io_util import atomic_write, atomic_write_json, load_json
from .search_choices import choice_args
from .summaries import KINDS
from .summaries.common import last_log_line, steps_table


def add_parsers(sub):
    p = sub.add_parser("summarize", help="summary.md of a campaign folder of ovb-suite",
                       description="Writes OUTDIR/summary.md (and the kind's JSON: summary.json "
                       "or overlap.json) for a folder of an ovb-suite campaign preset and prints "
                       "it. Exit status 1 when one of the kind's checks fails (the files are "
                       "written first). Kinds: " + ", ".join(KINDS) + ".")
    p.add_argument("kind", metavar="KIND", choices=list(KINDS), help=" | ".join(KINDS))
    p.add_argument("folder", metavar="DIR", help="the campaign's results folder")
    p.add_argument("-o", "--outdir", metavar="OUTDIR", help="where to write (default DIR)")
    p.set_defaults(handler=cmd_summarize)

    p = sub.add_parser("pick-configs", help="the configurations a model check runs",
                       description="From `ovb-model search --json` output: the COUNT - 1 best "
                       "predicted configurations that fit, and the worst (so that the ranking "
                       "is tested at both ends); all of them when fewer fit. Writes "
                       '{"runs": [{"tag", "args": [gpt4d grid options]}]}.')
    p.add_argument("search", metavar="SEARCH.json")
    p.add_argument("--count", type=int, required=True, metavar="COUNT")
    p.add_argument("-o", "--out", required=True, metavar="PICKS.json")
    p.set_defaults(handler=cmd_pick_configs)


def cmd_summarize(args):
    folder = Path(args.folder)
    if not folder.is_dir():
        raise AnalysisError(f"{folder}: no such folder")
    mod = KINDS[args.kind]
    s = mod.summarize(str(folder))
    gpu = last_log_line(folder, "gpu_info")
    md = [f"# {mod.TITLE}", "",
          f"`ovb-suite run --preset {args.kind}`, folder `{folder}`"
          f"{'; GPU: ' + gpu if gpu else ''}.", "", "## Steps", "", *steps_table(folder), "",
          s.markdown, ""]
    if s.problems:
        md += ["## Checks that failed", "", *[f"- {p}" for p in s.problems], ""]
    out = Path(args.outdir or folder)
    text = "\n".join(md)
    atomic_write(out / "summary.md", text)
    if mod.JSON_NAME and s.doc is not None:
        atomic_write_json(out / mod.JSON_NAME, s.doc)
    print(text)
    return 0 if s.ok else 1


def cmd_pick_configs(args):
    if args.count < 1:
        raise AnalysisError(f"--count {args.count}: expected at least 1")
    doc = load_json(args.search)
    try:
        cfgs = [c for c in doc["configs"] if c["fits"]]
        picks = cfgs[:args.count - 1] + cfgs[-1:] if len(cfgs) > args.count else cfgs
        for c in picks:  # the model check runs every pick under one --overlap: tp cannot vary
            if int(c.get("tp_chunks") or 0) > 0:
                raise AnalysisError(f"{args.search}: configuration {c['gx']}x{c['gy']}x{c['gz']}x"
                                    f"{c['gdata']} chose tp ({c['tp_chunks']} chunks), which the "
                                    "model check's runs do not take: search without --tp-chunks "
                                    "auto")
        runs = [{"tag": "g{gx}x{gy}x{gz}x{gdata}-".format(**c) + str(c["order"]).replace(",", ""),
                 "args": ["--gx", str(c["gx"]), "--gy", str(c["gy"]), "--gz", str(c["gz"]),
                          "--gdata", str(c["gdata"]), "--grid-order", str(c["order"]),
                          *choice_args(c, doc.get("inputs"))]}
                for c in picks]
    except (KeyError, TypeError) as e:
        raise AnalysisError(f"{args.search}: not ovb-model search output ({e})") from None
    if not runs:
        raise AnalysisError(f"{args.search}: no configuration fits: nothing to run")
    atomic_write_json(args.out, {"runs": runs})
    for r in runs:
        print(r["tag"])
    return 0
