"""Reading Google Benchmark JSON and computing the performance ratio."""
from __future__ import annotations

import json
import re
import statistics

COPY = "copy_bandwidth"
TIME_SUFFIXES = ("manual_time", "real_time", "process_time")
TO_MICROSECONDS = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
# The keys Google Benchmark writes in every entry of its JSON; every other
# numeric key is a user counter (state.counters).
STANDARD_KEYS = frozenset({
    "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
    "repetition_index", "threads", "aggregate_name", "aggregate_unit", "error_occurred",
    "error_message", "skipped", "skip_message", "iterations", "real_time", "cpu_time", "time_unit",
    "cpu_coefficient", "real_coefficient", "big_o", "rms", "bytes_per_second", "items_per_second",
    "allocs_per_iter", "max_bytes_used", "total_allocated_bytes", "net_heap_growth", "label"})


class JsonObject(dict):
    """A JSON object that knows which keys it holds twice: a user counter named
    like a standard key ("iterations", "threads") follows it in Google
    Benchmark's output, and the later value, the one json keeps, is the counter's."""
    repeated: frozenset = frozenset()


def json_object(pairs: list[tuple]) -> dict:
    """json's object_pairs_hook for Google Benchmark JSON: a JsonObject."""
    obj = JsonObject(pairs)
    if len(obj) != len(pairs):
        keys = [k for k, _ in pairs]
        obj.repeated = frozenset(k for k in obj if keys.count(k) > 1)
    return obj


def entry_counters(entry: dict) -> dict:
    """The user counters of one benchmark entry, without "n" (the row's n already).
    A standard key counts only when it is repeated (parsed with json_object)."""
    repeated = getattr(entry, "repeated", frozenset())
    return {k: v for k, v in entry.items()
            if k != "n" and (k not in STANDARD_KEYS or k in repeated)
            and isinstance(v, (int, float)) and not isinstance(v, bool)}


def filter_for(benchmark: str, baseline: str) -> str:
    """The --benchmark_filter that runs exactly these two benchmarks: their names as the manifest
    writes them, followed by any of the suffixes Google Benchmark appends to a run's name
    ('/iterations:1', '/repeats:1', '/min_time:0.5', '/threads:8', '/manual_time'), the same ones
    plain_name drops."""
    suffixes = r"(/[a-z_]+:[^/]+)*(/(" + "|".join(TIME_SUFFIXES) + r"))?"
    return f"^({re.escape(benchmark)}|{re.escape(baseline)}){suffixes}$"


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
    the plain entries (the same rule as tools/bench-report: results_from).
    """
    parsed = results_from({"benchmarks": benchmarks})
    for e in parsed["errors"]:
        if plain_name(e["name"]) == plain_name(name):
            return None, f"benchmark {name} failed: {e['message']}"
    m = by_run_name(parsed["results"], name)
    if m is None:
        return None, f"no result for benchmark {name}"
    return m["time_us"] * 1e3, ""


def perf_points(points: float, ratio: float, target: float) -> float:
    return round(points * min(1.0, ratio / target), 1)


def fmt_ratio(ratio: float) -> str:
    """0.97, 1.25, and two significant digits below 0.1 (0.0031)."""
    return f"{ratio:.2f}" if ratio >= 0.1 else f"{ratio:.2g}"


def split_name(run_name: str, n: int | None = None) -> tuple[str, str | None, int | None]:
    """A benchmark name -> (function, variant, n).

    'sum_vectorized/int32/268435456/manual_time' -> ('sum_vectorized', 'int32', 268435456);
    'histogram_x/uniform/256/268435456' -> ('histogram_x', 'uniform/256', 268435456).
    The element count n is the part equal to `n` (the "n" counter every
    benchmark of the course sets) when it is given, else the last part when
    it is an integer; the parts between the function and n form the variant.
    """
    parts = plain_name(run_name).split("/")  # without manual_time, repeats:5, min_time:0.5 ...
    if not parts[0]:
        return run_name, None, None
    function, rest = parts[0], parts[1:]
    found = None
    if n is not None and str(n) in rest:
        found = len(rest) - 1 - rest[::-1].index(str(n))
    elif rest:
        try:
            n = int(rest[-1])
            found = len(rest) - 1
        except ValueError:
            n = None
    if found is not None:
        rest = rest[:found] + rest[found + 1:]
    else:
        n = None
    return function, "/".join(rest) or None, n


def n_counter(entry: dict) -> int | None:
    """The entry's "n" counter (elements per run), when it has one."""
    try:
        value = float(entry["n"])
    except (KeyError, TypeError, ValueError):
        return None
    return int(value) if value.is_integer() else None


def run_name_of(entry: dict) -> str:
    if entry.get("run_name"):
        return str(entry["run_name"])
    name = str(entry.get("name", ""))
    agg = entry.get("aggregate_name")
    if entry.get("run_type") == "aggregate" and agg and name.endswith("_" + agg):
        name = name[: -len(agg) - 1]
    return name


def results_from(data: dict) -> dict:
    """Google Benchmark JSON (one run's) -> {'context', 'results': {(fn, variant, n): measurement}, 'errors'}.

    A measurement is {'time_us', 'gbps', 'items_per_second', 'counters', 'source',
    'repetitions', 'cv', 'run_name'}: the median aggregate when the run has
    repetitions, else the (median of the) iteration entries; 'counters' are the
    user counters of the same entries (entry_counters; per counter, the median
    of the iteration entries). Benchmarks that failed or were skipped
    are listed in 'errors' as {'name', 'message'}.
    """
    context = data.get("context") if isinstance(data.get("context"), dict) else {}
    medians: dict[str, dict] = {}
    cvs: dict[str, float] = {}
    iterations: dict[str, list[dict]] = {}
    errors: list[dict] = []
    order: list[str] = []
    counts: dict[str, int] = {}
    for entry in data["benchmarks"]:
        if not isinstance(entry, dict):
            continue
        name = run_name_of(entry)
        if name not in order:
            order.append(name)
        if n_counter(entry) is not None:
            counts.setdefault(name, n_counter(entry))
        if entry.get("error_occurred") or entry.get("skipped"):
            msg = entry.get("error_message") or entry.get("skip_message") or "skipped"
            if not any(e["name"] == name for e in errors):
                errors.append({"name": name, "message": str(msg)})
            continue
        if entry.get("run_type") == "aggregate":
            agg = entry.get("aggregate_name")
            if agg == "median":
                medians[name] = entry
            elif agg == "cv":
                try:
                    cvs[name] = float(entry.get("real_time"))
                except (TypeError, ValueError):
                    pass
        else:
            iterations.setdefault(name, []).append(entry)
    results: dict[tuple, dict] = {}
    for name in order:
        if name in medians:
            chosen, source, reps = medians[name], "median", medians[name].get("repetitions")
            m = measurement(chosen)
            m["counters"] = entry_counters(chosen)
        elif name in iterations:
            timed = [e for e in iterations[name] if measurement(e)["time_us"] is not None]
            if not timed:
                continue
            runs = [measurement(e) for e in timed]
            source = "iteration" if len(runs) == 1 else "median of iterations"
            reps = len(runs)
            each = [entry_counters(e) for e in timed]
            m = {
                "time_us": statistics.median(r["time_us"] for r in runs),
                "gbps": median_or_none([r["gbps"] for r in runs]),
                "items_per_second": median_or_none([r["items_per_second"] for r in runs]),
                "counters": {k: statistics.median(c[k] for c in each if k in c)
                             for k in dict.fromkeys(k for c in each for k in c)},
            }
        else:
            continue
        if m["time_us"] is None:
            continue
        m.update(source=source, repetitions=reps, cv=cvs.get(name), run_name=name)
        results[split_name(name, counts.get(name))] = m
    return {"context": context, "results": results, "errors": errors}


def median_or_none(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def measurement(entry: dict) -> dict:
    unit = entry.get("time_unit", "ns")
    scale = TO_MICROSECONDS.get(unit)
    try:
        time_us = float(entry["real_time"]) * scale if scale is not None else None
    except (KeyError, TypeError, ValueError):
        time_us = None
    bps = entry.get("bytes_per_second")
    ips = entry.get("items_per_second")
    return {
        "time_us": time_us,
        "gbps": float(bps) / 1e9 if isinstance(bps, (int, float)) else None,
        "items_per_second": float(ips) if isinstance(ips, (int, float)) else None,
    }


def plain_name(run_name: str) -> str:
    """The name without the suffixes Google Benchmark appends ('/manual_time', '/repeats:5')."""
    parts = [p for p in str(run_name).split("/") if p]
    while parts and (parts[-1] in TIME_SUFFIXES or ":" in parts[-1]):
        parts.pop()
    return "/".join(parts)


def by_run_name(res: dict, name: str) -> dict | None:
    """The measurement whose benchmark name is `name` (as a manifest writes it)."""
    for m in res.values():
        if plain_name(m.get("run_name", "")) == plain_name(name):
            return m
    return None
