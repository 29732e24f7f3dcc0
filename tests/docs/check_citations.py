#!/usr/bin/env python3
"""A user has the repository, nothing more: every file a parameter's source or a tracked text file cites
must be in it, and no parameter source may cite the project's own working notes.

    tests/docs/check_citations.py --gpumodel BIN

Checks, each failure named with where it is:
  - every Markdown file named (a file or a path ending in .md) in a tracked text file or a parameter's
    source exists in the repository, relative to the citing file's folder or to the repository's root;
  - every Markdown link inside the repository (`[text](path)`, `[text](path#heading)`, `[text](#heading)`)
    names a file that exists and, with an anchor, a heading of that file (GitHub's slug of it);
  - no page of the user guide (README.md, docs/) cites a seed document by number or one of the project's
    own issues ("for issue 12", "(issue 11, item 6)");
  - no parameter source cites a seed document by number ("seed 003": users have the documents' titles,
    not the project's numbering) or one of the project's own issues ("issue 11"; a public project's issue,
    "ROCm issue 6127", is a citation a user can follow);
  - every power figure (power.*) that is an assumption, as a built-in default or as a shipped platform
    file's value, states its uncertainty the way the sensitivity command reads it ("uncertainty x0.5-x2",
    "uncertainty +-30 %"): an energy answer's assumptions are varied over what their sources say.
Exit 0: clean; 1: a finding; 2: the binary or the repository could not be read.
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MD = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.md)\b")
URL = re.compile(r"https?://\S+")
SEED = re.compile(r"\bseeds? 0\d\d\b")
# An issue number with no public project named before it.
OWN_ISSUE = re.compile(r"(?<![\w-] )(?<![\w-])\bissues? \d+")
sys.path.insert(0, os.path.join(ROOT, "workbench"))
from sensitivity import is_assumption, platform_sources, stated_factors  # noqa: E402

TEXT = (".md", ".cpp", ".h", ".py", ".ini", ".sh", ".txt", ".tsv", ".cmake", ".gtkw")


# In the user's pages any "issue N" must name its public project right before it ("ROCm issue 6127",
# "GitHub issue 24", "cosmic-epoch issue 3764").
DOC_ISSUE = re.compile(r"\b[Ii]ssues? #?\d+")


def public_issue(before):
    words = before.split()
    # A project's name: two capitals (ROCm, NVIDIA, GitHub) or joined words (cosmic-epoch, mesa/radv);
    # a capital alone is a sentence's first word ("See issue 12", "In March, issue 12").
    return bool(words) and ("GitHub" in " ".join(words[-3:]) or
                            re.search(r"[A-Z]\w*[A-Z]|\w[-/]\w", words[-1]) is not None)


def page_findings(f, text):
    """A user's page (Markdown): a seed document cited by number, or an issue of no named project."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        if SEED.search(line):
            found.append(f"{f}:{n}: cites a seed document by number ('{SEED.search(line).group(0)}'): name the document")
        for m in DOC_ISSUE.finditer(line):
            if not public_issue(line[:m.start()]):
                found.append(f"{f}:{n}: '{m.group(0)}' is an issue of no named project (the project's own "
                             "working notes): say what changed, not which issue changed it")
    return found


LINK = re.compile(r"\]\(([^)\s#]*)(?:#([^)\s]+))?\)")


def slugs(path):
    """GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces to '-'."""
    with open(path, encoding="utf-8") as f:
        heads = re.findall(r"^#+ (.*)$", f.read(), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def md_refs(text):
    return MD.findall(URL.sub("", text))


def exists(ref, citing_dir):
    return any(os.path.isfile(os.path.join(base, ref)) for base in (citing_dir, ROOT))


def uncertainty_findings(params, platforms):
    """Assumed power figures whose source gives no uncertainty the sensitivity command can read: among
    `params` (the built-in defaults: [{"name", "source"}]) and `platforms` ({platform: {key: source}}, each
    shipped platform file's values with its tag)."""
    found = []
    for p in params:
        if p["name"].startswith("power.") and is_assumption(p.get("source", "")) and not stated_factors(p["source"]):
            found.append(f"parameter {p['name']}: an assumption with no stated uncertainty ('uncertainty x0.5-x2')")
    for name, sources in platforms.items():
        for key, src in sources.items():
            if key.startswith("power.") and is_assumption(src) and not stated_factors(src):
                found.append(f"platform {name}: {key} is an assumption with no stated uncertainty")
    return found


def unstated_uncertainty(params, gpumodel):
    """uncertainty_findings over the binary's defaults and every platform file it lists."""
    try:
        listed = json.loads(subprocess.run([gpumodel, "--list-platforms-json"], check=True, capture_output=True,
                                           text=True).stdout)
    except (OSError, subprocess.CalledProcessError, ValueError) as e:
        return [f"the platforms could not be listed: {e}"]
    return uncertainty_findings(params, {plat["name"]: platform_sources(gpumodel, plat["name"]) for plat in listed})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumodel", required=True)
    ap.add_argument("--root", help="the repository to check (default: this one; the selftest gives another)")
    a = ap.parse_args()
    if a.root:
        global ROOT
        ROOT = os.path.abspath(a.root)
    try:
        files = subprocess.run(["git", "-C", ROOT, "ls-files"], check=True, capture_output=True, text=True).stdout.split()
        params = json.loads(subprocess.run([a.gpumodel, "--list-params-json"], check=True, capture_output=True,
                                           text=True).stdout)
    except (OSError, subprocess.CalledProcessError, ValueError) as e:
        print(f"check_citations: {e}", file=sys.stderr)
        return 2
    bad = []
    every = params["platform"] + [q for s in params["scenarios"] for q in s["params"]]
    for p in every:
        src = p.get("source", "")
        for ref in md_refs(src):
            if not exists(ref, ROOT):
                bad.append(f"parameter {p['name']}: its source cites '{ref}', which the repository does not contain")
        if SEED.search(src):
            bad.append(f"parameter {p['name']}: its source cites a seed document by number ('{SEED.search(src).group(0)}'): name the document")
        if OWN_ISSUE.search(src):
            bad.append(f"parameter {p['name']}: its source cites '{OWN_ISSUE.search(src).group(0)}', an issue of no named project")
    bad += unstated_uncertainty(every, a.gpumodel)
    for f in files:
        if not f.endswith(TEXT) or f.startswith("tests/golden/"):
            continue
        try:
            text = open(os.path.join(ROOT, f), encoding="utf-8").read()
        except (OSError, UnicodeDecodeError):
            continue
        if f.endswith(".md"):
            here = os.path.dirname(os.path.join(ROOT, f))
            for n, line in enumerate(text.splitlines(), 1):
                for target, anchor in LINK.findall(line):
                    if re.match(r"[a-z]+:", target):
                        continue  # a web address
                    path = os.path.normpath(os.path.join(here, target)) if target else os.path.join(ROOT, f)
                    if not os.path.exists(path):
                        bad.append(f"{f}:{n}: links to '{target}', which the repository does not contain")
                    elif anchor and path.endswith(".md") and anchor not in slugs(path):
                        bad.append(f"{f}:{n}: links to '{target}#{anchor}', a heading its file does not have")
        if f.endswith(".md"):
            bad += page_findings(f, text)
        for n, line in enumerate(text.splitlines(), 1):
            for ref in md_refs(line):
                if not exists(ref, os.path.dirname(os.path.join(ROOT, f))):
                    bad.append(f"{f}:{n}: cites '{ref}', which the repository does not contain")
    for b in bad:
        print(b)
    print(f"check_citations: {len(bad)} finding(s) in {len(files)} tracked files and {len(every)} parameters")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
