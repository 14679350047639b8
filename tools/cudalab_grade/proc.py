"""Running one program with limits: time, captured output, host memory.

The program runs in its own session (process group). After `timeout`
seconds, or when the resident memory of its group passes `max_rss` bytes,
the whole group is killed. Its output (stdout and stderr, interleaved) is
kept up to `max_output` bytes: the first half and the last half, with a note
of how much was dropped in between, so a program that prints gigabytes costs
neither memory nor disk.

Host memory is watched, not limited with RLIMIT_AS: a CUDA program reserves
far more virtual address space than it uses (the unified address space), so
an address-space limit breaks every CUDA program. The watchdog sums VmRSS
over the processes of the group every `POLL` seconds; an allocation faster
than that can overshoot the limit briefly before the kill.

With a cgroup (`cgroup=`, a sandbox.Cgroup that the caller has entered), the
program is moved into it before it runs anything (a shell writes its own pid
into cgroup.procs, then execs the program), so every process it starts is
there too, whatever session or process group it makes. Memory is then the
cgroup's memory.max, enforced by the kernel (no watchdog: `max_rss` is not
used); a program killed by the cgroup's OOM killer gets `memory_exceeded`
(memory.peak, else memory.max). A timeout, an interrupt, or the program's
end kills the whole cgroup: nothing it started outlives it.

Every program also runs without core dumps and can write no file past `max_file` bytes
(RLIMIT_CORE, RLIMIT_FSIZE; default MAX_FILE): a write past it fails and the writer gets
SIGXFSZ (killed, unless it handles it). The limits are set before the program starts
(through util-linux `prlimit` where there is one, else on its pid just after it started,
when a program that starts another one at once may be quicker), and what it starts
inherits them.

A program run with `gpu=` (a test, a sanitizer run, a benchmark: grading.Options.run) is
remembered once it has ended: `leftovers()` lists the processes of its process group still
alive (a runner still tearing down its CUDA context after its checker exited, a killed group
not yet gone) and reaps the grader's own children among them, so that a benchmark can wait
for them (grading.wait_for_gpu) instead of sharing the GPU with them.
"""
from __future__ import annotations

import os
import resource
import selectors
import signal
import concurrent.futures
import functools
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

POLL = 0.05               # seconds between two memory checks
MAX_FILE = 1 << 30        # RLIMIT_FSIZE of graded programs: no file written past 1 GiB
GRACE = 2.0              # seconds a child may keep the output open after the program exited
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_live: set[int] = set()    # process groups of the programs running now (any thread)
_live_cgroups: dict = {}     # pid -> the cgroup of a program that run() supervises
_live_lock = threading.Lock()
_stopping = threading.Event()  # set by stop_all(): run() starts nothing more
# process groups of GPU programs (run(gpu=...)) that have ended -> the CUDA_VISIBLE_DEVICES
# they ran with ("" when unset); leftovers() forgets a group once nothing of it is left
_ended: dict[int, str] = {}
MAX_ENDED = 4096


@dataclass
class Proc:
    returncode: int | None  # None when it timed out or was killed for memory
    output: str             # stdout and stderr, interleaved (possibly truncated)
    seconds: float
    timed_out: bool = False
    dropped: int = 0                 # bytes of output dropped in the middle
    memory_exceeded: int | None = None  # resident bytes seen when killed for memory

    def failure(self) -> str:
        """'SIGSEGV', 'exit code 3', ... for a run that did not exit 0."""
        rc = self.returncode
        if self.memory_exceeded is not None:
            return f"killed at {self.memory_exceeded / 2**20:.0f} MiB of host memory"
        if rc is None:
            return "timed out"
        if rc < 0:
            return signal_name(-rc)
        if rc > 128 and _is_signal(rc - 128):
            return f"exit code {rc} ({signal_name(rc - 128)})"
        return f"exit code {rc}"

    def truncation_note(self) -> str | None:
        if not self.dropped:
            return None
        return f"(output truncated: {self.dropped} bytes in the middle were dropped)"


def _is_signal(num: int) -> bool:
    try:
        signal.Signals(num)
        return True
    except ValueError:
        return False


def signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


class _Capture:
    """Keeps the first and the last `limit / 2` bytes of a stream (and, with a
    log file, writes all of it there as it comes)."""

    def __init__(self, limit: int, log_file=None):
        self.limit = max(0, limit)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self.log_file = log_file

    def add(self, data: bytes) -> None:
        if self.log_file is not None:
            self.log_file.write(data)
            self.log_file.flush()
        if self.limit == 0:  # no limit
            self.head += data
            return
        half = self.limit // 2
        room = half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail += data
        extra = len(self.tail) - (self.limit - half)
        if extra > 0:
            del self.tail[:extra]
            self.dropped += extra

    def text(self) -> str:
        if not self.dropped:
            return (bytes(self.head) + bytes(self.tail)).decode(errors="replace")
        note = (f"\n[... {self.dropped} bytes of output dropped: the grader keeps "
                f"{self.limit} bytes ...]\n")
        return bytes(self.head).decode(errors="replace") + note + bytes(self.tail).decode(errors="replace")


def group_rss(pgid: int) -> int:
    """Resident bytes of every process in process group `pgid` (0 when none is readable)."""
    total = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp session ... ; comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) < 22 or int(fields[2]) != pgid:
            continue
        total += int(fields[21]) * _PAGE  # rss, in pages
    return total


def _limit_files(pid: int, max_file: int = MAX_FILE) -> None:
    """No core dumps, no file past max_file, for the program and what it starts from now on."""
    for res, value in ((resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, max_file)):
        try:
            resource.prlimit(pid, res, (value, value))
        except (OSError, ValueError, AttributeError):
            pass


@functools.cache
def _prlimit_tool() -> str | None:
    return shutil.which("prlimit", path=os.pathsep.join(
        [os.environ.get("PATH", ""), "/usr/bin", "/bin", "/usr/sbin", "/sbin"]))


def _limit_words(cmd: list[str], cwd: Path, path: str | None, max_file: int) -> list[str]:
    """The words that set the limits of _limit_files before cmd runs: `prlimit` (util-linux),
    so that nothing cmd starts at once escapes them (set on its pid after the start, they
    miss what it started meanwhile: a sandbox's process, with the grader's threads busy).
    [] where there is no prlimit, or where cmd cannot be found (Popen then says so, as
    always)."""
    tool = _prlimit_tool()
    if tool is None or not cmd:
        return []
    prog = cmd[0]
    if "/" in prog:
        target = Path(cwd) / prog
        found = target.is_file() and os.access(target, os.X_OK)
    else:
        found = shutil.which(prog, path=path if path is not None else os.defpath) is not None
    if not found:
        return []
    return [tool, "--core=0", f"--fsize={max_file}", "--"]


def run(cmd: list[str], timeout: float | None, cwd: Path, env: dict[str, str] | None = None,
        max_output: int = 0, max_rss: int = 0, log: Path | None = None,
        limit_files: bool = True, cgroup=None, on_start=None, term_grace: float = 0.0,
        gpu: str | None = None, max_file: int = MAX_FILE) -> Proc:
    """Run cmd in its own session, within the limits (0 = no limit on output or memory;
    timeout None = no time limit). With `log`, every byte of output is also written
    to that file as it arrives (uncapped), so a long build can be followed. If the
    caller is interrupted (an exception, e.g. from a signal handler), the program's
    whole process group is killed before the exception goes on. With `cgroup`, see
    the module's docstring. `on_start(pid)` is called once the program has started.
    `term_grace` > 0 (a program that runs programs itself, such as the grader): on a timeout
    or an interrupt its group gets SIGTERM first and that many seconds to stop its own
    programs, then SIGKILL. `gpu` (the CUDA_VISIBLE_DEVICES it runs with, "" when unset): a
    program that may use the GPU, whose process group leftovers() watches once it has ended.
    `max_file`: with `limit_files`, the most bytes any file it (or what it starts) writes may
    reach (RLIMIT_FSIZE; a write past it fails with SIGXFSZ), MAX_FILE unless told; no core
    dumps either. limit_files=False: neither limit (a trusted tool, such as the build)."""
    if _stopping.is_set():
        return Proc(None, f"not started: {cmd[0]}: the grader is stopping", 0.0)
    full_env = dict(os.environ)
    full_env.update(env or {})
    name = cmd[0]
    limits = _limit_words(cmd, cwd, full_env.get("PATH"), max_file) if limit_files else []
    cmd = limits + list(cmd)
    if cgroup is not None:
        cmd = cgroup.wrap(cmd)
        max_rss = 0
        ooms = cgroup.oom_killed()
    start = time.monotonic()
    log_file = log.open("ab") if log is not None else None
    try:
        p = subprocess.Popen(cmd, cwd=cwd, env=full_env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
    except OSError as e:
        if log_file is not None:
            log_file.write(f"cannot start {name}: {e}\n".encode())
            log_file.close()
        return Proc(127, f"cannot start {name}: {e}", 0.0)
    if limit_files and not limits:  # no prlimit here: on its pid, as soon as it runs
        _limit_files(p.pid, max_file)
    with _live_lock:
        _live.add(p.pid)
        _ended.pop(p.pid, None)  # a pid used again: its old group is long gone
        if cgroup is not None:
            _live_cgroups[p.pid] = cgroup
    if _stopping.is_set():  # stop_all() came between the start and the line above
        _stop_group(p, term_grace)
    if on_start is not None:
        on_start(p.pid)
    try:
        result = _supervise(p, start, timeout, max_output, max_rss, log_file, cgroup, term_grace)
    except BaseException:
        _stop_group(p, term_grace)
        if cgroup is not None:
            cgroup.kill()
        raise
    finally:
        with _live_lock:
            _live.discard(p.pid)
            _live_cgroups.pop(p.pid, None)
            if gpu is not None:
                _ended[p.pid] = gpu
                while len(_ended) > MAX_ENDED:
                    del _ended[next(iter(_ended))]
        if log_file is not None:
            log_file.close()
    if cgroup is not None and cgroup.oom_killed() > ooms:
        result.returncode = None
        result.memory_exceeded = cgroup.memory_peak() or cgroup.memory_max or 0
    return result


def _supervise(p: subprocess.Popen, start: float, timeout: float | None, max_output: int,
               max_rss: int, log_file, cgroup=None, term_grace: float = 0.0) -> Proc:
    cap = _Capture(max_output, log_file)
    deadline = start + timeout if timeout is not None else float("inf")
    timed_out, peak = False, None
    assert p.stdout is not None
    fd = p.stdout.fileno()
    os.set_blocking(fd, False)
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    open_pipe = True
    next_check = start
    exited_at = 0.0
    try:
        while True:
            now = time.monotonic()
            if now >= deadline:
                timed_out = True
                break
            if max_rss and now >= next_check:
                next_check = now + POLL
                rss = group_rss(p.pid)
                if rss > max_rss:
                    peak = rss
                    break
            if open_pipe:
                for _ in sel.select(timeout=min(POLL, max(0.0, deadline - now))):
                    try:
                        data = os.read(fd, 1 << 16)
                    except BlockingIOError:
                        continue
                    if data:
                        cap.add(data)
                    else:
                        open_pipe = False
                        sel.unregister(fd)
            else:
                try:
                    p.wait(timeout=min(POLL, max(0.0, deadline - now)))
                except subprocess.TimeoutExpired:
                    continue
            if p.poll() is not None:
                if cgroup is not None:  # the program ended: so does all it started
                    cgroup.kill()
                    _drain(fd, cap)
                    break
                if not open_pipe:
                    break
                # the program exited but something it started still holds the pipe
                exited_at = exited_at or time.monotonic()
                if time.monotonic() - exited_at > GRACE:
                    _kill_group(p.pid)
                    _drain(fd, cap)
                    break
    finally:
        sel.close()
    if timed_out or peak is not None:
        _stop_group(p, term_grace if timed_out else 0.0)
        if cgroup is not None:
            cgroup.kill()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            try:  # reaped, not left a zombie for subprocess to find some day
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        _drain(fd, cap)
        p.stdout.close()
        return Proc(None, cap.text(), time.monotonic() - start, timed_out=timed_out,
                    dropped=cap.dropped, memory_exceeded=peak)
    p.stdout.close()
    return Proc(p.returncode, cap.text(), time.monotonic() - start, dropped=cap.dropped)


def _stat(pid: str) -> tuple[str, str, int, int] | None:
    """(comm, state, ppid, pgrp) of a process from /proc/PID/stat; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode(errors="replace")
    except OSError:
        return None
    # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses
    head, _, rest = stat.rpartition(")")
    fields = rest.split()
    try:
        return head.partition("(")[2], fields[0], int(fields[1]), int(fields[2])
    except (IndexError, ValueError):
        return None


def leftovers(gpu: str | None = None) -> list[tuple[int, str]]:
    """[(pid, name)] of the processes still alive in the process groups of the GPU programs
    (run(gpu=...)) that have ended, those run with CUDA_VISIBLE_DEVICES `gpu` alone unless it
    is None: what a benchmark waits for. Reaps the zombies among them that are this process's
    own children; forgets a group once nothing of it is left."""
    me = os.getpid()
    with _live_lock:
        groups = {g for g, dev in _ended.items() if gpu is None or dev == gpu}
    if not groups:
        return []
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    alive, seen = [], set()
    for name in names:
        if not name.isdigit():
            continue
        st = _stat(name)
        if st is None or st[3] not in groups:
            continue
        comm, state, ppid, pgrp = st
        if state in ("Z", "X"):  # dead: its GPU context is gone; ours to reap when our child
            if ppid == me:
                try:
                    os.waitpid(int(name), os.WNOHANG)
                except ChildProcessError:
                    pass
            continue
        seen.add(pgrp)
        alive.append((int(name), comm))
    with _live_lock:
        for g in groups - seen:
            _ended.pop(g, None)
    return sorted(alive)


def _drain(fd: int, cap: _Capture) -> None:
    """What is left in the pipe after a kill (never blocks: a child may still hold it)."""
    for _ in range(256):
        try:
            data = os.read(fd, 1 << 16)
        except (BlockingIOError, OSError):
            return
        if not data:
            return
        cap.add(data)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _stop_group(p: subprocess.Popen, grace: float) -> None:
    """Kill p's process group: with a grace, SIGTERM first and up to `grace` seconds for p
    to end (a grader stops the programs it runs), then SIGKILL."""
    if grace > 0:
        try:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(timeout=grace)
        except (ProcessLookupError, PermissionError, subprocess.TimeoutExpired):
            pass
    _kill_group(p.pid)


def stop_all() -> None:
    """From now on run() starts nothing, and every program it supervises is killed: what a
    grader does when it is told to stop, so that no test it started outlives it."""
    _stopping.set()
    kill_all()


def stopping() -> bool:
    """True once stop_all() ran: what a program run now would report is the stop, not a verdict."""
    return _stopping.is_set()


def terminate_on_signals(signals=(signal.SIGTERM, signal.SIGHUP)) -> None:
    """A tool's main thread: on these signals stop_all(), then exit with 128 + the signal
    (SIGINT is Python's KeyboardInterrupt, which map_parallel and run() already handle)."""
    def handler(signum, frame):
        stop_all()
        raise SystemExit(128 + signum)
    for s in signals:
        signal.signal(s, handler)


def kill_all() -> None:
    """Kill the process group of every program that run() is supervising now, in
    any thread: what a caller that runs programs in a thread pool does when it is
    interrupted, so that the pool's threads return at once."""
    with _live_lock:
        groups = list(_live)
        cgroups = list(_live_cgroups.values())
    for pgid in groups:
        _kill_group(pgid)
    for cg in cgroups:
        cg.kill()


def map_parallel(fn, items, workers: int):
    """fn over items, `workers` at a time in threads, yielding the results in the
    items' order. On an interrupt (any exception, e.g. from a signal handler) or an
    error in fn, the items not started are dropped, every program that run() is
    supervising is killed (again until the running items have returned), and the
    exception goes on."""
    stop = threading.Event()

    def guarded(x):
        if stop.is_set():
            raise concurrent.futures.CancelledError()
        return fn(x)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, workers))
    futures = []
    try:
        futures = [pool.submit(guarded, x) for x in items]
        for f in futures:
            yield f.result()
    except BaseException:
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        while not all(f.done() for f in futures):
            kill_all()
            concurrent.futures.wait(futures, timeout=0.1)
        raise
    finally:
        pool.shutdown(wait=True)
