"""Your progress through the course: the state file every grade run updates, and the
table `tools/grade --progress` prints from it.

The state is .grade/state.json at the course root, one JSON object:

    {"version": 1,
     "implementations": {
       "starter": {                       # or "solution" (tools/grade --solutions)
         "1.1": {"slug": "sum_...",
                 "last": RUN,             # the latest grading of the exercise
                 "best": RUN}}}}          # the one with the most points (a pass first)

    RUN = {"status": "passed", "points": 12.0, "max_points": 14.0,
           "correctness_points": 10.0, "perf_points": 2.0, "ratio": 0.41 or null,
           "perf": true (--perf ran), "fast": false (--fast), "reason": "...",
           "when": "2025-05-01T12:00:00+02:00"}

Only outcomes of the student's code are recorded: not "no GPU", not a grader
error, not a program left unbuilt by --no-build. A missing, unreadable or
corrupt state (or one of another version) reads as "nothing graded yet"; the
next grade run sets a corrupt one aside as state.json.bad and starts afresh.
"""
from __future__ import annotations

import datetime
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .grading import GRADER_ERROR, NO_GPU, PASSED, Result
from .manifest import Chapter, Exercise

VERSION = 1
BAR = 20


def state_path(root: Path) -> Path:
    return root / ".grade" / "state.json"


@dataclass
class State:
    data: dict            # {"version": 1, "implementations": {...}}
    problem: str = ""     # why the file could not be read ("" when fine or absent)
    exists: bool = False

    def exercises(self, impl: str) -> dict[str, dict]:
        got = self.data.get("implementations", {}).get(impl, {})
        return got if isinstance(got, dict) else {}

    def record(self, impl: str, ex_id: str) -> dict | None:
        rec = self.exercises(impl).get(ex_id)
        return rec if isinstance(rec, dict) else None

    def best(self, impl: str, ex_id: str) -> dict | None:
        rec = self.record(impl, ex_id)
        best = rec.get("best") if rec else None
        return best if isinstance(best, dict) else None

    def passed(self, impl: str, ex_id: str) -> bool:
        best = self.best(impl, ex_id)
        return best is not None and best.get("status") == PASSED


def empty() -> dict:
    return {"version": VERSION, "implementations": {}}


def load(root: Path) -> State:
    """The state, never raising: a missing or corrupt file is an empty state with a reason."""
    path = state_path(root)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return State(empty())
    except OSError as e:
        return State(empty(), f"cannot read it ({e.strerror or e})", True)
    try:
        data = json.loads(text)
    except ValueError as e:
        return State(empty(), f"not valid JSON ({e})", True)
    if not isinstance(data, dict) or not isinstance(data.get("implementations"), dict):
        return State(empty(), "not a cudalab state file", True)
    if data.get("version") != VERSION:
        return State(empty(), f"version {data.get('version')!r}, this tools/grade reads "
                              f"version {VERSION}", True)
    return State(data, "", True)


def _number(x, default: float = 0.0) -> float:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else default


def _rank(run: dict) -> tuple:
    """Which of two runs is the better: a pass first, then points, then the speed ratio."""
    return (run.get("status") == PASSED, _number(run.get("points")), _number(run.get("ratio"), -1.0))


def recordable(r: Result) -> bool:
    """Whether a result says something about the student's code."""
    return r.status not in (NO_GPU, GRADER_ERROR) and not r.reason.startswith("not built")


def run_of(r: Result, perf: bool, fast: bool, when: str) -> dict:
    return {"status": r.status, "points": round(r.points, 2), "max_points": r.max_points,
            "correctness_points": r.correctness_points, "perf_points": r.perf_points,
            "ratio": r.ratio, "perf": bool(perf and r.exercise.perf), "fast": fast,
            "reason": r.reason[:300], "when": when}


def update(root: Path, impl: str, results: list[Result], perf: bool = False,
           fast: bool = False, now: datetime.datetime | None = None) -> Path | None:
    """Records the results in the state file (written whole, atomically); the path, or
    None when there was nothing to record. Raises OSError when it cannot be written."""
    results = [r for r in results if recordable(r)]
    if not results:
        return None
    when = (now or datetime.datetime.now()).astimezone().isoformat(timespec="seconds")
    path = state_path(root)
    st = load(root)
    if st.problem and path.exists():  # keep what was there for whoever wants to look
        try:
            os.replace(path, path.with_name(path.name + ".bad"))
        except OSError:
            pass
    data = st.data
    exercises = data["implementations"].setdefault(impl, {})
    for r in results:
        run = run_of(r, perf, fast, when)
        rec = exercises.get(r.exercise.id)
        best = rec.get("best") if isinstance(rec, dict) else None
        if not isinstance(best, dict) or _rank(run) >= _rank(best):
            best = run
        exercises[r.exercise.id] = {"slug": r.exercise.slug, "last": run, "best": best}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".state-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def next_exercise(chapters: list[Chapter], st: State, impl: str,
                  after: Exercise | None = None) -> Exercise | None:
    """The first exercise not yet passed, in course order, starting after `after`
    (wrapping round to the start); None when every one has passed."""
    order = [e for c in chapters for e in c.exercises]
    if after is not None and after in order:
        i = order.index(after) + 1
        order = order[i:] + order[:i]
    return next((e for e in order if not st.passed(impl, e.id)), None)


def bar(got: float, best: float, width: int = BAR) -> str:
    share = 0.0 if best <= 0 else max(0.0, min(1.0, got / best))
    full = int(round(share * width))
    return "[" + "#" * full + "." * (width - full) + f"] {share * 100:3.0f}%"


def _pts(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


@dataclass
class Tally:
    done: int = 0
    total: int = 0
    points: float = 0.0
    possible: float = 0.0
    speed: float = 0.0
    speed_possible: float = 0.0

    def add(self, ex: Exercise, best: dict | None) -> None:
        self.total += 1
        self.possible += ex.points + (ex.perf.points if ex.perf else 0)
        self.speed_possible += ex.perf.points if ex.perf else 0
        if best is None:
            return
        self.done += best.get("status") == PASSED
        self.points += _number(best.get("points"))
        self.speed += _number(best.get("perf_points"))

    def cells(self, name: str) -> tuple[str, ...]:
        speed = f"{_pts(self.speed)}/{_pts(self.speed_possible)}" if self.speed_possible else "-"
        return (name, bar(self.points, self.possible), f"{self.done}/{self.total}",
                f"{_pts(self.points)}/{_pts(self.possible)}", speed)


def _grid(headers: tuple[str, ...], rows: list[tuple[str, ...]], rule_before_last=False) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells):
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) if i > 1 else c.ljust(w)
                for i, (c, w) in enumerate(zip(cells[1:], widths[1:]), start=1)]
        return "  ".join([first] + rest).rstrip()
    out = [line(headers), "-" * len(line(headers))]
    for i, r in enumerate(rows):
        if rule_before_last and i == len(rows) - 1:
            out.append("-" * len(out[0]))
        out.append(line(r))
    return out


def _when(iso: str) -> str:
    try:
        return datetime.datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M")
    except (TypeError, ValueError):
        return "?"


def table(chapters: list[Chapter], st: State, impl: str, root: Path,
          detail: list[Exercise] | None = None) -> str:
    """The --progress text: a bar per chapter (points earned of the points possible,
    speed points included), exercises passed, speed points; the exercises of `detail`
    one by one; the next exercise to do."""
    where = "solutions/" if impl == "solution" else "starter/"
    shown = os.path.relpath(state_path(root), root)
    lines = []
    if st.problem:
        lines.append(f"{shown} could not be read: {st.problem}; it counts as nothing graded, "
                     "and the next grade run starts it afresh.")
    if not st.exercises(impl):
        lines.append(f"nothing graded yet for your code in {where} (no grade results in {shown}).")
        lines.append("grade an exercise to start: tools/grade 1.1  (or tools/grade --watch)")
        return "\n".join(lines) + "\n"
    rows, total = [], Tally()
    for c in chapters:
        t = Tally()
        for e in c.exercises:
            best = st.best(impl, e.id)
            t.add(e, best)
            total.add(e, best)
        rows.append(t.cells(f"{c.number:>2} {c.dir}"))
    rows.append(total.cells("total"))
    lines.append(f"progress of your code in {where} (best grade of each exercise, from {shown})")
    lines.append("")
    lines += _grid(("chapter", "progress (points)", "passed", "points", "speed"),
                   rows, rule_before_last=True)
    lines.append("")
    lines.append("points: best grade of each exercise; the points possible include the speed "
                 "points, earned with --perf")
    if detail:
        lines.append("")
        ex_rows = []
        for e in detail:
            rec = st.record(impl, e.id)
            best, last = (rec or {}).get("best"), (rec or {}).get("last")
            possible = e.points + (e.perf.points if e.perf else 0)
            if not isinstance(best, dict) or not isinstance(last, dict):
                ex_rows.append((e.id, e.slug, "not graded", f"-/{_pts(possible)}", "-", "-", "-"))
                continue
            ratio = best.get("ratio")
            speed = "-" if not e.perf else f"{_pts(_number(best.get('perf_points')))}/{e.perf.points}"
            if isinstance(ratio, (int, float)):
                speed += f" (ratio {ratio:.2f})"
            ex_rows.append((e.id, e.slug, str(best.get("status")),
                            f"{_pts(_number(best.get('points')))}/{_pts(possible)}", speed,
                            str(last.get("status")), _when(last.get("when"))))
        lines += _grid(("id", "exercise", "best", "points", "speed", "last", "last graded"), ex_rows)
    nxt = next_exercise(chapters, st, impl)
    lines.append("")
    if nxt is None:
        lines.append("every exercise has passed. More speed points: tools/grade ID --perf")
    else:
        flag = " --solutions" if impl == "solution" else ""
        lines.append(f"next: {nxt.id} {nxt.slug}: {nxt.title} ({nxt.source(impl)})")
        lines.append(f"  tools/grade --watch {nxt.id}{flag}   re-grades it on every save; "
                     f"a hint: tools/grade --hint {nxt.id}")
    return "\n".join(lines) + "\n"
