"""tools/grade --profile ID: the exercise's benchmark case under Nsight Compute (ncu), for the
student's kernels and the reference solution's, side by side in plain words.

What it runs: the exercise's benchmark program (a checker, cudalab/bench.cuh) with only the
exercise's case, one timed call after the warm-up call (--benchmark_min_time tiny, one
repetition), under

    ncu --target-processes all --export FILE <sections and metrics> BENCH ...

so that ncu follows the benchmark into the runner it starts, where the exercise's code runs.
The report is then read back with `ncu --import FILE --page raw --csv --print-units base`
(one row per kernel launch, one column per metric; parse_csv also reads the long
"Metric Name","Metric Value" layout). The kernels of the runner process are the exercise's;
those of the checker (new inputs, the verification) are left out.

The runner runs WITHOUT the grader's sandbox here: ncu has to reach into it, which the
sandbox (a separate user, pid and network namespace) prevents. --profile is the student's own
tool on their own code, never part of grading.

What it prints, per side: DRAM throughput as a share of the device's peak and of the copy
bandwidth measured in the same run, achieved and theoretical occupancy and what limits the
latter (registers, shared memory, warps or blocks per SM), the top warp stall reasons,
shared-memory bank conflicts, warp instructions per element; then which gap is the largest and
the lesson section that addresses it (profile_lessons.toml). Standard library only.
"""
from __future__ import annotations

import csv
import io
import json
import math
import re
import shutil
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

SECTIONS = ("SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats",
            "MemoryWorkloadAnalysis_Tables", "InstructionStats")
METRICS = (
    "gpu__time_duration.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps", "launch__occupancy_limit_blocks",
    "launch__registers_per_thread", "launch__block_size", "launch__grid_size",
    "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
    "smsp__inst_executed.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
)
# Per warp stall reason, the WarpStateStats metric (warps stalled per issued instruction) and
# the sampling one (samples), whichever the report holds.
STALL_PATTERNS = (re.compile(r"^smsp__average_warps_issue_stalled_([a-z_]+)_per_issue_active\.ratio$"),
                  re.compile(r"^smsp__pcsamp_warps_issue_stalled_([a-z_]+)$"))
STALL_WORDS = {
    "long_scoreboard": "waiting for global memory (long scoreboard)",
    "short_scoreboard": "waiting for shared memory or special math (short scoreboard)",
    "barrier": "waiting at __syncthreads (barrier)",
    "membar": "waiting on a memory fence (membar)",
    "mio_throttle": "shared-memory instruction queue full (MIO throttle)",
    "lg_throttle": "global-memory instruction queue full (LG throttle)",
    "math_pipe_throttle": "math pipe busy (math pipe throttle)",
    "wait": "fixed-latency dependency (wait)",
    "not_selected": "eligible but another warp issued (not selected)",
    "selected": "issuing (selected)",
    "no_instruction": "no instruction fetched (no instruction)",
    "branch_resolving": "resolving a branch (branch resolving)",
    "drain": "draining stores at exit (drain)",
    "dispatch_stall": "dispatch stall",
    "imc_miss": "constant-cache miss (IMC miss)",
    "tex_throttle": "texture queue full (tex throttle)",
    "sleeping": "sleeping",
    "misc": "miscellaneous",
}
# What a dominating stall says about which lesson helps (GAPS below)
STALL_GAP = {"long_scoreboard": "memory", "lg_throttle": "memory", "mio_throttle": "bank_conflicts",
             "short_scoreboard": "bank_conflicts", "membar": "atomics", "barrier": "instructions"}
GAPS = ("memory", "occupancy", "bank_conflicts", "instructions", "atomics")
GAP_WORDS = {
    "memory": "DRAM throughput",
    "occupancy": "achieved occupancy",
    "bank_conflicts": "shared-memory bank conflicts",
    "instructions": "instructions per element",
    "atomics": "atomics and memory fences",
}
LIMITERS = {"launch__occupancy_limit_registers": "registers per thread",
            "launch__occupancy_limit_shared_mem": "shared memory per block",
            "launch__occupancy_limit_warps": "block size (warps per SM)",
            "launch__occupancy_limit_blocks": "blocks per SM (small blocks)"}
PERMISSION_MARKERS = ("ERR_NVGPUCTRPERM", "does not have permission to access NVIDIA GPU Performance Counters")
UNIT_SCALE = {"": 1.0, "byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
              "nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6,
              "second": 1e9, "s": 1e9, "%": 1.0, "register/thread": 1.0, "warp": 1.0, "block": 1.0,
              "thread": 1.0, "inst": 1.0, "cycle": 1.0}
# kernels of the benchmark program itself (new inputs, verification): never the exercise's
CHECKER_KERNELS = ("cudalab::bench::", "fill_uniform_int_kernel", "cub::", "thrust::")
HERE = Path(__file__).resolve().parent


class ProfileError(Exception):
    """--profile cannot run: the message says why and what to do; `code` is the exit status."""

    def __init__(self, message: str, code: int = 4):
        super().__init__(message)
        self.code = code


# ---------------------------------------------------------------------------------------------
# Reading ncu's CSV

def number(value: str, unit: str = "") -> float | None:
    """'1,234.5' in `unit` -> 1234.5 in the base unit (bytes, ns, %); None for 'n/a' and text."""
    text = str(value).strip().replace(",", "")
    try:
        v = float(text)
    except ValueError:
        return None
    if not math.isfinite(v):
        return None
    return v * UNIT_SCALE.get(unit.strip().lower(), 1.0)


@dataclass
class Kernel:
    """One profiled kernel launch."""
    id: int
    pid: str
    process: str
    name: str
    metrics: dict[str, float] = field(default_factory=dict)

    def get(self, metric: str, default: float | None = None) -> float | None:
        return self.metrics.get(metric, default)


IDENTITY = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
            "Block Size", "Grid Size", "Device", "CC")


def parse_csv(text: str) -> list[Kernel]:
    """ncu's --csv output of one report -> its kernel launches, in order.

    Reads both layouts: --page raw (a header of the identity columns then one column per
    metric, a row of units, one row per launch) and the details page (one row per metric:
    "Section Name","Metric Name","Metric Unit","Metric Value"). Lines that are not CSV
    (==PROF== messages, the program's output) are skipped."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    kernels: dict[int, Kernel] = {}
    header: list[str] | None = None
    units: list[str] | None = None
    for row in rows:
        if row and row[0] == "ID":
            header, units = row, None
            continue
        if header is None or not row:
            continue
        cells = dict(zip(header, row))
        if not cells.get("ID", "").strip().isdigit():
            if units is None:
                units = row  # the units row of --page raw
            continue
        kid = int(cells["ID"])
        k = kernels.setdefault(kid, Kernel(kid, cells.get("Process ID", ""), cells.get("Process Name", ""),
                                           cells.get("Kernel Name", "")))
        if "Metric Name" in cells:  # the details layout
            v = number(cells.get("Metric Value", ""), cells.get("Metric Unit", ""))
            if cells["Metric Name"] and v is not None:
                k.metrics[cells["Metric Name"]] = v
            continue
        for i, name in enumerate(header):
            if name in IDENTITY or i >= len(row):
                continue
            unit = units[i] if units is not None and i < len(units) else ""
            v = number(row[i], unit)
            if v is not None:
                k.metrics[name] = v
    return [kernels[k] for k in sorted(kernels)]


def exercise_kernels(kernels: list[Kernel], checker_pid: str | None = None) -> list[Kernel]:
    """The launches of the runner (the exercise's code): the process named like a runner, else
    every process but the checker's (the first pid, or the one given), else the launches whose
    names are not the benchmark's own kernels."""
    named = [k for k in kernels if "runner" in k.process]
    if named:
        return named
    pids = list(dict.fromkeys(k.pid for k in kernels))
    if len(pids) > 1:
        checker = checker_pid or pids[0]
        return [k for k in kernels if k.pid != checker]
    return [k for k in kernels if not any(c in k.name for c in CHECKER_KERNELS)]


# ---------------------------------------------------------------------------------------------
# From launches to one summary per side

@dataclass
class Summary:
    label: str
    kernels: int = 0
    calls: int = 1
    names: list[str] = field(default_factory=list)
    time_ns: float = 0.0              # per call
    dram_bytes: float | None = None   # per call
    dram_pct_peak: float | None = None
    dram_gbps: float | None = None
    copy_gbps: float | None = None
    achieved_occupancy: float | None = None
    theoretical_occupancy: float | None = None
    limiter: str | None = None
    registers: float | None = None
    block_size: float | None = None
    shared_bytes: float | None = None
    stalls: list[tuple[str, float]] = field(default_factory=list)  # (reason, share 0..1)
    bank_conflicts: float | None = None  # per call
    conflict_share: float | None = None  # conflicts / shared wavefronts
    inst_per_element: float | None = None

    @property
    def copy_share(self) -> float | None:
        if self.dram_gbps is None or not self.copy_gbps:
            return None
        return self.dram_gbps / self.copy_gbps


def _weighted(kernels: list[Kernel], metric: str) -> float | None:
    """The duration-weighted mean of a per-launch percentage."""
    pairs = [(k.get("gpu__time_duration.sum", 0.0) or 0.0, k.get(metric)) for k in kernels]
    pairs = [(w, v) for w, v in pairs if v is not None]
    if not pairs:
        return None
    total = sum(w for w, _ in pairs)
    if total <= 0:
        return sum(v for _, v in pairs) / len(pairs)
    return sum(w * v for w, v in pairs) / total


def _sum(kernels: list[Kernel], metric: str) -> float | None:
    vals = [k.get(metric) for k in kernels if k.get(metric) is not None]
    return sum(vals) if vals else None


def summarize(label: str, kernels: list[Kernel], n: int | None, calls: int = 2,
              copy_gbps: float | None = None) -> Summary:
    """One side's launches (of `calls` calls of the exercise on n elements) in one Summary."""
    calls = max(1, calls)
    s = Summary(label, kernels=len(kernels), calls=calls, copy_gbps=copy_gbps)
    if not kernels:
        return s
    s.names = list(dict.fromkeys(k.name for k in kernels))
    total_ns = _sum(kernels, "gpu__time_duration.sum") or 0.0
    s.time_ns = total_ns / calls
    rd, wr = _sum(kernels, "dram__bytes_read.sum"), _sum(kernels, "dram__bytes_write.sum")
    if rd is not None or wr is not None:
        s.dram_bytes = ((rd or 0.0) + (wr or 0.0)) / calls
        if total_ns > 0:
            s.dram_gbps = (rd or 0.0) / total_ns + (wr or 0.0) / total_ns  # bytes/ns = GB/s
    s.dram_pct_peak = _weighted(kernels, "dram__throughput.avg.pct_of_peak_sustained_elapsed")
    s.achieved_occupancy = _weighted(kernels, "sm__warps_active.avg.pct_of_peak_sustained_active")
    # the longest kernel (all its launches) stands for the launch configuration
    by_name: dict[str, float] = {}
    for k in kernels:
        by_name[k.name] = by_name.get(k.name, 0.0) + (k.get("gpu__time_duration.sum", 0.0) or 0.0)
    main_name = max(by_name, key=by_name.get)
    main = next(k for k in kernels if k.name == main_name)
    s.theoretical_occupancy = main.get("sm__maximum_warps_per_active_cycle_pct")
    limits = {LIMITERS[m]: main.get(m) for m in LIMITERS if main.get(m) is not None}
    if limits:
        s.limiter = min(limits, key=limits.get)
    s.registers = main.get("launch__registers_per_thread")
    s.block_size = main.get("launch__block_size")
    static, dynamic = main.get("launch__shared_mem_per_block_static"), main.get("launch__shared_mem_per_block_dynamic")
    if static is not None or dynamic is not None:
        s.shared_bytes = (static or 0.0) + (dynamic or 0.0)
    stalls: dict[str, float] = {}
    for k in kernels:
        w = k.get("gpu__time_duration.sum", 1.0) or 1.0
        for metric, v in k.metrics.items():
            for pat in STALL_PATTERNS:
                m = pat.match(metric)
                if m and not m.group(1).endswith("not_issued") and m.group(1) != "selected":
                    stalls[m.group(1)] = stalls.get(m.group(1), 0.0) + w * v
    total = sum(stalls.values())
    if total > 0:
        s.stalls = sorted(((r, v / total) for r, v in stalls.items() if v > 0), key=lambda x: -x[1])[:3]
    conflicts = _sum(kernels, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum")
    if conflicts is None:
        ld = _sum(kernels, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
        st = _sum(kernels, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")
        conflicts = None if ld is None and st is None else (ld or 0.0) + (st or 0.0)
    if conflicts is not None:
        s.bank_conflicts = conflicts / calls
        wavefronts = _sum(kernels, "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
        s.conflict_share = conflicts / wavefronts if wavefronts else 0.0
    inst = _sum(kernels, "smsp__inst_executed.sum")
    if inst is not None and n:
        s.inst_per_element = inst / calls / n
    return s


# ---------------------------------------------------------------------------------------------
# Words

def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.0f} %"


def _val(v: float | None, fmt: str = "{:.0f}") -> str:
    return "n/a" if v is None else fmt.format(v)


def lines_of(s: Summary) -> list[tuple[str, str]]:
    """(what, value in words) for one side."""
    if not s.kernels:
        return [("kernels", "none profiled")]
    dram = _pct(s.dram_pct_peak) + " of peak"
    if s.copy_share is not None:
        dram += f", {s.copy_share * 100:.0f} % of a copy ({s.dram_gbps:.0f} of {s.copy_gbps:.0f} GB/s)"
    elif s.dram_gbps is not None:
        dram += f" ({s.dram_gbps:.0f} GB/s)"
    occ = f"{_pct(s.achieved_occupancy)} achieved, {_pct(s.theoretical_occupancy)} possible"
    if s.limiter and (s.theoretical_occupancy or 0) < 99.5:
        occ += f", limited by {s.limiter}"
    launch = (f"{_val(s.block_size)} threads a block, {_val(s.registers)} registers a thread, "
              f"{_val(s.shared_bytes)} B shared a block")
    stalls = ", ".join(f"{STALL_WORDS.get(r, r)} {v * 100:.0f} %" for r, v in s.stalls) or "n/a"
    banks = "n/a"
    if s.bank_conflicts is not None:
        banks = f"{s.bank_conflicts:,.0f} a call"
        if s.conflict_share:
            banks += f" ({s.conflict_share * 100:.0f} % of shared-memory wavefronts)"
    return [("kernels", f"{s.kernels} launch(es) in {s.calls} call(s): "
             + ", ".join(_short_name(n) for n in s.names[:3])),
            ("time per call", f"{s.time_ns / 1e3:,.1f} us"),
            ("DRAM throughput", dram),
            ("occupancy", occ),
            ("launch", launch),
            ("top stalls", stalls),
            ("bank conflicts", banks),
            ("warp instructions per element", _val(s.inst_per_element, "{:.3g}"))]


def _short_name(name: str) -> str:
    """'void ns::<unnamed>::kernel<int, long long>(const T1 *, ...)' -> 'kernel'."""
    base = name.split("(")[0].strip()
    if base.startswith("void "):
        base = base[5:]
    depth, plain = 0, []
    for ch in base:  # without template arguments
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            plain.append(ch)
    base = "".join(plain).split("::")[-1] or base
    return base if len(base) <= 40 else base[:37] + "..."


def side_by_side(mine: Summary, ref: Summary | None, width: int = 100) -> str:
    a = lines_of(mine)
    b = dict(lines_of(ref)) if ref is not None else {}
    what_w = max(len(w) for w, _ in a)
    if ref is None:
        out = [f"{'':<{what_w}}  {mine.label}"]
        out += [f"{w:<{what_w}}  {v}" for w, v in a]
        return "\n".join(out)
    col = max(20, (width - what_w - 4) // 2)
    out = [f"{'':<{what_w}}  {mine.label:<{col}}  {ref.label}"]
    for w, v in a:
        left = _wrap(v, col)
        right = _wrap(b.get(w, ""), col)
        for i in range(max(len(left), len(right))):
            out.append(f"{(w if i == 0 else ''):<{what_w}}  "
                       f"{(left[i] if i < len(left) else ''):<{col}}  {right[i] if i < len(right) else ''}".rstrip())
    return "\n".join(out)


def _wrap(text: str, width: int) -> list[str]:
    import textwrap
    return textwrap.wrap(text, width) or [""]


def gaps(mine: Summary, ref: Summary | None) -> list[tuple[float, str, str]]:
    """(size 0..1, kind, why in words) of every gap found, largest first. Without the reference,
    the student's own figures against what a good kernel reaches."""
    out: list[tuple[float, str, str]] = []
    if ref is not None and ref.kernels:
        if mine.dram_pct_peak is not None and ref.dram_pct_peak is not None \
                and ref.dram_pct_peak >= 40 and ref.dram_pct_peak > mine.dram_pct_peak:
            d = (ref.dram_pct_peak - mine.dram_pct_peak) / 100
            if mine.stalls and mine.stalls[0][0] not in ("long_scoreboard", "lg_throttle"):
                d *= 0.6  # the memory waits for something else: that is the gap to close first
            out.append((d, "memory", f"your kernels reach {mine.dram_pct_peak:.0f} % of the DRAM's peak, "
                                     f"the reference {ref.dram_pct_peak:.0f} %"))
        if mine.achieved_occupancy is not None and ref.achieved_occupancy is not None \
                and ref.achieved_occupancy > mine.achieved_occupancy:
            d = (ref.achieved_occupancy - mine.achieved_occupancy) / 100
            why = (f"your kernels keep {mine.achieved_occupancy:.0f} % of the warp slots busy, the "
                   f"reference {ref.achieved_occupancy:.0f} %")
            if mine.limiter and (mine.theoretical_occupancy or 0) < 99.5:
                why += f" (yours is limited by {mine.limiter})"
            out.append((d * 0.8, "occupancy", why))
        mc, rc = mine.conflict_share or 0.0, ref.conflict_share or 0.0
        if mc > rc + 0.02:
            out.append((min(1.0, mc - rc), "bank_conflicts",
                        f"{mc * 100:.0f} % of your shared-memory wavefronts are bank conflicts, "
                        f"{rc * 100:.0f} % of the reference's"))
        if mine.inst_per_element and ref.inst_per_element and mine.inst_per_element > 1.2 * ref.inst_per_element:
            r = mine.inst_per_element / ref.inst_per_element
            out.append((min(1.0, math.log2(r) / 4), "instructions",
                        f"your kernels execute {r:.1f} x the reference's instructions per element"))
    else:
        if mine.dram_pct_peak is not None and mine.dram_pct_peak < 60:
            out.append(((60 - mine.dram_pct_peak) / 100, "memory",
                        f"your kernels reach {mine.dram_pct_peak:.0f} % of the DRAM's peak"))
        if mine.achieved_occupancy is not None and mine.achieved_occupancy < 50:
            out.append(((50 - mine.achieved_occupancy) / 100, "occupancy",
                        f"your kernels keep {mine.achieved_occupancy:.0f} % of the warp slots busy"))
        if (mine.conflict_share or 0) > 0.05:
            out.append((mine.conflict_share, "bank_conflicts",
                        f"{mine.conflict_share * 100:.0f} % of your shared-memory wavefronts are bank conflicts"))
    if mine.stalls:
        reason, share = mine.stalls[0]
        kind = STALL_GAP.get(reason)
        ref_share = dict(ref.stalls).get(reason, 0.0) if ref is not None else 0.0
        if kind is not None and share >= 0.4 and share > ref_share + 0.15:
            out.append((0.5 * (share - ref_share), kind,
                        f"{share * 100:.0f} % of your warps' stalls are {STALL_WORDS.get(reason, reason)}"
                        + (f", {ref_share * 100:.0f} % of the reference's" if ref is not None else "")))
    return sorted(out, key=lambda g: -g[0])


def lesson_table(path: Path = HERE / "profile_lessons.toml") -> dict[str, dict[str, str]]:
    """profile_lessons.toml: a chapter ("7") or an exercise ("7.1") -> {gap kind: anchor}."""
    with path.open("rb") as f:
        data = tomllib.load(f)
    return {str(k): {g: str(a) for g, a in v.items()} for k, v in data.items()}


def exercise_anchor(ex_id: str) -> str:
    """'1.2' -> 'ch01-ex12', the anchor of the exercise's own section."""
    chapter, _, number = ex_id.partition(".")
    return f"ch{int(chapter):02d}-ex{chapter}{number}"


def section_title(lesson: Path, anchor: str, ex_id: str | None = None) -> str | None:
    """The heading that carries {#anchor} in the lesson (or, failing that, the first heading that
    names exercise ex_id), without its '#'s and anchor."""
    try:
        text = lesson.read_text(errors="replace")
    except OSError:
        return None
    headings = [line for line in text.splitlines() if line.startswith("#")]
    for h in headings:
        if "{#" + anchor + "}" in h:
            return h.lstrip("#").split("{#")[0].strip()
    if ex_id:
        for h in headings:
            if re.search(r"Exercises? [0-9. and]*\b" + re.escape(ex_id) + r"\b", h):
                return h.lstrip("#").split("{#")[0].strip()
    return None


def pointer(kind: str, why: str, ex_id: str, chapter: int, lesson: Path, shown_lesson: str,
            table: dict[str, dict[str, str]] | None = None) -> str:
    """One or two sentences: the largest gap and the lesson section that addresses it."""
    table = lesson_table() if table is None else table
    anchor = (table.get(ex_id, {}).get(kind) or table.get(str(chapter), {}).get(kind)
              or exercise_anchor(ex_id))  # the exercise's entry, its chapter's, its own section
    title = section_title(lesson, anchor, ex_id if anchor == exercise_anchor(ex_id) else None) \
        or section_title(lesson, exercise_anchor(ex_id), ex_id)
    where = f'{shown_lesson}, "{title}"' if title else shown_lesson
    return f"The largest gap is {GAP_WORDS[kind]}: {why}. Read {where}."


def advice(mine: Summary, ref: Summary | None, ex_id: str, chapter: int, lesson: Path,
           shown_lesson: str, table: dict[str, dict[str, str]] | None = None) -> str:
    found = gaps(mine, ref)
    if not mine.kernels:
        return ("No kernel of your code was profiled: did the benchmark call it? (Run "
                "tools/grade on the exercise first: its tests must pass.)")
    if not found or found[0][0] < 0.03:
        if ref is None:
            return "Nothing stands out: your kernels use the memory and the SMs well on these measures."
        return ("Your kernels match the reference on every measure here; compare the time per call "
                "and the number of launches.")
    _, kind, why = found[0]
    return pointer(kind, why, ex_id, chapter, lesson, shown_lesson, table)


# ---------------------------------------------------------------------------------------------
# Running ncu

def find_ncu() -> str:
    """The ncu on PATH, else under /usr/local/cuda*/bin; ProfileError when there is none."""
    exe = shutil.which("ncu")
    if exe is None:
        for cand in sorted(Path("/usr/local").glob("cuda*/bin/ncu"), reverse=True):
            if cand.is_file():
                return str(cand)
        raise ProfileError("tools/grade --profile needs Nsight Compute's command line, ncu, and it is "
                           "not on PATH (nor in /usr/local/cuda*/bin). Install Nsight Compute (it comes "
                           "with the CUDA toolkit) and put its folder on PATH.")
    return exe


def permission_problem(output: str) -> str | None:
    """The message to print when ncu could not read the GPU's performance counters."""
    if any(m in output for m in PERMISSION_MARKERS):
        return ("tools/grade --profile: ncu may not read the GPU's performance counters on this "
                "machine (ERR_NVGPUCTRPERM). Run it as root (sudo), or let every user profile: "
                "load the driver with NVreg_RestrictProfilingToAdminUsers=0 (see "
                "https://developer.nvidia.com/ERR_NVGPUCTRPERM).")
    return None


def ncu_command(ncu: str, report: Path, bench: Path, bench_filter: str, out_json: Path,
                metrics: bool = True) -> list[str]:
    """The profiling run: the sections, and (metrics=True) the metrics they may lack."""
    cmd = [ncu, "--target-processes", "all", "--export", str(report), "--force-overwrite"]
    for s in SECTIONS:
        cmd += ["--section", s]
    if metrics:
        cmd += ["--metrics", ",".join(METRICS)]
    cmd += [str(bench), f"--benchmark_filter={bench_filter}", "--benchmark_repetitions=1",
            "--benchmark_min_time=0.000000001", f"--benchmark_out={out_json}",
            "--benchmark_out_format=json"]
    return cmd


def import_command(ncu: str, report: Path) -> list[str]:
    return [ncu, "--import", str(report), "--page", "raw", "--csv", "--print-units", "base"]


@dataclass
class Side:
    label: str
    bench: Path
    runner: Path


def profile_side(side: Side, ncu: str, bench_filter: str, benchmark: str, n: int | None,
                 env: dict[str, str], timeout: float, run=subprocess.run) -> Summary:
    """ncu over one benchmark program; its exercise kernels summarized."""
    from . import bench as gb

    with tempfile.TemporaryDirectory(prefix="cudalab-profile-") as tmp:
        report = Path(tmp) / "profile.ncu-rep"
        out_json = Path(tmp) / "bench.json"
        full_env = dict(env) | {"CUDALAB_RUNNER": str(side.runner),
                                "CUDALAB_RUNNER_LOG": str(Path(tmp) / "runner.log")}
        full_env.pop("CUDALAB_RUNNER_PREFIX", None)  # no sandbox: ncu must reach the runner
        for metrics in (True, False):
            try:
                p = run(ncu_command(ncu, Path(tmp) / "profile", side.bench, bench_filter, out_json, metrics),
                        capture_output=True, text=True, timeout=timeout, env=full_env)
            except subprocess.TimeoutExpired:
                raise ProfileError(f"tools/grade --profile: ncu ran past {timeout:g} s on {side.bench.name}")
            output = (p.stdout or "") + (p.stderr or "")
            # an ncu that does not know one of the extra metrics: the sections' own are enough
            if report.exists() or permission_problem(output) or "metric" not in output.lower():
                break
        why = permission_problem(output)
        if why:
            raise ProfileError(why)
        if not report.exists():
            tail = "\n".join(output.splitlines()[-15:])
            raise ProfileError(f"tools/grade --profile: ncu wrote no report for {side.bench.name} "
                               f"(exit {p.returncode}):\n{tail}")
        q = run(import_command(ncu, report), capture_output=True, text=True, timeout=timeout, env=full_env)
        kernels = parse_csv(q.stdout or "")
        data = gb.parse_document(out_json.read_text(errors="replace")) if out_json.is_file() else None
    copy = gb.copy_bandwidth_gbps(data) if data else None
    calls = 2  # the warm-up call and one timed call (time_runs)
    if data:
        for e in data.get("benchmarks", []):
            if gb.plain_name(gb.run_name_of(e)) == gb.plain_name(benchmark) and \
                    isinstance(e.get("iterations"), int) and e["iterations"] > 0:
                calls = e["iterations"] + 1
                break
    return summarize(side.label, exercise_kernels(kernels), n, calls, copy)


def report_text(ex_id: str, slug: str, benchmark: str, mine: Summary, ref: Summary | None,
                advice_text: str, note: str = "") -> str:
    head = f"{ex_id} {slug}: Nsight Compute profile of {benchmark} (per call; one timed call after the warm-up)"
    out = [head, "", side_by_side(mine, ref), ""]
    if note:
        out += [note, ""]
    out.append(advice_text)
    return "\n".join(out) + "\n"


def dumps(s: Summary) -> str:
    """A summary as JSON (for tools and tests)."""
    d = dict(s.__dict__)
    d["copy_share"] = s.copy_share
    return json.dumps(d, indent=2)
