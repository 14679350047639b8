#!/usr/bin/env python3
"""Host check: each exercise's test filter selects every suite of its test program that
runs the student's code, so grading an exercise runs its whole test program.

  tests/host/test_filters.py BIN_DIR

Runs each bin/<slug>_test_solution with --gtest_list_tests (no GPU needed) and fails,
naming the exercise and the suite, when a suite is outside the manifest's test_filter
and not in HOST_ONLY below (suites that check given host code, not the student's, and
that no device limit can change). tools/gpu-check's profiles step relies on it: under a
device profile it grades the solutions and counts each graded exercise as its test
program run under that profile. Python 3.11+, stdlib only.
"""
from __future__ import annotations

import fnmatch
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from cudalab_grade.manifest import load_all  # noqa: E402

# exercise id -> {suite: why the grader need not run it}
HOST_ONLY = {
    "1.10": {"HistogramEvenBins": "the given EvenBins bin mapping against CUB's formula, on the host"},
}


def suites_of(listing: str) -> list[str]:
    """The suite names of a --gtest_list_tests listing (lines without indentation)."""
    return [line.split("#")[0].strip().rstrip(".") for line in listing.splitlines()
            if line.strip() and not line.startswith(" ")]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    bin_dir = Path(argv[1])
    problems, checked = [], 0
    for chapter in load_all(ROOT):
        for ex in chapter.exercises:
            prog = bin_dir / f"{ex.slug}_test_solution"
            if not prog.exists():
                problems.append(f"{ex.id} {ex.slug}: {prog} was not built")
                continue
            p = subprocess.run([str(prog), "--gtest_list_tests"], capture_output=True, text=True,
                               timeout=120)
            suites = suites_of(p.stdout)
            if p.returncode != 0 or not suites:
                problems.append(f"{ex.id} {ex.slug}: --gtest_list_tests exited {p.returncode} "
                                f"and listed {len(suites)} suite(s): {p.stderr.strip()[-300:]}")
                continue
            allowed = HOST_ONLY.get(ex.id, {})
            for suite in suites:
                checked += 1
                if not fnmatch.fnmatchcase(suite + ".x", ex.test_filter) and suite not in allowed:
                    problems.append(f"{ex.id} {ex.slug}: suite {suite} is outside the filter "
                                    f"{ex.test_filter}: the grader would never run it (rename it "
                                    f"with the exercise's prefix, or list it in HOST_ONLY with why)")
            for suite in allowed:
                if suite not in suites:
                    problems.append(f"{ex.id} {ex.slug}: HOST_ONLY lists {suite}, which the "
                                    f"program does not have")
    for line in problems:
        print(line)
    print(f"{checked} suites checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
