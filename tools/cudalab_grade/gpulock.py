"""One GPU shared by several graders' threads: tests together, a timing alone.

Class grading runs several submissions on one GPU at once (`--per-gpu N`). Their
tests can share the device; a benchmark cannot: another process's kernels
time-share the GPU with it and slow the exercise or its baseline by any amount
(a red-team attack that keeps a kernel spinning through its own tests took a
control's 1.3 from 0.053 to 0.0099 of CUB on the H100). So every program of a
submission runs under the GPU's lock: tests and sanitizer runs take it shared,
a benchmark takes it exclusive. Waiting timings go first (writer preference),
so a stream of tests cannot starve them.

Each hold is a `Hold` that says whether the GPU was shared meanwhile: `others`, the most
other holders at once during it (0 for an exclusive hold). A test that failed in a way a
neighbour can cause (out of memory, a timeout) while `overlapped` is graded again under
`exclusive()` (grading.py, _confirm_alone).
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator


class Hold:
    """One hold of the lock: `others`, the most other holders at once while it was held."""

    __slots__ = ("others",)

    def __init__(self) -> None:
        self.others = 0

    @property
    def overlapped(self) -> bool:
        """Whether another holder had the lock at some time during this hold."""
        return self.others > 0


class GpuLock:
    """A readers-writer lock for one GPU: `shared()` for tests, `exclusive()` for timings."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0
        self._holds: set[Hold] = set()  # the shared holds now

    @contextmanager
    def shared(self) -> Iterator[Hold]:
        hold = Hold()
        with self._cond:
            while self._writer or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
            self._holds.add(hold)
            for h in self._holds:  # a new reader: every reader now has len - 1 beside it
                h.others = max(h.others, len(self._holds) - 1)
        try:
            yield hold
        finally:
            with self._cond:
                self._readers -= 1
                self._holds.discard(hold)
                self._cond.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[Hold]:
        hold = Hold()  # alone by construction: others stays 0
        with self._cond:
            self._writers_waiting += 1
            try:
                while self._writer or self._readers:
                    self._cond.wait()
            finally:
                self._writers_waiting -= 1
            self._writer = True
        try:
            yield hold
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()

