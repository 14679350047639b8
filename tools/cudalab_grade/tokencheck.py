"""The student's file as the compiler sees it: preprocessed, then tokenized.

`nvcc --dryrun` gives the exact preprocessor commands of a compile of the
student's file (the host pass and one device pass per architecture, with the
exercise's include folders and -D flags); each runs here with `-dD`, so the
student's own #define lines stay in the output. The `# <line> "<file>" <flags>`
markers of the output say which file every line comes from: only the lines
of the student's file are tokenized (the course's headers and CUDA's may use
anything), with the student's line numbers. A macro of the student's file,
token pasting or a namespace alias is expanded or resolved before a name is
looked at, so `#define C cub`, `__sh##fl_down_sync` and
`namespace cg = cooperative_groups` all end as the names they stand for.

What this module finds (see `analyze`): forbidden names (the manifest's
`forbid`, `forbid_host`), inline assembly, `#include` of a file outside the
course's headers, the CUDA toolkit and the C++ standard library, a `#line`
directive, a macro defined before an #include that the included headers use,
and a file that defines or launches no kernel.

The preprocessor never emits a line starting with `#` for code (a `#` that a
macro puts at the start of a line gets a space before it), so the markers
cannot be forged from the student's code, except inside a raw string literal
that spans lines: the lexer follows raw strings across lines.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import proc, trace
from .objcheck import VERSION_NAMESPACE

PREPROCESS_TIMEOUT = 120.0     # seconds per preprocessor run (a course file takes < 1 s)
PREPROCESS_MAX_RSS = 1 << 30   # bytes of host memory per preprocessor run (a course file: ~90 MiB)
MAX_OUTPUT = 256 << 20         # bytes of preprocessed output (a course file gives 2 to 6 MiB)
DEFAULT_ARCH = "90"            # the course's default without a GPU (cmake/CudalabArch.cmake)

# Macros that a file may define before its #include lines: they select features of the
# C library or the C++ library, which is what they are for.
FEATURE_MACROS = frozenset({
    "NDEBUG", "_GNU_SOURCE", "_DEFAULT_SOURCE", "_POSIX_C_SOURCE", "_XOPEN_SOURCE",
    "_USE_MATH_DEFINES", "__STDC_FORMAT_MACROS", "__STDC_LIMIT_MACROS", "__STDC_CONSTANT_MACROS",
    # CCCL's switches for its NVTX ranges (<cub/cub.cuh> and the device-wide headers)
    "CCCL_DISABLE_NVTX", "NVTX_DISABLE"})

# Folders of the C library under /usr/include (besides the headers directly in it).
C_LIBRARY_DIRS = frozenset({"sys", "bits", "gnu", "linux", "asm", "asm-generic", "net", "netinet",
                            "arpa"})

KEYWORDS = frozenset("""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
    char32_t class compl concept const consteval constexpr constinit const_cast continue co_await
    co_return co_yield decltype default delete do double dynamic_cast else enum explicit export
    extern false float for friend goto if inline int long mutable namespace new noexcept not not_eq
    nullptr operator or or_eq private protected public register reinterpret_cast requires return
    short signed sizeof static static_assert static_cast struct switch template this thread_local
    throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t while
    xor xor_eq""".split())

# Words before `name (` that make it a call, not a declaration of name.
_NOT_A_TYPE = frozenset({
    "return", "co_return", "co_yield", "co_await", "case", "throw", "else", "do", "new", "delete",
    "sizeof", "alignof", "typeid", "decltype", "noexcept", "not", "and", "or", "xor", "bitand",
    "bitor", "compl", "static_assert", "if", "while", "for", "switch", "goto", "default"})

_MARKER = re.compile(r'^# (\d+) "((?:[^"\\]|\\.)*)"((?: \d+)*)\s*$')
_DIRECTIVE = re.compile(r"^#\s*(define|undef)\s+([A-Za-z_]\w*)(.*)$")
_TOKEN = re.compile(r"""
    (?P<raw>(?:u8|u|U|L)?R"(?P<delim>[^()\\\s]{0,16})\()
  | (?P<str>(?:u8|u|U|L)?"(?:[^"\\\n]|\\.)*"?)
  | (?P<chr>(?:u8|u|U|L)?'(?:[^'\\\n]|\\.)*'?)
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.']|)*)
  | (?P<id>[A-Za-z_$][\w$]*)
  | (?P<punct><<<|%:%:|<:(?!:(?![:>]))|:>|<%|%>|%:|::|->|\.\.\.|&&|\|\||<<|>>|[^\s])
    """, re.X)
_LINE_DIRECTIVE = re.compile(r"^[ \t]*(?:#|%:)[ \t]*(?:line\b|\d)")
# Digraphs, as the token they spell: `<:<:gnu::shared:>:>` is `[[gnu::shared]]` to the compiler
# (the preprocessor keeps their spelling in its output).
DIGRAPHS = {"<:": "[", ":>": "]", "<%": "{", "%>": "}", "%:": "#", "%:%:": "##"}


@dataclass
class Token:
    text: str
    kind: str   # id, num, str, chr, punct
    line: int


@dataclass
class Include:
    spelled: str          # the path as the preprocessor printed it
    path: Path            # resolved
    line: int = 0         # the line of the #include in the student's file


@dataclass
class Define:
    name: str
    line: int
    body: str
    undef: bool
    seq: int              # position among the events of the run (for "before an #include")


@dataclass
class Pass:
    """One preprocessor run (host, or device for one architecture), the student's part of it."""
    label: str
    tokens: list[Token] = field(default_factory=list)
    includes: list[Include] = field(default_factory=list)
    defines: list[Define] = field(default_factory=list)
    entered: list[tuple[int, Path]] = field(default_factory=list)   # (seq, file) of every file entered
    renames: list[tuple[int, str]] = field(default_factory=list)    # (line, name): #line in the file
    broken: str = ""      # the markers did not nest (should never happen)


@dataclass
class Preprocessed:
    passes: list[Pass] = field(default_factory=list)
    note: str = ""                  # why there are no passes (no nvcc, an error), or ""
    timed_out: bool = False         # a run ran past its time or memory limit
    allowed_dirs: list[Path] = field(default_factory=list)
    c_dirs: list[Path] = field(default_factory=list)
    seconds: float = 0.0


# ----------------------------------------------------------------------------
# The commands


def find_nvcc(argv0: str | None = None) -> str | None:
    if argv0 and Path(argv0).is_file():
        return argv0
    for cand in (shutil.which("nvcc"), os.environ.get("CUDACXX"), "/usr/local/cuda/bin/nvcc"):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    return None


_DROP_WITH_ARG = {"-o", "-MT", "-MF", "-MQ", "--output-file", "--dependency-output",
                  "--dependency-target-name"}
_DROP = {"-c", "-E", "-M", "-MM", "-MD", "-MMD", "--dryrun", "-dryrun", "--compile", "--preprocess",
         "-v", "--verbose", "--keep", "-keep", "--save-temps", "-save-temps"}


def nvcc_argv(command: list[str], src: Path) -> list[str] | None:
    """The words of a compile command from nvcc on, without its output, dependency and
    source words; None when no word is nvcc."""
    idx = next((i for i, w in enumerate(command) if Path(w).name in ("nvcc", "nvcc.exe")), None)
    if idx is None:
        return None
    out: list[str] = [command[idx]]
    words = command[idx + 1:]
    i = 0
    while i < len(words):
        w = words[i]
        if w in _DROP_WITH_ARG:
            i += 2
            continue
        if w in _DROP or any(w.startswith(p + "=") for p in _DROP_WITH_ARG) or \
                w.startswith("--options-file") or w.startswith("-odir"):
            i += 1
            continue
        if w.endswith((".cu", ".cpp", ".cc", ".cxx", ".c")) and not w.startswith("-"):
            i += 1
            continue
        out.append(w)
        i += 1
    return out


def _from_compile_commands(build_dir: Path, src: Path) -> tuple[list[str], Path] | None:
    db = build_dir / "compile_commands.json"
    try:
        entries = json.loads(db.read_text())
    except (OSError, ValueError):
        return None
    want = src.resolve()
    for e in entries:
        try:
            cwd = Path(e.get("directory", build_dir))
            f = Path(e["file"])
            if not f.is_absolute():
                f = cwd / f
            if f.resolve() != want:
                continue
            words = e["arguments"] if "arguments" in e else shlex.split(e["command"])
        except (KeyError, TypeError, ValueError, OSError):
            continue
        argv = nvcc_argv([str(w) for w in words], src)
        if argv:
            return argv, cwd
    return None


def chapter_include_dirs(root: Path, chapter_dir: str) -> list[Path]:
    """The include folders of a chapter's exercises, as its CMakeLists.txt gives them:
    common, the chapter's include/ and reference/, and those of the chapters whose
    header targets it links (chapter 7 links chapter 3's)."""
    chapters = root / "chapters"
    dirs = [chapters / "common" / "include"]
    seen: set[str] = set()
    todo = [chapter_dir]
    while todo:
        cdir = todo.pop(0)
        if cdir in seen:
            continue
        seen.add(cdir)
        dirs += [chapters / cdir / "include", chapters / cdir / "reference"]
        try:
            text = (chapters / cdir / "CMakeLists.txt").read_text(errors="replace")
        except OSError:
            continue
        m = re.search(r"target_link_libraries\(\s*cudalab_ch(\d+)_headers\s+INTERFACE([^)]*)\)", text)
        if m:
            for num in re.findall(r"cudalab_ch(\d+)_headers", m.group(2)):
                other = next((p.name for p in sorted(chapters.glob(f"{num}-*")) if p.is_dir()), None)
                if other:
                    todo.append(other)
    return [d for d in dirs if d.is_dir()]


def _cmake_archs(build_dir: Path | None) -> list[str]:
    if build_dir is None:
        return [DEFAULT_ARCH]
    try:
        text = (build_dir / "CMakeCache.txt").read_text(errors="replace")
    except OSError:
        return [DEFAULT_ARCH]
    m = re.search(r"^CMAKE_CUDA_ARCHITECTURES:\w+=(.*)$", text, re.M)
    archs = [a.split("-")[0] for a in re.split(r"[;\s]+", m.group(1)) if a.strip()] if m else []
    return [a for a in archs if a.isdigit()] or [DEFAULT_ARCH]


def compile_argv(root: Path, chapter_dir: str, src: Path, build_dir: Path | None = None,
                 compile_command: str | list[str] | None = None) -> tuple[list[str], Path] | None:
    """(nvcc and its flags, without source and output; the folder it runs in), or None
    without nvcc. The exact command when it is known (compile_command, or the build's
    compile_commands.json), else the course's flags for a Release build."""
    if compile_command:
        words = shlex.split(compile_command) if isinstance(compile_command, str) else list(compile_command)
        argv = nvcc_argv(words, src)
        if argv and find_nvcc(argv[0]) is None and Path(argv[0]).name == argv[0]:
            nvcc = find_nvcc()
            argv = [nvcc] + argv[1:] if nvcc else None
        if argv:
            return argv, (build_dir if build_dir is not None else root)
    if build_dir is not None:
        got = _from_compile_commands(build_dir, src)
        if got:
            return got
    nvcc = find_nvcc()
    if nvcc is None:
        return None
    argv = [nvcc, "-std=c++17", "-O3", "-DNDEBUG", "-x", "cu"]
    for arch in _cmake_archs(build_dir):
        argv.append(f"--generate-code=arch=compute_{arch},code=[compute_{arch},sm_{arch}]")
    argv += [f"-I{d}" for d in chapter_include_dirs(root, chapter_dir)]
    return argv, root


def preprocessor_commands(argv: list[str], cwd: Path, src: Path,
                          tmp: Path) -> tuple[list[tuple[str, list[str]]], str]:
    """The preprocessor runs of the compile `argv src`, from `nvcc --dryrun`: [(label, argv)]."""
    cmd = argv + ["-c", str(src), "-o", str(tmp / "dryrun.o"), "--dryrun"]
    p = proc.run(cmd, 60, cwd, max_output=1 << 20)
    if p.returncode != 0:
        return [], f"nvcc --dryrun failed ({p.failure()}): {p.output.strip()[-500:]}"
    runs: list[tuple[str, list[str]]] = []
    for line in p.output.splitlines():
        if not line.startswith("#$ "):
            continue
        try:
            words = shlex.split(line[3:])
        except ValueError:
            continue
        if "-E" not in words or not words or "=" in words[0] or Path(words[0]).name in ("cicc", "cudafe++"):
            continue
        arch = next((w.split("=", 1)[1] for w in words if w.startswith("-D__CUDA_ARCH__=")), None)
        label = "host" if arch is None else f"device sm_{int(arch) // 10}"
        out = tmp / f"pass{len(runs)}.ii"
        if "-o" in words:
            words[words.index("-o") + 1] = str(out)
        else:
            words += ["-o", str(out)]
        words.insert(words.index("-E") + 1, "-dD")
        runs.append((label, words))
    if not runs:
        return [], "nvcc --dryrun shows no preprocessor command"
    return runs, ""


_search_cache: dict[str, list[Path]] = {}
_cache_lock = threading.Lock()


def compiler_search_dirs(compiler: str, cwd: Path) -> list[Path]:
    """The folders `compiler` searches for <...> headers, in C++ (cached)."""
    with _cache_lock:
        if compiler in _search_cache:
            return _search_cache[compiler]
    p = proc.run([compiler, "-xc++", "-E", "-v", "/dev/null", "-o", "/dev/null"], 60, cwd,
                 max_output=1 << 20)
    dirs: list[Path] = []
    inside = False
    for line in p.output.splitlines():
        if line.startswith("#include <...> search starts here"):
            inside = True
        elif line.startswith("End of search list"):
            inside = False
        elif inside and line.startswith(" "):
            d = line.strip().split(" (")[0]
            dirs.append(Path(d).resolve())
    with _cache_lock:
        _search_cache[compiler] = dirs
    return dirs


def allowed_dirs(root: Path, host_argv: list[str], nvcc: str, cwd: Path) -> tuple[list[Path], list[Path]]:
    """(folders whose every file a student may #include, C library folders where only the
    headers of the C library are allowed)."""
    allowed = [p.resolve() for p in (root / "chapters").glob("*/include") if p.is_dir()]
    toolkit = Path(nvcc).resolve().parent.parent
    for i, w in enumerate(host_argv):
        d = None
        if w in ("-I", "-isystem", "-idirafter", "-iquote") and i + 1 < len(host_argv):
            d = host_argv[i + 1]
        elif w.startswith("-I") and len(w) > 2:
            d = w[2:]
        if d:
            rd = (cwd / d).resolve()
            if rd == toolkit or toolkit in rd.parents:
                allowed.append(rd)
    c_dirs: list[Path] = []
    for d in compiler_search_dirs(host_argv[0], cwd):
        text = str(d)
        if "/c++/" in text + "/" or "/gcc/" in text or "/clang/" in text:
            allowed.append(d)
        elif not text.startswith("/usr/local"):
            c_dirs.append(d)
    return allowed, c_dirs


def include_allowed(path: Path, student: Path, allowed: list[Path], c_dirs: list[Path]) -> bool:
    try:
        real = path.resolve()
    except OSError:
        return False
    if real == student:
        return True
    if any(real == d or d in real.parents for d in allowed):
        return True
    for d in c_dirs:
        if d in real.parents:
            rel = real.relative_to(d).parts
            if len(rel) == 1 or rel[0] in C_LIBRARY_DIRS or re.match(r"^\w+-linux-gnu\w*$", rel[0]):
                return True
    return False


# ----------------------------------------------------------------------------
# Reading the output


def _unescape(name: str) -> str:
    return re.sub(r'\\([0-7]{1,3}|.)', lambda m: chr(int(m.group(1), 8)) if m.group(1)[0] in "01234567"
                  else m.group(1), name)


@dataclass
class _Frame:
    name: str
    student: bool
    line: int
    include: Include | None = None   # the #include of the student's file that opened it
    begun: bool = False              # its code has begun (past <built-in> and <command-line>)


def _in_student(top: _Frame | None) -> bool:
    """Whether the current line is the student's code: the student's file, once its code has
    begun whatever name a #line gives it then (`#line 1 "<x>"` hides nothing); before, the
    preprocessor's own `<built-in>` and `<command-line>` parts are not the student's."""
    return top is not None and top.student and (top.begun or not top.name.startswith("<"))


def lex_line(text: str, line: int, raw: str | None, out: list[Token]) -> str | None:
    """Append the tokens of one line of code to out. raw: the delimiter of a raw string
    literal still open from an earlier line (None: none); returns the same for the next line."""
    pos = 0
    if raw is not None:
        end = text.find(")" + raw + '"')
        if end < 0:
            return raw
        pos = end + len(raw) + 2
        out.append(Token('R""', "str", line))
    while pos < len(text):
        m = _TOKEN.search(text, pos)
        if not m:
            break
        kind = m.lastgroup if m.lastgroup != "delim" else "raw"
        if m.group("raw") is not None:
            delim = m.group("delim")
            end = text.find(")" + delim + '"', m.end())
            if end < 0:
                return delim
            out.append(Token('R""', "str", line))
            pos = end + len(delim) + 2
            continue
        text_ = DIGRAPHS.get(m.group(0), m.group(0)) if kind == "punct" else m.group(0)
        out.append(Token(text_, kind, line))
        pos = m.end()
    return None


def parse_output(text: str, student: Path, cwd: Path, label: str) -> Pass:
    """The student's part of one preprocessor output."""
    ps = Pass(label)
    stack: list[_Frame] = []
    raw: str | None = None
    seq = 0

    resolved: dict[str, Path] = {}  # a header's markers repeat its name: resolved once a pass

    def resolve(name: str) -> Path:
        path = resolved.get(name)
        if path is None:
            p = Path(name)
            path = resolved[name] = (p if p.is_absolute() else cwd / p).resolve()
        return path

    for line in text.split("\n"):
        top = stack[-1] if stack else None
        in_student = _in_student(top)
        if raw is not None and in_student:   # inside a raw string of the student's code
            raw = lex_line(line, top.line, raw, ps.tokens)
            top.line += 1
            continue
        if line.startswith("#"):
            m = _MARKER.match(line)
            if m:
                num, name = int(m.group(1)), _unescape(m.group(2))
                flags = set(m.group(3).split())
                seq += 1
                if not stack:
                    stack.append(_Frame(name, resolve(name) == student, num))
                elif "1" in flags:
                    path = resolve(name)
                    inc = None
                    if in_student:
                        inc = Include(name, path, top.line)
                        ps.includes.append(inc)
                    ps.entered.append((seq, path))
                    stack.append(_Frame(name, path == student, num, inc, begun=path == student))
                elif "2" in flags:
                    if len(stack) < 2:
                        ps.broken = f"a return marker without an open file: {line}"
                        break
                    done = stack.pop()
                    parent = stack[-1]
                    if done.include is not None:
                        done.include.line = max(1, num - 1)
                    parent.name, parent.line = name, num
                else:
                    own = not name.startswith("<") and resolve(name) == student
                    if in_student and top.begun and name != top.name and not own:
                        ps.renames.append((top.line, name))
                    if top.student and own and num >= 1:
                        top.begun = True
                    top.name, top.line = name, num
                continue
            if in_student:
                d = _DIRECTIVE.match(line)
                if d:
                    seq += 1
                    ps.defines.append(Define(d.group(2), top.line, d.group(3).strip(),
                                             d.group(1) == "undef", seq))
            if top is not None:
                top.line += 1
            continue
        if top is None:
            continue
        if in_student:
            raw = lex_line(line, top.line, None, ps.tokens)
        top.line += 1
    if not ps.broken and len(stack) != 1:
        ps.broken = f"{len(stack)} files still open at the end of the output"
    return ps


def preprocess(root: Path, chapter_dir: str, src: Path, build_dir: Path | None = None,
               compile_command: str | list[str] | None = None) -> Preprocessed:
    """Run the preprocessor passes of src's compile and keep the student's part of each."""
    import time
    start = time.monotonic()
    res = Preprocessed()
    src = src.resolve()
    got = compile_argv(root, chapter_dir, src, build_dir, compile_command)
    if got is None:
        res.note = "nvcc not found: the token check fell back to a text search"
        return res
    argv, cwd = got
    if not cwd.is_dir():   # a build folder not made yet: the course's commands use absolute paths
        cwd = root
    with tempfile.TemporaryDirectory(prefix="cudalab-pp-") as tmpdir:
        tmp = Path(tmpdir)
        runs, note = preprocessor_commands(argv, cwd, src, tmp)
        if not runs:
            res.note = note
            return res
        host = next((a for label, a in runs if label == "host"), runs[0][1])
        res.allowed_dirs, res.c_dirs = allowed_dirs(root, host, argv[0], cwd)
        def one(run: tuple[str, list[str]]) -> tuple[str, Pass | None, bool]:
            label, cmd = run
            out = Path(cmd[cmd.index("-o") + 1])
            p = proc.run(cmd, PREPROCESS_TIMEOUT, cwd, max_output=1 << 16, max_rss=PREPROCESS_MAX_RSS)
            if p.returncode is None:
                return f"the preprocessor ({label}) was stopped: {p.failure()}", None, True
            if p.returncode != 0 or not out.exists():
                lines = p.output.strip().splitlines() or [p.failure()]
                first = next((ln for ln in lines if "error" in ln), lines[-1])
                return f"the preprocessor ({label}) failed: {first[:300]}", None, False
            if out.stat().st_size > MAX_OUTPUT:
                return (f"the preprocessor ({label}) wrote {out.stat().st_size >> 20} MiB "
                        f"(a course file gives a few MiB)"), None, True
            text = out.read_text(errors="replace")
            out.unlink()
            return "", parse_output(text, src, cwd, label), False

        with ThreadPoolExecutor(max_workers=min(4, len(runs))) as pool:
            results = list(pool.map(trace.carry(one), runs))  # its programs count in its phase
        for note, ps, stopped in results:
            if ps is None:
                res.note, res.timed_out, res.passes = note, stopped, []
                break
            res.passes.append(ps)
    res.seconds = round(time.monotonic() - start, 3)
    return res


# ----------------------------------------------------------------------------
# Names


@dataclass
class Use:
    """A name of the student's code, after macros, aliases and attributes."""
    chain: list[str]          # qualified name, aliases resolved: ["cooperative_groups", "reduce"]
    spelled: str              # as in the preprocessed code: "cg::reduce"
    line: int
    how: str = ""             # "", "alias cg (line 7)", "using namespace std (line 3)", "ADL", "attribute"
    namespace: bool = False   # the chain names a namespace (alias target, using-directive, definition)
    call: bool = False        # an unqualified name followed by ( or <


def _attribute_names(toks: list[Token], i: int) -> tuple[list[str], int]:
    """At `__attribute__ ( (`: the attribute names (any that opens the group or follows a
    comma or an opening parenthesis, at any depth: `__shared__` inside the group is itself
    `__attribute__((shared))`) and the index after the group's closing `) )`."""
    names: list[str] = []
    j = i + 3
    depth = 2
    while j < len(toks) and depth > 0:
        t = toks[j]
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            depth -= 1
        elif t.kind == "id" and toks[j - 1].text in ("(", ",") and t.text not in ("__attribute__",
                                                                                  "__attribute"):
            names.append(t.text)
        j += 1
    return names, j


def _cxx11_attributes(toks: list[Token], i: int) -> tuple[list[tuple[str, str]], int] | None:
    """At `[ [`: the attributes of a C++11 attribute-specifier `[[gnu::shared, nodiscard]]`
    or `[[using gnu: shared]]`, as (name, spelled) pairs, and the index after its `] ]`;
    None when the brackets are not one (a lambda in a subscript)."""
    out: list[tuple[str, str]] = []
    n = len(toks)
    j = i + 2
    using = ""
    if j + 2 < n and toks[j].text == "using" and toks[j + 1].kind == "id" and toks[j + 2].text == ":":
        using, j = toks[j + 1].text, j + 3
    expect_name = True
    while j < n:
        t = toks[j]
        if t.text == "]":
            return (out, j + 2) if j + 1 < n and toks[j + 1].text == "]" else None
        if t.text == ",":
            expect_name = True
            j += 1
            continue
        if t.text == "(":
            depth = 0
            while j < n:
                depth += {"(": 1, ")": -1}.get(toks[j].text, 0)
                j += 1
                if depth == 0:
                    break
            continue
        if expect_name and t.kind == "id":
            spelled, name = t.text, t.text
            if j + 2 < n and toks[j + 1].text == "::" and toks[j + 2].kind == "id":
                spelled, name = f"{t.text}::{toks[j + 2].text}", toks[j + 2].text
                j += 2
            out.append((name, f"using {using}: {spelled}" if using else spelled))
            expect_name = False
            j += 1
            continue
        if t.text == "...":
            j += 1
            continue
        return None
    return None


def uses(tokens: list[Token]) -> list[Use]:
    """Every (qualified) name of the code, with namespace aliases and using-directives
    resolved, and `__attribute__((shared))`, `[[gnu::shared]]` and the like as `__shared__`."""
    out: list[Use] = []
    aliases: dict[str, tuple[list[str], int]] = {}
    directives: list[tuple[list[str], int]] = []
    qualified: list[tuple[list[str], str, int]] = []   # (resolved, spelled, line) of qualified names
    n = len(tokens)
    i = 0

    def chain_at(k: int) -> tuple[list[str], int]:
        parts = [tokens[k].text]
        k += 1
        while k + 1 < n and tokens[k].text == "::":
            nxt = k + 1
            if tokens[nxt].text == "template" and nxt + 1 < n:
                nxt += 1
            if tokens[nxt].kind != "id":
                break
            parts.append(tokens[nxt].text)
            k = nxt + 1
        return parts, k

    def resolve(parts: list[str]) -> tuple[list[str], str]:
        how = ""
        for _ in range(8):
            if parts and parts[0] in aliases:
                target, line = aliases[parts[0]]
                how = how or f"the namespace alias {parts[0]} of line {line}"
                parts = target + parts[1:]
            else:
                break
        return parts, how

    while i < n:
        t = tokens[i]
        if t.kind == "id" and t.text in ("__attribute__", "__attribute") and i + 2 < n \
                and tokens[i + 1].text == "(" and tokens[i + 2].text == "(":
            names, j = _attribute_names(tokens, i)
            for name in names:
                core = name.strip("_")
                out.append(Use([f"__{core}__"], f"__attribute__(({name}))", t.line, "attribute"))
            i = j
            continue
        if t.text == "[" and i + 1 < n and tokens[i + 1].text == "[":
            got = _cxx11_attributes(tokens, i)
            if got is not None:
                attrs, j = got
                for name, spelled in attrs:
                    core = name.strip("_")
                    out.append(Use([f"__{core}__"], f"[[{spelled}]]", t.line, "attribute"))
                i = j
                continue
        if t.kind != "id":
            i += 1
            continue
        prev = tokens[i - 1].text if i else ""
        prev2 = tokens[i - 2] if i >= 2 else None
        if prev == "::" and prev2 is not None and (prev2.kind == "id" or prev2.text == ">"):
            i += 1          # the rest of a chain seen already, or Type<...>::name
            continue
        parts, j = chain_at(i)
        spelled = "::".join(parts)
        if t.text == "namespace" and j < n and tokens[j].kind == "id":
            # `namespace X = a::b;` (an alias) or `namespace X {` (a definition)
            name_parts, k = chain_at(j)
            if k < n and tokens[k].text == "=" and k + 1 < n:
                kk = k + 1
                if tokens[kk].text == "::":
                    kk += 1
                if kk < n and tokens[kk].kind == "id":
                    target, end = chain_at(kk)
                    target, how = resolve(target)
                    aliases[name_parts[-1]] = (target, t.line)
                    out.append(Use(target, "::".join(target), t.line, how, namespace=True))
                    i = end
                    continue
            resolved, how = resolve(name_parts)
            out.append(Use(resolved, "namespace " + "::".join(name_parts), t.line, how, namespace=True))
            i = k
            continue
        if t.text == "using" and j < n and tokens[j].text == "namespace":
            k = j + 1
            if k < n and tokens[k].text == "::":
                k += 1
            if k < n and tokens[k].kind == "id":
                target, end = chain_at(k)
                target, how = resolve(target)
                directives.append((target, t.line))
                out.append(Use(target, "using namespace " + "::".join(target), t.line, how,
                               namespace=True))
                i = end
                continue
        if t.text in KEYWORDS:
            i += 1
            continue
        resolved, how = resolve(parts)
        member = prev in (".", "->")
        call = j < n and tokens[j].text in ("(", "<") and len(parts) == 1 and not member \
            and prev != "::"
        if not member:
            out.append(Use(resolved, spelled, t.line, how, call=call))
            if len(parts) >= 1 and prev != "::" and parts[0] not in aliases:
                for target, line in directives:
                    out.append(Use(target + parts, spelled, t.line,
                                   f"using namespace {'::'.join(target)} of line {line}", call=call))
            if len(public_chain(resolved)) >= 2:
                qualified.append((resolved, spelled, t.line))
        i = j
    # Qualified lookup of `lib::reduce` also finds what a using-directive written inside `lib`
    # nominates (`namespace lib { using namespace cooperative_groups; }` makes it the library's
    # reduce). Where a directive stands is not tracked: every directive of the file counts for
    # the last part of every qualified name, as it does for every unqualified one.
    for resolved, spelled, line in qualified:
        for target, dline in directives:
            if resolved[:len(target)] != target:
                out.append(Use(target + resolved[-1:], spelled, line,
                               f"using namespace {'::'.join(target)} of line {dline}, by qualified lookup"))
    return out


def declared_names(tokens: list[Token]) -> set[str]:
    """Names the code declares (functions, variables, parameters, lambdas): a name after a
    type (`void sort(`, `auto merge =`, `T* count,`), or after struct/class/using."""
    names: set[str] = set()
    for i in range(1, len(tokens) - 1):
        t = tokens[i]
        if t.kind != "id" or t.text in KEYWORDS:
            continue
        p, nxt = tokens[i - 1], tokens[i + 1].text
        if p.text in ("struct", "class", "union", "enum", "using", "typedef", "namespace"):
            names.add(t.text)
        elif nxt in ("(", "<", "=", "{", ";", ",", ")", "[", ":") and (
                (p.kind == "id" and p.text not in _NOT_A_TYPE) or p.text in (">", "*", "&", "&&", "~")):
            names.add(t.text)
    return names


# Namespaces whose device functions share their names with std's algorithms (cooperative
# groups' reduce, inclusive_scan and exclusive_scan): an unqualified call that a using-directive
# of one of them reaches is that namespace's function, not std's by argument-dependent lookup.
# (libcu++'s cuda::std algorithms run on the host too, so they stay attributed.)
HOMONYM_NAMESPACES = {("cooperative_groups",): frozenset({"reduce", "inclusive_scan", "exclusive_scan"})}


def using_declared(tokens: list[Token], uses_: list["Use"]) -> set[str]:
    """Names a using-declaration of another namespace than std brings into scope
    (`using cg::reduce;`, the alias resolved): a call of such a name is that function."""
    resolved = {(u.line, u.spelled): u.chain for u in uses_}
    out: set[str] = set()
    n = len(tokens)
    for i, t in enumerate(tokens):
        if t.text != "using" or i + 1 >= n or tokens[i + 1].text in ("namespace", "enum"):
            continue
        j = i + 1
        if tokens[j].text == "::":
            j += 1
        parts: list[str] = []
        while j < n and tokens[j].kind == "id" and tokens[j].text != "typename":
            parts.append(tokens[j].text)
            if j + 1 < n and tokens[j + 1].text == "::":
                j += 2
                continue
            j += 1
            break
        if len(parts) < 2 or j >= n or tokens[j].text != ";":
            continue
        chain = public_chain(resolved.get((t.line, "::".join(parts)), parts))
        if chain[:1] != ["std"]:
            out.add(parts[-1])
    return out


def reached_through_homonym_directive(uses_: list["Use"]) -> set[tuple[int, str]]:
    """(line, spelled) of the unqualified names that a using-directive of a
    HOMONYM_NAMESPACES namespace also reaches (uses() lists them beside the plain name)."""
    out: set[tuple[int, str]] = set()
    for u in uses_:
        if not u.how.startswith("using namespace") or u.namespace:
            continue
        chain = public_chain(u.chain)
        if any(chain[:len(h)] == list(h) and len(chain) == len(h) + 1 and chain[-1] in names
               for h, names in HOMONYM_NAMESPACES.items()):
            out.add((u.line, u.spelled))
    return out


# Class templates: a call of their name is no argument-dependent lookup.
_TYPE_NAMES = frozenset({"priority_queue", "set", "multiset", "map", "multimap", "unordered_map",
                         "unordered_set", "unordered_multimap", "unordered_multiset", "deque",
                         "queue", "stack", "vector", "list", "forward_list"})


# Versioned namespaces (objcheck.VERSION_NAMESPACE): a name reached through one is the name
# without it.
_VERSION_NAMESPACE = re.compile(rf"^{VERSION_NAMESPACE}$")
# Namespaces and names of a library's internals: detail namespaces and reserved names.
_INTERNAL = re.compile(r"^(?:__\w*|details?)$")


def public_chain(chain: list[str]) -> list[str]:
    """The qualified name without a leading `::` and without versioned namespaces
    (`::cuda::std::__4::reduce` is `cuda::std::reduce`)."""
    if chain and chain[0] == "":
        chain = chain[1:]
    return chain[:1] + [c for c in chain[1:] if not _VERSION_NAMESPACE.match(c)]


def internal_part(chain: list[str]) -> str | None:
    """The first part of a qualified name, after its first, that names a library's
    internals (`details` of `cooperative_groups::details::coalesced_reduce`, `__insertion_sort`
    of `std::__insertion_sort`), versioned namespaces left out; None when there is none."""
    return next((c for c in public_chain(chain)[1:] if _INTERNAL.match(c)), None)


def libcudacxx(chain: list[str]) -> bool:
    """Whether a qualified name is libcu++'s version of a standard one (`cuda::std::merge`)."""
    return public_chain(chain)[:2] == ["cuda", "std"] and len(public_chain(chain)) > 2


def std_chain(chain: list[str]) -> list[str]:
    """The name as an entry of std names it: libcu++'s `cuda::std::X` is `std::X`. Its
    algorithms (merge, make_heap, partial_sort, copy_if, partition, min_element, accumulate,
    ...) run in device code too, where a thread calling one does the work the entry std::X
    forbids (a per-thread merge is 2.4's), and leave no host symbol for the object check."""
    return chain[1:] if libcudacxx(chain) else chain


def matches(entry: str, use: Use, exact: bool = False) -> bool:
    """Whether a manifest entry names this use. Entries are qualified names: "cub::" (the
    namespace and everything in it), "cub::Device" (names starting so), "__shfl" (every
    name starting so). exact: the last part must be equal, not a prefix (forbid_host).
    Versioned namespaces do not count (public_chain); an entry of std names libcu++'s
    cuda::std version too (std_chain)."""
    comps = entry.split("::")
    chain = public_chain(use.chain)
    if comps[0] == "std":
        chain = std_chain(chain)
    if len(chain) >= 3 and chain[0] == "std" and chain[1] == "ranges":
        chain = ["std"] + chain[2:]
    if len(comps) == 1:
        want = comps[0]
        return any(c == want if exact else c.startswith(want) for c in chain)
    prefix, last = comps[:-1], comps[-1]
    if chain[:len(prefix)] != prefix:
        return False
    if last == "" and use.how.startswith("using"):
        return False    # the using-directive itself is the use
    if len(chain) == len(prefix):
        return use.namespace and last == ""
    nxt = chain[len(prefix)]
    if last == "":
        return True
    return nxt == last if (exact or len(chain) == len(prefix) + 1 and use.how.startswith("using")) \
        else nxt.startswith(last)


def adl_candidates(entry: str) -> str | None:
    """The unqualified name of a forbidden function that argument-dependent lookup can
    reach (`sort` of "std::sort"), or None for a namespace or prefix entry."""
    comps = entry.split("::")
    if len(comps) < 2 or not comps[-1] or not re.match(r"^[a-z_][a-z0-9_]*$", comps[-1]) \
            or comps[-1] in _TYPE_NAMES:
        return None
    return comps[-1]


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first physical line, text) of each logical line of a source file, as the
    preprocessor reads it: line splices (backslash-newline) joined, every comment one
    space (a block comment over several lines does not end a directive), string, char
    and raw string literals blanked (a raw string's lines end no line either)."""
    from .source import _RAW, _ident_char_before, _opens_char_literal
    text = text.replace("\r\n", "\n")
    out: list[tuple[int, str]] = []
    cur: list[str] = []
    start = line = 1
    i, n = 0, len(text)

    def skip_to(end: int) -> int:
        nonlocal line
        line += text.count("\n", i, end)
        return end

    while i < n:
        c, nxt = text[i], text[i + 1] if i + 1 < n else ""
        if c == "\\" and nxt == "\n":
            i, line = i + 2, line + 1
        elif c == "\n":
            out.append((start, "".join(cur)))
            cur, i, line = [], i + 1, line + 1
            start = line
        elif c == "/" and nxt == "/":
            j = i + 2
            while j < n and not (text[j] == "\n" and text[j - 1] != "\\"):
                j += 1
            i = skip_to(j)
            cur.append(" ")
        elif c == "/" and nxt == "*":
            j = text.find("*/", i + 2)
            i = skip_to(n if j < 0 else j + 2)
            cur.append(" ")
        elif c == "R" and _RAW.match(text, i) and not _ident_char_before(text, i):
            m = _RAW.match(text, i)
            j = text.find(")" + m.group(1) + '"', m.end())
            i = skip_to(n if j < 0 else j + len(m.group(1)) + 2)
            cur.append('""')
        elif c == '"' or (c == "'" and _opens_char_literal(text, i)):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = skip_to(min(j + 1, n) if j < n and text[j] == c else j)
            cur.append(c + c)
        else:
            cur.append(c)
            i += 1
    out.append((start, "".join(cur)))
    return out


def raw_line_directive(text: str) -> int | None:
    """The line of a `#line` (or `# 12 "file"`) directive in the raw source, or None: also
    one spelled across lines by line splices (`#li\\<newline>ne`) or comments (`# /*<newline>*/ line`)."""
    for start, logical in logical_lines(text):
        if _LINE_DIRECTIVE.match(logical):
            return start
    return None


_header_ids: dict[tuple[str, float], frozenset[str]] = {}


def header_identifiers(path: Path) -> frozenset[str]:
    """The identifiers of a header's code and directives (comments and literals out; cached)."""
    from .source import strip_code
    try:
        key = (str(path), path.stat().st_mtime)
    except OSError:
        return frozenset()
    with _cache_lock:
        if key in _header_ids:
            return _header_ids[key]
    try:
        text = strip_code(path.read_text(errors="replace"))
    except OSError:
        text = ""
    ids = frozenset(re.findall(r"[A-Za-z_]\w*", text))
    with _cache_lock:
        _header_ids[key] = ids
    return ids
