"""What the GPU did while a benchmark ran: its clocks, and whether another process used it.

A speed ratio is only as good as the conditions it was measured in: an SM clock
that dropped (power or thermal limits, another process) or a second process on
the GPU moves it. The grader samples `nvidia-smi` before, during (every
`interval` seconds, in a thread) and after the benchmark and reports the SM and
memory clocks it saw, the maximum SM clock, and every compute process on the
GPU that is neither the benchmark nor one of its descendants (its runner):
another program of the same grader (another submission's, on the same GPU)
counts as another process. Without nvidia-smi (or when it fails) everything is 'unknown': never
an error. Standard library only.

Before a benchmark, `wait_idle` polls nvidia-smi until no compute process but the grader is on
the GPU (a test or sanitizer run of the grader still tearing down its context, or anyone
else's program), for a bounded time; `Monitor.clock_drop` says whether the SM clock, sampled
while the benchmark ran, fell far below the GPU's maximum.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field

UNKNOWN = "unknown"
CLOCK_QUERY = "clocks.sm,clocks.mem,clocks.max.sm"
APPS_QUERY = "pid,process_name"
# the SM clock sampled during a benchmark below this share of the GPU's maximum: it fell
# (a power or thermal limit, another process; a loaded H100 runs at 1755-1980 of 1980 MHz)
CLOCK_FLOOR = 0.8


def run_smi(args: list[str], timeout: float = 5.0) -> str | None:
    """stdout of nvidia-smi ARGS, or None when it is missing or fails."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        p = subprocess.run([exe] + args, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout if p.returncode == 0 else None


def _number(text: str) -> float | None:
    text = text.strip().split(" ")[0]  # "1980 MHz" without nounits
    try:
        return float(text)
    except ValueError:
        return None  # "[N/A]", "[Not Supported]"


def parse_clocks(text: str | None) -> dict | None:
    """The first GPU's line of --query-gpu=clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader,nounits
    -> {'sm': MHz, 'mem': MHz, 'max_sm': MHz} (a value None when not reported); None without a line."""
    if not text:
        return None
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 3 or cells[0].lower().startswith("clocks"):
            continue
        sm, mem, max_sm = (_number(c) for c in cells[:3])
        return {"sm": sm, "mem": mem, "max_sm": max_sm}
    return None


def parse_apps(text: str | None) -> list[tuple[int, str]] | None:
    """--query-compute-apps=pid,process_name --format=csv,noheader -> [(pid, name)]; None: unknown."""
    if text is None:
        return None
    apps = []
    for line in text.splitlines():
        pid, _, name = line.partition(",")
        if pid.strip().isdigit():
            apps.append((int(pid.strip()), name.strip()))
    return apps


def is_ours(pid: int, me: int | None = None) -> bool:
    """Whether pid is `me` (default: this process) or one of its descendants (its parent chain
    in /proc reaches it)."""
    me = os.getpid() if me is None else me
    seen = 0
    while pid > 1 and seen < 64:
        if pid == me:
            return True
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            return False
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        try:
            pid = int(stat.rsplit(")", 1)[1].split()[1])
        except (IndexError, ValueError):
            return False
        seen += 1
    return pid == me


@dataclass
class Watch:
    """The samples of one benchmark run; `summary()` is what the reports show."""
    sm: list[float] = field(default_factory=list)
    mem: list[float] = field(default_factory=list)
    max_sm: float | None = None
    others: dict[int, str] = field(default_factory=dict)  # pid -> name, not ours
    apps_known: bool = False
    samples: int = 0

    def add(self, clocks: dict | None, apps: list[tuple[int, str]] | None, ours=is_ours) -> None:
        self.samples += 1
        if clocks:
            if clocks.get("sm") is not None:
                self.sm.append(clocks["sm"])
            if clocks.get("mem") is not None:
                self.mem.append(clocks["mem"])
            if clocks.get("max_sm") is not None:
                self.max_sm = clocks["max_sm"]
        if apps is not None:
            self.apps_known = True
            for pid, name in apps:
                if not ours(pid):
                    self.others[pid] = name

    def summary(self) -> dict:
        """{'sm_mhz': [min, max] or 'unknown', 'mem_mhz': ..., 'max_sm_mhz': n or 'unknown',
        'other_processes': [..] or 'unknown'} (JSON-ready)."""
        def span(v: list[float]):
            return [min(v), max(v)] if v else UNKNOWN
        return {"sm_mhz": span(self.sm), "mem_mhz": span(self.mem),
                "max_sm_mhz": self.max_sm if self.max_sm is not None else UNKNOWN,
                "other_processes": ([f"{pid} {name}".strip() for pid, name in sorted(self.others.items())]
                                    if self.apps_known else UNKNOWN)}


def describe(summary: dict) -> str:
    """'SM 1755-1980 MHz (max 1980), memory 2619 MHz, GPU not shared' in words."""
    def mhz(v):
        if v == UNKNOWN or v is None:
            return UNKNOWN
        lo, hi = v
        return f"{lo:g} MHz" if lo == hi else f"{lo:g}-{hi:g} MHz"
    sm, mem = mhz(summary.get("sm_mhz")), mhz(summary.get("mem_mhz"))
    if sm == UNKNOWN and mem == UNKNOWN:
        clocks = "clocks unknown"
    else:
        top = summary.get("max_sm_mhz")
        clocks = f"SM {sm}" + (f" (max {top:g})" if isinstance(top, (int, float)) else "") + f", memory {mem}"
    others = summary.get("other_processes")
    if others == UNKNOWN or others is None:
        shared = "other GPU processes unknown"
    elif others:
        shared = f"GPU shared with {len(others)} other process(es): {', '.join(others[:3])}"
    else:
        shared = "no other process on the GPU"
    return f"{clocks}; {shared}"


def short(summary: dict | None) -> str:
    """The scoreboard's few words: 'SM 1755-1980 MHz, memory 2619 MHz' (+ ', GPU shared')."""
    if not summary:
        return "clocks unknown"
    def mhz(v):
        if not isinstance(v, list):
            return UNKNOWN
        return f"{v[0]:g}" if v[0] == v[1] else f"{v[0]:g}-{v[1]:g}"
    sm, mem = mhz(summary.get("sm_mhz")), mhz(summary.get("mem_mhz"))
    words = "clocks unknown" if sm == mem == UNKNOWN else f"SM {sm} MHz, memory {mem} MHz"
    if isinstance(summary.get("other_processes"), list) and summary["other_processes"]:
        words += ", GPU shared with another process"
    return words


def apps_args(dev: list[str]) -> list[str]:
    return ["--query-compute-apps=" + APPS_QUERY, "--format=csv,noheader"] + dev


@dataclass
class Idle:
    """What wait_idle found: how long it waited, and what was still there when it stopped."""
    seconds: float
    others: list[str] | str   # other compute processes on the GPU ('PID NAME'): [] when none,
                              # UNKNOWN without nvidia-smi
    blocking: list[str] = field(default_factory=list)  # what it still waited for when it gave up
                              # (those others not waited for in vain before, the grader's own
                              # programs still ending); [] when nothing was left to wait for

    def busy(self) -> bool:
        """Whether the GPU still had another process when the wait stopped."""
        return isinstance(self.others, list) and bool(self.others)

    def describe(self) -> str:
        """What the wait did, in words; '' when the GPU was free at once."""
        if self.blocking:
            return (f"waited {self.seconds:g} s for the GPU to be free, in vain: "
                    f"{', '.join(self.blocking[:3])} still there")
        if self.busy():
            return f"{', '.join(self.others[:3])} on the GPU, waited for in vain before"
        if self.seconds >= 0.1:
            return f"waited {self.seconds:g} s for the GPU to be free"
        return ""


def wait_idle(env: dict[str, str] | None = None, limit: float = 20.0, poll: float = 0.5,
              smi=run_smi, ours=None, pending=None, ignore=frozenset(),
              clock=time.monotonic, sleep=time.sleep) -> Idle:
    """Waits, up to `limit` seconds, polling every `poll`, until nvidia-smi shows no compute
    process on the GPU (CUDA_VISIBLE_DEVICES of env, as Monitor) but `ours` (default: this
    process alone) and `pending()` ([(pid, name)], the grader's own programs still ending:
    proc.leftovers) lists none. Processes whose pid is in `ignore` (waited for in vain
    before) are reported (others) but not waited for. Without nvidia-smi it waits for
    `pending` alone."""
    dev = device_args(env or {})
    ours = ours if ours is not None else (lambda pid: pid == os.getpid())
    start = clock()
    polls = 0
    while True:
        polls += 1
        apps = parse_apps(smi(apps_args(dev)))
        others = None if apps is None else sorted((pid, name) for pid, name in apps if not ours(pid))
        blocking = [(pid, name) for pid, name in others or [] if pid not in ignore]
        blocking += [(pid, name) for pid, name in (pending() if pending is not None else [])
                     if pid not in ignore and pid not in {b for b, _ in blocking}]
        waited = clock() - start if polls > 1 or blocking else 0.0  # free at once: no wait
        if not blocking or waited >= limit:
            return Idle(round(waited, 1),
                        UNKNOWN if others is None else [f"{pid} {name}".strip() for pid, name in others],
                        [f"{pid} {name}".strip() for pid, name in blocking])
        sleep(max(0.0, min(poll, limit - waited)))


def device_args(env: dict[str, str]) -> list[str]:
    """nvidia-smi's -i for the one GPU CUDA_VISIBLE_DEVICES names (class grading), else []."""
    vis = (env.get("CUDA_VISIBLE_DEVICES") or "").strip()
    if vis and "," not in vis:
        return ["-i", vis]
    return []


class Monitor:
    """with Monitor(env) as m: ...  samples before, every `interval` s during, and after."""

    def __init__(self, env: dict[str, str] | None = None, interval: float = 1.0, smi=run_smi,
                 ours=None):
        self.dev = device_args(env or {})
        self.interval, self.smi = interval, smi
        self.root: int | None = None  # the benchmark's pid, once started (started())
        # ours: the grader itself, the benchmark and its descendants (its runner); other
        # programs of this grader (another submission's, on the same GPU) are others
        self.ours = ours if ours is not None else (
            lambda pid: pid == os.getpid() or (self.root is not None and is_ours(pid, self.root)))
        self.watch = Watch()
        self.during_sm: list[float] = []  # the SM clocks sampled while the benchmark ran
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def started(self, pid: int) -> None:
        """The benchmark program's pid (proc.run's on_start)."""
        self.root = pid

    def sample(self, during: bool = False) -> None:
        clocks = parse_clocks(self.smi(["--query-gpu=" + CLOCK_QUERY, "--format=csv,noheader,nounits"] + self.dev))
        apps = parse_apps(self.smi(apps_args(self.dev)))
        with self._lock:
            self.watch.add(clocks, apps, self.ours)
            if during and clocks and clocks.get("sm") is not None:
                self.during_sm.append(clocks["sm"])

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample(during=True)

    def clock_drop(self) -> str | None:
        """'the SM clock fell to 990 MHz of 1980' when a sample taken while the benchmark ran
        was below CLOCK_FLOOR x the maximum SM clock; None otherwise or when unknown (the
        samples before and after the run, on an idle GPU, do not count)."""
        with self._lock:
            low, top = min(self.during_sm, default=None), self.watch.max_sm
        if low is None or not top or low >= CLOCK_FLOOR * top:
            return None
        return f"the SM clock fell to {low:g} MHz of {top:g}"

    def __enter__(self) -> "Monitor":
        self.sample()
        if self.watch.samples and (self.watch.sm or self.watch.apps_known):  # nvidia-smi works
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self.watch.sm or self.watch.apps_known:
            self.sample()

    def summary(self) -> dict:
        with self._lock:
            return self.watch.summary()
