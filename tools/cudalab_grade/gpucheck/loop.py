"""tools/gpu-check's loop step: how long a student waits for tools/grade on this machine.

The edit-compile loop (`tools/grade EX --solutions --fast`, LOOP_RUNS runs, the median) and
the default grading (the tests and the quick sanitizer pass, once), each with the exercise's
programs at once (the default in a student's tree) and one at a time
(CUDALAB_EXERCISE_JOBS=1), in the same run, so that the two compare. The grader's own build
check is in every run, as in a student's (the build is up to date: the build step made it).
The trace (CUDALAB_GRADE_TRACE=1) of the median --fast run at once says where its time went."""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from .context import Context, skip_starter_only

LOOP_FAST = ("1.1",)                  # the edit-compile loop: 1.1, the first exercise
LOOP_DEFAULT = ("1.1", "2.7", "7.6")  # the default grading: 1.1, and the longest quick passes
LOOP_RUNS = 3
MODES = (("at once", {}), ("one at a time", {"CUDALAB_EXERCISE_JOBS": "1"}))


def _one(ctx: Context, logs: Path, ex: str, fast: bool, mode: str, extra_env: dict, i: int) -> dict:
    """One tools/grade run -> {seconds, status, reason, trace}."""
    tag = f"{ex}-{'fast' if fast else 'default'}-{mode.replace(' ', '-')}-{i}"
    out_json = logs / f"{tag}.json"
    argv = [sys.executable, str(ctx.root / "tools" / "grade"), ex, "--solutions", "--build-dir",
            str(ctx.build_dir), "--json", str(out_json)] + (["--fast"] if fast else [])
    env = dict(ctx.env, CUDALAB_GRADE_TRACE="1", **extra_env)
    rc, out, secs = ctx.run(argv, logs / f"{tag}.log", env=env)
    run = {"seconds": round(secs, 2), "rc": rc, "status": "no result", "reason": "",
           "trace": [ln for ln in out.splitlines() if ln.startswith("grade trace: ")]}
    try:
        e = json.loads(out_json.read_text())["cudalab"]["exercises"][0]
        run.update(status=e["status"], reason=e.get("reason", ""))
    except (OSError, ValueError, KeyError, IndexError) as err:
        run["reason"] = f"no usable grader JSON (exit {rc}): {err}"
    return run


def step_loop(ctx: Context, rec: dict, progress, env_info: dict) -> None:
    if skip_starter_only(ctx, rec, "the loop is timed on the reference solutions"):
        return
    logs = ctx.step_logs("loop")
    rows = []
    # an untimed run first: the sandbox's trial, the page cache, the build check's first look
    _one(ctx, logs, LOOP_FAST[0], True, "warm-up", {}, 0)
    for fast, exercises, runs in ((True, LOOP_FAST, LOOP_RUNS), (False, LOOP_DEFAULT, 1)):
        for ex in exercises:
            for mode, extra in MODES:
                got = [_one(ctx, logs, ex, fast, mode, extra, i + 1) for i in range(runs)]
                secs = sorted(r["seconds"] for r in got)
                median = statistics.median(secs)
                middle = min(got, key=lambda r: abs(r["seconds"] - median))
                rows.append({"exercise": ex, "grading": "--fast" if fast else "default", "programs": mode,
                             "runs": runs, "median": median, "min": secs[0], "max": secs[-1],
                             "status": middle["status"], "reason": middle["reason"],
                             "all_passed": all(r["status"] == "passed" for r in got),
                             "trace": middle["trace"]})
                progress()
    rec["details"]["rows"] = rows
    md = (ctx.out or ctx.work) / "loop" / "loop.md"
    md.parent.mkdir(parents=True, exist_ok=True)
    md.write_text("\n".join(loop_table(rows)) + "\n")
    rec["details"]["markdown"] = str(md)
    bad = [f"{r['exercise']} {r['grading']} {r['programs']}: {r['status']} ({r['reason']})"
           for r in rows if not r["all_passed"]]
    rec["messages"] += bad
    fast = {r["programs"]: r["median"] for r in rows if r["grading"] == "--fast" and r["exercise"] == LOOP_FAST[0]}
    rec["summary"] = (f"{LOOP_FAST[0]} --fast: {fast.get('at once', 0):.2f} s (one program at a time "
                      f"{fast.get('one at a time', 0):.2f} s); default grading of "
                      + ", ".join(f"{r['exercise']} {r['median']:.1f} s" for r in rows
                                  if r["grading"] == "default" and r["programs"] == "at once"))
    rec["status"] = "failed" if bad else "passed"


def loop_table(rows: list[dict]) -> list[str]:
    """The step's Markdown: one row per exercise, grading and way of running its programs, then
    the trace of the first --fast run at once."""
    lines = ["| exercise | grading | programs | runs | median s | min-max s | verdict |",
             "| --- | --- | --- | ---: | ---: | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['exercise']} | {r['grading']} | {r['programs']} | {r['runs']} | {r['median']:.2f} | "
                     f"{r['min']:.2f}-{r['max']:.2f} | {r['status']}: {r['reason'].replace('|', '/')} |")
    traced = next((r for r in rows if r["grading"] == "--fast" and r["programs"] == "at once"), None)
    if traced and traced["trace"]:
        lines += ["", f"Where the median `--fast` run of {traced['exercise']} spent its time "
                      "(`CUDALAB_GRADE_TRACE=1`):", "", "```"]
        lines += [ln.removeprefix("grade trace: ") for ln in traced["trace"]] + ["```"]
    return lines
