"""Running one program with a time limit, killing its whole process group."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Proc:
    returncode: int | None  # None when it timed out
    output: str             # stdout and stderr, interleaved
    seconds: float
    timed_out: bool = False

    def failure(self) -> str:
        """'SIGSEGV', 'exit code 3', ... for a run that did not exit 0."""
        rc = self.returncode
        if rc is None:
            return "timed out"
        if rc < 0:
            return signal_name(-rc)
        if rc > 128 and _is_signal(rc - 128):
            return f"exit code {rc} ({signal_name(rc - 128)})"
        return f"exit code {rc}"


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


def run(cmd: list[str], timeout: float, cwd: Path, env: dict[str, str] | None = None) -> Proc:
    """Run cmd in its own session; after `timeout` seconds kill its process group."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    start = time.monotonic()
    try:
        p = subprocess.Popen(cmd, cwd=cwd, env=full_env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
    except OSError as e:
        return Proc(127, f"cannot start {cmd[0]}: {e}", 0.0)
    try:
        out, _ = p.communicate(timeout=timeout)
        return Proc(p.returncode, out.decode(errors="replace"), time.monotonic() - start)
    except subprocess.TimeoutExpired:
        _kill_group(p.pid)
        try:
            out, _ = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # a child escaped the group and holds the pipe
            p.kill()
            out = b""
        return Proc(None, out.decode(errors="replace"), time.monotonic() - start, timed_out=True)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
