"""Sandboxes for the untrusted programs of grading (the student's runner, and the
compiler and linker of a submission), built from existing tools.

What a sandboxed program sees and can do
----------------------------------------
- A file system of its own: a read-only /usr, /lib*, /bin, /sbin and /etc
  with their submounts (libc, ld.so, the CUDA toolkit, the driver's libraries,
  e.g. /usr/local/nvidia), the paths it is given (read-only for the runner:
  its own folder; writable for a compiler: its output folders), a minimal
  /dev (null, zero, full, random, urandom, tty) plus, for the runner, the
  GPU's device nodes (/dev/nvidia*, /dev/nvidia-caps, /dev/dri) and a
  read-only /sys (the CUDA driver reads it), a /proc of its own PID namespace
  (/proc/sys read-only), and a private, empty, size-limited tmpfs on /tmp and
  /dev/shm. The home folders, the repository, solutions/, the hidden tests,
  the other students' folders, the grader's output and the host's /tmp are not
  there at all.
- No network: a network namespace of its own (only a loopback). New IPC and
  UTS namespaces: no System V or POSIX IPC with the host.
- A PID namespace of its own: it sees and can signal only its own processes,
  and when its main process ends, the kernel kills every process it started
  (a `setsid` daemon included), so nothing outlives a run.
- No privileges: as root, the grader runs it as user and group `nobody`
  (65534) without any capability and with no_new_privs (a setuid program
  gains nothing); `uid=None` keeps uid 0 without any capability (for a
  compiler that writes into root's build folders; /etc's files that only root
  may read, /etc/shadow among them, are then hidden). As another user, it runs
  as that user (bwrap, or the root of a user namespace mapped to that user),
  without any capability.
- A small environment: PATH, LANG, LANGUAGE, LC_*, CUDA_*, CUDALAB_* (not
  CUDALAB_SEED, the instructor's secret), NVIDIA_*, NV_*, LD_LIBRARY_PATH,
  NVCC_*, CCACHE_*, SOURCE_DATE_EPOCH, and HOME=TMPDIR=/tmp (the list is in
  sandbox_init.sh). Never LD_PRELOAD.
- Inherited file descriptors stay open (fd 3, the runner's socket to the
  checker; its stdout and stderr; descriptors of CUDA VMM memory).
- Limits of memory (its children and its tmpfs pages included), processes
  and CPU come from a cgroup v2 (`Cgroup`) where the machine offers one;
  elsewhere the caller keeps proc.run's watchdog of the process group. A
  class submission's compiler gets no cgroup: proc.run's watchdog holds it to
  classbuild.COMPILE_MAX_RSS (2 GiB) and RLIMIT_FSIZE to files under
  classbuild.COMPILE_MAX_FILE (64 MiB), its linker (outside) too.

What it does not stop
---------------------
- The GPU is shared: other processes' GPU memory is isolated by the driver
  (each process has its own GPU address space), but the GPU's time is not:
  a program can slow another one down, and a program can measure the timing
  of others (timing side channels, on the GPU and on the CPU caches).
- A kernel or driver exploit (a bug in Linux, or in the NVIDIA driver reached
  through the device nodes or a system call) escapes any namespace sandbox:
  there is no seccomp filter, and user namespaces may be created inside.
- What it reads: the files under /usr, /etc and /sys that any user may read,
  and the paths it is given; what it prints goes where the caller sends it.
- Without a cgroup: memory only as proc.py's watchdog sees it (an allocation
  faster than its period overshoots), no limit on the number of processes.

The two implementations
-----------------------
- "bwrap": bubblewrap (what Flatpak uses), from PATH or from the file named
  by CUDALAB_BWRAP. It builds the tree and the namespaces; its own init is PID
  1. sandbox_init.sh only filters the environment before it, and `setpriv`
  (util-linux) drops the user inside.
- "unshare": util-linux `unshare` makes the namespaces (as root, or with
  `--user --map-root-user` where unprivileged user namespaces are allowed),
  and sandbox_init.sh, as root and PID 1 inside them, builds the tree on a
  tmpfs with util-linux mount, moves the root there with pivot_root, and runs
  the command as its child through setpriv. About 55 to 90 ms per start
  (bwrap: under 10 ms).

`detect()` tries each kind once (a sandboxed `/bin/true`), bwrap first;
CUDALAB_SANDBOX=none|bwrap|unshare overrides the choice. CUDALAB_CGROUP names
the cgroup under which `Cgroup` makes its own (default /sys/fs/cgroup/cudalab).

For the caller
--------------
- Stop a sandboxed program with SIGKILL to the first process of the prefix
  (unshare blocks SIGTERM and SIGINT while it waits), or kill its cgroup.
- compute-sanitizer run outside the sandbox does not reach a program inside
  (its child-process tracking needs the host's /tmp and environment variables
  that cannot pass): it reports 0 errors without having checked it. Put it
  inside, after the prefix: PREFIX + [compute-sanitizer, --tool, T,
  --error-exitcode, N, RUNNER, ...]; it then works as usual (checked on an
  H100, memcheck finds an out-of-bounds access in the sandboxed runner).
- As root, the runner runs as `nobody`: the runner and its folder must be
  readable by other users (and the runner executable by them).

Manual use (from tools/):
    python3 -m cudalab_grade.sandbox --check
    python3 -m cudalab_grade.sandbox [--kind K] [--ro PATH]... [--rw PATH]... -- CMD...
"""
from __future__ import annotations

import argparse
import functools
import glob
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

Kind = str | None  # "bwrap", "unshare", or None (no sandbox works here)
KINDS = ("bwrap", "unshare")
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc")
SANDBOX_UID = 65534                  # nobody / nogroup (Debian, Ubuntu)
RUNNER_TMP_SIZE = 512 << 20          # bytes of the runner's /tmp and /dev/shm, each
COMPILE_TMP_SIZE = 2 << 30           # nvcc writes its intermediate files in /tmp
PROBE_TIMEOUT = 20.0                 # seconds a trial run may take
SETUP_FAILED = 125                   # exit status of sandbox_init.sh when it cannot build the sandbox
INIT = Path(__file__).with_name("sandbox_init.sh")
# Where the "unshare" kind may mount its new root's tmpfs (in its own mount
# namespace only): the first folder that holds none of the paths to bind.
STAGING = ("/mnt", "/media", "/srv", "/opt", "/boot", "/home", "/var", "/run")
_TOOL_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/bin", "/sbin", "/bin"])


def _which(name: str) -> str:
    found = shutil.which(name, path=_TOOL_PATH)
    if found is None:
        raise FileNotFoundError(f"{name} is not installed")
    return found


def bwrap_path() -> str:
    """The bubblewrap program: $CUDALAB_BWRAP, else bwrap on PATH."""
    given = os.environ.get("CUDALAB_BWRAP")
    if given:
        if not os.access(given, os.X_OK):
            raise FileNotFoundError(f"CUDALAB_BWRAP={given} is not an executable file")
        return os.path.abspath(given)
    return _which("bwrap")


def gpu_nodes() -> list[str]:
    """The GPU's device nodes on this machine (/dev/nvidia*, /dev/nvidia-caps, /dev/dri)."""
    nodes = sorted(glob.glob("/dev/nvidia*"))
    if os.path.isdir("/dev/dri"):
        nodes.append("/dev/dri")
    return nodes


def private_etc(top: str = "/etc") -> list[str]:
    """Files and folders under `top` that other users may not read: hidden from a
    program that keeps uid 0 (without capabilities, it is still their owner)."""
    hidden = []
    for folder, dirs, files in os.walk(top):
        for name in sorted(dirs):
            p = os.path.join(folder, name)
            st = os.lstat(p)
            if stat.S_ISDIR(st.st_mode) and (st.st_mode & 0o005) != 0o005:
                hidden.append(p)
        dirs[:] = sorted(d for d in dirs if os.path.join(folder, d) not in hidden)
        for name in sorted(files):
            p = os.path.join(folder, name)
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode) and not st.st_mode & stat.S_IROTH:
                hidden.append(p)
    return hidden


def _mounts(readable, writable, *, gpu: bool, sysfs: bool, tmp_size: int,
            masks: list[str]) -> list[tuple[str, ...]]:
    """The sandbox's tree as (operation, ...) steps, in the order they are made."""
    ops: list[tuple[str, ...]] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            ops.append(("link", os.readlink(d), d))
        elif os.path.isdir(d):
            ops.append(("ro", d, d))
    ops += [("mask", m) for m in masks]
    ops.append(("devfs", "/dev"))
    if gpu:
        ops += [("dev", n, n) for n in gpu_nodes()]
    ops.append(("proc", "/proc"))
    if sysfs:
        ops.append(("sysfs", "/sys"))
    ops += [("tmpfs", "/tmp", str(tmp_size)), ("tmpfs", "/dev/shm", str(tmp_size))]
    binds: dict[str, str] = {}
    for mode, paths in (("ro", readable), ("rw", writable)):
        for p in paths:
            p = os.path.abspath(p)
            if p == "/":
                raise ValueError("the sandbox cannot show the whole file system")
            if not os.path.exists(p):
                raise FileNotFoundError(f"{p} does not exist")
            binds[p] = mode  # a path given both ways is writable
    # parents first, so that a folder bound inside another one stays visible
    for p in sorted(binds, key=lambda p: (p.count("/"), p)):
        ops.append((binds[p], p, p))
    return ops


@functools.cache
def _bwrap_has_size(bwrap: str) -> bool:
    """bwrap >= 0.7 limits a tmpfs's size (--size); older ones leave it to the cgroup."""
    try:
        return "--size" in subprocess.run([bwrap, "--help"], capture_output=True, text=True,
                                          timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False


def _bwrap_words(ops, bwrap: str) -> list[str]:
    words = []
    made = {"/"} | {args[1] if op in ("ro", "rw", "dev", "link") else args[0] for op, *args in ops}
    for op, *args in ops:
        if op in ("ro", "rw", "dev"):
            # bwrap 0.8 makes the missing parents of a mount point with mode 0700
            parents = [str(p) for p in reversed(Path(args[1]).parents) if str(p) not in made]
            made.update(parents)
            for p in parents:
                words += ["--perms", "0755", "--dir", p]
            words += [{"ro": "--ro-bind", "rw": "--bind", "dev": "--dev-bind"}[op], args[0], args[1]]
        elif op == "link":
            words += ["--symlink", args[0], args[1]]
        elif op == "mask":
            if os.path.isdir(args[0]):
                words += ["--perms", "0755", "--tmpfs", args[0], "--remount-ro", args[0]]
            else:
                words += ["--ro-bind", "/dev/null", args[0]]
        elif op == "devfs":
            words += ["--dev", args[0]]
        elif op == "proc":  # bwrap covers these only where it can write them
            words += ["--proc", args[0], "--ro-bind-try", "/proc/sys", args[0] + "/sys",
                      "--ro-bind-try", "/proc/sysrq-trigger", args[0] + "/sysrq-trigger"]
        elif op == "sysfs":
            words += ["--ro-bind", "/sys", args[0]]
        elif op == "tmpfs":
            size = ["--size", args[1]] if _bwrap_has_size(bwrap) else []
            words += [*size, "--perms", "1777", "--tmpfs", args[0]]
    return words + ["--remount-ro", "/"]


def _init_words(ops) -> list[str]:
    words = []
    for op, *args in ops:
        words += ["--" + op, *args]
    return words


def _staging(ops) -> str:
    sources = [args[0] for op, *args in ops if op in ("ro", "rw", "dev")]
    for d in STAGING:
        if os.path.isdir(d) and not os.path.islink(d) and not any(
                s == d or s.startswith(d + "/") for s in sources):
            return d
    raise ValueError(f"no folder among {', '.join(STAGING)} is free to build the sandbox's root on")


def _drop(kind: str, uid: int | None) -> str | None:
    """How the command loses its privileges: "uid" (switch to `uid`, no
    capabilities), "caps" (same user, no capabilities), or None (an unprivileged
    bwrap: no capabilities already, and it sets no_new_privs itself)."""
    if os.geteuid() == 0:
        return "uid" if uid is not None else "caps"
    return "caps" if kind == "unshare" else None


def prefix(kind: Kind, *, readable=(), writable=(), gpu: bool = False, sysfs: bool = False,
           chdir: str | None = None, uid: int | None = SANDBOX_UID,
           tmp_size: int = RUNNER_TMP_SIZE, net: bool = False) -> list[str]:
    """argv words to put before a command to run it sandboxed (see the module's
    docstring); [] when kind is None. `readable` and `writable` are bound at the
    same paths; `chdir` is where the command starts (None: the caller's folder
    if the sandbox shows it, else /tmp for "unshare", / for bwrap). `uid`
    matters only to a caller that is root."""
    if kind is None:
        return []
    masks = private_etc() if os.geteuid() == 0 and uid is None else []
    ops = _mounts(readable, writable, gpu=gpu, sysfs=sysfs, tmp_size=tmp_size, masks=masks)
    where = ["--chdir", chdir] if chdir else []
    drop = _drop(kind, uid)
    if kind == "bwrap":
        # No --new-session: the runner stays in the checker's process group, whose
        # memory the grader's watchdog adds up where no cgroup is available; it has
        # no controlling terminal to abuse (the grader starts programs in sessions
        # of their own, stdin from /dev/null).
        namespaces = ["--die-with-parent", "--unshare-pid",
                      *([] if net else ["--unshare-net"]),
                      "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
        if os.geteuid() != 0:
            namespaces.append("--unshare-user")
        setpriv = [] if drop is None else [_which("setpriv"), *(
            [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"] if drop == "uid" else []),
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
        # the script only filters the environment, then bwrap builds the sandbox
        bwrap = bwrap_path()
        return ["/bin/sh", str(INIT), "--", bwrap, *namespaces, *_bwrap_words(ops, bwrap), *where,
                "--", *setpriv]
    if kind == "unshare":
        namespaces = ["--mount", "--pid", "--fork", "--kill-child", *([] if net else ["--net"]),
                      "--ipc", "--uts", "--cgroup", "--propagation", "private"]
        if os.geteuid() != 0:
            namespaces += ["--user", "--map-root-user"]
        return [_which("unshare"), *namespaces, "--", "/bin/sh", str(INIT), "--root", _staging(ops),
                *_init_words(ops), *where, *(["--uid", str(uid)] if drop == "uid" else ["--nocaps"]),
                "--"]
    raise ValueError(f"unknown sandbox kind {kind!r} (known: {', '.join(KINDS)})")


def runner_prefix(kind: Kind, *, readable: list[Path], gpu: bool = True, workdir_tmp: bool = True,
                  uid: int | None = SANDBOX_UID, tmp_size: int = RUNNER_TMP_SIZE,
                  net: bool = False) -> list[str]:
    """The prefix of a student's runner: `readable` (its folder) read-only, the GPU's
    device nodes, /sys read-only, starting in its private /tmp (workdir_tmp) or in
    the caller's folder. As root it runs as `nobody`: the runner and its folder must
    be readable (and the runner executable) by other users."""
    return prefix(kind, readable=readable, gpu=gpu, sysfs=True, uid=uid, tmp_size=tmp_size,
                  chdir="/tmp" if workdir_tmp else None, net=net)


def compile_prefix(kind: Kind, *, readable: list[Path], writable: list[Path],
                   uid: int | None = None, tmp_size: int = COMPILE_TMP_SIZE) -> list[str]:
    """The prefix of a submission's compiler or linker (e.g. as a CMake compiler
    launcher, or before `/bin/sh -c CMD`): `readable` read-only, `writable`
    writable, no GPU, no /sys, no network, starting in the caller's folder (it
    must be among the given paths: build commands use relative paths). By
    default (uid=None) a root caller's compiler keeps uid 0 without capabilities,
    so it can write into folders that root owns; with uid=SANDBOX_UID those
    folders must be writable by that user."""
    return prefix(kind, readable=readable, writable=writable, uid=uid, tmp_size=tmp_size)


def probe(kind: str) -> str | None:
    """None when `kind` works here (a trial run of a sandboxed /bin/true), else why not."""
    return _probe(kind, os.environ.get("CUDALAB_BWRAP", ""))


@functools.cache
def _probe(kind: str, bwrap_env: str) -> str | None:
    try:
        words = runner_prefix(kind, readable=[])
    except (OSError, ValueError) as e:
        return str(e)
    try:
        p = subprocess.run(words + ["/bin/true"], stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=PROBE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"a trial run took more than {PROBE_TIMEOUT:g} s"
    except OSError as e:
        return f"a trial run could not start: {e}"
    if p.returncode != 0:
        lines = p.stderr.decode(errors="replace").strip().splitlines()
        return f"a trial run failed (exit status {p.returncode})" + (f": {lines[-1]}" if lines else "")
    return None


def detect() -> Kind:
    """The first kind that works here (bwrap, then unshare), or None. CUDALAB_SANDBOX
    (none, bwrap or unshare) asks for one; it is still tried."""
    wanted = os.environ.get("CUDALAB_SANDBOX", "").strip().lower()
    if wanted in ("none", "off", "0"):
        return None
    for kind in ((wanted,) if wanted in KINDS else KINDS):
        if probe(kind) is None:
            return kind
    return None


# ---------------------------------------------------------------- cgroup v2

CGROUP_ROOT = Path("/sys/fs/cgroup")


def parse_flat_keyed(text: str) -> dict[str, int]:
    """memory.events, pids.events, cgroup.events: 'key value' lines."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


def cpu_max(cpus: float, period: int = 100_000) -> str:
    """cpu.max for `cpus` CPUs' worth of time: 'quota period' in microseconds."""
    return f"{max(1000, round(cpus * period))} {period}"


class Cgroup:
    """One cgroup v2 for one program and every process it starts, under `base`
    ($CUDALAB_CGROUP, else /sys/fs/cgroup/cudalab), with memory.max (swap off,
    the whole group killed on OOM), pids.max and cpu.max. A context manager:
    created on enter; on exit every process left in it is killed and it is
    removed. Limits None are not set, and their controllers are not needed, so a
    Cgroup() without limits only collects and kills.

        with Cgroup(memory_max=8 << 30, pids_max=512, cpus=4) as cg:
            p = proc.run(cmd, timeout, cwd, cgroup=cg)   # or cg.add(pid)
    """

    def __init__(self, *, memory_max: int | None = None, pids_max: int | None = None,
                 cpus: float | None = None, base: Path | None = None, name: str | None = None):
        self.memory_max, self.pids_max, self.cpus = memory_max, pids_max, cpus
        self.base = Path(base) if base is not None else default_base()
        self.path = self.base / (name or f"run-{os.getpid()}-{uuid.uuid4().hex[:12]}")

    def controllers(self) -> list[str]:
        return [c for c, limit in (("memory", self.memory_max), ("pids", self.pids_max),
                                   ("cpu", self.cpus)) if limit is not None]

    @staticmethod
    def unavailable(base: Path | None = None, controllers=("memory", "pids", "cpu")) -> str | None:
        """None when cgroups with these controllers can be made under `base`, else why not."""
        base = Path(base) if base is not None else default_base()
        parent = base if base.exists() else base.parent
        if not (parent / "cgroup.controllers").exists():
            return f"{parent} is not in a cgroup v2 hierarchy (cgroup v1, or a hybrid one)"
        have = _read(parent / "cgroup.controllers").split()
        missing = [c for c in controllers if c not in have]
        if missing:
            return f"{parent} does not offer the controller(s) {', '.join(missing)}"
        if not os.access(parent, os.W_OK) or not os.access(parent / "cgroup.procs", os.W_OK):
            return f"{parent} is not writable (not root, and no delegated subtree there)"
        enabled = _read(parent / "cgroup.subtree_control").split()
        if (parent / "cgroup.type").exists() and _read(parent / "cgroup.procs").strip() and \
                any(c not in enabled for c in controllers):
            return (f"{parent} holds processes, so its controllers cannot be passed on to a "
                    "child cgroup: set CUDALAB_CGROUP to a delegated cgroup")
        return None

    @classmethod
    def available(cls, base: Path | None = None, controllers=("memory", "pids", "cpu")) -> bool:
        return cls.unavailable(base, controllers) is None

    def __enter__(self) -> "Cgroup":
        wanted = self.controllers()
        if not self.base.exists():
            _enable(self.base.parent, wanted)
            self.base.mkdir(exist_ok=True)
        else:
            _enable(self.base.parent, wanted)
        _enable(self.base, wanted)
        self.path.mkdir()
        try:
            if self.memory_max is not None:
                _write(self.path / "memory.max", str(self.memory_max))
                if (self.path / "memory.swap.max").exists():
                    _write(self.path / "memory.swap.max", "0")
                if (self.path / "memory.oom.group").exists():
                    _write(self.path / "memory.oom.group", "1")
            if self.pids_max is not None:
                _write(self.path / "pids.max", str(self.pids_max))
            if self.cpus is not None:
                _write(self.path / "cpu.max", cpu_max(self.cpus))
        except BaseException:
            self.path.rmdir()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def wrap(self, cmd: list[str]) -> list[str]:
        """cmd behind a shell that moves itself into this cgroup, then execs cmd: the
        program is in the cgroup before it runs any of its own code."""
        script = 'echo $$ > "$0" || { echo "cannot join the cgroup $0" >&2; exit 125; }; exec "$@"'
        return ["/bin/sh", "-c", script, str(self.path / "cgroup.procs"), *cmd]

    def add(self, pid: int) -> None:
        _write(self.path / "cgroup.procs", str(pid))

    def procs(self) -> list[int]:
        try:
            return [int(x) for x in _read(self.path / "cgroup.procs").split()]
        except FileNotFoundError:
            return []

    def events(self, name: str = "memory.events") -> dict[str, int]:
        try:
            return parse_flat_keyed(_read(self.path / name))
        except FileNotFoundError:
            return {}

    def oom_killed(self) -> int:
        """How many processes the kernel killed for memory.max (memory.events oom_kill)."""
        return self.events().get("oom_kill", 0)

    def memory_peak(self) -> int | None:
        """memory.peak (Linux >= 5.19), else None."""
        try:
            return int(_read(self.path / "memory.peak"))
        except (FileNotFoundError, ValueError):
            return None

    def kill(self, wait: float = 5.0) -> None:
        """SIGKILL every process in the cgroup (cgroup.kill; or, on Linux < 5.14,
        freeze it, kill each process, thaw), and wait until it is empty."""
        if not self.path.exists():
            return
        if (self.path / "cgroup.kill").exists():
            _write(self.path / "cgroup.kill", "1")
        else:
            freeze = self.path / "cgroup.freeze"
            if freeze.exists():
                _write(freeze, "1")
            for _ in range(100):
                pids = self.procs()
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            if freeze.exists():
                _write(freeze, "0")
        deadline = time.monotonic() + wait
        while self.events("cgroup.events").get("populated", 0) and time.monotonic() < deadline:
            time.sleep(0.01)

    def close(self) -> None:
        """Kill what is left and remove the cgroup."""
        self.kill()
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:  # EBUSY: a process is still leaving
                time.sleep(0.02)
        self.path.rmdir()


def default_base() -> Path:
    return Path(os.environ.get("CUDALAB_CGROUP") or CGROUP_ROOT / "cudalab")


def _read(path: Path) -> str:
    with open(path) as f:
        return f.read()


def _write(path: Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _enable(cgroup: Path, controllers: list[str]) -> None:
    """Pass `controllers` on to the children of `cgroup` (cgroup.subtree_control)."""
    if not controllers:
        return
    enabled = _read(cgroup / "cgroup.subtree_control").split()
    todo = [c for c in controllers if c not in enabled]
    if todo:
        _write(cgroup / "cgroup.subtree_control", " ".join("+" + c for c in todo))


# ---------------------------------------------------------------- command line

def check() -> str:
    """What this machine offers, for --check."""
    lines = []
    for kind in KINDS:
        why = probe(kind)
        lines.append(f"{kind}: " + ("works" if why is None else f"no: {why}"))
    lines.append(f"chosen: {detect() or 'none'}")
    why = Cgroup.unavailable()
    lines.append(f"cgroup v2 limits under {default_base()}: " + ("yes" if why is None else f"no: {why}"))
    nodes = gpu_nodes()
    lines.append("GPU device nodes: " + (" ".join(nodes) if nodes else "none"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m cudalab_grade.sandbox",
                                 description="Run a command in the grading sandbox.")
    ap.add_argument("--check", action="store_true", help="print what this machine offers, and exit")
    ap.add_argument("--kind", choices=KINDS, help="the implementation (default: detected)")
    ap.add_argument("--ro", action="append", default=[], metavar="PATH", help="show PATH read-only")
    ap.add_argument("--rw", action="append", default=[], metavar="PATH", help="show PATH writable")
    ap.add_argument("--no-gpu", action="store_true", help="no GPU device nodes, no /sys")
    ap.add_argument("--keep-cwd", action="store_true", help="start in the current folder, not /tmp")
    ap.add_argument("--uid", default=str(SANDBOX_UID),
                    help=f"user to run as when root (default {SANDBOX_UID}; 'same': uid 0 without capabilities)")
    ap.add_argument("--memory", type=int, metavar="BYTES", help="cgroup memory.max (runs under proc.run)")
    ap.add_argument("--pids", type=int, metavar="N", help="cgroup pids.max")
    ap.add_argument("--cpus", type=float, metavar="X", help="cgroup cpu.max, in CPUs")
    ap.add_argument("--timeout", type=float, metavar="S", help="time limit (runs under proc.run)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD [ARG]...")
    args = ap.parse_args(argv)
    if args.check:
        print(check())
        return 0
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("no command")
    kind = args.kind or detect()
    if kind is None:
        print("no sandbox works here:\n" + check(), file=sys.stderr)
        return SETUP_FAILED
    words = prefix(kind, readable=args.ro, writable=args.rw, gpu=not args.no_gpu,
                   sysfs=not args.no_gpu, chdir=None if args.keep_cwd else "/tmp",
                   uid=None if args.uid == "same" else int(args.uid))
    if args.memory is None and args.pids is None and args.cpus is None and args.timeout is None:
        os.execv(words[0], words + cmd)
    from . import proc
    limits = (args.memory, args.pids, args.cpus)
    if any(x is not None for x in limits) and not Cgroup.available(
            controllers=[c for c, x in zip(("memory", "pids", "cpu"), limits) if x is not None]):
        print(f"no cgroup: {Cgroup.unavailable()}", file=sys.stderr)
        return SETUP_FAILED
    with Cgroup(memory_max=args.memory, pids_max=args.pids, cpus=args.cpus) as cg:
        p = proc.run(words + cmd, args.timeout, Path.cwd(), cgroup=cg)
    sys.stdout.write(p.output)
    print(f"[{'exit code 0' if p.returncode == 0 else p.failure()}, {p.seconds:.2f} s]", file=sys.stderr)
    return p.returncode if p.returncode is not None and p.returncode >= 0 else 1


if __name__ == "__main__":
    sys.exit(main())
