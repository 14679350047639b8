"""One mutation report from several: runs split over calls, chapters or machines.

A GPU machine's time limit rarely lets one run grade every chapter's mutants,
so `tools/gpu-check --steps mutation --chapters ...` runs in parts, each
writing its own mutation.json (mutate.score). merge() makes one report of
them: an exercise graded by several parts takes the latest part's entry (a
rerun of the same draw after a new test supersedes the old one), and the
manifests' equivalent_mutants as they are now are applied again, so a
survivor listed since (with its reason) counts as equivalent. Totals per
chapter and for the course are recomputed; mutate.markdown renders it.
"""
from __future__ import annotations

import copy

from .mutate import _id_key, _pct, rescore


def merge(parts: list[dict], equivalent: dict[str, dict[str, str]]) -> dict:
    """parts: mutation.json results in the order they ran (later wins per exercise).
    equivalent: mutate.equivalents(root), {exercise id: {mutant id: why}}."""
    per: dict[str, dict] = {}
    commits: dict[str, str] = {}
    for part in parts:
        for ex, e in part.get("exercises", {}).items():
            per[ex] = copy.deepcopy(e)
            # a report written before a column existed has none of it
            per[ex].setdefault("killed_by_check", 0)
            per[ex].setdefault("equivalent_tce", 0)
            commits[ex] = str(part.get("commit") or "")
    for ex, e in per.items():
        listed = equivalent.get(ex, {})
        known = {x["id"] for x in e["equivalent"]}
        still = []
        for s in e["survived"]:
            if s["id"] in listed:
                if s["id"] not in known:
                    e["equivalent"].append({"id": s["id"], "why": listed[s["id"]]})
            else:
                still.append(s)
        e["survived"] = still
        e["commit"] = commits[ex]
        rescore(e)
    return _report(per, commits)


_COUNTS = ("generated", "equivalent_tce", "killed_by_tests", "killed_by_sanitizer", "killed_by_check")
_LISTS = ("equivalent", "survived", "did_not_compile", "not_graded", "equivalent_but_killed")


def combine(samples: list[dict]) -> dict:
    """One report of several samples of different mutants (for example the token operators'
    sample and the hand-written mutants), each a merge() or mutate.score() result: per
    exercise the counts add up, the lists and the operators join, and the score is recomputed.
    An exercise's mutant ids must not repeat across samples (ValueError: the same mutant
    counted twice)."""
    per: dict[str, dict] = {}
    commits: dict[str, set[str]] = {}
    for sample in samples:
        for ex, e in sample.get("exercises", {}).items():
            e = copy.deepcopy(e)
            e.setdefault("killed_by_check", 0)
            e.setdefault("equivalent_tce", 0)
            commits.setdefault(ex, set()).update(
                c.strip() for c in str(e.get("commit") or sample.get("commit") or "").split(",") if c.strip())
            if ex not in per:
                per[ex] = e
                continue
            into = per[ex]
            for key in _COUNTS:
                into[key] += e[key]
            for key in _LISTS:
                into[key] = into.get(key, []) + e.get(key, [])
            for op, o in e.get("operators", {}).items():
                mine = into["operators"].setdefault(op, {"generated": 0, "killed": 0})
                mine["generated"] += o["generated"]
                mine["killed"] += o["killed"]
    for ex, e in per.items():
        ids = [x["id"] if isinstance(x, dict) else str(x) for key in _LISTS for x in e.get(key, [])]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"{ex}: mutant(s) {', '.join(twice)} in more than one sample")
        e["commit"] = ", ".join(sorted(commits[ex]))
        rescore(e)
    return _report(per, {ex: e["commit"] for ex, e in per.items()})


def _report(per: dict[str, dict], commits: dict[str, str]) -> dict:
    """The report of per-exercise entries: chapter and course totals."""
    exercises = dict(sorted(per.items(), key=lambda kv: _id_key(kv[0])))
    chapters: dict[str, dict] = {}
    for ex, e in exercises.items():
        c = chapters.setdefault(ex.split(".")[0], {"killed": 0, "counted": 0, "survived": 0})
        c["killed"] += e["killed"]
        c["counted"] += e["counted"]
        c["survived"] += len(e["survived"])
    for c in chapters.values():
        c["score"] = round(c["killed"] / c["counted"], 4) if c["counted"] else None
    killed = sum(e["killed"] for e in exercises.values())
    counted = sum(e["counted"] for e in exercises.values())
    return {"commit": ", ".join(sorted({c.strip() for v in commits.values() for c in v.split(",") if c.strip()})),
            "class_output": "merged", "killed": killed, "counted": counted,
            "score": round(killed / counted, 4) if counted else None,
            "chapters": chapters, "exercises": exercises}


def chapter_table(result: dict) -> str:
    """Markdown: one row per chapter (killed, counted, survived, score)."""
    rows = ["| chapter | killed | counted | survived | score |", "|---|---|---|---|---|"]
    for ch, c in sorted(result.get("chapters", {}).items(), key=lambda kv: int(kv[0])):
        rows.append(f"| {ch} | {c['killed']} | {c['counted']} | {c['survived']} | {_pct(c['score'])} |")
    return "\n".join(rows) + "\n"
