#!/usr/bin/env python3
"""The citation check's rules themselves: a user's page citing one of the project's own issues or a seed
document by number is a finding; a public project's issue is a citation a user can follow; an assumed
power figure, a built-in default's or a platform file's, must state its uncertainty in a form the
sensitivity command reads.

    tests/docs/test_check_citations.py [--gpumodel BIN]
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_citations as cc  # noqa: E402

FINDING = [
    "This was fixed for issue 12.",
    "See (issue 11, item 6) for the history.",
    "Issue 7 changed the default.",
    "as issues 3 and 4 asked",
    "tracked as issue #42",
    "the seed 003 document says so",
    "See issue 12 for why.",
    "In March, issue 12 changed it.",
]
CLEAN = [
    "ROCm issue 6127 reports the same stall.",
    "GitHub issue 24 of the driver.",
    "cosmic-epoch issue 3764 shows the flicker.",
    "Mesa/radv issue 1234",
    "No issue here, and 12 frames.",
]


def main():
    failures = []
    for line in FINDING:
        if len(cc.page_findings("docs/README.md", line + "\n")) != 1:
            failures.append(f"not found: {line!r}")
    for line in CLEAN:
        got = cc.page_findings("docs/README.md", line + "\n")
        if got:
            failures.append(f"a public citation refused: {line!r}: {got}")
    # The uncertainty rule: a default and a platform file's value each found alone, an unreadable form
    # found, a readable one (either form) and a quoted or derived figure passed.
    cases = [
        ([{"name": "power.x_mw", "source": "A: a guess"}], {}, 1),
        ([], {"laptop": {"power.x_mw": "A: a guess"}}, 1),
        ([{"name": "power.x_mw", "source": "A: a guess; uncertainty 50-200 %"}], {}, 1),
        ([{"name": "power.x_mw", "source": "Q/A: leakage only"}], {}, 1),
        ([{"name": "power.x_mw", "source": "A: a guess; uncertainty x0.5-x2"},
          {"name": "power.y_mw", "source": "A: a guess; uncertainty +-30 %"},
          {"name": "power.z_mw", "source": "Q: a datasheet"}, {"name": "link.x_ns", "source": "A: a guess"}],
         {"laptop": {"power.x_mw": "A: a guess, uncertainty x0.8-x1.2", "power.y_mw": "D: derived"}}, 0),
    ]
    for params, platforms, want in cases:
        got = cc.uncertainty_findings(params, platforms)
        if len(got) != want:
            failures.append(f"uncertainty rule: {params} {platforms}: {len(got)} finding(s), want {want}: {got}")
    # The whole check on a repository whose page cites an own issue: exit 1, the page and line named.
    if len(sys.argv) > 2 and sys.argv[1] == "--gpumodel":
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "docs"))
            with open(os.path.join(tmp, "docs", "README.md"), "w", encoding="utf-8") as f:
                f.write("# Guide\n\nThe default moved for issue 12.\n")
            subprocess.run(["git", "-C", tmp, "init", "-q"], check=True)
            subprocess.run(["git", "-C", tmp, "add", "docs"], check=True)
            p = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_citations.py"),
                                "--gpumodel", sys.argv[2], "--root", tmp], capture_output=True, text=True)
            if p.returncode != 1 or "docs/README.md:3: 'issue 12'" not in p.stdout:
                failures.append(f"a page citing 'issue 12' passed the whole check: exit {p.returncode} {p.stdout[-300:]}")
    for f in failures:
        print("FAIL: " + f)
    print(f"test_check_citations: {len(failures)} failure(s) in {len(FINDING) + len(CLEAN)} lines and "
          f"{len(cases)} uncertainty cases")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
