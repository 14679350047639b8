"""A graded class's output folder as tools/grade-class writes it (signed students/<id>/results.json
and report.md), made without a GPU from a make-class EXPECTED.csv: each student graded as the
grader reports its kind (GRADED_AS), or as a test says instead. For the tests of
tools/make-class --check and of gpu-check's class step."""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

from toolload import ROOT

sys.path.insert(0, str(ROOT / "tools"))
from cudalab_grade import signing  # noqa: E402
from cudalab_grade.manifest import load_all  # noqa: E402
from cudalab_grade.submissions import safe_name  # noqa: E402

KNOWN = {e.id: e for c in load_all(ROOT) for e in c.exercises}
IDS = ["1.1", "1.2", "1.3", "1.4"]
RUNNER_SEGV = ("3 of 72 tests failed (all must pass for the points)\n\nFAILED ReduceSumAtomic.Sizes/1025\n"
               "the exercise's code (its runner process) stopped while waiting for the result: it was "
               "killed by SIGSEGV (exit code 139) (a crash, an exit or a hang in the code under test; "
               "the next call starts it again)")

# What the grader says of each kind's spoiled exercises: id -> (status, test output); every
# other exercise passed. What the grader really reports (grading.py's statuses and reasons).
GRADED_AS = {
    "correct": {}, "noisy": {},
    "starter": {i: ("failed", "72 of 72 tests failed (all must pass for the points)") for i in IDS},
    "wrong": {"1.1": ("failed", "12 of 72 tests failed (all must pass for the points)")},
    "compile": {"1.2": ("compile_error", "did not compile")},
    "forbidden": {"1.1": ("forbidden", "uses forbidden API 'cub::' (line 12)")},
    "sneaky": {"1.1": ("forbidden", "uses forbidden API 'cub::' (symbol in the compiled code)")},
    "hang": {"1.3": ("timeout", "timed out after 30 s in ReduceSumWarpShuffleCases.Int32Extremes")},
    "crash": {"1.1": ("failed", RUNNER_SEGV)},
    "oob": {"1.4": ("failed", "2 of 72 tests failed (all must pass for the points)")},
    "race": {"1.2": ("sanitizer", "compute-sanitizer racecheck: Race reported")},
    "technique": {"1.2": ("forbidden", "its tests pass, but its device code has no shared-memory store (`STS`) "
                                       "in any kernel, and 1.2 asks for its own technique")},
    "hog": {"1.1": ("memory", "killed: used more than 16384 MiB of host memory in X.Y")},
    "partial": {i: ("not_submitted", "not submitted (the starter's file scores 0)")
                for i in ("1.3", "1.4")},
    "evil": {i: ("rejected", "submission rejected: archive member '../../escape.cu' climbs out")
             for i in IDS},
}


def record(student: str, outcomes: dict, rejected: str | None = None) -> dict:
    """A results.json as the grader writes it; outcomes: id -> (status, output), 'passed'
    (all points) for the ids of IDS not named; (status, output, points) gives points."""
    exercises, tests = [], []
    for i in IDS:
        ex = KNOWN[i]
        status, output, *pts = outcomes.get(i, ("passed", "all 72 tests passed"))
        points = float(pts[0]) if pts else (float(ex.points) if status == "passed" else 0.0)
        exercises.append({"id": i, "slug": ex.slug, "status": status, "correctness_points": points,
                          "perf_points": 0.0, "max_points": float(ex.points), "ratio": None,
                          "reason": output.split("\n\n")[0], "seconds": 1.0})
        tests.append({"name": f"{i} {ex.slug}", "number": i, "score": points,
                      "max_score": float(ex.points),
                      "status": "passed" if status == "passed" else "failed", "output": output,
                      "visibility": "visible"})
    return {"score": sum(e["correctness_points"] for e in exercises), "output": "", "tests": tests,
            "cudalab": {"student": student, "entry": student, "implementation": "submission",
                        "seed": None, "perf": False, "sanitize": [], "hidden_tests": False,
                        "gpu": None, "rejected": rejected, "files": {}, "warnings": [],
                        "exercises": exercises}}


def write_out(out: Path, records: list[dict]) -> None:
    """OUT/students/<id>/results.json and report.md, signed with OUT's key."""
    key = signing.load_or_create(out).key
    for r in records:
        d = out / "students" / safe_name(r["cudalab"]["student"])
        d.mkdir(parents=True, exist_ok=True)
        files = {"results.json": json.dumps(r, indent=2).encode(), "report.md": b"# report\n"}
        for name, data in files.items():
            (d / name).write_bytes(data)
        signing.sign(key, d, files)


def graded_class(expected_csv: Path, out: Path, instead: dict | None = None,
                 skip: tuple[str, ...] = ()) -> list[dict]:
    """OUT for every student of EXPECTED.csv, graded as GRADED_AS says of its kind; instead:
    student -> outcomes (or a whole record) for that student; skip: students left out."""
    records = []
    with expected_csv.open(newline="") as f:
        for row in csv.DictReader(f):
            s, kind = row["student"], row["kind"]
            if s in skip:
                continue
            got = (instead or {}).get(s, GRADED_AS[kind])
            if isinstance(got, dict) and "cudalab" in got:
                records.append(got)
                continue
            rejected = "archive member '../../escape.cu' climbs out" if kind == "evil" \
                and s not in (instead or {}) else None
            records.append(record(s, got, rejected))
    write_out(out, records)
    return records
