"""Tests of cudalab_grade.mutate_merge: one report from mutation runs split over calls."""
from __future__ import annotations

import sys
import unittest

from toolload import ROOT

sys.path.insert(0, str(ROOT / "tools"))
from cudalab_grade import mutate as mu  # noqa: E402
from cudalab_grade import mutate_merge as mm  # noqa: E402


def entry(slug: str, killed: int, survived: list[str], check: int | None = None) -> dict:
    e = {"slug": slug, "operators": {"cmp_flip": {"generated": killed + len(survived), "killed": killed}},
         "generated": killed + len(survived), "equivalent": [], "killed_by_tests": killed,
         "killed_by_sanitizer": 0, "survived": [{"id": s, "line": 1, "what": "w", "diff": "d"} for s in survived],
         "did_not_compile": [], "not_graded": [], "equivalent_but_killed": []}
    if check is not None:  # reports written before the source-check column have no such key
        e["killed_by_check"] = check
        e["generated"] += check
    return e


class MergeTest(unittest.TestCase):
    def test_later_part_wins_and_listed_equivalents_leave_the_survivors(self):
        old = {"commit": "a", "exercises": {"1.1": entry("x", 1, ["1.1-a", "1.1-b"]),
                                            "2.1": entry("y", 2, ["2.1-a"])}}
        new = {"commit": "b", "exercises": {"1.1": entry("x", 2, ["1.1-b"], check=1)}}
        r = mm.merge([old, new], {"2.1": {"2.1-a": "same results"}})
        one, two = r["exercises"]["1.1"], r["exercises"]["2.1"]
        self.assertEqual((one["killed"], one["counted"], one["commit"]), (3, 4, "b"))
        self.assertEqual([s["id"] for s in one["survived"]], ["1.1-b"])
        self.assertEqual(two["survived"], [])
        self.assertEqual(two["equivalent"], [{"id": "2.1-a", "why": "same results"}])
        self.assertEqual((two["killed"], two["counted"], two["score"]), (2, 2, 1.0))
        self.assertEqual((r["killed"], r["counted"]), (5, 6))
        self.assertEqual(r["chapters"]["1"], {"killed": 3, "counted": 4, "survived": 1, "score": 0.75})
        self.assertIn("| 2 | 2 | 2 | 0 | 100.0 % |", mm.chapter_table(r))

    def test_an_old_report_renders(self):
        r = mm.merge([{"commit": "a", "exercises": {"3.1": entry("z", 1, ["3.1-a"])}}], {})
        self.assertEqual(r["exercises"]["3.1"]["killed_by_check"], 0)
        self.assertIn("3.1 z", mu.markdown(r))


class CombineTest(unittest.TestCase):
    def test_two_samples_of_one_exercise_add_up(self):
        tokens = {"commit": "a", "exercises": {"6.2": entry("bf", 3, []), "1.1": entry("x", 1, ["1.1-s"])}}
        hw = entry("bf", 2, ["6.2-hw-b"], check=1)
        hw["operators"] = {"hw": {"generated": 4, "killed": 3}}
        hw["commit"] = "b"
        r = mm.combine([tokens, {"commit": "b", "exercises": {"6.2": hw}}])
        e = r["exercises"]["6.2"]
        self.assertEqual((e["generated"], e["killed"], e["counted"], e["commit"]), (7, 6, 7, "a, b"))
        self.assertEqual(set(e["operators"]), {"cmp_flip", "hw"})
        self.assertEqual([s["id"] for s in e["survived"]], ["6.2-hw-b"])
        self.assertEqual(r["exercises"]["1.1"]["commit"], "a")
        self.assertEqual(r["chapters"]["6"], {"killed": 6, "counted": 7, "survived": 1, "score": round(6 / 7, 4)})
        self.assertEqual((r["killed"], r["counted"], r["commit"]), (7, 9, "a, b"))
        self.assertEqual(tokens["exercises"]["6.2"]["generated"], 3)  # the inputs are left as they were

    def test_a_mutant_in_two_samples_is_refused(self):
        one = {"commit": "a", "exercises": {"1.1": entry("x", 0, ["1.1-s"])}}
        with self.assertRaisesRegex(ValueError, "1.1-s"):
            mm.combine([one, one])


if __name__ == "__main__":
    unittest.main()
