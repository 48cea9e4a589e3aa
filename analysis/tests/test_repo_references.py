"""The repository explains itself: every reference in it points inside it.

1. No tracked text file (but the run records of a results folder's `.suite/`) points outside the
   repository (a `shared/` folder beside the checkout) or
   cites a numbered ticket of a tracker (the word issue followed by a number, or a number after a
   hash sign in prose): such references mean nothing to a reader of the repository alone.
2. Every relative Markdown link in a tracked `.md` file resolves to a file or folder inside the
   repository, and a `#anchor` into a Markdown file names one of its headings.
3. Every mention of a `.md` file by name (`docs/model.md`, `SCHEMA.md`, `metrics.md`) names a
   file of the repository: relative to the mentioning file, to the repository root, in docs/, or
   by a file name that only one Markdown file of the repository has.
4. The index docs/README.md links every page of docs/.

The scanners are checked on hand-made text first, so that a broken pattern cannot pass silently.
Run: pytest analysis/tests/test_repo_references.py
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ANALYSIS

ROOT = ANALYSIS.parent

OUTSIDE = re.compile(r"(?:\.\./)+shared\b|\bshared/(?:spec|GPU\.md|STYLE\.md|baselines|hooks)\b")
TICKET = re.compile(r"\bissues?\s+#?\d+|\bthe issue's\b", re.IGNORECASE)
# A number after a hash sign that starts a word: "see #12", "(#3)". Not colours ("color:#222"),
# anchors ("#overlap"), PyTorch's "ProfilerStep#0", nor ctest's own test numbers ("Test  #9:").
HASH_NUMBER = re.compile(r"(?:^|[\s(\[,;])#\d+\b", re.MULTILINE)
CTEST_NUMBER = re.compile(r"\bTest\s+#\d+:")

LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
MD_NAME = re.compile(r"(?<![\w/.$-])((?:[\w.-]+/)*[\w-]+\.md)\b")
# Files that runs write (summaries, reports, the suite's status), not files of the repository.
GENERATED_MD = {"summary.md", "report.md", "steps.md", "suite-status.md"}


def outside_references(text):
    """The offending fragments of `text`: outside paths and ticket numbers."""
    found = [m.group(0) for m in OUTSIDE.finditer(text)]
    found += [m.group(0) for m in TICKET.finditer(text)]
    found += [m.group(0).strip() for m in HASH_NUMBER.finditer(CTEST_NUMBER.sub("", text))]
    return found


def markdown_links(text):
    """Relative link targets of Markdown text, outside code blocks and inline code."""
    prose = INLINE_CODE.sub("", FENCE.sub("", text))
    return [t for t in LINK.findall(prose) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return s.replace(" ", "-")


def anchors(md_text):
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", FENCE.sub("", md_text),
                                                  re.MULTILINE)}


def tracked_files():
    """The repository's files: git's list in a checkout, else a walk without build outputs."""
    if (ROOT / ".git").exists():
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                             check=True).stdout
        return [ROOT / p for p in out.decode().split("\0") if p]
    skip = {".git", ".venv", "__pycache__", ".pytest_cache"}
    files = []
    for d, dirs, names in os.walk(ROOT):
        dirs[:] = [x for x in dirs if x not in skip and not x.startswith("build")]
        files += [Path(d) / n for n in names]
    return files


def read_text(path):
    """The file as text, or None for a binary file (images, PDFs) or one that is not there."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# This file is left out: its hand-made examples are the patterns it looks for.
TEXT_FILES = [(p, t) for p in tracked_files()
              if p.resolve() != Path(__file__).resolve() and (t := read_text(p)) is not None]
MD_FILES = [(p, t) for p, t in TEXT_FILES if p.suffix == ".md"]


def rel(p):
    return p.relative_to(ROOT).as_posix()


# ---- the scanners on hand-made text ----

@pytest.mark.parametrize("text", [
    "see ../shared/spec/metrics.md", "`../../shared/GPU.md`", "shared/spec/megatron.md",
    "as issue 7 names them", "(Issues 4 and 9)", "issue #12", "fixed in #31.",
    "numbers of the issue's H100",
])
def test_scanner_finds(text):
    assert outside_references(text), text


@pytest.mark.parametrize("text", [
    "color:#222}", "ProfilerStep#0", " 1/28 Test   #9: profiling.gpu.gpt4d.clean", "the issue order",
    "gpt4d issues its collectives", "[x](#overlap-optimisations)", "docs/metrics.md", "#include <x>",
])
def test_scanner_passes(text):
    assert not outside_references(text), text


def test_link_scanner():
    text = ("[a](docs/x.md) [b](https://ui.perfetto.dev) [c](#top) `[d](no.md)`\n"
            "```\n[e](in-code.md)\n```\n[f](../y.md#part \"title\")")
    assert markdown_links(text) == ["docs/x.md", "#top", "../y.md#part"]
    assert slug("Overlap optimisations (OAR, ORS, OAG)") == "overlap-optimisations-oar-ors-oag"
    assert slug("`ovb-trace analyze`") == "ovb-trace-analyze"


def test_files_are_found():
    names = {rel(p) for p, _ in TEXT_FILES}
    assert "README.md" in names and "docs/README.md" in names and "core/src/gpt_plan.cpp" in names


# ---- the repository ----

def test_no_reference_outside_the_repository():
    bad = []
    for path, text in TEXT_FILES:
        # A committed results folder's `.suite/` holds the driver's records of the run, its
        # parameters as they were given (the git-ignored folder of a third-party tarball): data
        # about a run, not text a reader follows.
        if ".suite" in path.relative_to(ROOT).parts:
            continue
        if not outside_references(text):  # whole files first: line numbers only where needed
            continue
        for n, line in enumerate(text.splitlines(), 1):
            bad += [f"{rel(path)}:{n}: {hit}" for hit in outside_references(line)]
    assert not bad, "references outside the repository:\n" + "\n".join(bad)


def test_markdown_links_resolve():
    bad = []
    for path, text in MD_FILES:
        for target in markdown_links(text):
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            if not dest.exists() or ROOT.resolve() not in (dest, *dest.parents):
                bad.append(f"{rel(path)}: ({target}): no such file in the repository")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text()):
                bad.append(f"{rel(path)}: ({target}): no heading '{anchor}' there")
    assert not bad, "broken links:\n" + "\n".join(bad)


def test_markdown_files_named_exist():
    names = [p.name for p, _ in MD_FILES]
    unique = {n for n in names if names.count(n) == 1}

    def missing(path, name):
        if Path(name).name in GENERATED_MD or name in unique:
            return False
        return not any(c.exists() for c in (path.parent / name, ROOT / name, ROOT / "docs" / name))

    bad = []
    for path, text in TEXT_FILES:
        if not any(missing(path, name) for name in MD_NAME.findall(text)):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            bad += [f"{rel(path)}:{n}: {name}" for name in MD_NAME.findall(line) if missing(path, name)]
    assert not bad, "Markdown files named but not in the repository:\n" + "\n".join(bad)


def test_docs_index_lists_every_page():
    index = (ROOT / "docs" / "README.md").read_text()
    linked = {Path(t.partition("#")[0]).name for t in markdown_links(index)}
    pages = {p.name for p, _ in MD_FILES if p.parent == ROOT / "docs" and p.name != "README.md"}
    assert pages, "no pages in docs/"
    assert not pages - linked, f"docs/README.md does not link {sorted(pages - linked)}"
