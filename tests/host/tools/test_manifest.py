"""Checks every chapters/*/exercises.toml against the tree (docs/guides/contributing.md, "The manifest").

A file, a suite, a benchmark and a manifest entry of the same exercise share its slug.
"""
from __future__ import annotations

import fnmatch
import re
import sys
import tomllib
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
from cudalab_grade import manifest  # noqa: E402
SLUG = re.compile(r"^[a-z][a-z0-9_]*$")
ID = re.compile(r"^(\d+)\.(\d+)$")

CHAPTER_KEYS = {"number": int, "dir": str, "title": str}
EXERCISE_KEYS = {"id": str, "slug": str, "title": str, "header": str, "points": int, "hints": list,
                 "perf": dict}
# file, function and test_filter default from the slug (manifest.defaults)
OPTIONAL_EXERCISE_KEYS = {"forbid": list, "hidden_test": str, "file": str, "function": str,
                          "test_filter": str, "group": str, "uses": list, "quick_sanitizer": dict,
                          "small_gpu": str}
PERF_KEYS = {"benchmark": str, "baseline": str, "ratio": (int, float), "points": int}

# The speed-target rule (docs/guides/contributing.md, "The manifest"): the ratio is the baseline's time
# over the exercise's, both from the same run. Against a GPU baseline (CUB, a copy, a GPU kernel) a
# target above 2 is a typo. A host baseline, named cpu_ (the course's CPU reference), std_ (the C++
# standard library) or boost_ (Boost), runs on the host's cores, and a target against it is a speed-up
# over the CPU of up to 100 (chapter 6: 10x to 30x one core's Boost.Graph Dijkstra; chapter 7: 100x the
# CPU builder). A baseline reports the time of the work its name states, never one scaled to move a
# target: the target's ratio holds the factor. Only a host baseline may carry a calibration (its time
# on the calibration machine, against which the grader scores the speed); manifest.calibration checks
# its keys.
MAX_RATIO_DEVICE_BASELINE = 2
MAX_RATIO_HOST_BASELINE = 100
is_host_baseline = manifest.is_host_baseline  # the grader's own test (cpu_, std_ or boost_)


def max_ratio(baseline: str) -> int:
    """The largest speed target allowed against this baseline."""
    return MAX_RATIO_HOST_BASELINE if is_host_baseline(baseline) else MAX_RATIO_DEVICE_BASELINE


camel = manifest.camel

# The [[exercise]] keys that differ from their default (manifest.defaults), each with its reason
# beside the key in the manifest.
DERIVED_EXCEPTIONS = {
    ("1.9", "function"),     # segmented_inclusive_scan and segmented_exclusive_scan, one slug
    ("3.5", "function"),     # ring_queue_enqueue and ring_queue_dequeue, one slug
}


def manifests() -> list[tuple[Path, dict]]:
    out = []
    for path in sorted((ROOT / "chapters").glob("*/exercises.toml")):
        with path.open("rb") as f:
            out.append((path, tomllib.load(f)))
    return out


class ManifestTest(unittest.TestCase):
    def setUp(self):
        self.manifests = manifests()
        # the entries as the tools see them, defaults applied (manifest.load_all)
        self.loaded = {e.id: e for c in manifest.load_all(ROOT) for e in c.exercises}

    def test_there_are_manifests(self):
        self.assertTrue(self.manifests, "no chapters/*/exercises.toml")

    def test_chapter_table(self):
        for path, data in self.manifests:
            with self.subTest(manifest=str(path.relative_to(ROOT))):
                ch = data.get("chapter")
                self.assertIsInstance(ch, dict, "no [chapter] table")
                for key, kind in CHAPTER_KEYS.items():
                    self.assertIsInstance(ch.get(key), kind, f"[chapter] {key} must be {kind.__name__}")
                self.assertEqual(ch["dir"], path.parent.name)
                self.assertTrue(ch["dir"].startswith(f"{ch['number']:02d}-"),
                                f"dir {ch['dir']} does not start with the chapter number {ch['number']:02d}")
                self.assertTrue(data.get("exercise"), "no [[exercise]] entries")

    def test_exercise_keys_and_types(self):
        for path, data in self.manifests:
            for ex in data.get("exercise", []):
                with self.subTest(manifest=path.parent.name, exercise=ex.get("id")):
                    for key, kind in EXERCISE_KEYS.items():
                        self.assertIn(key, ex)
                        self.assertIsInstance(ex[key], kind, f"{key} must be {kind.__name__}")
                    for key, kind in OPTIONAL_EXERCISE_KEYS.items():
                        if key in ex:
                            self.assertIsInstance(ex[key], kind)
                    if "hidden_test" in ex:  # CMake finds it by this name (CUDALAB_HIDDEN_TESTS_DIR)
                        self.assertEqual(ex["hidden_test"], f"{ex['slug']}_hidden_test.cu")
                    for item in ex.get("forbid", []):
                        self.assertIsInstance(item, str)
                    self.assertRegex(ex["slug"], SLUG)
                    self.assertGreater(ex["points"], 0)
                    loaded = self.loaded[ex["id"]]
                    self.assertTrue(loaded.function.startswith("cudalab::"), loaded.function)
                    self.assertEqual(loaded.file, ex["slug"] + ".cu")
                    self.assertGreaterEqual(len(ex["hints"]), 2, "at least 2 hints")
                    for hint in ex["hints"]:
                        self.assertIsInstance(hint, str)
                        self.assertTrue(hint.strip())
                    perf = ex["perf"]
                    for key, kind in PERF_KEYS.items():
                        self.assertIn(key, perf, f"perf.{key}")
                        self.assertIsInstance(perf[key], kind, f"perf.{key}")
                        self.assertNotIsInstance(perf[key], bool)
                    self.assertGreater(perf["ratio"], 0)
                    limit = max_ratio(perf["baseline"])
                    self.assertLessEqual(perf["ratio"], limit,
                                         f"ratio {perf['ratio']} against {perf['baseline']}: at most {limit} against "
                                         f"a {'host' if is_host_baseline(perf['baseline']) else 'GPU'} baseline")
                    self.assertFalse(is_host_baseline(perf["benchmark"]),
                                     f"benchmark {perf['benchmark']}: cpu_, std_ and boost_ name host baselines")
                    self.assertGreaterEqual(perf["points"], 0)
                    self.assertTrue(perf["benchmark"].startswith(ex["slug"] + "/"),
                                    f"benchmark {perf['benchmark']} does not start with {ex['slug']}/")
                    if "calibration" in perf:  # manifest.calibration checked its keys when it loaded
                        self.assertTrue(is_host_baseline(perf["baseline"]), "a calibration needs a host baseline")
                        self.assertIsNotNone(loaded.perf.calibration)

    def test_ids_and_slugs_unique_and_numbered(self):
        ids, slugs = {}, {}
        for path, data in self.manifests:
            number = data.get("chapter", {}).get("number")
            for ex in data.get("exercise", []):
                with self.subTest(manifest=path.parent.name, exercise=ex.get("id")):
                    m = ID.match(str(ex.get("id")))
                    self.assertIsNotNone(m, f"id {ex.get('id')!r} is not N.M")
                    self.assertEqual(int(m.group(1)), number, f"id {ex['id']} not in chapter {number}")
                    self.assertNotIn(ex["id"], ids, f"id {ex['id']} also in {ids.get(ex['id'])}")
                    self.assertNotIn(ex["slug"], slugs, f"slug {ex['slug']} also in {slugs.get(ex['slug'])}")
                    ids[ex["id"]] = path.parent.name
                    slugs[ex["slug"]] = path.parent.name

    def test_files_exist(self):
        for path, data in self.manifests:
            d = data["chapter"]["dir"]
            chapter = path.parent
            cmake = (chapter / "CMakeLists.txt").read_text() if (chapter / "CMakeLists.txt").exists() else ""
            for ex in data.get("exercise", []):
                with self.subTest(manifest=d, exercise=ex.get("id")):
                    slug = ex["slug"]
                    file = self.loaded[ex["id"]].file
                    for rel in (f"solutions/{d}/{file}", f"starter/{d}/{file}",
                                f"tests/{d}/{slug}_test.cu", f"chapters/{d}/bench/{slug}_bench.cu",
                                f"chapters/{d}/{ex['header']}"):
                        self.assertTrue((ROOT / rel).is_file(), f"{rel} is missing")
                    # CMake reads the slugs from the manifest (cmake/CudalabExercise.cmake) and adds
                    # each to the cudalab_add_exercises call of its group
                    group = self.loaded[ex["id"]].group
                    self.assertRegex(cmake, rf"\bGROUP\s+{re.escape(group)}(?=[\s)])",
                                     f"{slug}'s group {group} is not a GROUP of chapters/{d}/CMakeLists.txt")

    def test_suite_name_matches_filter(self):
        for path, data in self.manifests:
            d = data["chapter"]["dir"]
            for ex in data.get("exercise", []):
                with self.subTest(manifest=d, exercise=ex.get("id")):
                    loaded = self.loaded[ex["id"]]
                    parts = loaded.function.split("::")
                    self.assertGreaterEqual(len(parts), 3, f"function {loaded.function} is not cudalab::<topic>::name")
                    topic = parts[1]
                    self.assertEqual(Path(ex["header"]).name, f"{topic}.cuh",
                                     f"header {ex['header']} is not the topic's {topic}.cuh")
                    suite = camel(topic) + camel(ex["slug"])
                    self.assertTrue(fnmatch.fnmatchcase(suite, loaded.test_filter),
                                    f"test_filter {loaded.test_filter} does not select suite {suite}")
                    test = ROOT / "tests" / d / f"{ex['slug']}_test.cu"
                    if test.is_file():
                        self.assertRegex(test.read_text(), rf"\b{suite}\b",
                                         f"suite {suite} not defined in {test.relative_to(ROOT)}")

    def test_derived_keys(self):
        """file, function and test_filter follow from the slug and the header's topic
        (manifest.defaults); an entry states one only where it differs (DERIVED_EXCEPTIONS)."""
        for path, data in self.manifests:
            for ex in data.get("exercise", []):
                derived = manifest.defaults(ex["slug"], ex.get("header", ""))
                for key, value in derived.items():
                    with self.subTest(manifest=path.parent.name, exercise=ex["id"], key=key):
                        if (ex["id"], key) in DERIVED_EXCEPTIONS:
                            self.assertIn(key, ex)
                            self.assertNotEqual(ex[key], value,
                                                f"{key} is its default: drop it, and from DERIVED_EXCEPTIONS")
                        else:
                            self.assertNotIn(key, ex, f"leave {key} out: it is {value!r} by default, and an "
                                             "exercise that differs follows the naming rule "
                                             "(docs/guides/contributing.md, Names) or is listed in DERIVED_EXCEPTIONS")

    def test_loader_applies_the_defaults(self):
        exercises = {e.id: e for c in manifest.load_all(ROOT) for e in c.exercises}
        self.assertEqual(exercises["1.2"].file, "sum_shared_tree.cu")
        self.assertEqual(exercises["1.2"].function, "cudalab::reduce::sum_shared_tree")
        self.assertEqual(exercises["1.2"].test_filter, "*ReduceSumSharedTree*")
        self.assertEqual(exercises["7.1"].test_filter, "*KdtreeBoundingBox*")
        for ex_id, key in DERIVED_EXCEPTIONS:
            self.assertNotEqual(getattr(exercises[ex_id], key),
                                manifest.defaults(exercises[ex_id].slug, exercises[ex_id].header)[key])

    def test_speed_target_rule(self):
        for name in ("boost_dijkstra/grid/65536", "boost_dijkstra_one_core/int32/264346/1024",
                     "cpu_reference_build/float3/2000000", "std_stable_sort/int32/16777216"):
            with self.subTest(baseline=name):
                self.assertTrue(is_host_baseline(name))
                self.assertEqual(max_ratio(name), MAX_RATIO_HOST_BASELINE)
        for name in ("cub_reduce_sum/int32/268435456", "copy_bandwidth/int32/16777216",
                     "binary_heap_per_thread/float32/2048/1024", "atomic_same_address/int32/16777216/1",
                     "cpu/x/1", "boosted_kernel/int32/1024", "stdlib_like/int32/1024"):
            with self.subTest(baseline=name):
                self.assertFalse(is_host_baseline(name))
                self.assertEqual(max_ratio(name), MAX_RATIO_DEVICE_BASELINE)

    def test_camel(self):
        self.assertEqual(camel("reduce") + camel("sum_atomic"), "ReduceSumAtomic")


CALIBRATED = """
[chapter]
number = 9
dir = "09-demo"
title = "Demo"

[[exercise]]
id = "9.1"
slug = "alpha"
title = "Alpha"
header = "include/cudalab/demo.cuh"
points = 10
hints = ["a", "b"]
[exercise.perf]
benchmark = "alpha/grid/1024"
baseline = "{baseline}"
ratio = 20.0
points = 2
{calibration}
"""

GOOD_CALIBRATION = """[exercise.perf.calibration]
baseline_ns = 4.1e8
copy_gbps = 3005.2
device = "NVIDIA H100 80GB HBM3"
host = "Intel(R) Xeon(R) Platinum 8480+"
"""


class CalibrationKeysTest(unittest.TestCase):
    """[exercise.perf.calibration]: a host baseline's time on the calibration machine
    (docs/guides/contributing.md, "The manifest"); manifest.calibration checks it as it loads."""

    def load(self, calibration: str, baseline: str = "boost_dijkstra/grid/1024"):
        import tempfile
        with tempfile.TemporaryDirectory(prefix="test-manifest-") as tmp:
            path = Path(tmp) / "exercises.toml"
            path.write_text(CALIBRATED.format(baseline=baseline, calibration=calibration))
            return manifest.load_chapter(path).exercises[0].perf

    def test_a_table_or_an_inline_table(self):
        expected = manifest.Calibration(4.1e8, 3005.2, "NVIDIA H100 80GB HBM3", "Intel(R) Xeon(R) Platinum 8480+")
        self.assertEqual(self.load(GOOD_CALIBRATION).calibration, expected)
        inline = ('calibration = { baseline_ns = 410000000, copy_gbps = 3005.2, '
                  'device = "NVIDIA H100 80GB HBM3", host = "Intel(R) Xeon(R) Platinum 8480+" }')
        self.assertEqual(self.load(inline).calibration, expected)  # an integer time is a number too
        self.assertIsNone(self.load("").calibration)  # none: the measured ratio counts

    def test_only_under_a_host_baseline(self):
        for baseline in ("cpu_reference_build/float3/1024", "std_stable_sort/int32/1024"):
            self.assertIsNotNone(self.load(GOOD_CALIBRATION, baseline).calibration)
        with self.assertRaisesRegex(manifest.ManifestError,
                                    r"exercise 9\.1: perf\.calibration: only a host baseline .*"
                                    r"cub_reduce_sum/int32/1024 runs on the GPU"):
            self.load(GOOD_CALIBRATION, "cub_reduce_sum/int32/1024")

    def test_types_and_ranges(self):
        bad = {"baseline_ns = 0": r"perf\.calibration\.baseline_ns must be a number > 0 \(got 0\)",
               "baseline_ns = -5.0": r"baseline_ns must be a number > 0",
               'baseline_ns = "4e8"': r"baseline_ns must be a number > 0 \(got '4e8'\)",
               "baseline_ns = true": r"baseline_ns must be a number > 0 \(got True\)",
               "baseline_ns = inf": r"baseline_ns must be a number > 0",
               "copy_gbps = 0.0": r"copy_gbps must be a number > 0",
               "device = 3": r"device must be a non-empty string \(got 3\)",
               'host = "  "': r"host must be a non-empty string"}
        for line, message in bad.items():
            key = line.split(" =")[0]
            text = "\n".join(line if row.startswith(key + " ") else row
                             for row in GOOD_CALIBRATION.splitlines())
            with self.subTest(line=line), self.assertRaisesRegex(manifest.ManifestError, message):
                self.load(text)

    def test_missing_and_unknown_keys(self):
        without_host = "\n".join(r for r in GOOD_CALIBRATION.splitlines() if not r.startswith("host"))
        with self.assertRaisesRegex(manifest.ManifestError, r"perf\.calibration\.host is missing"):
            self.load(without_host)
        with self.assertRaisesRegex(manifest.ManifestError, r"unknown key\(s\) baseline_us \(known: "
                                    r"baseline_ns, copy_gbps, device, host\)"):
            self.load(GOOD_CALIBRATION + "baseline_us = 3.0\n")
        with self.assertRaisesRegex(manifest.ManifestError, r"perf\.calibration must be a table"):
            self.load('calibration = "H100"')

    def test_a_manifest_error_is_printed_as_a_usage_error(self):
        self.assertTrue(issubclass(manifest.ManifestError, manifest.UsageError))


REFERENCE = """[exercise.perf.reference]
"NVIDIA H100 80GB HBM3" = 25.0
"NVIDIA H200" = 30
"""


class ReferenceTableTest(unittest.TestCase):
    """[exercise.perf.reference]: the reference solution's ratio per GPU, against which a target
    moves to another GPU (docs/guides/grading.md, "A target on another GPU"); manifest.reference
    checks it as it loads, Perf.target_on reads it."""

    def load(self, table: str):
        import tempfile
        with tempfile.TemporaryDirectory(prefix="test-manifest-") as tmp:
            path = Path(tmp) / "exercises.toml"
            path.write_text(CALIBRATED.format(baseline="boost_dijkstra/grid/1024", calibration=table))
            return manifest.load_chapter(path).exercises[0].perf

    def test_loaded_in_order(self):
        self.assertEqual(self.load(REFERENCE).reference, (("NVIDIA H100 80GB HBM3", 25.0), ("NVIDIA H200", 30.0)))
        self.assertEqual(self.load("").reference, ())  # none: the target holds on every GPU

    def test_bad_tables_stop_with_their_key(self):
        bad = {'"NVIDIA H200" = 0': r"perf\.reference\.'NVIDIA H200' must be a number > 0 \(got 0\)",
               '"NVIDIA H200" = -1.0': r"must be a number > 0 \(got -1\.0\)",
               '"NVIDIA H200" = "fast"': r"must be a number > 0 \(got 'fast'\)",
               '"NVIDIA H200" = true': r"must be a number > 0 \(got True\)",
               '"NVIDIA H200" = nan': r"must be a number > 0",
               '"nvidia  h100 80gb hbm3" = 2.0': r"lists 'nvidia  h100 80gb hbm3' twice \(also as "
                                                  r"'NVIDIA H100 80GB HBM3'\)",
               '" " = 2.0': r"a GPU name must not be empty"}
        for line, message in bad.items():
            with self.subTest(line=line), self.assertRaisesRegex(manifest.ManifestError,
                                                                 r"exercise 9\.1: " + ".*" + message):
                self.load(REFERENCE.replace('"NVIDIA H200" = 30\n', line + "\n"))
        with self.assertRaisesRegex(manifest.ManifestError, r"perf\.reference has no ratio for the "
                                    r"calibration GPU, 'NVIDIA H100 80GB HBM3'"):
            self.load('[exercise.perf.reference]\n"NVIDIA H100 PCIe" = 25.0\n"NVIDIA H200" = 30.0\n')
        with self.assertRaisesRegex(manifest.ManifestError, r"perf\.reference must be a table"):
            self.load('reference = 25.0')
        with self.assertRaisesRegex(manifest.ManifestError, r"perf\.reference must be a table"):
            self.load('reference = {}')

    def test_the_target_moves_with_the_reference(self):
        perf = self.load(REFERENCE)  # target 20, reference 25 on the calibration GPU, 30 on an H200
        self.assertEqual(perf.target_on("NVIDIA H200"), manifest.Target(24.0, 20.0, 1.2, "NVIDIA H200"))
        self.assertEqual(perf.target_on(" nvidia h200 ").ratio, 24.0)  # whitespace and case only
        same = perf.target_on(manifest.CALIBRATION_GPU)
        self.assertEqual((same.ratio, same.scale), (20.0, 1.0))
        for other in ("NVIDIA H100 PCIe", "NVIDIA H200 NVL", "H200", None):  # no near names
            with self.subTest(device=other):
                self.assertEqual(perf.target_on(other), manifest.Target(20.0, 20.0, None, other))
                self.assertFalse(perf.target_on(other).listed)
        self.assertEqual(self.load("").target_on("NVIDIA H200"), manifest.Target(20.0, 20.0, None, "NVIDIA H200"))

    def test_every_reference_meets_its_target_on_every_gpu(self):
        """From the committed tables: every exercise records its reference solution's ratio on
        the calibration GPU, which meets its target there, and so on every GPU listed, where the
        target is scaled by that GPU's ratio. A miss is reported, never fixed by moving a target."""
        misses, missing = [], []
        for chapter in manifest.load_all(ROOT):
            for ex in chapter.exercises:
                if ex.perf is None:
                    continue
                if not ex.perf.reference:
                    missing.append(ex.id)
                for gpu, ratio in ex.perf.reference:
                    target = ex.perf.target_on(gpu).ratio
                    if ratio < target:
                        misses.append(f"{ex.id} on {gpu}: reference {ratio:g} < target {target:g}")
        self.assertEqual(missing, [], "exercises with a speed target but no [exercise.perf.reference]")
        self.assertEqual(misses, [], "reference solutions below their own target")


if __name__ == "__main__":
    unittest.main()


class HiddenTestNameTest(unittest.TestCase):
    def test_every_exercise_names_its_hidden_suite(self):
        """The grader looks for <slug>_hidden_test.cu (the manifest's key, or this default), the
        name CMake builds from CUDALAB_HIDDEN_TESTS_DIR."""
        import sys
        sys.path.insert(0, str(ROOT / "tools"))
        from cudalab_grade.manifest import load_all
        exercises = [e for c in load_all(ROOT) for e in c.exercises]
        self.assertGreater(len(exercises), 40)
        for e in exercises:
            self.assertEqual(e.hidden_test, f"{e.slug}_hidden_test.cu")


USES = """[chapter]
number = 9
dir = "09-x"
title = "x"

[[exercise]]
id = "9.1"
slug = "a"
title = "a"
header = "include/cudalab/x.cuh"
points = 1
hints = ["h", "h"]

[[exercise]]
id = "9.2"
slug = "b"
title = "b"
header = "include/cudalab/x.cuh"
points = 1
hints = ["h", "h"]
{b_uses}

[[exercise]]
id = "9.3"
slug = "c"
title = "c"
header = "include/cudalab/x.cuh"
points = 1
hints = ["h", "h"]
{c_uses}
"""


class UsesTest(unittest.TestCase):
    """`uses`: the earlier exercises whose functions an exercise calls (CMake links their
    reference solutions into its runner; the grader's object check allows the calls)."""

    def load(self, b_uses: str = "", c_uses: str = ""):
        import tempfile
        with tempfile.TemporaryDirectory(prefix="test-manifest-") as tmp:
            path = Path(tmp) / "exercises.toml"
            path.write_text(USES.format(b_uses=b_uses, c_uses=c_uses))
            return manifest.load_chapter(path)

    def test_earlier_exercises_and_what_they_use(self):
        ch = self.load('uses = ["a"]', 'uses = ["a", "b"]')
        self.assertEqual([e.uses for e in ch.exercises], [(), ("a",), ("a", "b")])
        self.assertEqual([e.id for e in manifest.uses_of(ch.exercises[2], [ch])], ["9.1", "9.2"])

    def test_bad_uses(self):
        for b, c, message in (('uses = ["c"]', "", r"9\.2: uses: 'c' is not an exercise listed before"),
                              ("", 'uses = ["b"]', r""),
                              ('uses = ["a"]', 'uses = ["b"]', r"9\.3: uses: b uses a, which must be listed too"),
                              ('uses = "a"', "", r"must be a list of slugs"),
                              ('uses = ["a", "a"]', "", r"names an exercise twice")):
            with self.subTest(b=b, c=c):
                if not message:
                    self.load(b, c)
                    continue
                with self.assertRaisesRegex(manifest.ManifestError, message):
                    self.load(b, c)

    def test_the_course_uses(self):
        loaded = {e.id: e for c in manifest.load_all(ROOT) for e in c.exercises}
        self.assertEqual(loaded["7.4"].uses, ("classify_and_count",))
        self.assertEqual(loaded["7.6"].uses, ("bounding_box", "select_splits", "classify_and_count",
                                              "segmented_split", "complete_nodes"))

    def test_the_object_check_allows_the_used_functions(self):
        from cudalab_grade import grading, source
        loaded = {e.id: e for c in manifest.load_all(ROOT) for e in c.exercises}
        given = source.contract(loaded["7.6"], ROOT).given_namespaces
        self.assertEqual(given, ("cudalab::kdtree::",))
        self.assertEqual(source.contract(loaded["7.1"], ROOT).given_namespaces, ())
        self.assertTrue(source.given_import("cudalab::kdtree::bounding_box(float3 const*, unsigned long, "
                                            "cudalab::kdtree::Box*, unsigned long*, CUstream_st*)", given))
        for other in ("cudalab::kdtree::detail::f()", "cudalab::kdtree::max_points", "system(char const*)",
                      "cudalab::kdtree::(int)"):
            self.assertFalse(source.given_import(other, given), other)
        # the report's line: the reference where the course has solutions/, else the student's own
        self.assertIn("the reference solutions of 7.1, 7.2, 7.3, 7.4, 7.5",
                      grading.linked_with(loaded["7.6"], ROOT))
        self.assertEqual(grading.linked_with(loaded["7.1"], ROOT), "")
        import tempfile, shutil
        with tempfile.TemporaryDirectory(prefix="test-uses-") as tmp:
            shutil.copytree(ROOT / "chapters/07-kdtree-large-nodes", Path(tmp) / "chapters/07-kdtree-large-nodes",
                            ignore=shutil.ignore_patterns("*.md", "bench", "reference", "include", "tools"))
            self.assertIn("your own 7.3 (this course has no reference solution of it",
                          grading.linked_with(loaded["7.4"], Path(tmp)))


class QuickSanitizerTest(unittest.TestCase):
    """[exercise.quick_sanitizer]: the quick pass's size cap and the costly cases it leaves to
    the plain run of the tests, checked when the manifest loads."""

    def load(self, table: str):
        import tempfile
        with tempfile.TemporaryDirectory(prefix="test-manifest-") as tmp:
            path = Path(tmp) / "exercises.toml"
            path.write_text(USES.format(b_uses="", c_uses="") + table)
            return manifest.load_chapter(path)

    def test_defaults_and_a_table(self):
        ch = self.load("")
        self.assertEqual([(e.quick_max_n, e.quick_skip) for e in ch.exercises], [(None, ())] * 3)
        self.assertEqual(ch.exercises[2].quick_filter(), ch.exercises[2].test_filter)
        c = self.load('[exercise.quick_sanitizer]\nmax_n = 4096\nskip = ["*Cases.Patterns", "*/n1?"]\n').exercises[2]
        self.assertEqual((c.quick_max_n, c.quick_skip), (4096, ("*Cases.Patterns", "*/n1?")))
        self.assertEqual(c.quick_filter(), c.test_filter + "-*Cases.Patterns:*/n1?")
        self.assertEqual(c.quick_racecheck_skip, ())
        # racecheck_skip: left out under racecheck alone, after the cases every tool leaves out
        c = self.load('[exercise.quick_sanitizer]\nskip = ["*Cases.Patterns"]\n'
                      'racecheck_skip = ["*Tiles/n4351", "*Tiles/n8703"]\n').exercises[2]
        self.assertEqual(c.quick_racecheck_skip, ("*Tiles/n4351", "*Tiles/n8703"))
        self.assertEqual(c.quick_filter("racecheck"),
                         c.test_filter + "-*Cases.Patterns:*Tiles/n4351:*Tiles/n8703")
        for tool in ("memcheck", "synccheck", ""):
            self.assertEqual(c.quick_filter(tool), c.test_filter + "-*Cases.Patterns")
        c = self.load('[exercise.quick_sanitizer]\nracecheck_skip = ["*Tiles/n4351"]\n').exercises[2]
        self.assertEqual((c.quick_filter("racecheck"), c.quick_filter("memcheck")),
                         (c.test_filter + "-*Tiles/n4351", c.test_filter))

    def test_bad_tables(self):
        for table, message in (("max_n = 0", r"max_n must be an integer >= 1"),
                               ("max_n = true", r"max_n must be an integer >= 1"),
                               ('max_n = "70000"', r"max_n must be an integer >= 1"),
                               ('skip = "*Cases*"', r"skip must be a list of gtest name patterns"),
                               ('skip = ["*A*:*B*"]', r"skip must be a list of gtest name patterns"),
                               ('skip = ["*A*-*B*"]', r"skip must be a list of gtest name patterns"),
                               ('racecheck_skip = "*A*"', r"racecheck_skip must be a list of gtest name patterns"),
                               ('racecheck_skip = ["*A*:*B*"]', r"racecheck_skip must be a list"),
                               ("tools = 3", r"unknown key\(s\) tools")):
            with self.subTest(table=table):
                with self.assertRaisesRegex(manifest.ManifestError, r"9\.3: quick_sanitizer" + ".*" + message):
                    self.load(f"[exercise.quick_sanitizer]\n{table}\n")

    def test_small_gpu(self):
        # the key sits in the exercise's table, before its sub-tables: the last exercise's
        ch = self.load("")
        self.assertEqual({e.small_gpu for e in ch.exercises}, {""})
        self.assertEqual(self.load('small_gpu = "t4"\n').exercises[2].small_gpu, "t4")
        for value in ('"v100"', '"T4"', "4", "true"):
            with self.subTest(value=value):
                with self.assertRaisesRegex(manifest.ManifestError, r"9\.3: small_gpu must name a device profile"):
                    self.load(f"small_gpu = {value}\n")

    def test_every_launch_sized_from_the_device_is_graded_on_a_small_one(self):
        # a solution that reads the device's limits to size its launches (device_limits(),
        # set_dynamic_shared) is one where a student can size them for one GPU only: the default
        # grading runs its tests as on a T4 too (grading.run_small_gpu_pass)
        for ch in manifest.load_all(ROOT):
            for e in ch.exercises:
                text = re.sub(r"//[^\n]*", "", (ROOT / e.source("solution")).read_text())
                sized = re.search(r"\b(device_limits|set_dynamic_shared)\s*\(", text) is not None
                with self.subTest(exercise=e.id):
                    self.assertEqual(e.small_gpu, "t4" if sized else "")

    def test_the_course_bounds_its_slow_passes(self):
        # the exercises whose quick racecheck ran past QUICK_LIMIT on the H100 at every size
        loaded = {e.id: e for c in manifest.load_all(ROOT) for e in c.exercises}
        bounded = sorted(i for i, e in loaded.items() if e.quick_max_n or e.quick_skip)
        self.assertEqual(bounded, ["2.1", "2.2", "2.7", "7.6"])
        for i in bounded:
            self.assertLessEqual(loaded[i].quick_max_n or 0, 70000, i)
