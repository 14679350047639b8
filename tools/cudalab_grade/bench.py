"""Reading Google Benchmark JSON and computing the performance ratio."""
from __future__ import annotations

import json
import re
import statistics

_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def filter_for(benchmark: str, baseline: str) -> str:
    return f"^({re.escape(benchmark)}|{re.escape(baseline)})(/manual_time)?$"


def parse(output: str) -> list[dict] | None:
    """The `benchmarks` list of a --benchmark_format=json run (text before the JSON is ignored)."""
    start = output.find("{")
    while start >= 0:
        try:
            data, _ = json.JSONDecoder().raw_decode(output[start:])
            if isinstance(data, dict) and "benchmarks" in data:
                return list(data["benchmarks"])
        except ValueError:
            pass
        start = output.find("{", start + 1)
    return None


def real_time_ns(benchmarks: list[dict], name: str) -> tuple[float | None, str]:
    """(real time in ns, '') of benchmark `name`, or (None, why not).

    Takes the median aggregate when there are repetitions, else the median of
    the plain entries.
    """
    names = (name, name + "/manual_time")
    mine = [b for b in benchmarks if b.get("name") in names or b.get("run_name") in names]
    for b in mine:
        if b.get("error_occurred"):
            return None, f"benchmark {name} failed: {b.get('error_message', 'error')}"
    median = [b for b in mine if b.get("aggregate_name") == "median"]
    plain = [b for b in mine if b.get("name") in names and b.get("run_type", "iteration") != "aggregate"]
    chosen = median[:1] or plain
    if not chosen:
        return None, f"no result for benchmark {name}"
    times = [float(b["real_time"]) * _UNIT_NS.get(b.get("time_unit", "ns"), 1.0) for b in chosen]
    return statistics.median(times), ""


def perf_points(points: float, ratio: float, target: float) -> float:
    return round(points * min(1.0, ratio / target), 1)


def fmt_ratio(ratio: float) -> str:
    """0.97, 1.25, and two significant digits below 0.1 (0.0031)."""
    return f"{ratio:.2f}" if ratio >= 0.1 else f"{ratio:.2g}"
