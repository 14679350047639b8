"""The class's outputs: gradebook (CSV), per-student reports, class summary, merging.

Every output is made from the students' `results.json` files (Gradescope's
schema, with cudalab's own fields under `cudalab`), so a class graded in one
run and a class graded by many Slurm tasks then merged give the same files.

Layout of an output folder:

    gradebook.csv                one row per student, one column per exercise, a total
    summary.md (summary.png)     the score distribution per exercise
    students/<id>/results.json   Gradescope results.json
    students/<id>/report.md      the student's report
    students/<id>/build.log      the compiler's output for the student's files
    students/<id>/grader.sig     the grader's HMAC of the three (signing.py)
    grader-secret.json           the folder's key (mode 0600): the instructor's alone
    gradebook-canvas.csv         the gradebook as Canvas imports it (lms.py)
    gradebook-moodle.csv         the gradebook as Moodle imports it (lms.py)
    leaderboard.md (.csv)        with --perf: the speed ranking by pseudonym (leaderboard.py)
    pseudonyms.csv               with --perf or --similarity: pseudonym -> student id (mode 0600):
                                 the instructor's
    similarity.md (.html)        with --similarity (instead of grading): the pairs of submissions
                                 that look alike, by pseudonym (similarity.py)

`--merge` reads only what the grader wrote: students/<id>/results.json
files (and their report.md and build.log) under a run folder's key, signed,
read as regular files without following links, bounded in size and checked
against the manifests (validate); anything else is a warning, and skipped.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import statistics
from collections import Counter
from pathlib import Path

from . import signing
from .submissions import safe_name
from .escape import csv_text, md_code, md_text, one_line
from .grading import SANITIZER_TOOLS

STATUS_WORDS = {
    "passed": "passed", "failed": "tests failed", "crashed": "crashed", "timeout": "timed out",
    "compile_error": "did not compile", "forbidden": "forbidden API", "sanitizer": "sanitizer",
    "memory": "memory limit", "no_gpu": "no GPU", "not_submitted": "not submitted",
    "rejected": "rejected", "grader_error": "grader error",
}


MAX_RESULTS = 8 << 20   # bytes of one results.json read by --merge
MAX_REPORT = 8 << 20    # of one report.md
MAX_LOG = 16 << 20      # of one build.log


def _runs(folder: Path) -> list[Path]:
    """The output folders of class runs in folder: folder itself, or its subfolders (OUT/tasks)."""
    def real_dir(p: Path) -> bool:
        return not p.is_symlink() and p.is_dir()
    if real_dir(folder / "students"):
        return [folder]
    return [c for c in sorted(folder.iterdir()) if real_dir(c) and real_dir(c / "students")]


def _number(v, lo: float, hi: float) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) \
        and lo - 1e-6 <= v <= hi + 1e-6


def _text(v, limit: int = 1 << 16) -> bool:
    return isinstance(v, str) and len(v) <= limit


# speed ratios of an exercise (grading.Result): a positive number, or null when not timed
_RATIOS = ("ratio", "ratio_raw")


def validate(data, folder_name: str, known: dict) -> str | None:
    """Why a results.json is not one the grader writes (None when it is): its types, its ranges
    (points within 0 and the manifest's maximum), its statuses and exercise ids."""
    if not isinstance(data, dict) or not isinstance(data.get("cudalab"), dict):
        return "not a cudalab results.json"
    c = data["cudalab"]
    if not _text(c.get("student"), 4096):
        return "no student id"
    if safe_name(c["student"]) != folder_name:
        return f"its student id does not match its folder ({folder_name})"
    perf = c.get("perf")
    if not isinstance(perf, bool):
        return "cudalab.perf is not true or false"
    for k in ("seed",):
        if c.get(k) is not None and (not isinstance(c[k], int) or isinstance(c[k], bool)):
            return f"cudalab.{k} is not a number"
    for k in ("hidden_tests", "seed_hidden"):
        if k in c and not isinstance(c[k], bool):
            return f"cudalab.{k} is not true or false"
    if not isinstance(c.get("sanitize", []), list) or \
            any(t not in SANITIZER_TOOLS for t in c.get("sanitize", [])):
        return "cudalab.sanitize names an unknown tool"
    if not isinstance(c.get("hidden_suites", []), list) or \
            any(i not in known for i in c.get("hidden_suites", [])):
        return "cudalab.hidden_suites names an unknown exercise"
    if c.get("rejected") is not None and not _text(c["rejected"]):
        return "cudalab.rejected is not a text"
    ws = c.get("warnings", [])
    if not isinstance(ws, list) or len(ws) > 100 or not all(_text(w) for w in ws):
        return "cudalab.warnings is not a list of texts"
    files = c.get("files", {})
    if not isinstance(files, dict) or not all(
            isinstance(v, list) and len(v) <= 10000 and all(_text(x, 4096) for x in v)
            for v in files.values()):
        return "cudalab.files is not lists of texts"
    exercises = c.get("exercises")
    if not isinstance(exercises, list) or not exercises or len(exercises) > len(known):
        return "cudalab.exercises is not a list of the course's exercises"
    seen: set[str] = set()
    total = 0.0
    for e in exercises:
        if not isinstance(e, dict) or e.get("id") not in known or e["id"] in seen:
            return f"unknown or repeated exercise {str(e.get('id') if isinstance(e, dict) else e)[:40]!r}"
        seen.add(e["id"])
        ex = known[e["id"]]
        best = float(ex.points + (ex.perf.points if perf and ex.perf else 0))
        perf_best = float(ex.perf.points) if perf and ex.perf else 0.0
        if e.get("slug") != ex.slug:
            return f"exercise {ex.id}: slug {str(e.get('slug'))[:40]!r} is not {ex.slug}"
        if e.get("status") not in STATUS_WORDS:
            return f"exercise {ex.id}: unknown status {str(e.get('status'))[:40]!r}"
        busy = e.get("perf_verdict") == "gpu_busy"  # its speed points neither earned nor counted
        if busy and (not perf_best or e.get("perf_points") != 0):
            return f"exercise {ex.id}: speed points for a speed not measured fairly"
        if not _number(e.get("max_points"), best - perf_best * busy, best - perf_best * busy):
            return f"exercise {ex.id}: max_points is not {best - perf_best * busy:g}"
        if not _number(e.get("correctness_points"), 0, ex.points) or \
                not _number(e.get("perf_points"), 0, perf_best):
            return f"exercise {ex.id}: points out of range"
        if e["status"] != "passed" and e["correctness_points"] > 0:
            return f"exercise {ex.id}: points for a status other than passed"
        if not _text(e.get("reason")):
            return f"exercise {ex.id}: reason is not a text"
        if e.get("perf_verdict") == "implausible" and e["perf_points"] > 0:
            return f"exercise {ex.id}: speed points for a speed refused as implausible"
        for k in _RATIOS:
            if e.get(k) is not None and not _number(e[k], 0, 1e9):
                return f"exercise {ex.id}: {k} is not a speed ratio"
        h = e.get("hidden_tests")
        if h is not None and (not isinstance(h, int) or isinstance(h, bool) or h < 0):
            return f"exercise {ex.id}: hidden_tests is not a count"
        if "hidden_suite" in e and not isinstance(e["hidden_suite"], bool):
            return f"exercise {ex.id}: hidden_suite is not true or false"
        total += e["correctness_points"] + e["perf_points"]
    if not _number(data.get("score"), total - 0.05 * len(exercises) - 0.05,
                   total + 0.05 * len(exercises) + 0.05):
        return "score is not the sum of the exercises' points"
    tests = data.get("tests", [])
    if not isinstance(tests, list) or len(tests) > len(known) or not all(
            isinstance(t, dict) and _text(t.get("output", ""), 1 << 22)
            and _text(t.get("name", ""), 4096) for t in tests):
        return "tests is not Gradescope's list of tests"
    return None


def load_records(folders: list[Path], known: dict) -> tuple[list[dict], list[str], dict]:
    """Every students/<id>/results.json the grader wrote in the run folders found in folders.

    (records by student id, warnings, what each record's folder holds: name -> bytes).
    Only that layout is read, without following links, each file regular and bounded; a
    record must carry the grader's signature (the key of its run folder) and be valid
    (validate); anything else is a warning, and skipped.
    """
    found: dict[str, dict] = {}
    where: dict[str, Path] = {}
    contents: dict[str, dict[str, bytes]] = {}
    warnings: list[str] = []
    seeds: set[int] = set()
    for folder in folders:
        runs = _runs(folder)
        if not runs:
            warnings.append(f"{folder}: no students/ folder in it nor in its subfolders")
        for run in runs:
            try:
                secret = signing.load(run)
            except signing.Untrusted as e:
                warnings.append(f"{run}: no usable grader key ({e}): not written by tools/grade "
                                "(or by a version before signatures); its students are skipped")
                continue
            for sdir in sorted((run / "students").iterdir()):
                got = _load_one(sdir, secret.key, known)
                if isinstance(got, str):
                    warnings.append(f"{sdir}: {got}; skipped")
                    continue
                data, files = got
                # one record per students/<name> folder: two ids with the same folder name
                # ('a b' and 'a_b', from two runs) would share one folder of the merge
                name = sdir.name
                if name in found:
                    warnings.append(f"student {_said(data)}: {sdir} replaces {where[name]} "
                                    f"(student {_said(found[name])}): the later folder wins")
                found[name], where[name] = data, sdir
                contents[data["cudalab"]["student"]] = files
            seeds.update(secret.seeds)
    records = sorted(found.values(), key=lambda r: r["cudalab"]["student"])
    return records, warnings, {"files": contents, "seeds": sorted(seeds)}


def _said(record: dict) -> str:
    """A record's student id for a warning: quoted, on one line."""
    return repr(one_line(record["cudalab"]["student"]))


def _no_constant(name: str):
    """json.loads's parse_constant: NaN, Infinity and -Infinity are not JSON, and no number
    the grader writes."""
    raise ValueError(f"{name} is not a number of JSON")


def _load_one(sdir: Path, key: bytes, known: dict):
    """(record, files) of one student's folder, or why it is refused."""
    if sdir.is_symlink() or not sdir.is_dir():
        return "not a folder (links are not followed)"
    try:
        files = {"results.json": signing.read_regular(sdir / "results.json", MAX_RESULTS),
                 "report.md": signing.read_regular(sdir / "report.md", MAX_REPORT)}
        try:
            files["build.log"] = signing.read_regular(sdir / "build.log", MAX_LOG)
        except signing.Untrusted:
            pass
        signing.verify(key, sdir, files)
    except signing.Untrusted as e:
        return str(e)
    try:
        data = json.loads(files["results.json"], parse_constant=_no_constant)
    except ValueError as e:
        return f"results.json is not JSON ({e})"
    why = validate(data, sdir.name, known)
    if why:
        return f"results.json refused: {why}"
    return data, files


def exercise_columns(records: list[dict]) -> list[tuple[str, str, float]]:
    """(id, slug, max points) of every exercise met, in course order."""
    cols: dict[str, tuple[str, str, float]] = {}
    for r in records:
        for e in r["cudalab"]["exercises"]:
            if e["id"] not in cols or e["max_points"] > cols[e["id"]][2]:
                cols[e["id"]] = (e["id"], e["slug"], float(e["max_points"]))

    def key(i: str) -> tuple:
        return tuple(int(p) if p.isdigit() else p for p in i.split("."))
    return [cols[k] for k in sorted(cols, key=key)]


def _points(e: dict) -> float:
    return float(e.get("correctness_points", 0)) + float(e.get("perf_points", 0))


def gradebook(records: list[dict]) -> str:
    cols = exercise_columns(records)
    out = [["student"] + [f"{i} {s}" for i, s, _ in cols] + ["total", "max", "complete", "problems"]]
    best = sum(m for _, _, m in cols)
    for r in records:
        c = r["cudalab"]
        by_id = {e["id"]: e for e in c["exercises"]}
        row = [c["student"]]
        problems = []
        for i, _, _ in cols:
            e = by_id.get(i)
            if e is None:
                row.append("")
                continue
            row.append(f"{_points(e):.1f}")
            if e["status"] != "passed":
                problems.append(f"{i}: {STATUS_WORDS.get(e['status'], e['status'])}")
            elif e.get("perf_verdict") == "gpu_busy":
                problems.append(f"{i}: speed not measured (GPU busy), its points not counted: grade again")
        done = sum(1 for e in c["exercises"] if e["status"] == "passed")
        if c.get("rejected"):
            problems.insert(0, f"rejected: {c['rejected']}")
        row += [f"{float(r['score']):.1f}", f"{best:g}", str(done), "; ".join(problems)]
        out.append(row)
    return csv_text(out)


def _histogram(values: list[float], top: float, width: int = 40) -> list[str]:
    """Text bars: one per distinct value when few, else ten bins up to `top`."""
    if not values:
        return ["(no values)"]
    distinct = sorted(set(round(v, 1) for v in values))
    if len(distinct) <= 10:
        bins = [(v, v, f"{v:g}") for v in distinct]
    else:
        step = (top or max(values) or 1) / 10
        bins = [(k * step, (k + 1) * step, f"{k * step:.3g}-{(k + 1) * step:.3g}") for k in range(10)]
    counts = []
    for lo, hi, label in bins:
        if lo == hi:
            n = sum(1 for v in values if round(v, 1) == lo)
        else:
            last = hi >= (top or max(values)) - 1e-9
            n = sum(1 for v in values if lo <= v < hi or (last and v == hi))
        counts.append((label, n))
    most = max(n for _, n in counts) or 1
    lw = max(len(label) for label, _ in counts)
    return [f"{label:>{lw}} | {'#' * max(1 if n else 0, round(width * n / most))} {n}"
            for label, n in counts]


def _seed_words(records: list[dict], seeds: list[int]) -> str:
    """The seeds the class ran with, for the instructor."""
    shown = {r["cudalab"].get("seed") for r in records} - {None}
    every = sorted(set(seeds) | shown)
    hidden = any(r["cudalab"].get("seed_hidden") for r in records)
    if not every:
        return "seed not known (hidden from the students)" if hidden else "tests' own seeds"
    words = f"seed {every[0]}" if len(every) == 1 else f"seeds {', '.join(map(str, every))}"
    return words + (" (hidden from the students' reports)" if hidden else "")


def _hidden_words(records: list[dict], cols: list[tuple[str, str, float]]) -> str:
    """What the summary says of hidden tests: never "hidden tests" when none ran."""
    if not any(r["cudalab"].get("hidden_tests") for r in records):
        return "no hidden tests"
    suites = {i for r in records for i in r["cudalab"].get("hidden_suites") or []}
    ran = {e["id"] for r in records for e in r["cudalab"]["exercises"] if e.get("hidden_tests")}
    had = f"{len(suites)} of {len(cols)} exercise(s) had a hidden suite"
    if not ran:
        return f"no hidden tests ran ({had})"
    return f"hidden tests ran for {len(ran)} of {len(cols)} exercise(s) ({had})"


def _hidden_cell(es: list[dict]) -> str:
    """An exercise's hidden tests in the summary: how many ran, in how many submissions."""
    if not any(e.get("hidden_suite") for e in es):
        return "no suite"
    runs = [e["hidden_tests"] for e in es if e.get("hidden_tests") is not None]
    if not runs:
        return "never ran"
    return f"{max(runs)} tests, ran for {len(runs)} of {len(es)}"


def summary(records: list[dict], title: str = "Class summary", png: str | None = None,
            warnings: list[str] | None = None, seeds: list[int] | None = None) -> str:
    """The class summary (for the instructor: seeds hidden from the students are shown here)."""
    cols = exercise_columns(records)
    best = sum(m for _, _, m in cols)
    totals = [float(r["score"]) for r in records]
    lines = [f"# {title}", ""]
    if records:
        meta = records[0]["cudalab"]
        opts = [_seed_words(records, seeds or []),
                _hidden_words(records, cols),
                f"sanitizers: {', '.join(meta.get('sanitize') or []) or 'none'}",
                "with performance points" if meta.get("perf") else "correctness only"]
        lines += [f"{len(records)} submissions, {len(cols)} exercises, {best:g} points at most "
                  f"({'; '.join(opts)}).", ""]
    else:
        lines += ["No submissions.", ""]
        return "\n".join(lines) + "\n"
    lines += ["## Totals", "",
              f"mean {statistics.mean(totals):.1f}, median {statistics.median(totals):.1f}, "
              f"min {min(totals):.1f}, max {max(totals):.1f} (of {best:g})", "", "```"]
    lines += _histogram(totals, best) + ["```", ""]
    if png:
        lines += [f"![score distribution]({png})", ""]
    statuses = sorted({e["status"] for r in records for e in r["cudalab"]["exercises"]},
                      key=lambda s: list(STATUS_WORDS).index(s) if s in STATUS_WORDS else 99)
    hidden = any(r["cudalab"].get("hidden_tests") for r in records)
    lines += ["## Per exercise", "",
              "| exercise | max | mean | " + " | ".join(STATUS_WORDS.get(s, s) for s in statuses)
              + (" | hidden tests" if hidden else "") + " |",
              "|---|---|---|" + "---|" * (len(statuses) + hidden)]
    per: dict[str, list[dict]] = {i: [] for i, _, _ in cols}
    for r in records:
        for e in r["cudalab"]["exercises"]:
            per.setdefault(e["id"], []).append(e)
    for i, slug, top in cols:
        es = per[i]
        count = Counter(e["status"] for e in es)
        mean = statistics.mean(_points(e) for e in es) if es else 0.0
        lines.append(f"| {md_text(i)} {md_text(slug)} | {top:g} | {mean:.1f} | "
                     + " | ".join(str(count.get(s, 0)) for s in statuses)
                     + (f" | {_hidden_cell(es)}" if hidden else "") + " |")
    lines.append("")
    for i, slug, top in cols:
        lines += [f"### {md_text(i)} {md_text(slug)}", "", "```"]
        lines += _histogram([_points(e) for e in per[i]], top) + ["```", ""]
    attention = []
    no_gpu = [r for r in records if any(e["status"] == "no_gpu" for e in r["cudalab"]["exercises"])]
    if no_gpu:
        attention.append(f"- {len(no_gpu)} submission(s) not graded for lack of a CUDA device "
                         "on the grading machine: grade them again on a GPU machine")
    for i, slug, _ in cols:
        if any(e.get("hidden_tests") == 0 for e in per[i]):
            attention.append(f"- {md_text(i)} {md_text(slug)}: its hidden suite ran no test (do "
                             "its suite names match the exercise's test_filter?)")
    for r in records:
        c = r["cudalab"]
        if c.get("rejected"):
            attention.append(f"- {md_text(c['student'])}: submission rejected: "
                             f"{md_text(c['rejected'])}")
        for e in c["exercises"]:
            if e["status"] == "grader_error":
                attention.append(f"- {md_text(c['student'])} {md_text(e['id'])}: "
                                 f"{md_text(e['reason'])}")
            if isinstance(e.get("alone"), str) and e["alone"]:  # a neighbour on the GPU failed its first run
                attention.append(f"- {md_text(c['student'])} {md_text(e['id'])}: "
                                 f"{md_text(e['alone'])}")
            if e.get("perf_verdict") == "implausible":
                attention.append(f"- {md_text(c['student'])} {md_text(e['id'])}: speed refused as "
                                 "implausible (no speed points): read its report")
            gpu = e.get("gpu") if isinstance(e.get("gpu"), dict) else {}
            if e.get("perf_verdict") == "gpu_busy":
                attention.append(f"- {md_text(c['student'])} {md_text(e['id'])}: speed not measured "
                                 "fairly (another process on the GPU in both runs): its speed points "
                                 "are neither earned nor counted; grade its speed again alone")
            elif isinstance(gpu.get("other_processes"), list) and gpu["other_processes"]:
                attention.append(f"- {md_text(c['student'])} {md_text(e['id'])}: another process "
                                 "used the GPU during the benchmark: grade its speed again alone")
        for n in c.get("warnings", []):
            if "no CUDA device" not in n:
                attention.append(f"- {md_text(c['student'])}: {md_text(n)}")
    if attention or warnings:
        lines += (["## Needs a look", ""] + attention + [f"- {md_text(w)}" for w in warnings or []]
                  + [""])
    return "\n".join(lines) + "\n"


def plot(records: list[dict], path: Path) -> bool:
    """summary.png with one histogram per exercise and one of the totals; False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:  # noqa: BLE001 - any failure to import means: no plot
        return False
    cols = exercise_columns(records)
    panels = [(f"{i} {s}", [_points(e) for r in records for e in r["cudalab"]["exercises"]
                            if e["id"] == i], m) for i, s, m in cols]
    panels.append(("total", [float(r["score"]) for r in records], sum(m for _, _, m in cols)))
    n = len(panels)
    ncol = min(3, n)
    nrow = (n + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(4 * ncol, 3 * nrow), squeeze=False)
    for ax, (name, values, top) in zip(axes.flat, panels):
        ax.hist(values, bins=min(20, max(1, int(top) + 1)), range=(0, max(top, 1)))
        ax.set_title(name)
        ax.set_xlabel("points")
        ax.set_ylabel("students")
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def write_class(out: Path, records: list[dict], warnings: list[str] | None = None,
                seeds: list[int] | None = None, roster=None) -> list[str]:
    """gradebook.csv, summary.md and (with matplotlib) summary.png in out; the LMS gradebooks
    (lms.py, with the roster: an lms.Roster or None) and, for a class graded with --perf, the
    leaderboard (leaderboard.py). The warnings of the LMS export."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "gradebook.csv").write_text(gradebook(records))
    png = "summary.png" if records and plot(records, out / "summary.png") else None
    text = summary(records, png=png, warnings=warnings, seeds=seeds)
    text += write_exports(out, records)
    (out / "summary.md").write_text(text)
    return write_lms(out, records, roster)


def write_exports(out: Path, records: list[dict]) -> str:
    """The leaderboard (leaderboard.md, .csv, pseudonyms.csv) of a class graded with --perf;
    what summary.md says of it ("" without --perf)."""
    from . import leaderboard
    key = signing.load_or_create(out).key if leaderboard.with_perf(records) else b""
    names = leaderboard.write(out, records, key)
    if names is None:
        return ""
    return ("\n" + leaderboard.markdown(records, names, level=2).replace(
        "## Leaderboard\n", "## Leaderboard\n\nleaderboard.md and leaderboard.csv (pseudonyms; "
        "pseudonyms.csv, yours alone, says who is who):\n", 1))


def write_lms(out: Path, records: list[dict], roster=None) -> list[str]:
    """gradebook-canvas.csv and gradebook-moodle.csv in out (lms.py); the warnings."""
    from . import lms
    return lms.write(out, records, roster)


def merge(folders: list[Path], out: Path, exercises: list, roster=None) -> tuple[int, list[str]]:
    """Combine class runs' output folders into one: students' files copied (only those the
    grader wrote and signed), signed again with out's key, gradebook and summary remade (the
    LMS gradebooks with roster, an lms.Roster or None, and the leaderboard too)."""
    known = {e.id: e for e in exercises}
    records, warnings, got = load_records(folders, known)
    secret = signing.load_or_create(out)
    for r in records:
        sid = r["cudalab"]["student"]
        dst = out / "students" / safe_name(sid)
        files = got["files"][sid]
        if dst.is_symlink():
            dst.unlink()
        elif dst.exists():
            shutil.rmtree(dst)
        dst.mkdir(parents=True)
        for name, data in files.items():
            fd = os.open(dst / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                         | getattr(os, "O_NOFOLLOW", 0), 0o644)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        signing.sign(secret.key, dst, files)
    for s in got["seeds"]:
        if s not in secret.seeds:
            signing.load_or_create(out, s)
    warnings += write_class(out, records, warnings, seeds=got["seeds"], roster=roster)
    return len(records), warnings


def student_markdown(student: str, board_md: str, total: float, best: float,
                     files: dict, notes: list[str]) -> str:
    lines = [f"# Grade report: {md_text(student)}", "", f"**Total: {total:.1f} / {best:g}**", "", board_md, "",
             "## Files", ""]
    for label, key in (("graded", "submitted"), ("not submitted (the starter's file, 0 points)",
                                                 "not_submitted"),
                       ("refused", "refused"), ("ignored (not an exercise file)", "ignored")):
        items = files.get(key) or []
        if items:
            lines.append(f"{label}:")
            lines += [f"- {md_code(x)}" for x in items]
            lines.append("")
    if notes:
        lines += ["## Notes", ""] + [f"- {md_text(n)}" for n in notes] + [""]
    return "\n".join(lines) + "\n"
