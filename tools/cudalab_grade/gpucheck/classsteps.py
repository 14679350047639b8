"""tools/gpu-check's steps that grade a class: redteam (tools/redteam --gpu), partial (partial
starters, tools/mutate --partial-starters) and mutation (tools/mutate --write), the last two
graded with tools/grade --submissions and scored with tools/mutate --score."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from .context import NO_DEVICE, Context, skip_starter_only, tail


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


def grade_class(ctx: Context, rec: dict, logs: Path, subs: Path, ids: list[str], graded: Path,
                extra: list[str]) -> int:
    """tools/grade IDS --submissions SUBS --out GRADED: the instructor's build first
    (--prepare-only, incremental), then every submission, --jobs compiles and --parallel
    submissions at once on the GPU; -> the grader's exit code."""
    grade = [sys.executable, str(ctx.root / "tools" / "grade"), *ids, "--submissions", str(subs),
             "--out", str(graded), "--jobs", str(ctx.jobs)]
    rc, out, secs = ctx.run(grade + ["--prepare-only"], logs / "prepare.log")
    rec["details"]["prepare"] = {"rc": rc, "seconds": round(secs, 1)}
    if rc != 0:
        rec["messages"].append(f"tools/grade --prepare-only exited {rc}:\n{tail(out)}")
        return rc
    rc, out, secs = ctx.run(grade + ["--shared-build", str(graded / "shared"), "--per-gpu",
                                     str(ctx.parallel), "--timeout", f"{ctx.class_timeout:g}",
                                     *extra], logs / "grade.log")
    rec["details"]["grade"] = {"rc": rc, "seconds": round(secs, 1)}
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
    grade_class(ctx, rec, logs, subs, ids, graded, ["--fast"])
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
    grade_class(ctx, rec, logs, subs, ids, graded, [])
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
    not_graded = [s["id"] for e in exercises.values() for s in e["not_graded"]]
    wrong = [s["id"] for e in exercises.values() for s in e["equivalent_but_killed"]]
    no_compile = sum(len(e["did_not_compile"]) for e in exercises.values())
    rec["details"].update(markdown=f"{report}.md", score=data.get("score"),
                          killed=data.get("killed"), counted=data.get("counted"),
                          survived=survived, killed_only_by_sanitizer=by_sanitizer,
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
                      f"by the sanitizer; {survived} survived"
                      + (f", {no_compile} did not compile" if no_compile else "") + ")"
                      + ctx.scope_note())
    rec["status"] = "passed" if not not_graded and not wrong and data.get("counted") else "failed"
