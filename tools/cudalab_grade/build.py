"""Configuring and building only the targets to grade, and finding compile errors.

Also what the machine must offer before anything is built: a CUDA GPU (probe_gpu) and
the build tools (check_setup); a missing tool is a SetupError, never the student's
"did not compile".
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

LOG_NAME = "grade-build.log"
_ERROR = re.compile(r"\berror\b", re.I)
CMAKE_MIN = (3, 25)
# where a CUDA toolkit's nvcc is looked for when it is not on PATH
CUDA_HOMES = ("/usr/local/cuda",)
PATH_FIX = "export PATH=/usr/local/cuda/bin:$PATH (add it to your shell's profile)"


class SetupError(Exception):
    """The machine lacks something the build needs (not the student's fault): what and how to fix it."""

    def __init__(self, what: str, fix: str):
        super().__init__(f"{what}, fix: {fix}")
        self.what, self.fix = what, fix


# --- the GPU -----------------------------------------------------------------------------

# Run in a child process: the driver is initialized there, never in the grader (which
# forks test programs), and a hung driver is killed by the timeout.
_PROBE = r"""
import ctypes, sys
try:
    lib = ctypes.CDLL(sys.argv[1])
except OSError as e:
    print("nolib", " ".join(str(e).split())); sys.exit(0)
def name(rc):
    s = ctypes.c_char_p()
    try:
        if lib.cuGetErrorName(rc, ctypes.byref(s)) == 0 and s.value:
            return s.value.decode(errors="replace")
    except AttributeError:
        pass
    return "error %d" % rc
rc = lib.cuInit(0)
if rc != 0:
    print("init", rc, name(rc)); sys.exit(0)
n = ctypes.c_int(0)
rc = lib.cuDeviceGetCount(ctypes.byref(n))
print("count", rc, n.value, name(rc) if rc else "")
"""
CUDA_ERROR_NO_DEVICE = 100


def _nvidia_smi(timeout: float) -> tuple[bool | None, str]:
    """(True, what) when nvidia-smi lists a GPU, (False, why) when it lists none or fails,
    (None, why) when there is no nvidia-smi."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None, "no nvidia-smi"
    try:
        p = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"nvidia-smi -L failed ({e})"
    gpus = [line for line in p.stdout.splitlines() if line.startswith("GPU ")]
    if p.returncode == 0 and gpus:
        return True, gpus[0]
    said = (p.stdout + p.stderr).strip().splitlines()
    return False, f"nvidia-smi -L: {said[0] if said else f'exit {p.returncode}'}"


def gpu_names(timeout: float = 30.0) -> list[str] | None:
    """The names of the GPUs nvidia-smi lists (as the CUDA runtime names them: "NVIDIA H100 80GB
    HBM3"), or None when nvidia-smi is missing, fails or lists none."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        p = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                           text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    names = [line.strip() for line in p.stdout.splitlines() if line.strip()]
    return names if p.returncode == 0 and names else None


def probe_gpu(lib: str = "libcuda.so.1", timeout: float = 60.0) -> tuple[bool | None, str]:
    """Is there a CUDA device, as the test programs will see it (the driver library:
    cuInit + cuDeviceGetCount, under this environment's CUDA_VISIBLE_DEVICES)?

    (True, what) yes; (False, why) no, sure of it; (None, why) cannot tell (then the
    grader goes on, and the test programs say whether they found one)."""
    try:  # -S: the probe needs ctypes alone, not site's .pth files (tens of ms of each grade run)
        p = subprocess.run([sys.executable, "-S", "-c", _PROBE, lib], capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"the CUDA driver did not answer within {timeout:g} s"
    except OSError as e:
        return None, f"the probe did not start ({e})"
    words = p.stdout.split()
    if p.returncode != 0 or not words:
        return None, f"the probe of the CUDA driver ended with exit code {p.returncode}"
    hidden = ""
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        hidden = f"; CUDA_VISIBLE_DEVICES={os.environ['CUDA_VISIBLE_DEVICES']!r} is set"
    if words[0] == "nolib":
        smi, said = _nvidia_smi(min(timeout, 30.0))
        if smi:
            return None, f"nvidia-smi lists {said}, but {lib} cannot be loaded"
        return False, (f"no NVIDIA driver: {lib} cannot be loaded"
                       + ("" if smi is None else f", and {said}"))
    if words[0] == "init":
        code, label = int(words[1]), " ".join(words[2:])
        if code == CUDA_ERROR_NO_DEVICE:
            return False, f"the NVIDIA driver finds no CUDA device ({label}){hidden}"
        return False, f"the NVIDIA driver does not start (cuInit: {label}){hidden}"
    rc, count = int(words[1]), int(words[2])
    if rc != 0:
        return False, f"the NVIDIA driver cannot count its devices (cuDeviceGetCount: {' '.join(words[3:])})"
    if count == 0:
        return False, f"the NVIDIA driver finds no CUDA device{hidden}"
    return True, f"{count} CUDA device(s)"


# --- the build tools ---------------------------------------------------------------------

def find_nvcc() -> str | None:
    """The nvcc CMake will use: $CUDACXX, else on PATH, else in a usual CUDA folder."""
    cudacxx = os.environ.get("CUDACXX", "")
    if cudacxx:
        return shutil.which(cudacxx)
    found = shutil.which("nvcc")
    if found:
        return found
    for home in [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""), *CUDA_HOMES]:
        candidate = Path(home) / "bin" / "nvcc"
        if home and candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def _cmake_version() -> tuple[int, ...] | None:
    try:
        p = subprocess.run(["cmake", "--version"], capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"cmake version (\d+)\.(\d+)", p.stdout)
    return (int(m[1]), int(m[2])) if m else None


def configured(build_dir: Path) -> bool:
    """A build directory CMake finished configuring: its cache and Ninja's file (a failed
    configure leaves a cache without build.ninja)."""
    return (build_dir / "CMakeCache.txt").exists() and (build_dir / "build.ninja").exists()


def _cached(build_dir: Path, name: str) -> str | None:
    try:
        text = (build_dir / "CMakeCache.txt").read_text(errors="replace")
    except OSError:
        return None
    m = re.search(rf"^{re.escape(name)}:[A-Z]+=(.*)$", text, re.M)
    return m[1].strip() if m else None


def check_setup(build_dir: Path, will_configure: bool, say: Callable[[str], None] = lambda m: None) -> None:
    """Raise SetupError when a tool the build needs is missing: CMake (>= 3.25), Ninja, and,
    when the build directory is to be configured, nvcc. An nvcc found in a CUDA folder but
    not on PATH is put on this run's PATH (with a note)."""
    if shutil.which("cmake") is None:
        raise SetupError("CMake is not installed (no cmake on PATH)",
                         "apt-get install cmake (3.25 or newer), or pip install cmake")
    version = _cmake_version()
    if version is not None and version < CMAKE_MIN:
        raise SetupError(f"CMake {version[0]}.{version[1]} is too old (the presets need "
                         f"{CMAKE_MIN[0]}.{CMAKE_MIN[1]} or newer)",
                         "install a newer CMake: apt-get install cmake from a newer release "
                         "(or its backports), or pip install cmake")
    if shutil.which("ninja") is None:
        raise SetupError("Ninja is not installed (no ninja on PATH)", "apt-get install ninja-build")
    nvcc = find_nvcc()
    if will_configure and nvcc is None:
        if os.environ.get("CUDACXX"):
            raise SetupError(f"CUDACXX={os.environ['CUDACXX']} is not a program",
                             "point CUDACXX at nvcc, or unset it")
        raise SetupError("no nvcc found (not on PATH, not in /usr/local/cuda/bin)",
                         "install the CUDA toolkit (12.x or 13.x) and " + PATH_FIX)
    if nvcc is not None and shutil.which("nvcc") is None and not os.environ.get("CUDACXX"):
        # CMake, and the grader's compute-sanitizer and cuobjdump, find the toolkit on PATH
        os.environ["PATH"] = os.environ.get("PATH", "") + os.pathsep + str(Path(nvcc).parent)
        say(f"nvcc is not on PATH: using {nvcc} for this run; to stop this note, {PATH_FIX}")
    if not will_configure:
        cached = _cached(build_dir, "CMAKE_CUDA_COMPILER")
        if cached and os.path.isabs(cached) and not os.path.exists(cached):
            raise SetupError(f"{build_dir} was configured with nvcc at {cached}, which is gone",
                             f"install the CUDA toolkit again, or remove {build_dir} to configure "
                             "it anew")


# CMake's messages for what is missing, and the fix of each (Debian or Ubuntu packages).
_CONFIGURE_PROBLEMS = (
    (r"No CMAKE_CUDA_COMPILER could be found|CUDA compiler identification is unknown"
     r"|CMAKE_CUDA_COMPILER: \S+ is not a full path to an existing compiler",
     "CMake finds no working CUDA compiler (nvcc)", "install the CUDA toolkit and " + PATH_FIX),
    (r'The CUDA compiler "[^"]*" is not able to compile',
     "nvcc cannot compile CMake's test program",
     "read the CMake error in the log: often nvcc does not support the installed GCC (install "
     "a GCC it supports, or a newer CUDA toolkit)"),
    (r'No CMAKE_CXX_COMPILER could be found|The CXX compiler "[^"]*" is not able to compile',
     "no working C++ compiler", "apt-get install g++"),
    (r'Could NOT find GTest|provided by "GTest"',
     "GoogleTest is not installed (find_package(GTest) failed)", "apt-get install libgtest-dev"),
    (r'provided by "benchmark"|Could NOT find benchmark',
     "Google Benchmark is not installed (find_package(benchmark) failed)",
     "apt-get install libbenchmark-dev"),
    (r"Could NOT find CUDAToolkit",
     "CMake finds no CUDA toolkit (find_package(CUDAToolkit) failed)",
     "install the CUDA toolkit (12.x or 13.x, with CCCL) and " + PATH_FIX),
    (r'unable to find a build program corresponding to "Ninja"',
     "Ninja is not installed", "apt-get install ninja-build"),
    (r'CMake \d+\.\d+ or higher is required|Could not read presets|Unrecognized "version" field',
     f"CMake is too old (the presets need {CMAKE_MIN[0]}.{CMAKE_MIN[1]} or newer)",
     "install a newer CMake (apt-get install cmake from a newer release, or pip install cmake)"),
)


def diagnose(log_text: str, step: str, log: Path) -> SetupError:
    """The setup problem behind a failed CMake configure (or regeneration) in log_text."""
    flat = " ".join(log_text.split())
    for pattern, what, fix in _CONFIGURE_PROBLEMS:
        if re.search(pattern, flat):
            return SetupError(what, f"{fix} (log: {log})")
    lines = log_text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith("CMake Error")), None)
    said = ""
    if first is not None:
        block = [lines[first].strip()] + [line.strip() for line in lines[first + 1:first + 4]
                                          if line.strip()]
        said = ": " + " ".join(block)[:300]
    return SetupError(f"{step} failed{said}", f"read the CMake error in {log}; then run "
                      "tools/grade again (it configures again)")


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


def configure(root: Path, build_dir: Path) -> None:
    """`cmake --preset default` from the root; raises SetupError when it fails."""
    build_dir.mkdir(parents=True, exist_ok=True)
    log = log_path(build_dir)
    with log.open("w") as f:
        rc = _run_logged(["cmake", "--preset", "default"], root, f)
    if rc != 0 or not configured(build_dir):
        raise diagnose(log.read_text(errors="replace"), "CMake configure (cmake --preset default)", log)


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


_STEP = re.compile(r"^\[(\d+)/(\d+)\] ")


def _run_streamed(cmd: list[str], cwd: Path, log, progress: Callable[[int, int], None]) -> int:
    """_run_logged, reading the output as it comes: progress(k, n) for each "[k/n]" of Ninja."""
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    try:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, text=True, errors="replace")
    except OSError as e:
        log.write(f"grade: {e}\n")
        return 127
    with p.stdout:
        for line in p.stdout:
            log.write(line)
            m = _STEP.match(line)
            if m:
                log.flush()
                progress(int(m[1]), int(m[2]))
    return p.wait()


def build(build_dir: Path, targets: list[str], jobs: int | None, append: bool,
          progress: Callable[[int, int], None] | None = None) -> int:
    """Build the targets, keeping going past failures; the output goes to the log, and
    Ninja's "[k/n]" steps to progress(k, n) when given."""
    cmd = ["cmake", "--build", str(build_dir)]
    if jobs:
        cmd += ["-j", str(jobs)]
    cmd += ["--target", *targets, "--", "-k", "0"]
    with log_path(build_dir).open("a" if append else "w") as log:
        if progress is None:
            return _run_logged(cmd, build_dir.parent, log)
        return _run_streamed(cmd, build_dir.parent, log, progress)


def build_setup_problem(build_dir: Path, rc: int) -> SetupError | None:
    """A failed build whose log shows a setup problem, not a compile error: CMake's
    regeneration failed (e.g. a package removed since the configure), or the build
    could not start."""
    if rc == 0:
        return None
    log = log_path(build_dir)
    text = log.read_text(errors="replace") if log.exists() else ""
    if rc == 127 and "grade:" in text:
        return SetupError("the build did not start (cmake --build)", f"see {log}")
    if re.search(r"^CMake Error", text, re.M):
        return diagnose(text, "CMake's re-run during the build", log)
    if "ninja: error: loading 'build.ninja'" in text:
        return SetupError(f"{build_dir} is not configured (no build.ninja)",
                          f"remove {build_dir} and run tools/grade again")
    return None


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


def encoding_hint(path: Path) -> str | None:
    """Why a file that did not compile may be no C++ the compiler can read: saved as UTF-16
    (nvcc then reads '#include' as '#i' and a NUL), which an editor on Windows may do; None
    when it looks like text of 8-bit characters."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return None
    bom = head.startswith((b"\xff\xfe", b"\xfe\xff"))
    if bom or (len(head) >= 64 and head.count(0) * 4 >= len(head)):
        return (f"{path.name} is saved as UTF-16 text" + (" (it starts with a UTF-16 byte-order "
                "mark)" if bom else " (every other byte is a NUL)") + ": the compiler reads "
                "UTF-8; save it as UTF-8 (in your editor: Save with Encoding, UTF-8)")
    return None


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
