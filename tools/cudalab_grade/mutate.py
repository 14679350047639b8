"""Mutation testing of the exercises (tools/mutate): mutants, a class of them, their score.

A mutant is an exercise's solution with one student mistake, made by one
operator of mutation_ops.OPERATORS at one place inside the file's student
regions (the // BEGIN SOLUTION ... // STARTER: or // END SOLUTION blocks that
tools/make-starter reads). Its id, `<exercise>-<operator>-L<line>-<n>`, is
stable as long as the solution file does not change: n counts the operator's
sites on that line, left to right.

The hand-written mutants (operator `hw`) are a student's mistakes about the
algorithm that no token operator makes: each chapter's `mutants.toml` holds
`[[mutant]]` entries (exercise, name, why, old, new; `equivalent` with its
reason for one kept to document a nuance of the contract), and replaces the
text `old`, which occurs exactly once inside the solution's student regions,
by `new`. Their id is `<exercise>-hw-<name>`, stable while `old` applies.

`write_class` lays the mutants out as a class for `tools/grade --submissions`
(one student per mutant, its folder laid out like starter/, holding only the
mutated file) and writes `<class>.mutants.json` beside it. `score` reads the
graded class (students/<id>/results.json) back and counts, per exercise,
mutants killed by the tests, killed only by the sanitizer pass, killed by the
source check (status forbidden: the warp-mask rule refuses a narrowed or
__activemask() mask before any test runs), survived, and the equivalent ones the manifest lists (`equivalent_mutants`).
Standard library only.
"""
from __future__ import annotations

import difflib
import json
import os
import random
import re
import shlex
import subprocess
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from . import mutate_tce as tce
from . import mutation_ops as ops
from .manifest import Exercise, UsageError
from .markers import BEGIN, END, STARTER

# statuses of the grader (grading.py) and what they say about a mutant
KILLED_BY_TESTS = {"failed", "crashed", "timeout", "memory"}
KILLED_BY_SANITIZER = {"sanitizer"}
# the grader's source check refused the file before any test ran: for a mutant, the warp-mask
# rule (source.py, warpmask.py) on a narrowed or __activemask() mask
KILLED_BY_CHECK = {"forbidden"}
SURVIVED = {"passed"}
NOT_COMPILED = {"compile_error"}


@dataclass
class Mutant:
    id: str
    exercise: str
    slug: str
    operator: str
    line: int
    occurrence: int
    what: str
    path: str          # the file, relative to the repository root (solutions/...)
    rel: str           # the same below starter/ (<chapter dir>/<file>)
    text: str          # the mutated file
    diff: str

    def record(self) -> dict:
        return {"exercise": self.exercise, "slug": self.slug, "operator": self.operator,
                "line": self.line, "occurrence": self.occurrence, "what": self.what,
                "file": self.rel, "diff": self.diff}


def regions(text: str) -> list[tuple[int, int]]:
    """(first, last) 1-based lines of the reference code of every student region.

    The reference code lies between `// BEGIN SOLUTION` and `// STARTER:` (or
    `// END SOLUTION` when the block has no starter part); the markers and the
    commented starter are never mutated.
    """
    out, begin, code = [], 0, False
    for n, line in enumerate(text.splitlines(), start=1):
        if BEGIN.match(line):
            begin, code = n, True
        elif code and (STARTER.match(line) or END.match(line)):
            if n - 1 > begin:
                out.append((begin + 1, n - 1))
            code = False
    return out


def sites(text: str, operators: list[str] | None = None) -> list[ops.Site]:
    """Every site of the chosen operators (all by default) in the file's student regions."""
    tokens = ops.tokenize(text)
    spans = regions(text)

    def inside(i: int) -> bool:
        line = tokens[i].line
        return any(a <= line <= b for a, b in spans)

    found: list[ops.Site] = []
    for name in operators or list(ops.OPERATORS):
        per_line: dict[int, int] = {}
        got = ops.OPERATORS[name](text, tokens, inside)
        for s in sorted(got, key=lambda s: min(e[0] for e in s.edits)):
            s.variant = name
            per_line[s.line] = per_line.get(s.line, 0) + 1
            s.occurrence = per_line[s.line]
            s.start = min(e[0] for e in s.edits)
            found.append(s)
    return found


def mutant_id(exercise: str, operator: str, line: int, occurrence: int) -> str:
    return f"{exercise}-{operator}-L{line}-{occurrence}"


def unified(old: str, new: str, path: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        f"a/{path}", f"b/{path}", n=2))


def mutants_of_text(text: str, ex: Exercise, path: str,
                    operators: list[str] | None = None) -> list[Mutant]:
    out = []
    for s in sites(text, operators):
        new = ops.apply(text, s.edits)
        if new == text:
            continue
        out.append(Mutant(mutant_id(ex.id, s.variant, s.line, s.occurrence), ex.id, ex.slug,
                          s.variant, s.line, s.occurrence, s.what, path,
                          f"{ex.chapter_dir}/{ex.file}", new, unified(text, new, path)))
    return out


def mutants(root: Path, ex: Exercise, operators: list[str] | None = None) -> list[Mutant]:
    """The mutants of one exercise's solution file: of every token operator by default; the
    hand-written ones (chapters/<ch>/mutants.toml) only where `operators` names `hw`."""
    path = ex.source("solution")
    text = (root / path).read_text()
    machine = None if operators is None else [o for o in operators if o != HANDWRITTEN]
    out = mutants_of_text(text, ex, path, machine) if machine is None or machine else []
    if operators and HANDWRITTEN in operators:
        out += handwritten_mutants(root, ex, text)
    return out


# ---------------------------------------------------------------------------
# hand-written mutants: chapters/<ch>/mutants.toml

HANDWRITTEN = "hw"   # their operator: `--operators hw` (or `--handwritten`) selects them
HANDWRITTEN_DOC = ("a hand-written student mistake of the chapter's mutants.toml "
                   "(exercise, name, why, old -> new)")
_HW_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_HW_KEYS = {"exercise", "name", "why", "old", "new", "equivalent"}


def handwritten_file(root: Path, chapter_dir: str) -> Path:
    return root / "chapters" / chapter_dir / "mutants.toml"


def handwritten_entries(root: Path) -> dict[str, list[dict]]:
    """exercise id -> its entries of every chapter's mutants.toml, in file order, each with
    `file` (the toml's path relative to root) added. A malformed entry (a missing or unknown
    key, a name that is not [a-z0-9-], a name used twice for one exercise, new == old) is a
    UsageError naming the file and the entry."""
    out: dict[str, list[dict]] = {}
    for p in sorted((root / "chapters").glob("*/mutants.toml")):
        rel = p.relative_to(root).as_posix()
        try:
            with p.open("rb") as f:
                data = tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise UsageError(f"{rel}: {e}") from None
        for k, e in enumerate(data.get("mutant", []), start=1):
            where = f"{rel}: mutant {k} ({e.get('exercise', '?')} {e.get('name', '?')})"
            missing = sorted({"exercise", "name", "why", "old", "new"} - set(e))
            unknown = sorted(set(e) - _HW_KEYS)
            if missing or unknown:
                raise UsageError(f"{where}: " + "; ".join(
                    ([f"missing {', '.join(missing)}"] if missing else [])
                    + ([f"unknown key {', '.join(unknown)}"] if unknown else [])))
            if not _HW_NAME.match(str(e["name"])):
                raise UsageError(f"{where}: name must be lower-case words joined by '-'")
            if not str(e["why"]).strip() or not str(e["old"]) or e["old"] == e["new"]:
                raise UsageError(f"{where}: needs a reason (why), a non-empty old and a new "
                                 f"that differs from it")
            if "equivalent" in e and not str(e["equivalent"]).strip():
                raise UsageError(f"{where}: equivalent needs its reason")
            same = out.setdefault(str(e["exercise"]), [])
            if any(x["name"] == e["name"] for x in same):
                raise UsageError(f"{where}: the name is used twice for exercise {e['exercise']}")
            same.append(dict(e, exercise=str(e["exercise"]), file=rel))
    return out


def handwritten_id(exercise: str, name: str) -> str:
    return f"{exercise}-{HANDWRITTEN}-{name}"


def apply_handwritten(text: str, entry: dict) -> tuple[str, int]:
    """(the mutated text, the 1-based line where `old` starts). `old` must occur exactly once
    inside the student regions (an occurrence outside them does not count); else UsageError."""
    spans = regions(text)
    old = entry["old"]
    hits, start = [], text.find(old)
    while start >= 0:
        first = text.count("\n", 0, start) + 1
        last = text.count("\n", 0, start + max(len(old.rstrip("\n")), 1) - 1) + 1
        if any(a <= first and last <= b for a, b in spans):
            hits.append((start, first))
        start = text.find(old, start + 1)
    if len(hits) != 1:
        raise UsageError(
            f"{entry.get('file', 'mutants.toml')}: {handwritten_id(entry['exercise'], entry['name'])}: "
            f"its old text occurs {len(hits)} times inside the solution's student regions "
            f"(it must occur exactly once): {old.strip().splitlines()[0][:100]!r}")
    at, line = hits[0]
    return text[:at] + entry["new"] + text[at + len(old):], line


def handwritten_mutants(root: Path, ex: Exercise, text: str | None = None,
                        entries: dict[str, list[dict]] | None = None) -> list[Mutant]:
    """The hand-written mutants of one exercise (its chapter's mutants.toml), listed ones
    marked `equivalent` included (the score counts them as equivalent, with their reason)."""
    path = ex.source("solution")
    if text is None:
        text = (root / path).read_text()
    out = []
    for e in (entries if entries is not None else handwritten_entries(root)).get(ex.id, []):
        new, line = apply_handwritten(text, e)
        out.append(Mutant(handwritten_id(ex.id, e["name"]), ex.id, ex.slug, HANDWRITTEN, line, 1,
                          " ".join(str(e["why"]).split()), path, f"{ex.chapter_dir}/{ex.file}",
                          new, unified(text, new, path)))
    return out


def choose(found: list[Mutant], most: int | None, seed: int) -> list[Mutant]:
    """At most `most` mutants, drawn with the seed (the same seed draws the same ones)."""
    if most is None or len(found) <= most:
        return found
    picked = set(m.id for m in random.Random(f"{seed}:{found[0].exercise}").sample(found, most))
    return [m for m in found if m.id in picked]


# ---------------------------------------------------------------------------
# --partial-starters: every region solved but one, which keeps the starter's placeholder

def _uncomment(line: str) -> str:
    """A STARTER line as make-starter writes it: the first '// ' (or a bare '//') removed."""
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    if stripped == "//":
        return ""
    return indent + stripped[3:] if stripped.startswith("// ") else line


def fill(text: str, keep_starter: set[int], todo: str | None = None) -> str:
    """The file with the blocks numbered in keep_starter (1-based) as in the starter and every
    other block as in the solution; the markers go. keep_starter = every block gives the
    starter (what tools/make-starter writes; `todo` is its `// TODO(<id>): <title>` text for a
    block without a STARTER part), an empty set the solution without its markers."""
    out: list[str] = []
    state, block, indent = "outside", 0, ""
    for line in text.splitlines():
        m = BEGIN.match(line)
        if state == "outside":
            if m:
                state, block, indent, has_starter = "solution", block + 1, m.group(1), False
            else:
                out.append(line)
        elif STARTER.match(line):
            state, has_starter = "starter", True
        elif END.match(line):
            if not has_starter and block in keep_starter:
                out.append(f"{indent}// TODO{todo or ': write this part'}")
            state = "outside"
        elif (state == "solution") != (block in keep_starter):
            out.append(_uncomment(line) if state == "starter" else line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def count_blocks(text: str) -> int:
    return sum(1 for line in text.splitlines() if BEGIN.match(line))


@dataclass
class Partial:
    """An exercise's solution with every student region filled but one, which keeps the
    starter's placeholder: a student who did all but one TODO. Its tests must fail."""
    id: str
    exercise: str
    slug: str
    region: int        # 1-based, in file order
    regions: int       # the file's regions
    line: int          # the region's // BEGIN SOLUTION line in the solution file
    todo: str          # the placeholder's first line (its TODO)
    path: str          # the solution file, relative to the repository root
    rel: str           # the same below starter/ (<chapter dir>/<file>)
    text: str

    def record(self) -> dict:
        return {"exercise": self.exercise, "slug": self.slug, "region": self.region,
                "regions": self.regions, "line": self.line, "todo": self.todo, "file": self.rel}


def partial_starters(root: Path, ex: Exercise, single: bool = False) -> list[Partial]:
    """One partial starter per student region of the exercise's solution file. An exercise
    with one region has none unless `single` (its only one is the untouched starter, which
    the grade step of tools/gpu-check already checks)."""
    text = (root / ex.source("solution")).read_text()
    k = count_blocks(text)
    if k == 0 or (k == 1 and not single):
        return []
    begins = [n for n, line in enumerate(text.splitlines(), start=1) if BEGIN.match(line)]
    todo = f"({ex.id}): {ex.title}"
    out = []
    for i in range(1, k + 1):
        new = fill(text, {i}, todo)
        starter_part = fill(_only_block(text, i), {1}, todo).strip().splitlines()
        first = next((ln.strip() for ln in starter_part if "TODO" in ln),
                     starter_part[0].strip() if starter_part else "")
        out.append(Partial(f"{ex.id}-partial-R{i}", ex.id, ex.slug, i, k, begins[i - 1],
                           first[:160], ex.source("solution"), f"{ex.chapter_dir}/{ex.file}", new))
    return out


def _only_block(text: str, i: int) -> str:
    """Block i of the text (markers included), nothing else."""
    lines, block, inside, out = text.splitlines(), 0, False, []
    for line in lines:
        if BEGIN.match(line):
            block += 1
            inside = block == i
        if inside:
            out.append(line)
            if END.match(line):
                inside = False
    return "\n".join(out) + "\n"


def write_partials(dest: Path, found: list[Partial], meta: dict) -> Path:
    """One student folder per partial starter, laid out like starter/; <dest>.partial.json
    beside it."""
    return _write_submissions(dest, found, meta, "partials", dest.parent / f"{dest.name}.partial.json")


# statuses that fail a partial starter: a test failure (or crash, timeout, sanitizer finding);
# a compile error fails it too, but says nothing about the tests
PARTIAL_FAILED = KILLED_BY_TESTS | KILLED_BY_SANITIZER


def partial_report(class_out: Path, data: dict) -> dict:
    """Every partial starter's grade; `passed` is true when every one failed its tests (none
    passed, none left ungraded)."""
    rows, problems = [], []
    for pid, p in sorted(data["partials"].items(), key=lambda kv: (_id_key(kv[1]["exercise"]),
                                                                     kv[1]["region"])):
        status, reason = _status(class_out, pid, p["exercise"])
        verdict = ("fails" if status in PARTIAL_FAILED else
                   "does not compile" if status in NOT_COMPILED else
                   "PASSES" if status in SURVIVED else "not graded")
        rows.append(dict(p, id=pid, status=status, reason=reason, verdict=verdict))
        if verdict == "PASSES":
            problems.append(f"{pid}: passes its tests with region {p['region']} of {p['regions']} "
                            f"(line {p['line']}) left as the starter's placeholder: {p['todo']}")
        elif verdict == "not graded":
            problems.append(f"{pid}: not graded ({status}: {reason})".rstrip())
    counts = {v: sum(1 for r in rows if r["verdict"] == v)
              for v in ("fails", "does not compile", "PASSES", "not graded")}
    return {"commit": data.get("commit"), "class_output": str(class_out), "total": len(rows),
            "counts": counts, "passed": bool(rows) and not problems, "problems": problems,
            "partials": rows}


def partial_markdown(result: dict) -> str:
    c = result["counts"]
    out = ["# Partial starters", "",
           "Each partial starter is an exercise's solution with every student region filled "
           "but one, which keeps the starter's placeholder (`tools/mutate --partial-starters`); "
           "its tests must fail.", "",
           f"{result['total']} partial starters: {c['fails']} fail their tests, "
           f"{c['does not compile']} do not compile, {c['PASSES']} pass, "
           f"{c['not graded']} not graded.", "",
           "| exercise | region | line | placeholder | status | verdict |",
           "|---|---|---|---|---|---|"]
    for r in result["partials"]:
        todo = r["todo"].replace("|", "\\|")
        out.append(f"| {r['exercise']} {r['slug']} | {r['region']} of {r['regions']} | {r['line']} "
                   f"| `{todo}` | {r['status']} | {r['verdict']} |")
    if result["problems"]:
        out += ["", "Problems:", ""] + [f"- {p}" for p in result["problems"]]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# --compile-check

def compile_command(root: Path, ex: Exercise, build_dir: Path | None) -> list[str]:
    """nvcc's arguments for the exercise's solution file, as CMake compiles it (no -Werror:
    student code never gets it). From <build>/compile_commands.json when there is one; one
    written for another checkout of the course (a worktree's main tree) serves too: its entry
    for the same file, with that checkout's folder replaced by this one's."""
    rel = ex.source("solution")
    src = (root / rel).resolve()
    for b in [build_dir] if build_dir else [root / "build" / "ci", root / "build"]:
        cc = b / "compile_commands.json" if b else None
        if cc and cc.is_file():
            entries = json.loads(cc.read_text())
            for e in entries:
                if _entry_file(e).resolve() == src:
                    return _clean(_entry_args(e), str(src))
            for e in entries:
                other = _entry_file(e).as_posix()
                if other.endswith("/" + rel):
                    args = _moved(_entry_args(e), other[:-len(rel) - 1], str(root.resolve()))
                    return _clean(args, str(src))
    nvcc = os.environ.get("CUDACXX") or "/usr/local/cuda/bin/nvcc"
    ch = root / "chapters"
    # the exercise's chapter first, then every other one: a chapter uses an earlier one's
    # headers (chapter 7 includes chapter 3's cudalab/stack.cuh)
    others = [d for d in sorted(ch.glob("*/include")) if d.parent.name != ex.chapter_dir]
    includes = [ch / ex.chapter_dir / "include", ch / ex.chapter_dir / "reference"] + others
    return [nvcc, *(a for d in includes for a in ("-I", str(d))),
            "-O3", "-DNDEBUG", "-std=c++17", "-arch=sm_90", "-Xcompiler=-Wall,-Wextra",
            "-x", "cu", "-c", "@SRC@", "-o", "@OUT@"]


def _entry_file(e: dict) -> Path:
    return Path(e.get("directory", "")) / e["file"]


def _entry_args(e: dict) -> list[str]:
    return e.get("arguments") or shlex.split(e["command"])


def _moved(args: list[str], old: str, new: str) -> list[str]:
    """The arguments with the folder `old` replaced by `new` where it starts a path: an
    argument, or after -I, =, a comma or a colon."""
    pat = re.compile(r"(?:^|(?<=-I)|(?<==)|(?<=,)|(?<=:))" + re.escape(old) + r"(?=/|$)")
    return [pat.sub(lambda _: new, a) for a in args]


def _clean(args: list[str], src: str) -> list[str]:
    out, skip = [], False
    for a in args:
        if skip:
            out.append("@OUT@")
            skip = False
        elif a == "-o":
            out.append(a)
            skip = True
        elif a.startswith("--Werror") or a == "-Werror":
            continue
        elif a.startswith("-Xcompiler="):
            flags = [f for f in a[len("-Xcompiler="):].split(",") if f != "-Werror"]
            if flags:
                out.append("-Xcompiler=" + ",".join(flags))
        elif a == src:
            out.append("@SRC@")
        else:
            out.append(a)
    return out


def compiles(m: Mutant, command: list[str], root: Path, timeout: float = 300) -> tuple[bool, str]:
    """Whether the mutant compiles (nvcc -c), and nvcc's last lines when it does not."""
    with tempfile.TemporaryDirectory(prefix="cudalab-mutant-") as tmp:
        src = Path(tmp) / Path(m.rel).name
        src.write_text(m.text)
        args = [str(src) if a == "@SRC@" else str(Path(tmp) / "m.o") if a == "@OUT@" else a
                for a in command]
        # includes relative to the solution's own folder still resolve
        args[1:1] = ["-I", str((root / m.path).parent)]
        try:
            p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=tmp)
        except (OSError, subprocess.TimeoutExpired) as e:
            return False, str(e)
        return p.returncode == 0, "\n".join((p.stdout + p.stderr).splitlines()[-8:])


def compile_check(found: list[Mutant], root: Path, exercises: dict[str, Exercise],
                  build_dir: Path | None, jobs: int, say=print) -> tuple[list[Mutant], list[str]]:
    """The mutants that compile, and one line for each one dropped."""
    commands = {e: compile_command(root, exercises[e], build_dir) for e in {m.exercise for m in found}}

    def one(m: Mutant):
        return m, *compiles(m, commands[m.exercise], root)

    kept, dropped = [], []
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        for m, ok, log in pool.map(one, found):
            if ok:
                kept.append(m)
            else:
                dropped.append(_dropped(m, log))
                say(f"dropped {m.id}: does not compile")
    return kept, dropped


def _dropped(m: Mutant, log: str) -> str:
    last = log.strip().splitlines()[-1:] or [""]
    return f"{m.id}: does not compile ({last[0][:160]})"


def tce_check(found: list[Mutant], root: Path, exercises: dict[str, Exercise],
              build_dir: Path | None, jobs: int, say=print
              ) -> tuple[list[Mutant], list[str], dict[str, dict]]:
    """--tce: --compile-check, and Trivial Compiler Equivalence (mutate_tce): every exercise's
    solution and every mutant compiled the same way, and the mutants whose machine code (device
    code of every architecture and host code) is the solution's taken out as equivalent.
    Returns the mutants that compile and differ, one line for each one dropped (it does not
    compile), and {id: record} of the equivalent ones (the record of `Mutant.record`, with
    `why` and `ptx_same`: whether the PTX the object embeds is the same too)."""
    commands = {e: compile_command(root, exercises[e], build_dir)
                for e in sorted({m.exercise for m in found}, key=_id_key)}
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        base = dict(zip(commands, pool.map(
            lambda e: _tce_solution(root, exercises[e], commands[e]), commands)))
        for e, (code, log) in base.items():
            if code is None:
                say(f"TCE: the solution of {e} does not compile as the mutants are compiled, so "
                    f"none of its mutants is compared: {log.strip().splitlines()[-1:]}")

        def one(m: Mutant):
            return m, *_tce_compare(root, exercises[m.exercise], m, commands[m.exercise],
                                    base[m.exercise][0])

        kept, dropped, same = [], [], {}
        for m, verdict, log, ptx in pool.map(one, found):
            if verdict is None:
                dropped.append(_dropped(m, log))
                say(f"dropped {m.id}: does not compile")
            elif verdict:
                same[m.id] = dict(m.record(), why=tce.REASON, ptx_same=ptx)
                say(f"equivalent {m.id}: the same machine code as the solution (TCE)"
                    + ("" if ptx else "; its PTX differs"))
            else:
                kept.append(m)
    return kept, dropped, same


def _tce_compile(root: Path, ex: Exercise, text: str, command: list[str]):
    path = root / ex.source("solution")
    return tce.compile_code(text, path.name, path.resolve(), command, path.parent)


def _tce_solution(root: Path, ex: Exercise, command: list[str]):
    return _tce_compile(root, ex, (root / ex.source("solution")).read_text(), command)


def _tce_compare(root: Path, ex: Exercise, m: Mutant, command: list[str], solution
                 ) -> tuple[bool | None, str, bool]:
    """(True when the mutant's code is the solution's, False when not, None when it does not
    compile; nvcc's last lines or what differs; whether the PTX is the same too). nvcc puts its
    process id in the module id of some files: when that makes the two ids differ in length
    (the same length is replaced by the same placeholder), the solution is compiled once more."""
    code, log = _tce_compile(root, ex, m.text, command)
    if code is None:
        return None, log, False
    if solution is None:
        return False, "the solution does not compile", False
    same, diff = code.same_as(solution)
    if not same and len(code.module_id) != len(solution.module_id):
        again, _ = _tce_solution(root, ex, command)
        if again is not None and len(again.module_id) == len(code.module_id):
            solution = again
            same, diff = code.same_as(solution)
    return same, diff, same and code.ptx_same_as(solution)


def tce_verdict(m: Mutant, root: Path, ex: Exercise, build_dir: Path | None) -> tuple[bool, str]:
    """(whether the mutant's machine code is its solution's, a line that says so or what
    differs) for `tools/mutate --show ID --tce`."""
    command = compile_command(root, ex, build_dir)
    solution, log = _tce_solution(root, ex, command)
    if solution is None:
        return False, f"the solution does not compile: {log.strip()}"
    same, diff, ptx = _tce_compare(root, ex, m, command, solution)
    if same is None:
        return False, f"the mutant does not compile: {diff.strip()}"
    if same:
        archs = ", ".join(sorted(solution.device))
        return True, (f"equivalent ({tce.REASON}): the device code ({archs or 'none'}) and the "
                      f"host code are the solution's" + ("" if ptx else "; the PTX differs"))
    return False, f"not equivalent by TCE, the code differs: {diff}"


# ---------------------------------------------------------------------------
# --write

def mutants_json_path(class_dir: Path) -> Path:
    """Beside the class folder (inside it, the grader would take it for a student)."""
    return class_dir.parent / f"{class_dir.name}.mutants.json"


def write_class(dest: Path, found: list[Mutant], meta: dict) -> Path:
    """One student folder per mutant, laid out like starter/; <dest>.mutants.json beside it."""
    return _write_submissions(dest, found, meta, "mutants", mutants_json_path(dest))


def _write_submissions(dest: Path, found: list, meta: dict, key: str, listing: Path) -> Path:
    """One student folder per mutant or partial starter (its `id`, its file `rel` with `text`),
    laid out like starter/; `listing` gets meta and {key: {id: record}} -> listing."""
    dest.mkdir(parents=True, exist_ok=True)
    for m in found:
        f = dest / m.id / m.rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(m.text)
    data = dict(meta, **{key: {m.id: m.record() for m in found}})
    listing.write_text(json.dumps(data, indent=2) + "\n")
    return listing


# ---------------------------------------------------------------------------
# --score

def _listings(root: Path):
    """(exercise id, entry) for every entry of the manifests' `equivalent_mutants`."""
    for p in sorted((root / "chapters").glob("*/exercises.toml")):
        with p.open("rb") as f:
            data = tomllib.load(f)
        for ex in data.get("exercise", []):
            for e in ex.get("equivalent_mutants", []):
                yield str(ex["id"]), e


def equivalents(root: Path) -> dict[str, dict[str, str]]:
    """exercise id -> {mutant id: why} from the manifests' `equivalent_mutants`
    (`[{id = "...", line = "...", why = "..."}]`; `reason` is read as a synonym of `why`), and
    the hand-written mutants marked `equivalent = "why"` in the chapters' mutants.toml."""
    out: dict[str, dict[str, str]] = {}
    for ex_id, e in _listings(root):
        out.setdefault(ex_id, {})[str(e["id"])] = str(e.get("why", e.get("reason", "")))
    for ex_id, entries in handwritten_entries(root).items():
        for e in entries:
            if "equivalent" in e:
                out.setdefault(ex_id, {})[handwritten_id(ex_id, e["name"])] = str(e["equivalent"])
    return out


def equivalent_lines(root: Path) -> dict[str, dict[str, str]]:
    """exercise id -> {mutant id: the solution's line it mutates, as the listing quotes it
    (`line = "..."`, stripped)}: mutant ids are line numbers, so the quote tells whether a
    listing still names the mutant a reviewer judged after the solution's lines moved."""
    out: dict[str, dict[str, str]] = {}
    for ex_id, e in _listings(root):
        if "line" in e:
            out.setdefault(ex_id, {})[str(e["id"])] = str(e["line"]).strip()
    return out


def _status(class_out: Path, mid: str, exercise: str) -> tuple[str, str]:
    from .submissions import safe_name
    f = class_out / "students" / safe_name(mid) / "results.json"
    if not f.is_file():
        return "not_graded", "no results.json"
    try:
        data = json.loads(f.read_text())
    except (OSError, ValueError) as e:
        return "not_graded", f"results.json unreadable ({e})"
    for e in data.get("cudalab", {}).get("exercises", []):
        if e.get("id") == exercise:
            return str(e.get("status", "")), str(e.get("reason", ""))
    return "not_graded", f"results.json has no exercise {exercise}"


def _id_key(ex_id: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"[.]", ex_id))


def rescore(e: dict) -> None:
    """An exercise's killed, counted (generated less equivalent, not compiled, not graded) and
    score, from its lists and kill counts (a report without the source-check column has none)."""
    killed = e["killed_by_tests"] + e["killed_by_sanitizer"] + e.get("killed_by_check", 0)
    counted = (e["generated"] - len(e["equivalent"]) - len(e["did_not_compile"])
               - len(e["not_graded"]))
    e["killed"], e["counted"] = killed, counted
    e["score"] = round(killed / counted, 4) if counted > 0 else None


def score(class_out: Path, data: dict, equivalent: dict[str, dict[str, str]]) -> dict:
    """Per exercise: operators, generated, equivalent, killed (tests, sanitizer, source check),
    survived, score. The mutants --tce found equivalent (`tce_equivalent` of the listing, never
    graded) count as generated and equivalent, with the manifest's reason when it lists them
    too."""
    per: dict[str, dict] = {}

    def entry(m: dict) -> tuple[dict, dict]:
        e = per.setdefault(m["exercise"], {
            "slug": m["slug"], "operators": {}, "generated": 0, "equivalent": [],
            "equivalent_tce": 0, "killed_by_tests": 0, "killed_by_sanitizer": 0,
            "killed_by_check": 0, "survived": [], "did_not_compile": [], "not_graded": [],
            "equivalent_but_killed": []})
        e["generated"] += 1
        op = e["operators"].setdefault(m["operator"], {"generated": 0, "killed": 0})
        op["generated"] += 1
        return e, op

    for mid, m in data.get("tce_equivalent", {}).items():
        e, _ = entry(m)
        listed = equivalent.get(m["exercise"], {}).get(mid)
        e["equivalent"].append({"id": mid, "why": listed if listed is not None else m["why"],
                                "tce": True, "what": m.get("what", "")})
        e["equivalent_tce"] += 1
    for mid, m in data["mutants"].items():
        ex = m["exercise"]
        e, op = entry(m)
        status, reason = _status(class_out, mid, ex)
        why = equivalent.get(ex, {}).get(mid)
        killed = status in KILLED_BY_TESTS or status in KILLED_BY_SANITIZER or status in KILLED_BY_CHECK
        if why is not None:
            e["equivalent"].append({"id": mid, "why": why})
            if killed:
                e["equivalent_but_killed"].append({"id": mid, "status": status, "reason": reason})
            continue
        if status in KILLED_BY_TESTS:
            e["killed_by_tests"] += 1
        elif status in KILLED_BY_SANITIZER:
            e["killed_by_sanitizer"] += 1
        elif status in KILLED_BY_CHECK:
            e["killed_by_check"] += 1
        elif status in SURVIVED:
            e["survived"].append({"id": mid, "line": m["line"], "what": m.get("what", ""),
                                  "diff": m["diff"]})
        elif status in NOT_COMPILED:
            e["did_not_compile"].append(mid)
        else:
            e["not_graded"].append({"id": mid, "status": status, "reason": reason})
        if killed:
            op["killed"] += 1
    for e in per.values():
        rescore(e)
    exercises = dict(sorted(per.items(), key=lambda kv: _id_key(kv[0])))
    killed = sum(e["killed"] for e in per.values())
    counted = sum(e["counted"] for e in per.values())
    return {"commit": data.get("commit"), "class_output": str(class_out),
            "killed": killed, "counted": counted,
            "score": round(killed / counted, 4) if counted else None, "exercises": exercises}


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} %"


def markdown(result: dict) -> str:
    out = ["# Mutation score", "",
           "Each mutant is an exercise's solution with one student mistake (`tools/mutate`). "
           "Score = killed / (generated - equivalent); mutants that did not compile or were not "
           "graded are left out of it and listed. An equivalent mutant is listed in the manifest "
           "with its reason, or was found by `--tce`: its compiled code is the solution's "
           "(same machine code: TCE), so it was not graded.", "",
           f"All exercises: {_pct(result['score'])} ({result['killed']} of {result['counted']})",
           "", "| exercise | operators | generated | equivalent | killed by tests | "
           "killed only by the sanitizer | killed by the source check | survived | score |",
           "|---|---|---|---|---|---|---|---|---|"]
    for ex, e in result["exercises"].items():
        operators = ", ".join(f"{k} {v['killed']}/{v['generated']}"
                              for k, v in sorted(e["operators"].items()))
        tce_note = f" ({e['equivalent_tce']} TCE)" if e.get("equivalent_tce") else ""
        out.append(f"| {ex} {e['slug']} | {operators} | {e['generated']} | {len(e['equivalent'])}"
                   f"{tce_note} "
                   f"| {e['killed_by_tests']} | {e['killed_by_sanitizer']} | {e['killed_by_check']} "
                   f"| {len(e['survived'])} "
                   f"| {_pct(e['score'])} |")
    for ex, e in result["exercises"].items():
        notes = []
        for s in e["survived"]:
            notes += [f"### survived: {s['id']} ({s['what']})", "", "```diff", s["diff"].rstrip(),
                      "```", ""]
        for s in e["equivalent_but_killed"]:
            notes.append(f"- {s['id']} is listed as equivalent in the manifest but was killed "
                         f"({s['status']}): the listing is wrong")
        for s in e["did_not_compile"]:
            notes.append(f"- {s} did not compile (run tools/mutate --compile-check)")
        for s in e["not_graded"]:
            notes.append(f"- {s['id']} not graded: {s['status']} {s['reason']}".rstrip())
        for s in e["equivalent"]:
            if s.get("tce") and s["why"] == tce.REASON:
                notes.append(f"- equivalent ({tce.REASON}): {s['id']} ({s['what']})")
            elif s.get("tce"):
                notes.append(f"- equivalent ({tce.REASON}): {s['id']}: {s['why']}")
            else:
                notes.append(f"- equivalent: {s['id']}: {s['why']}")
        if notes:
            out += ["", f"## {ex} {e['slug']}", ""] + notes
    return "\n".join(out).rstrip() + "\n"
