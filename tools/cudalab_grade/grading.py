"""Grading one exercise: forbidden APIs, build state, tests, sanitizers, benchmark."""
from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import fnmatch
import json
import os
import re
import shlex
import shutil
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import bench, gpuwatch, gtest, manifest, proc, source, trace
from . import shrink as smallest
from .manifest import Exercise
from .gpulock import GpuLock

PASSED, FAILED, CRASHED, TIMEOUT = "passed", "failed", "crashed", "timeout"
COMPILE, FORBIDDEN, NO_GPU, SANITIZER, GRADER_ERROR = (
    "compile_error", "forbidden", "no_gpu", "sanitizer", "grader_error")
MEMORY = "memory"
# statuses that mean the exercise was graded on a GPU (as opposed to not graded at all)
GRADED = frozenset({PASSED, FAILED, CRASHED, TIMEOUT, SANITIZER, MEMORY})
SANITIZER_MAX_N = "4194304"
# the tools --sanitize takes, and the exit code compute-sanitizer is given for its findings
# (--error-exitcode; the test program ends with it too)
SANITIZER_TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
SANITIZER_ERROR_EXIT = 86
PIDS_MAX = 1024  # processes (threads included) of one program in its cgroup
# The quick pass every default grade runs after the tests pass: the battery's
# small sizes (a few tiles and blocks, every warp and block boundary the tests
# use up to there) under memcheck and racecheck, within QUICK_LIMIT seconds a tool.
QUICK_TOOLS = ("memcheck", "racecheck")
# ... and synccheck where the student's file synchronizes: a barrier that not every thread
# of the block reaches, or a warp-level primitive called by a lane outside its mask
QUICK_SYNC_TOOL = "synccheck"
SYNC_PRIMITIVE = re.compile(r"\b(?:__syncthreads\w*|__syncwarp|__\w+_sync|sync)\s*\(|\bthis_thread_block\b"
                            r"|\btiled_partition\b|\bbarrier\b")
QUICK_MAX_N = "70000"
QUICK_LIMIT = 90.0
EXERCISE_JOBS_MAX = 4  # an exercise's programs at once, at most (exercise_jobs_for)
# The device profiles of chapters/common/include/cudalab/device.cuh: with
# CUDALAB_DEVICE_PROFILE=<name> the course sizes its launches for that GPU and the
# runner refuses a launch beyond its limits (tools/grade --device-profile sets it).
DEVICE_PROFILES = manifest.DEVICE_PROFILES
PROFILE_ENV = "CUDALAB_DEVICE_PROFILE"
# --perf: repetitions of the benchmark (each the mean of its iterations), the timed GPU
# seconds of each repetition (Google Benchmark's own default is 0.5 s; each timed call
# also costs a refresh of the inputs, an L2 flush and a null call, so a repetition's
# wall time is several times this), and the verdicts
PERF_REPETITIONS = 5
PERF_MIN_TIME_S = 0.1
IMPLAUSIBLE = "implausible"
# A speed measured while another process was on the GPU, twice, and below the target: not the
# student's speed, so neither scored nor counted (docs/guides/grading.md, "How sure a speed is")
GPU_BUSY = "gpu_busy"
# Before each benchmark: up to IDLE_WAIT_S seconds, polling nvidia-smi every IDLE_POLL_S, for
# the GPU to be free of every compute process but the grader's (wait_for_gpu)
IDLE_WAIT_S = 20.0
IDLE_POLL_S = 0.5
# the exit statuses of tools/grade and tools/grade-class (tools/gpu-check reads them)
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_GPU, EXIT_SETUP = 0, 1, 2, 3, 4


@dataclass
class Options:
    root: Path
    build_dir: Path
    implementation: str = "starter"
    timeout: float = 300.0
    seed: int | None = None
    perf: bool = False
    sanitize: tuple[str, ...] = ()
    # the default quick sanitizer pass (small sizes, QUICK_TOOLS) instead of `sanitize`
    quick_sanitize: bool = False
    # the programs of one exercise that run at once: its test program in two parts (run_tests:
    # the ALONE tests beside the others), its quick pass's tools (run_quick_pass: racecheck in
    # shards, each other tool whole); 1: one program after the other. A student's tree grades
    # with exercise_jobs_for(); a class keeps 1, its submissions already share the GPU.
    exercise_jobs: int = 1
    # stop each test program at its first failing test (--gtest_fail_fast): a class of
    # mutants needs the verdict, not every failure; the tests that did not run count as failed
    fail_fast: bool = False
    # target -> (reason, details) for targets that are not built; filled by the build step
    not_built: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    # class grading (tools/grade --submissions): limits, environment, decided outcomes
    extra_env: dict[str, str] = field(default_factory=dict)  # e.g. CUDA_VISIBLE_DEVICES
    max_output: int = 0     # bytes of output kept per program (0: all)
    max_rss: int = 0        # resident bytes per program's process group (0: no limit)
    hidden: frozenset[str] = frozenset()  # slugs whose <slug>_hidden_test_<impl> runs too
    deadline: float | None = None  # time.monotonic() after which nothing more is run
    # exercise id -> (status, reason, details): decided before any test runs
    verdicts: dict[str, tuple[str, str, list[str]]] = field(default_factory=dict)
    # folders (ending in '/') cut from the paths in failure messages, so that a
    # student reads tests/01-.../x.cuh:83, not the grading machine's copy of it
    strip_paths: tuple[str, ...] = ()
    # where the checkers (test programs) are; default build_dir/bin. A class
    # takes them from the instructor's build, the runners from the student's.
    checker_bin: Path | None = None
    # argv words put before each runner (the sandbox, sandbox.py); [] = none
    runner_prefix: list[str] = field(default_factory=list)
    # each test program and benchmark in a cgroup v2 of its own (class grading, where available)
    cgroups: bool = False
    # after a failure at size n, search the battery's smaller sizes with the same seed
    # for the smallest failing case (shrink.py): True/False; None (the default) = on for
    # a student's own tree, off where the checkers come from elsewhere (checker_bin:
    # class grading, where it would cost every failing student several seconds)
    shrink: bool | None = None
    shrink_budget: float = smallest.BUDGET  # seconds for one exercise's search
    # class grading: the lock of the GPU this submission runs on (gpulock.py), shared with the
    # other workers of that GPU; tests take it shared, a benchmark exclusive. None: no other
    # grader shares the GPU.
    gpu_lock: GpuLock | None = None
    # the tree whose solutions/ the build linked for the exercises an exercise uses (the
    # manifest's uses; CMake's cudalab_given_library); None: root. A class: the instructor's copy.
    reference_root: Path | None = None

    def shrinks(self) -> bool:
        return self.shrink if self.shrink is not None else self.checker_bin is None

    def clean(self, text: str) -> str:
        for prefix in self.strip_paths:
            text = text.replace(prefix, "")
        return text

    def exe(self, target: str) -> Path:
        return self.build_dir / "bin" / target

    def checker(self, target: str) -> Path:
        return (self.checker_bin or self.build_dir / "bin") / target

    def runner_env(self, ex: Exercise, log: Path, tool: list[str] | None = None) -> dict[str, str]:
        """What a checker needs to start the exercise's runner, sandboxed, logging to `log`;
        `tool` (e.g. compute-sanitizer and its options) runs the runner inside the sandbox."""
        prefix = self.runner_prefix + (tool or [])
        env = {"CUDALAB_RUNNER": str(self.exe(ex.runner_target(self.implementation)).resolve()),
               "CUDALAB_RUNNER_LOG": str(log)}
        # The device profile reaches the checker and, through it, the runner (the
        # sandbox keeps CUDALAB_* variables): named here so that it does even where
        # a caller builds the environment from extra_env alone.
        profile = self.extra_env.get(PROFILE_ENV, os.environ.get(PROFILE_ENV, ""))
        if profile:
            env[PROFILE_ENV] = profile
        if prefix:
            env["CUDALAB_RUNNER_PREFIX"] = json.dumps(prefix)
        return env

    def shown(self, path: Path) -> str:
        """A path as the student types it: relative to the root when inside it."""
        try:
            return str(path.resolve().relative_to(self.root.resolve()))
        except ValueError:
            return str(path)

    def env(self) -> dict[str, str]:
        seed = {"CUDALAB_SEED": str(self.seed)} if self.seed is not None else {}
        return dict(self.extra_env) | seed

    def time_limit(self) -> float:
        """The time limit of the next program: --timeout, or less when the deadline is near."""
        if self.deadline is None:
            return self.timeout
        return max(1.0, min(self.timeout, self.deadline - time.monotonic()))

    def run(self, cmd: list[str], env: dict[str, str] | None = None,
            limit: float | None = None, on_start=None) -> proc.Proc:
        """Runs a program of the exercise within the limits (`limit` seconds, else
        time_limit()); in a cgroup of its own (memory of all its processes, a process
        count) where `cgroups` is set and the machine offers cgroup v2, else under
        proc.py's watchdog of its process group."""
        env = env if env is not None else self.env()
        limit = limit if limit is not None else self.time_limit()
        gpu = visible_devices(env)  # a GPU program: the next benchmark waits for its leftovers
        if self.cgroups:
            from . import sandbox
            try:
                cg = sandbox.Cgroup(memory_max=self.max_rss or None, pids_max=PIDS_MAX)
                with cg:
                    return proc.run(cmd, limit, self.root, env, max_output=self.max_output, cgroup=cg,
                                    on_start=on_start, gpu=gpu)
            except OSError:
                pass  # no cgroup after all: the watchdog
        return proc.run(cmd, limit, self.root, env, max_output=self.max_output, max_rss=self.max_rss,
                        on_start=on_start, gpu=gpu)


@dataclass
class Result:
    exercise: Exercise
    max_points: float
    status: str = FAILED
    correctness_points: float = 0.0
    perf_points: float = 0.0
    ratio: float | None = None
    reason: str = ""
    details: list[str] = field(default_factory=list)
    tests: str = "-"
    perf: str = "-"
    seconds: float = 0.0
    hidden_suite: bool = False          # the exercise has a hidden test program (--hidden-tests)
    hidden_tests: int | None = None     # tests the hidden program ran; None: it did not run
    # a class's second run alone on the GPU (_confirm_alone): its detail line, or "" (none)
    alone: str = ""
    # --perf: the ratio's 95 % interval, repetitions behind it, the GPU's state during the run
    # (gpuwatch.Watch.summary) and the speed verdict: "" (not measured), "ok", "implausible"
    ratio_low: float | None = None
    ratio_high: float | None = None
    repetitions: int | None = None
    # the medians behind the ratio, nanoseconds per call: the exercise's and the baseline's
    # (a host baseline's time moves with the host CPU; these tell it from the GPU side)
    time_ns: float | None = None
    baseline_ns: float | None = None
    gpu: dict | None = None
    perf_verdict: str = ""
    # the ratio as measured in the run (baseline_ns / time_ns); `ratio` is the one scored, which
    # differs from it where the manifest calibrates a host baseline and the run reported the
    # copy bandwidth: then `calibration` says how ({"device", "host", "host_speed", "gpu_scale"})
    ratio_raw: float | None = None
    calibration: dict | None = None
    # where it was measured: the benchmark's device copy bandwidth (GB/s, the figure a
    # calibration records), the device's name and the host's CPU
    copy_gbps: float | None = None
    device: str | None = None
    host: str | None = None
    # the target scored against on this GPU (manifest.Perf.target_on): the manifest's,
    # `target_calibration`, set on `target_device` (manifest.CALIBRATION_GPU), times
    # `target_scale`, the reference solution's ratio here over there; None where the exercise
    # has no reference ratio for this GPU (then target == target_calibration)
    target: float | None = None
    target_calibration: float | None = None
    target_scale: float | None = None
    target_device: str | None = None
    # the reference solution's ratio measured in the same run, which moved the target
    # (target_scale = it over the table's ratio on target_device); None: not measured
    target_reference: float | None = None
    # which implementation of the exercises it uses (the manifest's uses) its runner linked
    # (linked_with); "" when it uses none
    linked: str = ""

    @property
    def points(self) -> float:
        return self.correctness_points + self.perf_points


def use_sandbox(opts: Options, readable: list[Path], kind=None) -> str | None:
    """Sets the runner's sandbox prefix in opts (sandbox.py); the kind used, or None
    when no sandbox works on this machine (the runner then runs with the grader's rights)."""
    from . import sandbox

    kind = kind or sandbox.detect()
    if kind is None:
        return None
    opts.runner_prefix = sandbox.runner_prefix(kind, readable=readable)
    return kind


def max_points(ex: Exercise, opts: Options) -> float:
    return float(ex.points + (ex.perf.points if opts.perf and ex.perf else 0))


def linked_with(ex: Exercise, root: Path) -> str:
    """Which implementation of the exercises `ex` uses (the manifest's uses) its runner links,
    by CMake's rule (cudalab_given_library): the reference solution where root has
    solutions/<chapter>/<file>, else the student's own (the student edition). "" when it
    uses none."""
    if not ex.uses:
        return ""
    chapter = next((c for c in manifest.load_all(root) if c.dir == ex.chapter_dir), None)
    used = [e for e in (chapter.exercises if chapter else ()) if e.slug in ex.uses]
    if not used:
        return f"{ex.id} uses {', '.join(ex.uses)}, which the manifest under {root} does not list"
    reference = [e.id for e in used if (root / e.source("solution")).is_file()]
    own = [e.id for e in used if e.id not in reference]
    parts = []
    if reference:
        parts.append(f"the reference solutions of {', '.join(reference)}")
    if own:
        parts.append(f"your own {', '.join(own)} (this course has no reference solution of "
                     f"{'it' if len(own) == 1 else 'them'}: their mistakes show in {ex.id}'s tests too)")
    return f"{ex.id} was linked with {' and '.join(parts)}, whose functions it calls"


def grade(ex: Exercise, opts: Options) -> Result:
    """Grade one exercise; never raises (an unexpected error becomes the reason)."""
    start = time.monotonic()
    res = Result(ex, max_points(ex, opts))
    res.hidden_suite = bool(ex.hidden_test) and ex.slug in opts.hidden
    try:
        res.linked = linked_with(ex, opts.reference_root or opts.root)
    except Exception as e:  # a note only: never a reason to stop grading
        res.linked = f"{ex.id} uses {', '.join(ex.uses)}: cannot tell which implementation was linked ({e})"
    try:
        with trace.phase(f"grading {ex.id}"):
            _grade(ex, opts, res)
    except Exception as e:  # the grader must go on with the next exercise
        res.status, res.correctness_points, res.perf_points = GRADER_ERROR, 0.0, 0.0
        res.reason = f"grader error: {type(e).__name__}: {e}"
    res.seconds = round(time.monotonic() - start, 2)
    return res


def grade_all(exercises: list[Exercise], opts: Options, parallel: int = 1, say=lambda msg: None) -> list[Result]:
    """Grade the exercises, in their order. With parallel > 1 the tests (and
    sanitizer runs) of `parallel` exercises run at once on the GPU; the
    benchmarks for the perf points run afterwards, one at a time, on an idle GPU,
    so a timing never shares the device with a test."""
    if parallel <= 1 or len(exercises) <= 1:
        out = []
        for ex in exercises:
            say(f"grading {ex.id} {ex.slug} ...")
            out.append(grade(ex, opts))
        return out
    tests_only = replace(opts, perf=False)

    def one(ex: Exercise) -> Result:
        res = grade(ex, tests_only)
        say(f"tested {ex.id} {ex.slug}: {res.status}")
        return res
    say(f"testing {len(exercises)} exercises, {parallel} at a time ...")
    results = list(proc.map_parallel(one, exercises, parallel))
    for ex, res in zip(exercises, results):
        res.max_points = max_points(ex, opts)
        if opts.perf and ex.perf and res.status == PASSED:
            say(f"benchmarking {ex.id} {ex.slug} ...")
            start = time.monotonic()
            try:
                run_perf(ex, opts, res)
            except Exception as e:  # as in grade(): the grader goes on
                res.reason += f"; perf: grader error: {type(e).__name__}: {e}"
            secs = time.monotonic() - start
            res.seconds = round(res.seconds + secs, 2)
            # Each figure as it comes: a run stopped by an outer time limit keeps them in its log.
            times = (f" ({_fmt_ns(res.time_ns)} per call, baseline {_fmt_ns(res.baseline_ns)})"
                     if res.time_ns is not None and res.baseline_ns is not None else "")
            say(f"benchmarked {ex.id} {ex.slug} in {secs:.1f} s: {res.reason.rsplit('; ', 1)[-1]}{times}")
    return results


def _fmt_ns(ns: float) -> str:
    """A time per call for a log line: 312 us, 4.1 ms, 850 ns."""
    if ns >= 1e6:
        return f"{ns / 1e6:.3g} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.3g} us"
    return f"{ns:.3g} ns"


def _grade(ex: Exercise, opts: Options, res: Result) -> None:
    if ex.id in opts.verdicts:
        res.status, res.reason, details = opts.verdicts[ex.id]
        res.details = list(details)
        return
    if opts.deadline is not None and time.monotonic() >= opts.deadline:
        res.status = TIMEOUT
        res.reason = "not graded: the submission's time limit ran out before this exercise"
        return
    src = opts.root / ex.source(opts.implementation)
    built = not any(t in opts.not_built for t in (ex.runner_target(opts.implementation),
                                                 ex.test_target(opts.implementation)))

    def check():
        # the preprocessed file and, once built, its object (source.py, "the forbidden-API check")
        return source.check(ex, src, build_dir=opts.build_dir, impl=opts.implementation, root=opts.root)

    checking = None
    if src.is_file():   # a folder or FIFO in its place is not built (clisetup.prepare_build)
        if built and checks_beside_tests(opts):
            hit, tokens = source.check_object_first(ex, src, build_dir=opts.build_dir,
                                                    impl=opts.implementation, root=opts.root)
            if _forbidden(res, hit):
                return
            pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
            checking = (pool, pool.submit(trace.carry(tokens)))
        elif _forbidden(res, check()):
            return
    for target in (ex.runner_target(opts.implementation), ex.test_target(opts.implementation)):
        if target in opts.not_built:
            res.status = COMPILE
            prefix = str(opts.root.resolve()) + "/"
            res.reason = opts.not_built[target][0]
            res.details = [d.replace(prefix, "") for d in opts.not_built[target][1]]
            return
    with opts.gpu_lock.shared() if opts.gpu_lock else contextlib.nullcontext() as hold:
        before = replace(res, details=list(res.details))
        passed = _tests_and_sanitizers(ex, opts, res, src, checking)
    if not passed and hold is not None:  # a failure a neighbour may have caused is not the verdict
        passed = _confirm_alone(ex, opts, res, src, before, hold)
    if not passed:
        return
    if src.is_file() and _forbidden(res, source.technique_check(ex, src, build_dir=opts.build_dir,
                                                                impl=opts.implementation, root=opts.root)):
        return
    if opts.perf and ex.perf:
        with opts.gpu_lock.exclusive() if opts.gpu_lock else contextlib.nullcontext():
            run_perf(ex, opts, res)


def _tests_and_sanitizers(ex: Exercise, opts: Options, res: Result, src: Path, checking=None) -> bool:
    """The exercise's programs on the GPU: its tests, then the quick sanitizer pass and the
    --sanitize tools; True when all passed. `checking`: (executor, future) of the forbidden-API
    check running beside the tests, whose finding replaces the tests' outcome."""
    before = replace(res, details=list(res.details))
    passed = run_tests(ex, opts, res)
    if checking is not None:
        checking[0].shutdown(wait=True)
        if _forbidden(res, checking[1].result(), before):
            return False
    if not passed:
        return False
    if (opts.quick_sanitize or opts.sanitize) and not run_small_gpu_pass(ex, opts, res):
        return False
    if opts.quick_sanitize and not run_quick_pass(ex, opts, res, quick_tools(src)):
        return False
    return all(run_sanitizer(ex, opts, res, tool) for tool in opts.sanitize)


# What in a failure another program on the same GPU can cause (class grading with --per-gpu
# above 1, where nothing divides the GPU's memory or time between submissions): an allocation
# that failed while a neighbour held the memory (the runtime's cudaErrorMemoryAllocation, "out
# of memory"; the driver's CUDA_ERROR_OUT_OF_MEMORY; compute-sanitizer's own "Unable to allocate
# enough memory"), or a program that ran out of time or was killed while a neighbour's kernels
# shared the GPU. Never a wrong answer: the driver keeps each process's memory apart, so a
# neighbour cannot change what a kernel computes.
OUT_OF_MEMORY = re.compile(r"out[ _]of[ _]memory|cudaErrorMemoryAllocation|unable to allocate enough memory",
                           re.IGNORECASE)


def neighbour_failure(res: Result) -> str | None:
    """How res failed, in words, when another program on the GPU could have caused it
    ("ran out of memory", "timed out", "was killed (SIGKILL)"); None for any other outcome."""
    if res.status not in (FAILED, CRASHED, TIMEOUT, SANITIZER):
        return None
    if res.status == TIMEOUT or (res.status == SANITIZER and "timed out after" in res.reason):
        return "timed out"
    if res.status == CRASHED and re.search(r"\bSIGKILL\b", res.reason):
        return "was killed (SIGKILL)"
    if any(OUT_OF_MEMORY.search(text) for text in [res.reason] + res.details):
        return "ran out of memory"
    return None


ALONE_AGAIN = "graded again alone on the GPU"  # how Result.alone begins after a second run alone


def _confirm_alone(ex: Exercise, opts: Options, res: Result, src: Path, before: Result, hold) -> bool:
    """Invariant: no failure a neighbour may have caused is a class's verdict. When the
    exercise's programs under the GPU's shared lock (`hold`) failed that way (neighbour_failure)
    while another submission held the lock too, res goes back to `before` (as it was before
    them) and they run again under the exclusive lock, alone on the GPU: the second verdict is
    the verdict, and a detail says so. True when that run passed. A hold that was never shared
    (the failure is the exercise's own) or a submission whose time limit ran out: no rerun."""
    why = neighbour_failure(res)
    if why is None or not hold.overlapped or opts.gpu_lock is None:
        return False
    beside = f"{hold.others} other submission" + ("s" if hold.others > 1 else "")
    first = f"its first run, beside {beside} on the GPU, {why} ({' '.join(res.reason.split())[:200]})"
    if opts.deadline is not None and time.monotonic() >= opts.deadline:
        res.alone = f"not {ALONE_AGAIN}: {first}, and the submission's time limit has run out"
        res.details.append(res.alone)
        return False
    _restore(res, before)
    with trace.phase(f"grading {ex.id} again alone on the GPU"), opts.gpu_lock.exclusive():
        passed = _tests_and_sanitizers(ex, opts, res, src)
    res.alone = f"{ALONE_AGAIN}: {first}; the verdict is the second run's"
    res.details.append(res.alone)
    return passed


def checks_beside_tests(opts: Options) -> bool:
    """Whether the token part of the forbidden-API check of a built exercise (the
    preprocessor's passes: about a second, which the student's edit-compile loop would
    otherwise wait for) runs beside its test program, its object checks (the imports among
    them) still first (source.check_object_first). A student's own tree: yes, the verdict is
    the same (a finding replaces the tests' outcome). A class (checkers from the instructor's
    build): no, a submission that uses a forbidden API is not run at all."""
    return opts.checker_bin is None


def _forbidden(res: Result, hit, before: Result | None = None) -> bool:
    """Records the forbidden-API check's finding `hit` (None: none) as the verdict, over what
    the tests recorded since `before` (res as it was before them); True when there was one."""
    if not hit:
        return False
    if before is not None:
        _restore(res, before)
    res.status = FORBIDDEN
    res.correctness_points = 0.0
    res.reason = hit.message
    res.details = list(hit.details)
    return True


def _restore(res: Result, before: Result) -> None:
    """res as it was when `before` was copied from it (its details a list of its own)."""
    for f in dataclasses.fields(res):
        setattr(res, f.name, getattr(before, f.name))
    res.details = list(before.details)


def exercise_jobs_for(parallel: int, cpus: int | None = None) -> int:
    """The programs of one exercise at once (its tests' parts, its quick pass's tools) when
    `parallel` exercises are graded at once: the machine's CPUs shared among them (each program
    keeps about one busy), at most EXERCISE_JOBS_MAX. CUDALAB_EXERCISE_JOBS=K sets it (1: one
    program after the other)."""
    try:
        return max(1, int(os.environ["CUDALAB_EXERCISE_JOBS"]))
    except (KeyError, ValueError):
        pass
    cpus = cpus if cpus is not None else (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                           else os.cpu_count() or 1)
    return max(1, min(EXERCISE_JOBS_MAX, cpus // max(1, parallel)))


def quick_tools(src: Path) -> tuple[str, ...]:
    """The quick pass's tools for the student's file src: QUICK_TOOLS, and synccheck when its
    code (comments and literals left out) calls a barrier or a warp-level primitive."""
    try:
        code = source.strip_code(src.read_text(errors="replace"))
    except OSError:
        return QUICK_TOOLS
    return QUICK_TOOLS + ((QUICK_SYNC_TOOL,) if SYNC_PRIMITIVE.search(code) else ())


def run_tests(ex: Exercise, opts: Options, res: Result) -> bool:
    """Run the exercise's tests (and its hidden tests); True when they all passed (points given)."""
    programs = [(ex.test_target(opts.implementation), "")]
    if ex.slug in opts.hidden and ex.hidden_test:
        hidden = ex.hidden_target(opts.implementation)
        if hidden in opts.not_built:
            res.status = COMPILE
            res.reason = f"hidden tests: {opts.not_built[hidden][0]}"
            res.details = list(opts.not_built[hidden][1])
            return False
        programs.append((hidden, "hidden "))
    total = gtest.Report()
    no_gpu = False
    skips: list[str] = []
    for target, label in programs:
        got = _run_program(ex, opts, res, target, label)
        if got is None:
            return False
        rep, output = got
        if label:
            res.hidden_tests = rep.total
        if gtest.skipped_for_no_device(rep, output):
            no_gpu = True
        elif rep.skipped:
            skips += gtest.skip_reasons(output)
        total.total += rep.total
        total.passed += rep.passed
        total.skipped += rep.skipped
        total.failed += [(f"{label}{name}".replace("hidden ", "(hidden) "), opts.clean(msg))
                         for name, msg in rep.failed]
    rep = total
    exe = opts.checker(ex.test_target(opts.implementation))
    rerun = f"rerun: {_seed_prefix(opts)}{opts.shown(exe)} --gtest_filter='{ex.test_filter}'"
    res.tests = f"{rep.passed}/{rep.total}"
    if no_gpu:
        res.status = NO_GPU
        res.tests = f"{rep.skipped} skip"
        res.reason = "not graded: no CUDA device (grading needs a GPU)"
        return False
    if rep.total == 0:
        res.status = FAILED
        res.reason = f"no test matches the filter '{ex.test_filter}'"
        return False
    if rep.failed:
        res.status = FAILED
        hidden_failed = sum(1 for name, _ in rep.failed if name.startswith("(hidden) "))
        res.reason = f"{len(rep.failed)} of {rep.total} tests failed (all must pass for the points)"
        if hidden_failed:
            res.reason = (f"{len(rep.failed)} of {rep.total} tests failed, {hidden_failed} of them "
                          "hidden (all must pass for the points)")
        for name, msg in rep.failed[:3]:
            res.details.append(f"FAILED {name}\n{gtest.trim(msg)}")
        if len(rep.failed) > 3:
            res.details.append(f"... and {len(rep.failed) - 3} more failing tests; {rerun}")
        if opts.shrinks():  # a detail only: the verdict and the points stay
            res.details.extend(smallest.lines(ex, opts, rep.failed, shown=3))
        return False
    res.status = PASSED
    res.correctness_points = float(ex.points)
    res.reason = f"all {rep.total} tests passed"
    if len(programs) > 1 and res.hidden_tests:
        res.reason = f"all {rep.total} tests passed, {res.hidden_tests} hidden ones included"
    elif len(programs) > 1:
        res.reason += " (its hidden suite ran no test: none matches the filter)"
    if rep.skipped:
        res.reason += f" ({rep.skipped} skipped)"
        # why, in the test's own words (a large input this GPU lacks the memory for, a size
        # above the sanitizer's cap): a test skipped here may run where the instructor grades
        res.details += [f"skipped: {s}" for s in skips[:3]]
    return True


# Tests that run in a program of their own beside the exercise's other tests, where its
# programs may run at once (exercise_jobs > 1): the large-input tests of chapters 1 and 4
# (more than 2^31 elements, 8 to 32 GiB of device memory, seconds each: most of a program's
# time), one after the other so that their memory never adds up.
ALONE = ("*LargeIndex*",)


def test_parts(opts: Options, test_filter: str, names: list[str] | None) -> list[str]:
    """The gtest filters of the programs a test program's run is split into, at once: the
    `names` (its tests under test_filter, as listed) that match ALONE, by name, then the
    others (test_filter less those names); [test_filter] alone where the programs run one at a
    time (a class), nothing or everything matches, or a name would not survive a filter."""
    if opts.exercise_jobs <= 1 or not names:
        return [test_filter]
    alone = [n for n in names if any(fnmatch.fnmatchcase(n, pat) for pat in ALONE)]
    if not alone or len(alone) == len(names) or any(c in n for n in alone for c in ":-*?"):
        return [test_filter]
    rest = test_filter + (":" if "-" in test_filter else "-") + ":".join(alone)
    return [":".join(alone), rest]


@dataclass
class _Part:
    """One run of a test program (or of one part of its tests): its process, its gtest
    report (None: none written) and what the student's code printed in the runner."""
    p: proc.Proc
    rep: gtest.Report | None
    printed: str


def _run_part(ex: Exercise, opts: Options, exe: Path, label: str, test_filter: str, part: str,
              extra_env: dict[str, str] | None = None, limit: float | None = None) -> _Part:
    with tempfile.TemporaryDirectory(prefix="cudalab-grade-") as tmp:
        report_path = Path(tmp) / "report.json"
        runner_log = Path(tmp) / "runner.log"
        cmd = [str(exe), f"--gtest_filter={test_filter}",
               f"--gtest_output=json:{report_path}"] + (["--gtest_fail_fast"] if opts.fail_fast else [])
        env = opts.env() | opts.runner_env(ex, runner_log) | (extra_env or {})
        with trace.phase(f"{label}test program {exe.name} (the checker and its sandboxed runner{part})"):
            p = opts.run(cmd, env, limit)
        trace.gtest_times(report_path)
        return _Part(p, gtest.parse_report(report_path), gtest.read_tail(runner_log))


def _run_program(ex: Exercise, opts: Options, res: Result, target: str,
                 label: str) -> tuple[gtest.Report, str] | None:
    """Run one test program (split into test_parts(), run at once); (report, output), or None
    after setting a failure on res. A part that crashed, timed out or ran out of memory
    decides, the first in order; otherwise the parts' reports add up."""
    exe = opts.checker(target)
    shown = opts.shown(exe)
    limit = opts.time_limit()
    with trace.phase(f"{label}test list (--gtest_list_tests)"):
        names = gtest.list_test_names(exe, ex.test_filter, opts.root)
    expected = None if names is None else len(names)
    parts = test_parts(opts, ex.test_filter, names)
    if len(parts) == 1:
        runs = [_run_part(ex, opts, exe, label, parts[0], "")]
    else:
        runs = list(proc.map_parallel(
            trace.carry(lambda i: _run_part(ex, opts, exe, label, parts[i], f", part {i + 1} of {len(parts)}")),
            range(len(parts)), len(parts)))
    rerun = f"rerun: {_seed_prefix(opts)}{shown} --gtest_filter='{ex.test_filter}'"
    prefix = "hidden tests: " if label else ""
    merged = gtest.Report()
    notes: list[str] = []
    outputs: list[str] = []
    no_device = False
    bad_exit: tuple[_Part, list[str]] | None = None  # a part's bad exit without a failure
    for run in runs:
        p, rep = run.p, run.rep
        note = [p.truncation_note()] if p.dropped else []
        if run.printed:
            note.append("your code printed (last lines):\n" + run.printed)
        if p.memory_exceeded is not None:
            test = gtest.running_test(p.output)
            res.status = MEMORY
            res.reason = (f"{prefix}killed: used more than {opts.max_rss / 2**20:.0f} MiB of host "
                          "memory" + (f" in {test}" if test else ""))
            res.details = [gtest.tail(p.output)] + note + [_rerun_one(opts, shown, test) or rerun]
            return None
        if p.timed_out:
            test = gtest.running_test(p.output)
            res.status = TIMEOUT
            res.reason = f"{prefix}timed out after {limit:g} s" + (f" in {test}" if test else "")
            res.details = [gtest.tail(p.output)] + note + [_rerun_one(opts, shown, test) or rerun]
            return None
        if rep is None:
            test = gtest.running_test(p.output)
            res.status = CRASHED
            rc = p.returncode or 0
            why = p.failure() if rc < 0 else f"{p.failure()} without a test report"
            res.reason = f"{prefix}crashed: {why}" + (f" in {test}" if test else "")
            res.details = [gtest.tail(p.output)] + note + [_rerun_one(opts, shown, test) or rerun]
            return None
        part_no_device = gtest.skipped_for_no_device(rep, p.output)
        no_device = no_device or part_no_device
        if p.returncode != 0 and not rep.failed and not part_no_device and bad_exit is None:
            bad_exit = (run, note)
        merged.total += rep.total
        merged.passed += rep.passed
        merged.skipped += rep.skipped
        merged.failed += rep.failed
        notes += note
        outputs.append(p.output)
    output = "\n".join(outputs)
    if expected is not None and merged.total < expected and not no_device:
        # The checker decides; a test that did not run is a failure, never a pass.
        merged.failed.append(("(tests that did not run)",
                              f"{expected - merged.total} of the {expected} tests did not run"))
        merged.total = expected
    if bad_exit is not None and not merged.failed:
        # a report without failures, yet a bad exit (e.g. a crash at exit)
        (run, note) = bad_exit
        res.status = CRASHED
        res.reason = f"{prefix}crashed: {run.p.failure()} after all tests passed"
        res.details = [gtest.tail(run.p.output)] + note + [rerun]
        return None
    if notes:
        res.details.extend(notes)
    return merged, output


@dataclass
class _SanitizerRun:
    """One compute-sanitizer program of a check: its process (the runner's report before its
    output) and its GoogleTest shard; for a program that ran out of time, the first error the
    sanitizer had reported in the runner's log by then (sanitizer_finding), or None."""
    p: proc.Proc
    shard: int = 0
    finding: str | None = None


def _sanitizer_bounds(ex: Exercise, opts: Options, quick: bool, tool: str) -> tuple[str, str, float]:
    """(CUDALAB_MAX_N, gtest filter, time limit) of a sanitizer run under `tool`: the quick
    pass's, or the full pass's (--sanitize)."""
    if quick:
        return (str(ex.quick_max_n or QUICK_MAX_N), ex.quick_filter(tool),
                min(opts.time_limit(), QUICK_LIMIT))
    return SANITIZER_MAX_N, ex.test_filter, opts.time_limit()


def quick_plan(tools: tuple[str, ...], jobs: int) -> list[tuple[str, int, int]]:
    """The quick pass's programs, (tool, shard, shards), slowest first: with jobs > 1 racecheck
    (which checks every shared-memory access at every barrier: most of the pass's time) is split
    into `jobs` GoogleTest shards; every other tool runs whole. With jobs == 1, one program a
    tool, in the tools' order."""
    if jobs <= 1:
        return [(tool, 0, 1) for tool in tools]
    plan = [(tool, i, jobs) for tool in tools if tool == "racecheck" for i in range(jobs)]
    return plan + [(tool, 0, 1) for tool in tools if tool != "racecheck"]


def _sanitizer_program(ex: Exercise, opts: Options, tool: str, quick: bool,
                       shard: int = 0, shards: int = 1) -> _SanitizerRun:
    """Runs the exercise's test program with its runner under `tool` (one GoogleTest shard of
    `shards`); the runner's report is put before the program's output."""
    max_n, test_filter, limit = _sanitizer_bounds(ex, opts, quick, tool)
    exe = opts.checker(ex.test_target(opts.implementation))
    # The student's code runs in the runner: compute-sanitizer runs it there,
    # inside the sandbox (a sanitizer outside it does not reach the runner), and
    # the checker ends with the sanitizer's exit code 86 when it found errors.
    cmd = [str(exe), f"--gtest_filter={test_filter}"]
    tool_words = [shutil.which("compute-sanitizer") or "compute-sanitizer", "--tool", tool,
                  "--error-exitcode", str(SANITIZER_ERROR_EXIT), "--print-limit", "20"]
    with tempfile.TemporaryDirectory(prefix="cudalab-grade-") as tmp:
        log = Path(tmp) / "runner.log"
        report = Path(tmp) / "report.json"
        if trace.enabled():  # the tests' times under the tool, for the trace only
            cmd.append(f"--gtest_output=json:{report}")
        env = opts.env() | {"CUDALAB_MAX_N": max_n} | opts.runner_env(ex, log, tool_words)
        if shards > 1:
            env |= {"GTEST_TOTAL_SHARDS": str(shards), "GTEST_SHARD_INDEX": str(shard)}
        part = f", shard {shard + 1} of {shards}" if shards > 1 else ""
        with trace.phase(f"compute-sanitizer {tool}" + (" (the quick pass" + part + ")" if quick else "")):
            p = opts.run(cmd, env, limit)
        trace.gtest_times(report)
        found = gtest.read_tail(log, limit=64 << 10, lines=400)
        # the whole log: what the runner printed after an error must not push it out of sight
        finding = log_finding(log) if p.timed_out else None
    p.output = found + "\n" + p.output
    return _SanitizerRun(p, shard, finding)


def _sanitizer_verdict(ex: Exercise, opts: Options, res: Result, tool: str, quick: bool,
                       runs: list[_SanitizerRun]) -> bool:
    """The verdict of a tool's programs (its shards, in order): False (points taken) on a
    finding, the first shard's that has one; a quick pass that ran out of time is said, not
    counted."""
    max_n, test_filter, limit = _sanitizer_bounds(ex, opts, quick, tool)
    exe = opts.checker(ex.test_target(opts.implementation))
    # A quick program that ran out of time is not counted, unless the sanitizer had already
    # reported an error in it: that error is real whatever came after (a runner that lingers
    # at its exit, or calls made slow on purpose, must not hide it).
    bad = [r for r in runs if r.p.returncode != 0 and not (quick and r.p.timed_out and r.finding is None)]
    if not bad:
        if any(r.p.timed_out for r in runs):
            res.reason += f"; {tool}: not finished in {limit:g} s (not counted)"
            return True
        left = ex.quick_skipped(tool) if quick else ()
        skipped = f", {len(left)} costly case(s) left to the tests" if left else ""
        res.reason += f"; {tool} clean" + (f" (n <= {max_n}{skipped})" if quick else "")
        return True
    r = bad[0]
    first = _sanitizer_error(r.p)
    if r.p.timed_out:
        first = (f"{r.finding} (reported before the run was stopped after {limit:g} s)" if r.finding
                 else "timed out after %g s" % limit)
    res.status, res.correctness_points = SANITIZER, 0.0
    res.reason = f"compute-sanitizer {tool}: {first}"
    res.details = [gtest.tail(r.p.output, 25),
                   f"rerun: CUDALAB_MAX_N={max_n} CUDALAB_RUNNER_PREFIX='[\"compute-sanitizer\", "
                   f"\"--tool\", \"{tool}\"]' "
                   f"{opts.shown(exe)} --gtest_filter='{test_filter}'"]
    return False


def run_sanitizer(ex: Exercise, opts: Options, res: Result, tool: str, quick: bool = False) -> bool:
    """compute-sanitizer --tool `tool` over the tests; False (points taken) on a finding.

    quick: the default pass, on sizes up to QUICK_MAX_N (or the exercise's quick_max_n),
    without the exercise's quick_skip cases, and within QUICK_LIMIT seconds; running out
    of time there is said, not counted against the student."""
    if not _have_sanitizer(res, tool, quick):
        return True
    return _sanitizer_verdict(ex, opts, res, tool, quick, [_sanitizer_program(ex, opts, tool, quick)])


def _have_sanitizer(res: Result, tool: str, quick: bool) -> bool:
    """Whether compute-sanitizer is on PATH; where not, says so in res (no points taken)."""
    if shutil.which("compute-sanitizer") is not None:
        return True
    if quick:
        if "quick sanitizer pass skipped" not in res.reason:
            res.reason += "; quick sanitizer pass skipped (no compute-sanitizer on PATH)"
    else:
        res.details.append(f"compute-sanitizer is not on PATH: the {tool} check was not run")
    return False


def run_quick_pass(ex: Exercise, opts: Options, res: Result, tools: tuple[str, ...]) -> bool:
    """The default quick sanitizer pass (run_sanitizer(quick=True) for each of `tools`); False
    (points taken) on a finding. Its programs run opts.exercise_jobs at once (quick_plan: racecheck
    in shards); the verdict is read in the tools' order, whichever program ends first, so it is
    the one a pass of one program at a time gives."""
    if not _have_sanitizer(res, tools[0] if tools else "memcheck", True):
        return True
    if opts.exercise_jobs <= 1:
        return all(run_sanitizer(ex, opts, res, tool, quick=True) for tool in tools)
    plan = quick_plan(tools, opts.exercise_jobs)
    runs = list(proc.map_parallel(
        trace.carry(lambda job: _sanitizer_program(ex, opts, job[0], True, job[1], job[2])),
        plan, opts.exercise_jobs))
    for tool in tools:
        mine = sorted((r for (t, _, _), r in zip(plan, runs) if t == tool), key=lambda r: r.shard)
        if not _sanitizer_verdict(ex, opts, res, tool, True, mine):
            return False
    return True


# The small-GPU pass (the manifest's small_gpu): where an exercise's launches depend on the
# device's limits, the default grading runs its tests again, after they pass, under the device
# profile of a smaller GPU (CUDALAB_DEVICE_PROFILE) at the quick pass's sizes. The course then
# sizes its launches for that GPU, and the runner refuses a launch beyond that GPU's limits: a
# tile hard-coded for the H100 (more shared memory per block than a T4 has) fails there, on
# the H100 too, as it would on the student's own smaller GPU.
SMALL_GPU_LIMIT = 90.0


def run_small_gpu_pass(ex: Exercise, opts: Options, res: Result) -> bool:
    """The small-GPU pass of `ex` (none where the manifest names no small_gpu, or where the
    whole grading already runs under a device profile); False (points taken) when a test
    fails, crashes or does not finish under it."""
    profile = ex.small_gpu
    if not profile or opts.extra_env.get(PROFILE_ENV) or os.environ.get(PROFILE_ENV):
        return True
    exe = opts.checker(ex.test_target(opts.implementation))
    max_n = str(ex.quick_max_n or QUICK_MAX_N)
    env = {PROFILE_ENV: profile, "CUDALAB_MAX_N": max_n}
    limit = min(opts.time_limit(), SMALL_GPU_LIMIT)
    run = _run_part(ex, opts, exe, "", ex.test_filter, f", as on a {profile} GPU",
                    extra_env=env, limit=limit)
    p, rep = run.p, run.rep
    where = f"under the {profile} device profile (CUDALAB_DEVICE_PROFILE={profile}, n <= {max_n})"
    rerun = (f"rerun: {_seed_prefix(opts)}CUDALAB_DEVICE_PROFILE={profile} CUDALAB_MAX_N={max_n} "
             f"{opts.shown(exe)} --gtest_filter='{ex.test_filter}'")
    why = ("the tests passed on this GPU; with the limits of a smaller one (shared memory per "
           "block, threads, SMs) they do not: size launches from cudalab::device_limits() (or "
           "cudaDeviceGetAttribute, cudaGetDeviceProperties, the occupancy API: under the profile "
           "they answer as that GPU), never from one GPU's numbers")
    failed: list[tuple[str, str]] = list(rep.failed) if rep is not None else []
    if rep is not None and not failed and p.returncode == 0 and not p.timed_out:
        res.reason += f"; passes {where}"
        return True
    res.correctness_points = 0.0
    if p.timed_out:
        res.status = TIMEOUT
        res.reason = f"timed out after {limit:g} s {where}"
    elif rep is None or not failed:
        res.status = CRASHED
        res.reason = f"crashed {where}: {p.failure()}"
    else:
        res.status = FAILED
        res.reason = f"{len(failed)} of {rep.total} tests failed {where}"
    res.details = [why]
    for name, msg in failed[:3]:
        res.details.append(f"FAILED {name} ({profile})\n{gtest.trim(opts.clean(msg))}")
    if not failed:
        res.details.append(gtest.tail(p.output))
    if run.printed:
        res.details.append("your code printed (last lines):\n" + run.printed)
    res.details.append(rerun)
    return False


SANITIZER_MARK = "========= "


def sanitizer_finding(text: str) -> str | None:
    """The first error compute-sanitizer reports in `text` ('Invalid __global__ read of size 4
    bytes', 'Race reported between ...'), or None; its banner, summaries (ERROR SUMMARY,
    RACECHECK SUMMARY), warnings, a CUDA call's returned error ("Program hit ...") and indented
    detail lines are no error. A line is read from its mark on, wherever it stands: the runner's
    output shares the log, and text it printed without a newline would otherwise hide the
    sanitizer's line behind it."""
    for line in text.splitlines():
        at = line.find(SANITIZER_MARK)
        while at >= 0:
            rest = line[at + len(SANITIZER_MARK):]
            said = rest.strip()
            # "Program hit cudaError... on CUDA API call to ...": a CUDA call that returned an error,
            # which a correct program may make on purpose and handle (a bad argument's test)
            if said and not rest.startswith(" ") and not said.startswith(("COMPUTE-SANITIZER", "Warning",
                                                                          "Program hit")) \
                    and "SUMMARY:" not in said:
                return said
            at = line.find(SANITIZER_MARK, at + 1)
    return None


def log_finding(path: Path, limit: int = proc.MAX_FILE, chunk: int = 1 << 20) -> str | None:
    """sanitizer_finding over a whole runner log, its first `limit` bytes (the runner writes
    no file past proc.MAX_FILE), read `chunk` bytes at a time; None when unreadable."""
    mark = SANITIZER_MARK.encode()
    try:
        with path.open("rb") as f:
            rest, read = b"", 0
            while read < limit:
                data = f.read(min(chunk, limit - read))
                if not data:
                    break
                read += len(data)
                lines = (rest + data).split(b"\n")
                rest = lines.pop()
                if len(rest) > 8192:  # a line without end: its middle cannot hold a whole mark
                    rest = rest[:4096] + rest[-4096:]
                marked = [ln for ln in lines if mark in ln]
                found = sanitizer_finding("\n".join(ln.decode(errors="replace") for ln in marked))
                if found is not None:
                    return found
            return sanitizer_finding(rest.decode(errors="replace"))
    except OSError:
        return None


def _sanitizer_error(p: proc.Proc) -> str:
    for line in p.output.splitlines():
        if line.startswith("========= ") and not line.startswith("=========  "):
            text = line[len("========= "):].strip()
            if text and not text.startswith(("COMPUTE-SANITIZER", "ERROR SUMMARY")):
                return text
    for line in p.output.splitlines():
        if "ERROR SUMMARY" in line:
            return line.strip("= ").strip()
    return p.failure()


def visible_devices(env: dict[str, str]) -> str:
    """The CUDA_VISIBLE_DEVICES a program started with `env` sees (proc.run adds env to the
    grader's own environment): env's, else the grader's, "" when neither sets it."""
    if "CUDA_VISIBLE_DEVICES" in env:
        return env["CUDA_VISIBLE_DEVICES"]
    return os.environ.get("CUDA_VISIBLE_DEVICES", "")


def _gpu_env(opts: Options) -> dict[str, str]:
    """What gpuwatch needs to query the benchmark's GPU: its CUDA_VISIBLE_DEVICES."""
    vis = visible_devices(opts.env())
    return {"CUDA_VISIBLE_DEVICES": vis} if vis else {}


# pids the grader waited IDLE_WAIT_S for in vain (a job of someone else's that stays): reported
# at every benchmark that shares the GPU with them, but not waited for again
_waited_out: set[int] = set()
_waited_lock = threading.Lock()  # class grading: one worker thread per GPU slot


def wait_for_gpu(opts: Options) -> gpuwatch.Idle:
    """Before a benchmark: waits, up to IDLE_WAIT_S seconds, until the grader's own programs
    that have ended are gone (their zombies reaped: proc.leftovers; a runner can outlive its
    checker by the time it takes to tear down its CUDA context) and nvidia-smi shows no compute
    process on the benchmark's GPU but the grader. What it found (gpuwatch.Idle)."""
    env = _gpu_env(opts)
    device = env.get("CUDA_VISIBLE_DEVICES", "")
    with _waited_lock:
        ignore = frozenset(_waited_out)
    with trace.phase("waiting for a free GPU (nvidia-smi)"):
        idle = gpuwatch.wait_idle(env, IDLE_WAIT_S, IDLE_POLL_S, pending=lambda: proc.leftovers(device),
                                  ignore=ignore)
    with _waited_lock:
        _waited_out.update(int(b.split()[0]) for b in idle.blocking if b.split()[0].isdigit())
    return idle


def _bench_once(ex: Exercise, opts: Options, target: str, reps: int, runner: Path | None = None
                ) -> tuple[proc.Proc, str, dict, str | None]:
    """One run of the benchmark program: (process, its JSON file's text, gpuwatch summary,
    gpuwatch's clock drop or None). `runner`: another runner than the graded one (the
    reference solution's, _reference_ratio)."""
    perf = ex.perf
    assert perf is not None
    # The benchmark program is a checker (the instructor's, in class grading): it
    # times the student's calls in the runner, sandboxed, from outside. Its JSON
    # goes to a file of the grader's; what the runner prints is never read.
    with tempfile.TemporaryDirectory(prefix="cudalab-bench-") as tmp:
        out = Path(tmp) / "bench.json"
        cmd = [str(opts.checker(target)),
               f"--benchmark_filter={bench.filter_for(perf.benchmark, perf.baseline)}",
               f"--benchmark_repetitions={reps}", f"--benchmark_min_time={PERF_MIN_TIME_S:g}",
               "--benchmark_report_aggregates_only=false",
               f"--benchmark_out={out}", "--benchmark_out_format=json"]
        env = opts.env() | opts.runner_env(ex, Path(tmp) / "runner.log")
        if runner is not None:
            # the reference solution is the course's own code, not the student's: it runs
            # outside the sandbox, which in class grading shows the student's build alone
            env["CUDALAB_RUNNER"] = str(runner.resolve())
            env.pop("CUDALAB_RUNNER_PREFIX", None)
        with trace.phase(f"benchmark {Path(cmd[0]).name}" + (" (the reference solution)" if runner else "")), \
                gpuwatch.Monitor(_gpu_env(opts)) as mon:
            p = opts.run(cmd, env, on_start=mon.started)
        text = out.read_text(errors="replace") if out.is_file() else ""
    return p, text, mon.summary(), mon.clock_drop()


def _others(gpu: dict | None) -> list[str]:
    """The other processes a gpuwatch summary saw on the GPU ([] when none or unknown)."""
    others = (gpu or {}).get("other_processes")
    return list(others) if isinstance(others, list) else []


def _merge_gpu(a: dict | None, b: dict) -> dict:
    """Two runs' gpuwatch summaries as one: clock ranges widened, other processes joined."""
    if a is None:
        return b
    out = dict(b)
    for key in ("sm_mhz", "mem_mhz"):
        x, y = a.get(key), b.get(key)
        if isinstance(x, list) and isinstance(y, list):
            out[key] = [min(x[0], y[0]), max(x[1], y[1])]
        elif isinstance(x, list):
            out[key] = x
    if isinstance(a.get("other_processes"), list):
        mine = b.get("other_processes") if isinstance(b.get("other_processes"), list) else []
        out["other_processes"] = sorted(set(a["other_processes"]) | set(mine))
    if out.get("max_sm_mhz") == gpuwatch.UNKNOWN:
        out["max_sm_mhz"] = a.get("max_sm_mhz", gpuwatch.UNKNOWN)
    return out


def _bench_document(p: proc.Proc, text: str) -> tuple[dict | None, str]:
    """A benchmark run's JSON document (bench.parse_document of its file's text), or (None, why
    not): it timed out, failed, or wrote no result."""
    if p.timed_out or p.returncode != 0:
        return None, f"benchmark {'timed out' if p.timed_out else p.failure()}"
    data = bench.parse_document(text)
    return (data, "") if data is not None else (None, "the benchmark wrote no JSON result")


def _reference_runner(ex: Exercise, opts: Options) -> Path | None:
    """The reference solution's runner beside the checkers (the student's own build, or the
    instructor's in class grading), when the graded code is not the reference itself; else None."""
    if opts.implementation == "solution":
        return None
    runner = opts.checker(ex.runner_target("solution"))
    return runner if runner.is_file() else None


# The reference solution's ratios measured in this process (a class is graded by threads of one
# process): (exercise, GPU name, reference runner) -> ratio, so that a class graded on a GPU the
# reference tables leave out measures each exercise's reference once, not once per student.
_REFERENCE_MEASURED: dict[tuple[str, str, str], float] = {}
_REFERENCE_LOCK = threading.Lock()


def _reference_ratio_cached(ex: Exercise, opts: Options, target: str, runner: Path,
                            device: str | None) -> tuple[float | None, str]:
    """_reference_ratio, measured once per (exercise, GPU name, runner) in this process; a
    failed measurement is not kept (the next submission tries again)."""
    key = (ex.id, device or "", str(runner.resolve()))
    with _REFERENCE_LOCK:
        if key in _REFERENCE_MEASURED:
            return _REFERENCE_MEASURED[key], ""
    ratio, why = _reference_ratio(ex, opts, target, runner)
    if ratio is not None and device:
        with _REFERENCE_LOCK:
            _REFERENCE_MEASURED.setdefault(key, ratio)
    return ratio, why


def _reference_ratio(ex: Exercise, opts: Options, target: str, runner: Path) -> tuple[float | None, str]:
    """The reference solution's ratio measured on this GPU by the exercise's benchmark program
    (PERF_REPETITIONS repetitions, after waiting for a free GPU): its baseline's median time
    over the reference's, or, for a calibrated host baseline, the calibration's baseline time
    over the reference's (as the student's ratio on a GPU whose target moved). (None, why) when
    it could not be measured."""
    perf = ex.perf
    assert perf is not None
    wait_for_gpu(opts)
    p, text, _, _ = _bench_once(ex, opts, target, PERF_REPETITIONS, runner)
    data, failed = _bench_document(p, text)
    if data is None:
        return None, failed
    results = list(data["benchmarks"])
    ref, why = bench.real_time_ns(results, perf.benchmark)
    base, why_base = bench.real_time_ns(results, perf.baseline)
    if ref is None or ref <= 0 or (perf.calibration is None and base is None):
        return None, why or why_base or "zero time"
    return (perf.calibration.baseline_ns if perf.calibration is not None else base) / ref, ""


def target_text(perf: manifest.Perf, goal: manifest.Target) -> str:
    """The target as a reason shows it: `target 0.45` on the calibration GPU; moved to another
    GPU, `target 0.319 on NVIDIA H200 = 0.45 on the H100 x 0.71, the reference's ratio here over
    there`; on a GPU the exercise's reference table leaves out, the manifest's target and why."""
    cal = manifest.CALIBRATION_GPU_SHORT
    if goal.measured is not None:
        return (f"target {goal.ratio:g} on {goal.device or 'this GPU'} = {goal.calibration:g} on the "
                f"{cal} x {goal.scale:.2f}, the reference's ratio measured here over there")
    if goal.scale is not None and goal.scale != 1.0:
        return (f"target {goal.ratio:g} on {goal.device} = {goal.calibration:g} on the {cal} x "
                f"{goal.scale:.2f}, the reference's ratio here over there")
    if goal.scale is None and perf.reference:
        return f"target {goal.calibration:g}, the {cal}'s: no reference ratio for {goal.device or 'this GPU'}"
    return f"target {goal.ratio:g}"


def target_details(perf: manifest.Perf, goal: manifest.Target) -> str:
    """The details' line on the target: where it was set and how it moved to this GPU, or why not
    (docs/guides/grading.md, "A target on another GPU")."""
    cal, here = manifest.CALIBRATION_GPU, goal.device or "this GPU (the benchmark did not name it)"
    if goal.measured is not None:
        return (f"target: {goal.ratio:g}, the {goal.calibration:g} set on {cal} times {goal.scale:.3g}, "
                f"the reference solution's ratio measured by this grader on {here}, "
                f"{bench.fmt_ratio(goal.measured)}, over its {perf.reference_on(cal):g} there")
    if goal.scale is None:
        return (f"target: {goal.calibration:g}, as set on the calibration GPU, {cal}: this exercise "
                f"has no reference solution's ratio for {here}, so the target is not moved to it")
    if goal.scale == 1.0 and manifest.gpu_key(here) == manifest.gpu_key(cal):
        return f"target: {goal.ratio:g}, set on this GPU, {cal}"
    return (f"target: {goal.ratio:g}, the {goal.calibration:g} set on {cal} times {goal.scale:.3g}, "
            f"the reference solution's ratio on {here}, {perf.reference_on(here):g}, over its "
            f"{perf.reference_on(cal):g} there")


def run_perf(ex: Exercise, opts: Options, res: Result) -> None:
    """The exercise's speed against its baseline (docs/guides/grading.md): PERF_REPETITIONS
    repetitions, the ratio of the medians with its 95 % interval, the GPU's clocks and other
    processes during the run; no speed points, verdict 'implausible', for a speed no kernel can
    reach. Each run starts once the GPU is free (wait_for_gpu). At most two runs: the second
    replaces the first when the first missed the target while another process was on the GPU
    or the SM clock fell, else is pooled with it when the first's interval straddles the
    target. A speed below the target measured with another process on the GPU even so is not
    the student's: verdict 'gpu_busy', its speed points neither earned nor counted."""
    perf = ex.perf
    assert perf is not None
    target = ex.bench_target(opts.implementation)
    short = perf.baseline.split("/")[0]
    if target in opts.not_built:
        res.reason += f"; perf: benchmark not built ({opts.not_built[target][0]})"
        res.details.extend(opts.not_built[target][1])
        return
    mine_ns: list[float] = []
    base_ns: list[float] = []
    bps: list[float] = []
    copy: list[float] = []
    l2: float | None = None
    gpu = None
    device = None
    runs = 0
    again = ""      # why the second run: "" (one run), "pooled", or the first's disturbance
    both = False    # the first run was dropped for another process on the GPU
    waits: list[str] = []
    waited_busy = False  # a wait gave up with another process on the GPU
    cal = perf.calibration
    goal = perf.target_on(None)
    measured: float | None = None  # the reference solution's ratio measured in this run
    unmeasured = ""                # why it could not be, when it was tried
    tried = False
    force = os.environ.get(manifest.MEASURE_REFERENCE_ENV, "") == "1"
    while True:
        idle = wait_for_gpu(opts)
        waited_busy = waited_busy or idle.busy()
        if idle.describe():
            waits.append(idle.describe())
        p, text, watched, drop = _bench_once(ex, opts, target, PERF_REPETITIONS)
        runs += 1
        gpu = _merge_gpu(gpu, watched)
        data, failed = _bench_document(p, text)
        if data is None:
            res.reason += f"; perf: {failed}"
            res.details.append(gtest.tail(p.output))
            return
        results = list(data["benchmarks"])
        mine, why = bench.real_time_ns(results, perf.benchmark)
        base, why_base = bench.real_time_ns(results, perf.baseline)
        if mine is None or base is None or mine <= 0:
            res.reason += f"; perf: {why or why_base or 'zero time'}"
            return
        mine_ns += bench.repetition_times_ns(results, perf.benchmark) or [mine]
        base_ns += bench.repetition_times_ns(results, perf.baseline) or [base]
        b = bench.bytes_per_second(results, perf.benchmark)
        if b is not None:
            bps.append(b)
        c = bench.copy_bandwidth_gbps(data, results)
        if c is not None:
            copy.append(c)
        l2 = bench.l2_bytes(data) or l2
        ctx = data.get("context") if isinstance(data.get("context"), dict) else {}
        device = str(ctx["device"]) if isinstance(ctx.get("device"), str) and ctx["device"] else device
        raw = bench.ratio_interval(base_ns, mine_ns)
        # the target on this GPU: moved with the reference solution's ratio where the manifest
        # lists this GPU (docs/guides/grading.md, "A target on another GPU")
        goal = perf.target_on(device)
        # on a GPU the table leaves out (or on every GPU, with MEASURE_REFERENCE_ENV): the target
        # moves with the reference solution's ratio measured here, once, where its runner is built
        if (goal.scale is None or force) and perf.reference and not tried:
            tried = True
            runner = _reference_runner(ex, opts)
            if runner is not None:
                measured, unmeasured = _reference_ratio_cached(ex, opts, target, runner, device)
        if measured is not None:
            goal = perf.target_measured(device, measured)
        # A calibrated host baseline: the score is against its time on the calibration machine;
        # on a GPU the reference table lists, over the exercise's time as measured (the target
        # moved instead), elsewhere over its time scaled to the calibration GPU by the copy
        # bandwidths; without a copy bandwidth there the measured ratio counts.
        scale = (None if cal is None else 1.0 if goal.listed
                 else max(copy) / cal.copy_gbps if copy else None)
        ratio, low, high = bench.calibrated_interval(cal.baseline_ns, mine_ns, scale) \
            if cal is not None and scale is not None else raw
        if runs >= 2:
            break
        others = _others(watched)
        disturbed = (f"another process was on the GPU ({', '.join(others[:3])})" if others
                     else drop or "")
        if disturbed and ratio < goal.ratio:
            # not the student's speed: measured again once the GPU is free, and the first run's
            # figures dropped (pooling them would keep the disturbance in the ratio)
            again = f"the first run, {bench.fmt_ratio(ratio)}, was dropped: {disturbed}"
            both = bool(others)  # a second run on a busy GPU makes both
            mine_ns, base_ns, bps, copy, l2, gpu = [], [], [], [], None, None
            continue
        if not bench.straddles(low, high, goal.ratio):
            break
        again = "pooled"
    res.ratio = float(f"{ratio:.3g}")
    res.ratio_low, res.ratio_high = float(f"{low:.3g}"), float(f"{high:.3g}")
    mine_med, base_med = statistics.median(mine_ns), statistics.median(base_ns)
    copy_max = max(copy) if copy else None
    res.ratio_raw = float(f"{raw[0]:.3g}")
    res.repetitions = len(mine_ns)
    res.time_ns = float(f"{mine_med:.4g}")
    res.baseline_ns = float(f"{base_med:.4g}")
    res.gpu = gpu
    res.copy_gbps = float(f"{copy_max:.5g}") if copy_max is not None else None
    res.device = device
    res.host = bench.host_cpu()
    res.target, res.target_calibration = goal.ratio, goal.calibration
    res.target_scale = float(f"{goal.scale:.3g}") if goal.scale is not None else None
    res.target_device = manifest.CALIBRATION_GPU
    res.target_reference = float(f"{goal.measured:.3g}") if goal.measured is not None else None
    if len(mine_ns) > 1 or len(base_ns) > 1:
        spread = f"95 % interval {bench.fmt_ratio(low)}-{bench.fmt_ratio(high)}, {len(mine_ns)} repetitions"
    else:
        spread = "1 repetition, no interval"
    if again == "pooled":
        spread += " (measured twice: the first interval straddled the target)"
    elif again:
        spread += f" (measured twice: {again})"
    most = perf.max_plausible_ratio
    most = most * goal.scale if most is not None and goal.scale is not None else most
    why = bench.implausible(ratio, goal.ratio, max(bps) if bps else None, copy_max,
                            most, perf.bandwidth_check, l2, mine_med / 1e9)
    # what the ratio is of: the run's baseline, or the calibration machine's
    of, target_note, how = short, "", ""
    if cal is not None and scale is not None:
        host_speed = cal.baseline_ns / base_med
        res.calibration = {"device": cal.device, "host": cal.host,
                           "host_speed": float(f"{host_speed:.3g}"),
                           "gpu_scale": None if goal.listed else float(f"{scale:.4g}")}
        of = f"{short} at the calibration host's speed"
        target_note = f", measured here {bench.fmt_ratio(raw[0])}"
        gpu_time = ("your GPU time as measured: the target moved with the reference solution's "
                    "speed on this GPU instead" if goal.listed else
                    f"times scaled by the copy bandwidth, {copy_max:.0f} GB/s here against "
                    f"{cal.copy_gbps:.0f} GB/s on the calibration GPU, {cal.device}")
        how = (f" (measured here {bench.fmt_ratio(raw[0])}; this host runs {short} {host_speed:.2f}x as "
               f"fast as the calibration host, {cal.host}; {gpu_time})")
    elif cal is not None:
        of = f"{short} as measured here"
        target_note = (", not normalised to the calibration host: the benchmark reported no copy "
                       "bandwidth to scale its time by")
        how = (" (not normalised to the calibration host's speed: the benchmark reported no device "
               "copy bandwidth, so the ratio measured here counts)")
    res.details.append(f"speed: ratio {bench.fmt_ratio(ratio)} of {of}{how}, {spread}; "
                       f"{gpuwatch.describe(gpu)}" + "".join(f"; {w}" for w in waits))
    res.details.append(target_details(perf, goal))
    if unmeasured:
        res.details.append(f"target: the reference solution's speed could not be measured here: {unmeasured}")
    if why is not None:
        res.perf_verdict, res.perf_points, res.perf = IMPLAUSIBLE, 0.0, IMPLAUSIBLE
        res.reason += f"; perf: no speed points, {why}"
        return
    others = _others(gpu)
    if others and ratio < goal.ratio:
        # twice timed beside another program (or once, after a straddling run): the ratio says
        # how busy the GPU was, not how fast the code is; no points taken for it, none given
        res.perf_verdict, res.perf_points, res.perf = GPU_BUSY, 0.0, "GPU busy"
        res.max_points -= float(perf.points)
        res.reason += (f"; perf: not measured fairly: another process was on the GPU while it was "
                       f"timed ({', '.join(others[:3])}){', after waiting for it' if waited_busy else ''}"
                       f"{', in both runs' if both else ''}; "
                       f"the ratio measured, {bench.fmt_ratio(ratio)} of {of} ({target_text(perf, goal)}), "
                       f"is not your speed: its {perf.points:g} speed points are neither earned nor "
                       "counted; grade again on an idle GPU")
        return
    res.perf_verdict = "ok"
    res.perf_points = bench.perf_points(perf.points, res.ratio, goal.ratio)
    res.perf = f"{bench.fmt_ratio(res.ratio)} ({bench.fmt_ratio(low)}-{bench.fmt_ratio(high)})" \
        if len(mine_ns) > 1 or len(base_ns) > 1 else bench.fmt_ratio(res.ratio)
    res.reason += (f"; ratio {bench.fmt_ratio(res.ratio)} of {of} ({target_text(perf, goal)}{target_note}), "
                   f"{spread}, {gpuwatch.short(gpu)}")


def _seed_prefix(opts: Options) -> str:
    return f"CUDALAB_SEED={opts.seed} " if opts.seed is not None else ""


def _rerun_one(opts: Options, shown: str, test: str | None) -> str | None:
    if not test:
        return None
    return f"rerun: {_seed_prefix(opts)}{shlex.quote(shown)} --gtest_filter='{test}'"
