"""What tools/gpu-check reads from the tools it runs: CTest's JUnit file and console summary,
the grader's JSON (tools/grade --json) judged for the solutions (every point) and the untouched
starter (0 points, every exercise a test failure), compute-sanitizer's summaries."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from ..grading import FAILED, PASSED  # the grader's statuses
from ..gtest import NO_DEVICE
from ..manifest import load_all

# Grader statuses that mean "the tests ran and failed": what an untouched starter
# must get. Anything else (crashed, timed out, grader error, build failed) is not.
TEST_FAILURE_STATUSES = {FAILED, "fail", "tests failed", "test failed", "test failure",
                         "failing", "wrong", "wrong answer", "incorrect"}
NOT_TEST_FAILURE_WORDS = ("crash", "time", "hang", "error", "build", "compile", "link",
                          "sanitiz", "signal", "abort", "skip", "gpu", "forbid")


class GradeFormatError(Exception):
    """A grader JSON that lacks the cudalab object this check reads."""


def evaluate_profile_solutions(data: dict) -> dict:
    """The solutions graded with --fast under a profile: every exercise must pass its tests
    (no speed points are measured, so points are the correctness points)."""
    exercises = grade_exercises(data)
    problems = [f"{e['id']} {e['slug']}: {e['status']}{': ' + e['reason'] if e['reason'] else ''}"
                for e in exercises if e["status"] != PASSED]
    got = sum(e["correctness_points"] for e in exercises)
    best = sum(e["correctness_max"] for e in exercises)
    return {"passed": not problems, "points": got, "max_points": best, "exercises": exercises,
            "problems": problems}


def parse_junit(text: str) -> dict:
    """Counts of a CTest JUnit file: total, passed, failed, skipped, and names."""
    root = ET.fromstring(text)
    cases = list(root.iter("testcase"))
    out = {"total": len(cases), "passed": 0, "failed": 0, "skipped": 0,
           "failed_names": [], "skipped_names": [], "no_device": [], "gtest_skips": 0}
    for case in cases:
        name = case.get("name") or case.get("classname") or "?"
        status = (case.get("status") or "").lower()
        output = "".join((e.text or "") for e in case.iter("system-out"))
        if NO_DEVICE in output:
            out["no_device"].append(name)
        out["gtest_skips"] += len(re.findall(r"^\[  SKIPPED \] \S+\.\S+ \(\d+ ms\)", output, re.M))
        if case.find("failure") is not None or case.find("error") is not None or status == "fail":
            out["failed"] += 1
            out["failed_names"].append(name)
        elif case.find("skipped") is not None or status in ("notrun", "disabled", "skipped"):
            out["skipped"] += 1
            out["skipped_names"].append(name)
        else:
            out["passed"] += 1
    return out


def parse_ctest_output(text: str) -> dict | None:
    """Counts from ctest's console summary, when there is no JUnit file."""
    m = re.search(r"(\d+)% tests passed, (\d+) tests? failed out of (\d+)", text)
    if not m:
        return None
    failed, total = int(m.group(2)), int(m.group(3))
    skipped_names = re.findall(r"^\s*\d+ - (\S+) \((?:Skipped|Disabled|Not Run)\)", text, re.M)
    failed_names = re.findall(r"^\s*\d+ - (\S+) \((?:Failed|Timeout|SEGFAULT|Subprocess aborted|"
                              r"Exception|Child aborted|[^)]*)\)", text, re.M)
    failed_names = [n for n in failed_names if n not in skipped_names]
    return {"total": total, "failed": failed, "skipped": len(skipped_names),
            "passed": total - failed - len(skipped_names), "failed_names": failed_names,
            "skipped_names": skipped_names, "no_device": [], "gtest_skips": 0}


def ctest_summary_line(text: str) -> str | None:
    m = re.search(r"^.*\d+% tests passed, \d+ tests? failed out of \d+.*$", text, re.M)
    return m.group(0).strip() if m else None


def number(value, default: float = 0.0) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def grade_exercises(data: dict) -> list[dict]:
    """The per-exercise records of a tools/grade --json file, normalized."""
    if not isinstance(data, dict) or not isinstance(data.get("cudalab"), dict):
        raise GradeFormatError("the grader's JSON has no top-level 'cudalab' object")
    block = data["cudalab"]
    raw = block.get("exercises", block)
    if isinstance(raw, dict):
        items = [dict(v, id=v.get("id", k)) for k, v in raw.items() if isinstance(v, dict) and "status" in v]
    elif isinstance(raw, list):
        items = [v for v in raw if isinstance(v, dict)]
    else:
        items = []
    if not items:
        raise GradeFormatError("the grader's 'cudalab' object lists no exercises")
    out = []
    for v in items:
        c_max, p_max = v.get("correctness_max_points", v.get("correctness_max")), v.get(
            "perf_max_points", v.get("perf_max"))
        if "max_points" in v:
            max_points = number(v["max_points"])
        else:
            max_points = number(c_max) + number(p_max)
        out.append({
            "id": str(v.get("id", "?")),
            "slug": v.get("slug", ""),
            "status": str(v.get("status", "")),
            "reason": str(v.get("reason") or ""),
            "correctness_points": number(v.get("correctness_points")),
            "perf_points": number(v.get("perf_points")),
            "max_points": max_points,
            "correctness_max": number(c_max) if c_max is not None else max_points,
            "perf_verdict": str(v.get("perf_verdict") or ""),
        })
    return out


def is_test_failure(status: str) -> bool:
    s = re.sub(r"[_\-]+", " ", status.strip().lower())
    if s in TEST_FAILURE_STATUSES:
        return True
    return "fail" in s and not any(w in s for w in NOT_TEST_FAILURE_WORDS)


def evaluate_solutions(data: dict, expected: dict[str, float] | None = None) -> dict:
    """The solutions with --perf must get every point: sum(correctness + perf) == sum(max)."""
    exercises = grade_exercises(data)
    problems = []
    got = sum(e["correctness_points"] + e["perf_points"] for e in exercises)
    best = sum(e["max_points"] for e in exercises)
    for e in exercises:
        mine = e["correctness_points"] + e["perf_points"]
        if e["perf_verdict"] == "gpu_busy":  # its speed points left out of its maximum: unmeasured
            problems.append(f"{e['id']} {e['slug']}: speed not measured, another process was on the "
                            f"GPU: run again on an idle GPU ({e['reason']})")
        elif abs(mine - e["max_points"]) > 1e-9:
            problems.append(f"{e['id']} {e['slug']}: {fmt_points(mine)}/{fmt_points(e['max_points'])} "
                            f"({e['status']}{': ' + e['reason'] if e['reason'] else ''})")
    busy = {e["id"] for e in exercises if e["perf_verdict"] == "gpu_busy"}
    problems += expected_problems([e for e in exercises if e["id"] not in busy],
                                  {i: m for i, m in (expected or {}).items() if i not in busy},
                                  check_max=True)
    if best <= 0:
        problems.append("the grader reports 0 maximum points")
    return {"passed": not problems, "points": got, "max_points": best,
            "percent": 100.0 * got / best if best else 0.0, "exercises": exercises, "problems": problems}


def evaluate_starter(data: dict, expected: dict[str, float] | None = None) -> dict:
    """The untouched starter must get exactly 0, every exercise a plain test failure."""
    exercises = grade_exercises(data)
    problems = []
    got = sum(e["correctness_points"] + e["perf_points"] for e in exercises)
    for e in exercises:
        mine = e["correctness_points"] + e["perf_points"]
        if mine != 0:
            problems.append(f"{e['id']} {e['slug']}: the starter got {fmt_points(mine)} points")
        if not is_test_failure(e["status"]):
            problems.append(f"{e['id']} {e['slug']}: status '{e['status']}' is not a test failure"
                            + (f" ({e['reason']})" if e["reason"] else ""))
    problems += expected_problems(exercises, expected, check_max=False)
    return {"passed": not problems, "points": got,
            "max_points": sum(e["max_points"] for e in exercises), "exercises": exercises,
            "problems": problems}


def expected_problems(exercises: list[dict], expected: dict[str, float] | None, check_max: bool) -> list[str]:
    """Every manifest exercise must be graded; with --perf, max = points + perf points."""
    if not expected:
        return []
    problems = []
    seen = {e["id"]: e for e in exercises}
    for ex_id, max_points in expected.items():
        if ex_id not in seen:
            problems.append(f"{ex_id}: not in the grader's results")
        elif check_max and abs(seen[ex_id]["max_points"] - max_points) > 1e-9:
            problems.append(f"{ex_id}: the grader's maximum is {fmt_points(seen[ex_id]['max_points'])}, "
                            f"the manifest's correctness + perf points are {fmt_points(max_points)}")
    return problems


def fmt_points(v: float) -> str:
    return f"{v:g}"


def sanitizer_summaries(text: str) -> list[str]:
    """The SUMMARY lines compute-sanitizer prints, without the '=========' prefix."""
    return [re.sub(r"^=+\s*", "", line).strip()
            for line in text.splitlines() if "SUMMARY" in line and "=" in line]


def expected_max_points(root: Path) -> dict[str, float]:
    """Exercise id -> correctness points + perf points, from the manifests."""
    return {e.id: float(e.points + (e.perf.points if e.perf else 0))
            for ch in load_all(root) for e in ch.exercises}
