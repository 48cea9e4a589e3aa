"""write_json(path, doc): the summaries' JSON written atomically (temporary file, then rename), so a
killed run never leaves half a file. Shared by summarize.py and multirank_summary.py (stdlib only)."""
import json
import os


def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)
