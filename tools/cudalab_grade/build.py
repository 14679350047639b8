"""Configuring and building only the targets to grade, and finding compile errors."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

LOG_NAME = "grade-build.log"
_ERROR = re.compile(r"\berror\b", re.I)


def log_path(build_dir: Path) -> Path:
    return build_dir / LOG_NAME


def _run_logged(cmd: list[str], cwd: Path, log, timeout: float | None = None) -> int:
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    try:
        return subprocess.run(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, timeout=timeout).returncode
    except (OSError, subprocess.TimeoutExpired) as e:
        log.write(f"grade: {e}\n")
        return 127


def configure(root: Path, build_dir: Path) -> str | None:
    """`cmake --preset default` from the root; None on success, else an error message."""
    build_dir.mkdir(parents=True, exist_ok=True)
    with log_path(build_dir).open("w") as log:
        rc = _run_logged(["cmake", "--preset", "default"], root, log)
    if rc != 0 or not (build_dir / "CMakeCache.txt").exists():
        return f"CMake configure failed (cmake --preset default); see {log_path(build_dir)}"
    return None


def known_targets(build_dir: Path) -> set[str] | None:
    """Every target name Ninja knows in build_dir, or None when it cannot tell."""
    try:
        p = subprocess.run(["ninja", "-C", str(build_dir), "-t", "targets", "all"],
                           capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    return {line.split(":", 1)[0].strip() for line in p.stdout.splitlines() if ":" in line}


def build(build_dir: Path, targets: list[str], jobs: int | None, append: bool) -> int:
    """Build the targets, keeping going past failures; the output goes to the log."""
    cmd = ["cmake", "--build", str(build_dir)]
    if jobs:
        cmd += ["-j", str(jobs)]
    cmd += ["--target", *targets, "--", "-k", "0"]
    with log_path(build_dir).open("a" if append else "w") as log:
        return _run_logged(cmd, build_dir.parent, log)


STALE, REGENERATE = "stale", "regenerate"


def up_to_date(build_dir: Path, target: str) -> bool | str | None:
    """True when `ninja -n target` has no work to do; None when ninja cannot tell.

    Otherwise REGENERATE when CMake must re-run first, else STALE.
    """
    if shutil.which("ninja") is None:
        return None
    try:
        p = subprocess.run(["ninja", "-C", str(build_dir), "-n", target],
                           capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode == 0 and "ninja: no work to do." in p.stdout:
        return True
    return REGENERATE if "Re-running CMake" in p.stdout else STALE


def compile_errors(log_text: str, source: str, target: str, limit: int = 10) -> list[str]:
    """The error lines of the log that name `source` (relative path); else those of `target`.

    nvcc writes `path/file.cu(12): error: ...`, gcc `path/file.cu:12:5: error: ...`.
    """
    name = re.escape(source)
    pattern = re.compile(rf"(?:^|[\s/]){name}(?:\(\d+\)|:\d+(?::\d+)?):?\s.*\berror\b", re.I)
    found = [line.strip() for line in log_text.splitlines() if pattern.search(line)]
    if not found:  # link errors and the like: the lines after FAILED: ...target
        block: list[str] = []
        inside = False
        for line in log_text.splitlines():
            if line.startswith("FAILED:"):
                inside = target in line or source in line
                continue
            if inside and (line.startswith("[") or line.startswith("ninja:")):
                inside = False
            if inside and _ERROR.search(line):
                block.append(line.strip())
        found = block
    unique = list(dict.fromkeys(found))
    if len(unique) > limit:
        return unique[:limit] + [f"... and {len(unique) - limit} more error lines"]
    return unique


def unbuilt(build_dir: Path, wanted: dict[str, str], no_build: bool,
            check_fresh: bool = True) -> dict[str, tuple[str, list[str]]]:
    """target -> (reason, details) for each wanted target (target -> source) not built.

    A program counts as built when bin/<target> exists and Ninja has no work
    left for it, so a stale program from an earlier build is never graded.
    """
    log = log_path(build_dir)
    log_text = log.read_text(errors="replace") if log.exists() else ""
    problems: dict[str, tuple[str, list[str]]] = {}
    for target, source in wanted.items():
        exe = build_dir / "bin" / target
        fresh = up_to_date(build_dir, target) if check_fresh and exe.exists() else exe.exists()
        if fresh is True or fresh is None:
            continue
        errors = [] if no_build else compile_errors(log_text, source, target)
        if errors:
            problems[target] = ("did not compile", errors + [f"full log: {log}"])
        elif no_build:
            state = "is out of date" if exe.exists() else "does not exist"
            if fresh == REGENERATE:
                state = "is out of date (CMake files changed since the last build)"
            problems[target] = (f"not built: bin/{target} {state} (run without --no-build)", [])
        else:
            problems[target] = ("did not compile", [
                f"the build left bin/{target} missing or out of date, and no error line "
                f"names {source}: see the end of {log}"])
    return problems
