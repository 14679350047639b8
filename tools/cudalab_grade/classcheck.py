"""A graded class against what it should have got: `tools/make-class --check DEST OUT`.

tools/make-class writes a class of known kinds and DEST.EXPECTED.csv (student, kind,
expected); its table KINDS says, per kind, the outcome of the exercises it spoils and of
the others. This module reads OUT's records with the grader's own reader (the one
`--merge` uses: signed, validated results.json files, classreport.load_records) and
checks every student against its kind's rule.

A rule is (text, {exercise id: outcome}, outcome of the other exercises). An outcome is

  "passed"         every test passed and all the exercise's correctness points (the
                   speed points of --perf are a measurement, not judged here)
  "a|b"            one of these grader statuses (grading.py, classgrade.py), 0 points
  "crashed"        the status crashed (the test program died), or failed where the
                   exercise's output says its runner was killed by a signal: a crash of
                   the student's code fails the test that called it (remote_checker.cu)
  "rejected"       as the others' outcome: the whole submission refused (cudalab.rejected),
                   every exercise rejected with 0 points

Only the exercises the class is made of are judged; each must be in the record.
"""
from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import classreport
from .escape import md_text
from .grading import CRASHED, FAILED, PASSED

REJECTED = "rejected"
# The checker's message when the runner died during a call (tests/common/remote_checker.cu):
# "the exercise's code (its runner process) stopped while ...: it was killed by SIGSEGV"
RUNNER_KILLED = re.compile(r"\(its runner process\) stopped while [^\n]*?: it was killed by (SIG[A-Z0-9]+)")


class CheckError(Exception):
    """EXPECTED.csv or OUT cannot be read as a class: the message says why."""


@dataclass
class Row:
    student: str
    kind: str
    expected: str
    got: str = ""
    problems: list[str] = field(default_factory=list)
    exercises: dict = field(default_factory=dict)   # id -> {status, points, max, reason}

    @property
    def ok(self) -> bool:
        return not self.problems


def expected_csv(dest: Path) -> Path:
    """DEST.EXPECTED.csv beside the class folder DEST (or DEST itself when it is that file)."""
    if dest.name.endswith(".EXPECTED.csv"):
        return dest
    return dest.parent / f"{dest.name}.EXPECTED.csv"


def read_expected(path: Path) -> list[tuple[str, str, str]]:
    """(student, kind, expected text) of every line of an EXPECTED.csv."""
    try:
        with path.open(newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise CheckError(f"cannot read {path}: {e}") from None
    if not rows or not {"student", "kind"} <= set(rows[0]):
        raise CheckError(f"{path}: not an EXPECTED.csv of tools/make-class (student,kind,expected)")
    # make-class wrote the text unquoted before, so a comma in it made extra fields
    return [(r["student"], r["kind"], ",".join([r.get("expected") or ""] + (r.get(None) or [])))
            for r in rows]


def _points(e: dict) -> float:
    return float(e.get("correctness_points", 0)) + float(e.get("perf_points", 0))


def _output(record: dict, ex_id: str) -> str:
    """The exercise's Gradescope test output (its reason and details)."""
    for t in record.get("tests", []):
        if str(t.get("number")) == ex_id:
            return str(t.get("output", ""))
    return ""


def _runner_signal(record: dict, ex_id: str) -> str | None:
    m = RUNNER_KILLED.search(_output(record, ex_id))
    return m.group(1) if m else None


def describe(outcome: str) -> str:
    if outcome == PASSED:
        return "passed with every correctness point"
    if outcome == CRASHED:
        return "crashed (or failed: its runner killed by a signal), 0 points"
    return " or ".join(outcome.split("|")) + ", 0 points"


def judge(outcome: str, e: dict, best: float, record: dict) -> str | None:
    """Why exercise record e does not match outcome (None when it does)."""
    status, points = e["status"], _points(e)
    if outcome == PASSED:
        if status == PASSED and abs(float(e["correctness_points"]) - best) <= 1e-6:
            return None
    elif outcome == CRASHED:
        if points == 0 and (status == CRASHED or (status == FAILED and _runner_signal(record, e["id"]))):
            return None
    elif status in outcome.split("|") and points == 0:
        return None
    return f"{e['id']} {status} with {points:g} points, expected {describe(outcome)}"


def got_text(record: dict, ids: list[str]) -> str:
    """What the grader said of the class's exercises, short."""
    c = record["cudalab"]
    by_id = {e["id"]: e for e in c["exercises"]}
    parts = []
    if c.get("rejected"):
        parts.append(f"submission rejected ({str(c['rejected'])[:80]})")
    for i in ids:
        e = by_id.get(i)
        if e is None:
            parts.append(f"{i} not graded")
            continue
        word = e["status"]
        sig = _runner_signal(record, i) if word == FAILED else None
        if sig:
            word += f" (runner killed by {sig})"
        parts.append(f"{i} {word} {_points(e):g}/{float(e['max_points']):g}")
    return "; ".join(parts)


def check_record(row: Row, record: dict | None, rule, ids: list[str], known: dict) -> None:
    """Fill row's got, exercises and problems from the student's record and its kind's rule."""
    if rule is None:
        row.problems.append(f"unknown kind '{row.kind}'")
    if record is None:
        row.got = "no results in OUT"
        row.problems.append("no signed results.json of this student in OUT")
        return
    c = record["cudalab"]
    row.got = got_text(record, ids)
    by_id = {e["id"]: e for e in c["exercises"]}
    row.exercises = {i: {"status": e["status"], "points": _points(e),
                         "max_points": float(e["max_points"]), "reason": e.get("reason", "")}
                     for i, e in by_id.items() if i in ids}
    if rule is None:
        return
    _, named, others = rule
    if others == REJECTED and not c.get("rejected"):
        row.problems.append("the submission was not rejected")
    elif others != REJECTED and c.get("rejected"):
        row.problems.append(f"the submission was rejected: {c['rejected']}")
    for i in ids:
        e = by_id.get(i)
        if e is None:
            row.problems.append(f"{i} not in the student's results")
            continue
        why = judge(named.get(i, others), e, float(known[i].points), record)
        if why:
            row.problems.append(why)


def check(dest: Path, out: Path, kinds: dict, ids: list[str], known: dict) -> dict:
    """Every student of DEST.EXPECTED.csv against its record in OUT -> the result (JSON-able)."""
    path = expected_csv(dest)
    expected = read_expected(path)
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise CheckError(f"exercise(s) {', '.join(unknown)} not in the course's manifests")
    if not out.is_dir():
        raise CheckError(f"{out}: not a folder")
    records, warnings, _ = classreport.load_records([out], known)
    by_student = {r["cudalab"]["student"]: r for r in records}
    rows = []
    for student, kind, text in expected:
        rule = kinds.get(kind)
        if rule is not None and text and text != rule[0]:
            warnings.append(f"{student}: EXPECTED.csv says '{text}', checked against the rule of "
                            f"kind {kind} today: '{rule[0]}'")
        row = Row(student, kind, rule[0] if rule else text)
        check_record(row, by_student.pop(student, None), rule, ids, known)
        rows.append(row)
    for student in sorted(by_student):   # graded, yet not in the class made
        row = Row(student, "?", "(not in EXPECTED.csv)", got=got_text(by_student[student], ids))
        row.problems.append("a student of OUT that EXPECTED.csv does not list")
        rows.append(row)
    per_kind: dict[str, list[int]] = {}
    for r in rows:
        k = per_kind.setdefault(r.kind, [0, 0])
        k[0] += r.ok
        k[1] += 1
    matching = sum(r.ok for r in rows)
    return {"expected_csv": str(path), "out": str(out), "exercises": ids,
            "students": len(rows), "matching": matching,
            "passed": bool(rows) and matching == len(rows),
            "kinds": {k: {"matching": v[0], "students": v[1]} for k, v in per_kind.items()},
            "rows": [{"student": r.student, "kind": r.kind, "expected": r.expected, "got": r.got,
                      "ok": r.ok, "problems": r.problems, "exercises": r.exercises} for r in rows],
            "warnings": warnings}


def markdown(result: dict) -> str:
    """The check as Markdown: a line of totals, the table (student, kind, expected, got, ok)."""
    lines = ["# Generated class against EXPECTED.csv", "",
             f"{result['matching']} of {result['students']} students as expected "
             f"({md_text(result['expected_csv'])} against {md_text(result['out'])}; exercises "
             f"{', '.join(result['exercises'])}).", ""]
    lines += ["| student | kind | expected | got | ok |", "| --- | --- | --- | --- | --- |"]
    for r in result["rows"]:
        ok = "yes" if r["ok"] else "**no**: " + md_text("; ".join(r["problems"]))
        lines.append(f"| {md_text(r['student'])} | {md_text(r['kind'])} | {md_text(r['expected'])} "
                     f"| {md_text(r['got'])} | {ok} |")
    if result["warnings"]:
        lines += ["", "Warnings:", ""] + [f"- {md_text(w)}" for w in result["warnings"]]
    return "\n".join(lines) + "\n"


def write(result: dict, prefix: Path) -> tuple[Path, Path]:
    """PREFIX.md and PREFIX.json."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    md, js = Path(f"{prefix}.md"), Path(f"{prefix}.json")
    md.write_text(markdown(result))
    js.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return md, js
