"""Grading a class: `tools/grade --submissions DIR`.

Pipeline: the instructor's tree is built once (classbuild.prepare_shared);
then each submission is unpacked, mapped to exercise files, copied into its
own course tree and compiled, exercise by exercise, by a pool of `jobs`
build workers; as soon as a submission is built, one of the GPU workers (one
per slot of `--gpus`, with CUDA_VISIBLE_DEVICES set to it) runs its tests.
Builds of later submissions overlap with the tests of earlier ones.

A submission never stops the class: anything unexpected while grading it
becomes a `grader_error` for that student, and the others go on.
"""
from __future__ import annotations

import json
import os
import queue
import re
import shutil
import threading
import time
import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import classbuild, classreport, proc, report, signing, source, submissions
from .gpulock import GpuLock
from .escape import one_line
from .grading import (FORBIDDEN, GRADED, GRADER_ERROR, NO_GPU, Options, Result, grade,
                      max_points, use_sandbox)
from .manifest import Exercise

NOT_SUBMITTED, REJECTED = "not_submitted", "rejected"


@dataclass
class ClassOptions:
    root: Path
    submissions: Path
    out: Path
    exercises: list[Exercise]
    only: list[str] = field(default_factory=list)
    seed: int | None = None
    show_seed: bool = False           # print the seed in the students' reports (--show-seed)
    hidden_dir: Path | None = None
    perf: bool = False
    sanitize: tuple[str, ...] = ()
    quick_sanitize: bool = False      # the default quick sanitizer pass (grading.QUICK_TOOLS)
    fail_fast: bool = False           # each test program stops at its first failure (--fail-fast)
    sandbox: bool = True              # every runner sandboxed (sandbox.py); False: --no-sandbox
    sandbox_kind: str | None = None   # found by run_class
    timeout: float = 300.0            # per test program
    build_timeout: float = 600.0      # per compiler or linker run
    submission_timeout: float = 0.0   # all the tests of one submission (0: no limit)
    max_output: int = 1 << 20
    max_rss: int = 16 << 30
    slots: list[str | None] = field(default_factory=lambda: [None])  # CUDA_VISIBLE_DEVICES per worker
    jobs: int = 2
    keep_work: bool = False
    grade_missing: bool = False
    shared_dir: Path | None = None    # a shared build made earlier (read only), e.g. by Slurm's first step
    archive_limits: submissions.Limits = field(default_factory=submissions.Limits)
    key: bytes | None = None          # signs what is written for each student (set by run_class)


@dataclass
class Built:
    """A submission ready for its tests."""
    entry: submissions.Entry
    sub: submissions.Submission | None = None
    opts: Options | None = None
    copy_root: Path | None = None
    error: str | None = None          # a grader error while preparing it
    notes: list[str] = field(default_factory=list)
    build_seconds: float = 0.0


def run_class(co: ClassOptions, say) -> tuple[int, list[dict]]:
    """Grade every submission; (number graded on a GPU, records). Writes everything under co.out."""
    entries = submissions.discover(co.submissions)
    if co.only:
        wanted = set(co.only)
        entries = [e for e in entries if e.path.name in wanted or e.student in wanted]
        missing = wanted - {e.path.name for e in entries} - {e.student for e in entries}
        if missing:
            raise ValueError(f"no submission named {', '.join(sorted(missing))} in {co.submissions}")
    if os.environ.get("CUDALAB_SANDBOX", "").strip().lower() in ("none", "off", "0"):
        co.sandbox = False  # the instructor's explicit choice, as --no-sandbox
        say("warning: CUDALAB_SANDBOX=none: the students' code runs with your rights")
    if co.sandbox:
        from . import sandbox
        co.sandbox_kind = sandbox.detect()
        if co.sandbox_kind is None:
            raise RuntimeError("no sandbox works on this machine, and a class's code must not run "
                               "with your rights: install bubblewrap (apt-get install bubblewrap) "
                               "or allow user namespaces; see python3 tools/cudalab_grade/sandbox.py "
                               "--check (--no-sandbox grades without one, at your own risk)")
        say(f"sandbox: {co.sandbox_kind} (each student's code runs in its own; "
            "docs/guides/instructors.md)")
    co.out.mkdir(parents=True, exist_ok=True)
    try:
        co.key = signing.load_or_create(co.out, co.seed).key
    except (signing.Untrusted, OSError) as e:
        raise ValueError(f"the grader's key in {co.out}: {e}") from None
    shared_dir = co.shared_dir or (co.out / "shared")
    sb = classbuild.prepare_shared(co.root, shared_dir, co.exercises, co.perf, co.hidden_dir,
                                   co.jobs, say, read_only=co.shared_dir is not None)
    warnings = _hidden_warnings(co, sb, say) + submissions.case_collisions(entries)
    for w in warnings:
        say(f"warning: {w}")
    say(f"instructor's build ready in {sb.seconds:g} s; grading {len(entries)} submission(s) "
        f"with {co.jobs} build job(s) and {len(co.slots)} GPU worker(s) ...")
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, co.jobs), thread_name_prefix="build") as pool:
        futures: list[Future] = [pool.submit(_prepare, co, sb, e) for e in entries]
        todo: queue.Queue = queue.Queue()
        for i, f in enumerate(futures):
            todo.put((i, f))
        records: list[dict | None] = [None] * len(entries)

        def worker(slot: str | None) -> None:
            while True:
                if proc.stopping():  # the grader was told to stop: no more students
                    return
                try:
                    i, fut = todo.get_nowait()
                except queue.Empty:
                    return
                records[i] = _grade_one(co, sb, entries[i], fut, slot, say, locks[slot])

        # the workers of one GPU share its lock: tests together, a benchmark alone (gpulock.py)
        locks = {s: GpuLock() for s in co.slots}
        threads = [threading.Thread(target=worker, args=(s,), name=f"gpu-{s}") for s in co.slots]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if proc.stopping():
        say("stopped: no gradebook written (the reports of the students graded before the "
            "stop are in students/; tools/grade-class --merge makes a gradebook of them)")
        return 0, []
    done = [r for r in records if r is not None]
    classreport.write_class(co.out, sorted(done, key=lambda r: r["cudalab"]["student"]), warnings,
                            seeds=[co.seed] if co.seed is not None else [])
    graded = sum(1 for r in done for e in r["cudalab"]["exercises"] if e["status"] in GRADED)
    say(f"graded {len(done)} submission(s) in {time.monotonic() - started:.1f} s "
        f"(+ {sb.seconds:g} s for the instructor's build); gradebook: {co.out / 'gradebook.csv'}")
    return graded, done


def _hidden_warnings(co: ClassOptions, sb: classbuild.SharedBuild, say=lambda msg: None
                     ) -> list[str]:
    """Say, per exercise, whether it has a hidden suite; warnings for what the instructor must fix."""
    if co.hidden_dir is None:
        return []
    out = []
    none = []
    for ex in co.exercises:
        f = classbuild.hidden_file(ex, co.hidden_dir)
        if f is None:
            none.append(ex)
        elif ex.slug not in sb.hidden:
            out.append(f"{ex.id} {ex.slug}: {f} did not build in the instructor's tree "
                       f"(see {sb.log}); only its public tests are graded")
        else:
            say(f"hidden tests: {ex.id} {ex.slug}: {f}")
    if none:
        say(f"no hidden suite for {len(none)} exercise(s) (no <slug>_hidden_test.cu in "
            f"{co.hidden_dir} or its chapter folders): {', '.join(e.id for e in none)}")
    if not sb.hidden:
        out.append(f"--hidden-tests {co.hidden_dir}: no hidden suite for any of the "
                   f"{len(co.exercises)} exercise(s) graded; only public tests are graded")
    return out


def _prepare(co: ClassOptions, sb: classbuild.SharedBuild, entry: submissions.Entry) -> Built:
    """Unpack, map, copy and build one submission (a build worker); never raises."""
    b = Built(entry)
    start = time.monotonic()
    try:
        _prepare_inner(co, sb, b)
    except Exception as e:  # noqa: BLE001 - reported for this student only
        b.error = f"grader error while building: {type(e).__name__}: {e}"
        b.notes.append(traceback.format_exc(limit=3).strip().splitlines()[-1])
    b.build_seconds = round(time.monotonic() - start, 2)
    return b


def _work(co: ClassOptions, entry: submissions.Entry) -> Path:
    return co.out / "work" / entry.safe_id


def _prepare_inner(co: ClassOptions, sb: classbuild.SharedBuild, b: Built) -> None:
    entry = b.entry
    work = _work(co, entry)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    student_dir = co.out / "students" / entry.safe_id
    student_dir.mkdir(parents=True, exist_ok=True)
    if entry.kind == "bad":
        b.sub = submissions.Submission(entry.student, rejected=entry.why)
        return
    if entry.kind == "dir":
        folder = entry.path
    else:
        folder = work / "submission"
        try:
            submissions.unpack(entry, folder, co.archive_limits)
        except submissions.Rejected as e:
            b.sub = submissions.Submission(entry.student, rejected=str(e))
            return
    sub = submissions.map_files(folder, co.exercises, co.archive_limits, entry.student)
    b.sub = sub
    copy_root = work / "course"
    classbuild.sync_tree(sb.course, copy_root)
    for ex_id, path in sub.files.items():
        ex = next(e for e in co.exercises if e.id == ex_id)
        dst = copy_root / ex.source("starter")
        dst.write_bytes(submissions.read_source(path))
    build_dir = copy_root / "build" / "default"
    opts = Options(root=copy_root, build_dir=build_dir, implementation="starter",
                   timeout=co.timeout, seed=co.seed, perf=co.perf, sanitize=co.sanitize,
                   quick_sanitize=co.quick_sanitize, fail_fast=co.fail_fast,
                   max_output=co.max_output, max_rss=co.max_rss, hidden=frozenset(sb.hidden),
                   strip_paths=(str(sb.course.resolve()) + "/", str(copy_root.resolve()) + "/"),
                   checker_bin=sb.build_dir / "bin", reference_root=sb.course,
                   shrink=False)  # no search for the smallest failing size: a class costs enough
    if co.sandbox_kind is not None:  # the runner sees its own folder, nothing else of the class
        (build_dir / "bin").mkdir(parents=True, exist_ok=True)
        use_sandbox(opts, [build_dir / "bin"], co.sandbox_kind)
        from . import sandbox
        opts.cgroups = sandbox.Cgroup.available(controllers=("memory", "pids"))
    for ex in co.exercises:  # a checker missing from the instructor's build
        for t in (ex.test_target("starter"),) + ((ex.hidden_target("starter"),)
                                                 if ex.slug in sb.hidden else ()):
            if t in sb.problems:
                opts.not_built[t] = (f"not graded: {sb.problems[t]}", [])
    for ex in co.exercises:
        if ex.id in sub.problems:
            opts.verdicts[ex.id] = (REJECTED, f"file refused: {sub.problems[ex.id]}", [])
        elif ex.id in sub.missing and not co.grade_missing:
            opts.verdicts[ex.id] = (NOT_SUBMITTED, "not submitted (the starter's file scores 0)",
                                    [submissions.misplaced_note(ex, sub.misplaced[ex.id])
                                     if ex.id in sub.misplaced else
                                     f"no {ex.chapter_dir}/{ex.file} in the submission"])
    with (student_dir / "build.log").open("w") as log:
        for ex in co.exercises:
            if ex.id in opts.verdicts:
                continue
            # the forbidden-API check (source.py): the preprocessed file first, with the exact
            # compile command; a forbidden use is not compiled
            cmd = sb.compile_cmd.get(ex.slug)
            rep = source.check_report(ex, copy_root / ex.source("starter"), root=copy_root,
                                      build_dir=build_dir,
                                      compile_command=(cmd.replace(str(sb.course) + "/", str(copy_root) + "/")
                                                       if cmd else None))
            log.writelines(f"forbidden-API check of {ex.id}: {note}\n" for note in rep.notes)
            if rep.first:
                opts.verdicts[ex.id] = (FORBIDDEN, rep.first.message, list(rep.first.details))
                continue
            targets = classbuild.student_targets(ex, co.perf)
            eb = classbuild.build_exercise(sb, ex, copy_root, targets, co.build_timeout, log,
                                           co.max_output, sandbox_kind=co.sandbox_kind,
                                           private=[p for p in (co.root, co.out, co.submissions,
                                                                co.hidden_dir) if p is not None])
            opts.not_built.update(eb.not_built)
            obj = build_dir / "grade-obj" / f"{ex.slug}.o"   # where build_exercise compiles it
            if obj.exists():  # then the compiled code: symbols, device instructions, imports
                rep = source.check_object(ex, obj, root=copy_root, shown=ex.source("starter"))
                log.writelines(f"forbidden-API check of {ex.id}: {note}\n" for note in rep.notes)
                if rep.first:
                    opts.verdicts[ex.id] = (FORBIDDEN, rep.first.message, list(rep.first.details))
            b.notes.append(f"{ex.id} built in {eb.seconds:g} s")
    b.opts = opts
    b.copy_root = copy_root


def _grade_one(co: ClassOptions, sb: classbuild.SharedBuild, entry: submissions.Entry,
               fut: Future, slot: str | None, say, lock: GpuLock | None = None) -> dict | None:
    """Run the tests of one built submission on one GPU slot; write its outputs; never raises.
    None when the grader was stopped meanwhile (proc.stop_all): nothing is written for it."""
    start = time.monotonic()
    results: list[Result] = []
    b: Built | None = None
    try:
        b = fut.result()
        start = time.monotonic()   # the tests' time, not this worker's wait for the build
        sub = b.sub or submissions.Submission(entry.student)
        if b.error:
            results = [_fixed(ex, co, GRADER_ERROR, b.error) for ex in co.exercises]
        elif sub.rejected:
            results = [_fixed(ex, co, REJECTED, f"submission rejected: {sub.rejected}")
                       for ex in co.exercises]
        else:
            assert b.opts is not None
            b.opts.extra_env = {"CUDA_VISIBLE_DEVICES": slot} if slot is not None else {}
            b.opts.gpu_lock = lock
            if co.submission_timeout:
                b.opts.deadline = time.monotonic() + co.submission_timeout
            for ex in co.exercises:
                results.append(grade(ex, b.opts))
    except Exception as e:  # noqa: BLE001
        msg = f"grader error: {type(e).__name__}: {e}"
        done = {r.exercise.id for r in results}
        results += [_fixed(ex, co, GRADER_ERROR, msg) for ex in co.exercises if ex.id not in done]
    seconds = round(time.monotonic() - start, 2)
    if proc.stopping():  # its programs were killed by the stop: no record, so --merge sees none
        if not co.keep_work:
            shutil.rmtree(_work(co, entry), ignore_errors=True)
        return None
    try:
        record = _write_student(co, sb, entry, b, results, seconds, slot)
    except Exception as e:  # noqa: BLE001 - the last resort: a minimal record
        record = {"score": 0.0, "tests": [], "cudalab": {
            "student": entry.student, "exercises": [], "warnings": [f"grader error: {e}"]}}
    if not co.keep_work:
        shutil.rmtree(_work(co, entry), ignore_errors=True)
    say(f"  {one_line(entry.student)}: {record['score']:.1f} points"
        + (f" (GPU {slot})" if slot is not None else "")
        + f", build {b.build_seconds if b else 0:g} s, tests {seconds:g} s")
    return record


_SEED_WORDS = re.compile(r"(?i)\b(seed\s*[=:]\s*|seed\s+)(0[xX][0-9a-fA-F]+|\d+)")
_SEED_PREFIX = re.compile(r"\bCUDALAB_SEED=\S+\s*")


def redact_seed(text: str, seed: int) -> str:
    """text without the instructor's seed: 'seed = N' (any N: the tests derive theirs from it)
    becomes 'seed = (hidden)', a rerun command loses its CUDALAB_SEED=N, and the number itself,
    when it has 4 digits or more, becomes '(hidden)' wherever it stands."""
    text = _SEED_PREFIX.sub("", text)
    text = _SEED_WORDS.sub(lambda m: m.group(1) + "(hidden)", text)
    digits = str(abs(seed))
    if len(digits) >= 4:
        text = re.sub(rf"(?<![0-9]){re.escape(digits)}(?![0-9])", "(hidden)", text)
    return text


def _id_key(ex_id: str) -> tuple:
    return tuple(int(p) if p.isdigit() else 0 for p in ex_id.split("."))


def hidden_note(r: Result) -> str:
    """Whether the exercise's hidden tests ran, in words."""
    if not r.hidden_suite:
        return "no hidden suite for this exercise"
    if r.hidden_tests is None:
        return "hidden tests: not run (the exercise was stopped before them)"
    if r.hidden_tests == 0:
        return "hidden tests: ran 0 (no hidden test matches the exercise's filter)"
    return f"hidden tests: ran {r.hidden_tests}"


def _fixed(ex: Exercise, co: ClassOptions, status: str, reason: str) -> Result:
    opts = Options(root=co.root, build_dir=co.root, perf=co.perf)
    return Result(ex, max_points(ex, opts), status=status, reason=reason)


# Characters of one exercise's reason (and of a submission's rejection) and of its details in
# what is written for a student: --merge refuses a results.json whose reason passes 64 KiB or
# whose test output passes 4 MiB (classreport.validate), and a student's text can be that long
# (a warp mask written as a literal of 100000 digits is quoted in the reason).
MAX_REASON = 8 << 10
MAX_DETAILS = 1 << 20


def _bounded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]} ... ({len(text) - limit} more characters cut)"


def _bounded_lines(lines: list[str], limit: int) -> list[str]:
    out, size = [], 0
    for i, line in enumerate(lines):
        if size + len(line) > limit:
            out.append(_bounded(line, max(0, limit - size)))
            if i + 1 < len(lines):
                out.append(f"... ({len(lines) - i - 1} more lines cut)")
            break
        out.append(line)
        size += len(line) + 1
    return out


def _write_student(co: ClassOptions, sb: classbuild.SharedBuild | None, entry: submissions.Entry,
                   b: Built | None, results: list[Result], seconds: float, slot: str | None
                   ) -> dict:
    d = co.out / "students" / entry.safe_id
    d.mkdir(parents=True, exist_ok=True)
    sub = b.sub if b and b.sub else submissions.Submission(entry.student)
    ids = {ex.id: ex for ex in co.exercises}
    files = {
        "submitted": [f"{sub.found_at[i]} -> {ids[i].id} {ids[i].slug}" for i in sub.files],
        "not_submitted": [f"{ids[i].chapter_dir}/{ids[i].file}" for i in sub.missing],
        "refused": [f"{ids[i].id}: {why}" for i, why in sub.problems.items()],
        "ignored": list(sub.ignored),
    }
    warnings = []
    if any(r.status == NO_GPU for r in results):
        warnings.append("not graded: no CUDA device on the grading machine")
    hide = co.seed is not None and not co.show_seed
    if hide:
        for r in results:
            r.reason = redact_seed(r.reason, co.seed)
            r.details = [redact_seed(d, co.seed) for d in r.details]
    for r in results:   # what --merge reads back must pass classreport.validate
        r.reason = _bounded(r.reason, MAX_REASON)
        r.details = _bounded_lines(r.details, MAX_DETAILS)
    rejected = _bounded(sub.rejected, MAX_REASON) if sub.rejected else sub.rejected
    meta = {"student": entry.student, "entry": entry.path.name, "implementation": "submission",
            "seed": None if hide else co.seed, "seed_hidden": hide,
            "perf": co.perf, "sanitize": list(co.sanitize),
            "hidden_tests": co.hidden_dir is not None,
            "hidden_suites": sorted((ex.id for ex in co.exercises if ex.slug in sb.hidden),
                                    key=_id_key) if sb else [],
            "gpu": slot,
            "rejected": rejected, "files": files, "warnings": warnings,
            "build_seconds": b.build_seconds if b else 0.0, "test_seconds": seconds}
    text = report.gradescope(results, meta)
    (d / "results.json").write_bytes(text.encode())
    record = json.loads(text)
    _, got, best = report.totals(results)
    notes = []
    if sub.rejected:
        notes.append(f"submission rejected: {rejected}")
    notes += warnings
    notes.append(f"build {meta['build_seconds']:g} s, tests {seconds:g} s"
                 + (f" on GPU {slot}" if slot is not None else ""))
    if hide:
        notes.append("tests ran with the instructor's seed, which this report does not show: "
                     "a rerun command here uses the test's own seed, which may not reproduce "
                     "the failure")
    elif co.seed is not None:
        notes.append(f"tests ran with seed {co.seed} (CUDALAB_SEED)")
    if co.hidden_dir is not None:
        notes += [f"{r.exercise.id} {r.exercise.slug}: {hidden_note(r)}" for r in results]
    md = classreport.student_markdown(entry.student, report.markdown(results), got, best, files,
                                      notes)
    (d / "report.md").write_bytes(md.encode())
    if co.key is not None:
        signed = {"results.json": text.encode(), "report.md": md.encode()}
        try:
            signed["build.log"] = signing.read_regular(d / "build.log", classreport.MAX_LOG)
        except signing.Untrusted:
            pass   # none (a rejected submission) or too large: merge leaves it out
        signing.sign(co.key, d, signed)
    return record
