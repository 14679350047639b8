"""tools/gpu-check's steps that grade a class: redteam (tools/redteam --gpu), partial (partial
starters, tools/mutate --partial-starters) and mutation (tools/mutate --write), the last two
graded with tools/grade --submissions and scored with tools/mutate --score, and class
(tools/make-class's class graded with tools/grade-class with and without the sandbox, each
output checked with tools/make-class --check)."""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

from .context import NO_DEVICE, SANDBOX_OVERHEAD_LIMIT, Context, skip_starter_only, tail

# The exercises tools/make-class writes (its FILES; a host test keeps the two equal)
CLASS_EXERCISES = ("1.1", "1.2", "1.3", "1.4")
# The two gradings of the class step: (mode, what the report calls it)
CLASS_MODES = (("sandbox", "sandboxed"), ("none", "CUDALAB_SANDBOX=none"))


def step_redteam(ctx: Context, rec: dict, progress, env_info: dict) -> None:
    """tools/redteam --gpu: every attack of tests/redteam/ must score 0 (or be rejected), every
    control full marks, every side-effect check pass; its report goes to DIR/redteam/."""
    if skip_starter_only(ctx, rec, "the red-team suite (tests/redteam, not in the student edition) "
                         "grades hostile submissions against the reference solutions"):
        return
    logs = ctx.step_logs("redteam")
    if not env_info.get("gpu_present"):
        rec["messages"].append(f"{NO_DEVICE}: the red-team suite grades on a GPU "
                               "(tools/redteam --host-only runs its host part without one)")
        rec["summary"] = f"not run: {NO_DEVICE}"
        return
    out = (ctx.out or ctx.work) / "redteam"
    # The grader's work stays in the build folder (inside the course, as a class's
    # output usually is); only redteam.md/.json and the grader's log go to DIR.
    argv = [sys.executable, str(ctx.root / "tools" / "redteam"), "--gpu", "--out", str(out),
            "--work", str(ctx.work / "redteam"), "--jobs", str(ctx.jobs)]
    rc, output, secs = ctx.run(argv, logs / "redteam.log")
    rec["details"].update(rc=rc, seconds=round(secs, 1), markdown=str(out / "redteam.md"))
    try:
        data = json.loads((out / "redteam.json").read_text())
    except (OSError, ValueError) as e:
        rec["messages"].append(f"tools/redteam wrote no redteam.json (exit {rc}): {e}\n{tail(output)}")
        rec["summary"] = "no red-team report"
        return
    attacks, controls, checks = data.get("attacks", []), data.get("controls", []), data.get("checks", [])
    counts = {"attacks": len(attacks), "stopped": sum(1 for a in attacks if a.get("passed")),
              "controls": len(controls), "full_marks": sum(1 for c in controls if c.get("passed")),
              "checks": len(checks), "checks_passed": sum(1 for c in checks if c.get("passed"))}
    rec["details"].update(counts)
    if data.get("error"):
        rec["messages"].append(f"the red-team run did not finish: {data['error']}")
    for a in attacks:
        if not a.get("passed"):
            rec["messages"].append(f"attack {a['name']}: {'; '.join(a.get('problems', []))}")
    for c in controls:
        if not c.get("passed"):
            rec["messages"].append(f"control {c['name']}: {'; '.join(c.get('problems', []))}")
    for c in checks:
        if not c.get("passed"):
            rec["messages"].append(f"side effect: {c['check']}: {c.get('detail', '')}")
    rec["summary"] = (f"{counts['stopped']}/{counts['attacks']} attacks stopped, "
                      f"{counts['full_marks']}/{counts['controls']} controls full marks, "
                      f"{counts['checks_passed']}/{counts['checks']} side-effect checks")
    rec["status"] = "passed" if rc == 0 and data.get("passed") and attacks and controls else "failed"


def class_selectors(ctx: Context) -> list[str]:
    """The exercise selectors of the partial and mutation classes: the chapters, or all."""
    return list(ctx.chapters) or ["all"]


def class_grader(ctx: Context, script: str, ids: list[str], subs: Path, out: Path) -> list[str]:
    """tools/SCRIPT IDS --submissions SUBS --out OUT --jobs N: a class grader's command line."""
    return [sys.executable, str(ctx.root / "tools" / script), *ids, "--submissions", str(subs),
            "--out", str(out), "--jobs", str(ctx.jobs)]


def graded_flags(ctx: Context, shared: Path, timeout: float) -> list[str]:
    """The flags of a grading after --prepare-only: its shared build, --parallel submissions
    at once on each GPU (every GPU of the machine: ctx.gpus, when there are several), a time
    limit per test program."""
    gpus = ["--gpus", ",".join(ctx.gpus)] if len(ctx.gpus) > 1 else []
    return ["--shared-build", str(shared), "--per-gpu", str(ctx.parallel), *gpus, "--timeout", f"{timeout:g}"]


SCORE_RESERVE = 45.0  # seconds --class-budget keeps for scoring and the report


def grade_class(ctx: Context, rec: dict, logs: Path, subs: Path, ids: list[str], graded: Path,
                extra: list[str]) -> int:
    """tools/grade IDS --submissions SUBS --out GRADED: the instructor's build first
    (--prepare-only, incremental), then every submission, --jobs compiles and --parallel
    submissions at once on the GPU; -> the grader's exit code."""
    grade = class_grader(ctx, "grade", ids, subs, graded)
    rc, out, secs = ctx.run(grade + ["--prepare-only"], logs / "prepare.log")
    rec["details"]["prepare"] = {"rc": rc, "seconds": round(secs, 1)}
    if rc != 0:
        rec["messages"].append(f"tools/grade --prepare-only exited {rc}:\n{tail(out)}")
        return rc
    budget = None
    if ctx.class_deadline is not None:  # --class-budget: stop in time to score what was graded
        budget = max(30.0, ctx.class_deadline - time.monotonic() - SCORE_RESERVE)
    rc, out, secs = ctx.run(grade + graded_flags(ctx, graded / "shared", ctx.class_timeout) + extra,
                            logs / "grade.log", timeout=budget)
    rec["details"]["grade"] = {"rc": rc, "seconds": round(secs, 1)}
    if rc == 124 and budget is not None:
        rec["messages"].append(f"the grading was stopped after {budget:.0f} s (--class-budget): "
                               "what was graded by then is scored, the rest is listed as not graded")
    if rc not in (0, 1):
        rec["messages"].append(f"tools/grade --submissions exited {rc}:\n{tail(out)}")
    return rc


def class_preconditions(ctx: Context, rec: dict, env_info: dict, what: str) -> bool:
    """A GPU is needed to grade a class: record why not -> False."""
    if env_info.get("gpu_present"):
        return True
    rec["messages"].append(f"{NO_DEVICE}: grading the {what} needs a GPU")
    rec["summary"] = f"not run: {NO_DEVICE}"
    return False


def step_partial(ctx: Context, rec: dict, progress, env_info: dict) -> None:
    """Partial starters (tools/mutate --partial-starters) graded as a class: every one must fail."""
    if skip_starter_only(ctx, rec, "partial starters are made from the solutions"):
        return
    logs = ctx.step_logs("partial")
    if ctx.chapters:
        rec["details"]["chapters"] = ctx.chapters
    if not class_preconditions(ctx, rec, env_info, "partial starters"):
        return
    work = ctx.work / "partial"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    subs, graded = work / "class", work / "graded"
    mutate = [sys.executable, str(ctx.root / "tools" / "mutate")]
    rc, out, _ = ctx.run(mutate + ["--partial-starters", str(subs), *class_selectors(ctx)],
                         logs / "write.log")
    listing = work / "class.partial.json"
    if rc != 0 or not listing.exists():
        rec["messages"].append(f"tools/mutate --partial-starters exited {rc}:\n{tail(out)}")
        rec["summary"] = "no partial starters written"
        return
    ids = sorted({p["exercise"] for p in json.loads(listing.read_text())["partials"].values()},
                 key=lambda i: [int(x) for x in i.split(".")])
    if not ids:
        rec["status"] = "passed"
        rec["summary"] = "no exercise has two student regions" + ctx.scope_note()
        return
    progress()
    grade_class(ctx, rec, logs, subs, ids, graded, ["--fast", "--fail-fast"])
    report = (ctx.out or ctx.work) / "partial" / "partial"
    rc, out, _ = ctx.run(mutate + ["--score", str(graded), "--partials", str(listing),
                                   "--report", str(report)], logs / "score.log")
    try:
        data = json.loads(Path(f"{report}.json").read_text())
    except (OSError, ValueError) as e:
        rec["messages"].append(f"tools/mutate --score wrote no partial.json (exit {rc}): {e}\n"
                               f"{tail(out)}")
        rec["summary"] = "no partial-starter report"
        return
    c = data["counts"]
    rec["details"].update(markdown=f"{report}.md", total=data["total"], counts=c)
    rec["messages"] += data["problems"]
    for r in data["partials"]:
        if r["verdict"] == "does not compile":
            rec["messages"].append(f"{r['id']}: does not compile (it fails, but not by its tests)")
    rec["summary"] = (f"{c['fails']}/{data['total']} partial starters fail their tests"
                      + (f", {c['does not compile']} do not compile" if c["does not compile"] else "")
                      + (f", {c['PASSES']} PASS" if c["PASSES"] else "")
                      + (f", {c['not graded']} not graded" if c["not graded"] else "")
                      + ctx.scope_note())
    rec["status"] = "passed" if data.get("passed") else "failed"


def step_mutation(ctx: Context, rec: dict, progress, env_info: dict) -> None:
    """A class of mutants (tools/mutate --write) graded with the default grading, then scored."""
    if skip_starter_only(ctx, rec, "mutants are made from the solutions"):
        return
    logs = ctx.step_logs("mutation")
    rec["details"].update(max_per_exercise=ctx.max_per_exercise, seed=ctx.mutation_seed,
                          operators=ctx.mutation_operators or "all")
    if ctx.chapters:
        rec["details"]["chapters"] = ctx.chapters
    if not class_preconditions(ctx, rec, env_info, "mutants"):
        return
    work = ctx.work / "mutation"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    subs, graded = work / "class", work / "graded"
    mutate = [sys.executable, str(ctx.root / "tools" / "mutate")]
    argv = mutate + ["--write", str(subs), *class_selectors(ctx), "--seed", str(ctx.mutation_seed)]
    if ctx.max_per_exercise is not None:
        argv += ["--max-per-exercise", str(ctx.max_per_exercise)]
    if ctx.mutation_operators:
        argv += ["--operators", ctx.mutation_operators]
    # Trivial Compiler Equivalence: a mutant compiled to the solution's own code is equivalent
    # and costs no GPU time (its compile uses the GPU build's compile_commands.json).
    argv += ["--tce", "--jobs", str(ctx.jobs), "--build-dir", str(ctx.build_dir)]
    rc, out, _ = ctx.run(argv, logs / "write.log")
    listing = work / "class.mutants.json"
    if rc != 0 or not listing.exists():
        rec["messages"].append(f"tools/mutate --write exited {rc}:\n{tail(out)}")
        rec["summary"] = "no mutants written"
        return
    ids = sorted({m["exercise"] for m in json.loads(listing.read_text())["mutants"].values()},
                 key=lambda i: [int(x) for x in i.split(".")])
    if not ids:
        rec["messages"].append("tools/mutate wrote no mutant")
        rec["summary"] = "no mutants"
        return
    progress()
    grade_class(ctx, rec, logs, subs, ids, graded, ["--fail-fast"])
    report = (ctx.out or ctx.work) / "mutation" / "mutation"
    rc, out, _ = ctx.run(mutate + ["--score", str(graded), "--mutants", str(listing),
                                   "--report", str(report)], logs / "score.log")
    try:
        data = json.loads(Path(f"{report}.json").read_text())
    except (OSError, ValueError) as e:
        rec["messages"].append(f"tools/mutate --score wrote no mutation.json (exit {rc}): {e}\n"
                               f"{tail(out)}")
        rec["summary"] = "no mutation report"
        return
    exercises = data.get("exercises", {})
    survived = sum(len(e["survived"]) for e in exercises.values())
    by_sanitizer = sum(e["killed_by_sanitizer"] for e in exercises.values())
    by_check = sum(e.get("killed_by_check", 0) for e in exercises.values())
    not_graded = [s["id"] for e in exercises.values() for s in e["not_graded"]]
    wrong = [s["id"] for e in exercises.values() for s in e["equivalent_but_killed"]]
    no_compile = sum(len(e["did_not_compile"]) for e in exercises.values())
    rec["details"].update(markdown=f"{report}.md", score=data.get("score"),
                          killed=data.get("killed"), counted=data.get("counted"),
                          survived=survived, killed_only_by_sanitizer=by_sanitizer,
                          killed_by_source_check=by_check,
                          did_not_compile=no_compile, not_graded=len(not_graded))
    for e_id, e in exercises.items():
        for s_ in e["survived"]:
            rec["messages"].append(f"survived: {s_['id']} ({s_['what']})")
    if not_graded:
        rec["messages"].append("not graded: " + ", ".join(not_graded))
    for w in wrong:
        rec["messages"].append(f"{w} is listed as equivalent in the manifest but was killed")
    score = data.get("score")
    rec["summary"] = (f"mutation score {'n/a' if score is None else f'{100 * score:.1f} %'} "
                      f"({data.get('killed')} of {data.get('counted')} killed, {by_sanitizer} only "
                      f"by the sanitizer"
                      + (f", {by_check} by the source check" if by_check else "")
                      + f"; {survived} survived"
                      + (f", {no_compile} did not compile" if no_compile else "") + ")"
                      + ctx.scope_note())
    rec["status"] = "passed" if not not_graded and not wrong and data.get("counted") else "failed"


def _no_sandbox_word(env: dict) -> bool:
    return env.get("CUDALAB_SANDBOX", "").strip().lower() in ("none", "off", "0")


def earlier_class_runs(ctx: Context) -> dict[str, dict]:
    """The gradings of the last class record (state.json) that this one may keep: same commit,
    machine, class size and workers per GPU, each run finished."""
    prev = ctx.previous.get("class") or {}
    d = prev.get("details") or {}
    if (prev.get("commit") != ctx.commit or d.get("class_size") != ctx.class_size
            or d.get("per_gpu") != ctx.parallel or d.get("host") != os.uname().nodename):
        return {}
    return {m: r for m, r in (d.get("runs") or {}).items()
            if isinstance(r, dict) and r.get("rc") == 0 and isinstance(r.get("seconds"), (int, float))}


def step_class(ctx: Context, rec: dict, progress, env_info: dict) -> None:
    """tools/make-class's class (--class-size students) graded twice with the same flags, with the
    sandbox and with CUDALAB_SANDBOX=none: both outputs must match EXPECTED.csv for every student
    (tools/make-class --check) and the sandbox may add at most SANDBOX_OVERHEAD_LIMIT % of time."""
    if skip_starter_only(ctx, rec, "tools/make-class makes its class from the solutions"):
        return
    logs = ctx.step_logs("class")
    d = rec["details"]
    d.update(class_size=ctx.class_size, timeout=ctx.class_step_timeout, jobs=ctx.jobs,
             per_gpu=ctx.parallel, overhead_limit_percent=SANDBOX_OVERHEAD_LIMIT,
             host=os.uname().nodename)
    if not class_preconditions(ctx, rec, env_info, "generated class"):
        return
    work = ctx.work / "class"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    subs, prepared = work / "class", work / "prepared"
    make = [sys.executable, str(ctx.root / "tools" / "make-class")]
    rc, out, _ = ctx.run(make + [str(subs), "-n", str(ctx.class_size)], logs / "make-class.log")
    if rc != 0 or not (work / "class.EXPECTED.csv").exists():
        rec["messages"].append(f"tools/make-class exited {rc}:\n{tail(out)}")
        rec["summary"] = "no class written"
        return
    # Both gradings: no compiler cache (neither profits from the other's), and the sandboxed
    # one without an instructor's CUDALAB_SANDBOX=none of the environment.
    envs = {"sandbox": {k: v for k, v in ctx.env.items()
                        if not (k == "CUDALAB_SANDBOX" and _no_sandbox_word(ctx.env))},
            "none": dict(ctx.env, CUDALAB_SANDBOX="none")}
    for e in envs.values():
        e["CCACHE_DISABLE"] = "1"
    tools = ctx.root / "tools"
    rc, out, _ = ctx.run([sys.executable, "-m", "cudalab_grade.sandbox", "--check"],
                         logs / "sandbox-check.log",
                         env=dict(envs["sandbox"], PYTHONPATH=os.pathsep.join(
                             [str(tools)] + [p for p in [ctx.env.get("PYTHONPATH")] if p])))
    chosen = re.search(r"^chosen: (\S+)", out, re.M)
    d["sandbox"] = chosen.group(1) if chosen else None
    d["sandbox_check"] = [ln for ln in out.splitlines() if ":" in ln and not ln.startswith("$ ")]
    if rc != 0 or d["sandbox"] in (None, "none"):
        rec["messages"].append("no sandbox works on this machine (python3 -m cudalab_grade.sandbox "
                               f"--check, exit {rc}):\n{tail(out)}")
        rec["summary"] = "no sandbox"
        return
    grade = lambda out_dir: class_grader(ctx, "grade-class", list(CLASS_EXERCISES), subs, out_dir)
    rc, out, secs = ctx.run(grade(prepared) + ["--prepare-only"], logs / "prepare.log")
    d["prepare"] = {"rc": rc, "seconds": round(secs, 1)}
    if rc != 0:
        rec["messages"].append(f"tools/grade-class --prepare-only exited {rc}:\n{tail(out)}")
        rec["summary"] = "the instructor's build failed"
        return
    progress()
    flags = graded_flags(ctx, prepared / "shared", ctx.class_step_timeout) + ["--fast"]
    runs: dict[str, dict] = {}
    d["runs"] = runs
    kept = earlier_class_runs(ctx)
    for mode, label in CLASS_MODES:
        if mode not in ctx.class_modes:
            if mode in kept:
                runs[mode] = dict(kept[mode], raw_seconds=kept[mode]["seconds"], earlier=True)
                continue
            rec["messages"].append(f"{label}: not run now (--class-modes), and no earlier record "
                                   f"of this commit, machine, class size and --parallel to keep")
            runs[mode] = {"label": label, "rc": None, "seconds": 0.0, "raw_seconds": 0.0,
                          "matching": 0, "students": None, "passed": False}
            continue
        graded = work / f"graded-{mode}"
        rc, out, secs = ctx.run(grade(graded) + flags, logs / f"grade-{mode}.log",
                                env=envs[mode])
        run = runs[mode] = {"label": label, "rc": rc, "seconds": round(secs, 1), "raw_seconds": secs}
        if rc != 0:
            rec["messages"].append(f"tools/grade-class ({label}) exited {rc}:\n{tail(out)}")
        report = (ctx.out or ctx.work) / "class" / f"check-{mode}"
        crc, cout, _ = ctx.run(make + ["--check", str(subs), str(graded), "--report", str(report)],
                               logs / f"check-{mode}.log")
        run.update(check_rc=crc, markdown=f"{report}.md")
        try:
            data = json.loads(Path(f"{report}.json").read_text())
        except (OSError, ValueError) as e:
            rec["messages"].append(f"tools/make-class --check ({label}) wrote no JSON (exit {crc}): "
                                   f"{e}\n{tail(cout)}")
            run.update(matching=0, students=None, passed=False)
            progress()
            continue
        run.update(matching=data["matching"], students=data["students"],
                   passed=crc == 0 and bool(data.get("passed")))
        bad = [r for r in data["rows"] if not r["ok"]]
        for r in bad[:20]:
            rec["messages"].append(f"{label}: {r['student']} ({r['kind']}): expected {r['expected']}; "
                                   f"got {r['got']}: {'; '.join(r['problems'])}")
        if len(bad) > 20:
            rec["messages"].append(f"{label}: and {len(bad) - 20} more students not as expected "
                                   f"({report}.md)")
        progress()
    sandboxed, none = (runs[m].pop("raw_seconds") for m, _ in CLASS_MODES)
    finished = all(r["rc"] == 0 for r in runs.values())
    overhead = 100.0 * (sandboxed - none) / none if finished and none > 0 else None
    within = overhead is not None and overhead <= SANDBOX_OVERHEAD_LIMIT
    d.update(overhead_percent=None if overhead is None else round(overhead, 1),
             overhead_within_limit=within)
    if overhead is None:
        rec["messages"].append("the sandbox's overhead is not known: a grading did not finish")
    elif not within:
        rec["messages"].append(f"the sandbox added {overhead:.1f} % to the class's time, more than "
                               f"{SANDBOX_OVERHEAD_LIMIT:g} %")
    fig = lambda r: f"{r.get('matching', 0)}/{r.get('students') if r.get('students') is not None else '?'}"
    rec["summary"] = (f"{ctx.class_size} students: sandboxed ({d['sandbox']}) {runs['sandbox']['seconds']:g} s, "
                      f"none {runs['none']['seconds']:g} s, overhead "
                      f"{'n/a' if overhead is None else f'{overhead:.1f} %'} (limit "
                      f"{SANDBOX_OVERHEAD_LIMIT:g} %); as expected {fig(runs['sandbox'])} and "
                      f"{fig(runs['none'])}")
    rec["status"] = "passed" if within and all(r["passed"] for r in runs.values()) else "failed"


def class_table(d: dict) -> list[str]:
    """The class step in the report: (mode, seconds, students matching), and the overhead line."""
    runs = d.get("runs") or {}
    if not runs:
        return []
    prep = (d.get("prepare") or {}).get("seconds")
    lines = [f"{d.get('class_size')} students of tools/make-class, graded with the same flags "
             f"(--fast, --jobs {d.get('jobs')}, --per-gpu {d.get('per_gpu')}, --timeout "
             f"{d.get('timeout', 0):g}, CCACHE_DISABLE=1) after one --prepare-only"
             + (f" ({prep} s)" if prep is not None else "") + "; each output checked with "
             "tools/make-class --check.", "",
             "Sandbox check (python3 -m cudalab_grade.sandbox --check): "
             + "; ".join(d.get("sandbox_check") or ["no output"]), "",
             "| mode | seconds | students matching |", "| --- | ---: | ---: |"]
    for mode, label in CLASS_MODES:
        r = runs.get(mode)
        if r is None:
            continue
        name = f"{label} ({d.get('sandbox')})" if mode == "sandbox" else label
        name += " (an earlier invocation, --class-modes)" if r.get("earlier") else ""
        exit_note = "" if r.get("rc") == 0 else f" (exit {r.get('rc')})"
        students = r.get("students") if r.get("students") is not None else "?"
        lines.append(f"| {name} | {r.get('seconds')}{exit_note} | {r.get('matching', 0)}/{students} |")
    o = d.get("overhead_percent")
    limit = d.get("overhead_limit_percent", SANDBOX_OVERHEAD_LIMIT)
    lines += ["", "Overhead of the sandbox: " + ("not known" if o is None else
                                                 f"{o:.1f} % ((sandboxed − none) / none)")
              + f", limit {limit:g} %: " + ("ok" if d.get("overhead_within_limit") else "FAILED")]
    tables = [r["markdown"] for r in runs.values() if r.get("markdown")]
    if tables:
        lines += ["", "Student by student: " + ", ".join(tables)]
    return lines
