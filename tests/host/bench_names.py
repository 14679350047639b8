#!/usr/bin/env python3
"""Host check: every benchmark and baseline a manifest's perf entry names is
registered by that exercise's benchmark program.

  tests/host/bench_names.py BIN_DIR

Runs each bin/<slug>_bench_solution with --benchmark_list_tests=true (which
lists the registered names without running anything, so it needs no GPU) and
fails, naming the exercise and the missing name, when a manifest names a
benchmark the program does not have: the grader would otherwise find out only
on a GPU, as "the benchmark printed no JSON result". Python 3.11+, stdlib only.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from cudalab_grade.bench import plain_name  # noqa: E402
from cudalab_grade.manifest import load_all  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    bin_dir = Path(argv[1])
    problems, checked = [], 0
    for chapter in load_all(ROOT):
        for ex in chapter.exercises:
            if not ex.perf:
                continue
            prog = bin_dir / f"{ex.slug}_bench_solution"
            if not prog.exists():
                problems.append(f"{ex.id} {ex.slug}: {prog} was not built")
                continue
            p = subprocess.run([str(prog), "--benchmark_list_tests=true"], capture_output=True,
                               text=True, timeout=120)
            names = {plain_name(line.strip()) for line in p.stdout.splitlines() if line.strip()}
            for what, name in (("benchmark", ex.perf.benchmark), ("baseline", ex.perf.baseline)):
                checked += 1
                if plain_name(name) not in names:
                    problems.append(f"{ex.id} {ex.slug}: the manifest's perf {what} '{name}' is not "
                                    f"registered by {prog.name} (it has {len(names)} benchmarks)")
    for line in problems:
        print(f"bench_names: {line}", file=sys.stderr)
    print(f"bench_names: {checked - len(problems)} of {checked} perf benchmark names registered")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
