"""tools/gpu-check's frame: the steps and their defaults, the options of one invocation
(Context, whose run() runs and logs every command of a step), the machine it runs on
and the commit it checks."""
from __future__ import annotations

import datetime as dt
import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

from .. import proc  # one process runner for every tool
from ..grading import DEVICE_PROFILES  # the device profiles' names (cudalab/device.cuh)
from ..gtest import NO_DEVICE  # what a test program prints without a GPU
from ..manifest import load_all  # one manifest reader for every tool

STEPS = ("build", "test", "profiles", "grade", "loop", "redteam", "partial", "mutation", "class",
         "sanitize", "bench", "portability")
# loop times a student's gradings (minutes), mutation grades a class of mutants (minutes of
# compiles), class a generated class twice (with and without the sandbox): only when --steps
# names them
OPT_IN_STEPS = ("loop", "mutation", "class")
DEFAULT_STEPS = tuple(s for s in STEPS if s not in OPT_IN_STEPS)
# The default subset of DEVICE_PROFILES for the profiles step: the smallest GPU students
# own and the largest one an H100 can stand in for (every limit is the smaller of the
# profile's and the device's), to keep the step within a few minutes of a GPU.
DEFAULT_PROFILES = ("t4", "h100")
TERM_GRACE = 20.0     # seconds a tool (a grader) gets after SIGTERM to stop its own programs
CLASS_TIMEOUT = 120.0   # seconds per test program of a partial starter or a mutant
# The class step: students of tools/make-class's class, graded with and without the
# sandbox; seconds per test program there (short, so that the hang kind does not dominate);
# the most the sandbox may add to the class's wall time, in percent of the time without it
CLASS_SIZE = 100
CLASS_STEP_TIMEOUT = 30.0
SANDBOX_OVERHEAD_LIMIT = 15.0
# The architectures the course supports (the portability step compiles for each):
# Turing T4, A100, RTX 30, RTX 40 and L4, H100/H200, B200, RTX 50.
PORTABILITY_ARCHS = ("75", "80", "86", "89", "90", "100", "120")
MAX_RESULT_FILES = 5  # DIR holds report.md, report.json, logs.tar.gz and these
SKIPPED = "skipped"          # a step that starter-only mode does not run: not a failure
OK_STATUSES = ("passed", SKIPPED)
NO_SOLUTIONS = "no solutions in this tree"


class Interrupted(Exception):
    """SIGTERM or Ctrl-C: record the step as interrupted and still write the report."""


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def parse_steps(text: str) -> list[str]:
    wanted = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in wanted if s not in STEPS]
    if unknown:
        raise ValueError(f"unknown step(s) {', '.join(unknown)}; choose from {','.join(STEPS)}")
    return [s for s in STEPS if s in wanted]


def parse_profiles(text: str) -> list[str]:
    """--profiles: comma-separated names of DEVICE_PROFILES, or `all`; in the table's order."""
    wanted = [w.strip().lower() for w in text.split(",") if w.strip()]
    if wanted == ["all"]:
        return list(DEVICE_PROFILES)
    unknown = [w for w in wanted if w not in DEVICE_PROFILES]
    if unknown or not wanted:
        raise ValueError(f"unknown device profile(s) {', '.join(unknown) or '(none given)'}; "
                         f"choose from {','.join(DEVICE_PROFILES)} or all")
    return [p for p in DEVICE_PROFILES if p in wanted]


def parse_chapters(text: str, root: Path) -> list[str]:
    """'2,04-filtering-atomics' -> the chapters' directory names, in course order; '' -> []."""
    wanted = [w.strip() for w in text.split(",") if w.strip()]
    chapters = load_all(root)
    out = []
    for w in wanted:
        hits = [ch.dir for ch in chapters if w == ch.dir or (w.isdigit() and int(w) == ch.number)]
        if not hits:
            raise ValueError(f"unknown chapter '{w}'; choose from "
                             + ", ".join(f"{ch.number} ({ch.dir})" for ch in chapters))
        out += [h for h in hits if h not in out]
    return [ch.dir for ch in chapters if ch.dir in out]


def starter_only_reason(root: Path, flag: bool) -> str | None:
    """Why gpu-check runs in starter-only mode (None: it does not): no solutions/ directory
    (the student edition), else --starter-only."""
    if not (root / "solutions").is_dir():
        return NO_SOLUTIONS
    return "--starter-only" if flag else None


def slug_chapters(root: Path) -> dict[str, str]:
    """Exercise slug -> its chapter's directory name."""
    return {e.slug: ch.dir for ch in load_all(root) for e in ch.exercises}


class Context:
    def __init__(self, root: Path, build_dir: Path, jobs: int, commit: str, timeout: float | None):
        self.root = root
        self.build_dir = build_dir
        self.default_build_dir = build_dir.resolve() == (root / "build" / "gpu").resolve()
        self.work = build_dir / "gpu-check"
        self.logs = self.work / "logs"
        self.jobs = jobs
        self.commit = commit
        self.timeout = timeout
        self.bench_repetitions = 3
        self.bench_min_time = 0.1
        self.bench_programs = ""
        self.sanitize_programs = ""
        self.parallel = 4
        self.class_deadline: float | None = None  # time.monotonic() by which class gradings stop
        self.profile_perf: list[str] = []  # profiles: exercises graded with --perf under each profile
        self.profile_ctest = False  # profiles: ctest's every test program besides the grading
        self.gpus: list[str] = []  # CUDA_VISIBLE_DEVICES values of the GPUs to spread work over
        self.racecheck_shards = 4
        self.chapters: list[str] = []  # chapter directories; empty = all
        self.profiles: list[str] = list(DEFAULT_PROFILES)  # the profiles step's device profiles
        self.starter_only: str | None = None  # why starter-only mode is on (None: off)
        self.out: Path | None = None   # gpu-check's --out (the red-team step writes DIR/redteam/)
        self.max_per_exercise: int | None = 3   # mutation: mutants per exercise (None: all)
        self.mutation_seed = 0
        self.mutation_operators = ""
        self.class_timeout = CLASS_TIMEOUT
        self.class_size = CLASS_SIZE                 # class: students of the generated class
        self.class_step_timeout = CLASS_STEP_TIMEOUT  # class: seconds per test program
        self.class_modes: tuple[str, ...] = ("sandbox", "none")  # class: the gradings run now
        self.previous: dict = {}  # step -> its record in state.json before this invocation
        self.nvcc: str | None = None  # portability: CMAKE_CUDA_COMPILER (None: CMake's choice)
        self.archs: list[str] = list(PORTABILITY_ARCHS)  # portability: the architectures
        self.env = dict(os.environ)
        self.env["CUDALAB_REQUIRE_GPU"] = "1"
        self.env["CUDALAB_COMMIT"] = commit
        cuda_bin = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin"
        if cuda_bin.is_dir() and str(cuda_bin) not in self.env.get("PATH", "").split(os.pathsep):
            self.env["PATH"] = self.env.get("PATH", "") + os.pathsep + str(cuda_bin)

    @functools.cached_property
    def slug_chapter(self) -> dict[str, str]:
        """Exercise slug -> its chapter's directory name (the manifests, read once)."""
        return slug_chapters(self.root)

    def in_scope(self, slug: str) -> bool:
        """Whether the exercise of this slug is in the chapters this invocation covers."""
        return not self.chapters or self.slug_chapter.get(slug) in self.chapters

    def chapter_numbers(self) -> set[str]:
        return {str(ch.number) for ch in load_all(self.root) if ch.dir in self.chapters}

    def scope_note(self) -> str:
        return f" (chapters {', '.join(self.chapters)})" if self.chapters else ""

    def which(self, name: str) -> str | None:
        return shutil.which(name, path=self.env.get("PATH"))

    def step_logs(self, step: str) -> Path:
        d = self.logs / step
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        return d

    def run(self, argv: list[str], log: Path, env: dict | None = None,
            timeout: float | None = None) -> tuple[int, str, float]:
        """Run argv in the repository root; stdout and stderr go to log. -> (rc, output, seconds).

        One runner for every tool (cudalab_grade.proc): the command runs in its own
        process group, which is killed on a timeout (rc 124) or when gpu-check is
        interrupted."""
        log.parent.mkdir(parents=True, exist_ok=True)
        print(f"$ {' '.join(argv)}   (log: {log})", flush=True)
        log.write_text(f"$ {' '.join(argv)}\n")
        timeout = timeout or self.timeout
        p = proc.run(argv, timeout, self.root, env=env or self.env, log=log, limit_files=False,
                     term_grace=TERM_GRACE)
        if p.timed_out:
            with log.open("a") as f:
                f.write(f"\ngpu-check: timed out after {timeout} s\n")
        rc = 124 if p.timed_out or p.returncode is None else p.returncode
        return rc, log.read_text(errors="replace"), p.seconds


def parse_profile_perf(text: str, root: Path) -> list[str]:
    """--profile-perf: exercise ids, or `auto` (every exercise with a speed target whose
    solution sizes its launches from cudalab/device.cuh, the ones a profile can change);
    '' for none. Raises ValueError naming an unknown id."""
    text = text.strip()
    if not text:
        return []
    from ..manifest import load_all  # the grader's manifests
    exercises = [ex for ch in load_all(root) for ex in ch.exercises]
    if text == "auto":
        return [ex.id for ex in exercises if ex.perf and "cudalab/device.cuh" in
                (root / ex.source("solution")).read_text(errors="replace")]
    known = {ex.id for ex in exercises}
    ids = [t.strip() for t in text.split(",") if t.strip()]
    bad = [i for i in ids if i not in known]
    if bad:
        raise ValueError(f"--profile-perf: unknown exercise(s) {', '.join(bad)}")
    return ids


def gpu_slots(ctx: Context, env_info: dict) -> list[str]:
    """The GPUs this run may use, as CUDA_VISIBLE_DEVICES values: those the environment
    names, else one per GPU nvidia-smi lists."""
    vis = (ctx.env.get("CUDA_VISIBLE_DEVICES") or "").strip()
    if vis:
        return [v.strip() for v in vis.split(",") if v.strip()]
    return [str(i) for i in range(len(env_info.get("gpus") or []))]


def tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def quick(argv: list[str], env: dict | None = None) -> tuple[int, str]:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
        return p.returncode, (p.stdout + p.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return 127, str(e)


def environment(ctx: Context) -> dict:
    info: dict = {"hostname": os.uname().nodename}
    smi = ctx.which("nvidia-smi")
    if smi:
        rc, out = quick([smi, "--query-gpu=name,driver_version,memory.total,clocks.max.sm",
                         "--format=csv,noheader"], ctx.env)
        info["gpus"] = [line.strip() for line in out.splitlines() if line.strip()] if rc == 0 else []
        if rc != 0:
            info["nvidia_smi_error"] = out.splitlines()[-1] if out else f"exit {rc}"
    else:
        info["gpus"] = []
        info["nvidia_smi_error"] = "nvidia-smi not found"
    info["gpu_present"] = bool(info["gpus"]) or (not smi and Path("/dev/nvidia0").exists())
    nvcc = ctx.which("nvcc")
    if nvcc:
        rc, out = quick([nvcc, "--version"], ctx.env)
        lines = [ln for ln in out.splitlines() if "release" in ln]
        info["nvcc"] = lines[-1].strip() if lines else out.splitlines()[-1] if out else "unknown"
    else:
        info["nvcc"] = "nvcc not found"
    return info


def device_line(env_info: dict) -> str:
    if env_info.get("gpus"):
        return "; ".join(env_info["gpus"])
    return f"{NO_DEVICE} ({env_info.get('nvidia_smi_error', 'no GPU found')})"


def skip_starter_only(ctx: Context, rec: dict, why: str) -> bool:
    """In starter-only mode, record the step as skipped (why: what it would need) -> True."""
    if not ctx.starter_only:
        return False
    rec["status"] = SKIPPED
    rec["summary"] = f"skipped: {ctx.starter_only}"
    rec["details"]["starter_only"] = ctx.starter_only
    rec["messages"].append(f"starter-only mode ({ctx.starter_only}): {why}")
    return True


def resolve_commit(arg: str | None, root: Path) -> str:
    if arg:
        return arg
    if os.environ.get("CUDALAB_COMMIT"):
        return os.environ["CUDALAB_COMMIT"]
    rc, out = quick(["git", "-C", str(root), "rev-parse", "HEAD"])
    if rc == 0 and re.fullmatch(r"[0-9a-f]{7,64}", out.strip()):
        # A tree that differs from HEAD (uncommitted edits, or a copy whose
        # .git is older than its files) is not that commit: say so.
        dirty, _ = quick(["git", "-C", str(root), "diff", "--quiet", "HEAD", "--"])
        return out.strip() + ("-dirty" if dirty != 0 else "")
    return "unknown"
