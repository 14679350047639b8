"""Finding forbidden APIs in a student's source.

`check` is the grader's forbidden-API check: the exercise's contract (its
manifest's forbid, forbid_why, forbid_sass, forbid_host, allow_asm,
require_kernel, warp_mask and warp_mask_why) against the preprocessed file
(tokencheck.py; the masks of the warp collectives: warpmask.py) and its compiled
object (objcheck.py). `find_forbidden`, the text search it replaces (comments
and literals blanked), remains as the fallback where there is no nvcc.
"""
from __future__ import annotations

import posixpath
import re
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import trace

_CHAR_PREFIXES = ("L", "u", "U", "u8")
_RAW = re.compile(r'R"([^()\\\s]{0,16})\(')


def strip_code(text: str) -> str:
    """text with comments and string/char literals blanked out.

    Every newline is kept, so line numbers do not change. Digit separators
    (1'000'000) are not taken for char literals.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = text.find("\n", i)
            i = n if j < 0 else j
            out.append(" ")
        elif c == "/" and nxt == "*":
            j = text.find("*/", i + 2)
            end = n if j < 0 else j + 2
            out.append(" " + "\n" * text.count("\n", i, end))
            i = end
        elif c == "R" and _RAW.match(text, i) and not _ident_char_before(text, i):
            m = _RAW.match(text, i)
            close = ")" + m.group(1) + '"'
            j = text.find(close, m.end())
            end = n if j < 0 else j + len(close)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"' or (c == "'" and _opens_char_literal(text, i)):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = min(j + 1, n) if j < n and text[j] == c else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ident_char_before(text: str, i: int) -> bool:
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


def _opens_char_literal(text: str, i: int) -> bool:
    """False for a digit separator; true otherwise (including L'x', u8'x')."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
        j -= 1
    word = text[j:i]
    return word == "" or word in _CHAR_PREFIXES


def find_forbidden(text: str, forbid: list[str] | tuple[str, ...]) -> tuple[str, int] | None:
    """(substring, 1-based line) of the first forbidden use in the code, or None."""
    code = strip_code(text)
    best: tuple[int, str] | None = None
    for bad in forbid:
        pos = code.find(bad)
        if pos >= 0 and (best is None or pos < best[0]):
            best = (pos, bad)
    if best is None:
        return None
    return best[1], code.count("\n", 0, best[0]) + 1


# ----------------------------------------------------------------------------
# The forbidden-API check: the preprocessed tokens and the compiled object
# (tokencheck.py, objcheck.py). The manifest's contract says what is forbidden.


@dataclass(frozen=True)
class Contract:
    """What an exercise forbids (chapters/<dir>/exercises.toml: the exercise's keys, over
    the chapter's [contract] table)."""
    forbid: tuple[str, ...] = ()        # names, in the tokens and the object's symbols
    forbid_why: str = ""                # one sentence for the student: why
    # (entry, sentence): the reason for one forbid or forbid_sass entry, where forbid_why's
    # does not fit it (the manifest's forbid_reasons table)
    forbid_reasons: tuple[tuple[str, str], ...] = ()
    forbid_sass: tuple[str, ...] = ()   # kinds of device instruction (objcheck.SASS_KINDS)
    forbid_host: tuple[str, ...] = ()   # host algorithms that would do the exercise's work
    allow_asm: bool = False             # inline assembly (asm, __asm__) allowed
    require_kernel: bool = False        # the file must define and launch a kernel
    # "full": the exercise's warp collectives are called by lanes its algorithm fixes (the whole
    # warp, or the lanes a ballot named), so __activemask() as a collective's mask is a finding;
    # "converged" (or no key): collectives over the lanes that happen to be converged are a way
    # to do it (coalesced_threads). A constant partial mask is a finding in every exercise.
    warp_mask: str = ""
    warp_mask_why: str = ""             # one sentence for the student: which lanes call them, why
    # the namespaces of the exercises it uses (the manifest's uses: "cudalab::kdtree::"): their
    # functions are imports the object may have, defined by the objects linked beside it
    given_namespaces: tuple[str, ...] = ()
    # (course-relative header, sentence): headers of the course the exercise may not include,
    # directly or through another header (the manifest's forbid_include table, its paths relative
    # to the chapter's folder, normalised: "../common/include/..." is a header every chapter
    # sees): given code that holds the exercise's own solution (chapter 5's warp_heap.cuh gives
    # 5.4 the heap of 5.1 to 5.3), which no name check can follow (a call
    # `device::replace_smallest` inside `namespace cudalab::heap` names no qualified namespace)
    forbid_include: tuple[tuple[str, str], ...] = ()
    # kinds of device instruction the compiled object must contain once its tests pass (the
    # manifest's require_sass, objcheck.SASS_KINDS): the exercise's technique, where an earlier
    # exercise's would pass the tests too (1.2's shared-memory tree: STS, LDS and BAR.SYNC; 1.1's
    # one atomic per element has none), and require_why, one sentence for the student
    require_sass: tuple[str, ...] = ()
    require_why: str = ""

    def why(self, entry: str) -> str:
        """The sentence that says why an entry (a forbid name, one of its EQUIVALENTS, or a
        forbid_sass kind) is forbidden: its own reason, else forbid_why."""
        reasons = dict(self.forbid_reasons)
        entry = SASS_NAME.get(entry, entry)
        if entry in reasons:
            return reasons[entry]
        base = next((k for k, eq in EQUIVALENTS.items() if entry in eq and k in reasons), None)
        return reasons[base] if base is not None else self.forbid_why


@dataclass
class Finding:
    rule: str            # include, line-directive, macro-before-include, name, asm, host, no-kernel,
                         # preprocessor, symbol, sass, import, definition, syscall, registration,
                         # no-device-code, warp-mask
    name: str            # what was found: a name, a path, an instruction, an import
    line: int | None     # the line in the student's file (None for the object's findings)
    message: str         # the reason shown to the student (one line)
    details: list[str] = field(default_factory=list)


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)    # what could not be checked, and why
    seconds: float = 0.0

    @property
    def first(self) -> Finding | None:
        return self.findings[0] if self.findings else None


_contract_cache: dict[tuple[str, float], dict] = {}

# The name in the source of what a forbid_sass kind is (its reason in forbid_reasons is the name's).
SASS_NAME = {"SR_CTAID": "blockIdx"}

# What a forbidden entry brings with it: other names that do the same work. A library's
# scan does its reduction (the last element of an inclusive scan is the sum); a generic
# pointer into the block's shared window (cvta) is shared memory that no __shared__
# declares, and its generic loads and stores are no LDS or STS for forbid_sass either;
# libcu++'s PTX and warp wrappers are the intrinsics under other names; 32 __any_sync are
# a ballot; std::list and std::forward_list sort and merge with their members (l.sort()),
# which no name of the algorithms shows.
EQUIVALENTS = {
    "cooperative_groups::reduce": ("cooperative_groups::inclusive_scan",
                                   "cooperative_groups::exclusive_scan"),
    "cuda::std::reduce": ("cuda::std::accumulate", "cuda::std::transform_reduce",
                          "cuda::std::inclusive_scan", "cuda::std::exclusive_scan",
                          "cuda::std::transform_inclusive_scan", "cuda::std::transform_exclusive_scan",
                          "cuda::std::partial_sum", "cuda::std::inner_product"),
    "__shared__": ("__cvta_shared_to_generic", "__nv_cvta_shared_to_generic_impl",
                   "cuda::ptx::__from_ptr_smem", "cuda::ptx::__from_ptr_dsmem",
                   "cuda::ptx::space_shared", "cuda::ptx::space_cluster"),
    "__shfl": ("cuda::ptx::shfl_sync", "cuda::device::warp_shuffle"),
    "__ballot_sync": ("__any_sync", "__all_sync", "__uni_sync"),
    # Host: std::list and std::forward_list sort, merge and filter with their members.
    "std::sort": ("std::list", "std::forward_list"),
    "std::stable_sort": ("std::list", "std::forward_list"),
    "std::merge": ("std::list", "std::forward_list"),
    "std::remove_if": ("std::list", "std::forward_list"),
}


def with_equivalents(forbid: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The forbid entries and, after them, the EQUIVALENTS of each (no duplicates)."""
    out = list(forbid)
    for entry in forbid:
        out += [e for e in EQUIVALENTS.get(entry, ()) if e not in out]
    return tuple(out)


def contract(ex, root: Path) -> Contract:
    """The exercise's contract from its chapter's manifest under root (the manifest's
    forbid list alone when the manifest cannot be read)."""
    path = root / "chapters" / ex.chapter_dir / "exercises.toml"
    try:
        key = (str(path), path.stat().st_mtime)
        data = _contract_cache.get(key)
        if data is None:
            with path.open("rb") as f:
                data = tomllib.load(f)
            _contract_cache[key] = data
    except (OSError, tomllib.TOMLDecodeError):
        return Contract(forbid=with_equivalents(ex.forbid))
    base = data.get("contract", {}) if isinstance(data.get("contract", {}), dict) else {}
    entry = next((e for e in data.get("exercise", []) if str(e.get("id")) == ex.id), {})

    def get(key, default):
        return entry.get(key, base.get(key, default))
    host = tuple(base.get("forbid_host", ())) + tuple(h for h in entry.get("forbid_host", ())
                                                      if h not in base.get("forbid_host", ()))
    given = []
    for used in entry.get("uses", ()):
        e = next((e for e in data.get("exercise", []) if e.get("slug") == used), None)
        if e is None:
            continue
        topic = Path(str(e.get("header", ""))).name.split(".")[0]
        function = str(e.get("function", f"cudalab::{topic}::{used}"))
        ns = function.rsplit("::", 1)[0] + "::" if "::" in function else ""
        if ns and ns not in given:
            given.append(ns)
    reasons = get("forbid_reasons", {})
    reasons = tuple((str(k), str(v)) for k, v in reasons.items()) if isinstance(reasons, dict) else ()
    headers = get("forbid_include", {})
    headers = tuple((posixpath.normpath(f"chapters/{ex.chapter_dir}/{k}"), str(v))
                    for k, v in headers.items()) if isinstance(headers, dict) else ()
    return Contract(forbid=with_equivalents(ex.forbid), forbid_why=str(get("forbid_why", "")),
                    forbid_reasons=reasons,
                    forbid_sass=tuple(get("forbid_sass", ())), forbid_host=with_equivalents(host),
                    allow_asm=bool(get("allow_asm", False)),
                    require_kernel=bool(get("require_kernel", False)),
                    warp_mask=str(get("warp_mask", "")), warp_mask_why=str(get("warp_mask_why", "")),
                    given_namespaces=tuple(given), forbid_include=headers,
                    require_sass=tuple(get("require_sass", ())), require_why=str(get("require_why", "")))


def given_import(name: str, namespaces: tuple[str, ...]) -> bool:
    """Whether an import (demangled) is a function directly in one of the namespaces of the
    exercises the graded one uses: `cudalab::kdtree::bounding_box(float3 const*, ...)` for
    cudalab::kdtree::, not `cudalab::kdtree::detail::f()` nor a variable."""
    head = name.split("(", 1)[0]
    return "(" in name and any(head.startswith(ns) and "::" not in head[len(ns):] and head[len(ns):]
                               for ns in namespaces)


def _course_root(src: Path, ex) -> Path:
    """The course tree of a student file <root>/<starter|solutions>/<chapter>/<file>."""
    p = src.resolve()
    if p.parent.name == ex.chapter_dir and len(p.parents) >= 3:
        return p.parents[2]
    return p.parent


def _raw_lines(src: Path) -> list[str]:
    try:
        return strip_code(src.read_text(errors="replace")).split("\n")
    except OSError:
        return []


def _via_macro(raw: list[str], line: int, spelled: str, pre) -> str:
    """' via the macro X defined at line N' when a name of `spelled` is not written on that
    line of the student's file but a macro of the file is."""
    text = raw[line - 1] if 0 < line <= len(raw) else ""
    words = re.findall(r"[A-Za-z_$][\w$]*", spelled)
    if all(re.search(rf"(?<![\w$]){re.escape(w)}(?![\w$])", text) for w in words):
        return ""
    ids = set(re.findall(r"[A-Za-z_]\w*", text))
    for ps in pre.passes:
        for d in ps.defines:
            if not d.undef and d.name in ids:
                paste = ", by token pasting" if "##" in d.body else ""
                return f" via the macro {d.name} defined at line {d.line}{paste}"
    return ""


def _forbidden_message(ex, c: Contract, entry: str, line: int, detail: str) -> str:
    msg = f"uses forbidden API '{entry}' (line {line}{': ' + detail if detail else ''})"
    why = c.why(entry)
    return msg + (f"; {ex.id} forbids it: {why}" if why else "")


def analyze_tokens(ex, c: Contract, pre, src: Path, shown: str) -> list[Finding]:
    """The findings of the preprocessed passes of the student's file, in rule order, then line."""
    from . import tokencheck as tc
    from . import warpmask
    found: list[tuple[int, int, Finding]] = []
    student = src.resolve()
    raw = _raw_lines(src)

    def add(order: int, f: Finding) -> None:
        # on one line: a name first, then one reached by argument-dependent lookup or a warp mask
        found.append((order, f.line or 0, "argument-dependent" in f.message or f.rule == "warp-mask", f))

    for ps in pre.passes:
        if ps.broken:
            add(0, Finding("preprocessor", "markers", None,
                           "the grader could not follow the preprocessed file (its line markers do not "
                           "nest); fix the file or ask your instructor",
                           [f"{shown}: {ps.broken} ({ps.label} pass)"]))
        for inc in ps.includes:
            if not tc.include_allowed(inc.path, student, pre.allowed_dirs, pre.c_dirs):
                add(1, Finding("include", inc.spelled, inc.line,
                               f"includes a file outside the course's headers, the CUDA toolkit and the "
                               f"C++ standard library (line {inc.line}: `{inc.spelled}`)",
                               [f"{shown}:{inc.line}: #include of {inc.path}: only "
                                "chapters/*/include/, the CUDA toolkit's headers and the C and C++ "
                                "standard headers may be included"]))
        for header, why in c.forbid_include:
            tail = Path(header).parts
            direct = {inc.path: inc for inc in ps.includes}
            for _, path in ps.entered:
                if path.parts[-len(tail):] != tail:
                    continue
                inc = direct.get(path)
                name = header.split("/include/", 1)[-1]
                where = f"line {inc.line}" if inc else "through another header"
                add(1, Finding("include", name, inc.line if inc else None,
                               f"includes `{name}` ({where}), which {ex.id} may not include: {why}",
                               [f"{shown}: #include of {path}: its given code is this exercise's "
                                "own work; write it in your file"]))
                break
        for d in ps.defines:
            if d.name in tc.FEATURE_MACROS:
                continue
            later = [p for seq, p in ps.entered if seq > d.seq]
            hit = next((p for p in later if d.name in tc.header_identifiers(p)), None)
            if hit is not None:
                verb = "undefines" if d.undef else "defines"
                add(2, Finding("macro-before-include", d.name, d.line,
                               f"{verb} the macro {d.name} (line {d.line}) before an #include of a "
                               f"header that uses that name ({hit.name}): a submission may not change "
                               "the course's or CUDA's headers",
                               [f"{shown}:{d.line}: move the #define after the #include lines, or "
                                f"rename the macro ({hit})"]))
    raw_line = tc.raw_line_directive("\n".join(raw)) if raw else None
    renamed = next((r for ps in pre.passes for r in ps.renames), None)
    if raw_line is not None or renamed is not None:
        line = raw_line if raw_line is not None else renamed[0]
        what = f" (it renames the file to `{renamed[1]}`)" if renamed else ""
        add(1, Finding("line-directive", "#line", line,
                       f"uses a #line directive (line {line}): the grader needs the file's own names "
                       "and line numbers", [f"{shown}:{line}: remove the #line directive{what}"]))

    kernels = launches = False
    for ps in pre.passes:
        toks = ps.tokens
        all_uses = tc.uses(toks)
        declared = tc.declared_names(toks)
        # names a using-declaration or -directive takes from cooperative groups or libcu++:
        # their unqualified calls are those functions, not std's by argument-dependent lookup
        elsewhere = tc.using_declared(toks, all_uses)
        homonyms = tc.reached_through_homonym_directive(all_uses)
        named_ns = {tc.public_chain(x.chain)[0] for x in all_uses if tc.public_chain(x.chain)}
        asm_seen = c.allow_asm
        for t in toks:
            if t.kind == "id" and t.text in ("asm", "__asm__", "__asm") and not asm_seen:
                asm_seen = True
                via = _via_macro(raw, t.line, t.text, pre)
                add(3, Finding("asm", t.text, t.line,
                               f"uses inline assembly (`{t.text}`, line {t.line}{via}): "
                               f"not allowed in {ex.id}",
                               [f"{shown}:{t.line}: inline PTX can do what the exercise forbids; "
                                "write it in CUDA C++"]))
            if t.text == "<<<" or (t.kind == "id" and t.text.startswith("cudaLaunch")
                                   and "Host" not in t.text):
                launches = True
        for use in warpmask.find(toks, c.warp_mask == "full"):
            add(3, _warp_mask_finding(ex, c, use, raw, pre, shown))
        for u in all_uses:
            if u.chain == ["__global__"]:
                kernels = True
            reopened = _reopened_namespace(c, u)
            if reopened is not None:
                add(3, Finding("name", reopened, u.line,
                               f"reopens the namespace `{u.chain[0]}` (line {u.line}), where {ex.id} forbids "
                               f"'{reopened}': code written inside a library's namespace reaches its "
                               "names unqualified, past the grader's check",
                               [f"{shown}:{u.line}: `{u.spelled} {{`: write your code in your own "
                                "namespace (cudalab::...) and call the library by its full name"]))
                continue
            # the file's own name, reached by a using-directive of std (a device library's name is
            # refused all the same: a declaration anywhere, `void f(int reduce)`, made a directive's
            # cooperative_groups::reduce pass, and the object shows no device call)
            own = u.how.startswith("using") and u.chain[-1] in declared \
                and tc.public_chain(u.chain)[:1] == ["std"]
            named = False
            for entry in c.forbid:
                if tc.matches(entry, u) and not own:
                    add(3, _name_finding(ex, c, entry, u, raw, pre, shown))
                    named = True
                    break
            for entry in c.forbid_host:
                if tc.matches(entry, u, exact=True) and not own:
                    add(4, _host_finding(ex, c, entry, u, raw, pre, shown))
                    named = True
                    break
            if not named and not u.how.startswith("using"):
                hit = _internal_entry(c, u)
                if hit is not None:
                    add(3 if hit[1] else 4, _internal_finding(ex, c, hit[0], u, shown))
            if u.call and len(u.chain) == 1 and not u.how \
                    and u.chain[0] not in elsewhere and (u.line, u.spelled) not in homonyms:
                for entry, order, make in ([(e, 3, _name_finding) for e in c.forbid]
                                           + [(e, 4, _host_finding) for e in c.forbid_host]):
                    # a name the file declares is its own, except a device library's where the file
                    # names that library: its types (cg::tiled_partition) take the call there by ADL
                    # whatever the file declares elsewhere
                    lib = entry.split("::")[0]
                    if tc.adl_candidates(entry) == u.chain[0] and (
                            u.chain[0] not in declared or (lib != "std" and lib in named_ns)):
                        adl = tc.Use(entry.split("::"), u.spelled, u.line, "argument-dependent lookup",
                                     call=True)
                        add(order, make(ex, c, entry, adl, raw, pre, shown))
                        break
    if c.require_kernel and pre.passes and not kernels:
        add(5, Finding("no-kernel", "__global__", None,
                       f"defines no kernel (no __global__ function): {ex.id}'s work must run on the GPU",
                       [f"{shown}: no __global__ function in the file"]))
    elif c.require_kernel and pre.passes and not launches:
        add(5, Finding("no-kernel", "<<<", None,
                       f"launches no kernel (no <<<...>>> and no cudaLaunchKernel): {ex.id}'s work "
                       "must run on the GPU", [f"{shown}: no kernel launch in the file"]))
    found.sort(key=lambda x: x[:3])
    seen: set[tuple[str, str, int | None]] = set()
    out = []
    for *_, f in found:
        key = (f.rule, f.name, f.line)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def _reopened_namespace(c: Contract, u) -> str | None:
    """The forbid entry whose library namespace the use defines (`namespace cooperative_groups {`
    in 1.3, where 'cooperative_groups::reduce' is forbidden), or None. Inside such a block a call
    `details::coalesced_reduce(...)` is the library's, though no name the check reads says so
    (the red team's cg-namespace attack); no exercise needs to add to a library's namespace.
    `namespace cuda::std {` where a std:: name is forbidden: inside it `__merge(...)` is libcu++'s."""
    if not (u.namespace and u.spelled.startswith("namespace ") and u.chain):
        return None
    first = u.chain[0]
    if first in ("cudalab", "std"):   # the course's own namespace; std's host names are forbid_host's
        return None
    hit = next((e for e in c.forbid if "::" in e and e.split("::", 1)[0] == first), None)
    if hit is None and first == "cuda":   # libcu++'s cuda::std, whose names a std:: entry forbids
        hit = next((e for e in c.forbid + c.forbid_host if e.startswith("std::")), None)
    return hit


# Where the lesson teaches the mask of a partial warp.
MASK_LESSON = 'lesson 1.3, "Partial warps", in chapters/01-reduce-scan-histogram/README.md'


def _first_arguments(text: str, name: str) -> list[str]:
    """The first argument of every call of `name` on a line of code (comments and literals
    blanked), as written."""
    out = []
    for m in re.finditer(rf"(?<![\w$]){re.escape(name)}\s*\(", text):
        depth, j = 0, m.end()
        while j < len(text):
            ch = text[j]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif ch == "," and depth == 0:
                break
            j += 1
        out.append(text[m.end():j].strip())
    return out


def _mask_as_written(use, raw: list[str], pre) -> tuple[str, str]:
    """(the mask argument as the student's line writes it, ' via the macro X defined at line N'
    or ''). The preprocessed spelling where the line does not show the call."""
    text = raw[use.line - 1] if 0 < use.line <= len(raw) else ""
    args = _first_arguments(text, use.intrinsic)
    squeeze = use.mask.replace(" ", "")
    written = next((a for a in args if a.replace(" ", "") == squeeze), None)
    if written is None and len(args) == 1:
        written = args[0]
    if pre is not None:
        defines = [(d.name, d.line) for ps in pre.passes for d in ps.defines if not d.undef]
    else:       # without the preprocessor: the #define lines of the file
        defines = [(m.group(1), n) for n, line in enumerate(raw, 1)
                   for m in [re.match(r"^\s*(?:#|%:)\s*define\s+([A-Za-z_]\w*)", line)] if m]
    if written is None:
        written, ids = use.mask, set(re.findall(r"[A-Za-z_]\w*", text))
    elif written.replace(" ", "") != squeeze:
        ids = set(re.findall(r"[A-Za-z_]\w*", written))
    else:
        return written, ""
    hit = next(((name, line) for name, line in defines if name in ids), None)
    return written, f" via the macro {hit[0]} defined at line {hit[1]}" if hit else ""


def _warp_mask_finding(ex, c: Contract, use, raw, pre, shown: str) -> Finding:
    """The finding of a warp collective's mask (warpmask.MaskUse): what, where, why, what instead."""
    from . import warpmask
    written, via = _mask_as_written(use, raw, pre)
    # as written, up to 120 characters: a literal of 100000 digits is no message
    quoted = written if len(written) <= 120 else f"{written[:60]}...{written[-40:]}"
    call = f"`{use.intrinsic}({quoted}, ...)`" if use.intrinsic != "__syncwarp" else f"`__syncwarp({quoted})`"
    where = f"line {use.line}{',' + via if via else ''}"
    instead = ("write cudalab::kFullMask (cudalab/warp.cuh) where all 32 lanes call it; where only some "
               "lanes call it, the ballot of those lanes, taken by the full warp before they branch; where "
               f"a warp has fewer lanes, a mask computed from the block size ({MASK_LESSON})")
    guide = ("CUDA C++ Programming Guide, \"Warp Shuffle Functions\" and \"Warp Vote Functions\": each "
             "calling thread must have its own bit set in the mask, and all the threads the mask names "
             "must call the same intrinsic with the same mask; otherwise the behaviour is undefined, "
             "which today's GPUs happen to run, so no test fails it")
    if use.kind == "activemask":
        why = f"; in {ex.id} {c.warp_mask_why}" if c.warp_mask_why else ""
        message = (f"warp mask: {call} ({where}): __activemask() names the lanes that happen to be "
                   "converged at that moment, not the lanes that must take part, so a lane the algorithm "
                   f"needs can be missing, with no error{why}; {instead}")
        detail = (f"{shown}:{use.line}: {call}{via}: __activemask() must not choose the participants of "
                  "a collective (the Programming Guide; NVIDIA's blog \"Using CUDA Warp-Level "
                  "Primitives\"): the hardware does not promise that every lane which will call the "
                  "collective is converged when the mask is read")
    else:
        value = f"0x{use.value:08x}"
        plain = warpmask.literal(written.replace(" ", ""))
        named = value if plain is not None and plain.v & warpmask.FULL == use.value else \
            f"{use.name} = {value}" if use.name and use.name != written else f"= {value}"
        message = (f"warp mask: {call} ({where}) is a constant mask ({named}) that leaves out "
                   f"{warpmask.missing(use.value)}: every lane that calls a warp collective must be in "
                   "its mask (if a lane outside it calls, the behaviour is undefined, which today's GPUs "
                   "happen to run, so no test fails it), and a constant cannot follow which lanes reach "
                   "the call, so the course refuses a constant partial mask (grading guide, \"Warp "
                   f"masks\"), even where only those lanes call it; {instead}")
        detail = (f"{shown}:{use.line}: {call}{via}: the mask names {warpmask.lanes(use.value)} and "
                  f"leaves out {warpmask.missing(use.value)}")
    return Finding("warp-mask", use.intrinsic, use.line, message, [detail, guide])


def _explain(u, raw, pre) -> str:
    via = _via_macro(raw, u.line, u.spelled, pre)
    qualified = "::".join(u.chain)
    if u.namespace and not u.how:
        return f"`{u.spelled}`{via}"
    if u.how == "attribute":
        return f"`{u.spelled}` is `{u.chain[0]}`{via}"
    if u.how == "argument-dependent lookup":
        return f"`{u.spelled}(...)` calls `{qualified}` by argument-dependent lookup{via}"
    if u.how:
        return f"`{u.spelled}` is `{qualified}` through {u.how}{via}"
    if via:
        return f"`{qualified}`{via}"
    return ""


def _internal_entry(c: Contract, u) -> tuple[str, bool] | None:
    """(entry, whether it is a forbid entry, not forbid_host) of the contract whose library
    namespace the use reaches through the library's internals (`std::__insertion_sort`,
    `cooperative_groups::details::coalesced_reduce`): the forbidden functions do their work
    with such names, which the entries do not list. None when the use is no such name."""
    from . import tokencheck as tc
    chain = tc.public_chain(u.chain)
    if len(chain) < 2 or tc.internal_part(u.chain) is None:
        return None
    for entry, is_forbid in [(e, True) for e in c.forbid] + [(e, False) for e in c.forbid_host]:
        first = entry.split("::")[0]
        if "::" in entry and first == (tc.std_chain(chain) if first == "std" else chain)[0]:
            return entry, is_forbid
    return None


def _internal_finding(ex, c: Contract, entry: str, u, shown: str) -> Finding:
    from . import tokencheck as tc
    qualified = "::".join(tc.public_chain(u.chain))
    part = tc.internal_part(u.chain)
    named = f"`{u.spelled}`" + (f" is `{qualified}`" if u.spelled.lstrip(":") != qualified else "")
    detail = f"{named}, an internal of the library (`{part}`), where '{entry}' and its like are not allowed"
    rule = "name" if entry in c.forbid else "host"
    return Finding(rule, qualified, u.line, _forbidden_message(ex, c, entry, u.line, detail),
                   [f"{shown}:{u.line}: the library's internals ({part}) do what its forbidden functions "
                    f"do under other names (forbidden: {', '.join(c.forbid + c.forbid_host)})"])


def _libcudacxx_detail(entry: str, u, detail: str) -> str:
    """The detail of a finding of a std entry reached by libcu++'s cuda::std name, which says so."""
    from . import tokencheck as tc
    if not (entry.startswith("std::") and tc.libcudacxx(u.chain)):
        return detail
    qualified = "::".join(tc.public_chain(u.chain))
    return (detail + ", " if detail else f"`{qualified}`, ") + f"libcu++'s {entry} (in device code too)"


def _name_finding(ex, c: Contract, entry: str, u, raw, pre, shown: str) -> Finding:
    detail = _libcudacxx_detail(entry, u, _explain(u, raw, pre))
    return Finding("name", "::".join(u.chain), u.line, _forbidden_message(ex, c, entry, u.line, detail),
                   [f"{shown}:{u.line}: '{entry}' is not allowed in this exercise"
                    + (f" ({detail})" if detail else "") + f" (forbidden: {', '.join(c.forbid)})"])


def _host_finding(ex, c: Contract, entry: str, u, raw, pre, shown: str) -> Finding:
    from . import tokencheck as tc
    detail = _libcudacxx_detail(entry, u, _explain(u, raw, pre))
    if entry.startswith("std::") and tc.libcudacxx(u.chain):
        return Finding("host", entry, u.line,
                       f"uses the library algorithm `{entry}` (line {u.line}: {detail}), which would do "
                       f"{ex.id}'s work for you, on the host or in a kernel",
                       [f"{shown}:{u.line}: the standard algorithms that do the exercise's work are forbidden, "
                        f"libcu++'s cuda::std ones too (forbid_host: {', '.join(c.forbid_host)})"])
    return Finding("host", entry, u.line,
                   f"computes on the host: `{entry}` (line {u.line}{': ' + detail if detail else ''}) "
                   f"would do {ex.id}'s work on the CPU",
                   [f"{shown}:{u.line}: host algorithms that do the exercise's work are forbidden "
                    f"(forbid_host: {', '.join(c.forbid_host)})"])


# Token-pass results of files seen already: (path, content hash, command) -> (findings, notes).
_token_cache: dict[tuple, tuple[list[Finding], list[str]]] = {}


def check_tokens(ex, src: Path, *, root: Path | None = None, build_dir: Path | None = None,
                 compile_command: str | None = None, shown: str | None = None) -> Report:
    """The token checks of the student's file (no object needed)."""
    import hashlib
    import time
    from . import tokencheck as tc
    start = time.monotonic()
    root = root or _course_root(src, ex)
    shown = shown or ex.source("starter")
    c = contract(ex, root)
    rep = Report()
    try:
        data = src.read_bytes()
    except OSError as e:
        rep.notes.append(f"cannot read {shown}: {e}")
        return rep
    # The first check of a file decides (class grading checks it with the exact compile command
    # before building, grade() again later): the same file gives the same findings.
    key = (str(src.resolve()), hashlib.sha256(data).hexdigest(), str(root.resolve()), c)
    if key in _token_cache:
        rep.findings, rep.notes = (list(x) for x in _token_cache[key])
        return rep
    pre = tc.preprocess(root, ex.chapter_dir, src, build_dir, compile_command)
    if pre.timed_out:
        rep.findings.append(Finding("preprocessor", "timeout", None,
                                    f"the file could not be checked: {pre.note}",
                                    [f"{shown}: a course file preprocesses in about a second and "
                                     "100 MiB; an #include of a device or a huge file does not"]))
    elif not pre.passes:
        rep.notes.append(pre.note)
        text = data.decode(errors="replace")
        hit = find_forbidden(text, c.forbid)
        if hit:
            rep.findings.append(Finding("name", hit[0], hit[1],
                                        f"uses forbidden API '{hit[0]}' (line {hit[1]})",
                                        [f"{shown}:{hit[1]}: '{hit[0]}' is not allowed in this exercise "
                                         f"(forbidden: {', '.join(c.forbid)})"]))
        # the warp masks of the file's own tokens, its object-like macros expanded (warpmask.py)
        from . import warpmask
        raw = strip_code(text).split("\n")
        for use in warpmask.find(warpmask.raw_tokens(text), c.warp_mask == "full"):
            rep.findings.append(_warp_mask_finding(ex, c, use, raw, None, shown))
    else:
        rep.findings = analyze_tokens(ex, c, pre, src, shown)
    if pre.passes or pre.timed_out:
        _token_cache[key] = (list(rep.findings), list(rep.notes))
    rep.seconds = round(time.monotonic() - start, 3)
    return rep


def check_object(ex, obj: Path, *, root: Path, shown: str | None = None) -> Report:
    """The object checks: forbidden symbols and host algorithms, device instructions, imports."""
    from . import objcheck as oc
    c = contract(ex, root)
    shown = shown or ex.source("starter")
    rep = Report()
    symbols = oc.defined_functions(obj)
    if symbols is None:
        rep.notes.append("nm could not read the object: its symbols and imports were not checked")
    else:
        for entry in c.forbid:
            if "::" not in entry:
                continue
            sym = next((s for s in symbols if entry in oc.public_symbol(s)), None)
            if sym:
                short = sym if len(sym) <= 120 else sym[:117] + "..."
                rep.findings.append(Finding("symbol", entry, None,
                                            f"uses forbidden API '{entry}' (symbol in the compiled code)",
                                            [f"the object of {shown} defines `{short}`; '{entry}' is not "
                                             f"allowed in this exercise (forbidden: {', '.join(c.forbid)})"]))
                break
        hit = oc.forbidden_host_symbol(symbols, c.forbid_host)
        if hit:
            short = hit[1] if len(hit[1]) <= 120 else hit[1][:117] + "..."
            rep.findings.append(Finding("host", hit[0], None,
                                        f"computes on the host: the compiled code instantiates `{hit[0]}` "
                                        f"(would do {ex.id}'s work on the CPU)",
                                        [f"the object of {shown} defines `{short}`"]))
    text, note = oc.sass_of(obj)
    if text is None:
        rep.notes.append(note)
    else:
        functions = oc.parse_sass(text)
        hit = oc.forbidden_sass(functions, c.forbid_sass)
        if hit:
            entry, fn, addr, opcode = hit
            name = oc.demangle([fn.name])[0]
            short = re.sub(r"^void ", "", name.replace("(anonymous namespace)::", "")).split("(")[0]
            kind = oc.SASS_KINDS.get(entry, "a forbidden instruction")
            rep.findings.append(Finding("sass", opcode, None,
                                        f"its device code uses {kind} (`{opcode}` in {short}), "
                                        f"which {ex.id} forbids"
                                        + (f": {c.why(entry)}" if c.why(entry) else ""),
                                        [f"cuobjdump -sass of the object of {shown}: {fn.arch} function "
                                         f"{name}, /*{addr}*/ {opcode} (forbidden instructions: "
                                         f"{', '.join(c.forbid_sass)})"]))
        elif c.require_kernel and not functions:
            rep.findings.append(Finding("no-device-code", "", None,
                                        f"its object contains no device code: {ex.id}'s work must run "
                                        "on the GPU", [f"cuobjdump -sass lists no function in the object "
                                                       f"of {shown}"]))
    names = oc.imports(obj)
    if names is not None:
        bad = oc.bad_import([n for n in names if not given_import(n, c.given_namespaces)])
        if bad:
            rep.findings.append(Finding("import", bad[0], None,
                                        f"its compiled code calls `{bad[0]}`, which {bad[1]}: not allowed "
                                        "in an exercise",
                                        [f"nm -u of the object of {shown} lists `{bad[0]}`; an exercise "
                                         "may use the CUDA runtime and C/C++ basics (strings, exceptions, "
                                         "printing), no process, file, network or environment API"]))
    defs = oc.global_definitions(obj)
    hit = oc.interposing_definition(defs) if defs is not None else None
    if hit:
        short = hit[0] if len(hit[0]) <= 120 else hit[0][:117] + "..."
        rep.findings.append(Finding("definition", hit[0], None,
                                    f"its compiled code defines `{short}`, which {hit[1]}: not allowed "
                                    "in an exercise",
                                    [f"nm -g --defined-only of the object of {shown} lists `{short}`; "
                                     "define the exercise's functions and your own helpers in C++ "
                                     "namespaces (an extern \"C\" kernel too: give it C++ linkage)"]))
    # The host machine code: what no import shows (objdump; skipped with a note without it).
    relocs = oc.relocation_symbols(obj)
    calls = oc.host_syscalls(obj) if relocs is not None else None
    if relocs is None or calls is None:
        rep.notes.append("objdump not found: the host machine code was not checked" if oc.objdump() is None
                         else "objdump could not read the object: the host machine code was not checked")
    else:
        if calls:
            fn, addr, insn = calls[0]
            name = oc.demangle([fn])[0] if fn else "?"
            rep.findings.append(Finding("syscall", insn, None,
                                        f"its host code makes a system call itself (`{insn}` in {name}), "
                                        "past the C library functions that the grader checks: not allowed "
                                        "in an exercise",
                                        [f"objdump -d of the object of {shown}: {name}+0x{addr} {insn}; "
                                         "inline assembly is for device code (PTX)"]))
        extra = oc.extra_registration(relocs)
        if extra:
            fn, refs = extra
            rep.findings.append(Finding("registration", fn, None,
                                        f"its compiled code registers device code itself (`{fn}`, referred to "
                                        f"{refs} times where nvcc's own registration refers to it once): device code "
                                        "the grader did not check could run",
                                        [f"objdump -r of the object of {shown}: {refs} references to "
                                         f"`{fn}`; only the kernels compiled from the file may run"]))
    return rep


def find_object(ex, build_dir: Path, impl: str) -> Path | None:
    """The object CMake builds from the exercise's file: the OBJECT library cudalab_<slug>_<impl>."""
    target = f"cudalab_{ex.slug}_{impl}.dir"
    for base in (build_dir / "chapters" / ex.chapter_dir / "CMakeFiles" / target,):
        if base.is_dir():
            hits = sorted(base.rglob(f"{ex.file}.o"))
            if hits:
                return hits[0]
    for d in build_dir.glob(f"**/CMakeFiles/{target}"):
        hits = sorted(d.rglob(f"{ex.file}.o"))
        if hits:
            return hits[0]
    return None


def check(ex, src_path: Path, *, build_dir: Path | None = None, object_path: Path | None = None,
          impl: str = "starter", root: Path | None = None, compile_command: str | None = None,
          shown: str | None = None) -> Finding | None:
    """The first forbidden use in the student's file or its compiled object, or None.

    The token checks run on the preprocessed file (tokencheck.py); the object checks
    (objcheck.py) on object_path, or on the object CMake built under build_dir when it is
    newer than the file. Use check_report for the notes of what could not be checked."""
    return check_report(ex, src_path, build_dir=build_dir, object_path=object_path, impl=impl,
                        root=root, compile_command=compile_command, shown=shown).first


def fresh_object(ex, src_path: Path, build_dir: Path, impl: str, shown: str) -> tuple[Path | None, str]:
    """The object CMake built from the student's file under build_dir, when it is not older than
    the file -> (object, ""); else (None, why: "" when there is none, or it cannot be read)."""
    obj = find_object(ex, build_dir, impl)
    try:
        if obj is not None and obj.stat().st_mtime < src_path.stat().st_mtime:
            return None, f"{obj} is older than {shown}: the compiled code was not checked"
    except OSError:
        return None, ""
    return obj, ""


def technique_check(ex, src_path: Path, *, build_dir: Path, impl: str = "starter",
                    root: Path | None = None) -> Finding | None:
    """The exercise's require_sass, on its built object, once its tests have passed (a file that
    fails its tests, the untouched starter among them, is told what its tests say): a Finding
    naming the first kind of instruction no kernel has, or None (each is there, the exercise
    requires none, or the object or cuobjdump is missing: the object check notes the latter).
    An exercise whose tests an earlier exercise's technique passes (1.2 summed with 1.1's one
    atomic per element) earns its points only with its own."""
    from . import objcheck as oc
    root = root or _course_root(src_path, ex)
    c = contract(ex, root)
    if not c.require_sass:
        return None
    shown = ex.source(impl)
    graded = build_dir / "grade-obj" / f"{ex.slug}.o"   # a class's (classbuild.build_exercise)
    obj = graded if graded.is_file() else fresh_object(ex, src_path, build_dir, impl, shown)[0]
    if obj is None or not obj.exists():
        return None
    with trace.phase("technique check (cuobjdump)"):
        text, _ = oc.sass_of(obj)
    if text is None:
        return None
    functions = oc.parse_sass(text)
    if not functions:  # no SASS to read (a PTX-only object): the object check says so itself
        return None
    missing = oc.missing_sass(functions, c.require_sass)
    if missing is None:
        return None
    kind = oc.SASS_KINDS.get(missing, f"a `{missing}` instruction").removeprefix("a ").removeprefix("an ")
    names = sorted({re.sub(r"^void ", "", n.replace("(anonymous namespace)::", "")).split("(")[0]
                    for n in oc.demangle([fn.name for fn in functions])})
    shown_names = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return Finding("require-sass", missing, None,
                   f"its tests pass, but its device code has no {kind} (`{missing}`) in any kernel, and "
                   f"{ex.id} asks for its own technique" + (f": {c.require_why}" if c.require_why else ""),
                   [f"cuobjdump -sass of the object of {shown}: no `{missing}` instruction in "
                    f"{shown_names or 'any function'} (required instructions: {', '.join(c.require_sass)})"])


def check_object_first(ex, src_path: Path, *, build_dir: Path, impl: str = "starter",
                       root: Path | None = None):
    """check(), in two parts, for a caller that runs the student's tests in between: the
    object checks now (its imports among them: nothing runs whose object fails them), then the
    token checks (the preprocessor's passes, about a second) while the tests run.

    Returns (finding, tokens): a finding of the object checks, with the token checks' own
    first finding before it as check() orders them, and tokens None (the verdict is decided);
    or (None, tokens), tokens() giving the token checks' first finding or None. Together the
    two parts give check()'s verdict."""
    root = root or _course_root(src_path, ex)
    shown = ex.source(impl)
    obj, _ = fresh_object(ex, src_path, build_dir, impl, shown)

    def tokens() -> Finding | None:
        with trace.phase("source check (the preprocessor's passes, the tokens)"):
            return check_tokens(ex, src_path, root=root, build_dir=build_dir, shown=shown).first
    if obj is None or not obj.exists():
        return None, tokens
    with trace.phase("object check (nm, cuobjdump, objdump)"):
        orep = check_object(ex, obj, root=root, shown=shown)
    if orep.findings:
        return tokens() or orep.first, None
    return None, tokens


def check_report(ex, src_path: Path, *, build_dir: Path | None = None, object_path: Path | None = None,
                 impl: str = "starter", root: Path | None = None, compile_command: str | None = None,
                 shown: str | None = None) -> Report:
    root = root or _course_root(src_path, ex)
    shown = shown or ex.source(impl)
    obj = object_path
    older = ""
    if obj is None and build_dir is not None:
        obj, older = fresh_object(ex, src_path, build_dir, impl, shown)

    def object_check() -> Report:
        with trace.phase("object check (nm, cuobjdump, objdump)"):
            return check_object(ex, obj, root=root, shown=shown)
    # The object's programs (nm, cuobjdump, objdump) run while the preprocessor's do; the
    # token checks come first all the same: their findings alone are reported when they have any.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(trace.carry(object_check)) if obj is not None and obj.exists() else None
        with trace.phase("source check (the preprocessor's passes, the tokens)"):
            rep = check_tokens(ex, src_path, root=root, build_dir=build_dir, compile_command=compile_command,
                               shown=shown)
        if rep.findings:
            return rep
        if older:
            rep.notes.append(older)
        if pending is not None:
            orep = pending.result()
            rep.findings += orep.findings
            rep.notes += orep.notes
    return rep
