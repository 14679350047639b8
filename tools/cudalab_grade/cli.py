"""tools/grade and tools/grade-class: main, and run, which sends the parsed options to their
mode: the student's modes (clistudent.py), grading one tree (here), or a class (cliclass.py).
The two scripts are front ends over it with their own options (clioptions.py)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from . import build, cliclass, progress, report, trace
from .clioptions import STUDENT, parse_args
from .clisetup import build_step, no_gpu_message, record_progress, set_sandbox
from .clistudent import compile_only, print_hints, print_list, run_profile, run_watch
from .grading import (CRASHED, DEVICE_PROFILES, EXIT_NO_GPU, EXIT_OK, EXIT_SETUP, EXIT_USAGE,
                      FAILED, NO_GPU, PASSED, PROFILE_ENV, QUICK_TOOLS, SANITIZER, SANITIZER_TOOLS,
                      TIMEOUT, Options, Result, grade_all, max_points, exercise_jobs_for)
from .manifest import UsageError, load_all, select


def write_output(dest: str | None, text: str) -> None:
    if dest is None:
        return
    if dest == "-":
        sys.stdout.write(text)
    else:
        Path(dest).write_text(text)


def run(args, root: Path) -> int:
    if args.merge and args.similarity:
        raise UsageError("--similarity reads a submissions folder: it does not go with --merge")
    if args.merge:
        return cliclass.run_merge(args, root)
    with trace.phase("manifests"):
        chapters = load_all(root)
    if args.list:
        print_list(chapters)
        return EXIT_OK
    if args.hint:
        print_hints(chapters, args.hint, args.level)
        return EXIT_OK
    if args.progress:
        if args.watch is not None:
            raise UsageError("--progress and --watch: one at a time")
        detail = select(chapters, args.selectors) if args.selectors else None
        st = progress.load(root)
        sys.stdout.write(progress.table(chapters, st, "solution" if args.solutions else "starter",
                                        root, detail))
        return EXIT_OK
    if args.profile is not None:
        return run_profile(args, root, chapters)
    if args.watch is not None:
        if args.watch and args.selectors or len(args.selectors) > 1:
            raise UsageError("--watch takes one exercise (or chapter): tools/grade --watch 1.2")
        for flag, name in (("compile_only", "--compile-only"), ("submissions", "--submissions"),
                           ("json", "--json"), ("csv", "--csv"), ("markdown", "--markdown")):
            if getattr(args, flag):
                raise UsageError(f"--watch grades one exercise at a time: it does not go with {name}")
    exercises = select(chapters, args.selectors if args.watch is None else
                       [args.watch or (args.selectors or ["all"])[0]])
    if args.device_profile:
        os.environ[PROFILE_ENV] = args.device_profile  # every program started from here on inherits it
    elif os.environ.get(PROFILE_ENV, "") not in ("", *DEVICE_PROFILES):
        raise UsageError(f"{PROFILE_ENV}={os.environ[PROFILE_ENV]} is no known GPU; "
                         f"the valid profiles are {', '.join(DEVICE_PROFILES)}")
    tools = tuple(t for t in args.sanitize.replace(" ", "").split(",") if t)
    for t in tools:
        if t not in SANITIZER_TOOLS:
            raise UsageError(f"unknown compute-sanitizer tool '{t}' (use {', '.join(SANITIZER_TOOLS)})")
    if args.parallel < 1:
        raise UsageError("--parallel must be at least 1")
    if args.parallel > 1 and args.submissions is not None:
        raise UsageError("--parallel is for one tree; a class runs --per-gpu submissions at once")
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    if args.compile_only:
        if args.submissions is not None or args.no_build:
            raise UsageError("--compile-only builds one tree: it goes with neither --submissions "
                             "nor --no-build")
        for flag in ("json", "csv", "markdown"):
            if getattr(args, flag):
                raise UsageError(f"--{flag} writes grades: --compile-only grades nothing")
    if (args.similarity or args.similarity_threshold is not None) and args.submissions is None:
        raise UsageError("--similarity and --similarity-threshold go with --submissions DIR")
    if args.submissions is not None:
        return cliclass.run_class(args, root, exercises, tools)  # checks the GPU its own way
    for flag in ("hidden_tests", "gpus", "shared_build", "only", "show_seed"):
        if getattr(args, flag):
            raise UsageError(f"--{flag.replace('_', '-')} goes with --submissions DIR")
    if args.slurm or args.prepare_only:
        raise UsageError("--slurm and --prepare-only go with --submissions DIR")
    return grade_tree(args, root, chapters, exercises, tools)


def grade_tree(args, root: Path, chapters, exercises, tools: tuple[str, ...]) -> int:
    """Grades the exercises of one tree (the student's starter/, or --solutions), or runs
    --watch or --compile-only over it."""
    default_dir = args.build_dir is None
    build_dir = (root / "build" / "default") if default_dir else args.build_dir.resolve()
    if not default_dir and not args.no_build and not (build_dir / "CMakeCache.txt").exists():
        raise UsageError(f"{build_dir} is not a configured build directory (no CMakeCache.txt); "
                         "configure it with cmake --preset, or leave out --build-dir")
    opts = Options(root=root, build_dir=build_dir,
                   implementation="solution" if args.solutions else "starter",
                   timeout=args.timeout, seed=args.seed, perf=args.perf, sanitize=tools,
                   quick_sanitize=not tools and not args.fast, fail_fast=args.fail_fast,
                   exercise_jobs=exercise_jobs_for(args.parallel))
    to_stdout = "-" in (args.json, args.csv, args.markdown)
    board = sys.stderr if to_stdout else sys.stdout

    def say(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    if args.watch is not None:
        return run_watch(args, root, chapters, opts, say)

    meta = {"implementation": opts.implementation, "seed": opts.seed, "perf": opts.perf,
            "sanitize": list(tools) or (["quick: " + ",".join(QUICK_TOOLS)
                                         + " (and synccheck where the file synchronizes)"]
                                        if opts.quick_sanitize else []),
            "build_dir": opts.shown(build_dir)}
    if not args.compile_only:  # before any build: no GPU, nothing to grade
        with trace.phase("GPU probe (cuInit, cuDeviceGetCount in a child process)"):
            present, why = build.probe_gpu()
        if present is False:
            sys.stderr.write(no_gpu_message(why))
            results = [Result(ex, max_points(ex, opts), status=NO_GPU,
                              reason="not graded: no CUDA device (grading needs a GPU)")
                       for ex in exercises]
            write_output(args.json, report.gradescope(results, meta))
            write_output(args.csv, report.csv_text(results))
            write_output(args.markdown, report.markdown(results))
            return EXIT_NO_GPU
        if present is None:
            say(f"grade: cannot tell whether this machine has a GPU ({why}); going on")
    with trace.phase("build check" + (" (--no-build: are the programs fresh?)" if args.no_build else "")):
        problem = build_step(args, exercises, opts, say)
    if problem is not None:
        sys.stderr.write(problem)
        return EXIT_SETUP
    if args.compile_only:
        return compile_only(exercises, opts)
    with trace.phase("sandbox setup (a trial run)"):
        set_sandbox(args, opts)
    results = grade_all(exercises, opts, args.parallel, say)
    with trace.phase("progress record"):
        record_progress(opts, results, say)
    with trace.phase("report"):
        board.write(report.terminal(results))
        board.flush()
        if args.fast:
            board.write("--fast: no sanitizer pass ran, nor the small-GPU pass (the tests under a "
                        "smaller GPU's limits, where the exercise has one); grade without --fast "
                        "before you hand in\n")
        write_output(args.json, report.gradescope(results, meta))
        write_output(args.csv, report.csv_text(results))
        write_output(args.markdown, report.markdown(results))
    statuses = {r.status for r in results}
    if NO_GPU in statuses and not statuses & {PASSED, FAILED, CRASHED, TIMEOUT, SANITIZER}:
        return EXIT_NO_GPU
    return EXIT_OK


def main(argv: list[str] | None, root: Path, audience: str = STUDENT, prog: str = "tools/grade",
         doc: str = "") -> int:
    """tools/grade (audience STUDENT) or tools/grade-class (CLASS): doc is the script's
    docstring, its --help."""
    args = parse_args(argv, audience, prog, doc)
    try:
        return run(args, root)
    except UsageError as e:
        print(f"{args.tool}: {e}", file=sys.stderr)
        return EXIT_USAGE
