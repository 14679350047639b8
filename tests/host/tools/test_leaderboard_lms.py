"""The class's leaderboard (leaderboard.py) and LMS gradebooks (lms.py), from small generated
results.json records: no build, no GPU, no submission graded."""
from __future__ import annotations

import contextlib
import csv
import io
import json
import stat
import sys
import tempfile
import unittest
from pathlib import Path

from toolload import load_tool

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tools"))
grade_cli = load_tool("grade", "cudalab_grade_cli_lb")
from cudalab_grade import classreport, leaderboard, lms, signing  # noqa: E402
from cudalab_grade.manifest import load_all  # noqa: E402
from cudalab_grade.submissions import safe_name  # noqa: E402

MANIFEST = """
[chapter]
number = 1
dir = "01-demo"
title = "Demo"

[[exercise]]
id = "1.1"
slug = "alpha"
title = "First"
file = "alpha.cu"
header = "include/x.cuh"
function = "cudalab::x::alpha"
test_filter = "*Alpha*"
points = 10
hints = ["a"]
[exercise.perf]
benchmark = "BM_Alpha"
baseline = "BM_Cub"
ratio = 1.0
points = 5

[[exercise]]
id = "1.2"
slug = "beta"
title = "Second"
file = "beta.cu"
header = "include/x.cuh"
function = "cudalab::x::beta"
test_filter = "*Beta*"
points = 5
hints = ["a"]
[exercise.perf]
benchmark = "BM_Beta"
baseline = "BM_Thrust"
ratio = 2.0
points = 5

[[exercise]]
id = "1.3"
slug = "gamma"
title = "Third"
file = "gamma.cu"
header = "include/x.cuh"
function = "cudalab::x::gamma"
test_filter = "*Gamma*"
points = 5
hints = ["a"]
"""
POINTS = {"1.1": (10, 5, "alpha"), "1.2": (5, 5, "beta"), "1.3": (5, 0, "gamma")}
TARGET = {"1.1": 1.0, "1.2": 2.0}


def record(student: str, ex: dict, perf: bool = True) -> dict:
    """A results.json as the grader writes it: ex maps an exercise id to (status, ratio)."""
    exercises = []
    for i, (status, ratio) in ex.items():
        pts, perf_pts, slug = POINTS[i]
        passed = status == "passed"
        got_perf = round(perf_pts * min(1.0, ratio / TARGET[i]), 1) \
            if passed and perf and ratio else 0.0
        exercises.append({"id": i, "slug": slug, "status": status,
                          "max_points": float(pts + (perf_pts if perf else 0)),
                          "correctness_points": float(pts if passed else 0),
                          "perf_points": float(got_perf), "ratio": ratio if perf else None,
                          "reason": "", "seconds": 1.0, "hidden_suite": False,
                          "hidden_tests": None})
    score = sum(e["correctness_points"] + e["perf_points"] for e in exercises)
    return {"score": round(score, 1), "tests": [], "cudalab": {
        "student": student, "seed": None, "seed_hidden": False, "perf": perf, "sanitize": [],
        "hidden_tests": False, "hidden_suites": [], "rejected": None, "warnings": [],
        "files": {}, "exercises": exercises}}


ALL = {"1.1": ("passed", 2.0), "1.2": ("passed", 1.5), "1.3": ("passed", None)}
CLASS = {
    "student-ann-1001": ALL,
    "student-bob-1002": {"1.1": ("failed", None), "1.2": ("passed", 3.0), "1.3": ("passed", None)},
    "student-cy-1003": {"1.1": ("passed", 2.0), "1.2": ("crashed", None), "1.3": ("failed", None)},
    "student-dan-1004": {"1.1": ("passed", 0.5), "1.2": ("passed", 1.0), "1.3": ("passed", None)},
    "=HYPERLINK(\"http://e\")": {"1.1": ("compile_error", None), "1.2": ("passed", 0.1),
                                 "1.3": ("passed", None)},
}


def klass(perf: bool = True) -> list[dict]:
    return [record(s, ex, perf) for s, ex in sorted(CLASS.items())]


def rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text())))


class PseudonymTest(unittest.TestCase):
    def test_stable_per_key_and_not_the_id(self):
        k1, k2 = b"k" * 32, b"j" * 32
        ids = list(CLASS)
        a, b, c = (leaderboard.pseudonyms(k, ids) for k in (k1, k1, k2))
        self.assertEqual(a, b)
        self.assertEqual(len(set(a.values())), len(ids))
        for s in ids:
            self.assertRegex(a[s], r"^anon-[a-z2-7]{5}-[a-z2-7]{5}$")
            self.assertNotEqual(a[s], c[s])          # another folder's key: other pseudonyms
            self.assertNotIn(s.split("-")[1] if "-" in s else s, a[s])
        # a student's pseudonym does not depend on who else is in the class
        self.assertEqual(leaderboard.pseudonyms(k1, ids[:1])[ids[0]], a[ids[0]])
        # the pseudonyms' key is derived from, never equal to, the signing key
        self.assertNotEqual(leaderboard.pseudonym_key(k1), k1)


class RankingTest(unittest.TestCase):
    def setUp(self):
        self.records = klass()
        self.names = leaderboard.pseudonyms(b"x" * 32, list(CLASS))

    def test_only_passed_exercises_ranked_ties_share_a_rank(self):
        bs = {i: rows_ for i, _, rows_ in leaderboard.boards(self.records)}
        self.assertEqual(set(bs), {"1.1", "1.2"})   # 1.3 has no speed target
        alpha = leaderboard._ranked(bs["1.1"], lambda r: (r[3],), self.names)
        got = [(rank, s) for rank, (s, _, _, _) in alpha]
        # ann and cy tie at 2.0 (rank 1, in pseudonym order), dan third; bob failed, the
        # formula student did not compile: not ranked
        tie = sorted(["student-ann-1001", "student-cy-1003"], key=self.names.get)
        self.assertEqual(got, [(1, tie[0]), (1, tie[1]), (3, "student-dan-1004")])
        beta = [(rank, s) for rank, (s, _, _, _) in
                leaderboard._ranked(bs["1.2"], lambda r: (r[3],), self.names)]
        self.assertEqual([s for _, s in beta], ["student-bob-1002", "student-ann-1001",
                                                "student-dan-1004", "=HYPERLINK(\"http://e\")"])
        over = [(rank, s, n, g) for rank, (s, n, g, _) in
                leaderboard.overall(self.records, self.names)]
        # two exercises ranked first (ann: geomean of 2 and 1.5; dan: of 0.5 and 1; the results
        # name no target, so the ratios themselves), then one
        self.assertEqual([o[1:3] for o in over[:2]],
                         [("student-ann-1001", 2), ("student-dan-1004", 2)])
        self.assertAlmostEqual(over[0][3], 1.73, places=2)
        self.assertEqual([o[2] for o in over[2:]], [1, 1, 1])
        self.assertEqual([o[1] for o in over[2:]], ["student-bob-1002", "student-cy-1003",
                                                    "=HYPERLINK(\"http://e\")"])

    def test_ratios_over_their_targets_rank_across_gpus_and_exercises(self):
        # bob's 1.2 at 3.0 was timed on a GPU where the target moved to 6.0 (half of it), dan's at
        # 1.0 on one where it is 1.0: dan ranks first on 1.2. Overall, the exercises weigh alike:
        # 1.1's ratios are 1000 times smaller than 1.2's and still count as much.
        def timed(student, ratio, target, i="1.2"):
            r = record(student, {i: ("passed", ratio)})
            r["cudalab"]["exercises"][0]["target"] = target
            return r
        records = [timed("bob", 3.0, 6.0), timed("dan", 1.0, 1.0)]
        names = leaderboard.pseudonyms(b"x" * 32, ["bob", "dan"])
        (_, _, rows_), = leaderboard.boards(records)
        ranked = [(rank, s, t) for rank, (s, _, _, t) in leaderboard._ranked(rows_, lambda r: (r[3],), names)]
        self.assertEqual(ranked, [(1, "dan", 1.0), (2, "bob", 0.5)])
        csv_rows = list(csv.reader(io.StringIO(leaderboard.csv_text(records, names))))
        # (the perf points are record()'s, against its own targets)
        self.assertIn(["1.2 beta", "1", names["dan"], "1", "1", "2.5", "1"], csv_rows)
        self.assertIn(["1.2 beta", "2", names["bob"], "3", "0.5", "5", "1"], csv_rows)
        md = leaderboard.markdown(records, names)
        self.assertIn("| rank | student | ratio | ratio / target | perf points |", md)
        self.assertIn(f"| 2 | {names['bob']} | 3 | 0.5 | 5 |", md)
        a = [timed("ann", 0.002, 0.001, "1.1")["cudalab"]["exercises"][0],
             timed("ann", 1.0, 2.0)["cudalab"]["exercises"][0]]
        c = [timed("cy", 0.001, 0.001, "1.1")["cudalab"]["exercises"][0],
             timed("cy", 1.6, 2.0)["cudalab"]["exercises"][0]]
        both = [record("ann", {}), record("cy", {})]
        both[0]["cudalab"]["exercises"], both[1]["cudalab"]["exercises"] = a, c
        names = leaderboard.pseudonyms(b"x" * 32, ["ann", "cy"])
        over = [(s, g) for _, (s, _, g, _) in leaderboard.overall(both, names)]
        # over their targets: ann sqrt(2 x 0.5) = 1, cy sqrt(1 x 0.8) = 0.894; 1.1's tiny ratios
        # weigh as much as 1.2's
        self.assertEqual(over, [("ann", 1.0), ("cy", 0.894)])

    def test_order_does_not_depend_on_input_order(self):
        a = leaderboard.csv_text(self.records, self.names)
        b = leaderboard.csv_text(list(reversed(self.records)), self.names)
        self.assertEqual(a, b)

    def test_gradescope_entries(self):
        # these records name no target: the ratio itself
        self.assertEqual(leaderboard.gradescope_entries(self.records[1]),
                         [{"name": "1.1 alpha (speed / target)", "value": 2.0, "order": "desc"},
                          {"name": "1.2 beta (speed / target)", "value": 1.5, "order": "desc"}])
        # with targets: the ratio over the target it was scored against on its GPU (3 digits),
        # as leaderboard.md ranks, so submissions graded on two GPUs compare
        rec = record("eve", {})
        rec["cudalab"]["exercises"] = [dict(self.records[1]["cudalab"]["exercises"][0], target=0.6),
                                       dict(self.records[1]["cudalab"]["exercises"][1], target=3.0)]
        self.assertEqual([e["value"] for e in leaderboard.gradescope_entries(rec)], [3.33, 0.5])


class WriteClassTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-lb-")
        self.out = Path(self._tmp.name) / "out"

    def tearDown(self):
        self._tmp.cleanup()

    def test_leaderboard_files_hold_no_student_id(self):
        classreport.write_class(self.out, klass())
        md = (self.out / "leaderboard.md").read_text()
        text = md + (self.out / "leaderboard.csv").read_text()
        for sid in CLASS:
            self.assertNotIn(sid, text)
        for part in ("student-", "1001", "1004", "HYPERLINK"):
            self.assertNotIn(part, text)
        self.assertIn("## 1.1 alpha", md)
        self.assertIn("## 1.2 beta", md)
        self.assertNotIn("gamma", md)
        mapping = self.out / "pseudonyms.csv"
        self.assertEqual(stat.S_IMODE(mapping.stat().st_mode), 0o600)
        got = {r[1]: r[0] for r in rows(mapping)[1:]}
        self.assertEqual(set(got), {"student-ann-1001", "student-bob-1002", "student-cy-1003",
                                    "student-dan-1004", "'=HYPERLINK(\"http://e\")"})
        for p in got.values():
            self.assertIn(p, md)
        self.assertIn("## Leaderboard", (self.out / "summary.md").read_text())
        board = rows(self.out / "leaderboard.csv")
        self.assertEqual(board[0], ["board", "rank", "pseudonym", "ratio", "ratio_over_target",
                                    "perf_points", "exercises"])
        self.assertEqual(board[1][:2], ["overall", "1"])
        self.assertEqual(board[1][2], got["student-ann-1001"])
        # stable across runs with the same key (the folder's grader-secret.json)
        before = mapping.read_text()
        classreport.write_class(self.out, list(reversed(klass())))
        self.assertEqual(mapping.read_text(), before)
        self.assertEqual((self.out / "leaderboard.md").read_text(), md)

    def test_no_leaderboard_without_perf(self):
        classreport.write_class(self.out, klass())
        self.assertTrue((self.out / "leaderboard.md").exists())
        classreport.write_class(self.out, klass(perf=False))
        self.assertFalse((self.out / "leaderboard.md").exists())
        self.assertFalse((self.out / "leaderboard.csv").exists())
        self.assertNotIn("Leaderboard", (self.out / "summary.md").read_text())
        self.assertTrue((self.out / "gradebook-canvas.csv").exists())

    def test_canvas_and_moodle_without_roster(self):
        ws = classreport.write_class(self.out, klass())
        self.assertEqual(ws, [])
        cv = rows(self.out / "gradebook-canvas.csv")
        self.assertEqual(cv[0], ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                                 "1.1 alpha", "1.2 beta", "1.3 gamma"])
        self.assertEqual(cv[1], ["Points Possible", "", "", "", "", "15", "10", "5"])
        ann = next(r for r in cv if r[0] == "student-ann-1001")
        self.assertEqual(ann, ["student-ann-1001", "", "", "student-ann-1001", "",
                               "15.0", "8.8", "5.0"])
        md = rows(self.out / "gradebook-moodle.csv")
        self.assertEqual(md[0], ["username", "1.1 alpha", "1.2 beta", "1.3 gamma"])
        self.assertIn(["student-bob-1002", "0.0", "10.0", "5.0"], md)
        # formulas escaped as in gradebook.csv
        for path in ("gradebook-canvas.csv", "gradebook-moodle.csv"):
            data = rows(self.out / path)
            self.assertIn("'=HYPERLINK(\"http://e\")", [r[0] for r in data])
            for row in data:
                for cell in row:
                    self.assertFalse(cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell)
        # the same points as gradebook.csv
        gb = {r["student"]: r for r in csv.DictReader(io.StringIO(
            (self.out / "gradebook.csv").read_text()))}
        self.assertEqual(gb["student-ann-1001"]["1.2 beta"], "8.8")

    def test_roster_maps_ids(self):
        roster = lms.Roster.parse(
            "Student,Name,canvas_id,sis_user_id,section,email,notes\n"
            "student-ann-1001,\"Lee, Ann\",501,S1,A,ann@uni.edu,x\n"
            "student-bob-1002,@cmd,,S2,B,bob@uni.edu,\n"
            "student-cy-1003,Cy,,,,,\n"
            "ghost,Ghost,9,,,g@uni.edu,\n")
        self.assertEqual(lms.moodle_key(roster), "email")
        ws = classreport.write_class(self.out, klass(perf=False), roster=roster)
        cv = rows(self.out / "gradebook-canvas.csv")
        self.assertIn(["Lee, Ann", "501", "S1", "", "A", "10.0", "5.0", "5.0"], cv)
        self.assertIn(["'@cmd", "", "S2", "", "B", "0.0", "5.0", "5.0"], cv)
        self.assertIn(["Cy", "", "", "student-cy-1003", "", "10.0", "0.0", "0.0"], cv)
        md = rows(self.out / "gradebook-moodle.csv")
        self.assertEqual(md[0][0], "email")
        self.assertEqual([r[0] for r in md[1:]],
                         ["'=HYPERLINK(\"http://e\")", "ann@uni.edu", "bob@uni.edu",
                          "student-cy-1003", "student-dan-1004"])
        text = "\n".join(ws)
        self.assertIn("no email for 'student-cy-1003'", text)
        self.assertIn("no canvas_id, sis_user_id nor sis_login_id for 'student-dan-1004'", text)
        self.assertIn("1 student(s) of the roster have no results", text)
        self.assertIn("ghost", text)

    def test_carriage_return_stays_in_its_cell(self):
        """A bare CR in a roster name or student id would end the row in a spreadsheet (and in
        Python's csv reader), and the next 'row' would start with a formula of the student's
        making: a cell holding a CR is quoted."""
        roster = lms.Roster.parse('student,name\nstudent-ann-1001,"Ann\r=1+2"\n')
        records = klass(perf=False)
        records[0]["cudalab"]["student"] = "cr\r@SUM(A1)"
        classreport.write_class(self.out, records, roster=roster)
        for path in ("gradebook-canvas.csv", "gradebook-moodle.csv", "gradebook.csv"):
            data = list(csv.reader(io.StringIO((self.out / path).read_bytes().decode(), newline="")))
            self.assertTrue(all(len(r) == len(data[0]) for r in data[1:]), (path, data))
            for row in data:
                for cell in row:
                    self.assertFalse(cell.startswith(("=", "+", "-", "@", "\t", "\r")), (path, cell))
            self.assertIn("cr\r@SUM(A1)", [r[0] for r in data], path)
        canvas = list(csv.reader(io.StringIO(
            (self.out / "gradebook-canvas.csv").read_bytes().decode(), newline="")))
        self.assertIn("Ann\r=1+2", [r[0] for r in canvas])

    def test_bad_rosters(self):
        for text, why in (("", "empty"), ("name,email\nA,a@b\n", "no 'student' column"),
                          ("student\nx\nx\n", "listed twice"), ("student,name\n,A\n", "no student id")):
            with self.subTest(why=why), self.assertRaisesRegex(lms.RosterError, why):
                lms.Roster.parse(text)

    def test_odd_but_honest_and_ambiguous_rosters(self):
        """A header naming 'student' twice took the last column silently (another student's
        id); a file of CR-only line ends (an old Mac's export) was 'not CSV'; a FIFO (or
        /dev/stdin) as --roster waited forever."""
        with self.assertRaisesRegex(lms.RosterError, "the column 'student' appears more than once"):
            lms.Roster.parse("student,name,student\nann,Ann,bob\n")
        r = lms.Roster.parse("student,name\rann,Ann\rbob,Bob\r")
        self.assertEqual(r.get("bob", "name"), "Bob")
        import os
        fifo = Path(self._tmp.name) / "roster.fifo"
        os.mkfifo(fifo)
        with self.assertRaisesRegex(lms.RosterError, "not a regular file"):
            lms.Roster.load(fifo)


class MergeTest(unittest.TestCase):
    """--merge remakes the leaderboard and the LMS files from the runs' signed results."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-lb-merge-")
        self.tmp = Path(self._tmp.name)
        (self.tmp / "chapters" / "01-demo").mkdir(parents=True)
        (self.tmp / "chapters" / "01-demo" / "exercises.toml").write_text(MANIFEST)
        for i, r in enumerate(klass()):
            run = self.tmp / "tasks" / f"t{i}"
            key = signing.load_or_create(run).key
            d = run / "students" / safe_name(r["cudalab"]["student"])
            d.mkdir(parents=True)
            files = {"results.json": json.dumps(r).encode(), "report.md": b"# report\n"}
            for name, data in files.items():
                (d / name).write_bytes(data)
            signing.sign(key, d, files)

    def tearDown(self):
        self._tmp.cleanup()

    def grade(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = grade_cli.main(list(argv), root=self.tmp)
        return code, out.getvalue(), err.getvalue()

    def test_merge_writes_leaderboard_and_lms_files(self):
        exercises = [e for c in load_all(self.tmp) for e in c.exercises]
        merged = self.tmp / "merged"
        n, warnings = classreport.merge([self.tmp / "tasks"], merged, exercises)
        self.assertEqual((n, warnings), (5, []))
        for name in ("leaderboard.md", "leaderboard.csv", "pseudonyms.csv",
                     "gradebook-canvas.csv", "gradebook-moodle.csv"):
            self.assertTrue((merged / name).is_file(), name)
        one = self.tmp / "one"
        classreport.write_class(one, klass())
        self.assertEqual((merged / "gradebook-canvas.csv").read_text(),
                         (one / "gradebook-canvas.csv").read_text())
        # merged again into the same folder: its key, hence its pseudonyms, stay
        before = (merged / "leaderboard.md").read_text()
        classreport.merge([self.tmp / "tasks"], merged, exercises)
        self.assertEqual((merged / "leaderboard.md").read_text(), before)

    def test_cli_roster(self):
        roster = self.tmp / "roster.csv"
        roster.write_text("student,idnumber,sis_login_id\nstudent-ann-1001,70001,ann\n")
        merged = self.tmp / "merged"
        code, out, err = self.grade("--merge", str(self.tmp / "tasks"), "--out", str(merged),
                                    "--roster", str(roster))
        self.assertEqual(code, 0, err)
        self.assertIn("merged 5 student(s)", out)
        md = rows(merged / "gradebook-moodle.csv")
        self.assertEqual(md[0][0], "idnumber")
        self.assertIn("70001", [r[0] for r in md])
        cv = rows(merged / "gradebook-canvas.csv")
        self.assertIn("ann", [r[3] for r in cv])
        self.assertIn("warning: gradebook-moodle.csv: the roster has no idnumber for "
                      "'student-bob-1002'", err)
        code, _, err = self.grade("--merge", str(self.tmp / "tasks"), "--out", str(merged),
                                  "--roster", str(self.tmp / "missing.csv"))
        self.assertEqual(code, 2)
        self.assertIn("--roster", err)


if __name__ == "__main__":
    unittest.main()
