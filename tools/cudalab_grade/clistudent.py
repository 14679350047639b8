"""tools/grade's modes for the student at work, besides grading: --list, --hint, --compile-only,
--profile (the student's kernels beside the reference under ncu) and --watch."""
from __future__ import annotations

import dataclasses
import os
import re
import sys
import textwrap
from pathlib import Path

from . import build, progress, report, source
from .clisetup import (build_step, no_gpu_message, record_progress, set_sandbox,
                       wanted_targets)
from .grading import EXIT_FAILED, EXIT_NO_GPU, EXIT_OK, EXIT_SETUP, PASSED, Options, Result, grade_all
from .manifest import UsageError, find_exercise


def print_list(chapters) -> None:
    for c in chapters:
        print(f"chapter {c.number}: {c.title} ({c.dir})")
        for e in c.exercises:
            perf = f" + {e.perf.points} perf" if e.perf else ""
            print(f"  {e.id:<5} {e.slug:<22} {e.points:>3} points{perf:<10}  {e.title}")


def print_hints(chapters, key: str, level: str) -> None:
    ex = find_exercise(chapters, key)
    if not ex.hints:
        print(f"{ex.id} {ex.slug} has no hints.")
        return
    if level == "all":
        k = len(ex.hints)
    elif level.isdigit() and int(level) >= 1:
        k = min(int(level), len(ex.hints))
    else:
        raise UsageError(f"--level must be a number from 1 to {len(ex.hints)}, or 'all'")
    print(f"{ex.id} {ex.slug}: {ex.title}")
    for i, hint in enumerate(ex.hints[:k], start=1):
        print(textwrap.fill(hint, 96, initial_indent=f"hint {i}/{len(ex.hints)}: ",
                            subsequent_indent="          "))
    if k < len(ex.hints):
        print(f"more: tools/grade --hint {ex.id} --level {k + 1}")


def compile_only(exercises, opts: Options) -> int:
    """--compile-only: whether each exercise's programs built, and the forbidden-API check of
    its file and object; EXIT_OK when every one compiles and passes the check."""
    prefix = str(opts.root.resolve()) + "/"
    checks = []
    for ex in exercises:
        impl = opts.implementation
        targets = list(wanted_targets([ex], opts))
        c = report.CompileCheck(ex)
        problem = next((opts.not_built[t] for t in targets if t in opts.not_built), None)
        if problem is not None:
            c.compiled = False
            c.build = "did not compile" if problem[0] == "did not compile" else "not built"
            c.details += ([] if problem[0] == "did not compile" else [problem[0]]) + problem[1]
        src = opts.root / ex.source(impl)
        if not src.exists():
            c.forbidden = f"no file {ex.source(impl)}"
            c.clean = False
        elif not src.is_file():   # a folder, or a FIFO the check would wait on
            c.forbidden = f"not checked: {ex.source(impl)} is not a file"
        else:
            try:
                rep = source.check_report(ex, src, build_dir=opts.build_dir, impl=impl, root=opts.root)
            except Exception as e:  # the report goes on with the next exercise
                c.forbidden, c.clean = f"check failed: {type(e).__name__}: {e}", False
            else:
                if rep.first is not None:
                    c.forbidden, c.clean = rep.first.message, False
                    c.details += rep.first.details
                elif c.compiled:
                    c.notes += rep.notes
        c.details = [d.replace(prefix, "") for d in c.details]
        checks.append(c)
    sys.stdout.write(report.compile_only(checks))
    sys.stdout.flush()
    return EXIT_OK if all(c.compiled and c.clean for c in checks) else EXIT_FAILED


def run_profile(args, root: Path, chapters) -> int:
    """--profile ID: the exercise's benchmark case under ncu, the student's kernels beside the
    reference solution's (profile.py). The runner runs without the sandbox."""
    from . import bench as gbench
    from . import profile

    if args.selectors or args.submissions is not None or args.compile_only or args.watch is not None:
        raise UsageError("--profile takes one exercise and no other exercise or mode: "
                         "tools/grade --profile 1.4")
    ex = find_exercise(chapters, args.profile)
    if ex.perf is None:
        raise UsageError(f"{ex.id} {ex.slug} has no benchmark case to profile")
    try:
        ncu = profile.find_ncu()
    except profile.ProfileError as e:
        print(e, file=sys.stderr)
        return e.code
    present, why = build.probe_gpu()
    if present is False:
        sys.stderr.write(no_gpu_message(why))
        return EXIT_NO_GPU
    default_dir = args.build_dir is None
    build_dir = (root / "build" / "default") if default_dir else args.build_dir.resolve()
    impl = "solution" if args.solutions else "starter"
    opts = Options(root=root, build_dir=build_dir, implementation=impl, timeout=args.timeout, perf=True)

    def say(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    with_ref = impl == "starter" and (root / ex.source("solution")).exists()
    extra = {ex.bench_target("solution"): ex.source("solution"),
             ex.runner_target("solution"): ex.source("solution")} if with_ref else {}
    problem = build_step(args, [ex], opts, say, extra)
    if problem is not None:
        sys.stderr.write(problem)
        return EXIT_SETUP
    needed = [ex.bench_target(impl), ex.runner_target(impl)]
    for t in needed:
        if t in opts.not_built:
            print(f"tools/grade --profile: {t} is not built ({opts.not_built[t][0]}); "
                  f"tools/grade {ex.id} shows why", file=sys.stderr)
            return EXIT_SETUP
    if with_ref and any(t in opts.not_built for t in extra):
        say("grade: the reference solution's programs are not built: your kernels alone")
        with_ref = False
    _, _, n = gbench.split_name(ex.perf.benchmark)
    only = "^" + re.escape(ex.perf.benchmark) + r"(/[a-z_]+:[^/]+)*(/(manual_time|real_time|process_time))?$"
    sides = [profile.Side("yours" if impl == "starter" else "solution", opts.exe(ex.bench_target(impl)),
                          opts.exe(ex.runner_target(impl)))]
    if with_ref:
        sides.append(profile.Side("reference solution", opts.exe(ex.bench_target("solution")),
                                  opts.exe(ex.runner_target("solution"))))
    summaries = []
    env = dict(os.environ) | opts.env()
    for side in sides:
        say(f"profiling {ex.id} {ex.slug} ({side.label}) under ncu: {ex.perf.benchmark} ...")
        try:
            summaries.append(profile.profile_side(side, ncu, only, ex.perf.benchmark, n, env,
                                                  timeout=max(args.timeout, 600.0)))
        except profile.ProfileError as e:
            print(e, file=sys.stderr)
            return e.code
    mine, ref = summaries[0], (summaries[1] if len(summaries) > 1 else None)
    chapter = next(c for c in chapters if c.number == ex.chapter_number)
    lesson = root / "chapters" / chapter.dir / "README.md"
    note = "" if ref is not None or impl == "solution" else \
        "(no reference solution in this tree: your kernels alone, judged against what a good kernel reaches)"
    text = profile.advice(mine, ref, ex.id, ex.chapter_number, lesson,
                          f"chapters/{chapter.dir}/README.md")
    sys.stdout.write(profile.report_text(ex.id, ex.slug, ex.perf.benchmark, mine, ref, text, note))
    return EXIT_OK


def run_watch(args, root: Path, chapters, opts: Options, say) -> int:
    """--watch [ID]: grade the exercise, then again on each save of its file (watch.py)."""
    from . import watch

    impl = opts.implementation
    key = args.watch or (args.selectors[0] if args.selectors else "")
    first = watch.pick(chapters, key, progress.load(root), impl)
    flags = " --solutions" if args.solutions else ""
    if first is None:
        print(f"every exercise has passed: nothing left to watch. Watch one anyway with "
              f"tools/grade --watch ID{flags}; your progress: tools/grade --progress{flags}")
        return EXIT_OK
    present, why = build.probe_gpu()  # once: without a GPU there is nothing to watch for
    if present is False:
        sys.stderr.write(no_gpu_message(why))
        return EXIT_NO_GPU
    if present is None:
        say(f"grade: cannot tell whether this machine has a GPU ({why}); going on")
    set_sandbox(args, opts)

    def grade_one(ex) -> Result:
        o = dataclasses.replace(opts, not_built={})
        problem = build_step(args, [ex], o, say)
        if problem is not None:
            raise watch.Stop(EXIT_SETUP, problem)
        results = grade_all([ex], o, 1, say)
        record_progress(o, results, say)
        if args.fast and results[0].status == PASSED:
            results[0].reason += " (--fast: no sanitizer or small-GPU pass ran)"
        return results[0]

    poll, cycles = watch.settings()
    w = watch.Watcher(chapters, root, impl, grade_one, sys.stdout, poll=poll, max_cycles=cycles,
                      flags=flags)
    return w.run(first)
