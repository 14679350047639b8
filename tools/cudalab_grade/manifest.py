"""Reading chapters/*/exercises.toml and choosing exercises from selectors."""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path


class UsageError(Exception):
    """A mistake on the command line: printed as it is, exit code 2."""


class ManifestError(UsageError):
    """A manifest the tools cannot use (a key of the wrong type or out of range): printed as it
    is, exit code 2, naming the file, the exercise and the key."""


# A baseline that runs on the host names itself by its first word: cpu_ (the course's CPU
# reference), std_ (the C++ standard library) or boost_ (Boost) (docs/guides/contributing.md,
# "Benchmarks" and "The manifest").
HOST_BASELINE = re.compile(r"^(cpu|std|boost)_[a-z0-9_]*/")


def is_host_baseline(name: str) -> bool:
    """Whether a baseline benchmark runs on the host (its name starts with cpu_, std_ or boost_)."""
    return HOST_BASELINE.match(name) is not None


@dataclass(frozen=True)
class Calibration:
    """A host baseline's time on one machine, the calibration machine, against which a speed
    is scored wherever it is graded (grading.run_perf; docs/guides/grading.md, "How sure a
    speed is"): a host CPU's speed must not decide a student's points."""
    baseline_ns: float   # the host baseline's median time per call there
    copy_gbps: float     # that machine's device copy bandwidth, as the benchmark JSON reports it
    device: str          # its GPU ("NVIDIA H100 80GB HBM3")
    host: str            # its host CPU, free text (the model name of /proc/cpuinfo)


CALIBRATION_KEYS = {"baseline_ns": "a number > 0", "copy_gbps": "a number > 0",
                    "device": "a non-empty string", "host": "a non-empty string"}


def calibration(value, baseline: str, where: str) -> Calibration:
    """[exercise.perf.calibration] (or the inline table `calibration = {...}`) checked: a table
    of exactly CALIBRATION_KEYS, each of its type and range, under a host baseline only.
    Raises ManifestError naming `where` (file and exercise) and the key."""
    key = f"{where}: perf.calibration"
    if not is_host_baseline(baseline):
        raise ManifestError(f"{key}: only a host baseline (cpu_, std_, boost_) is calibrated; "
                            f"{baseline} runs on the GPU, in the same run as the exercise")
    if not isinstance(value, dict):
        raise ManifestError(f"{key} must be a table (baseline_ns, copy_gbps, device, host)")
    unknown = sorted(set(value) - set(CALIBRATION_KEYS))
    if unknown:
        raise ManifestError(f"{key}: unknown key(s) {', '.join(unknown)} "
                            f"(known: {', '.join(CALIBRATION_KEYS)})")
    for name, kind in CALIBRATION_KEYS.items():
        if name not in value:
            raise ManifestError(f"{key}.{name} is missing: {kind}")
        v = value[name]
        if kind.startswith("a number"):
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0
        else:
            ok = isinstance(v, str) and bool(v.strip())
        if not ok:
            raise ManifestError(f"{key}.{name} must be {kind} (got {v!r})")
    return Calibration(float(value["baseline_ns"]), float(value["copy_gbps"]),
                       value["device"].strip(), value["host"].strip())


# The GPU every speed target was set on (docs/guides/grading.md, "A target on another GPU"), by
# the name the benchmark reports (bench_main.cu's context `device`, cudaDeviceProp::name): every
# [exercise.perf.reference] table lists it, and a target means the same on another GPU listed
# there once scaled by the reference solution's ratio on it over its ratio here.
CALIBRATION_GPU = "NVIDIA H100 80GB HBM3"
CALIBRATION_GPU_SHORT = "H100"  # how a reason names it, to keep a student's line short
# Set to 1, the grader measures the reference solution's speed in the same run on every GPU,
# listed in the table or not, and moves the target with it (grading.run_perf).
MEASURE_REFERENCE_ENV = "CUDALAB_MEASURE_REFERENCE"


def gpu_key(name: str) -> str:
    """A GPU's name as the reference tables match it: runs of whitespace as one space, case
    folded, nothing else; "NVIDIA H100 PCIe" is not "NVIDIA H100 80GB HBM3"."""
    return " ".join(name.split()).casefold()


def reference(value, where: str) -> tuple[tuple[str, float], ...]:
    """[exercise.perf.reference] checked: a table of GPU name = the reference solution's ratio on
    that GPU (a number > 0), each GPU once (by gpu_key), CALIBRATION_GPU among them. Returns the
    (name, ratio) pairs in the manifest's order. Raises ManifestError naming `where` and the key."""
    key = f"{where}: perf.reference"
    if not isinstance(value, dict) or not value:
        raise ManifestError(f'{key} must be a table of "GPU name" = the reference solution\'s ratio '
                            f'on it, {CALIBRATION_GPU!r} among them')
    seen: dict[str, str] = {}
    for name, ratio in value.items():
        if not name.strip():
            raise ManifestError(f"{key}: a GPU name must not be empty")
        ok = (isinstance(ratio, (int, float)) and not isinstance(ratio, bool)
              and math.isfinite(ratio) and ratio > 0)
        if not ok:
            raise ManifestError(f"{key}.{name!r} must be a number > 0 (got {ratio!r})")
        if gpu_key(name) in seen:
            raise ManifestError(f"{key} lists {name!r} twice (also as {seen[gpu_key(name)]!r})")
        seen[gpu_key(name)] = name
    if gpu_key(CALIBRATION_GPU) not in seen:
        raise ManifestError(f"{key} has no ratio for the calibration GPU, {CALIBRATION_GPU!r}: the "
                            "target was set there, and every other GPU's ratio is read against it")
    return tuple((" ".join(name.split()), float(ratio)) for name, ratio in value.items())


@dataclass(frozen=True)
class Target:
    """The speed target of one run (Perf.target_on; docs/guides/grading.md, "A target on another
    GPU")."""
    ratio: float                  # the target scored against on this GPU
    calibration: float            # the manifest's target, set on CALIBRATION_GPU
    scale: float | None           # the reference's ratio on this GPU over on CALIBRATION_GPU;
                                  # None: the exercise has no reference ratio for this GPU
    device: str | None            # the run's GPU, as the benchmark named it
    measured: float | None = None  # the reference's ratio measured in this run (target_measured),
                                   # None: scale, if any, is the manifest's table's

    @property
    def listed(self) -> bool:
        """Whether the exercise's reference table lists this GPU (then a calibrated host
        baseline's time is not scaled by the copy bandwidths)."""
        return self.scale is not None


@dataclass(frozen=True)
class Perf:
    benchmark: str
    baseline: str
    ratio: float
    points: int
    # the largest ratio believed (bench.implausible); None: bench.PLAUSIBLE_FACTOR x ratio
    max_plausible_ratio: float | None = None
    # refuse a speed whose fewest bytes per call move faster than the device's copy bandwidth
    bandwidth_check: bool = True
    # a few words printed after the target in the lesson's exercise table (tools/make-tables)
    note: str = ""
    # a host baseline's time on the calibration machine: the speed is scored against it
    # (grading.run_perf), the baseline measured in the run is information only; None: the ratio
    # measured in the run counts
    calibration: Calibration | None = None
    # the reference solution's ratio on each GPU it was graded on, CALIBRATION_GPU first
    # ([exercise.perf.reference]); () where none was recorded: the target holds on every GPU
    reference: tuple[tuple[str, float], ...] = ()

    def reference_on(self, device: str | None) -> float | None:
        """The reference solution's ratio on `device` (matched by gpu_key), or None when the
        table does not list it (or the device is unknown)."""
        if not device:
            return None
        return next((r for name, r in self.reference if gpu_key(name) == gpu_key(device)), None)

    def target_on(self, device: str | None) -> Target:
        """The target on `device`: the manifest's, times the reference's ratio on it over its
        ratio on CALIBRATION_GPU (3 significant digits), where the table lists both; else the
        manifest's target unchanged, with scale None."""
        return self._moved(device, self.reference_on(device), None)

    def target_measured(self, device: str | None, here: float) -> Target:
        """The target on `device` from the reference solution's ratio `here` measured on it in the
        same run (grading.run_perf, on a GPU the table leaves out or with MEASURE_REFERENCE_ENV):
        the manifest's target times `here` over the table's ratio on CALIBRATION_GPU (3
        significant digits); the manifest's target unchanged, scale None, where the table has no
        ratio for CALIBRATION_GPU or `here` is not a number > 0."""
        return self._moved(device, here, here)

    def _moved(self, device: str | None, here: float | None, measured: float | None) -> Target:
        """The manifest's target times `here` over the reference's ratio on CALIBRATION_GPU (3
        significant digits; unchanged at a scale of 1); unchanged, scale None, without both."""
        there = self.reference_on(CALIBRATION_GPU)
        if here is None or there is None or not (math.isfinite(here) and here > 0):
            return Target(self.ratio, self.ratio, None, device)
        scale = here / there
        ratio = self.ratio if scale == 1.0 else float(f"{self.ratio * scale:.3g}")
        return Target(ratio, self.ratio, scale, device, measured)


@dataclass(frozen=True)
class Exercise:
    id: str
    slug: str
    title: str
    file: str
    chapter_dir: str
    chapter_number: int
    test_filter: str
    points: int
    forbid: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()
    perf: Perf | None = None
    # file name of the instructor's hidden test suite, looked up in --hidden-tests DIR:
    # <slug>_hidden_test.cu unless the manifest says otherwise (CMake looks for that name)
    hidden_test: str | None = None
    # the API header, relative to the chapter directory; its stem is the topic (reduce.cuh: reduce)
    header: str = ""
    # the fully qualified host function (default: cudalab::<topic>::<slug>)
    function: str = ""
    # the cudalab_add_exercises group of the chapter's CMakeLists.txt whose baselines its
    # benchmark links (default: the topic; CMake reads the same key)
    group: str = ""
    # slugs of earlier exercises of the chapter whose functions this one calls: its runner
    # links their reference solutions (solutions/), or the student's own where the course has
    # none (the student edition); CMake reads the same key
    uses: tuple[str, ...] = ()
    # the quick sanitizer pass's bounds ([exercise.quick_sanitizer]): the largest size
    # (None: grading.QUICK_MAX_N), gtest patterns of tests it leaves to the plain run, and
    # those it leaves to the plain run under racecheck only (memcheck and synccheck keep them)
    quick_max_n: int | None = None
    quick_skip: tuple[str, ...] = ()
    quick_racecheck_skip: tuple[str, ...] = ()
    # the device profile (DEVICE_PROFILES) the default grading also runs the tests under, at the
    # quick pass's sizes, after they pass (grading.run_small_gpu_pass); "" for none. Set where
    # the exercise's launches depend on the device's limits (shared memory per block, ...)
    small_gpu: str = ""

    def quick_skipped(self, tool: str = "") -> tuple[str, ...]:
        """The gtest patterns the quick sanitizer pass leaves out under `tool`."""
        return self.quick_skip + (self.quick_racecheck_skip if tool == "racecheck" else ())

    def quick_filter(self, tool: str = "") -> str:
        """The gtest filter of the quick sanitizer pass under `tool`: the exercise's tests but
        quick_skipped(tool)."""
        skip = self.quick_skipped(tool)
        return self.test_filter + ("-" + ":".join(skip) if skip else "")

    def source(self, implementation: str) -> str:
        """Path of the graded source, relative to the repository root."""
        top = "solutions" if implementation == "solution" else "starter"
        return f"{top}/{self.chapter_dir}/{self.file}"

    def test_target(self, implementation: str) -> str:
        """The checker: the tests, which call the student's code in the runner."""
        return f"{self.slug}_test_{implementation}"

    def runner_target(self, implementation: str) -> str:
        """The runner: the program that holds the student's code (cudalab/test/remote.hpp)."""
        return f"{self.slug}_runner_{implementation}"

    def bench_target(self, implementation: str) -> str:
        return f"{self.slug}_bench_{implementation}"

    def hidden_target(self, implementation: str) -> str:
        """The program built from the hidden test suite (CMake: CUDALAB_HIDDEN_TESTS_DIR)."""
        return f"{self.slug}_hidden_test_{implementation}"


@dataclass(frozen=True)
class Chapter:
    number: int
    dir: str
    title: str
    exercises: tuple[Exercise, ...] = field(default=())
    lesson: str = "README.md"    # relative to chapters/<dir>/


def camel(name: str) -> str:
    """'sum_shared_tree' -> 'SumSharedTree'."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def topic(header: str) -> str:
    """The topic of an API header: 'include/cudalab/reduce.cuh' -> 'reduce' (the namespace
    cudalab::reduce and the test suites' prefix Reduce)."""
    return Path(header).name.split(".")[0] if header else ""


def defaults(slug: str, header: str) -> dict[str, str]:
    """The value of each derived key when an [[exercise]] entry leaves it out
    (docs/guides/contributing.md, "Names"): the file is <slug>.cu, the function
    cudalab::<topic>::<slug> and the test filter *<Topic><Slug>*, the suites' prefix."""
    t = topic(header)
    return {"file": f"{slug}.cu",
            "function": f"cudalab::{t}::{slug}" if t else slug,
            "test_filter": f"*{camel(t)}{camel(slug)}*"}


def uses(value, earlier: list[Exercise], where: str) -> tuple[str, ...]:
    """The `uses` key checked: a list of slugs of exercises listed before this one in the
    chapter, each once, that holds what each of them uses in turn (CMake links the list as it
    stands, without following it). Raises ManifestError naming `where` and the key."""
    key = f"{where}: uses"
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ManifestError(f"{key} must be a list of slugs of earlier exercises of the chapter")
    before = {e.slug: e for e in earlier}
    for slug in value:
        if slug not in before:
            raise ManifestError(f"{key}: {slug!r} is not an exercise listed before this one in the "
                                f"chapter (earlier: {', '.join(before) or 'none'})")
        missing = [u for u in before[slug].uses if u not in value]
        if missing:
            raise ManifestError(f"{key}: {slug} uses {', '.join(missing)}, which must be listed too")
    if len(set(value)) != len(value):
        raise ManifestError(f"{key} names an exercise twice")
    return tuple(value)


def uses_of(ex: Exercise, chapters: list[Chapter]) -> list[Exercise]:
    """The exercises whose functions `ex` calls (its `uses`), in the manifest's order."""
    chapter = next((c for c in chapters if c.dir == ex.chapter_dir), None)
    if chapter is None:
        return []
    return [e for e in chapter.exercises if e.slug in ex.uses]


GTEST_PATTERN = re.compile(r"[A-Za-z0-9_/.*?]+")

# The device profiles of chapters/common/include/cudalab/device.cuh (CUDALAB_DEVICE_PROFILE), in
# its table's order: the smallest GPU students own first.
DEVICE_PROFILES = ("t4", "rtx3090", "rtx4090", "l4", "rtx5090", "a100", "h100", "b200")


def small_gpu(value, where: str) -> str:
    """The exercise's `small_gpu` key checked: "" (absent) or the name of a device profile."""
    if value in (None, ""):
        return ""
    if not isinstance(value, str) or value not in DEVICE_PROFILES:
        raise ManifestError(f"{where}: small_gpu must name a device profile "
                            f"({', '.join(DEVICE_PROFILES)}), not {value!r}")
    return value


QUICK_KEYS = ("max_n", "skip", "racecheck_skip")


def quick_sanitizer(value, where: str) -> tuple[int | None, tuple[str, ...], tuple[str, ...]]:
    """The [exercise.quick_sanitizer] table checked: (max_n, skip, racecheck_skip). max_n is
    a size cap (an integer >= 1) for the exercises whose battery, even at the default cap,
    runs past the quick pass's time under racecheck; skip lists gtest name patterns (letters,
    digits, _ / . * ?) of the costly cases that pass leaves to the plain run of the tests;
    racecheck_skip, patterns it leaves out under racecheck alone (racecheck's cost grows with
    every shared-memory access, memcheck's and synccheck's much less: they keep those cases).
    Raises ManifestError naming `where` and the key."""
    key = f"{where}: quick_sanitizer"
    if not isinstance(value, dict):
        raise ManifestError(f"{key} must be a table ({', '.join(QUICK_KEYS)})")
    unknown = sorted(set(value) - set(QUICK_KEYS))
    if unknown:
        raise ManifestError(f"{key}: unknown key(s) {', '.join(unknown)} (known: {', '.join(QUICK_KEYS)})")
    max_n = value.get("max_n")
    if max_n is not None and (isinstance(max_n, bool) or not isinstance(max_n, int) or max_n < 1):
        raise ManifestError(f"{key}.max_n must be an integer >= 1, not {max_n!r}")
    lists = []
    for name in ("skip", "racecheck_skip"):
        patterns = value.get(name, [])
        if not isinstance(patterns, list) or not all(isinstance(v, str) and GTEST_PATTERN.fullmatch(v)
                                                     for v in patterns):
            raise ManifestError(f"{key}.{name} must be a list of gtest name patterns "
                                f"(letters, digits, _ / . * ?), not {patterns!r}")
        lists.append(tuple(patterns))
    return max_n, lists[0], lists[1]


def load_chapter(path: Path) -> Chapter:
    with path.open("rb") as f:
        data = tomllib.load(f)
    ch = data["chapter"]
    number, cdir = int(ch["number"]), str(ch.get("dir", path.parent.name))
    exercises = []
    for ex in data.get("exercise", []):
        perf = None
        if "perf" in ex:
            p = ex["perf"]
            mp = p.get("max_plausible_ratio")
            cal = (calibration(p["calibration"], str(p["baseline"]), f"{path}, exercise {ex.get('id')}")
                   if "calibration" in p else None)
            ref = (reference(p["reference"], f"{path}, exercise {ex.get('id')}")
                   if "reference" in p else ())
            perf = Perf(str(p["benchmark"]), str(p["baseline"]), float(p["ratio"]), int(p["points"]),
                        float(mp) if mp is not None else None, bool(p.get("bandwidth_check", True)),
                        str(p.get("note", "")), cal, ref)
        slug, header = str(ex["slug"]), str(ex.get("header", ""))
        where = f"{path}, exercise {ex.get('id')}"
        quick_max_n, quick_skip, quick_racecheck_skip = quick_sanitizer(ex.get("quick_sanitizer", {}), where)
        derived = {k: str(ex.get(k, v)) for k, v in defaults(slug, header).items()}
        exercises.append(Exercise(
            id=str(ex["id"]), slug=slug, title=str(ex["title"]), file=derived["file"],
            chapter_dir=cdir, chapter_number=number, test_filter=derived["test_filter"],
            points=int(ex["points"]), forbid=tuple(ex.get("forbid", [])),
            hints=tuple(ex.get("hints", [])), perf=perf,
            hidden_test=str(ex.get("hidden_test", f"{slug}_hidden_test.cu")),
            header=header, function=derived["function"], group=str(ex.get("group", topic(header))),
            uses=uses(ex.get("uses", []), exercises, where),
            quick_max_n=quick_max_n, quick_skip=quick_skip, quick_racecheck_skip=quick_racecheck_skip,
            small_gpu=small_gpu(ex.get("small_gpu"), where)))
    return Chapter(number, cdir, str(ch.get("title", cdir)), tuple(exercises),
                   str(ch.get("lesson", "README.md")))


def load_all(root: Path) -> list[Chapter]:
    """Every chapter of the course, in chapter order."""
    chapters = [load_chapter(p) for p in sorted((root / "chapters").glob("*/exercises.toml"))]
    return sorted(chapters, key=lambda c: c.number)


def valid_selectors(chapters: list[Chapter]) -> str:
    lines = ["  all"]
    for c in chapters:
        lines.append(f"  {c.number} or {c.dir}")
        for e in c.exercises:
            lines.append(f"    {e.id} or {e.slug}")
    return "\n".join(lines)


def find_exercise(chapters: list[Chapter], key: str) -> Exercise:
    for c in chapters:
        for e in c.exercises:
            if key in (e.id, e.slug):
                return e
    raise UsageError(f"no exercise '{key}'. Valid exercises:\n{valid_selectors(chapters)}")


def select(chapters: list[Chapter], selectors: list[str]) -> list[Exercise]:
    """The exercises named by selectors, each once, in course order."""
    wanted: set[str] = set()
    for sel in selectors or ["all"]:
        hit = [e for c in chapters for e in c.exercises
               if sel == "all" or sel in (e.id, e.slug, c.dir)
               or (sel.isdigit() and int(sel) == c.number)]
        if not hit:
            raise UsageError(f"unknown selector '{sel}'. Valid selectors:\n{valid_selectors(chapters)}")
        wanted.update(e.id for e in hit)
    return [e for c in chapters for e in c.exercises if e.id in wanted]
