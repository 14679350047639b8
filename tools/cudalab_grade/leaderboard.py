"""A pseudonymous speed leaderboard of a class graded with --perf: leaderboard.md and .csv.

Each exercise with a speed target (one whose results carry a `ratio`: the
library baseline's time over the student's, measured by the grader; against a
calibrated host baseline the ratio scored, at the calibration host's speed,
grading.run_perf) gets a
table of the students whose submission passed its tests, fastest first (by
the ratio over the target it was scored against on its GPU, which orders a
class graded on one GPU as the ratio does), and an overall table ranks the
students by the number of such exercises and the geometric mean of their
ratios over their targets (every exercise weighs alike, and submissions
graded on different GPUs compare). Only exercises that passed are ranked.

Students are shown by pseudonym, never by id: `anon-` and ten base-32
characters of an HMAC-SHA256 of the student id, keyed by a key derived from
the output folder's grader key (grader-secret.json, signing.py). The same
folder (the same key) gives the same pseudonyms run after run; another folder
gives others; nobody without the key can tell who is who. The instructor's
mapping is pseudonyms.csv (mode 0600) beside them, never for the students; the
similarity report (similarity.py) uses the same pseudonyms and adds its students
to the same map.

Ties (the same ratio, as the grader rounds it, to 3 significant digits) share
a rank and are listed in pseudonym order, so the order never depends on the
student ids nor on the order the submissions were graded.

`gradescope_entries` gives each exercise's ratio over its target in the
`leaderboard` field of Gradescope's results.json ({"name", "value", "order"}),
for a grader that writes them there.
"""
from __future__ import annotations

import base64
import csv
import hashlib
import hmac
import io
import math
from pathlib import Path

from . import escape
from .escape import md_text
from .signing import Untrusted, read_regular, write_file

FILES = ("leaderboard.md", "leaderboard.csv")
MAPPING = "pseudonyms.csv"
_DOMAIN = b"cudalab leaderboard pseudonyms v1\0"


def pseudonym_key(key: bytes) -> bytes:
    """The key for pseudonyms, derived from (never equal to) the folder's signing key."""
    return hmac.new(key, _DOMAIN, hashlib.sha256).digest()


def pseudonym(pkey: bytes, student: str, length: int = 10) -> str:
    """anon-xxxxx-xxxxx: the student's stable pseudonym under pkey (pseudonym_key)."""
    digest = hmac.new(pkey, student.encode("utf-8", "surrogateescape"), hashlib.sha256).digest()
    text = base64.b32encode(digest).decode().lower().rstrip("=")[:length]
    return "anon-" + "-".join(text[i:i + 5] for i in range(0, len(text), 5))


def pseudonyms(key: bytes, students: list[str]) -> dict[str, str]:
    """student id -> pseudonym; the (astronomically unlikely) clashes get longer ones."""
    pkey = pseudonym_key(key)
    names = {s: pseudonym(pkey, s) for s in students}
    length = 10
    while len(set(names.values())) < len(names) and length < 50:
        length += 5
        seen: dict[str, list[str]] = {}
        for s, n in names.items():
            seen.setdefault(n, []).append(s)
        for n, who in seen.items():
            if len(who) > 1:
                for s in who:
                    names[s] = pseudonym(pkey, s, length)
    return names


def _positive(x) -> float | None:
    """x as a float when it is a finite number > 0 (results.json is untrusted input), else None."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0:
        return None
    return float(x)


def _ratio(e: dict) -> float | None:
    """The speed ratio of an exercise that passed its tests, else None (also for a speed the
    grader refused as implausible or did not measure fairly: gpu_busy)."""
    if e.get("status") != "passed" or e.get("perf_verdict") in ("implausible", "gpu_busy"):
        return None
    return _positive(e.get("ratio"))


def _of_target(e: dict, ratio: float) -> float:
    """The ratio over the target it was scored against on its GPU (results.json's `target`,
    grading.run_perf: the target moves with the reference solution from GPU to GPU), so that
    submissions graded on different GPUs, and exercises whose ratios differ by orders of
    magnitude (1.1's 0.003, 6.2's 265), compare; the ratio itself where the results name no
    target (written before targets moved)."""
    t = _positive(e.get("target"))
    return ratio if t is None else ratio / t


def with_perf(records: list[dict]) -> bool:
    """Whether the class was graded with --perf."""
    return any(r["cudalab"].get("perf") for r in records)


def boards(records: list[dict]) -> list[tuple[str, str, list[tuple[str, float, float, float]]]]:
    """(id, slug, [(student, ratio, perf points, ratio over its target)]) of every exercise with a
    speed ratio, in course order; an exercise is listed when any submission has a ratio for it."""
    from .classreport import exercise_columns
    out = []
    for i, slug, _ in exercise_columns(records):
        rows = []
        timed = False
        for r in records:
            for e in r["cudalab"]["exercises"]:
                if e["id"] != i:
                    continue
                timed = timed or e.get("ratio") is not None
                ratio = _ratio(e)
                if ratio is not None:
                    rows.append((r["cudalab"]["student"], ratio, float(e.get("perf_points", 0)),
                                 _of_target(e, ratio)))
        if timed:
            out.append((i, slug, rows))
    return out


def _ranked(rows: list[tuple], value, names: dict[str, str]) -> list[tuple[int, tuple]]:
    """(rank, row) best first: value(row) a tuple, larger better; equal values share a rank,
    listed by pseudonym."""
    rows = sorted(rows, key=lambda row: (tuple(-v for v in value(row)), names[row[0]]))
    out, rank, last = [], 0, None
    for n, row in enumerate(rows, 1):
        if value(row) != last:
            rank, last = n, value(row)
        out.append((rank, row))
    return out


def _geomean(xs: list[float]) -> float:
    return float(f"{math.exp(sum(math.log(x) for x in xs) / len(xs)):.3g}")


def overall(records: list[dict], names: dict[str, str]) -> list[tuple[int, tuple]]:
    """(rank, (student, exercises ranked, geometric mean of their ratios over their targets,
    perf points)): a ratio over its target weighs every exercise alike, where the ratios
    themselves span orders of magnitude."""
    per: dict[str, list[tuple[float, float]]] = {}
    for _, _, rows in boards(records):
        for student, _, pts, of_target in rows:
            per.setdefault(student, []).append((of_target, pts))
    rows = [(s, len(v), _geomean([x for x, _ in v]), round(sum(p for _, p in v), 1))
            for s, v in per.items()]
    return _ranked(rows, lambda row: (row[1], row[2]), names)


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def markdown(records: list[dict], names: dict[str, str], level: int = 1) -> str:
    """The leaderboard in Markdown (pseudonyms only)."""
    h = "#" * level
    bs = boards(records)
    lines = [f"{h} Leaderboard", "",
             "Speed of each exercise that passed its tests, as the ratio of the library "
             "baseline's time to the submission's on the grading GPU (higher is faster; 1 is "
             "as fast as the baseline; a host baseline with a calibration counts with its time on "
             "the calibration machine, as the points do), and that ratio over the exercise's "
             "target on that GPU (1: the target met; the targets move with the reference solution "
             "from GPU to GPU, so this compares submissions graded on different GPUs). Boards are "
             "ranked by the ratio over the target. Students are shown by pseudonym.", ""]
    if not bs:
        return "\n".join(lines + ["No exercise was timed.", ""]) + "\n"
    lines += [f"{h}# Overall", "",
              f"Ranked by the number of the {len(bs)} timed exercise(s) passed, then by the "
              "geometric mean of their ratios over their targets.", "",
              "| rank | student | exercises | mean of ratio / target | perf points |", "|---|---|---|---|---|"]
    lines += [f"| {rank} | {md_text(names[s])} | {n} | {_fmt(g)} | {p:g} |"
              for rank, (s, n, g, p) in overall(records, names)]
    lines.append("")
    for i, slug, rows in bs:
        lines += [f"{h}# {md_text(i)} {md_text(slug)}", ""]
        if not rows:
            lines += ["No submission passed its tests with a time.", ""]
            continue
        lines += ["| rank | student | ratio | ratio / target | perf points |", "|---|---|---|---|---|"]
        lines += [f"| {rank} | {md_text(names[s])} | {_fmt(x)} | {_fmt(t)} | {p:g} |"
                  for rank, (s, x, p, t) in _ranked(rows, lambda row: (row[3],), names)]
        lines.append("")
    return "\n".join(lines) + "\n"


def csv_text(records: list[dict], names: dict[str, str]) -> str:
    """board (an exercise `1.1 slug`, or `overall`), rank, pseudonym, ratio (empty for overall),
    ratio_over_target (the geometric mean for overall), perf_points, exercises."""
    out = [("board", "rank", "pseudonym", "ratio", "ratio_over_target", "perf_points", "exercises")]
    out += [("overall", rank, names[s], "", _fmt(g), f"{p:g}", n) for rank, (s, n, g, p) in overall(records, names)]
    for i, slug, rows in boards(records):
        out += [(f"{i} {slug}", rank, names[s], _fmt(x), _fmt(t), f"{p:g}", 1)
                for rank, (s, x, p, t) in _ranked(rows, lambda row: (row[3],), names)]
    return escape.csv_text(out)


def write_mapping(out: Path, names: dict[str, str]) -> None:
    """pseudonyms.csv (0600) in out: names (student -> pseudonym), with the rows an earlier
    leaderboard or similarity report of the folder wrote for other students (the same key gives
    them the same pseudonyms: one map serves both reports)."""
    rows: dict[str, str] = {}
    try:
        text = read_regular(out / MAPPING, 16 << 20).decode("utf-8", "replace")
        for row in list(csv.reader(io.StringIO(text)))[1:]:
            if len(row) == 2 and row[0].startswith("anon-"):
                rows[row[0]] = row[1]   # as written: csv_cell leaves an escaped cell as it is
    except (Untrusted, csv.Error):
        pass
    ours = {escape.csv_cell(s) for s in names}
    rows = {p: cell for p, cell in rows.items() if cell not in ours}   # ours are written anew
    rows.update({n: s for s, n in names.items()})
    write_file(out / MAPPING, escape.csv_text([("pseudonym", "student")] + sorted(rows.items())),
               0o600)


def gradescope_entries(record: dict) -> list[dict]:
    """Gradescope's `leaderboard` entries of one results.json: one per timed exercise that
    passed (name `1.1 slug (speed / target)`, higher first), valued as the class leaderboard
    ranks: the ratio over the target it was scored against on its GPU (_of_target, to 3
    significant digits), so that submissions Gradescope graded on different GPUs compare."""
    out = []
    for e in record["cudalab"]["exercises"]:
        ratio = _ratio(e)
        if ratio is not None:
            out.append({"name": f"{e['id']} {e['slug']} (speed / target)",
                        "value": float(f"{_of_target(e, ratio):.3g}"), "order": "desc"})
    return out


def write(out: Path, records: list[dict], key: bytes) -> dict[str, str] | None:
    """leaderboard.md, leaderboard.csv and pseudonyms.csv (0600) in out when the class was graded
    with --perf (the student -> pseudonym map); else None, and a leaderboard of an earlier run
    in out is removed (it would not match this gradebook)."""
    if not with_perf(records):
        for name in FILES:
            p = out / name
            if p.is_symlink() or p.is_file():
                p.unlink()
        return None
    names = pseudonyms(key, [r["cudalab"]["student"] for r in records])
    for name, text in (("leaderboard.md", markdown(records, names)),
                       ("leaderboard.csv", csv_text(records, names))):
        write_file(out / name, text)
    write_mapping(out, names)
    return names
