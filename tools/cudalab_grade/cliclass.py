"""Grading a class from the command line (tools/grade-class, and tools/grade --submissions or
--merge, which run the same code): the checks of the class options, then class grading
(classgrade.py), its Slurm scripts (slurm.py), the similarity report (similarity.py) or the
merge of several runs (classreport.py)."""
from __future__ import annotations

import sys
from pathlib import Path

from .grading import EXIT_FAILED, EXIT_NO_GPU, EXIT_OK, EXIT_SETUP, EXIT_USAGE, NO_GPU
from .manifest import UsageError, load_all


def _out_dir(args, root: Path) -> Path:
    return (args.out or (root / ".grade" / "class")).resolve()


def _slots(args) -> list[str | None]:
    if args.per_gpu < 1:
        raise UsageError("--per-gpu must be at least 1")
    if not args.gpus:
        return [None] * args.per_gpu
    gpus = [g.strip() for g in args.gpus.split(",") if g.strip()]
    if not gpus or not all(g.isdigit() or g.startswith(("GPU-", "MIG-")) for g in gpus):
        raise UsageError(f"--gpus wants GPU indices such as 0,1,2 (got '{args.gpus}')")
    return [g for g in gpus for _ in range(args.per_gpu)]


def _passed_on(args) -> list[str]:
    """The options a Slurm task repeats."""
    out = list(args.selectors)
    for flag, value in (("--seed", args.seed), ("--hidden-tests", args.hidden_tests and
                                                args.hidden_tests.resolve()),
                        ("--timeout", args.timeout), ("--build-timeout", args.build_timeout),
                        ("--submission-timeout", args.submission_timeout or None),
                        ("--max-output", args.max_output), ("--max-memory", args.max_memory)):
        if value is not None:
            out += [flag, str(value)]
    if args.sanitize:
        out += ["--sanitize", args.sanitize]
    out += ["--perf"] if args.perf else []
    out += ["--show-seed"] if args.show_seed else []
    out += ["--grade-missing"] if args.grade_missing else []
    out += ["--fast"] if args.fast else []
    out += ["--fail-fast"] if args.fail_fast else []
    return out


def run_class(args, root: Path, exercises, tools) -> int:
    from . import classbuild, classgrade, slurm, submissions

    if not args.submissions.is_dir():
        raise UsageError(f"--submissions {args.submissions}: not a folder")
    if args.no_build or args.build_dir or args.solutions:
        raise UsageError("--no-build, --build-dir and --solutions do not go with --submissions")
    if args.hidden_tests is not None and not args.hidden_tests.is_dir():
        raise UsageError(f"--hidden-tests {args.hidden_tests}: not a folder")
    if args.build_timeout <= 0 or args.submission_timeout < 0 or args.max_output < 0 \
            or args.max_memory < 0:
        raise UsageError("time limits must be positive, and --max-output and --max-memory not negative")
    out = _out_dir(args, root)

    def say(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    subs = args.submissions.resolve()
    if args.similarity_threshold is not None and not args.similarity:
        raise UsageError("--similarity-threshold goes with --similarity")
    if args.similarity:
        if args.slurm or args.prepare_only or args.roster:
            raise UsageError("--similarity compares the submissions instead of grading them: it "
                             "goes with neither --slurm, --prepare-only nor --roster")
        return run_similarity(args, root, out, subs, exercises, say)
    if args.slurm:
        entries = submissions.discover(subs)
        if args.only:
            entries = [e for e in entries if e.path.name in args.only or e.student in args.only]
            missing = set(args.only) - {e.path.name for e in entries} - {e.student for e in entries}
            if missing:
                raise UsageError(f"no submission named {', '.join(sorted(missing))} in {subs}")
        if not entries:
            raise UsageError(f"no submission in {subs}: no Slurm array to write")
        for e in entries:
            if "\n" in e.path.name or "\r" in e.path.name:
                raise UsageError(f"the submission {e.path.name!r} has a line break in its name, "
                                 "which the Slurm scripts' list of entries cannot hold: rename it")
        d = slurm.write_scripts(root, out, subs, entries, _passed_on(args),
                                partition=args.slurm_partition, time_limit=args.slurm_time,
                                cpus=args.jobs or 4)
        print(f"wrote {d}/submit.sh and the sbatch scripts for {len(entries)} submission(s); "
              f"run {d}/submit.sh on the cluster's login node")
        return EXIT_OK
    shared = args.shared_build.resolve() if args.shared_build else None
    if args.prepare_only:
        try:
            sb = classbuild.prepare_shared(root, out / "shared", exercises, args.perf,
                                           args.hidden_tests, args.jobs, say)
        except RuntimeError as e:
            print(f"{args.tool}: {e}", file=sys.stderr)
            return 1
        for t, why in sorted(sb.problems.items()):
            say(f"warning: {t}: {why}")
        say(f"the instructor's build is ready in {sb.build_dir} ({sb.seconds:g} s)")
        return EXIT_OK
    roster = _roster(args)
    co = classgrade.ClassOptions(
        root=root, submissions=subs, out=out, exercises=exercises, only=args.only,
        seed=args.seed, show_seed=args.show_seed,
        hidden_dir=args.hidden_tests.resolve() if args.hidden_tests else None,
        perf=args.perf, sanitize=tools, quick_sanitize=not tools and not args.fast,
        fail_fast=args.fail_fast,
        timeout=args.timeout, build_timeout=args.build_timeout,
        submission_timeout=args.submission_timeout, max_output=args.max_output << 20,
        max_rss=int(args.max_memory * (1 << 30)), slots=_slots(args), jobs=args.jobs or 2,
        keep_work=args.keep_work, grade_missing=args.grade_missing, shared_dir=shared,
        sandbox=not args.no_sandbox)
    try:
        graded, records = classgrade.run_class(co, say)
    except (ValueError, RuntimeError) as e:
        print(f"{args.tool}: {e}", file=sys.stderr)
        return 1 if isinstance(e, RuntimeError) else EXIT_USAGE
    if roster is not None:   # the LMS files again, with the roster's ids
        from . import classreport
        from .escape import one_line
        for w in classreport.write_lms(out, records, roster):
            print(f"warning: {one_line(w)}", file=sys.stderr)
    statuses = {e["status"] for r in records for e in r["cudalab"]["exercises"]}
    print(f"{len(records)} submission(s) graded: {out / 'gradebook.csv'}, {out / 'summary.md'}, "
          f"reports in {out / 'students'}")
    if graded == 0 and NO_GPU in statuses:
        print("grading needs a CUDA GPU: no exercise could be graded on this machine "
              "(no CUDA device); every report says so", file=sys.stderr)
        return EXIT_NO_GPU
    return EXIT_OK


def run_similarity(args, root: Path, out: Path, subs: Path, exercises, say) -> int:
    """--submissions DIR --similarity: similarity.md and .html in OUT (similarity.py)."""
    from . import signing, similarity
    from .escape import one_line
    from .submissions import student_id

    threshold = similarity.THRESHOLD if args.similarity_threshold is None \
        else args.similarity_threshold
    if not 0 < threshold <= 1:
        raise UsageError("--similarity-threshold is a share of the code: above 0, at most 1")
    try:
        cd = similarity.load_copydetect()
    except similarity.Missing as e:
        what, fix = similarity.setup_problem(e)
        print(f"{args.tool}: setup problem: {what}, fix: {fix}", file=sys.stderr)
        return EXIT_SETUP
    if args.only:
        known = {n for p in subs.iterdir() for n in (p.name, student_id(p.name))}
        missing = sorted(set(args.only) - known)
        if missing:
            raise UsageError(f"no submission named {', '.join(missing)} in {subs}")
    say(f"similarity: comparing the submissions in {subs} with copydetect "
        f"{getattr(cd, '__version__', '?')} ...")
    results, students, notes = similarity.run(root, subs, exercises, args.only, threshold, say, cd)
    try:
        similarity.write(out, results, students, notes, threshold,
                         getattr(cd, "__version__", "?"))
    except signing.Untrusted as e:
        raise UsageError(f"--out {out}: {e}") from None
    except OSError as e:
        print(f"{args.tool}: cannot write the similarity report in {out}: {e}", file=sys.stderr)
        return EXIT_FAILED
    for n in notes:
        say(f"similarity: {one_line(n)}")
    flagged = sum(len(r.flagged) for r in results)
    print(f"{len(students)} submission(s), {flagged} pair(s) at or above {threshold:g}: "
          f"{out / 'similarity.md'}, {out / 'similarity.html'} (pseudonyms: "
          f"{out / 'pseudonyms.csv'})")
    return EXIT_OK


def _roster(args):
    """The --roster file read (lms.Roster), or None."""
    if args.roster is None:
        return None
    from . import lms
    try:
        return lms.Roster.load(args.roster)
    except lms.RosterError as e:
        raise UsageError(f"--roster {e}") from None


def run_merge(args, root: Path) -> int:
    from . import classreport, signing
    from .escape import one_line

    folders = [d.resolve() for d in args.merge]
    for d in folders:
        if not d.is_dir():
            raise UsageError(f"--merge {d}: not a folder")
    out = _out_dir(args, root)
    exercises = [e for c in load_all(root) for e in c.exercises]
    roster = _roster(args)
    try:
        n, warnings = classreport.merge(folders, out, exercises, roster=roster)
    except signing.Untrusted as e:
        raise UsageError(f"--out {out}: {e}") from None
    for w in warnings:
        print(f"warning: {one_line(w)}", file=sys.stderr)
    print(f"merged {n} student(s) into {out / 'gradebook.csv'} and {out / 'summary.md'}")
    return EXIT_OK if n else 1
