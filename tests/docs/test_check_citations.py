#!/usr/bin/env python3
"""The citation check's page rule itself: a user's page citing one of the project's own issues or a seed
document by number is a finding; a public project's issue is a citation a user can follow.

    tests/docs/test_check_citations.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_citations as cc  # noqa: E402

FINDING = [
    "This was fixed for issue 12.",
    "See (issue 11, item 6) for the history.",
    "Issue 7 changed the default.",
    "as issues 3 and 4 asked",
    "tracked as issue #42",
    "the seed 003 document says so",
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
    for f in failures:
        print("FAIL: " + f)
    print(f"test_check_citations: {len(failures)} failure(s) in {len(FINDING) + len(CLEAN)} lines")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
