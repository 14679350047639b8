"""tools/grade's opt-in trace of where a grade run's time goes: with CUDALAB_GRADE_TRACE=1,
one line on stderr per phase (the interpreter's start and the imports, the manifests, the
GPU probe, the build check, the sandbox's trial run, each exercise's source and object
checks, its test list and test program, the record and the report), with its wall time and
the programs it started, and for a test program what its gtest report says of its tests'
own times. Off by default: then phase() only reads the variable, and nothing is printed.

    CUDALAB_GRADE_TRACE=1 tools/grade 1.1 --solutions --fast --no-build

The programs of a phase are those its thread starts (subprocess.Popen) while it is open, and
those of the threads that work for it (carry()); an outer phase counts its inner phases' too.
Phases of two threads may overlap in time (the object check runs beside the source check)."""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ENV = "CUDALAB_GRADE_TRACE"
PREFIX = "grade trace: "

_lock = threading.Lock()
_started: list[str] = []   # the name of every program started since run() began
# .open: the programs' lists of the phases open in this thread, outermost first (carry()
# passes them on to a thread that works for them)
_local = threading.local()


def enabled() -> bool:
    return os.environ.get(ENV, "") not in ("", "0")


def _say(text: str) -> None:
    print(PREFIX + text, file=sys.stderr, flush=True)


def _programs(names: list[str]) -> str:
    """' (3 programs: nm x2, cuobjdump)', or '' for none."""
    if not names:
        return ""
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    listed = ", ".join(n if k == 1 else f"{n} x{k}" for n, k in counts.items())
    return f" ({len(names)} program{'s' if len(names) > 1 else ''}: {listed})"


def _name(args) -> str:
    argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args or ["?"])
    words = [os.fsdecode(a) for a in argv]
    if os.path.basename(words[0]) == "prlimit" and "--" in words[:-1]:
        words = words[words.index("--") + 1:]  # proc.run's limits, set in front of the program
    name = os.path.basename(words[0])
    if name.startswith("python") and len(words) > 1 and words[1] == "-c":
        return name + " -c"
    if name in ("sh", "dash", "bash") and len(words) > 2 and words[1] == "-c":
        return name + " -c"  # a cgroup's wrapper
    return name


def _since_process_start() -> float | None:
    """Seconds since this process started (Linux: /proc, to a clock tick), or None."""
    try:
        stat = Path("/proc/self/stat").read_text()
        start_ticks = int(stat[stat.rfind(")") + 2:].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def run(started: float | None = None):
    """The whole grade run (tools/grade's main): counts the programs it starts, prints how
    long the interpreter and the imports took before it (`started`: time.monotonic() at the
    top of the script) and the total at its end. Does nothing when the trace is off."""
    if not enabled():
        yield
        return
    now = time.monotonic()
    since = _since_process_start()
    if since is not None and started is not None:
        _say(f"interpreter start: {max(0.0, since - (now - started)):.3f} s (before tools/grade's "
             "first line; /proc, to a clock tick)")
    if started is not None:
        _say(f"imports: {now - started:.3f} s")
    original = subprocess.Popen.__init__

    def counting(self, args, *a, **kw):
        name = _name(args)
        with _lock:
            _started.append(name)
        for names in getattr(_local, "open", ()):
            names.append(name)
        original(self, args, *a, **kw)

    subprocess.Popen.__init__ = counting
    begin = len(_started)
    try:
        yield
    finally:
        subprocess.Popen.__init__ = original
        _say(f"total: {time.monotonic() - now:.3f} s after the imports"
             + (f", {time.monotonic() - now + since:.3f} s since the process started" if since is not None else "")
             + _programs(_started[begin:]))


@contextlib.contextmanager
def phase(name: str):
    """One phase of the run: its line on stderr once it ends (even by an exception)."""
    if not enabled():
        yield
        return
    outer = getattr(_local, "open", [])
    names: list[str] = []
    _local.open = outer + [names]
    start = time.monotonic()
    try:
        yield
    finally:
        secs = time.monotonic() - start
        _local.open = outer
        _say("  " * len(outer) + f"{name}: {secs:.3f} s{_programs(names)}")


def carry(fn):
    """fn, to run in another thread as if inside the phases open here: the programs it starts
    count in them, and its own phases are indented under them."""
    if not enabled():
        return fn
    outer = list(getattr(_local, "open", []))

    def in_thread(*args, **kw):
        _local.open = outer
        try:
            return fn(*args, **kw)
        finally:
            _local.open = []
    return in_thread


def gtest_times(report: Path, most: int = 5) -> None:
    """Under a test program's phase: what its gtest JSON report says of the time (the whole
    run, environment set-up included, and the sum of the tests) and its slowest tests."""
    if not enabled():
        return
    try:
        data = json.loads(report.read_text(errors="replace"))
        total = _secs(data.get("time"))
        tests = [(f"{s.get('name', '?')}.{t.get('name', '?')}", _secs(t.get("time")))
                 for s in data.get("testsuites", []) for t in s.get("testsuite", [])]
    except (OSError, ValueError, AttributeError, TypeError):
        _say("  gtest: no readable report")
        return
    slow = sorted(tests, key=lambda x: -x[1])[:most]
    _say(f"  gtest: {len(tests)} tests; the run {total:.3f} s (its GPU set-up included), the tests "
         f"{sum(t for _, t in tests):.3f} s; slowest: "
         + ", ".join(f"{n} {t:.3f} s" for n, t in slow))


def _secs(value) -> float:
    """gtest's "1.234s" as seconds (0 when absent)."""
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value or "0s").strip()
    return float(text[:-1] if text.endswith("s") else text)
