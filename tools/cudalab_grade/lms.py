"""The gradebook for a learning management system: gradebook-canvas.csv and gradebook-moodle.csv.

Both have one grade column per exercise (the assignment is the exercise, as in
gradebook.csv: `1.1 sum_atomic`, its points, correctness and performance
together); the LMS adds them up as its own gradebook is set up to. A cell of
an exercise the student's results do not hold is empty (no grade).

Canvas (Grades > Import): `Student`, `ID`, `SIS User ID`, `SIS Login ID`,
`Section`, then the assignments, and a second row `Points Possible` with
each assignment's maximum, as Canvas's own export writes them. Canvas finds
the student by `ID` (its user id) or an SIS id, the assignment by name (a
name it does not know becomes a new assignment; a header `Name (1234)` names
Canvas's assignment 1234).

Moodle (Grade administration > Import > CSV file): an identifier column, the
first of `email`, `idnumber`, `username` that the roster has (`username`
without a roster), then one column per grade item; map the identifier to the
user field of the same name ("Identify user by") and each column to its
grade item (Moodle offers the grade item of the same name).

The roster (`tools/grade --roster FILE`, CSV with a header) maps the
grader's student id (the submission's name) to the LMS's: columns `student`
(required), `name`, `canvas_id`, `sis_user_id`, `sis_login_id`, `section`,
`email`, `idnumber`, `username`; others are ignored. Without one, or for a
student it does not list, the student id fills the identifier (`SIS Login
ID` for Canvas, `username` for Moodle). Every cell is escaped against
spreadsheet formulas (escape.csv_cell), as in gradebook.csv.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from .escape import csv_text

FIELDS = ("student", "name", "canvas_id", "sis_user_id", "sis_login_id", "section",
          "email", "idnumber", "username")
MOODLE_KEYS = ("email", "idnumber", "username")
CANVAS_FILE, MOODLE_FILE = "gradebook-canvas.csv", "gradebook-moodle.csv"
MAX_ROSTER = 16 << 20


class RosterError(ValueError):
    """A roster that cannot be read; the message says why."""


class Roster:
    def __init__(self, rows: dict[str, dict[str, str]], columns: tuple[str, ...]):
        self.rows = rows          # student id -> {field: value}
        self.columns = columns    # the known fields the file has

    @classmethod
    def load(cls, path: Path) -> "Roster":
        import stat
        try:
            if not stat.S_ISREG(path.stat().st_mode):   # a FIFO or /dev/stdin: read_bytes waits
                raise RosterError(f"{path}: not a regular file")
            data = path.read_bytes()
        except OSError as e:
            raise RosterError(f"{path}: {e.strerror or e}") from None
        if len(data) > MAX_ROSTER:
            raise RosterError(f"{path}: larger than {MAX_ROSTER} bytes")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise RosterError(f"{path}: not UTF-8 text") from None
        return cls.parse(text, str(path))

    @classmethod
    def parse(cls, text: str, where: str = "roster") -> "Roster":
        if "\n" not in text:   # an old Mac's CSV ends its lines with \r alone
            text = text.replace("\r", "\n")
        reader = csv.reader(io.StringIO(text))
        try:
            header = next(reader)
        except StopIteration:
            raise RosterError(f"{where}: empty") from None
        except csv.Error as e:
            raise RosterError(f"{where}: not CSV ({e})") from None
        cols = [h.strip().lower() for h in header]
        if "student" not in cols:
            raise RosterError(f"{where}: no 'student' column (the grader's student id) in its "
                              f"header: {', '.join(header)}")
        twice = sorted({c for c in cols if c in FIELDS and cols.count(c) > 1})
        if twice:
            raise RosterError(f"{where}: the column {', '.join(repr(c) for c in twice)} appears "
                              "more than once in its header: which one holds the ids?")
        known = tuple(f for f in FIELDS if f in cols)
        rows: dict[str, dict[str, str]] = {}
        try:
            for n, row in enumerate(reader, 2):
                if not any(c.strip() for c in row):
                    continue
                got = {c: row[i].strip() for i, c in enumerate(cols) if c in FIELDS and i < len(row)}
                sid = got.get("student", "")
                if not sid:
                    raise RosterError(f"{where}, line {n}: no student id")
                if sid in rows:
                    raise RosterError(f"{where}, line {n}: student {sid!r} listed twice")
                rows[sid] = got
        except csv.Error as e:
            raise RosterError(f"{where}: not CSV ({e})") from None
        return cls(rows, known)

    def get(self, student: str, field: str) -> str:
        return self.rows.get(student, {}).get(field, "")


def _cols(records: list[dict]):
    from .classreport import exercise_columns
    return exercise_columns(records)


def _cells(record: dict, cols) -> list[str]:
    by_id = {e["id"]: e for e in record["cudalab"]["exercises"]}
    out = []
    for i, _, _ in cols:
        e = by_id.get(i)
        out.append("" if e is None else
                   f"{float(e.get('correctness_points', 0)) + float(e.get('perf_points', 0)):.1f}")
    return out


def _sorted(records: list[dict]) -> list[dict]:
    return sorted(records, key=lambda r: r["cudalab"]["student"])


def canvas(records: list[dict], roster: Roster | None = None) -> tuple[str, list[str]]:
    """gradebook-canvas.csv's text, and warnings (students the roster does not identify)."""
    cols = _cols(records)
    rows: list[list] = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
                        + [f"{i} {s}" for i, s, _ in cols],
                        ["Points Possible", "", "", "", ""] + [f"{m:g}" for _, _, m in cols]]
    warnings = []
    for r in _sorted(records):
        sid = r["cudalab"]["student"]
        g = roster.get if roster else (lambda s, f: "")
        ids = [g(sid, "canvas_id"), g(sid, "sis_user_id"), g(sid, "sis_login_id")]
        if not any(ids):
            ids[2] = sid
            if roster is not None:
                warnings.append(f"{CANVAS_FILE}: the roster has no canvas_id, sis_user_id nor "
                                f"sis_login_id for {sid!r}: its SIS Login ID is the student id")
        rows.append([g(sid, "name") or sid] + ids + [g(sid, "section")] + _cells(r, cols))
    return csv_text(rows), warnings


def moodle_key(roster: Roster | None) -> str:
    """The identifier column of the Moodle file: email, idnumber or username."""
    if roster is not None:
        for k in MOODLE_KEYS:
            if k in roster.columns:
                return k
    return "username"


def moodle(records: list[dict], roster: Roster | None = None) -> tuple[str, list[str]]:
    """gradebook-moodle.csv's text, and warnings (students the roster does not identify)."""
    cols = _cols(records)
    key = moodle_key(roster)
    rows: list[list] = [[key] + [f"{i} {s}" for i, s, _ in cols]]
    warnings = []
    for r in _sorted(records):
        sid = r["cudalab"]["student"]
        ident = roster.get(sid, key) if roster else ""
        if not ident:
            ident = sid
            if roster is not None:
                warnings.append(f"{MOODLE_FILE}: the roster has no {key} for {sid!r}: "
                                "the student id stands in")
        rows.append([ident] + _cells(r, cols))
    return csv_text(rows), warnings


def write(out: Path, records: list[dict], roster: Roster | None = None) -> list[str]:
    """gradebook-canvas.csv and gradebook-moodle.csv in out; the warnings."""
    from .signing import write_file
    warnings = []
    for name, make in ((CANVAS_FILE, canvas), (MOODLE_FILE, moodle)):
        text, ws = make(records, roster)
        write_file(out / name, text)
        warnings += ws
    if roster is not None:
        graded = {r["cudalab"]["student"] for r in records}
        extra = sorted(set(roster.rows) - graded)
        if extra:
            warnings.append(f"{len(extra)} student(s) of the roster have no results (no grade "
                            f"in the LMS files): {', '.join(extra[:20])}"
                            + (" ..." if len(extra) > 20 else ""))
    return warnings
