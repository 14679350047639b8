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
"""
from __future__ import annotations

import csv
import io
import json
import shutil
import statistics
from collections import Counter
from pathlib import Path

from .escape import csv_cell, md_code, md_text

STATUS_WORDS = {
    "passed": "passed", "failed": "tests failed", "crashed": "crashed", "timeout": "timed out",
    "compile_error": "did not compile", "forbidden": "forbidden API", "sanitizer": "sanitizer",
    "memory": "memory limit", "no_gpu": "no GPU", "not_submitted": "not submitted",
    "rejected": "rejected", "grader_error": "grader error",
}


def load_records(folders: list[Path]) -> tuple[list[dict], list[str]]:
    """Every students/*/results.json below the folders: (records by student id, warnings)."""
    found: dict[str, dict] = {}
    where: dict[str, Path] = {}
    warnings: list[str] = []
    for folder in folders:
        for path in sorted(folder.rglob("students/*/results.json")):
            try:
                data = json.loads(path.read_text())
                sid = str(data["cudalab"]["student"])
            except (OSError, ValueError, KeyError, TypeError) as e:
                warnings.append(f"{path}: unreadable ({type(e).__name__}: {e}); skipped")
                continue
            if sid in found:
                warnings.append(f"student {sid}: {path} replaces {where[sid]}")
            data["cudalab"]["_dir"] = str(path.parent)
            found[sid] = data
            where[sid] = path
    return [found[k] for k in sorted(found)], warnings


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
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([csv_cell(c) for c in ["student"] + [f"{i} {s}" for i, s, _ in cols]
                + ["total", "max", "complete", "problems"]])
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
        done = sum(1 for e in c["exercises"] if e["status"] == "passed")
        if c.get("rejected"):
            problems.insert(0, f"rejected: {c['rejected']}")
        row += [f"{float(r['score']):.1f}", f"{best:g}", str(done), "; ".join(problems)]
        w.writerow([csv_cell(c) for c in row])
    return buf.getvalue()


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
                seeds: list[int] | None = None) -> None:
    """gradebook.csv, summary.md and (with matplotlib) summary.png in out."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "gradebook.csv").write_text(gradebook(records))
    png = "summary.png" if records and plot(records, out / "summary.png") else None
    (out / "summary.md").write_text(summary(records, png=png, warnings=warnings, seeds=seeds))


def merge(folders: list[Path], out: Path) -> tuple[int, list[str]]:
    """Combine per-task output folders into one: students/ copied, gradebook and summary remade."""
    records, warnings = load_records(folders)
    for r in records:
        c = r["cudalab"]
        src = Path(c.pop("_dir"))
        dst = out / "students" / src.name
        if src.resolve() != dst.resolve():
            if dst.exists():
                shutil.rmtree(dst)
            shutil.copytree(src, dst)
    write_class(out, records, warnings)
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
