"""tools/gpu-check's steps over the course tree (build, test, profiles, grade), and run_step,
which runs any step and keeps its record whatever happens."""
from __future__ import annotations

import concurrent.futures
import json
import queue
import re
import shutil
import sys
import threading
import time
import traceback
import xml.etree.ElementTree as ET

from ..grading import EXIT_NO_GPU, PASSED, PROFILE_ENV  # the grader's no-GPU exit status, profile variable
from .bench import step_bench
from .classsteps import step_class, step_mutation, step_partial, step_redteam
from .context import NO_DEVICE, Context, Interrupted, tail, utc_now
from .loop import step_loop
from .portability import step_portability
from .results import (GradeFormatError, ctest_summary_line, evaluate_profile_solutions,
                      evaluate_solutions, evaluate_starter, expected_max_points, fmt_points,
                      parse_ctest_output, parse_junit)
from .sanitize import step_sanitize


def step_build(ctx: Context, rec: dict, progress) -> None:
    logs = ctx.step_logs("build")
    if ctx.default_build_dir:
        configure = ["cmake", "--preset", "gpu"]
        build = ["cmake", "--build", "--preset", "gpu", "-j", str(ctx.jobs)]
    else:
        configure = ["cmake", "--preset", "gpu", "-B", str(ctx.build_dir)]
        build = ["cmake", "--build", str(ctx.build_dir), "-j", str(ctx.jobs)]
    rc, out, secs = ctx.run(configure, logs / "configure.log")
    rec["details"]["configure"] = {"rc": rc, "seconds": round(secs, 1)}
    if rc != 0:
        rec["messages"].append(f"configure failed (exit {rc}):\n{tail(out)}")
        rec["summary"] = "configure failed"
        return
    rc, out, secs = ctx.run(build, logs / "build.log")
    steps = re.findall(r"^\[(\d+)/(\d+)\]", out, re.M)
    warnings = len(re.findall(r"\bwarning\b", out, re.I))
    rec["details"]["build"] = {"rc": rc, "seconds": round(secs, 1),
                               "edges": int(steps[-1][1]) if steps else None, "warning_lines": warnings}
    if rc != 0:
        errors = [ln for ln in out.splitlines() if re.search(r"\berror\b|FAILED:", ln)][:20]
        rec["messages"].append(f"build failed (exit {rc}):\n" + "\n".join(errors or [tail(out)]))
        rec["summary"] = "build failed"
        return
    rec["status"] = "passed"
    rec["summary"] = f"built ({rec['details']['build']['edges'] or 0} steps, {warnings} warning lines)"


def step_test(ctx: Context, rec: dict, progress, env_info: dict) -> None:
    logs = ctx.step_logs("test")
    junit = (ctx.build_dir / "ctest-junit.xml").resolve()
    no_gpu = not env_info.get("gpu_present")
    if no_gpu:
        rec["messages"].append(f"{NO_DEVICE}: {env_info.get('nvidia_smi_error', 'no GPU found')}; "
                               "with CUDALAB_REQUIRE_GPU=1 every GPU test fails")
    if not (ctx.build_dir / "CTestTestfile.cmake").exists():
        rec["messages"].append(f"{ctx.build_dir} is not configured: run the build step first")
        rec["summary"] = (NO_DEVICE + "; " if no_gpu else "") + "not built"
        return
    if junit.exists():
        junit.unlink()
    if ctx.default_build_dir:
        argv = ["ctest", "--preset", "gpu", "--output-junit", str(junit)]
    else:
        argv = ["ctest", "--test-dir", str(ctx.build_dir), "--output-on-failure",
                "--no-tests=error", "--output-junit", str(junit)]
    argv += ["-j", str(ctx.parallel)]
    if ctx.chapters:
        # Test names are <chapter>/<slug>; the host tests (host/...) always run.
        argv += ["-R", "^(" + "|".join(map(re.escape, [*ctx.chapters, "host"])) + ")/"]
        rec["details"]["chapters"] = ctx.chapters
    rc, out, secs = ctx.run(argv, logs / "ctest.log")
    counts = None
    if junit.exists():
        try:
            counts = parse_junit(junit.read_text(errors="replace"))
            shutil.copy(junit, logs / "ctest-junit.xml")
        except ET.ParseError as e:
            rec["messages"].append(f"cannot parse {junit}: {e}")
    if counts is None:
        counts = parse_ctest_output(out)
    summary_line = ctest_summary_line(out)
    rec["details"].update(rc=rc, seconds=round(secs, 1), ctest_summary=summary_line, counts=counts)
    if counts is None:
        rec["messages"].append(f"no test counts from ctest (exit {rc}):\n{tail(out)}")
        rec["summary"] = "ctest gave no counts"
        return
    if NO_DEVICE in out and not no_gpu:
        rec["messages"].append(f"a test reported '{NO_DEVICE}' although a GPU was found")
    if counts["no_device"]:
        rec["messages"].append(f"{NO_DEVICE} in: {', '.join(counts['no_device'][:10])}")
    if counts["failed_names"]:
        rec["messages"].append("failed: " + ", ".join(counts["failed_names"]))
    if counts["skipped"]:
        rec["messages"].append("skipped (a failure here): " + ", ".join(counts["skipped_names"]))
    rec["summary"] = (f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
                      + ctx.scope_note() + (f"; {NO_DEVICE}" if no_gpu else ""))
    ok = (rc == 0 and counts["total"] > 0 and counts["failed"] == 0 and counts["skipped"] == 0
          and not counts["no_device"] and not no_gpu)
    rec["status"] = "passed" if ok else "failed"


def grade_argv(ctx: Context, selectors: list[str], extra: list[str], out_json) -> list[str]:
    """tools/grade SELECTORS on the build, not rebuilding, --parallel K, JSON to out_json."""
    return [sys.executable, str(ctx.root / "tools" / "grade"), *selectors, "--build-dir",
            str(ctx.build_dir), "--no-build", *extra, "--parallel", str(ctx.parallel),
            "--json", str(out_json)]


def profile_ctest(ctx: Context, name: str, env: dict, logs, r: dict):
    """ctest's every chapter test program under one profile -> its counts (or None)."""
    junit = (logs / f"ctest-{name}.xml").resolve()
    argv = ["ctest", "--test-dir", str(ctx.build_dir), "--output-on-failure", "--no-tests=error",
            "--output-junit", str(junit), "-j", str(ctx.parallel)]
    argv += (["-R", "^(" + "|".join(map(re.escape, ctx.chapters)) + ")/"] if ctx.chapters
             else ["-E", "^host/"])  # the host tests need no profile
    rc, out, secs = ctx.run(argv, logs / f"ctest-{name}.log", env=env)
    counts = None
    if junit.exists():
        try:
            counts = parse_junit(junit.read_text(errors="replace"))
        except ET.ParseError as e:
            r["problems"].append(f"cannot parse {junit}: {e}")
    counts = counts or parse_ctest_output(out)
    r.update(rc=rc, seconds=round(secs, 1))
    if counts is None:
        r["problems"].append(f"tests: no counts from ctest (exit {rc}): {tail(out, 5)}")
    return counts


def counts_from_grading(exercises: list[dict]) -> dict:
    """Test-program counts from the solutions' grading: each exercise is one test program,
    run with its exercise's filter, which selects every suite of the program that touches
    the device (tests/host/tools/test_gpu_check checks it against the built programs)."""
    failed = [f"{e['id']} {e.get('slug', '')}".strip() for e in exercises if e["status"] != PASSED]
    return {"total": len(exercises), "passed": len(exercises) - len(failed), "failed": len(failed),
            "skipped": 0, "failed_names": failed, "skipped_names": [], "source": "grade"}


def profile_perf(ctx: Context, name: str, env: dict, logs, r: dict) -> dict:
    """The solutions of --profile-perf graded with --perf under one profile -> per exercise
    its ratio, interval and speed points (a missed target is recorded, not a failure: the
    targets are set on a real GPU, and a profile launches for a smaller one)."""
    out_json = logs / f"grade-{name}-perf.json"
    argv = grade_argv(ctx, ctx.profile_perf, ["--solutions", "--perf", "--fast"], out_json)
    rc, out, secs = ctx.run(argv, logs / f"grade-{name}-perf.log", env=env)
    try:
        block = json.loads(out_json.read_text())["cudalab"]
        records = block.get("exercises", [])
    except (OSError, ValueError, KeyError, TypeError) as e:
        r["problems"].append(f"perf: no usable grader JSON (exit {rc}): {e}")
        return {}
    perf: dict = {}
    for v in records if isinstance(records, list) else []:
        if not isinstance(v, dict):
            continue
        perf[str(v.get("id"))] = {k: v.get(k) for k in ("slug", "status", "ratio", "ratio_interval",
                                                        "perf_points", "perf_verdict", "repetitions")}
        if v.get("status") != PASSED:
            r["problems"].append(f"perf: {v.get('id')} {v.get('slug')}: {v.get('status')}")
    return perf


def profile_run(ctx: Context, name: str, env: dict, logs, progress) -> dict:
    """One device profile: the solutions graded (every exercise passes; each exercise's test
    program runs under the profile) and the untouched starter (0 points); with
    --profile-ctest, first ctest's every chapter test program too. -> the profile's record."""
    selectors = list(ctx.chapters) or ["all"]
    r: dict = {"problems": []}
    if env.get("CUDA_VISIBLE_DEVICES") and env.get("CUDA_VISIBLE_DEVICES") != ctx.env.get("CUDA_VISIBLE_DEVICES"):
        r["gpu"] = env["CUDA_VISIBLE_DEVICES"]
    counts = None
    if ctx.profile_ctest:
        counts = profile_ctest(ctx, name, env, logs, r)
        progress()
    runs = [("solutions", ["--solutions", "--fast"], evaluate_profile_solutions),
            ("starter", ["--fast", "--fail-fast"], evaluate_starter)]  # the verdict only
    if ctx.starter_only:
        runs = runs[1:]
    for label, extra, evaluate in runs:
        out_json = logs / f"grade-{name}-{label}.json"
        rc, out, secs = ctx.run(grade_argv(ctx, selectors, extra, out_json), logs / f"grade-{name}-{label}.log",
                                env=env)
        entry: dict = {"rc": rc, "seconds": round(secs, 1)}
        try:
            entry.update(evaluate(json.loads(out_json.read_text())))
        except (OSError, ValueError, GradeFormatError) as e:
            entry.update(passed=False, problems=[f"no usable grader JSON (exit {rc}): {e}"])
        if label == "solutions" and counts is None and entry.get("exercises"):
            counts = counts_from_grading(entry["exercises"])
        r[label] = {k: v for k, v in entry.items() if k != "exercises"}
        r["problems"] += [f"{label}: {p}" for p in entry.get("problems", [])]
        progress()
    if ctx.profile_perf and not ctx.starter_only:
        r["perf"] = profile_perf(ctx, name, env, logs, r)
        progress()
    r["counts"] = counts
    if counts is not None and counts.get("source") != "grade":
        if counts["failed_names"]:
            r["problems"].append("tests failed: " + ", ".join(counts["failed_names"]))
        if counts["skipped"]:
            r["problems"].append("tests skipped: " + ", ".join(counts["skipped_names"]))
    if counts is None and not ctx.starter_only:
        r["problems"].append("no test counts (neither ctest nor the solutions' grading gave any)")
    r["passed"] = ((ctx.starter_only or (counts is not None and counts["total"] > 0
                                          and counts["failed"] == 0 and counts["skipped"] == 0))
                   and not r["problems"])
    return r


def step_profiles(ctx: Context, rec: dict, progress, env_info: dict) -> None:
    """Every chapter test program, the solutions and the starter under each device profile;
    with several GPUs, one profile per GPU at a time."""
    logs = ctx.step_logs("profiles")
    rec["details"]["profiles"] = ctx.profiles
    if ctx.chapters:
        rec["details"]["chapters"] = ctx.chapters
    if not env_info.get("gpu_present"):
        rec["messages"].append(f"{NO_DEVICE}: the profiles step needs a GPU")
        rec["summary"] = NO_DEVICE
        return
    if not (ctx.build_dir / "CTestTestfile.cmake").exists():
        rec["messages"].append(f"{ctx.build_dir} is not configured: run the build step first")
        rec["summary"] = "not built"
        return
    slots = ctx.gpus  # gpu-check sets them once (context.gpu_slots)
    rec["details"]["gpus_used"] = max(1, len(slots))
    free: queue.Queue = queue.Queue()
    for slot in slots or [None]:
        free.put(slot)
    lock = threading.Lock()

    def locked_progress() -> None:
        with lock:
            progress()

    def one(name: str) -> dict:
        slot = free.get()
        try:
            env = dict(ctx.env, **{PROFILE_ENV: name})  # CUDALAB_DEVICE_PROFILE
            if slot is not None and len(slots) > 1:
                env["CUDA_VISIBLE_DEVICES"] = slot
            r = profile_run(ctx, name, env, logs, locked_progress)
            with lock:  # kept as it comes: an interrupted step still reports the finished ones
                rec["details"].setdefault("per_profile", {})[name] = r
                progress()
            return r
        finally:
            free.put(slot)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(slots))) as pool:
        per_profile: dict = dict(zip(ctx.profiles, pool.map(one, ctx.profiles)))
    for name, r in per_profile.items():
        for p in r["problems"]:
            rec["messages"].append(f"{name}: {p}")
    rec["details"]["per_profile"] = per_profile
    ok = [n for n, r in per_profile.items() if r.get("passed")]
    rec["summary"] = (f"{len(ok)}/{len(per_profile)} profiles clean ({', '.join(per_profile)})"
                      + ctx.scope_note())
    rec["status"] = "passed" if per_profile and len(ok) == len(per_profile) else "failed"


def step_grade(ctx: Context, rec: dict, progress, env_info: dict) -> None:
    logs = ctx.step_logs("grade")
    grade = ctx.root / "tools" / "grade"
    if not grade.exists():
        rec["messages"].append(f"{grade} not found")
        rec["summary"] = "tools/grade missing"
        return
    numbers = ctx.chapter_numbers()
    expected = {i: p for i, p in expected_max_points(ctx.root).items()
                if not ctx.chapters or i.split(".")[0] in numbers}
    selectors = [ch for ch in ctx.chapters] or ["all"]
    if ctx.chapters:
        rec["details"]["chapters"] = ctx.chapters
    results = {}
    runs = [("solutions", ["--solutions", "--perf"], evaluate_solutions),
            ("starter", ["--fail-fast"], evaluate_starter)]  # every exercise fails: the verdict only
    if ctx.starter_only:
        runs = runs[1:]  # no solutions to grade: the untouched starter only
        rec["details"]["starter_only"] = ctx.starter_only
    for label, extra, evaluate in runs:
        out_json = logs / f"grade-{label}.json"
        rc, out, secs = ctx.run(grade_argv(ctx, selectors, extra, out_json), logs / f"grade-{label}.log")
        entry: dict = {"rc": rc, "seconds": round(secs, 1)}
        results[label] = entry
        if rc == EXIT_NO_GPU:
            entry["problems"] = [f"{NO_DEVICE} (tools/grade exit {EXIT_NO_GPU})"]
            continue
        try:
            data = json.loads(out_json.read_text())
            entry.update(evaluate(data, expected))
        except (OSError, ValueError, GradeFormatError) as e:
            entry["problems"] = [f"no usable grader JSON (exit {rc}): {e}", tail(out, 8)]
            continue
        if rc not in (0, 1) and entry.get("passed"):
            entry["passed"] = False
            entry["problems"].append(f"tools/grade exited {rc}")
        progress()
    rec["details"].update(results)
    for label, entry in results.items():
        for p in entry.get("problems", []):
            rec["messages"].append(f"{label}: {p}")
    sol, sta = results.get("solutions", {}), results.get("starter", {})

    def fig(e: dict) -> str:
        if "points" not in e:
            return "error"
        return f"{fmt_points(e['points'])}/{fmt_points(e['max_points'])}"
    if ctx.starter_only:
        rec["summary"] = f"starter {fig(sta)} (starter only)" + ctx.scope_note()
        rec["status"] = "passed" if sta.get("passed") else "failed"
        return
    rec["summary"] = f"solutions {fig(sol)}, starter {fig(sta)}" + ctx.scope_note()
    rec["status"] = "passed" if sol.get("passed") and sta.get("passed") else "failed"


STEP_FUNCTIONS = {"build": step_build, "portability": step_portability, "test": step_test,
                  "profiles": step_profiles, "grade": step_grade, "loop": step_loop, "redteam": step_redteam,
                  "partial": step_partial, "mutation": step_mutation, "class": step_class,
                  "sanitize": step_sanitize, "bench": step_bench}


def run_step(ctx: Context, step: str, env_info: dict, save) -> dict:
    rec = {"step": step, "status": "failed", "seconds": 0.0, "started": utc_now(),
           "commit": ctx.commit, "summary": "", "messages": [], "details": {}}
    start = time.monotonic()
    print(f"\n=== gpu-check: {step}", flush=True)

    def progress() -> None:
        save(dict(rec, status="running", seconds=round(time.monotonic() - start, 1)))
    try:
        if step == "build":
            step_build(ctx, rec, progress)
        else:
            STEP_FUNCTIONS[step](ctx, rec, progress, env_info)
    except (Interrupted, KeyboardInterrupt):
        rec["status"] = "interrupted"
        rec["messages"].append("interrupted (SIGTERM or Ctrl-C) before the step finished")
        rec["summary"] = rec["summary"] or "interrupted"
        rec["seconds"] = round(time.monotonic() - start, 1)
        raise Interrupted(rec)
    except Exception as e:  # a bug or an odd machine must not lose the report
        rec["status"] = "failed"
        rec["messages"].append(f"gpu-check error: {e}\n{traceback.format_exc()}")
        rec["summary"] = rec["summary"] or f"gpu-check error: {e}"
    rec["seconds"] = round(time.monotonic() - start, 1)
    return rec
