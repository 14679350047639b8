"""What grading one tree needs before it runs, for tools/grade's modes: the build of the
programs grading needs (configured when needed, with its progress), the sandbox, the
messages for a machine without a GPU or without a tool, and the record of the results
that --progress and --watch read."""
from __future__ import annotations

import os
import sys
import textwrap
import time

from . import build, manifest, progress, trace
from .grading import Options, use_sandbox


def wanted_targets(exercises, opts: Options) -> dict[str, str]:
    """target -> the student's source it is built from, for the programs grading needs. With
    --perf, the reference solution's runner too where a target may have to be measured against
    it (reference_needed)."""
    wanted = {}
    asks = opts.perf and opts.implementation != "solution" and any(ex.perf and ex.perf.reference
                                                                   for ex in exercises)
    names = None
    if asks:
        with trace.phase("nvidia-smi: the GPUs' names"):
            names = build.gpu_names()
    for ex in exercises:
        src = ex.source(opts.implementation)
        wanted[ex.test_target(opts.implementation)] = src
        wanted[ex.runner_target(opts.implementation)] = src
        if opts.perf and ex.perf:
            wanted[ex.bench_target(opts.implementation)] = src
            if reference_needed(ex, opts, names):
                wanted[ex.runner_target("solution")] = ex.source("solution")
    return wanted


def reference_needed(ex, opts: Options, names: list[str] | None) -> bool:
    """Whether grading ex with --perf may measure the reference solution in the same run
    (grading.run_perf): the graded code is not the reference, the tree has the reference's
    source, and a GPU of `names` (nvidia-smi's; None: unknown) is not in the exercise's
    reference table, or CUDALAB_MEASURE_REFERENCE=1 asks for it everywhere."""
    if opts.implementation == "solution" or ex.perf is None or not ex.perf.reference:
        return False
    if not (opts.root / ex.source("solution")).is_file():
        return False
    if os.environ.get(manifest.MEASURE_REFERENCE_ENV, "") == "1" or names is None:
        return True
    return any(ex.perf.reference_on(n) is None for n in names)


class BuildProgress:
    """Ninja's "[k/n]" steps as "building: k of n": in place on a terminal, else a line
    every `every` seconds (and the last step)."""

    def __init__(self, stream, every: float = 15.0):
        self.stream, self.tty = stream, stream.isatty()
        self.every = 0.3 if self.tty else every
        self.last, self.shown = -1e9, False

    def __call__(self, k: int, n: int) -> None:
        now = time.monotonic()
        if k < n and now - self.last < self.every:
            return
        self.last, self.shown = now, True
        if self.tty:
            self.stream.write(f"\rbuilding: {k} of {n}\x1b[K")
        else:
            self.stream.write(f"building: {k} of {n}\n")
        self.stream.flush()

    def end(self) -> None:
        if self.tty and self.shown:
            self.stream.write("\n")
            self.stream.flush()


def not_a_file(path) -> str | None:
    """What stands at path when it is there but no regular file (links followed, as the
    compiler follows them): "a folder" or "a FIFO, socket or device"; None otherwise. The
    compiler would wait forever on a FIFO, and the checks would read it."""
    import stat
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    return None if stat.S_ISREG(mode) else "a FIFO, socket or device"


def prepare_build(args, exercises, opts: Options, say, extra: dict[str, str] | None = None) -> None:
    """Configure and build what is needed (and the `extra` targets); record in opts what is
    not built.

    Raises build.SetupError when the machine lacks a tool or CMake's configure fails:
    that is never the student's "did not compile"."""
    wanted = wanted_targets(exercises, opts) | (extra or {})
    for target, src in list(wanted.items()):   # built from no file: never handed to the build
        kind = not_a_file(opts.root / src)
        if kind is not None:
            opts.not_built[target] = (f"not built: {src} is {kind}, not a file",
                                      [f"{src} must be the exercise's source file (the starter's "
                                       "file, edited); put the file back in its place"])
            del wanted[target]
    if not args.no_build:
        cache = (opts.build_dir / "CMakeCache.txt").exists()
        # build/default after a failed configure has a cache but no build.ninja: configure again
        will_configure = not cache or (args.build_dir is None and not build.configured(opts.build_dir))
        build.check_setup(opts.build_dir, will_configure, say)
        if will_configure:
            say(f"configuring {opts.shown(opts.build_dir)} (cmake --preset default) ...")
            build.configure(opts.root, opts.build_dir)
        known = build.known_targets(opts.build_dir)
        targets = [t for t in wanted if known is None or t in known]
        for t in wanted:
            if t not in targets:
                opts.not_built[t] = (f"no target {t} in {opts.shown(opts.build_dir)}",
                                     ["reconfigure it, or check the chapter's CMakeLists.txt"])
        if targets:
            say(f"building {len(targets)} program(s) in {opts.shown(opts.build_dir)} "
                f"(log: {opts.shown(build.log_path(opts.build_dir))}) ...")
            progress = None if args.quiet else BuildProgress(sys.stderr)
            try:
                rc = build.build(opts.build_dir, targets, args.jobs, append=False, progress=progress)
            finally:
                if progress is not None:
                    progress.end()
            problem = build.build_setup_problem(opts.build_dir, rc)
            if problem is not None:
                raise problem
    remaining = {t: s for t, s in wanted.items() if t not in opts.not_built}
    unbuilt = build.unbuilt(opts.build_dir, remaining, args.no_build)
    for t, (reason, details) in unbuilt.items():
        hint = build.encoding_hint(opts.root / remaining[t]) if reason == "did not compile" else None
        if hint:   # nvcc's errors ('invalid preprocessing directive #i') do not say why
            details.append(hint)
    opts.not_built.update(unbuilt)


def no_gpu_message(why: str) -> str:
    return textwrap.dedent(f"""\
        tools/grade: no NVIDIA GPU here ({why}).
        Grading runs your code's tests on a CUDA GPU, so nothing was built or graded.
        What this machine can do:
          tools/grade --compile-only [WHAT]   build your exercises and check them for forbidden
                                              APIs (no test runs; the first build takes minutes)
          tools/grade --hint 1.1              hints; the lessons are in chapters/*/README.md
          cmake --workflow --preset ci        (contributors) build everything, run the host tests
        Then grade on a machine with an NVIDIA GPU and its driver (nvidia-smi lists the GPU).
        """)


def setup_message(e: build.SetupError) -> str:
    return f"tools/grade: setup problem: {e.what}, fix: {e.fix}\n"


def build_step(args, exercises, opts: Options, say, extra: dict[str, str] | None = None) -> str | None:
    """Configures and builds what grading the exercises needs; the setup problem's
    message when the machine lacks something (nothing can be graded), else None."""
    try:
        prepare_build(args, exercises, opts, say, extra)
    except build.SetupError as e:  # the machine's problem, never the student's
        return setup_message(e)
    except Exception as e:  # grade anyway: whatever is not built is reported per exercise
        say(f"grade: the build step failed ({type(e).__name__}: {e}); grading what is built")
    return None


def set_sandbox(args, opts: Options) -> None:
    (opts.build_dir / "bin").mkdir(parents=True, exist_ok=True)
    if not args.no_sandbox and use_sandbox(opts, [opts.build_dir / "bin"]) is None and not args.quiet:
        print("grade: no sandbox works on this machine (bubblewrap, or util-linux unshare with "
              "user namespaces): your code's runner runs with your rights; see "
              "python3 tools/cudalab_grade/sandbox.py --check", file=sys.stderr)


def record_progress(opts: Options, results, say) -> None:
    """The results into .grade/state.json (--progress, --watch); a failure is only a warning."""
    try:
        progress.update(opts.root, opts.implementation, results, perf=opts.perf,
                        fast=not opts.quick_sanitize and not opts.sanitize)
    except (OSError, ValueError, TypeError) as e:
        say(f"grade: could not record your progress in {opts.shown(progress.state_path(opts.root))} "
            f"({e}); grading is not affected")
