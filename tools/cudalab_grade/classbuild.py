"""Building a class: the instructor's tree once, then only each student's files.

The shared build is a copy of the course (`<out>/shared/course`, only what a
build needs) configured with the starter as the only implementation, built
once: the test objects, the benchmark objects, the test main and the
starter's own objects. None of these depends on a student's file.

For each submission, the course is copied again (`<out>/work/<student>/course`)
with the student's exercise files in place of the starter's. Each exercise
file is compiled on its own, with the exact command Ninja uses for the
starter's file (paths moved into the student's copy), then linked with the
shared objects by the exact link command of the shared build. So a compile
error costs only its own exercise, and a submission costs a few compiler
runs, not a whole build. ccache, when the build uses it, still serves files
it has seen (a resubmitted or unchanged file).

An exercise that uses earlier ones (the manifest's uses: 7.6 calls 7.1 to 7.5)
is linked with their reference solutions: their files of solutions/ are copied
into the shared course (never into a student's copy, whose compiler can read
it), and CMake builds them there (cudalab_<slug>_reference).

The student's object is then checked for forbidden APIs (source.check_object:
its symbols, imports and device instructions), by the caller, classgrade.

Each compile and link of a submission runs within limits that a course file is far
from: no file it writes may reach COMPILE_MAX_FILE (RLIMIT_FSIZE: the assembler or
the linker is killed by SIGXFSZ, so a `.fill` of gigabytes fills no disk), and its
processes together may hold at most COMPILE_MAX_RSS of host memory (proc.run's
watchdog: a huge initialised `__device__` array makes cicc and ptxas take gigabytes).
Either stop is the exercise's "did not compile", with the limit and why, and a file
that reached the limit is deleted at once.
"""
from __future__ import annotations

import filecmp
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import build, manifest, proc
from .manifest import Exercise

# Bytes any file a submission's compiler or linker writes may reach (RLIMIT_FSIZE);
# a course object is under 2 MiB, a runner under 2 MiB.
COMPILE_MAX_FILE = 64 << 20
# Host memory of one compile or link, its children included (proc.run's watchdog);
# nvcc peaks at about 330 MiB on the largest course file.
COMPILE_MAX_RSS = 2 << 30

# What a build of the course needs; build/, .git, .grade, docs and solutions are never copied.
COURSE_PARTS = ("CMakeLists.txt", "CMakePresets.json", "cmake", "chapters", "tests", "starter", "tools")
_SKIP = {"build", ".git", ".grade", "__pycache__", ".gl", ".whl"}


def sync_tree(src_root: Path, dest: Path) -> None:
    """Copy COURSE_PARTS of src_root to dest, rewriting only files that differ."""
    dest.mkdir(parents=True, exist_ok=True)
    for part in COURSE_PARTS:
        src = src_root / part
        if src.is_file():
            _copy_if_changed(src, dest / part)
        elif src.is_dir():
            for top, dirs, names in os.walk(src, followlinks=False):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.startswith(".")
                                 and not (Path(top) / d).is_symlink())
                rel = Path(top).relative_to(src_root)
                (dest / rel).mkdir(parents=True, exist_ok=True)
                for n in names:
                    p = Path(top) / n
                    if p.is_file() and not p.is_symlink() and not n.endswith(".pyc"):
                        _copy_if_changed(p, dest / rel / n)


def _copy_if_changed(src: Path, dst: Path) -> None:
    if dst.exists() and filecmp.cmp(src, dst, shallow=False):
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)


def copy_references(root: Path, course: Path, exercises: list[Exercise]) -> list[Path]:
    """Copy into course/solutions/ the reference solution of each exercise that one of
    `exercises` uses (the manifest's uses), so that its runner links it; the files copied."""
    chapters = manifest.load_all(root)
    copied = []
    for ex in exercises:
        for used in manifest.uses_of(ex, chapters):
            rel = used.source("solution")
            if (root / rel).is_file():
                _copy_if_changed(root / rel, course / rel)
                copied.append(course / rel)
    return copied


@dataclass
class SharedBuild:
    course: Path                       # <out>/shared/course
    build_dir: Path                    # course/build/default
    compile_cmd: dict[str, str] = field(default_factory=dict)  # slug -> starter file's compile command
    starter_obj: dict[str, str] = field(default_factory=dict)  # slug -> its object (relative to build_dir)
    link_cmd: dict[str, str] = field(default_factory=dict)     # target -> link command
    problems: dict[str, str] = field(default_factory=dict)     # target -> why it is not available
    hidden: set[str] = field(default_factory=set)             # slugs with a hidden test program
    seconds: float = 0.0

    @property
    def log(self) -> Path:
        return self.build_dir / build.LOG_NAME


# Folders a submission's sandboxed compiler may read besides the system's (sandbox.SYSTEM_DIRS
# and the student's copy of the course): where a CUDA toolkit or a host compiler may be installed.
COMPILER_EXTRA_DIRS = ("/opt",)
# The grader's own tree (tools/ is in it): the course it grades from, solutions/ included.
GRADER_TREE = Path(__file__).resolve().parents[2]


def open_parts(top: Path, private: list[Path]) -> list[Path]:
    """What of `top` a submission's compiler may read: [top] when it holds none of `private`
    (nor lies in one); else, recursively, the parts of its entries (folders, files, links:
    by where they lead) that do not, and never a private path itself. A course installed
    under /opt (/opt/cudalab, with solutions/ and the class's output in .grade/) is then no
    file the compiler can read, while /opt/cuda stays readable. [] when top does not exist."""
    try:
        real = top.resolve(strict=True)
    except (OSError, RuntimeError):
        return []
    hidden = []
    for p in private:
        try:
            hidden.append(Path(p).resolve())
        except (OSError, RuntimeError):
            continue
    if any(real == h or h in real.parents for h in hidden):
        return []
    if not any(real in h.parents for h in hidden):
        return [top]
    if top.is_symlink() or not real.is_dir():
        return []
    out = []
    try:
        entries = sorted(top.iterdir())
    except OSError:
        return []
    for entry in entries:
        out += open_parts(entry, hidden)
    return out


def targets_for(ex: Exercise, perf: bool, hidden: bool) -> list[str]:
    """What the instructor's build makes of one exercise: the checkers (test and
    benchmark programs, trusted: no student code) and the starter's runner."""
    ts = [ex.test_target("starter"), ex.runner_target("starter")]
    if hidden:
        ts.append(ex.hidden_target("starter"))
    if perf and ex.perf:
        ts.append(ex.bench_target("starter"))
    return ts


def student_targets(ex: Exercise, perf: bool) -> list[str]:
    """What each submission links with its own object: the runner. The checkers
    (test and benchmark programs) are the instructor's, never relinked."""
    del perf  # the benchmark is a checker too: it calls the student's runner
    return [ex.runner_target("starter")]


def hidden_file(ex: Exercise, hidden_dir: Path | None) -> Path | None:
    """The exercise's hidden test suite in hidden_dir (<dir>/<chapter>/<file> or <dir>/<file>)."""
    if hidden_dir is None or not ex.hidden_test:
        return None
    for p in (hidden_dir / ex.chapter_dir / ex.hidden_test, hidden_dir / ex.hidden_test):
        if p.is_file():
            return p
    return None


def prepare_shared(root: Path, shared_dir: Path, exercises: list[Exercise], perf: bool,
                   hidden_dir: Path | None, jobs: int | None, say, read_only: bool = False
                   ) -> SharedBuild:
    """Copy, configure and build the instructor's tree once; read the commands to reuse.

    With read_only (a Slurm task), the shared build made by an earlier step is
    only read: nothing is copied, configured or built.
    """
    start = time.monotonic()
    course = shared_dir / "course"
    sb = SharedBuild(course=course, build_dir=course / "build" / "default")
    if not read_only:
        sync_tree(root, course)
        copy_references(root, course, exercises)
        defs = {"CMAKE_BUILD_TYPE": "Release", "CUDALAB_IMPLEMENTATIONS": "starter",
                "CUDALAB_BUILD_BENCHMARKS": "ON" if perf else "OFF",
                "CUDALAB_BUILD_DOCS": "OFF", "CUDALAB_WERROR": "OFF",
                "CUDALAB_HIDDEN_TESTS_DIR": str(hidden_dir.resolve()) if hidden_dir else ""}
        cmd = ["cmake", "-S", str(course), "-B", str(sb.build_dir), "-G", "Ninja"]
        cmd += [f"-D{k}={v}" for k, v in defs.items()]
        say(f"configuring the instructor's build in {sb.build_dir} ...")
        sb.build_dir.mkdir(parents=True, exist_ok=True)
        with sb.log.open("w") as log:
            rc = build._run_logged(cmd, course, log)
        if rc != 0:
            raise RuntimeError(f"configuring the instructor's tree failed; see {sb.log}")
    known = build.known_targets(sb.build_dir) or set()
    wanted = []
    for ex in exercises:
        if hidden_file(ex, hidden_dir) is not None and ex.hidden_target("starter") in known:
            sb.hidden.add(ex.slug)
        wanted += targets_for(ex, perf, ex.slug in sb.hidden)
    present = [t for t in wanted if t in known]
    for t in wanted:
        if t not in known:
            sb.problems[t] = f"the instructor's build has no target {t}"
    if present and not read_only:
        say(f"building the instructor's tree once: {len(present)} program(s) (log: {sb.log}) ...")
        build.build(sb.build_dir, present, jobs, append=True)
    for ex in exercises:
        _read_commands(sb, ex, [t for t in student_targets(ex, perf) if t in known])
        for t in targets_for(ex, perf, ex.slug in sb.hidden):
            if t in known and t not in sb.problems and not (sb.build_dir / "bin" / t).exists():
                sb.problems[t] = f"{t} did not build in the instructor's tree; see {sb.log}"
    sb.seconds = round(time.monotonic() - start, 1)
    return sb


def _ninja_commands(build_dir: Path, target: str) -> list[str]:
    p = subprocess.run(["ninja", "-C", str(build_dir), "-t", "commands", target],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError(f"ninja -t commands {target}: {p.stderr.strip()}")
    return p.stdout.splitlines()


def _read_commands(sb: SharedBuild, ex: Exercise, targets: list[str]) -> None:
    """The compile command of the starter's file, and each target's link command."""
    src = str(sb.course / "starter" / ex.chapter_dir / ex.file)
    for t in targets:
        try:
            cmds = _ninja_commands(sb.build_dir, t)
        except (OSError, subprocess.TimeoutExpired, RuntimeError) as e:
            sb.problems[t] = str(e)
            continue
        if ex.slug not in sb.compile_cmd:
            for c in cmds:
                if f" {src} " in f" {c} " and " -c " in c:
                    m = re.search(r"\s-o\s+(\S+)", c)
                    if m:
                        sb.compile_cmd[ex.slug] = c
                        sb.starter_obj[ex.slug] = m.group(1)
                    break
        obj = sb.starter_obj.get(ex.slug)
        if not obj or not (sb.build_dir / obj).exists():
            sb.problems[t] = f"the starter of {ex.slug} did not build in the instructor's tree; see {sb.log}"
            continue
        link = cmds[-1] if cmds else ""
        if f" {obj} " not in f" {link} " or f"bin/{t}" not in link:
            sb.problems[t] = f"cannot find the link command of {t} in the instructor's build"
            continue
        if not (sb.build_dir / "bin" / t).exists():
            sb.problems[t] = f"{t} did not build in the instructor's tree; see {sb.log}"
            continue
        sb.link_cmd[t] = link


@dataclass
class ExerciseBuild:
    """What building one student's exercise gave: per target, None (built) or (reason, details)."""
    not_built: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    seconds: float = 0.0


def build_exercise(sb: SharedBuild, ex: Exercise, copy_root: Path, targets: list[str],
                   timeout: float, log, max_output: int = 1 << 20,
                   sandbox_kind: str | None = None, max_file: int = COMPILE_MAX_FILE,
                   max_rss: int = COMPILE_MAX_RSS, private: list[Path] = ()) -> ExerciseBuild:
    """Compile the student's file of `ex` in copy_root, check its symbols, link its programs.

    With `sandbox_kind`, the compiler runs sandboxed (sandbox.compile_prefix): it
    reads the student's copy of the course and the system's folders, writes only
    its object's folder; a student's `#include` (or an assembler's `.incbin`) reaches
    nothing else: of COMPILER_EXTRA_DIRS, only the folders that hold none of `private`
    (the class's output, the submissions, the hidden tests), of the shared build and of
    the grader's own tree (open_parts). Each compile
    and link writes no file past `max_file` bytes and holds at most `max_rss` bytes
    of host memory (see the module's docstring); past either it is stopped, its
    exercise did not compile, and the files that reached `max_file` are deleted."""
    start = time.monotonic()
    out = ExerciseBuild()
    rel_src = f"starter/{ex.chapter_dir}/{ex.file}"
    build_dir = copy_root / "build" / "default"
    obj = build_dir / "grade-obj" / f"{ex.slug}.o"
    obj.parent.mkdir(parents=True, exist_ok=True)
    (build_dir / "bin").mkdir(parents=True, exist_ok=True)

    def fail(reason: str, details: list[str]) -> ExerciseBuild:
        for t in targets:
            out.not_built[t] = (reason, details)
        out.seconds = round(time.monotonic() - start, 2)
        return out

    if ex.slug not in sb.compile_cmd:
        why = next((sb.problems[t] for t in targets if t in sb.problems),
                   f"no compile command for {ex.slug} in the instructor's build")
        return fail(f"not built: {why}", [])
    cmd = sb.compile_cmd[ex.slug].replace(sb.starter_obj[ex.slug], str(obj))
    cmd = cmd.replace(str(sb.course) + "/", str(copy_root) + "/")
    env = {"CCACHE_BASEDIR": str(copy_root), "TMPDIR": str(obj.parent)}
    prefix: list[str] = []
    if sandbox_kind is not None:
        from . import sandbox
        hidden = [sb.course.parent, GRADER_TREE, *private]
        readable = [copy_root] + [p for d in COMPILER_EXTRA_DIRS for p in open_parts(Path(d), hidden)]
        prefix = sandbox.compile_prefix(sandbox_kind, readable=readable, writable=[obj.parent])
        env["CCACHE_DISABLE"] = "1"  # the cache is outside the sandbox
    p = _logged(cmd, build_dir, env, timeout, log, max_output, prefix, max_rss=max_rss, max_file=max_file)
    stopped = stopped_by_limit(p, "compiler", [obj.parent], max_file, max_rss)
    if stopped is None and p.timed_out:
        stopped = f"the compiler ran past the build time limit ({timeout:g} s)"
    if stopped is not None:
        log.write(f"grade: {stopped}\n")
        obj.unlink(missing_ok=True)  # what a stopped compiler left is no object to check
        return fail(f"did not compile: {stopped}", [])
    if p.returncode != 0 or not obj.exists():
        errors = build.compile_errors(p.output, rel_src, ex.test_target("starter"))
        errors = [re.sub(r"(?<![\w/])(?:\.\./)+(?=starter/)", "", e.replace(str(copy_root) + "/", ""))
                  for e in errors]
        hint = build.encoding_hint(copy_root / rel_src)
        return fail("did not compile", (errors or [gtest_tail(p.output)]) + [hint] * bool(hint))
    for t in targets:
        if t not in sb.link_cmd:
            out.not_built[t] = (f"not built: {sb.problems.get(t, 'no link command')}", [])
            continue
        exe = build_dir / "bin" / t
        link = _swap(sb.link_cmd[t], sb.starter_obj[ex.slug], str(obj))
        link = _swap(link, f"bin/{t}", str(exe))
        lp = _logged(link, sb.build_dir, {}, timeout, log, max_output, max_rss=max_rss, max_file=max_file)
        stopped = stopped_by_limit(lp, "linker", [exe.parent], max_file, max_rss)
        if stopped is not None:
            log.write(f"grade: {stopped}\n")
            exe.unlink(missing_ok=True)
            out.not_built[t] = (f"did not compile (link error): {stopped}", [])
        elif lp.returncode != 0 or not exe.exists():
            lines = [ln.strip() for ln in lp.output.splitlines()
                     if re.search(r"error|undefined reference|multiple definition", ln, re.I)]
            out.not_built[t] = ("did not compile (link error)",
                                (lines[:10] or [gtest_tail(lp.output)]))
    out.seconds = round(time.monotonic() - start, 2)
    return out


FILE_LIMIT_WORDS = "File size limit exceeded"  # what gcc, collect2 and sh say of a SIGXFSZ


def stopped_by_limit(p: proc.Proc, tool: str, places: list[Path], max_file: int,
                     max_rss: int) -> str | None:
    """Why a submission's compile or link `p` was stopped by a limit of one build, or None.

    Host memory: proc.run's watchdog killed it past max_rss. File size: a file in `places`
    (the folders it writes) reached max_file (RLIMIT_FSIZE stopped it there), or its output
    says that a program was killed by SIGXFSZ (the assembler's file may be gone). Every
    file of `places` that reached max_file is deleted here, whatever the verdict."""
    big = _remove_big_files(places, max_file)
    if p.memory_exceeded is not None:
        need = ("a course file needs under 400 MiB): a huge initialised array or a compile-time "
                "computation?" if tool == "compiler" else "a course program links in under 100 MiB)")
        return (f"the {tool} was stopped at {max_rss / 2**20:g} MiB of host memory "
                f"(the limit of one build; {need}")
    if big or (p.returncode != 0 and FILE_LIMIT_WORDS in p.output) or p.returncode == -signal.SIGXFSZ:
        what = "object" if tool == "compiler" else "runner"
        return (f"the {tool} was stopped: a file it wrote reached {max_file / 2**20:g} MiB, the most "
                f"one build may write (a course {what} is under 2 MiB)")
    return None


def big_files(places: list[Path], limit: int) -> list[tuple[Path, int]]:
    """(path, bytes) of every regular file below `places` of `limit` bytes or more (no link
    followed): what a compile or link past the file-size limit leaves."""
    big = []
    for top in places:
        for dirpath, _, names in os.walk(top, followlinks=False):
            for n in names:
                f = Path(dirpath) / n
                try:
                    st = f.lstat()
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and st.st_size >= limit:
                    big.append((f, st.st_size))
    return big


def _remove_big_files(places: list[Path], max_file: int) -> list[Path]:
    """Delete every file below `places` of max_file bytes or more (big_files); those files."""
    removed = []
    for f, _ in big_files(places, max_file):
        try:
            f.unlink()
            removed.append(f)
        except OSError:
            pass
    return removed


def _swap(cmd: str, old: str, new: str) -> str:
    """Replace the whitespace-separated word `old` in cmd by `new`."""
    return re.sub(rf"(?<=\s){re.escape(old)}(?=\s|$)", lambda _: shlex.quote(new), cmd)


def _logged(cmd: str, cwd: Path, env: dict[str, str], timeout: float, log, max_output: int,
            prefix: list[str] | None = None, *, max_rss: int = COMPILE_MAX_RSS,
            max_file: int = COMPILE_MAX_FILE) -> proc.Proc:
    """One compile or link of a submission: within the build's time, memory and file limits."""
    log.write(f"$ {cmd}\n")
    p = proc.run([*(prefix or []), "/bin/sh", "-c", cmd], timeout, cwd, env, max_output=max_output,
                 max_rss=max_rss, max_file=max_file)
    log.write(p.output)
    if p.timed_out:
        log.write(f"grade: stopped after {timeout:g} s\n")
    elif p.memory_exceeded is not None:
        log.write(f"grade: stopped at {p.memory_exceeded / 2**20:.0f} MiB of host memory "
                  f"(limit {max_rss / 2**20:g} MiB)\n")
    log.flush()
    return p


def gtest_tail(text: str, lines: int = 15) -> str:
    rows = text.rstrip().splitlines()
    return "\n".join(rows[-lines:]) or "(no output)"
