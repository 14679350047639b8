"""`tools/grade --watch [ID]`: re-grade the exercise being edited whenever its file changes.

The file is polled (its modification time and size) every POLL seconds with the
standard library; a change is graded once the file has held still for one poll,
so an editor's save in several writes is graded once. A pass moves on to the next
exercise not yet passed (.grade/state.json, progress.py). Ctrl-C ends it (exit 0).

The grading itself is tools/grade's (the `grade_one` callback): the same build and
grade steps as `tools/grade ID`, with the same options.

For tests: CUDALAB_WATCH_POLL (seconds between polls) and CUDALAB_WATCH_CYCLES
(stop after that many polls, exit 0) in the environment.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable, TextIO

from . import progress, report
from .grading import NO_GPU, PASSED, Result
from .manifest import Chapter, Exercise, select

POLL = 0.5
CLEAR = "\x1b[H\x1b[2J\x1b[3J"


class Stop(Exception):
    """Ends the watch with exit code `code` after printing `message` (e.g. a setup problem)."""

    def __init__(self, code: int, message: str = ""):
        super().__init__(message)
        self.code, self.message = code, message


def settings(env=os.environ) -> tuple[float, int | None]:
    """(seconds between polls, polls before stopping or None) from the testing variables."""
    try:
        poll = float(env.get("CUDALAB_WATCH_POLL", POLL))
    except ValueError:
        poll = POLL
    cycles = env.get("CUDALAB_WATCH_CYCLES", "")
    return max(poll, 0.0), int(cycles) if cycles.isdigit() else None


def _sleep(seconds: float) -> None:  # tests replace it to edit files between polls
    time.sleep(seconds)


def signature(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def pick(chapters: list[Chapter], key: str, st: progress.State, impl: str) -> Exercise | None:
    """The exercise to watch first: the one named by `key`; for a chapter (or no key),
    its (the course's) first exercise not yet passed; None when every one has passed."""
    if not key:
        return progress.next_exercise(chapters, st, impl)
    chosen = select(chapters, [key])
    if len(chosen) == 1:
        return chosen[0]
    return next((e for e in chosen if not st.passed(impl, e.id)),
                progress.next_exercise(chapters, st, impl))


class Watcher:
    def __init__(self, chapters: list[Chapter], root: Path, impl: str,
                 grade_one: Callable[[Exercise], Result], out: TextIO,
                 poll: float = POLL, max_cycles: int | None = None, flags: str = ""):
        self.chapters, self.root, self.impl = chapters, root, impl
        self.grade_one, self.out = grade_one, out
        self.poll, self.max_cycles = poll, max_cycles
        self.flags = flags  # options to repeat in the commands shown (e.g. " --solutions")
        self.tty = out.isatty()

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def file(self, ex: Exercise) -> Path:
        return self.root / ex.source(self.impl)

    def waiting(self, ex: Exercise) -> None:
        self.say(f"watching {ex.source(self.impl)} ({ex.id} {ex.slug}): save it to grade it "
                 "again; Ctrl-C stops")

    def grade(self, ex: Exercise, why: str) -> Result:
        if self.tty:
            self.out.write(CLEAR)
        else:
            self.say()
        self.say(f"[{time.strftime('%H:%M:%S')}] {why}: grading {ex.id} {ex.slug} "
                 f"({ex.source(self.impl)}) ...")
        res = self.grade_one(ex)
        self.out.write(report.terminal([res]))
        self.out.flush()
        return res

    def run(self, first: Exercise) -> int:
        try:
            return self._run(first)
        except KeyboardInterrupt:
            self.say("\nstopped watching.")
            return 0
        except Stop as e:
            if e.message:
                self.say(e.message.rstrip("\n"))
            return e.code

    def _run(self, ex: Exercise) -> int:
        res = self.grade(ex, "start")
        cycles, pending = 0, None
        last = signature(self.file(ex))
        while True:
            if res is not None:
                if res.status == NO_GPU:
                    self.say("grading needs a CUDA GPU, and the tests found none: stopped watching.")
                    return 3
                if res.status == PASSED:
                    nxt = self.passed(ex)
                    if nxt is None:
                        return 0
                    ex, last, pending = nxt, signature(self.file(nxt)), None
                self.waiting(ex)
                res = None
            if self.max_cycles is not None and cycles >= self.max_cycles:
                return 0
            _sleep(self.poll)
            cycles += 1
            now = signature(self.file(ex))
            if now == last:
                pending = None
                continue
            if now != pending:  # changed: grade it once it holds still for a poll
                pending = now
                continue
            last, pending = now, None
            if now is None:
                self.say(f"{ex.source(self.impl)} is gone: waiting for it to come back")
                continue
            res = self.grade(ex, "changed")

    def passed(self, ex: Exercise) -> Exercise | None:
        """Says the exercise passed; the next one not yet passed (None: the course is done)."""
        st = progress.load(self.root)
        nxt = progress.next_exercise(self.chapters, st, self.impl, after=ex)
        if nxt == ex:  # the state could not be written: go on from the course order anyway
            order = [e for c in self.chapters for e in c.exercises]
            i = order.index(ex) + 1
            nxt = order[i] if i < len(order) else None
        self.say(f"\n{ex.id} {ex.slug} passed.")
        if nxt is None:
            self.say(f"every exercise has passed: the course is done. Your progress: "
                     f"tools/grade --progress{self.flags}")
            return None
        self.say(f"next: {nxt.id} {nxt.slug}: {nxt.title}, in {nxt.source(self.impl)}")
        self.say(f"  a hint: tools/grade --hint {nxt.id}   (hints for {ex.id} stay there: "
                 f"tools/grade --hint {ex.id})")
        return nxt

