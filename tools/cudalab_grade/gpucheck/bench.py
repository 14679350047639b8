"""tools/gpu-check's bench step: every solution's benchmark program, one at a time, then
tools/bench-report's tables (results/<chapter>.md/.json/.png)."""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

from .context import MAX_RESULT_FILES, NO_DEVICE, Context, Interrupted, skip_starter_only, tail


def step_bench(ctx: Context, rec: dict, progress, env_info: dict) -> None:
    if skip_starter_only(ctx, rec, "the benchmarks time the *_bench_solution programs; "
                         "the starter's times would mean nothing"):
        return
    logs = ctx.step_logs("bench")
    results_dir = ctx.work / "results"
    if results_dir.exists():
        shutil.rmtree(results_dir)
    programs = sorted(p for p in (ctx.build_dir / "bin").glob("*_bench_solution")
                      if re.search(ctx.bench_programs, p.name)
                      and ctx.in_scope(p.name.removesuffix("_bench_solution")))
    if ctx.chapters:
        rec["details"]["chapters"] = ctx.chapters
    if not programs:
        rec["messages"].append(f"no *_bench_solution programs in {ctx.build_dir / 'bin'}: run the build step")
    if not env_info.get("gpu_present"):
        rec["messages"].append(f"{NO_DEVICE}: the benchmarks need a GPU")
    if not programs or not env_info.get("gpu_present"):
        rec["summary"] = "not run: " + ", ".join(
            why for why, bad in ((NO_DEVICE, not env_info.get("gpu_present")), ("not built", not programs)) if bad)
        return
    env = dict(ctx.env, CUDALAB_COMMIT=ctx.commit)
    runs = rec["details"]["programs"] = []
    chapters = ctx.slug_chapter
    groups: dict[str, list[Path]] = {}
    try:
        for prog in programs:
            out_json = logs / f"{prog.name}.json"
            argv = [str(prog), "--benchmark_format=json", f"--benchmark_out={out_json}",
                    f"--benchmark_repetitions={ctx.bench_repetitions}", "--benchmark_report_aggregates_only=true",
                    # A bare number of seconds: Google Benchmark 1.7 reads it, 1.8 too (with a note).
                    f"--benchmark_min_time={ctx.bench_min_time:g}"]
            rc, out, secs = ctx.run(argv, logs / f"{prog.name}.log", env=env)
            runs.append({"program": prog.name, "rc": rc, "seconds": round(secs, 1)})
            if rc != 0 or not out_json.exists():
                rec["messages"].append(f"{prog.name}: exit {rc}: {tail(out, 5)}")
            else:
                slug = prog.name.removesuffix("_bench_solution")
                groups.setdefault(chapters.get(slug, "other"), []).append(out_json)
            progress()
    except Interrupted:
        # Stopped from outside (a time limit): the programs that finished still make their tables.
        done = sum(len(fs) for fs in groups.values())
        rec["details"]["interrupted_after"] = f"{done} of {len(programs)} programs"
        bench_reports(ctx, rec, groups, logs, results_dir)
        rec["summary"] = f"interrupted after {done} of {len(programs)} programs; their tables are in the report"
        raise
    bench_reports(ctx, rec, groups, logs, results_dir)
    reports = rec["details"]["reports"]
    checked = sum((r["targets"] or {}).get("checked", 0) for r in reports)
    met = sum((r["targets"] or {}).get("met", 0) for r in reports)
    rec["summary"] = f"{len(runs)} programs, targets met {met}/{checked}" + ctx.scope_note()
    ok = (all(r["rc"] == 0 for r in runs) and reports and all(r["rows"] for r in reports)
          and not any(r["errors"] for r in reports) and met == checked)
    rec["status"] = "passed" if ok else "failed"


def bench_reports(ctx: Context, rec: dict, groups: dict[str, list[Path]], logs: Path, results_dir: Path) -> None:
    """tools/bench-report over the benchmark JSON files, one report per chapter."""
    reports = rec["details"]["reports"] = []
    # One report per chapter while that keeps DIR within its file budget, else one for all.
    if len(groups) * 3 > MAX_RESULT_FILES:
        groups = {"benchmarks": [f for fs in groups.values() for f in fs]}
    tool = ctx.root / "tools" / "bench-report"
    for name, files in groups.items():
        md, js, png = (results_dir / f"{name}.{ext}" for ext in ("md", "json", "png"))
        argv = [sys.executable, str(tool), *map(str, files), "--markdown", str(md), "--json", str(js),
                "--plot", str(png), "--title", f"Benchmarks: {name} ({str(ctx.commit)[:12]})"]
        rc, out, _ = ctx.run(argv, logs / f"bench-report-{name}.log")
        if rc != 0 or not js.exists():
            rec["messages"].append(f"bench-report {name}: exit {rc}: {tail(out, 5)}")
            continue
        data = json.loads(js.read_text())
        reports.append({"name": name, "markdown": md.name, "json": js.name,
                        "png": png.name if png.exists() else None, "targets": data.get("targets"),
                        "errors": data.get("errors", []),
                        "rows": sum(len(ch["rows"]) for ch in data.get("chapters", []))})
        if "matplotlib" in out:
            rec["details"]["plot_note"] = "matplotlib is not installed: no plot"
        for e in data.get("errors", []):
            rec["messages"].append(f"{Path(e['file']).name}: {e['name']} did not run: {e['message']}")
        for miss in (data.get("targets") or {}).get("missed", []):
            rec["messages"].append(f"{name}: performance target missed by {miss}")
