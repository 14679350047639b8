"""The scoreboard (terminal, Markdown) and the machine-readable outputs (JSON, CSV)."""
from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field

from . import leaderboard, manifest
from .escape import csv_text as escape_csv_text, md_block, md_text
from .grading import NO_GPU, PASSED, Result
from .manifest import Exercise

WIDTH = 100
HEADERS = ("id", "exercise", "tests", "perf", "points", "reason")


def _row(r: Result) -> tuple[str, ...]:
    return (r.exercise.id, r.exercise.slug, r.tests, r.perf,
            f"{r.points:.1f}/{r.max_points:g}", r.reason)


def table(results: list[Result], width: int = WIDTH) -> str:
    """Plain ASCII table, no line longer than `width`; reasons are wrapped."""
    return _grid(HEADERS, [_row(r) for r in results], width)


def _grid(headers: tuple[str, ...], rows: list[tuple[str, ...]], width: int = WIDTH) -> str:
    """Plain ASCII table, no line longer than `width`; the last column is wrapped."""
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(headers[:-1])]
    widths[1] = min(widths[1], 22)
    reason_width = max(20, width - sum(widths) - 2 * len(widths))
    lines = []

    def emit(cells: tuple[str, ...]) -> None:
        wrapped = textwrap.wrap(cells[-1], reason_width) or [""]
        fixed = "  ".join(c[:w].ljust(w) for c, w in zip(cells[:-1], widths))
        lines.append(f"{fixed}  {wrapped[0]}".rstrip())
        for more in wrapped[1:]:
            lines.append(f"{' ' * len(fixed)}  {more}".rstrip())

    emit(headers)
    lines.append("-" * min(width, sum(widths) + 2 * len(widths) + reason_width))
    for row in rows:
        emit(row)
    return "\n".join(lines)


def details(results: list[Result]) -> str:
    parts = []
    for r in results:
        if r.details:
            body = "\n".join(r.details)
            parts.append(f"--- {r.exercise.id} {r.exercise.slug}: {r.reason}\n"
                         + textwrap.indent(body, "  "))
    return "\n\n".join(parts)


def totals(results: list[Result]) -> tuple[int, float, float]:
    done = sum(1 for r in results if r.status == PASSED)
    return done, sum(r.points for r in results), sum(r.max_points for r in results)


def progress(results: list[Result]) -> str:
    done, got, best = totals(results)
    return f"progress: {done}/{len(results)} exercises complete, {got:.1f}/{best:.1f} points"


def targets(results: list[Result]) -> list[str]:
    """One line per GPU the speeds were measured on: which GPU the targets were set on, and for
    how many exercises the target moved to this one (docs/guides/grading.md, "A target on
    another GPU"). [] when no speed was measured."""
    lines = []
    for device in sorted({r.device or "an unnamed GPU" for r in results if r.target is not None}):
        timed = [r for r in results if r.target is not None and (r.device or "an unnamed GPU") == device]
        moved = sum(r.target_scale is not None for r in timed)
        cal = timed[0].target_device
        if manifest.gpu_key(device) == manifest.gpu_key(cal or ""):
            lines.append(f"speed measured on {device}, the GPU the targets were set on")
        elif moved:
            here = sum(r.target_reference is not None for r in timed)
            lines.append(f"speed measured on {device}; targets set on {cal}, moved to this GPU by the "
                         f"reference solution's ratio here over there for {moved} of {len(timed)} "
                         "exercise(s)" + (f" ({here} measured in this run)" if here else "")
                         + ("; the others keep their target" if moved < len(timed) else ""))
        else:
            lines.append(f"speed measured on {device}; targets as set on {cal}: no reference "
                         "solution's ratio was recorded for this GPU")
    return lines


def footer(results: list[Result]) -> list[str]:
    """Notes after the progress line: the GPU the speeds were measured on, no GPU, hints for
    what failed."""
    notes = targets(results)
    no_gpu = [r for r in results if r.status == NO_GPU]
    if no_gpu:
        notes.append(f"grading needs a CUDA GPU: {len(no_gpu)} exercise(s) were not graded "
                     "on this machine (no CUDA device)")
    stuck = [r.exercise.id for r in results if r.status not in (PASSED, NO_GPU)
             and r.exercise.hints and not r.reason.startswith(("not built", "grader error"))]
    if stuck:
        notes.append(f"stuck? tools/grade --hint {stuck[0]} gives a hint")
    return notes


def linked(results: list[Result]) -> list[str]:
    """One line per exercise that calls earlier ones (the manifest's uses): what was linked."""
    return [r.linked for r in results if r.linked]


def terminal(results: list[Result]) -> str:
    out = [table(results)]
    more = details(results)
    if more:
        out += ["", more]
    out += ["", progress(results)] + linked(results) + footer(results)
    return "\n".join(out) + "\n"


def markdown(results: list[Result]) -> str:
    """The scoreboard in Markdown; every string that may come from a submission is escaped."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(md_text(c) for c in _row(r)) + " |" for r in results]
    lines += ["", progress(results), ""]
    gpus = targets(results)
    lines += [md_text(n) + "  " for n in gpus] + ([""] if gpus else [])
    lines += [md_text(n) + "  " for n in linked(results)] + ([""] if linked(results) else [])
    for r in results:
        if r.details:
            lines += [f"### {r.exercise.id} {r.exercise.slug}", "", md_text(r.reason), ""]
            lines += md_block("\n".join(r.details)) + [""]
    return "\n".join(lines) + "\n"


def _machine(r: Result) -> dict:
    return {"id": r.exercise.id, "slug": r.exercise.slug, "status": r.status,
            "correctness_points": r.correctness_points, "perf_points": r.perf_points,
            "max_points": r.max_points, "ratio": r.ratio, "reason": r.reason,
            "seconds": r.seconds, "hidden_suite": r.hidden_suite, "hidden_tests": r.hidden_tests,
            "ratio_interval": ([r.ratio_low, r.ratio_high] if r.ratio_low is not None else None),
            "repetitions": r.repetitions, "gpu": r.gpu, "perf_verdict": r.perf_verdict,
            "time_ns": r.time_ns, "baseline_ns": r.baseline_ns, "ratio_raw": r.ratio_raw,
            "calibration": r.calibration, "copy_gbps": r.copy_gbps, "device": r.device,
            "host": r.host, "target": r.target, "target_calibration": r.target_calibration,
            "target_scale": r.target_scale, "target_device": r.target_device,
            "target_reference": r.target_reference, "linked": r.linked,
            "alone": r.alone}


def gradescope(results: list[Result], meta: dict) -> str:
    """Gradescope results.json, plus a `cudalab` object for our own tools; with --perf
    (meta["perf"]) also Gradescope's `leaderboard`: the speed ratio of every exercise that
    passed its tests (leaderboard.gradescope_entries)."""
    tests = []
    for r in results:
        output = r.reason + ("\n\n" + "\n".join(r.details) if r.details else "")
        output += "\n\n" + r.linked if r.linked else ""
        tests.append({"name": f"{r.exercise.id} {r.exercise.slug}: {r.exercise.title}",
                      "number": r.exercise.id, "score": round(r.points, 1),
                      "max_score": r.max_points,
                      "status": "passed" if r.status == PASSED else "failed",
                      "output": output, "visibility": "visible"})
    _, got, _ = totals(results)
    data = {"score": round(got, 1), "output": "\n".join([progress(results)] + footer(results)),
            "stdout_visibility": "visible", "tests": tests,
            "cudalab": dict(meta, exercises=[_machine(r) for r in results])}
    if meta.get("perf"):
        data["leaderboard"] = leaderboard.gradescope_entries(data)
    return json.dumps(data, indent=2) + "\n"


def csv_text(results: list[Result]) -> str:
    """One row per exercise, every cell through escape.csv_text (no formula, no bare CR)."""
    rows = [["id", "slug", "status", "points", "max_points", "perf_ratio", "reason"]]
    rows += [(r.exercise.id, r.exercise.slug, r.status, f"{r.points:.1f}", f"{r.max_points:g}",
              "" if r.ratio is None else f"{r.ratio:g}", r.reason) for r in results]
    return escape_csv_text(rows)


@dataclass
class CompileCheck:
    """One exercise under tools/grade --compile-only."""
    exercise: Exercise
    compiled: bool = True
    build: str = "compiles"
    clean: bool = True                  # no forbidden API found
    forbidden: str = "none found"
    details: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the check could not look at


def compile_only(checks: list[CompileCheck]) -> str:
    """The --compile-only report: build state and forbidden-API check per exercise."""
    rows = [(c.exercise.id, c.exercise.slug, c.build, c.forbidden) for c in checks]
    out = [_grid(("id", "exercise", "build", "forbidden-API check"), rows)]
    parts = []
    for c in checks:
        if c.details:
            what = "; ".join(x for x in (c.build if not c.compiled else "",
                                         c.forbidden if not c.clean else "") if x)
            parts.append(f"--- {c.exercise.id} {c.exercise.slug}: {what}\n"
                         + textwrap.indent("\n".join(c.details), "  "))
    if parts:
        out += ["", "\n\n".join(parts)]
    compiled = sum(c.compiled for c in checks)
    forbidden = sum(not c.clean for c in checks)
    out += ["", f"compile-only: {compiled} of {len(checks)} exercise(s) compile, {forbidden} "
                "fail the forbidden-API check",
            "no test ran: grading needs a GPU (run tools/grade on a machine with one)"]
    notes: dict[str, list[str]] = {}
    for c in checks:
        for n in c.notes:
            notes.setdefault(n, []).append(c.exercise.id)
    for n, ids in notes.items():
        who = "every exercise" if len(ids) == len(checks) else ", ".join(ids)
        out.append(f"not checked ({who}): {n}")
    return "\n".join(out) + "\n"
