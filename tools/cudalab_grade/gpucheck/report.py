"""tools/gpu-check's report: report.json, report.md, logs.tar.gz and results/ under --out,
and the summary table it prints."""
from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

from .classsteps import class_table
from .context import MAX_RESULT_FILES, STEPS, Context, device_line, utc_now
from .portability import portability_table
from .results import fmt_points
from .state import step_ok


def profiles_table(per_profile: dict) -> list[str]:
    """The profiles step's table: profile x (tests, solution points, starter points)."""
    lines = ["| profile | test programs passed | solutions (correctness points) | starter points | result |",
             "| --- | ---: | ---: | ---: | --- |"]
    for name, r in per_profile.items():
        c = r.get("counts") or {}
        tests = f"{c['passed']}/{c['total']}" if c else "—"
        if c and c.get("source") == "grade":
            tests += " (graded)"
        sol, sta = r.get("solutions", {}), r.get("starter", {})
        sol_fig = f"{fmt_points(sol['points'])}/{fmt_points(sol['max_points'])}" if "points" in sol else "error"
        sta_fig = fmt_points(sta["points"]) if "points" in sta else "error"
        lines.append(f"| {name} | {tests} | {sol_fig} | {sta_fig} | {'ok' if r.get('passed') else 'FAILED'} |")
    return lines


def profiles_perf_table(per_profile: dict) -> list[str]:
    """--profile-perf: exercise x profile, the solution's speed ratio to its baseline (95 %
    interval), * where it met the exercise's target; [] when no profile has speed results."""
    names = [n for n, r in per_profile.items() if r.get("perf")]
    if not names:
        return []
    ids = list(dict.fromkeys(i for n in names for i in per_profile[n]["perf"]))
    lines = ["", "Speed ratios of the solutions under each profile (to the exercise's baseline, "
             "95 % interval; * the speed target met):", "",
             "| exercise | " + " | ".join(names) + " |", "| --- |" + " ---: |" * len(names)]
    for i in ids:
        cells = []
        for n in names:
            v = per_profile[n]["perf"].get(i) or {}
            ratio, iv = v.get("ratio"), v.get("ratio_interval")
            if not isinstance(ratio, (int, float)):
                cells.append(str(v.get("status") or "—"))
                continue
            cell = f"{ratio:.3g}"
            if isinstance(iv, list) and len(iv) == 2 and all(isinstance(x, (int, float)) for x in iv):
                cell += f" ({iv[0]:.3g}–{iv[1]:.3g})"
            cells.append(cell + (" *" if (v.get("perf_points") or 0) > 0 else ""))
        slug = next((per_profile[n]["perf"][i].get("slug") for n in names if per_profile[n]["perf"].get(i)), "")
        lines.append(f"| {i} {slug} | " + " | ".join(cells) + " |")
    return lines


def report_json(state: dict, env_info: dict, commit: str, invoked: list[str], finished: str,
                starter_only: str | None = None) -> dict:
    return {
        "tool": "gpu-check",
        "commit": commit,
        "date_utc": finished,
        "device": {"gpus": env_info.get("gpus", []), "gpu_present": env_info.get("gpu_present"),
                   "summary": device_line(env_info), "hostname": env_info.get("hostname")},
        "nvcc": env_info.get("nvcc"),
        "invocation": {"steps": invoked,
                       "passed": all(step_ok(state["steps"].get(s)) for s in invoked)},
        "mode": "starter-only" if starter_only else "full",
        "starter_only": starter_only,
        "steps": state["steps"],
    }


def md_escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def report_markdown(rep: dict, results_dir: Path) -> str:
    # A title of its own (the docs list every committed report under "Measured results")
    steps = ", ".join(rep["invocation"]["steps"]) or "no steps"
    lines = [f"# GPU check at {str(rep['commit'])[:12]} ({steps})", "",
             f"- Device: {rep['device']['summary']}",
             f"- nvcc: {rep['nvcc']}",
             f"- Commit: {rep['commit']}",
             f"- Date: {rep['date_utc']}",
             f"- This invocation: {', '.join(rep['invocation']['steps']) or 'no steps'}",
             *([f"- Mode: starter only ({rep['starter_only']}): grade checks only the untouched starter "
                "(0 points, every exercise a test failure); redteam, partial, mutation, class, sanitize and bench are skipped; "
                "portability compiles the starter only"] if rep.get("starter_only") else []), "",
             "| step | status | seconds | key figure | started | commit |",
             "| --- | --- | ---: | --- | --- | --- |"]
    for step in STEPS:
        r = rep["steps"].get(step)
        if r is None:
            lines.append(f"| {step} | not run | | | | |")
        else:
            lines.append(f"| {step} | {r['status']} | {r['seconds']:.1f} | {md_escape(r['summary'])} | "
                         f"{r.get('started', '')} | {r.get('commit', '')} |")
    lines.append("")
    for step in STEPS:
        r = rep["steps"].get(step)
        if r is None:
            continue
        lines += [f"## {step}: {r['status']}", ""]
        d = r.get("details", {})
        if step == "build":
            for k in ("configure", "build"):
                if k in d:
                    lines.append(f"- {k}: exit {d[k]['rc']}, {d[k]['seconds']} s")
        elif step == "portability" and d.get("archs"):
            tk = d.get("toolkit") or {}
            compiled_with = ", ".join(x for x in (d.get("compiler"), tk.get("nvcc") or d.get("nvcc"),
                                                  tk.get("cudart") and f"CUDA runtime headers {tk['cudart']}",
                                                  tk.get("cccl") and f"CCCL {tk['cccl']}") if x)
            lines.append(f"Every {'starter file' if d.get('starter_only') else 'solution and starter'}, "
                         f"nvcc -c with the build's flags, for each architecture "
                         f"({compiled_with or 'nvcc'}); a warning fails as an error does.")
            if d.get("unsupported_archs"):
                lines.append("Not supported by this compiler, left out: "
                             + ", ".join(f"sm_{a}" for a in d["unsupported_archs"]) + ".")
            lines.append("")
            lines += portability_table(d["archs"])
        elif step == "test" and d.get("counts"):
            c = d["counts"]
            lines.append(f"- tests: {c['total']} total, {c['passed']} passed, {c['failed']} failed, "
                         f"{c['skipped']} skipped (CUDALAB_REQUIRE_GPU=1)")
            if d.get("ctest_summary"):
                lines.append(f"- ctest: {d['ctest_summary']}")
        elif step == "profiles" and d.get("per_profile"):
            lines.append("Each profile: CUDALAB_DEVICE_PROFILE set for the chapter tests, tools/grade "
                         "--solutions --fast and tools/grade --fast (the starter); every launch checked "
                         "against the profile's limits.")
            lines.append("")
            lines += profiles_table(d["per_profile"])
            lines += profiles_perf_table(d["per_profile"])
        elif step == "grade":
            lines += grade_table(d)
        elif step == "class":
            lines += class_table(d)
        elif step in ("loop", "redteam", "partial", "mutation") and d.get("markdown") \
                and Path(d["markdown"]).exists():
            lines += ["#" + ln if ln.startswith("#") else ln
                      for ln in Path(d["markdown"]).read_text().splitlines()]
        elif step == "sanitize":
            if d.get("note"):
                lines.append(f"Sanitizer runs use {d['note']}.")
                lines.append("")
            if d.get("racecheck_shards"):
                lines.append(f"racecheck runs each program in {d['racecheck_shards']} GoogleTest shards at once "
                             "(seconds: the longest shard).")
                lines.append("")
            if d.get("runs"):
                lines += ["| program | tool | result | seconds | summary |", "| --- | --- | --- | ---: | --- |"]
                for x in d["runs"]:
                    tool = x["tool"] + (f" ({x['shards']} shards)" if x.get("shards", 1) > 1 else "")
                    lines.append(f"| {x['program']} | {tool} | {'clean' if x['passed'] else 'exit ' + str(x['rc'])}"
                                 f" | {x['seconds']} | {md_escape('; '.join(x['summaries']) or '—')} |")
        elif step == "bench":
            for x in d.get("programs", []):
                lines.append(f"- {x['program']}: exit {x['rc']}, {x['seconds']} s")
            if d.get("plot_note"):
                lines.append(f"- {d['plot_note']}")
            for rpt in d.get("reports", []):
                md = results_dir / rpt["markdown"]
                if md.exists():
                    lines += ["", *("#" + ln if ln.startswith("#") else ln
                                    for ln in md.read_text().splitlines())]
        if r.get("messages"):
            lines += ["", "Messages:", "", "```"]
            lines += [m for msg in r["messages"] for m in str(msg).splitlines()]
            lines += ["```"]
        lines.append("")
    return "\n".join(lines)


def grade_table(d: dict) -> list[str]:
    sol = {e["id"]: e for e in d.get("solutions", {}).get("exercises", [])}
    sta = {e["id"]: e for e in d.get("starter", {}).get("exercises", [])}
    lines = []
    for label in ("solutions", "starter"):
        e = d.get(label)
        if e and "points" in e:
            want = "100%" if label == "solutions" else "0"
            lines.append(f"- {label}: {fmt_points(e['points'])}/{fmt_points(e['max_points'])} "
                         f"(must be {want}): {'ok' if e.get('passed') else 'FAILED'}")
        elif e:
            lines.append(f"- {label}: no result (exit {e.get('rc')})")
    ids = list(dict.fromkeys([*sol, *sta]))
    if ids:
        lines += ["", "| exercise | solution status | solution points | starter status | starter points | starter reason |",
                  "| --- | --- | ---: | --- | ---: | --- |"]
        for i in ids:
            s, t = sol.get(i, {}), sta.get(i, {})
            pts = lambda e: (f"{fmt_points(e['correctness_points'] + e['perf_points'])}/{fmt_points(e['max_points'])}"
                             if e else "")
            lines.append(f"| {i} {s.get('slug') or t.get('slug') or ''} | {s.get('status', '')} | {pts(s)} | "
                         f"{t.get('status', '')} | {pts(t)} | {md_escape(t.get('reason', ''))[:120]} |")
    return lines


def write_outputs(out: Path, ctx: Context, state: dict, env_info: dict, invoked: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rep = report_json(state, env_info, ctx.commit, invoked, utc_now(), ctx.starter_only)
    results_src = ctx.work / "results"
    results_dst = out / "results"
    bench = state["steps"].get("bench", {})
    wanted = []
    for r in bench.get("details", {}).get("reports", []):
        wanted += [r["markdown"], r["json"]] + ([r["png"]] if r.get("png") else [])
    wanted = [w for w in wanted if (results_src / w).exists()][:MAX_RESULT_FILES]
    if results_dst.exists():
        for f in results_dst.iterdir():
            if f.is_file() and f.name not in wanted:
                f.unlink()
    if wanted:
        results_dst.mkdir(exist_ok=True)
        for w in wanted:
            shutil.copy(results_src / w, results_dst / w)
    rep["results"] = [f"results/{w}" for w in wanted]
    (out / "report.json").write_text(json.dumps(rep, indent=2, ensure_ascii=False) + "\n")
    (out / "report.md").write_text(report_markdown(rep, results_src))
    tmp = out / "logs.tar.gz.tmp"
    with tarfile.open(tmp, "w:gz") as tar:
        for p in (ctx.logs, ctx.work / "state.json", results_src):
            if p.exists():
                tar.add(p, arcname=f"gpu-check/{p.relative_to(ctx.work)}")
        tar.add(out / "report.md", arcname="gpu-check/report.md")
    tmp.replace(out / "logs.tar.gz")


def summary_table(state: dict, invoked: list[str]) -> str:
    rows = [("step", "status", "seconds", "key figure")]
    for step in STEPS:
        r = state["steps"].get(step)
        if r is None:
            rows.append((step, "not run", "", ""))
        else:
            when = "" if step in invoked else " (earlier)"
            rows.append((step, r["status"] + when, f"{r['seconds']:.1f}", r["summary"]))
    widths = [max(len(str(row[i])) for row in rows) for i in range(3)]
    return "\n".join(f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:>{widths[2]}}  {row[3]}"
                     for row in rows)
