"""One GPU shared by several graders' threads: tests together, a timing alone.

Class grading runs several submissions on one GPU at once (`--per-gpu N`). Their
tests can share the device; a benchmark cannot: another process's kernels
time-share the GPU with it and slow the exercise or its baseline by any amount
(a red-team attack that keeps a kernel spinning through its own tests took a
control's 1.3 from 0.053 to 0.0099 of CUB on the H100). So every program of a
submission runs under the GPU's lock: tests and sanitizer runs take it shared,
a benchmark takes it exclusive. Waiting timings go first (writer preference),
so a stream of tests cannot starve them.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator


class GpuLock:
    """A readers-writer lock for one GPU: `shared()` for tests, `exclusive()` for timings."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            while self._writer or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._cond:
            self._writers_waiting += 1
            try:
                while self._writer or self._readers:
                    self._cond.wait()
            finally:
                self._writers_waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()

