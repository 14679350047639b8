"""Reading Google Benchmark JSON and computing the performance ratio."""
from __future__ import annotations

import json
import random
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


# The counter a benchmark sets, with its message as the label, on a repetition
# whose output was wrong (cudalab::bench::report_wrong_output in bench.cuh): a
# failure, like an error, but one Google Benchmark's statistics survive when
# some repetitions have it and others do not.
WRONG_OUTPUT = "wrong_output"


def failure_of(entry: dict) -> str | None:
    """Why one benchmark entry failed (an error, a skip, or a wrong output), or None."""
    if entry.get("error_occurred") or entry.get("skipped"):
        return str(entry.get("error_message") or entry.get("skip_message") or "skipped")
    wrong = entry_counters(entry).get(WRONG_OUTPUT)
    if wrong:
        label = entry.get("label")
        return str(label) if label else "an output is wrong"
    return None


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


def parse_document(output: str) -> dict | None:
    """The whole JSON object of a --benchmark_format=json run ('context', 'benchmarks'), text
    before the JSON ignored; None when there is none."""
    start = output.find("{")
    while start >= 0:
        try:
            data, _ = json.JSONDecoder().raw_decode(output[start:])
            if isinstance(data, dict) and isinstance(data.get("benchmarks"), list):
                return data
        except ValueError:
            pass
        start = output.find("{", start + 1)
    return None


def parse(output: str) -> list[dict] | None:
    """The `benchmarks` list of a --benchmark_format=json run (text before the JSON is ignored)."""
    data = parse_document(output)
    return list(data["benchmarks"]) if data is not None else None


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
    of the iteration entries). Benchmarks that failed, were skipped or had
    a repetition with a wrong output (failure_of) are listed in 'errors' as
    {'name', 'message'}; an error outweighs any result of the same name.
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
        msg = failure_of(entry)
        if msg is not None:
            if not any(e["name"] == name for e in errors):
                errors.append({"name": name, "message": msg})
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
    failed = {e["name"] for e in errors}
    for name in order:
        if name in failed:
            continue
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


# ---------------------------------------------------------------------------
# Honest speed grades: the spread of a ratio and the rules that refuse one
# (docs/guides/grading.md, "How fast is fast enough").

LEVEL = 0.95           # the interval's confidence level
RESAMPLES = 2000       # bootstrap resamples (seeded: the same JSON gives the same interval)
COPY_MARGIN = 1.1      # faster than this many times the device copy bandwidth: implausible
PLAUSIBLE_FACTOR = 20  # default max_plausible_ratio: this many times the speed target


def _entries_of(benchmarks: list[dict], name: str) -> list[dict]:
    return [e for e in benchmarks if isinstance(e, dict)
            and plain_name(run_name_of(e)) == plain_name(name)
            and failure_of(e) is None]


def repetition_times_ns(benchmarks: list[dict], name: str) -> list[float]:
    """The time of each repetition of benchmark `name` in ns (its iteration entries; with
    --benchmark_report_aggregates_only=false Google Benchmark writes one per repetition); the
    median aggregate alone when the JSON has no iteration entry. [] when there is neither."""
    entries = _entries_of(benchmarks, name)
    plain = [e for e in entries if e.get("run_type", "iteration") != "aggregate"]
    if not plain:
        plain = [e for e in entries if e.get("aggregate_name") == "median"]
    times = []
    for e in plain:
        t = measurement(e)["time_us"]
        if t is not None and t > 0:
            times.append(t * 1e3)
    return times


def bytes_per_second(benchmarks: list[dict], name: str) -> float | None:
    """The median bytes/s Google Benchmark reported for `name` (time_runs sets the fewest
    bytes one call must move: each input read once, each output written once)."""
    entries = _entries_of(benchmarks, name)
    plain = [e for e in entries if e.get("run_type", "iteration") != "aggregate"] or \
        [e for e in entries if e.get("aggregate_name") == "median"]
    values = [float(e["bytes_per_second"]) for e in plain
              if isinstance(e.get("bytes_per_second"), (int, float)) and e["bytes_per_second"] > 0]
    return statistics.median(values) if values else None


def copy_bandwidth_gbps(data: dict, benchmarks: list[dict] | None = None) -> float | None:
    """The device-to-device copy bandwidth (bytes read + written, GB/s) measured in the same run:
    the context key bench_main.cu writes, else the fastest copy_bandwidth benchmark of the run."""
    ctx = data.get("context") if isinstance(data.get("context"), dict) else {}
    try:
        v = float(ctx.get("copy_bandwidth_gbps", ""))
        if v > 0:
            return v
    except (TypeError, ValueError):
        pass
    best = None
    for e in benchmarks or data.get("benchmarks") or []:
        if isinstance(e, dict) and plain_name(run_name_of(e)).startswith(COPY + "/"):
            bps = e.get("bytes_per_second")
            if isinstance(bps, (int, float)) and bps > 0:
                best = max(best or 0.0, bps / 1e9)
    return best


def _quantile(sorted_values: list[float], q: float) -> float:
    """The q-quantile of sorted values (linear between neighbours)."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def ratio_interval(base_ns: list[float], mine_ns: list[float], level: float = LEVEL,
                   resamples: int = RESAMPLES, seed: int = 1) -> tuple[float, float, float]:
    """(ratio, low, high): the ratio of the medians, median(baseline) / median(exercise), and a
    `level` bootstrap percentile interval of it: each side's repetitions resampled with
    replacement, independently (the two benchmarks run one after the other, so their
    repetitions are not pairs). With one repetition a side the interval is the ratio itself."""
    if not base_ns or not mine_ns:
        raise ValueError("no repetitions")
    ratio = statistics.median(base_ns) / statistics.median(mine_ns)
    if len(base_ns) == 1 and len(mine_ns) == 1:
        return ratio, ratio, ratio
    rng = random.Random(seed)
    draws = sorted(statistics.median(rng.choices(base_ns, k=len(base_ns)))
                   / statistics.median(rng.choices(mine_ns, k=len(mine_ns)))
                   for _ in range(resamples))
    tail = (1.0 - level) / 2
    return ratio, min(ratio, _quantile(draws, tail)), max(ratio, _quantile(draws, 1.0 - tail))


def calibrated_interval(baseline_ns: float, mine_ns: list[float], gpu_scale: float = 1.0,
                        level: float = LEVEL, resamples: int = RESAMPLES,
                        seed: int = 1) -> tuple[float, float, float]:
    """(ratio, low, high) against a calibrated host baseline: `baseline_ns`, the baseline's time on
    the calibration machine (a constant), over the exercise's median time scaled to the
    calibration GPU, median(mine_ns) x gpu_scale (gpu_scale: this device's copy bandwidth over
    the calibration device's; a GPU with less bandwidth has its times scaled down). The
    interval is a `level` bootstrap percentile interval of the exercise's repetitions alone (the
    baseline is no measurement here). With one repetition the interval is the ratio itself."""
    if not baseline_ns > 0 or not gpu_scale > 0:
        raise ValueError("the calibration's time and the copy bandwidths must be positive")
    # the constant baseline as a one-repetition side: every resample of it is itself
    return ratio_interval([baseline_ns / gpu_scale], mine_ns, level, resamples, seed)


def host_cpu(cpuinfo: str = "/proc/cpuinfo") -> str | None:
    """The host CPU's model as /proc/cpuinfo names it ("Intel(R) Xeon(R) Platinum 8480+"),
    else what Python's platform module says; None when neither says anything. Recorded beside
    a host baseline's time (results.json's `host`), which moves with it."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                    return " ".join(value.split())
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine() or None


def straddles(low: float, high: float, target: float) -> bool:
    """Whether the interval leaves it open whether the target was reached."""
    return low < target < high


def max_plausible(target: float, configured: float | None = None) -> float:
    """The largest ratio believed: the manifest's max_plausible_ratio, else PLAUSIBLE_FACTOR x the target."""
    return configured if configured is not None else PLAUSIBLE_FACTOR * target


def l2_bytes(data: dict) -> float | None:
    """The device's L2 size from the run's context (bench_main.cu's l2_bytes), or None."""
    ctx = data.get("context") if isinstance(data.get("context"), dict) else {}
    try:
        v = float(ctx.get("l2_bytes", ""))
    except (TypeError, ValueError):
        return None
    return v if v > 0 else None


def implausible(ratio: float, target: float, bytes_per_s: float | None, copy_gbps: float | None,
                max_ratio: float | None = None, check_bandwidth: bool = True,
                l2: float | None = None, call_seconds: float | None = None) -> str | None:
    """Why a measured speed cannot be true, or None. Two rules:

    - bandwidth: the fewest bytes one call must move (the benchmark's bytes/s counter: each
      input read once, each output written once), less what the L2 cache can hold at the end
      of the call (`l2` bytes of output not yet written back; the inputs were flushed out of
      it before the call), divided by the call's time, is more than COPY_MARGIN x the
      device-to-device copy bandwidth measured in the same run: no kernel moves data through
      DRAM faster than a copy, so the call skipped work (or its result was stale);
    - ratio: more than max_plausible (the manifest's max_plausible_ratio, default
      PLAUSIBLE_FACTOR x the target) times the baseline's speed.
    """
    if check_bandwidth and bytes_per_s is not None and copy_gbps:
        dram = bytes_per_s
        if l2 and call_seconds and call_seconds > 0:
            dram = max(0.0, bytes_per_s - l2 / call_seconds)
        gbps = dram / 1e9
        if gbps > COPY_MARGIN * copy_gbps:
            return (f"implausible: {gbps:.0f} GB/s for the bytes every call must at least read and "
                    f"write{' (less what the L2 cache holds)' if dram != bytes_per_s else ''}, more "
                    f"than {COPY_MARGIN:g} x the device's copy bandwidth "
                    f"({copy_gbps:.0f} GB/s, measured in the same run); a call that fast skipped "
                    "work or reused an earlier answer")
    limit = max_plausible(target, max_ratio)
    if ratio > limit:
        why = ("its manifest's max_plausible_ratio" if max_ratio is not None
               else f"{PLAUSIBLE_FACTOR:g} x its target {target:g}")
        return (f"implausible: {fmt_ratio(ratio)} x the baseline's speed, more than the "
                f"{limit:g} x believed for this exercise ({why}); a result that far beyond the "
                "baseline is a measurement error or a skipped computation")
    return None
