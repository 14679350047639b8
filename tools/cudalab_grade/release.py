"""The student edition of the course: what tools/make-release writes, and its leak check.

The edition is the course without what only the instructor and the course's
developers need: the reference solutions, the red-team suite (built from the
solutions), the tools that read solutions/, and every copy of a solution.

Which files: the parts in PARTS, less the LEFT_OUT names, as of the commit
HEAD in a git checkout (or the files on disk: outside git, or when asked). A
symbolic link is never followed out of the course: one whose target is
outside it, or left out, is not written; a folder reached through a link is
not read.

Changed on the way (the repository itself is never changed):

- CMakePresets.json: every configure preset builds the starter only
  (CUDALAB_IMPLEMENTATIONS=starter, so solutions/ is never needed), and
  every test preset excludes the CTest tests whose command names a left-out
  file (tools/make-starter --check).
- Markdown: the lessons' folded "Reference solution" blocks (<details> around
  a Doxygen \\dontinclude of solutions/...) are removed; STUBS pages are
  replaced by a short page under the same anchor, so every \\ref still resolves.
- README.md and docs/mainpage.md: a paragraph saying what the edition is.
- starter/ and the chapters' headers: a later exercise's starter, or a
  chapter's header, that carries the whole of an earlier exercise's solution
  region (the merge path of 2.6 in 2.7, the warp heap of 5.3 in chapter 5's
  warp_heap.cuh, ...) gets that region's starter text instead, behind a
  comment saying so ("withheld").

The check: every solution region (a // BEGIN SOLUTION ... // END SOLUTION
block of solutions/) is searched for in every text file of the edition, line
by line with the whitespace normalised and comments and near-empty lines
("}", "return x;", "__syncthreads();") left out. A leak is a run of
WINDOW consecutive such lines of one region, or all of a region that has
fewer; a run the course publishes anyway (outside every region of
solutions/: the starters' given code) is not a leak, unless the whole region
is published so (a given copy of a solution). Also leaks: any left-out path
present in the edition, a hidden suite (*_hidden_test.cu), a symbolic link
that leaves it. Python 3.11+, standard library only.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import textwrap
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

# The parts of the course tree that make up the edition; anything else is left out.
PARTS = ("CMakeLists.txt", "CMakePresets.json", "cmake", "chapters", "starter", "tests", "tools",
         "docs", "README.md", ".gitignore", ".ci")

# Left out of the edition: a file, or a folder (ending in /), and why.
LEFT_OUT: dict[str, str] = {
    "solutions/": "the reference solutions",
    "tests/redteam/": "the red-team suite: its attacks are built from the solutions, its controls "
                      "copy solutions/ when it runs (instructors)",
    "tools/make-starter": "regenerates starter/ from solutions/ (course developers)",
    "tools/make-class": "makes fake classes out of the solutions (instructors)",
    "tools/redteam": "grades the red-team suite (instructors)",
    "tools/make-release": "writes this edition (instructors)",
    "tools/cudalab_grade/redteam.py": "the red-team suite's driver (instructors)",
    "tools/cudalab_grade/release.py": "the edition's writer (instructors)",
    "tests/host/tools/test_make_starter.py": "tests a tool the edition leaves out",
    "tests/host/tools/test_make_class.py": "tests a tool the edition leaves out",
    "tests/host/tools/test_redteam.py": "tests a tool the edition leaves out",
    "tests/host/tools/test_make_release.py": "tests a tool the edition leaves out",
    "tests/host/tools/test_forbidden.py": "checks every file of solutions/ (course developers)",
    "tests/host/tools/test_manifest.py": "checks that every manifest entry has its solution file "
                                         "(course developers)",
    "starter/.make-starter.json": "tools/make-starter's record of the starter files it wrote",
}
NOT_A_PART = "not a part of the edition"
HIDDEN_SUITE = re.compile(r"_hidden_test\.[A-Za-z]+$")  # an instructor's hidden suite, anywhere

# Pages replaced by a stub with the same title and anchor (the \ref to them still resolve).
STUBS: dict[str, str] = {
    "docs/guides/contributing.md":
        "Adding or changing an exercise happens in the full cudalab repository: it holds the\n"
        "reference solutions (`solutions/`), from which `tools/make-starter` generates the\n"
        "starter, and the tools that check them. This student edition leaves them out.\n",
}
BANNER = ("**Student edition.** This is the student edition of cudalab{source}: the lessons, the "
          "starter, the tests and the grader, without the reference solutions (`solutions/`), the "
          "red-team suite and the instructors' and course developers' tools "
          "(`tools/make-starter`, `tools/make-class`, `tools/redteam`). Where the text mentions "
          "them, they are in the full repository. The lessons' folded reference solutions are left "
          "out too, and where the full course gives an earlier exercise's solution in a later "
          "exercise's starter, this edition has that exercise's starter text instead "
          "(a `// Student edition:` comment says so): write your own there.\n")
BANNER_FILES = ("README.md", "docs/mainpage.md")

WINDOW = 4
# Where a given copy of an earlier exercise's solution may stand, and is withheld: the
# starters, and the chapters' headers (chapter 5's warp_heap.cuh gives 5.3's heap to 5.4).
WITHHELD_IN = ("starter/", "chapters/")
SOURCE_SUFFIXES = {".cu", ".cuh", ".hpp", ".h", ".cpp"}
_WORD = re.compile(r"\w+")
_DOXY_SOLUTIONS = re.compile(r"^\s*[\\@](dontinclude|include|includelineno|includedoc|snippet|"
                             r"snippetlineno|snippetdoc|verbinclude|htmlinclude|latexinclude)\b\S*"
                             r"\s+\S*solutions/")
_SKIP_DIRS = {".git", "build", ".grade", "__pycache__", ".gl", ".whl"}


class ReleaseError(Exception):
    """The edition cannot be written as asked: printed as it is, exit code 2."""


# ---------------------------------------------------------------- solution regions

def _make_starter():
    """tools/make-starter as a module: its marker rules and starter text are the one source."""
    path = Path(__file__).resolve().parent.parent / "make-starter"
    loader = importlib.machinery.SourceFileLoader("cudalab_make_starter", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def code_of(line: str) -> str | None:
    """The line with its whitespace normalised and any trailing // comment removed;
    None for a blank or comment-only line."""
    s = " ".join(line.split())
    cut = s.find("//")
    while cut != -1:
        if s[:cut].count('"') % 2 == 0:  # not inside a string literal
            s = s[:cut].rstrip()
            break
        cut = s.find("//", cut + 2)
    if not s or s.startswith("/*") or s == "*" or s.startswith(("* ", "*/")):
        return None
    return s


def key_of(line: str) -> str | None:
    """The line as the check compares it: code_of(), and None for a near-empty line too
    ("}", "return x;", "__syncthreads();", "#pragma unroll"): fewer than three words and
    fewer than 20 characters."""
    s = code_of(line)
    if s is None:
        return None
    if len(_WORD.findall(s)) < 3 and len(s.replace(" ", "")) < 20:
        return None
    return s


@dataclass
class Region:
    """One // BEGIN SOLUTION ... // END SOLUTION block of a solution file."""
    path: str                        # solutions/<chapter>/<file>
    line: int                        # the BEGIN SOLUTION line
    exercise: str | None             # the manifest's id of the file, "7.1"
    solution: list[str] = field(default_factory=list)   # the solution's lines, as written
    starter: list[str] = field(default_factory=list)    # what the starter has in its place
    keys: list[str] = field(default_factory=list)       # key_of() of the solution lines
    code: list[str] = field(default_factory=list)       # code_of() of the solution lines

    def where(self) -> str:
        ex = f"exercise {self.exercise}'s solution" if self.exercise else "a solution"
        return f"{ex} ({self.path}:{self.line})"


@dataclass
class Solutions:
    """What the check needs from the full course: the regions and the text published anyway."""
    regions: list[Region]
    public_windows: set[tuple[str, ...]]
    given_away: set[int]             # indices of regions whose whole text is published
    # min(WINDOW, len(keys)) keys in a row of a region -> [region index]
    index: dict[tuple[str, ...], list[int]] = field(default_factory=dict)

    def __post_init__(self):
        for ri, r in enumerate(self.regions):
            w = min(WINDOW, len(r.keys))
            for k in range(len(r.keys) - w + 1 if w else 0):
                self.index.setdefault(tuple(r.keys[k:k + w]), []).append(ri)


def _solution_files(root: Path) -> dict[str, str]:
    """solutions/<chapter>/<file> -> text, for every source file of root/solutions on disk."""
    base = root / "solutions"
    if not base.is_dir() or base.is_symlink():
        return {}
    out = {}
    for top, dirs, names in os.walk(base, followlinks=False):
        dirs.sort()
        for n in sorted(names):
            f = Path(top) / n
            if f.suffix in SOURCE_SUFFIXES and f.is_file() and not f.is_symlink():
                out[f.relative_to(root).as_posix()] = f.read_text(errors="replace")
    return out


def read_solutions(root: Path, texts: dict[str, str] | None = None) -> Solutions:
    """Every region of the solution files (texts: solutions/... -> text; default: those on disk
    under root), with the starter text make-starter gives it."""
    ms = _make_starter()
    try:
        titles = ms.exercise_titles(root)
    except (OSError, KeyError, ValueError):
        titles = {}
    regions: list[Region] = []
    public: list[list[str]] = []
    if texts is None:
        texts = _solution_files(root)
    for rel, text in sorted(texts.items()):
        if not rel.startswith("solutions/") or PurePosixPath(rel).suffix not in SOURCE_SUFFIXES:
            continue
        exercise = titles.get(rel.removeprefix("solutions/"))
        outside: list[str] = []
        region: Region | None = None
        state, indent, has_starter = "outside", "", False
        for lineno, line in enumerate(text.splitlines(), start=1):
            if state == "outside":
                m = ms.BEGIN.match(line)
                if m:
                    region = Region(rel, lineno, exercise[0] if exercise else None)
                    state, indent, has_starter = "solution", m.group(1), False
                else:
                    k = key_of(line)
                    if k is not None:
                        outside.append(k)
            elif ms.STARTER.match(line):
                state, has_starter = "starter", True
            elif ms.END.match(line):
                if not has_starter:
                    what = f"({exercise[0]}): {exercise[1]}" if exercise else ": write this part"
                    region.starter.append(f"{indent}// TODO{what}")
                regions.append(region)
                state = "outside"
            elif state == "starter":
                try:
                    region.starter.append(ms.uncomment(line, rel, lineno).rstrip("\n"))
                except ms.MarkerError:
                    region.starter.append(line)
            else:
                region.solution.append(line)
                c = code_of(line)
                if c is not None:
                    region.code.append(c)
                    k = key_of(line)
                    if k is not None:
                        region.keys.append(k)
        public.append(outside)
    windows = {tuple(seq[i:i + WINDOW]) for seq in public for i in range(len(seq) - WINDOW + 1)}
    joined = ["\0" + "\0".join(seq) + "\0" for seq in public]
    given = {i for i, r in enumerate(regions)
             if r.keys and any("\0" + "\0".join(r.keys) + "\0" in j for j in joined)}
    return Solutions(regions, windows, given)


# ---------------------------------------------------------------- the check

@dataclass
class Leak:
    path: str      # relative to the edition
    line: int      # 1-based; 0 for a whole file or folder
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}" if self.line else f"{self.path}: {self.what}"


def _text(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode()
    except UnicodeDecodeError:
        return None


def find_region_text(text: str, sol: Solutions) -> list[tuple[int, int, Region]]:
    """(first line, last line, region) of each run of a region's text in text that is a leak."""
    keyed = [(n, k) for n, k in enumerate((key_of(l) for l in text.splitlines()), start=1)
             if k is not None]
    keys = [k for _, k in keyed]
    hits: dict[int, list[tuple[int, int]]] = {}
    for w in range(1, WINDOW + 1):
        for i in range(len(keys) - w + 1):
            window = tuple(keys[i:i + w])
            for ri in sol.index.get(window, ()):
                if ri not in sol.given_away and w == WINDOW and window in sol.public_windows:
                    continue  # text the course publishes anyway, in a region that is more than it
                hits.setdefault(ri, []).append((i, i + w - 1))
    found = []
    for ri, spans in hits.items():
        spans.sort()
        start, end = spans[0]
        for a, b in spans[1:] + [(len(keys) + 1, len(keys) + 1)]:
            if a <= end + 1:
                end = max(end, b)
                continue
            found.append((keyed[start][0], keyed[end][0], sol.regions[ri]))
            start, end = a, b
    return sorted(found, key=lambda t: (t[0], t[2].path, t[2].line))


def left_out_reason(rel: str) -> str | None:
    """Why the course file rel (posix, relative to the root) is not in the edition; None if it is."""
    for name, why in LEFT_OUT.items():
        if rel == name or (name.endswith("/") and rel.startswith(name)):
            return why
    if HIDDEN_SUITE.search(rel):
        return "an instructor's hidden test suite"
    if rel.split("/", 1)[0] not in PARTS:
        return NOT_A_PART
    if "/__pycache__/" in f"/{rel}" or rel.endswith(".pyc"):
        return NOT_A_PART
    return None


def _walk(dest: Path):
    """(relative posix path, path) of every entry of dest, without following links; .git skipped."""
    for top, dirs, names in os.walk(dest, followlinks=False):
        here = Path(top)
        keep = []
        for d in sorted(dirs):
            if here == dest and d == ".git":
                continue
            if (here / d).is_symlink():
                names.append(d)
            else:
                keep.append(d)
        dirs[:] = keep
        for n in sorted(names):
            p = here / n
            yield p.relative_to(dest).as_posix(), p


def check(dest: Path, sol: Solutions) -> tuple[list[Leak], int]:
    """The leaks in the edition at dest, and the number of files searched."""
    dest = dest.resolve()
    leaks: list[Leak] = []
    searched = 0
    reported: set[str] = set()
    for rel, p in _walk(dest):
        if p.is_symlink():
            target = os.path.realpath(p)
            if not (target == str(dest) or target.startswith(str(dest) + os.sep)):
                leaks.append(Leak(rel, 0, f"a symbolic link out of the edition (to {os.readlink(p)})"))
            continue
        if not p.is_file():
            continue
        why = left_out_reason(rel)
        if why is not None and why != NOT_A_PART:
            folder = next((n for n in LEFT_OUT if n.endswith("/") and rel.startswith(n)), None)
            if folder is None:
                leaks.append(Leak(rel, 0, f"left out of the edition ({why}), yet present"))
            elif folder not in reported:
                reported.add(folder)
                leaks.append(Leak(folder, 0, f"left out of the edition ({why}), yet present"))
        text = _text(p)
        if text is None:
            continue
        searched += 1
        for first, last, region in find_region_text(text, sol):
            span = f"line {first}" if first == last else f"lines {first}-{last}"
            leaks.append(Leak(rel, first, f"the text of {region.where()}, {span}"))
        for n, line in enumerate(text.splitlines(), start=1):
            if _DOXY_SOLUTIONS.match(line):
                leaks.append(Leak(rel, n, "includes a file of solutions/ (Doxygen)"))
    return leaks, searched


# ---------------------------------------------------------------- the course's files

def _is_git_checkout(root: Path) -> bool:
    try:
        p = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"],
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return p.returncode == 0 and Path(p.stdout.strip()).resolve() == root.resolve()


def source_commit(root: Path) -> tuple[str | None, bool]:
    """(HEAD's hash, whether the working tree differs from it: changed or new files), or
    (None, False) outside git."""
    if not _is_git_checkout(root):
        return None, False
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, text=True)
    return (head.stdout.strip() or None) if head.returncode == 0 else None, bool(dirty.stdout.strip())


@dataclass
class Entry:
    """One file of the course: its content, or a symbolic link's target as written."""
    rel: str
    data: bytes | None = None
    link: str | None = None
    executable: bool = False


def entries_from_commit(root: Path, rev: str = "HEAD") -> tuple[list[Entry], list[str]]:
    """Every file of the commit (git's objects, not the working tree); and what was skipped."""
    p = subprocess.run(["git", "-C", str(root), "ls-tree", "-r", "-z", "--full-tree", rev],
                       capture_output=True, check=True)
    rows, skipped = [], []
    for item in p.stdout.decode().split("\0"):
        if not item:
            continue
        meta, rel = item.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind != "blob":
            skipped.append(f"{rel} (a {kind}: a submodule is not copied)")
            continue
        rows.append((rel, mode, sha))
    batch = subprocess.run(["git", "-C", str(root), "cat-file", "--batch"],
                           input="".join(f"{sha}\n" for _, _, sha in rows).encode(),
                           capture_output=True, check=True).stdout
    entries, at = [], 0
    for rel, mode, sha in rows:
        header_end = batch.index(b"\n", at)
        size = int(batch[at:header_end].split()[2])
        data = batch[header_end + 1:header_end + 1 + size]
        at = header_end + 1 + size + 1
        if mode == "120000":
            entries.append(Entry(rel, link=data.decode(errors="replace")))
        else:
            entries.append(Entry(rel, data=data, executable=mode == "100755"))
    return entries, skipped


def _linked_dir(root: Path, rel: str) -> str | None:
    """The first folder of rel that is a symbolic link, or None."""
    parts = PurePosixPath(rel).parts
    for i in range(1, len(parts)):
        if root.joinpath(*parts[:i]).is_symlink():
            return "/".join(parts[:i])
    return None


def entries_from_disk(root: Path) -> tuple[list[Entry], list[str]]:
    """The files of the working tree: in a git checkout the tracked ones and the new ones git
    does not ignore, else every file (build outputs and caches skipped); and what was skipped.
    A folder reached through a symbolic link is never read."""
    if _is_git_checkout(root):
        p = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], capture_output=True, check=True)
        names = sorted({f for f in p.stdout.decode().split("\0") if f})
    else:
        names = []
        for top, dirs, files in os.walk(root, followlinks=False):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
            for d in list(dirs):
                if (Path(top) / d).is_symlink():
                    files.append(d)
                    dirs.remove(d)
            names += [(Path(top) / n).relative_to(root).as_posix() for n in files]
        names.sort()
    entries, skipped = [], []
    for rel in names:
        linked = _linked_dir(root, rel)
        if linked is not None:
            skipped.append(f"{rel} (its folder {linked} is a symbolic link: not followed)")
            continue
        p = root / rel
        if p.is_symlink():
            real = Path(os.path.realpath(p))
            if real != root and root not in real.parents:
                skipped.append(f"{rel} (a symbolic link out of the course, to {os.readlink(p)}: "
                               "not followed)")
                continue
            entries.append(Entry(rel, link=os.readlink(p)))
        elif p.is_file():
            entries.append(Entry(rel, data=p.read_bytes(), executable=bool(p.stat().st_mode & 0o111)))
    return entries, skipped


def link_target(rel: str, link: str, root: Path, links: dict[str, str]) -> str | None:
    """Where the link rel -> link leads inside the course (a relative posix path; links on the
    way followed within the course), or None when it leads out of it."""
    seen: set[str] = set()
    while True:
        if os.path.isabs(link):
            absolute = os.path.normpath(link)
            if not absolute.startswith(str(root) + os.sep):
                return None
            target = absolute[len(str(root)) + 1:]
        else:
            target = os.path.normpath(os.path.join(os.path.dirname(rel), link))
        if target == ".." or target.startswith("../") or os.path.isabs(target):
            return None
        hop = next((q for q in [target] + [str(p) for p in PurePosixPath(target).parents if str(p) != "."]
                    if q in links), None)
        if hop is None:
            return target
        if hop in seen or len(seen) > 40:
            return None
        seen.add(hop)
        rest = target[len(hop):].lstrip("/")
        rel, link = hop, (os.path.join(links[hop], rest) if rest else links[hop])


# ---------------------------------------------------------------- the changes on the way

def presets(text: str, excluded_tests: list[str]) -> str:
    """CMakePresets.json of the edition: starter only, and the tests that need left-out files excluded."""
    data = json.loads(text)
    for p in data.get("configurePresets", []):
        p.setdefault("cacheVariables", {})["CUDALAB_IMPLEMENTATIONS"] = "starter"
        if "description" in p:
            p["description"] = p["description"].replace("Solutions and starter", "The starter")
    if excluded_tests:
        names = (re.sub(r"([][.*+?^$(){}|\\])", r"\\\1", t) for t in excluded_tests)
        pattern = "^(" + "|".join(names) + ")$"
        for p in data.get("testPresets", []):
            exclude = p.setdefault("filter", {}).setdefault("exclude", {})
            exclude["name"] = f"{exclude['name']}|{pattern}" if exclude.get("name") else pattern
    return json.dumps(data, indent=2) + "\n"


_ADD_TEST = re.compile(r"add_test\s*\(\s*NAME\s+(\S+)(.*?)\)", re.S)
_PATH_VAR = re.compile(r"\$\{(PROJECT_SOURCE_DIR|CMAKE_SOURCE_DIR|CMAKE_CURRENT_SOURCE_DIR)\}/([^\s\"')]+)")


def tests_needing(files: set[str], cmake_files: dict[str, str]) -> dict[str, str]:
    """CTest test name -> the left-out file its command names, over the edition's CMakeLists.txt."""
    out = {}
    for rel, text in cmake_files.items():
        here = str(PurePosixPath(rel).parent)
        for m in _ADD_TEST.finditer(text):
            for var, path in _PATH_VAR.findall(m.group(2)):
                full = os.path.normpath(path if var != "CMAKE_CURRENT_SOURCE_DIR" else f"{here}/{path}")
                if "$" in full:
                    continue
                if full not in files and not any(f.startswith(full + "/") for f in files):
                    out[m.group(1)] = full
    return out


def strip_spoilers(text: str) -> tuple[str, int]:
    """Remove every <details> block that includes a file of solutions/; (text, blocks removed)."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    removed = 0
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("<details"):
            j = i
            while j < len(lines) and "</details>" not in lines[j]:
                j += 1
            block = lines[i:j + 1]
            if j < len(lines) and any(_DOXY_SOLUTIONS.match(l) for l in block):
                removed += 1
                i = j + 1
                # one blank line where there were two
                if out and not out[-1].strip() and i < len(lines) and not lines[i].strip():
                    i += 1
                continue
        out.append(lines[i])
        i += 1
    return "".join(out), removed


def stub_page(text: str, body: str) -> str:
    first = text.splitlines()[0] if text.strip() else "# (left out)"
    return f"{first}\n\n{body}"


def add_banner(text: str, source: str) -> str:
    """The paragraph BANNER after the page's title."""
    lines = text.splitlines(keepends=True)
    banner = textwrap.fill(BANNER.format(source=source), width=78, break_on_hyphens=False,
                           break_long_words=False) + "\n"
    at = 1 if lines and lines[0].startswith("#") else 0
    rest = lines[at:]
    if rest and rest[0].strip():
        rest.insert(0, "\n")
    return "".join(lines[:at]) + ("\n" if at else "") + banner + "".join(rest)


@dataclass
class Withheld:
    path: str
    line: int
    region: Region


def withhold_given(text: str, sol: Solutions) -> tuple[str, list[tuple[int, Region]]]:
    """Replace every whole copy of a solution region in a starter file by the region's starter text.

    A copy is the region's code lines (comments and blank lines aside) in a row; the lines
    from its first to its last code line are replaced by a comment and the starter's text,
    indented like the copy. Returns the text and (line, region) of each replacement."""
    lines = text.splitlines(keepends=True)
    code = [(i, c) for i, c in enumerate(code_of(l) for l in lines) if c is not None]
    joined = "\0" + "\0".join(c for _, c in code) + "\0"
    starts = {}
    pos = 0
    for n, (_, c) in enumerate(code):
        starts[pos] = n
        pos += len(c) + 1
    spans: list[tuple[int, int, Region]] = []
    for r in sol.regions:
        if not r.keys:
            continue
        needle = "\0" + "\0".join(r.code) + "\0"
        at = joined.find(needle)
        while at != -1:
            n = starts[at]
            spans.append((code[n][0], code[n + len(r.code) - 1][0], r))
            at = joined.find(needle, at + 1)
    spans.sort(key=lambda s: (-(s[1] - s[0]), s[0]))
    chosen: list[tuple[int, int, Region]] = []
    for s in spans:
        if all(s[1] < c[0] or s[0] > c[1] for c in chosen):
            chosen.append(s)
    done = []
    for first, last, r in sorted(chosen, key=lambda s: -s[0]):
        indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
        src_first = next(l for l in r.solution if code_of(l) is not None)
        src_indent = src_first[: len(src_first) - len(src_first.lstrip())]
        newline = "\n" if lines[last].endswith("\n") else ""
        ex = f"exercise {r.exercise}" if r.exercise else "another exercise"
        repl = [f"{indent}// Student edition: the full course gives {ex}'s solution here; write your own.\n"]
        for s in r.starter:
            body = s[len(src_indent):] if s.startswith(src_indent) else s.lstrip()
            repl.append((indent + body).rstrip() + "\n")
        if not newline:
            repl[-1] = repl[-1].rstrip("\n")
        lines[first:last + 1] = repl
        done.append((first + 1, r))
    return "".join(lines), sorted(done, key=lambda d: d[0])


# ---------------------------------------------------------------- writing the edition

@dataclass
class Plan:
    """What goes into the edition: relative path -> text/bytes to write, or a link target."""
    files: dict[str, bytes] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    left_out: dict[str, list[str]] = field(default_factory=dict)     # reason -> paths
    not_followed: list[str] = field(default_factory=list)            # what a link kept out
    notes: list[str] = field(default_factory=list)                    # what was changed, in words
    withheld: list[Withheld] = field(default_factory=list)
    excluded_tests: dict[str, str] = field(default_factory=dict)
    executable: set[str] = field(default_factory=set)
    commit: str | None = None
    dirty: bool = False
    from_disk: bool = False


def plan(root: Path, working_tree: bool = False) -> tuple[Plan, Solutions]:
    """Everything the edition of root holds, changed as the module's docstring says, and the
    solutions it is checked against. From HEAD in a git checkout (working_tree: from the
    files on disk), else from the files on disk."""
    root = root.resolve()
    pl = Plan()
    pl.commit, pl.dirty = source_commit(root)
    if pl.commit and not working_tree:
        entries, pl.not_followed = entries_from_commit(root)
    else:
        entries, pl.not_followed = entries_from_disk(root)
        pl.from_disk = True
    sol = read_solutions(root, {e.rel: e.data.decode(errors="replace") for e in entries
                                if e.data is not None and e.rel.startswith("solutions/")})
    links = {e.rel: e.link for e in entries if e.link is not None}
    for e in entries:
        why = left_out_reason(e.rel)
        if why is not None:
            pl.left_out.setdefault(why, []).append(e.rel)
        elif e.data is not None:
            pl.files[e.rel] = e.data
            if e.executable:
                pl.executable.add(e.rel)
    for e in entries:
        if e.link is None or left_out_reason(e.rel) is not None:
            continue
        target = link_target(e.rel, e.link, root, links)
        if target is None:
            pl.not_followed.append(f"{e.rel} (a symbolic link out of the course, to {e.link}: not followed)")
        elif target in pl.files or any(f.startswith(target + "/") for f in pl.files):
            pl.links[e.rel] = os.path.relpath(target, os.path.dirname(e.rel) or ".")
        else:
            pl.not_followed.append(f"{e.rel} (a symbolic link to {target}, which the edition leaves out)")
    _change(pl, root, sol)
    return pl, sol


def _change(pl: Plan, root: Path, sol: Solutions) -> None:
    src = f" (made by `tools/make-release` from commit {pl.commit[:12]})" if pl.commit and \
        not pl.from_disk else " (made by `tools/make-release`)"
    spoilers = 0
    for rel in sorted(pl.files):
        data = pl.files[rel]
        if rel in STUBS:
            pl.files[rel] = stub_page(data.decode(), STUBS[rel]).encode()
            pl.notes.append(f"{rel}: a short page under the same title (the full page is for course "
                            "developers)")
            continue
        if rel.endswith(".md"):
            text, n = strip_spoilers(data.decode())
            if n:
                spoilers += n
                pl.files[rel] = text.encode()
        if rel in BANNER_FILES:
            pl.files[rel] = add_banner(pl.files[rel].decode(), src).encode()
        if rel.startswith(WITHHELD_IN) and PurePosixPath(rel).suffix in SOURCE_SUFFIXES:
            text, done = withhold_given(data.decode(), sol)
            if done:
                pl.files[rel] = text.encode()
                pl.withheld += [Withheld(rel, line, r) for line, r in done]
    if spoilers:
        pl.notes.append(f"the lessons: {spoilers} folded reference solutions removed")
    cmake = {rel: pl.files[rel].decode() for rel in pl.files
             if rel.endswith("CMakeLists.txt") or rel.endswith(".cmake")}
    present = set(pl.files) | set(pl.links)
    pl.excluded_tests = tests_needing(present, cmake)
    if "CMakePresets.json" in pl.files:
        pl.files["CMakePresets.json"] = presets(pl.files["CMakePresets.json"].decode(),
                                                sorted(pl.excluded_tests)).encode()
        pl.notes.append("CMakePresets.json: every preset builds the starter only "
                        "(CUDALAB_IMPLEMENTATIONS=starter)")
        for name, path in sorted(pl.excluded_tests.items()):
            pl.notes.append(f"CMakePresets.json: the test presets skip CTest's {name} (it runs {path}, "
                            "left out)")
    if pl.withheld:
        pl.notes.append(f"starter/, chapters/: {len(pl.withheld)} given copies of earlier exercises' solutions "
                        "replaced by those exercises' starter text")


def prepare_dest(dest: Path, root: Path, force: bool, dry_run: bool = False) -> None:
    """Refuse a destination that would overwrite the course or hold anything, unless force;
    with force, empty it (its .git, if any, stays). dry_run: only refuse."""
    root = root.resolve()
    d = dest.resolve()
    if d == root or d in root.parents:
        raise ReleaseError(f"{dest} is the course tree or holds it: choose a folder outside it")
    if root in d.parents:
        top = d.relative_to(root).parts[0]
        if top in PARTS or top in ("solutions", ".git"):
            raise ReleaseError(f"{dest} is inside the course's {top}/: choose a folder outside the "
                               "course (or under build/)")
    if d.exists() and not d.is_dir():
        raise ReleaseError(f"{dest} exists and is not a folder")
    if d.is_dir():
        entries = [e for e in d.iterdir()]
        if entries and not force:
            raise ReleaseError(f"{dest} is not empty: give --force to replace what it holds "
                               "(its .git stays)")
        if dry_run:
            return
        for e in entries:
            if e.name == ".git":
                continue
            if e.is_symlink() or not e.is_dir():
                e.unlink()
            else:
                shutil.rmtree(e)
    if not dry_run:
        d.mkdir(parents=True, exist_ok=True)


def write(pl: Plan, dest: Path) -> None:
    """Write the planned files and links under dest (already empty, see prepare_dest)."""
    d = dest.resolve()
    for rel, data in sorted(pl.files.items()):
        out = d / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        if rel in pl.executable:
            os.chmod(out, 0o755)
    for rel, target in sorted(pl.links.items()):
        out = d / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, out)


def git_commit(dest: Path, pl: Plan) -> str:
    """git init (where DEST has no repository) and one commit of the whole edition; its hash."""
    def git(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(dest), *args], capture_output=True, text=True,
                              check=check)
    if not (dest / ".git").exists():
        p = git("init", "-q", "-b", "main", check=False)
        if p.returncode != 0:
            git("init", "-q")
    who = []
    if not git("config", "user.email", check=False).stdout.strip():
        who = ["-c", "user.name=cudalab make-release", "-c", "user.email=make-release@cudalab.invalid"]
    git("add", "-A", ".")
    source = f" from cudalab {pl.commit}" if pl.commit else ""
    if pl.commit and pl.from_disk and pl.dirty:
        source += " and uncommitted changes"
    message = (f"cudalab student edition{source}\n\nMade by tools/make-release: the course without "
               "solutions/, the red-team suite and the instructors' tools; checked for solution text.\n")
    subprocess.run(["git", *who, "-C", str(dest), "commit", "-q", "--allow-empty", "-m", message],
                   capture_output=True, text=True, check=True)
    return git("rev-parse", "HEAD").stdout.strip()
