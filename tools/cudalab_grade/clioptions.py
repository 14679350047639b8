"""The options of tools/grade and tools/grade-class: one parser builder, two front ends.

tools/grade lists the student's options (grading one tree: the student's starter/ or the
solutions) and still takes the class options unlisted, so that `tools/grade --submissions
DIR` keeps working as before; tools/grade-class lists and takes the class options and the
grading options a class shares with one tree (--perf, --sanitize, --seed...). Both parse
into the same namespace, which cli.run reads."""
from __future__ import annotations

import argparse
from pathlib import Path

from .grading import DEVICE_PROFILES, SANITIZER_MAX_N, SANITIZER_TOOLS

STUDENT, CLASS = "student", "class"   # the front ends: tools/grade, tools/grade-class
BOTH = "both"                         # an option of both


class _Group:
    """An argument group of the parser for one front end (audience). An option belongs to the
    group's audience unless `who` says otherwise; an option of the other audience is taken
    unlisted by tools/grade (a class option), or left out of tools/grade-class with its
    default kept in the namespace (a student option). `class_help` replaces the help text in
    tools/grade-class."""

    def __init__(self, parser: argparse.ArgumentParser, audience: str, title: str, who: str):
        self.parser, self.audience, self.who = parser, audience, who
        self.group = parser.add_argument_group(title)

    def add_argument(self, *flags, who: str | None = None, class_help: str | None = None, **kw) -> None:
        who = who or self.who
        if self.audience == CLASS and class_help is not None:
            kw["help"] = class_help
        if who in (BOTH, self.audience):
            self.group.add_argument(*flags, **kw)
        elif self.audience == STUDENT:
            self.group.add_argument(*flags, **dict(kw, help=argparse.SUPPRESS))
        else:
            action = argparse.ArgumentParser(add_help=False).add_argument(*flags, **kw)
            self.parser.set_defaults(**{action.dest: action.default})


def build_parser(audience: str, prog: str, doc: str) -> argparse.ArgumentParser:
    """The parser of tools/grade (audience STUDENT) or tools/grade-class (CLASS); doc, the
    script's docstring, gives the description (its first paragraph) and the epilog."""
    p = argparse.ArgumentParser(
        prog=prog, description=doc.split("\n\n")[0],
        epilog="\n\n".join(doc.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(tool=prog)  # the name messages start with
    p.add_argument("selectors", nargs="*", metavar="WHAT",
                   help="what to grade: all (default), a chapter (1 or 01-reduce-scan-histogram), "
                        "an exercise (1.2 or sum_shared_tree); any number of them")
    g = _Group(p, audience, "help while you work", STUDENT)
    g.add_argument("--list", action="store_true", help="list chapters and exercises, then stop")
    g.add_argument("--hint", metavar="ID", help="print a hint for exercise ID (1.2 or its name)")
    g.add_argument("--level", default="1", metavar="K",
                   help="with --hint: print hints 1 to K (gentle to explicit), or 'all'")
    g.add_argument("--watch", nargs="?", const="", metavar="ID",
                   help="grade exercise ID (default: the first one not yet passed), then again "
                        "each time you save its file; on a pass, go on to the next exercise not "
                        "yet passed; Ctrl-C stops. Takes the grading options (--fast, --perf, "
                        "--solutions...)")
    g.add_argument("--profile", metavar="ID",
                   help="your kernels and the reference solution's on exercise ID's benchmark case "
                        "under Nsight Compute (ncu), side by side in plain words, with the lesson "
                        "section for the largest gap. Your runner runs WITHOUT the sandbox here: a "
                        "tool for your own code, never part of grading. Needs ncu and access to the "
                        "GPU's performance counters (docs/guides/grading.md)")
    g.add_argument("--progress", action="store_true",
                   help="print your progress from the results of earlier grade runs "
                        "(.grade/state.json; no GPU needed): a bar per chapter, exercises passed, "
                        "points, speed points; with WHAT, also those exercises one by one")
    g = _Group(p, audience, "what to check", STUDENT)
    g.add_argument("--compile-only", action="store_true",
                   help="build the selected exercises' programs and check your files for forbidden "
                        "APIs, run nothing: what a machine without a GPU can check")
    g.add_argument("--perf", who=BOTH, action="store_true",
                   help="also run the benchmark of each exercise whose tests pass, for its "
                        "performance points")
    g.add_argument("--sanitize", who=BOTH, metavar="TOOLS", default="",
                   help="after the tests pass, run them under compute-sanitizer with these tools, "
                        f"comma-separated ({','.join(SANITIZER_TOOLS)}), on sizes up to "
                        f"{SANITIZER_MAX_N}, instead of the quick pass; a finding costs the points")
    g.add_argument("--fast", who=BOTH, action="store_true",
                   help="skip the quick sanitizer pass (memcheck and racecheck on the small sizes, "
                        "run by default after the tests pass) and the small-GPU pass (the tests "
                        "again under a smaller GPU's limits, where the exercise has one): for the "
                        "edit-compile loop",
                   class_help="skip the quick sanitizer pass (memcheck and racecheck on the small "
                              "sizes, run by default after the tests pass) and the small-GPU pass: "
                              "the tests only")
    g.add_argument("--solutions", action="store_true",
                   help="grade the reference solutions (solutions/) instead of your starter/")
    g.add_argument("--device-profile", who=BOTH, metavar="GPU", choices=DEVICE_PROFILES,
                   help="size every launch for this GPU and refuse any launch beyond its limits, "
                        "on a bigger GPU (sets CUDALAB_DEVICE_PROFILE): "
                        + ", ".join(DEVICE_PROFILES))
    g.add_argument("--seed", who=BOTH, type=int, metavar="N",
                   help="random inputs from seed N (sets CUDALAB_SEED) instead of each test's own")
    g.add_argument("--parallel", type=int, default=1, metavar="K",
                   help="test K exercises at once on the GPU (the benchmarks of --perf still run "
                        "one at a time, afterwards); default 1")
    g.add_argument("--no-sandbox", who=BOTH, action="store_true",
                   help="run the exercise's code (the runner) without the sandbox, with your "
                        "rights: e.g. to debug it with cuda-gdb (grading a class refuses it "
                        "unless given here)",
                   class_help="grade even where no sandbox works: the students' code then runs "
                              "with your rights")
    g.add_argument("--timeout", who=BOTH, type=float, default=300.0, metavar="SEC",
                   help="time limit of each test program, in seconds (default 300)")
    g = _Group(p, audience, "building", STUDENT)
    g.add_argument("--build-dir", type=Path, metavar="DIR",
                   help="an already configured build directory (default build/default, "
                        "configured with 'cmake --preset default' when needed)")
    g.add_argument("--no-build", action="store_true",
                   help="do not build; grade the programs already built (stale ones are refused)")
    g.add_argument("--jobs", "-j", who=BOTH, type=int, metavar="N", help="build with N parallel jobs",
                   class_help="compile N submissions at once (default 2); with --slurm, the CPUs of "
                              "each task (default 4)")
    g = _Group(p, audience, "output", STUDENT)
    g.add_argument("--json", metavar="FILE", help="write Gradescope results.json to FILE (- = stdout)")
    g.add_argument("--csv", metavar="FILE", help="write one CSV row per exercise to FILE (- = stdout)")
    g.add_argument("--markdown", metavar="FILE", help="write the scoreboard as Markdown (- = stdout)")
    g.add_argument("--quiet", "-q", who=BOTH, action="store_true",
                   help="no progress messages while building and grading")
    g = _Group(p, audience, "the class (see docs/guides/instructors.md)", CLASS)
    g.add_argument("--submissions", type=Path, metavar="DIR",
                   help="grade every entry of DIR (a folder laid out like starter/, or a .zip, "
                        ".tar.gz, .tgz or .tar of one), each in its own copy of the course")
    g.add_argument("--out", type=Path, metavar="DIR",
                   help="where the gradebook, reports and summary go (default .grade/class)")
    g.add_argument("--only", action="append", default=[], metavar="ENTRY",
                   help="grade only this entry of the submissions folder (repeatable)")
    g.add_argument("--show-seed", action="store_true",
                   help="print --seed in the students' reports and rerun commands (by default "
                        "only summary.md shows it)")
    g.add_argument("--hidden-tests", type=Path, metavar="DIR",
                   help="the instructor's hidden test suites: <slug>_hidden_test.cu, named by the "
                        "manifest's hidden_test key, in DIR or DIR/<chapter>/")
    g.add_argument("--gpus", metavar="LIST",
                   help="comma-separated GPU indices: one submission is graded on each at a time "
                        "(CUDA_VISIBLE_DEVICES); default: one at a time, the visible GPUs")
    g.add_argument("--per-gpu", type=int, default=1, metavar="K",
                   help="submissions graded at the same time on each GPU (default 1)")
    g.add_argument("--build-timeout", type=float, default=600.0, metavar="SEC",
                   help="time limit of each compiler or linker run (default 600)")
    g.add_argument("--submission-timeout", type=float, default=0.0, metavar="SEC",
                   help="time limit of all the tests of one submission (default: none)")
    g.add_argument("--max-output", type=int, default=1, metavar="MIB",
                   help="output kept per program, in MiB; the middle of a longer one is dropped "
                        "(default 1)")
    g.add_argument("--max-memory", type=float, default=16.0, metavar="GIB",
                   help="host memory (resident) per test program, in GiB; 0 for no limit "
                        "(default 16)")
    g.add_argument("--fail-fast", action="store_true",
                   help="stop each test program at its first failing test: the verdict only, "
                        "for a class of mutants (tools/mutate), not for students")
    g.add_argument("--keep-work", action="store_true",
                   help="keep each submission's copy of the course in OUT/work/")
    g.add_argument("--grade-missing", action="store_true",
                   help="also run the tests of exercises a submission lacks (on the starter's file)")
    g.add_argument("--shared-build", type=Path, metavar="DIR",
                   help="use the instructor's build made earlier in DIR (OUT/shared) as it is")
    g.add_argument("--prepare-only", action="store_true",
                   help="with --submissions: build the instructor's tree in OUT/shared, then stop")
    g.add_argument("--slurm", action="store_true",
                   help="with --submissions: write Slurm scripts in OUT/slurm instead of grading")
    g.add_argument("--slurm-partition", metavar="NAME", help="with --slurm: the partition to use")
    g.add_argument("--slurm-time", default="01:00:00", metavar="HH:MM:SS",
                   help="with --slurm: time limit of each task (default 01:00:00)")
    g.add_argument("--similarity", action="store_true",
                   help="with --submissions: compare every pair of submissions of each selected "
                        "exercise (copydetect's winnowing fingerprints, after removing the "
                        "starter's given code and comments) and write similarity.md and "
                        "similarity.html in OUT, instead of grading; reads the files only (no "
                        "build, no GPU)")
    g.add_argument("--similarity-threshold", type=float, default=None, metavar="SHARE",
                   help="with --similarity: list a pair when at least this share of one "
                        "submission's code is in the other's (0 to 1, default 0.5)")
    g.add_argument("--merge", type=Path, nargs="+", metavar="DIR",
                   help="combine the outputs of several runs (e.g. OUT/tasks) into --out")
    g.add_argument("--roster", type=Path, metavar="CSV",
                   help="with --submissions or --merge: map student ids to the LMS's (columns "
                        "student, name, canvas_id, sis_user_id, sis_login_id, section, email, "
                        "idnumber, username) in gradebook-canvas.csv and gradebook-moodle.csv")
    return p


def parse_args(argv: list[str] | None, audience: str = STUDENT, prog: str = "tools/grade",
               doc: str = "") -> argparse.Namespace:
    p = build_parser(audience, prog, doc)
    args = p.parse_args(argv)
    if audience == CLASS and args.submissions is None and not args.merge:
        p.error("give the class: --submissions DIR (or --merge DIR... to combine the outputs of "
                "earlier runs)")
    return args
