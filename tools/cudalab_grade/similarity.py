"""The class's similarity report: `tools/grade --submissions DIR --similarity`.

Every pair of submissions of each exercise is compared by copydetect
(https://github.com/blingenf/copydetect, 0.5.0: the winnowing fingerprints
of MOSS, Schleimer, Wilkerson and Aiken 2003), through its API
(`CodeFingerprint`, `compare_files`), never by an algorithm of ours.
Before that, from each submitted file:

- comments are removed (Pygments' CUDA lexer, which copydetect uses too);
- the code the starter gives is removed: the starter's lines outside the
  student regions (`// BEGIN SOLUTION` ... `// END SOLUTION` of the
  solution file, markers.py), found in the submission by aligning its lines
  with the starter's (whitespace ignored, in order). Without `solutions/`
  (the student edition) every line of the starter counts as given;
- what remains is fingerprinted with the whole starter file as copydetect's
  boilerplate, so text that every student got (the placeholders of the
  regions, given code a student reformatted) never counts as a match.

copydetect then replaces names by one letter and drops whitespace before
taking k-grams of 25 characters, so a copy with renamed identifiers, other
whitespace or braces, or its functions in another order still matches. A
pair's score is, for each side, the share of that side's fingerprinted code
found in the other (copydetect's similarity); a pair is flagged when either
share reaches the threshold.

The pass reads files only: no build, no GPU. Submissions are found, unpacked
(safely, submissions.py) and mapped to exercise files exactly as for
grading. Students are shown by pseudonym, as on the leaderboard
(leaderboard.py): the same key (the output folder's grader-secret.json) gives
the same pseudonyms, and pseudonyms.csv (mode 0600) maps them back to ids.
Submitted code is shown as text: html.escape in similarity.html (which also
forbids scripts by its Content-Security-Policy), fenced blocks no line can
close in similarity.md (escape.md_block).

copydetect is not in the standard library: `setup_problem()` says what is
missing and how to install it. copydetect 0.5.0 imports matplotlib for its
own HTML report, which this module does not use; when matplotlib is not
installed, an empty stand-in is given to that import only and taken out of
sys.modules right after.
"""
from __future__ import annotations

import difflib
import html
import io
import sys
import tempfile
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

from . import leaderboard, signing, submissions
from .escape import md_block, md_text, printable
from .manifest import Exercise
from .markers import BEGIN, END, STARTER

COPYDETECT_VERSION = "0.5.0"
DEPENDENCIES = ("numpy", "pygments", "jinja2", "markupsafe", "tqdm")
INSTALL = ("sudo apt-get install python3-numpy python3-pygments python3-jinja2 python3-tqdm "
           f"python3-pip && sudo pip install --no-deps --break-system-packages "
           f"copydetect=={COPYDETECT_VERSION}")
NOISE = 25          # copydetect's noise threshold: k-grams of 25 characters of filtered code
WINDOW = 1          # copydetect's default (guarantee threshold = noise threshold): every k-gram
THRESHOLD = 0.5     # default share of one side found in the other that flags a pair
MAX_PAIRS = 30      # flagged pairs shown per exercise (the others are counted)
CONTEXT = 3         # lines shown around a matched region
MAX_LINES = 400     # lines shown per side of a pair
FILES = ("similarity.md", "similarity.html")


class Missing(Exception):
    """copydetect, or a module it needs, cannot be imported; .module names it."""

    def __init__(self, module: str, detail: str = ""):
        super().__init__(module)
        self.module = module
        self.detail = detail


def setup_problem(e: Missing) -> tuple[str, str]:
    """(what, fix) of a setup problem, as tools/grade prints it."""
    what = (f"the Python module {e.module} is not installed (tools/grade --similarity uses "
            f"copydetect {COPYDETECT_VERSION}" + ("" if e.module == "copydetect" else
                                                  ", which needs it") + ")")
    if e.detail:
        what += f": {e.detail}"
    return what, INSTALL


def load_copydetect():
    """The copydetect module; Missing when it or one of its dependencies cannot be imported."""
    try:
        return _import()
    except ModuleNotFoundError as e:
        if _top(e) != "matplotlib":
            raise Missing(_top(e)) from None
    except ImportError as e:   # installed but broken (a numpy built for another Python...)
        raise Missing(_top(e), str(e)) from None
    # copydetect.detector imports matplotlib.pyplot at its top, for CopyDetector's report only
    saved = {n: sys.modules.get(n) for n in ("matplotlib", "matplotlib.pyplot")}
    stub = types.ModuleType("matplotlib")
    stub.pyplot = types.ModuleType("matplotlib.pyplot")   # type: ignore[attr-defined]
    sys.modules["matplotlib"], sys.modules["matplotlib.pyplot"] = stub, stub.pyplot  # type: ignore
    try:
        return _import()
    except ModuleNotFoundError as e:
        raise Missing(_top(e)) from None
    except ImportError as e:
        raise Missing(_top(e), str(e)) from None
    finally:
        for n, m in saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m


def _top(e: ImportError) -> str:
    return (e.name or "copydetect").split(".")[0]


def _import():
    import copydetect  # noqa: PLC0415
    if not hasattr(copydetect, "CodeFingerprint") or not hasattr(copydetect, "compare_files"):
        raise Missing("copydetect", f"version {getattr(copydetect, '__version__', '?')} lacks "
                      f"CodeFingerprint or compare_files (want {COPYDETECT_VERSION})")
    return copydetect


# --- what the student wrote ------------------------------------------------------------------

def strip_comments(text: str) -> str:
    """text without its comments (a comment becomes a space, or the newlines it spanned); the
    preprocessor lines stay. Every line stays at its number."""
    from pygments import token  # noqa: PLC0415
    from pygments.lexers import get_lexer_by_name  # noqa: PLC0415
    lexer = get_lexer_by_name("cuda", stripnl=False, ensurenl=False)
    out = []
    for kind, value in lexer.get_tokens(text):
        if kind in token.Comment and kind not in token.Comment.Preproc \
                and kind is not token.Comment.PreprocFile:
            out.append("\n" * value.count("\n") if "\n" in value else " ")
        else:
            out.append(value)
    return "".join(out)


def starter_lines(root: Path, ex: Exercise) -> tuple[list[str], list[bool]]:
    """The lines of the exercise's starter file, and for each whether it is given code (outside
    the student regions of the solution file); every line when the regions cannot be told."""
    starter = _read_text(root / ex.source("starter"))
    lines = starter.splitlines()
    solution = root / ex.source("solution")
    if not solution.is_file():
        return lines, [True] * len(lines)
    made: list[tuple[str, bool]] = []
    state = "outside"
    for line in _read_text(solution).splitlines():
        if state == "outside":
            if BEGIN.match(line):
                state, has_starter = "solution", False
            else:
                made.append((line, True))
        elif STARTER.match(line):
            state, has_starter = "starter", True
        elif END.match(line):
            if not has_starter:
                made.append(("", False))    # the TODO line make-starter writes
            state = "outside"
        elif state == "starter":
            body = line.strip()
            made.append((body[3:] if body.startswith("// ") else "", False))
    if len(made) != len(lines) or any(g and m != s for (m, g), s in zip(made, lines)):
        return lines, [True] * len(lines)   # the starter has drifted: all of it counts as given
    return lines, [g for _, g in made]


def _key(line: str) -> str:
    return "".join(line.split())


def student_lines(text: str, given: tuple[list[str], list[bool]]) -> list[tuple[int, str]]:
    """The submitted text without comments, blank lines and the starter's given lines: (line
    number in the submitted file, text) of each line left."""
    lines, flags = given
    ref = strip_comments("\n".join(lines)).split("\n")
    ref_keys, ref_given = [], []
    for line, g in zip(ref, flags):
        if _key(line):
            ref_keys.append(_key(line))
            ref_given.append(g)
    sub = [(n, line.rstrip()) for n, line in enumerate(strip_comments(text).split("\n"), 1)
           if _key(line)]
    keys = [_key(line) for _, line in sub]
    drop: set[int] = set()
    matcher = difflib.SequenceMatcher(None, ref_keys, keys, autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        drop.update(b + k for k in range(size) if ref_given[a + k])
    return [x for i, x in enumerate(sub) if i not in drop]


def student_code(text: str, given: tuple[list[str], list[bool]]) -> str:
    """The text of student_lines, what copydetect compares."""
    kept = student_lines(text, given)
    return "".join(line + "\n" for _, line in kept)


def _read_text(path: Path) -> str:
    return _decode(path.read_bytes())


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


# --- comparing -----------------------------------------------------------------------------

@dataclass
class Side:
    student: str
    code: str
    fingerprint: object
    numbers: list[int] = field(default_factory=list)   # each line's number in the submitted file


@dataclass
class Pair:
    a: Side
    b: Side
    share_a: float        # of a's fingerprinted code found in b
    share_b: float
    tokens: int           # matched characters of a's filtered code (copydetect's token overlap)
    slices_a: list[tuple[int, int]]
    slices_b: list[tuple[int, int]]

    @property
    def score(self) -> float:
        return max(self.share_a, self.share_b)


@dataclass
class ExerciseResult:
    ex: Exercise
    compared: int = 0                    # submissions with code of their own
    starter_only: int = 0                # submissions with nothing left after stripping
    pairs: int = 0                       # pairs compared
    flagged: list[Pair] = field(default_factory=list)
    closest: float = 0.0


def _slices(arr, length: int) -> list[tuple[int, int]]:
    if len(arr) == 0 or len(arr[0]) == 0:
        return []
    return [(max(0, min(int(s), length)), max(0, min(int(e), length)))
            for s, e in zip(arr[0], arr[1]) if int(e) > int(s)]


def compare_exercise(cd, ex: Exercise, codes: dict[str, str | list[tuple[int, str]]],
                     boilerplate: str, threshold: float) -> ExerciseResult:
    """Every pair of the students' codes of one exercise (student -> the code to compare, or
    its lines as student_lines gives them)."""
    import numpy as np  # noqa: PLC0415  (copydetect's dependency)
    res = ExerciseResult(ex)
    bp = cd.CodeFingerprint(ex.file, NOISE, 1, language="cuda", fp=io.StringIO(boilerplate))
    bp_hashes = np.unique(np.array(sorted(bp.hashes)))
    sides = []
    for student in sorted(codes):
        given = codes[student]
        numbered = list(enumerate(given.splitlines(), 1)) if isinstance(given, str) else given
        code = "".join(line + "\n" for _, line in numbered)
        fp = cd.CodeFingerprint(ex.file, NOISE, WINDOW, boilerplate=bp_hashes, language="cuda",
                                fp=io.StringIO(code))
        if not fp.hashes or fp.token_coverage == 0:
            res.starter_only += 1
            continue
        sides.append(Side(student, code, fp, [n for n, _ in numbered]))
    res.compared = len(sides)
    for i, a in enumerate(sides):
        for b in sides[i + 1:]:
            res.pairs += 1
            overlap, (sa, sb), (sl_a, sl_b) = cd.compare_files(a.fingerprint, b.fingerprint)
            pair = Pair(a, b, float(sa), float(sb), int(overlap),
                        _slices(sl_a, len(a.code)), _slices(sl_b, len(b.code)))
            res.closest = max(res.closest, pair.score)
            if pair.score >= threshold and pair.tokens > 0:
                res.flagged.append(pair)
    return res


def run(root: Path, folder: Path, exercises: list[Exercise], only: list[str] | None = None,
        threshold: float = THRESHOLD, say=lambda msg: None, cd=None
        ) -> tuple[list[ExerciseResult], list[str], list[str]]:
    """Compare the submissions in folder: (results per exercise, students, notes on entries
    that could not be read)."""
    cd = cd or load_copydetect()
    entries = submissions.discover(folder)
    if only:
        entries = [e for e in entries if e.path.name in only or e.student in only]
    codes: dict[str, dict[str, list[tuple[int, str]]]] = {ex.id: {} for ex in exercises}
    notes: list[str] = []
    students: list[str] = []
    given = {ex.id: starter_lines(root, ex) for ex in exercises}
    with tempfile.TemporaryDirectory(prefix="cudalab-similarity-") as tmp:
        for n, entry in enumerate(entries):
            students.append(entry.student)
            if entry.kind == "bad":
                notes.append(f"{entry.student}: not read ({entry.why})")
                continue
            folder_of = entry.path
            if entry.kind != "dir":
                folder_of = Path(tmp) / f"{n}"
                try:
                    submissions.unpack(entry, folder_of)
                except submissions.Rejected as e:
                    notes.append(f"{entry.student}: not read (submission rejected: {e})")
                    continue
            sub = submissions.map_files(folder_of, exercises, student=entry.student)
            for ex_id, path in sub.files.items():
                try:
                    text = _decode(submissions.read_source(path))
                except OSError as e:
                    notes.append(f"{entry.student}: {ex_id} not read ({e.strerror or e})")
                    continue
                codes[ex_id][entry.student] = student_lines(text, given[ex_id])
    results = []
    for ex in exercises:
        start = time.monotonic()
        lines, _ = given[ex.id]
        r = compare_exercise(cd, ex, codes[ex.id], strip_comments("\n".join(lines) + "\n"),
                             threshold)
        results.append(r)
        if r.compared or r.starter_only:
            say(f"  {ex.id} {ex.slug}: {r.compared} submission(s) compared, {r.pairs} pair(s), "
                f"{len(r.flagged)} flagged ({time.monotonic() - start:.1f} s)")
    return results, students, notes


# --- the report ------------------------------------------------------------------------------

def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _marks(code: str, slices: list[tuple[int, int]]) -> list[list[tuple[str, bool]]]:
    """The code's lines, each as (text, matched) segments."""
    merged: list[list[int]] = []
    for s, e in sorted(slices):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    out, pos, k = [], 0, 0
    lines = code.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    for line in lines:
        end = pos + len(line)
        segs: list[tuple[str, bool]] = []
        at = pos
        while k < len(merged) and merged[k][1] <= pos:
            k += 1
        j = k
        while j < len(merged) and merged[j][0] < end:
            s, e = max(merged[j][0], pos), min(merged[j][1], end)
            if s > at:
                segs.append((code[at:s], False))
            segs.append((code[s:e], True))
            at = e
            j += 1
        if at < end:
            segs.append((code[at:end], False))
        out.append(segs)
        pos = end + 1
    return out


def _shown(lines: list[list[tuple[str, bool]]]) -> list[int | None]:
    """Line indexes to show (matched lines and CONTEXT lines around them), None for a gap."""
    hit = [any(m and t.strip() for t, m in segs) for segs in lines]
    out: list[int | None] = []
    prev = -1
    for i in range(len(lines)):
        if not any(hit[max(0, i - CONTEXT):i + CONTEXT + 1]):
            continue
        if i != prev + 1:
            out.append(None)
        out.append(i)
        prev = i
        if len(out) >= MAX_LINES:
            break
    if out and prev < len(lines) - 1:
        out.append(None)
    return out


def _number(side: Side, i: int) -> int:
    return side.numbers[i] if i < len(side.numbers) else i + 1


def _md_side(name: str, side: Side, slices) -> list[str]:
    lines = _marks(side.code, slices)
    body = []
    for i in _shown(lines):
        if i is None:
            body.append("    ...")
            continue
        segs = lines[i]
        mark = ">" if any(m and t.strip() for t, m in segs) else " "
        body.append(f"{mark}{_number(side, i):4d} | " + "".join(t for t, _ in segs))
    return [f"{md_text(name)} (line numbers of the submitted file; `>`: in the other "
            "submission):", "", *md_block("\n".join(body)), ""]


def markdown(results: list[ExerciseResult], names: dict[str, str], threshold: float,
             notes: list[str], version: str) -> str:
    lines = ["# Similarity", "",
             "Every pair of submissions of each exercise, compared by copydetect "
             f"{md_text(version)} "
             "(winnowing fingerprints, as MOSS does: k-grams of 25 characters of code whose "
             "names are replaced by one letter, without whitespace) after removing comments and "
             "the code the starter gives, with the starter file as boilerplate. A share is how "
             "much of one submission's code is also in the other's (matched tokens: the "
             "characters of A's normalised code found in B); a pair is listed when "
             f"either share is at least {_pct(threshold)}. A high share is a reason to read "
             "both submissions, not a proof of copying: short exercises leave little room to "
             "differ.", "",
             "Students are shown by pseudonym; `pseudonyms.csv` (yours alone) maps them to "
             "student ids.", "",
             "| exercise | submissions compared | starter only | pairs | flagged | closest |",
             "|---|---|---|---|---|---|"]
    for r in results:
        if r.compared or r.starter_only:
            lines.append(f"| {md_text(r.ex.id)} {md_text(r.ex.slug)} | {r.compared} | "
                         f"{r.starter_only} | {r.pairs} | {len(r.flagged)} | {_pct(r.closest)} |")
    lines.append("")
    for r in results:
        if not r.flagged:
            continue
        lines += [f"## {md_text(r.ex.id)} {md_text(r.ex.slug)}", "",
                  "| # | student A | student B | A in B | B in A | matched tokens |",
                  "|---|---|---|---|---|---|"]
        shown = _ordered(r.flagged, names)[:MAX_PAIRS]
        for n, p in enumerate(shown, 1):
            lines.append(f"| {n} | {md_text(names[p.a.student])} | {md_text(names[p.b.student])} "
                         f"| {_pct(p.share_a)} | {_pct(p.share_b)} | {p.tokens} |")
        if len(r.flagged) > len(shown):
            lines.append(f"\n{len(r.flagged) - len(shown)} more pair(s) at or above the "
                         "threshold are not shown.")
        lines.append("")
        for n, p in enumerate(shown, 1):
            lines += [f"### {md_text(r.ex.id)} pair {n}: {md_text(names[p.a.student])} and "
                      f"{md_text(names[p.b.student])}", ""]
            lines += _md_side(names[p.a.student], p.a, p.slices_a)
            lines += _md_side(names[p.b.student], p.b, p.slices_b)
    if notes:
        lines += ["## Not compared", ""]
        lines += [f"- {md_text(n)}" for n in notes]
        lines.append("")
    return "\n".join(lines) + "\n"


def _ordered(pairs: list[Pair], names: dict[str, str]) -> list[Pair]:
    """The pairs closest first, each with its sides in pseudonym order (so that neither the order
    of the rows nor that of the sides depends on the student ids)."""
    def oriented(p: Pair) -> Pair:
        if names[p.a.student] <= names[p.b.student]:
            return p
        return Pair(p.b, p.a, p.share_b, p.share_a, p.tokens, p.slices_b, p.slices_a)
    return sorted((oriented(p) for p in pairs),
                  key=lambda p: (-p.score, -p.tokens, names[p.a.student], names[p.b.student]))


def _esc(text: str) -> str:
    return html.escape(printable(text), quote=True)


def _anchor(ex: Exercise, n: int) -> str:
    return "pair-" + "".join(c if c.isalnum() else "-" for c in ex.id) + f"-{n}"


def _html_side(side: Side, slices) -> str:
    lines = _marks(side.code, slices)
    out = []
    for i in _shown(lines):
        if i is None:
            out.append('<span class="gap">    ...</span>')
            continue
        segs = lines[i]
        text = "".join(f"<mark>{_esc(t)}</mark>" if m else _esc(t) for t, m in segs)
        out.append(f'<span class="ln">{_number(side, i):4d}</span> {text}')
    return "<pre>" + "\n".join(out) + "</pre>"


_CSS = """body{font-family:sans-serif;margin:1.5em;max-width:110em}
table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:.2em .5em;vertical-align:top}
table.sbs{width:100%;table-layout:fixed}table.sbs td{width:50%}
pre{font-size:85%;overflow-x:auto;margin:0}mark{background:#ffe08a}
.ln,.gap{color:#888}"""


def html_page(results: list[ExerciseResult], names: dict[str, str], threshold: float,
              notes: list[str], version: str) -> str:
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
           "style-src 'unsafe-inline'\">",
           "<title>Similarity</title>", f"<style>{_CSS}</style></head><body>",
           "<h1>Similarity</h1>",
           f"<p>Every pair of submissions of each exercise, compared by copydetect {_esc(version)} "
           "(winnowing fingerprints, as MOSS does) after removing comments and the code the "
           "starter gives, with the starter file as boilerplate. A share is how much of one "
           "submission's code is also in the other's; a pair is listed when either share is at "
           f"least {_pct(threshold)}. Highlighted: the code found in the other submission; the "
           "line numbers are those of the submitted file. A "
           "high share is a reason to read both submissions, not a proof of copying.</p>",
           "<p>Students are shown by pseudonym; <code>pseudonyms.csv</code> (yours alone) maps "
           "them to student ids.</p>",
           "<table><tr><th>exercise</th><th>submissions compared</th><th>starter only</th>"
           "<th>pairs</th><th>flagged</th><th>closest</th></tr>"]
    for r in results:
        if r.compared or r.starter_only:
            out.append(f"<tr><td>{_esc(r.ex.id)} {_esc(r.ex.slug)}</td><td>{r.compared}</td>"
                       f"<td>{r.starter_only}</td><td>{r.pairs}</td><td>{len(r.flagged)}</td>"
                       f"<td>{_pct(r.closest)}</td></tr>")
    out.append("</table>")
    for r in results:
        if not r.flagged:
            continue
        shown = _ordered(r.flagged, names)[:MAX_PAIRS]
        out += [f"<h2>{_esc(r.ex.id)} {_esc(r.ex.slug)}</h2>",
                "<table><tr><th>#</th><th>student A</th><th>student B</th><th>A in B</th>"
                "<th>B in A</th><th>matched tokens</th></tr>"]
        for n, p in enumerate(shown, 1):
            out.append(f'<tr><td><a href="#{_anchor(r.ex, n)}">{n}</a></td>'
                       f"<td>{_esc(names[p.a.student])}</td>"
                       f"<td>{_esc(names[p.b.student])}</td><td>{_pct(p.share_a)}</td>"
                       f"<td>{_pct(p.share_b)}</td><td>{p.tokens}</td></tr>")
        out.append("</table>")
        if len(r.flagged) > len(shown):
            out.append(f"<p>{len(r.flagged) - len(shown)} more pair(s) at or above the threshold "
                       "are not shown.</p>")
        for n, p in enumerate(shown, 1):
            a, b = names[p.a.student], names[p.b.student]
            out += [f'<h3 id="{_anchor(r.ex, n)}">{_esc(r.ex.id)} pair {n}: {_esc(a)} '
                    f"({_pct(p.share_a)}) and {_esc(b)} ({_pct(p.share_b)})</h3>",
                    f'<table class="sbs"><tr><th>{_esc(a)}</th><th>{_esc(b)}</th></tr>',
                    f"<tr><td>{_html_side(p.a, p.slices_a)}</td>"
                    f"<td>{_html_side(p.b, p.slices_b)}</td></tr></table>"]
    if notes:
        out += ["<h2>Not compared</h2>", "<ul>", *(f"<li>{_esc(n)}</li>" for n in notes), "</ul>"]
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write(out: Path, results: list[ExerciseResult], students: list[str], notes: list[str],
          threshold: float, version: str) -> dict[str, str]:
    """similarity.md and similarity.html in out, the pseudonyms in pseudonyms.csv (0600);
    the student -> pseudonym map."""
    out.mkdir(parents=True, exist_ok=True)
    key = signing.load_or_create(out).key
    names = leaderboard.pseudonyms(key, students)
    pseudo_notes = [_pseudonymise(n, names) for n in notes]
    signing.write_file(out / "similarity.md",
                       markdown(results, names, threshold, pseudo_notes, version))
    signing.write_file(out / "similarity.html",
                       html_page(results, names, threshold, pseudo_notes, version))
    leaderboard.write_mapping(out, names)
    return names


def _pseudonymise(note: str, names: dict[str, str]) -> str:
    """A note about an entry, with the student id (its first part) replaced by the pseudonym."""
    for student in sorted(names, key=len, reverse=True):
        if note.startswith(student + ": "):
            return names[student] + note[len(student):]
    return note


def check() -> int:
    """`python3 -m cudalab_grade.similarity --check`: whether copydetect can be used here."""
    try:
        cd = load_copydetect()
    except Missing as e:
        what, fix = setup_problem(e)
        print(f"not available: {what}; fix: {fix}")
        return 1
    print(f"copydetect {getattr(cd, '__version__', '?')}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] != ["--check"]:
        sys.exit("usage: python3 -m cudalab_grade.similarity --check")
    sys.exit(check())
