"""tools/gpu-check's sanitize step: compute-sanitizer memcheck and racecheck over the solutions'
test programs, K at once, racecheck in GoogleTest shards."""
from __future__ import annotations

import json
import re
from pathlib import Path

from .. import proc
from ..grading import SANITIZER_ERROR_EXIT, SANITIZER_MAX_N  # the grader's exit code and size cap
from .context import NO_DEVICE, Context, skip_starter_only, tail
from .results import sanitizer_summaries

# memcheck runs on sizes up to the grader's cap (tools/grade --sanitize). racecheck
# tracks every shared-memory access of every block and is far slower
# than memcheck on shared-memory kernels: on the H100 the sorting tests took
# 189 s at 4194304, and 2.1's (odd-even transposition, n / 2 barriers per
# 1024-key segment) ran past 300 s at 1048576. Its hazards are within a block,
# so a few hundred blocks find what a few thousand would, and every tile
# boundary the tests check is far below the cap.
SANITIZER_TOOL_MAX_N = {"memcheck": int(SANITIZER_MAX_N), "racecheck": 262144}
SANITIZER_TOOLS = ("memcheck", "racecheck")


def step_sanitize(ctx: Context, rec: dict, progress, env_info: dict) -> None:
    if skip_starter_only(ctx, rec, "the sanitizers run the *_test_solution programs; on the "
                         "unfinished starter they would find nothing useful"):
        return
    logs = ctx.step_logs("sanitize")
    caps = ", ".join(f"{t} {SANITIZER_TOOL_MAX_N[t]}" for t in SANITIZER_TOOLS)
    rec["details"]["note"] = (f"sizes capped by CUDALAB_MAX_N ({caps}): compute-sanitizer "
                              "slows kernels about a hundredfold")
    programs = sorted(p for p in (ctx.build_dir / "bin").glob("*_test_solution")
                      if re.search(ctx.sanitize_programs, p.name)
                      and ctx.in_scope(p.name.removesuffix("_test_solution")))
    if ctx.chapters:
        rec["details"]["chapters"] = ctx.chapters
    if ctx.sanitize_programs:
        rec["details"]["programs_matching"] = ctx.sanitize_programs
    sanitizer = ctx.which("compute-sanitizer")
    if not programs:
        rec["messages"].append(f"no *_test_solution programs in {ctx.build_dir / 'bin'}: run the build step")
    if not sanitizer:
        rec["messages"].append("compute-sanitizer not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)")
    if not env_info.get("gpu_present"):
        rec["messages"].append(f"{NO_DEVICE}: the sanitizers need a GPU")
    if not programs or not sanitizer or not env_info.get("gpu_present"):
        rec["summary"] = "not run: " + ", ".join(
            why for why, bad in ((NO_DEVICE, not env_info.get("gpu_present")), ("not built", not programs),
                                 ("no compute-sanitizer", not sanitizer)) if bad)
        return
    env = dict(ctx.env, CUDALAB_REQUIRE_GPU="1")
    # racecheck runs a program's tests in --racecheck-shards GoogleTest shards
    # (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX) at once, so that a long test
    # program finishes within --timeout; memcheck runs each program whole.
    shards = {tool: (ctx.racecheck_shards if tool == "racecheck" else 1) for tool in SANITIZER_TOOLS}
    if shards["racecheck"] > 1:
        rec["details"]["racecheck_shards"] = shards["racecheck"]
    # The slow racecheck runs start first, so that the last ones to finish are short.
    jobs = [(prog, tool, i) for tool in reversed(SANITIZER_TOOLS) for prog in programs for i in range(shards[tool])]

    def sanitize_one(job: tuple[Path, str, int]) -> tuple[dict, str]:
        prog, tool, shard = job
        # The exercise's code runs in the test program's runner: compute-sanitizer
        # runs the runner (CUDALAB_RUNNER_PREFIX), and the test program ends with
        # its exit code 86 when it found errors; its report is the runner's log.
        argv = [str(prog)]
        run_env = dict(env, CUDALAB_MAX_N=str(SANITIZER_TOOL_MAX_N[tool]))
        log = logs / f"{prog.name}.{tool}.log"
        if shards[tool] > 1:
            run_env.update(GTEST_TOTAL_SHARDS=str(shards[tool]), GTEST_SHARD_INDEX=str(shard))
            log = logs / f"{prog.name}.{tool}.shard{shard + 1}of{shards[tool]}.log"
        runner_log = log.with_suffix(".runner.log")
        runner_log.unlink(missing_ok=True)
        run_env.update(CUDALAB_RUNNER_LOG=str(runner_log), CUDALAB_RUNNER_PREFIX=json.dumps(
            [sanitizer, "--tool", tool, "--error-exitcode", str(SANITIZER_ERROR_EXIT)]))
        rc, out, secs = ctx.run(argv, log, env=run_env)
        if runner_log.exists():
            out = runner_log.read_text(errors="replace") + "\n" + out
        return {"program": prog.name, "tool": tool, "shard": shard, "rc": rc, "seconds": round(secs, 1),
                "summaries": sanitizer_summaries(out),
                "gtest": [ln for ln in out.splitlines() if re.match(r"^\[  (PASSED|FAILED)  \]", ln)][:3],
                "passed": rc == 0}, out

    # K runs at once on the one GPU (--parallel); one record per program and
    # tool (its shards merged: the first failing rc, the longest shard's seconds).
    merged: dict[tuple[str, str], dict] = {}
    for record, out in proc.map_parallel(sanitize_one, jobs, ctx.parallel):
        key = (record["program"], record["tool"])
        shard, n_shards = record.pop("shard"), shards[record["tool"]]
        if record["rc"] != 0:
            rc = record["rc"]
            tests = re.findall(r"^\[  (PASSED|FAILED)  \].*$", out, re.M)
            what = ("sanitizer errors" if rc == SANITIZER_ERROR_EXIT else
                    "timed out" if rc == 124 else "failed tests" if "FAILED" in tests else f"exit {rc}")
            where = f" (shard {shard + 1} of {n_shards})" if n_shards > 1 else ""
            rec["messages"].append(f"{record['program']} {record['tool']}{where}: {what}; "
                                   + ("; ".join(record["summaries"]) or tail(out, 5)))
        if key not in merged:
            merged[key] = dict(record, shards=n_shards) if n_shards > 1 else record
        else:
            m = merged[key]
            if m["rc"] == 0 and record["rc"] != 0:
                m["rc"] = record["rc"]
            m["passed"] = m["passed"] and record["passed"]
            m["seconds"] = max(m["seconds"], record["seconds"])
            m["summaries"] += [x for x in record["summaries"] if x not in m["summaries"]]
            m["gtest"] += record["gtest"]
        progress()
    runs = rec["details"]["runs"] = list(merged.values())
    runs.sort(key=lambda r: (r["program"], SANITIZER_TOOLS.index(r["tool"])))
    clean = sum(1 for r in runs if r["passed"])
    rec["summary"] = f"{clean}/{len(runs)} clean ({caps})" + ctx.scope_note()
    rec["status"] = "passed" if clean == len(runs) else "failed"
