"""The red-team suite of the class grader: tools/redteam (tests/redteam/).

Each attack is a folder tests/redteam/attacks/<name>/ holding what a student
who wants the points without the kernel would submit (files laid out like
starter/, or a recipe for an archive made here at run time), and
attack.toml:

    tries      = "..."            what it tries, one sentence
    exercises  = ["1.1"]          the exercises it targets
    expect     = "zero"           each targeted exercise scores 0 ("rejected": the
                                  whole submission refused; "no-perf": no
                                  performance points, correctness not judged)
    host_only  = true             the grader stops it without a GPU (archives,
                                  names, forbidden APIs in the source, the compiler)
    stopped_by = "..."            what should stop it
    statuses   = ["forbidden"]    optional: the grader's status must be one of these
    checks     = ["csv"]          optional: side-effect checks this attack also fails
                                  ("no-big-files": no file of classbuild.COMPILE_MAX_FILE
                                  bytes or more in the grader's output, work folders included)
    archive    = "pax-huge"       optional: the submission is made by this recipe
    student    = "=HYPERLINK(..)" optional: the student id (the entry's name)
    armed      = "nvcc"           optional: what the attack needs to be a threat
    max_processes, max_rss_mib    optional: bounds on the attack's processes
    perf_reason = "output is wrong"  optional, with "no-perf": the exercise's reason must say
                                  this (stopped by that check, not merely slow)

Controls (tests/redteam/controls/<name>/control.toml) are the reference
solutions of the targeted exercises, copied from solutions/ when the suite
runs; they must get full marks:

    student    = "0-control-first"  the student id (default: the folder's name)
    exercises  = "targeted"       or a list of exercise ids
    beside     = "gpu-memory-hog" optional: graded at the same time as this attack, on the
                                  same GPU (check_beside: both ids sort first); left out of a
                                  run without it

One run: the submissions folder is built from the attacks and controls; the
class grader builds the instructor's tree (--prepare-only), the shared
programs are hashed, then the grader grades the class once on the union of
the targeted exercises (--shared-build, --keep-work, a secret --seed, a
hidden-tests folder holding a secret). While it runs, a monitor records the
grader's memory and every process that carries an attack's marker (the argv
word cudalab-redteam-<attack>). Afterwards: each student's outcome against
its attack.toml, and the side effects the grader must prevent (the shared
programs changed, outputs changed 10 s after the grader returned, marker
processes or files left, network connections, leaked secrets, formulas in
the gradebook, active Markdown in the reports, a --merge that takes forged
files). redteam.md and redteam.json say what happened; the exit code is 0
only when every attack scored as expected, every control got full marks and
every side-effect check passed.
"""
from __future__ import annotations

import csv
import dataclasses
import gzip
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time
import tomllib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from .classbuild import COMPILE_MAX_FILE, big_files as classbuild_big_files
from .grading import ALONE_AGAIN
from .manifest import load_all
from .submissions import safe_name

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests" / "redteam"
MARKER = "cudalab-redteam-"          # argv word and file names of what an attack leaves
CANARY = "cudalab_redteam_canary_"   # a line unique to each submitted file
LIB_LINE = "// @REDTEAM_LIB@"
EXPECTS = ("zero", "rejected", "no-perf")
STATUSES = ("passed", "failed", "crashed", "timeout", "compile_error", "forbidden", "no_gpu",
            "sanitizer", "grader_error", "memory", "not_submitted", "rejected")
CHECKS = ("csv", "markdown", "merge", "no-leak", "no-seed-leak", "outputs-stable", "shared-build",
          "no-processes", "no-files", "no-network", "grader-exit", "grader-memory", "no-big-files")
ARMED = ("solution-runner", "nvcc", "relative-include")
KEYS = {"tries", "exercises", "expect", "host_only", "stopped_by", "statuses", "checks", "archive",
        "student", "armed", "max_processes", "max_rss_mib", "perf_reason"}
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d+)?$")


class SpecError(ValueError):
    """An attack.toml or control.toml that does not say what it must."""


# --------------------------------------------------------------------------- the suite

@dataclass
class Attack:
    name: str
    tries: str
    exercises: list[str]
    expect: str
    host_only: bool
    stopped_by: str
    folder: Path
    statuses: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    archive: str | None = None
    student: str | None = None
    armed: str | None = None
    max_processes: int | None = None
    max_rss_mib: int | None = None
    perf_reason: str | None = None

    @property
    def marker(self) -> str:
        return MARKER + self.name

    @property
    def student_id(self) -> str:
        return self.student or self.name

    def files(self) -> dict[str, Path]:
        """The submitted files (relative posix path -> file), attack.toml aside."""
        out = {}
        for p in sorted(self.folder.rglob("*")):
            if p.is_file() and p.name != "attack.toml":
                out[p.relative_to(self.folder).as_posix()] = p
        return out


@dataclass
class Control:
    name: str
    student: str
    exercises: list[str] | str     # "targeted": every exercise an attack of the run targets
    beside: str | None = None      # the attack it is graded at the same time as (check_beside)


def _exercise_index(root: Path) -> dict:
    return {e.id: (c, e) for c in load_all(root) for e in c.exercises}


def load_attacks(suite: Path = SUITE, root: Path = ROOT) -> list[Attack]:
    """Every attack of the suite, checked; SpecError names the first problem."""
    index = _exercise_index(root)
    attacks = []
    for d in sorted((suite / "attacks").iterdir()):
        if not d.is_dir():
            continue
        spec = d / "attack.toml"
        if not spec.is_file():
            raise SpecError(f"{d}: no attack.toml")
        try:
            data = tomllib.loads(spec.read_text())
        except tomllib.TOMLDecodeError as e:
            raise SpecError(f"{spec}: {e}") from None
        unknown = set(data) - KEYS
        if unknown:
            raise SpecError(f"{spec}: unknown key(s) {', '.join(sorted(unknown))}")
        for key, kind in (("tries", str), ("exercises", list), ("expect", str), ("host_only", bool),
                          ("stopped_by", str)):
            if not isinstance(data.get(key), kind):
                raise SpecError(f"{spec}: '{key}' must be a {kind.__name__}")
        a = Attack(name=d.name, tries=data["tries"], exercises=list(data["exercises"]),
                   expect=data["expect"], host_only=data["host_only"], stopped_by=data["stopped_by"],
                   folder=d, statuses=list(data.get("statuses", [])), checks=list(data.get("checks", [])),
                   archive=data.get("archive"), student=data.get("student"), armed=data.get("armed"),
                   max_processes=data.get("max_processes"), max_rss_mib=data.get("max_rss_mib"),
                   perf_reason=data.get("perf_reason"))
        _check_attack(a, spec, index)
        attacks.append(a)
    ids = {}
    for a in attacks:
        if a.student_id in ids:
            raise SpecError(f"{a.name} and {ids[a.student_id]} have the same student id")
        ids[a.student_id] = a.name
    return attacks


def _check_attack(a: Attack, spec: Path, index: dict) -> None:
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", a.name):
        raise SpecError(f"{spec}: the folder name must be lower-case words and dashes")
    if not a.exercises or any(not isinstance(x, str) or x not in index for x in a.exercises):
        raise SpecError(f"{spec}: 'exercises' must list exercise ids of the manifests")
    if a.expect not in EXPECTS:
        raise SpecError(f"{spec}: 'expect' must be one of {', '.join(EXPECTS)}")
    if any(s not in STATUSES for s in a.statuses):
        raise SpecError(f"{spec}: 'statuses' must be grader statuses ({', '.join(STATUSES)})")
    if any(c not in CHECKS for c in a.checks):
        raise SpecError(f"{spec}: 'checks' must be among {', '.join(CHECKS)}")
    if a.archive is not None and a.archive not in RECIPES:
        raise SpecError(f"{spec}: unknown archive recipe '{a.archive}' ({', '.join(sorted(RECIPES))})")
    if a.armed is not None and a.armed not in ARMED:
        raise SpecError(f"{spec}: 'armed' must be one of {', '.join(ARMED)}")
    if a.student is not None and (not a.student or "/" in a.student or "\0" in a.student
                                  or a.student.startswith(".")):
        raise SpecError(f"{spec}: 'student' must be a file name (no '/', not starting with '.')")
    if a.perf_reason is not None and (a.expect != "no-perf" or not isinstance(a.perf_reason, str)
                                      or not a.perf_reason.strip()):
        raise SpecError(f"{spec}: 'perf_reason' is a non-empty string, with expect = \"no-perf\"")
    for key in ("max_processes", "max_rss_mib"):
        v = getattr(a, key)
        if v is not None and (not isinstance(v, int) or v <= 0):
            raise SpecError(f"{spec}: '{key}' must be a positive integer")
    allowed = {f"{index[x][0].dir}/{index[x][1].file}" for x in a.exercises}
    for rel in a.files():
        if rel not in allowed:
            raise SpecError(f"{spec}: {rel} is not the file of a targeted exercise "
                            f"({', '.join(sorted(allowed))})")


def load_controls(suite: Path = SUITE, root: Path = ROOT) -> list[Control]:
    index = _exercise_index(root)
    out = []
    folder = suite / "controls"
    for d in sorted(folder.iterdir()) if folder.is_dir() else []:
        spec = d / "control.toml"
        if not spec.is_file():
            continue
        data = tomllib.loads(spec.read_text())
        ex = data.get("exercises", "targeted")
        if ex != "targeted" and (not isinstance(ex, list) or any(x not in index for x in ex)):
            raise SpecError(f"{spec}: 'exercises' must be \"targeted\" or a list of exercise ids")
        student = data.get("student", d.name)
        if not isinstance(student, str) or not student or "/" in student:
            raise SpecError(f"{spec}: 'student' must be a file name")
        beside = data.get("beside")
        if beside is not None and (not isinstance(beside, str) or not beside):
            raise SpecError(f"{spec}: 'beside' must be an attack's name")
        unknown = set(data) - {"student", "exercises", "beside"}
        if unknown:
            raise SpecError(f"{spec}: unknown key(s) {', '.join(sorted(unknown))}")
        out.append(Control(d.name, student, ex, beside))
    return out


def check_beside(attacks: list[Attack], controls: list[Control]) -> None:
    """A control graded beside an attack (control.toml's beside) must start with it. The
    grader takes the submissions in the order of their names, each of its workers the next one
    when it is free; with --per-gpu 2 on one GPU (the driver's) two workers start at once. So
    the attack's id and the control's must sort next to each other, after no submission but
    attacks of nothing (no file, no archive: graded in no time, they hold no worker back)."""
    by_name = {a.name: a for a in attacks}
    ids = sorted([(a.student_id, a) for a in attacks] + [(c.student, c) for c in controls],
                 key=lambda pair: pair[0])
    order = [i for i, _ in ids]
    for c in controls:
        if c.beside is None:
            continue
        a = by_name.get(c.beside)
        if a is None:
            raise SpecError(f"control {c.name}: 'beside' names no attack ('{c.beside}')")
        if a.host_only or a.archive:
            raise SpecError(f"control {c.name}: beside {a.name}, whose code never runs on the GPU")
        k = order.index(a.student_id)
        if order[k + 1:k + 2] != [c.student]:
            raise SpecError(f"control {c.name}: its id '{c.student}' must sort right after "
                            f"{a.name}'s ('{a.student_id}')")
        early = [i for i, s in ids[:k] if not (isinstance(s, Attack) and not s.archive and not s.files())]
        if early:
            raise SpecError(f"control {c.name}: {a.name} and it must be the first submissions "
                            f"graded, but {', '.join(repr(i) for i in early[:3])} sort before them")


# --------------------------------------------------------------------------- building the class

@dataclass
class Student:
    entry: str                 # the name in the submissions folder
    student: str               # the student id the grader sees
    kind: str                  # "attack" or "control"
    name: str                  # the attack's or the control's name
    canary: str
    exercises: list[str]
    beside: str | None = None  # a control's: the attack it is graded beside


@dataclass
class Context:
    root: Path
    subs: Path
    hidden_secret: Path
    secret: str
    port: int = 0


def _fill(text: str, attack: Attack, ctx: Context, lib: str) -> str:
    if LIB_LINE in text:
        text = text.replace(LIB_LINE, lib.rstrip("\n"))
    words = {"@REDTEAM_NAME@": attack.name, "@REDTEAM_MARKER@": attack.marker,
             "@REDTEAM_ROOT@": str(ctx.root), "@REDTEAM_PORT@": str(ctx.port),
             "@REDTEAM_HIDDEN_SECRET@": str(ctx.hidden_secret)}
    for k, v in words.items():
        text = text.replace(k, v)
    return text


def _with_canary(text: str, canary: str) -> str:
    return text.rstrip("\n") + f"\n// {canary}\n"


def build_class(attacks: list[Attack], controls: list[Control], exercises: list[str], ctx: Context,
                suite: Path = SUITE) -> dict[str, Student]:
    """Write every submission into ctx.subs; entry name -> Student."""
    ctx.subs.mkdir(parents=True, exist_ok=True)
    lib = (suite / "lib" / "redteam.cuh").read_text()
    index = _exercise_index(ctx.root)
    students: dict[str, Student] = {}
    for a in attacks:
        canary = CANARY + secrets.token_hex(8)
        files = {rel: _with_canary(_fill(p.read_text(), a, ctx, lib), canary).encode()
                 for rel, p in a.files().items()}
        if a.archive:
            entry = RECIPES[a.archive](a, files, ctx, canary)
        else:
            folder = ctx.subs / a.student_id
            for rel, data in files.items():
                dst = folder / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_bytes(data)
            if not files:  # a submission of nothing but its name
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "README.txt").write_text(f"my work\n{canary}\n")
            entry = folder.name
        students[entry] = Student(entry, a.student_id, "attack", a.name, canary, list(a.exercises))
    for c in controls:
        canary = CANARY + secrets.token_hex(8)
        ids = exercises if c.exercises == "targeted" else list(c.exercises)
        folder = ctx.subs / c.student
        for x in ids:
            chapter, ex = index[x]
            text = (ctx.root / "solutions" / chapter.dir / ex.file).read_text()
            dst = folder / chapter.dir / ex.file
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_text(_with_canary(text, canary))
        students[folder.name] = Student(folder.name, c.student, "control", c.name, canary, ids, c.beside)
    return students


# --------------------------------------------------------------------------- archive recipes

def _tar_header(name: str | bytes, size: int, kind: bytes = b"0", link: bytes = b"",
                mode: int = 0o644, dev: tuple[int, int] = (0, 0)) -> bytes:
    """One ustar header, written by hand (the recipes need headers no library writes)."""
    raw = name.encode() if isinstance(name, str) else name
    h = bytearray(512)

    def put(off: int, width: int, data: bytes) -> None:
        data = data[:width]
        h[off:off + len(data)] = data
    put(0, 100, raw)
    put(100, 8, b"%07o\0" % mode)
    put(108, 8, b"%07o\0" % 0)
    put(116, 8, b"%07o\0" % 0)
    put(124, 12, b"%011o\0" % size)
    put(136, 12, b"%011o\0" % 0)
    put(148, 8, b" " * 8)
    h[156] = kind[0]
    put(157, 100, link)
    put(257, 6, b"ustar\0")
    put(263, 2, b"00")
    put(329, 8, b"%07o\0" % dev[0])
    put(337, 8, b"%07o\0" % dev[1])
    put(148, 8, b"%06o\0 " % sum(h))
    return bytes(h)


def _pad(n: int) -> bytes:
    return bytes(-n % 512)


_MIB = 1 << 20
_gz_cache: dict[bytes, bytes] = {}


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def _gz_repeated(byte: bytes, count: int) -> bytes:
    """count MiB of one byte as gzip members (a multi-member stream is one file to gzip readers)."""
    if byte not in _gz_cache:
        _gz_cache[byte] = _gz(byte * _MIB)
    return _gz_cache[byte] * count


def _entry(ctx: Context, a: Attack, suffix: str) -> Path:
    return ctx.subs / f"{a.student_id}{suffix}"


def _regular(name: str, data: bytes) -> bytes:
    return _tar_header(name, len(data)) + data + _pad(len(data))


_END = bytes(1024)


def recipe_pax_huge(a: Attack, files: dict, ctx: Context, canary: str) -> str:
    """A pax extended header holding one 1 GiB path record, 1 MB packed."""
    size = 1 << 30
    prefix = b"%d path=" % size
    body = size - len(prefix) - 1
    whole, rest = divmod(body, _MIB)
    tail = b"a" * rest + b"\n" + _regular("notes.txt", canary.encode() + b"\n") + _END
    data = _gz(_tar_header("././@PaxHeader", size, b"x") + prefix) + _gz_repeated(b"a", whole) + _gz(tail)
    p = _entry(ctx, a, ".tar.gz")
    p.write_bytes(data)
    return p.name


def recipe_pax_declared(a: Attack, files: dict, ctx: Context, canary: str) -> str:
    """10 KB of a .tar whose pax header declares 1 GB."""
    p = _entry(ctx, a, ".tar")
    p.write_bytes(_tar_header("././@PaxHeader", 10 ** 9, b"x") + b"1000000000 path=" + b"a" * 10000)
    return p.name


def recipe_gnu_longname(a: Attack, files: dict, ctx: Context, canary: str) -> str:
    """A GNU long-name header of 100 MiB (real data, 100 KB packed)."""
    size = 100 * _MIB + 1
    tail = b"\0" + _pad(size) + _regular("notes.txt", canary.encode() + b"\n") + _END
    data = _gz(_tar_header("././@LongLink", size, b"L")) + _gz_repeated(b"a", 100) + _gz(tail)
    p = _entry(ctx, a, ".tar.gz")
    p.write_bytes(data)
    return p.name


def recipe_gzip_bomb(a: Attack, files: dict, ctx: Context, canary: str) -> str:
    """The exercise file as 1 GiB of zeros, 1 MB packed."""
    name = "01-reduce-scan-histogram/sum_shared_tree.cu"
    data = _gz(_tar_header(name, 1 << 30)) + _gz_repeated(b"\0", 1024) + _gz(_END)
    p = _entry(ctx, a, ".tar.gz")
    p.write_bytes(data)
    return p.name


def recipe_zip_bomb(a: Attack, files: dict, ctx: Context, canary: str) -> str:
    p = _entry(ctx, a, ".zip")
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open("01-reduce-scan-histogram/sum_shared_tree.cu", "w") as f:
            zero = bytes(_MIB)
            for _ in range(256):
                f.write(zero)
    return p.name


def recipe_zip_traversal(a: Attack, files: dict, ctx: Context, canary: str) -> str:
    p = _entry(ctx, a, ".zip")
    body = f"int escaped = 1;  // {canary}\n"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("01-reduce-scan-histogram/sum_shared_tree.cu",
                   (ctx.root / "starter/01-reduce-scan-histogram/sum_shared_tree.cu").read_text())
        z.writestr(f"../../{a.marker}-up.cu", body)
        z.writestr("../" * 24 + f"tmp/{a.marker}-tmp.cu", body)
    return p.name


def _tar_with(a: Attack, ctx: Context, suffix: str, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> str:
    p = _entry(ctx, a, suffix)
    with tarfile.open(p, "w:gz" if suffix == ".tar.gz" else "w", format=tarfile.GNU_FORMAT) as t:
        for info, data in members:
            t.addfile(info, io.BytesIO(data) if data is not None else None)
    return p.name


def _info(name: str, kind: bytes = tarfile.REGTYPE, size: int = 0, link: str = "") -> tarfile.TarInfo:
    i = tarfile.TarInfo(name)
    i.type, i.size, i.linkname, i.mtime = kind, size, link, 0
    return i


def recipe_tar_symlink(a: Attack, files: dict, ctx: Context, canary: str) -> str:
    return _tar_with(a, ctx, ".tar", [(_info("01-reduce-scan-histogram/sum_shared_tree.cu", tarfile.SYMTYPE,
                                             link="/etc/passwd"), None)])


def recipe_tar_hardlink(a: Attack, files: dict, ctx: Context, canary: str) -> str:
    return _tar_with(a, ctx, ".tar", [(_info("01-reduce-scan-histogram/sum_shared_tree.cu", tarfile.LNKTYPE,
                                             link="/etc/passwd"), None)])


def recipe_tar_device(a: Attack, files: dict, ctx: Context, canary: str) -> str:
    i = _info("01-reduce-scan-histogram/zero", tarfile.CHRTYPE)
    i.devmajor, i.devminor = 1, 5
    return _tar_with(a, ctx, ".tar", [(i, None)])


def recipe_many_members(a: Attack, files: dict, ctx: Context, canary: str) -> str:
    return _tar_with(a, ctx, ".tar.gz", [(_info(f"01-reduce-scan-histogram/f{k:04d}.txt"), b"")
                                         for k in range(3000)])


MARKDOWN_NAMES = ("01-reduce-scan-histogram/notes`<img src=x onerror=alert(1)>`.txt",
                  "01-reduce-scan-histogram/[grade](javascript:alert(1)).md",
                  "01-reduce-scan-histogram/<script>alert(1)</script>.txt",
                  "``<b onmouseover=alert(1)>x</b>``.txt")


def recipe_markdown_members(a: Attack, files: dict, ctx: Context, canary: str) -> str:
    data = f"{canary}\n".encode()
    return _tar_with(a, ctx, ".tar.gz", [(_info(n, size=len(data)), data) for n in MARKDOWN_NAMES])


def recipe_markdown_reason(a: Attack, files: dict, ctx: Context, canary: str) -> str:
    data = f"{canary}\n".encode()
    name = "/<img src=x onerror=alert(1)>[grade](javascript:alert(1)).cu"
    return _tar_with(a, ctx, ".tar", [(_info(name, size=len(data)), data)])


def _forged(student: str, entry: str, exercise: str = "1.2", slug: str = "sum_shared_tree") -> bytes:
    ex = {"id": exercise, "slug": slug, "status": "passed", "correctness_points": 10.0, "perf_points": 0.0,
          "max_points": 10.0, "ratio": None, "reason": "all tests passed", "seconds": 1.0}
    return json.dumps({"score": 10.0, "output": "", "tests": [],
                       "cudalab": {"student": student, "entry": entry, "exercises": [ex],
                                   "warnings": [], "files": {}}}, indent=2).encode()


def recipe_merge_forged(a: Attack, files: dict, ctx: Context, canary: str) -> str:
    forged = {"students/zz-control-last/results.json": _forged("zz-control-last", "zz-control-last"),
              f"students/{a.student_id}/results.json": _forged(a.student_id, a.student_id + ".tar.gz"),
              "students/cudalab-redteam-forged/results.json": _forged("cudalab-redteam-forged", "forged"),
              "tasks/t1/students/cudalab-redteam-forged-2/results.json": _forged("cudalab-redteam-forged-2", "f2"),
              "gradebook.csv": b"student,total\ncudalab-redteam-forged,100\n"}
    return _tar_with(a, ctx, ".tar.gz", [(_info(n, size=len(d)), d) for n, d in forged.items()])


def recipe_dir_symlink(a: Attack, files: dict, ctx: Context, canary: str) -> str:
    folder = ctx.subs / a.student_id
    link = folder / "01-reduce-scan-histogram" / "sum_shared_tree.cu"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(ctx.root / "solutions" / "01-reduce-scan-histogram" / "sum_shared_tree.cu")
    (folder / "README.txt").write_text(f"{canary}\n")
    return folder.name


def recipe_huge_mask(a: Attack, files: dict, ctx: Context, canary: str) -> str:
    """1.1's starter with a __syncwarp whose constant mask is a literal of 100000 digits: the
    warp-mask finding quoted it whole, a reason of 100 KB that --merge refuses (over 64 KiB),
    so the merged gradebook (Slurm's) lost the student, and the LMS kept an older grade."""
    rel = "01-reduce-scan-histogram/sum_atomic.cu"
    text = (ctx.root / "starter" / rel).read_text()
    mask = "0x" + "0" * 100000 + "7fffffffu"
    text = text.replace("  // TODO(1.1): compute", f"  __syncwarp({mask});\n  // TODO(1.1): compute", 1)
    path = ctx.subs / a.student_id / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{text}// {canary}\n")
    return a.student_id


RECIPES = {"pax-huge": recipe_pax_huge, "pax-declared": recipe_pax_declared,
           "gnu-longname": recipe_gnu_longname, "gzip-bomb": recipe_gzip_bomb, "zip-bomb": recipe_zip_bomb,
           "zip-traversal": recipe_zip_traversal, "tar-symlink": recipe_tar_symlink,
           "tar-hardlink": recipe_tar_hardlink, "tar-device": recipe_tar_device,
           "many-members": recipe_many_members, "markdown-members": recipe_markdown_members,
           "markdown-reason": recipe_markdown_reason, "merge-forged": recipe_merge_forged,
           "dir-symlink": recipe_dir_symlink, "huge-mask": recipe_huge_mask}


# --------------------------------------------------------------------------- watching processes

def _read(path: str, limit: int = 1 << 16) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError:
        return b""


def marker_processes(names: list[str]) -> dict[int, str]:
    """pid -> attack name, for every live process whose argv holds an attack's marker."""
    out = {}
    me = os.getpid()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return out
    for pid in pids:
        if pid == me:
            continue
        raw = _read(f"/proc/{pid}/cmdline")
        if MARKER.encode() not in raw:
            continue
        for word in raw.split(b"\0"):
            name = attack_of(word.decode(errors="replace"), names)
            if name:
                out[pid] = name
                break
    return out


def attack_of(text: str, names: list[str]) -> str | None:
    """The attack whose marker starts `text` (or a word of it): the longest matching name."""
    at = text.find(MARKER)
    if at < 0:
        return None
    rest = text[at + len(MARKER):]
    hits = [n for n in names if rest == n or rest.startswith(n + "-") or rest.startswith(n + ".")
            or rest.startswith(n + " ") or rest.startswith(n + "\n")]
    return max(hits, key=len) if hits else ("?" + rest[:40])


def rss_bytes(pid: int) -> int:
    fields = _read(f"/proc/{pid}/statm").split()
    return int(fields[1]) * os.sysconf("SC_PAGE_SIZE") if len(fields) > 1 else 0


def status_kib(pid: int, key: str) -> int:
    for line in _read(f"/proc/{pid}/status").decode(errors="replace").splitlines():
        if line.startswith(key + ":"):
            parts = line.split()
            return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    return 0


class Monitor(threading.Thread):
    """Every `period` s: the grader's memory (killed past `grader_limit` bytes) and the
    processes carrying a marker (the most at once and their resident memory, per attack)."""

    def __init__(self, names: list[str], grader_limit: int, period: float = 0.2):
        super().__init__(daemon=True, name="redteam-monitor")
        self.names = names
        self.grader_limit = grader_limit
        self.period = period
        self.grader_pid: int | None = None
        self.grader_peak = 0           # bytes (VmHWM, else the largest VmRSS seen)
        self.grader_killed = False
        self.peak_count: dict[str, int] = {}
        self.peak_rss: dict[str, int] = {}
        self._halt = threading.Event()
        self._lock = threading.Lock()

    def run(self) -> None:
        while not self._halt.is_set():
            self.tick()
            self._halt.wait(self.period)

    def tick(self) -> None:
        with self._lock:
            self._tick()

    def _tick(self) -> None:
        pid = self.grader_pid
        if pid is not None and not self.grader_killed:
            rss = status_kib(pid, "VmRSS") << 10
            self.grader_peak = max(self.grader_peak, rss, status_kib(pid, "VmHWM") << 10)
            if self.grader_limit and rss > self.grader_limit:
                self.grader_killed = True
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
        count: dict[str, int] = {}
        mem: dict[str, int] = {}
        for p, name in marker_processes(self.names).items():
            count[name] = count.get(name, 0) + 1
            mem[name] = mem.get(name, 0) + rss_bytes(p)
        for name, c in count.items():
            self.peak_count[name] = max(self.peak_count.get(name, 0), c)
            self.peak_rss[name] = max(self.peak_rss.get(name, 0), mem[name])

    def stop(self) -> None:
        self._halt.set()
        if self.is_alive():
            self.join(timeout=10)


def kill_marker_processes(names: list[str], rounds: int = 50) -> dict[str, int]:
    """SIGKILL, by pid, every process carrying a marker, until none is left; attack -> count."""
    killed: dict[str, int] = {}
    seen: set[int] = set()
    for _ in range(rounds):
        procs = marker_processes(names)
        if not procs:
            break
        for pid, name in procs.items():
            if pid not in seen:
                killed[name] = killed.get(name, 0) + 1
                seen.add(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.2)
    return killed


class Listener:
    """TCP and UDP on 127.0.0.1: what an attack that reaches the network sends."""

    def __init__(self):
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.tcp.bind(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        self.tcp.listen(64)
        self.tcp.settimeout(0.2)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.udp.settimeout(0.2)
        self.got: list[tuple[str, str]] = []
        self._stop = threading.Event()
        self.threads = [threading.Thread(target=self._tcp, daemon=True),
                        threading.Thread(target=self._udp, daemon=True)]
        for t in self.threads:
            t.start()

    def _tcp(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                continue
            conn.settimeout(2)
            try:
                data = conn.recv(512)
            except OSError:
                data = b""
            conn.close()
            self.got.append(("tcp", data.decode(errors="replace")))

    def _udp(self) -> None:
        while not self._stop.is_set():
            try:
                data, _ = self.udp.recvfrom(512)
            except OSError:
                continue
            self.got.append(("udp", data.decode(errors="replace")))

    def close(self) -> None:
        self._stop.set()
        for t in self.threads:
            t.join(timeout=2)
        self.tcp.close()
        self.udp.close()


# --------------------------------------------------------------------------- files left, outputs

TEMP_DIRS = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))


def marker_files(places: list[tuple[Path, int]], skip: tuple[Path, ...] = ()) -> set[Path]:
    """Every path below each place (to the given depth) whose name holds MARKER."""
    out: set[Path] = set()
    skipped = [s.resolve() for s in skip]
    for top, depth in places:
        if not top.is_dir():
            continue
        base = len(top.parts)
        for dirpath, dirs, names in os.walk(top, followlinks=False):
            here = Path(dirpath)
            if len(here.parts) - base >= depth:
                dirs[:] = []
            dirs[:] = [d for d in dirs if (here / d).resolve() not in skipped]
            for n in names + dirs:
                if MARKER in n:
                    out.add(here / n)
    return out


def remove_paths(paths) -> None:
    for p in sorted(paths, key=lambda q: -len(q.parts)):
        try:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink()
        except OSError:
            pass


def big_files(gout: Path, limit: int) -> dict[str, list[str]]:
    """Files of `limit` bytes or more in the grader's output (its students' work folders
    included: the run keeps them), by the student folder they are in (work/<s>/ or
    students/<s>/; "?" elsewhere): what a compile past the file-size limit leaves."""
    out: dict[str, list[str]] = {}
    for path, size in classbuild_big_files([gout], limit):
        rel = path.relative_to(gout).parts
        owner = rel[1] if len(rel) > 2 and rel[0] in ("work", "students") else "?"
        out.setdefault(owner, []).append(f"{'/'.join(rel)} ({size >> 20} MiB)")
    return out


def hash_tree(top: Path) -> dict[str, str]:
    """relative path -> sha256 of every file below top (links as their target text)."""
    out = {}
    if not top.exists():
        return out
    for p in sorted(top.rglob("*")):
        rel = p.relative_to(top).as_posix()
        if p.is_symlink():
            out[rel] = "link:" + os.readlink(p)
        elif p.is_file():
            h = hashlib.sha256()
            with p.open("rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            out[rel] = h.hexdigest()
    return out


def diff_hashes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    changes = [f"{k} changed" for k in before if k in after and before[k] != after[k]]
    changes += [f"{k} removed" for k in before if k not in after]
    changes += [f"{k} added" for k in after if k not in before]
    return sorted(changes)


def output_hashes(gout: Path) -> dict[str, str]:
    files = [gout / "gradebook.csv", gout / "summary.md"]
    files += sorted((gout / "students").glob("*/results.json")) + sorted((gout / "students").glob("*/report.md"))
    out = {}
    for f in files:
        try:
            out[f.relative_to(gout).as_posix()] = hashlib.sha256(f.read_bytes()).hexdigest()
        except OSError:
            out[f.relative_to(gout).as_posix()] = "missing"
    return out


# --------------------------------------------------------------------------- the checks on outputs

def formula_cells(text: str) -> list[tuple[str, str]]:
    """(first cell of the row, cell) for every cell a spreadsheet would take for a formula."""
    out = []
    for row in csv.reader(io.StringIO(text)):
        for cell in row:
            if cell and cell.startswith(FORMULA_START) and not _NUMBER.match(cell):
                out.append((row[0] if row else "", cell))
    return out


def _strip_code(text: str) -> str:
    """Markdown with fenced code blocks and code spans removed (CommonMark's rules, simplified)."""
    lines, out, fence = text.split("\n"), [], None
    for line in lines:
        m = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
        if fence is None and m:
            fence = m.group(1)
            continue
        if fence is not None:
            if re.match(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$", line):
                fence = None
            continue
        out.append(line)
    text = "\n".join(out)
    result, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            result.append(" ")        # an escaped character is literal text
            i += 2
            continue
        if text[i] == "`":
            j = i
            while j < len(text) and text[j] == "`":
                j += 1
            run = text[i:j]
            close = re.compile(r"(?<!`)" + run + r"(?!`)")
            m = close.search(text, j)
            if m:
                result.append(" ")
                i = m.end()
                continue
            result.append(run)
            i = j
            continue
        result.append(text[i])
        i += 1
    return "".join(result)


_ACTIVE = re.compile(r"<\s*(?:script|img|iframe|svg|object|embed|style|link|meta)\b[^>]*>?|"
                     r"<\s*a\s[^>]*href|"
                     r"<(?:a|b|i|p|div|span|body|details|video|audio|input|form|button|select|textarea|"
                     r"marquee|math|table|td)\b[^<>]*\son\w+\s*=|"
                     r"\]\(\s*javascript:|<javascript:", re.I)


def active_markdown(text: str) -> list[str]:
    """Snippets of HTML or javascript: links a Markdown renderer would act on (outside code)."""
    return [m.group(0)[:60] for m in _ACTIVE.finditer(_strip_code(text))]


def gradebook_rows(text: str) -> dict[str, str]:
    """student -> total, from a gradebook.csv."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return {}
    head = rows[0]
    at = head.index("total") if "total" in head else None
    return {r[0]: (r[at] if at is not None and at < len(r) else "") for r in rows[1:] if r}


def compare_gradebooks(original: str, merged: str) -> list[str]:
    a, b = gradebook_rows(original), gradebook_rows(merged)
    problems = [f"the merge added student {k!r} (total {b[k]})" for k in b if k not in a]
    problems += [f"the merge lost student {k!r}" for k in a if k not in b]
    problems += [f"the merge changed {k!r}'s total from {a[k]} to {b[k]}" for k in a if k in b and a[k] != b[k]]
    return problems


# --------------------------------------------------------------------------- judging

@dataclass
class Findings:
    """What the run showed besides the students' records."""
    mode: str = "gpu"
    grader_rc: int | None = 0
    grader_killed: str = ""
    grader_peak: int = 0
    grader_limit: int = 1 << 30
    shared_changes: list[str] = field(default_factory=list)
    output_changes: list[str] = field(default_factory=list)
    processes: dict[str, int] = field(default_factory=dict)        # attack -> left alive
    files: dict[str, list[str]] = field(default_factory=dict)       # attack -> paths left
    network: dict[str, list[str]] = field(default_factory=dict)     # attack -> what reached us
    peak_count: dict[str, int] = field(default_factory=dict)
    peak_rss: dict[str, int] = field(default_factory=dict)
    leaks: dict[str, list[str]] = field(default_factory=dict)       # entry -> secrets in its outputs
    seed_leaks: dict[str, list[str]] = field(default_factory=dict)  # entry -> reports showing the seed
    seed_exfil: dict[str, list[str]] = field(default_factory=dict)  # entry -> where its code showed the seed
    markdown: dict[str, list[str]] = field(default_factory=dict)    # entry (or "summary.md") -> snippets
    formulas: list[tuple[str, str]] = field(default_factory=list)   # (row's student, cell)
    formula_of: dict[str, list[str]] = field(default_factory=dict)  # entry (or "?") -> formula cells
    merge: list[str] = field(default_factory=list)
    armed: dict[str, str] = field(default_factory=dict)             # armed key -> "" or why not
    big_files: dict[str, list[str]] = field(default_factory=dict)   # student folder (or "?") -> files
    big_limit: int = COMPILE_MAX_FILE


@dataclass
class Outcome:
    name: str
    passed: bool
    got: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _points(e: dict) -> float:
    return float(e.get("correctness_points", 0) or 0) + float(e.get("perf_points", 0) or 0)


def describe(record: dict | None, exercises: list[str]) -> str:
    if record is None:
        return "no record"
    c = record.get("cudalab", {})
    by_id = {e.get("id"): e for e in c.get("exercises", [])}
    parts = []
    if c.get("rejected"):
        parts.append(f"rejected: {c['rejected']}")
    for x in exercises:
        e = by_id.get(x)
        if e is None:
            parts.append(f"{x}: not graded")
            continue
        reason = " ".join(str(e.get("reason", "")).split())
        parts.append(f"{x} {e.get('status')} {_points(e):g}/{float(e.get('max_points', 0)):g}"
                     + (f": {reason[:160]}" if reason and not c.get("rejected") else ""))
    return "; ".join(parts)


def _unescape_cell(cell: str) -> str:
    return cell[1:] if cell.startswith(("'", "\t", " ")) else cell


def attribute_formulas(f: Findings, students: dict[str, Student]) -> None:
    """Each formula cell to the student whose row it is in, or whose id it holds ("?": nobody's)."""
    for row, cell in f.formulas:
        owner = next((e for e, s in students.items()
                      if s.student in (row, _unescape_cell(row)) or s.student in cell), "?")
        f.formula_of.setdefault(owner, []).append(cell)


def judge_attack(a: Attack, entry: str, record: dict | None, f: Findings) -> Outcome:
    """Whether the attack came out as its attack.toml says, and why not."""
    out = Outcome(a.name, True, describe(record, a.exercises))
    p = out.problems
    if record is None:
        p.append("no record of this submission in the grader's output")
    else:
        c = record.get("cudalab", {})
        by_id = {e.get("id"): e for e in c.get("exercises", [])}
        if a.expect == "rejected" and not c.get("rejected"):
            p.append("the submission was not rejected")
        for x in a.exercises:
            e = by_id.get(x)
            if e is None:
                p.append(f"{x} is not in the record")
                continue
            status, pts = str(e.get("status")), _points(e)
            if status == "grader_error":
                p.append(f"{x}: a grader error, not a stop")
            if status == "no_gpu":
                p.append(f"{x}: reached the tests (not stopped before them)" if f.mode == "host-only"
                         else f"{x}: not graded (no GPU)")
            if a.expect in ("zero", "rejected"):
                if pts > 0 or status == "passed":
                    p.append(f"{x} scored {pts:g} ({status})")
                allowed = a.statuses + ["rejected", "no_gpu", "grader_error"]  # the last two: said above
                if a.statuses and status not in allowed:
                    p.append(f"{x}: status {status}, expected {' or '.join(a.statuses)}")
            elif a.expect == "no-perf" and float(e.get("perf_points", 0) or 0) > 0:
                p.append(f"{x} got {float(e['perf_points']):g} performance points")
            elif a.expect == "no-perf" and a.perf_reason and a.perf_reason not in str(e.get("reason", "")):
                p.append(f"{x}: no performance points, but its reason does not say "
                         f"'{a.perf_reason}' (not stopped by that check)")
    # What the run saw of this attack, whatever its record says.
    if f.processes.get(a.name):
        p.append(f"{f.processes[a.name]} of its processes outlived the grader")
    if f.files.get(a.name):
        p.append("left " + ", ".join(f.files[a.name][:3]) + (" ..." if len(f.files[a.name]) > 3 else ""))
    if f.network.get(a.name):
        p.append("reached the network: " + "; ".join(f.network[a.name][:2]))
    if f.leaks.get(entry):
        p.append("its outputs hold secrets: " + "; ".join(f.leaks[entry][:3]))
    if f.markdown.get(entry):
        p.append("active Markdown in its report: " + ", ".join(f.markdown[entry][:3]))
    if a.max_processes is not None and f.peak_count.get(a.name, 0) > a.max_processes:
        p.append(f"{f.peak_count[a.name]} processes at once (at most {a.max_processes})")
    if a.max_rss_mib is not None and f.peak_rss.get(a.name, 0) > a.max_rss_mib << 20:
        p.append(f"{f.peak_rss[a.name] >> 20} MiB resident (at most {a.max_rss_mib})")
    for check in a.checks:
        p += _check_problems(check, a, entry, f)
    if a.armed and f.armed.get(a.armed):
        out.notes.append(f"not armed: {f.armed[a.armed]}")
    early = first_layer(a, record)
    if early:
        out.notes.append(early)
    out.passed = not p
    return out


def first_layer(a: Attack, record: dict | None) -> str:
    """A note when the forbidden-API check (the source, the object's symbols and imports) stopped
    the attack on an exercise whose `stopped_by` names another layer (the sandbox, a cgroup, the
    checker/runner split): that layer was not reached in this run, so the run does not show it
    holding. "" otherwise."""
    if record is None or "forbidden-API" in a.stopped_by:
        return ""
    by_id = {e.get("id"): e for e in record.get("cudalab", {}).get("exercises", [])}
    first = [x for x in a.exercises if str((by_id.get(x) or {}).get("status")) == "forbidden"]
    if not first:
        return ""
    return (f"{', '.join(first)} stopped first by the forbidden-API check: what stops it, as "
            "listed, was not reached in this run")


def _check_problems(check: str, a: Attack, entry: str, f: Findings) -> list[str]:
    if check == "csv":
        cells = f.formula_of.get(entry, []) + f.formula_of.get("?", [])
        return [f"formula cells in the gradebook: {', '.join(repr(c[:40]) for c in cells[:3])}"] if cells else []
    if check == "markdown" and f.markdown.get("summary.md"):
        return ["active Markdown in summary.md: " + ", ".join(f.markdown["summary.md"][:3])]
    if check == "merge" and f.merge:
        return f.merge[:3]
    if check == "no-seed-leak" and f.seed_exfil.get(entry):
        return [f"its code read the seed and showed it in {', '.join(f.seed_exfil[entry][:3])}"]
    if check == "outputs-stable" and f.output_changes:
        return ["outputs changed after the grader returned: " + ", ".join(f.output_changes[:3])]
    if check == "shared-build" and f.shared_changes:
        return ["the shared build changed: " + ", ".join(f.shared_changes[:3])]
    if check == "grader-exit" and (f.grader_rc != 0 or f.grader_killed):
        return [f"the grader {f.grader_killed or f'exited {f.grader_rc}'}"]
    if check == "no-big-files":
        keys = dict.fromkeys((safe_name(entry), safe_name(a.student_id), "?"))  # its folders, or nobody's
        left = [p for key in keys for p in f.big_files.get(key, [])]
        if left:
            return [f"left {len(left)} file(s) of {f.big_limit >> 20} MiB or more in the grader's output: "
                    + ", ".join(left[:3])]
        return []
    if check == "grader-memory" and f.grader_peak > f.grader_limit:
        return [f"the grader used {f.grader_peak >> 20} MiB (at most {f.grader_limit >> 20})"]
    return []


def judge_control(c: Student, record: dict | None) -> Outcome:
    out = Outcome(c.name, True, describe(record, c.exercises))
    if record is None:
        out.problems.append("no record")
    else:
        by_id = {e.get("id"): e for e in record.get("cudalab", {}).get("exercises", [])}
        for x in c.exercises:
            e = by_id.get(x)
            if e is None:
                out.problems.append(f"{x} not graded")
            elif e.get("status") != "passed" or _points(e) < float(e.get("max_points", 0)) - 1e-9:
                out.problems.append(f"{x}: {e.get('status')} {_points(e):g}/{float(e.get('max_points', 0)):g}")
        # the exercises a neighbour made fail at first: their record's `alone` (grading._confirm_alone)
        again = [x for x in c.exercises
                 if str((by_id.get(x) or {}).get("alone") or "").startswith(ALONE_AGAIN)]
        if again:
            out.notes.append(f"{', '.join(again)} {ALONE_AGAIN} (its first run failed beside another submission)")
        elif c.beside:
            out.notes.append(f"no exercise was graded again alone: {c.beside} did not make its tests fail "
                             "(the check did not bite)")
    out.passed = not out.problems
    return out


def global_checks(f: Findings, seed: int | None) -> list[tuple[str, bool, str]]:
    """(check, passed, detail) for the side effects the grader must prevent."""
    rows = []
    ok_rc = f.grader_rc == 0 and not f.grader_killed
    rows.append(("the grader lived and exited 0", ok_rc,
                 f.grader_killed or f"exit {f.grader_rc}"))
    rows.append(("the grader's own memory", f.grader_peak <= f.grader_limit,
                 f"peak {f.grader_peak >> 20} MiB (at most {f.grader_limit >> 20})"))
    rows.append(("the shared build unchanged", not f.shared_changes,
                 "; ".join(f.shared_changes[:5]) or "same hashes before and after"))
    rows.append(("outputs unchanged after the grader returned", not f.output_changes,
                 "; ".join(f.output_changes[:5]) or "gradebook.csv, summary.md, results.json, report.md"))
    left = sum(f.processes.values())
    rows.append(("no process left with a marker", not left,
                 ", ".join(f"{k}: {v}" for k, v in sorted(f.processes.items())) or "none"))
    files = sorted(p for ps in f.files.values() for p in ps)
    rows.append(("no file left with a marker", not files, "; ".join(files[:5]) or "none"))
    net = [f"{k}: {v[0]}" for k, v in sorted(f.network.items())]
    rows.append(("no network connection", not net, "; ".join(net) or "none"))
    leaks = [f"{k}: {v[0]}" for k, v in sorted(f.leaks.items())]
    leaks += [f"{k}: the seed in {v[0]}" for k, v in sorted(f.seed_exfil.items())]
    rows.append(("no secret in a student's outputs", not leaks, "; ".join(leaks[:5]) or "none"))
    seeds = sorted(f.seed_leaks)
    rows.append(("the instructor's seed in no student report", not seeds,
                 (f"seed {seed} in the outputs of " + ", ".join(seeds[:5])) if seeds else "none"))
    md = [f"{k}: {v[0]}" for k, v in sorted(f.markdown.items())]
    rows.append(("no active Markdown in the reports", not md, "; ".join(md[:5]) or "none"))
    rows.append(("no formula in the gradebooks", not f.formulas,
                 "; ".join(repr(c[:40]) for _, c in f.formulas[:5]) or "none"))
    rows.append(("--merge takes only the grader's results", not f.merge, "; ".join(f.merge[:5]) or "same gradebook"))
    return rows


# --------------------------------------------------------------------------- reading the grader's output

def load_records(gout: Path) -> dict[str, tuple[Path, dict]]:
    """entry name -> (student folder, results.json) of every student the grader wrote."""
    out = {}
    for p in sorted((gout / "students").glob("*/results.json")):
        try:
            data = json.loads(p.read_text())
            entry = str(data["cudalab"].get("entry") or data["cudalab"]["student"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        out[entry] = (p.parent, data)
    return out


def _texts(folder: Path) -> dict[str, str]:
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.is_symlink() and p.stat().st_size <= 8 << 20:
            out[p.relative_to(folder).as_posix()] = p.read_text(errors="replace")
    return out


def _visible(results_json: str) -> str:
    """What Gradescope shows the student from a results.json."""
    try:
        data = json.loads(results_json)
    except ValueError:
        return results_json
    parts = [str(data.get("output", ""))]
    for t in data.get("tests", []):
        parts += [str(t.get("name", "")), str(t.get("output", ""))]
    return "\n".join(parts)


def scan_outputs(records: dict[str, tuple[Path, dict]], students: dict[str, Student], f: Findings,
                 secret: str, seed: int | None) -> None:
    """Leaks (other students' canaries, the hidden secret, solutions), the seed, Markdown."""
    canaries = {s.canary: e for e, s in students.items()}
    for entry, (folder, _) in records.items():
        me = students.get(entry)
        texts = _texts(folder)
        for rel, text in texts.items():
            found = [f"{rel}: {canaries[c]}'s file" for c in canaries if c in text and canaries[c] != entry]
            if secret in text:
                found.append(f"{rel}: the hidden tests")
            if (me is None or me.kind != "control") and "BEGIN SOLUTION" in text:
                found.append(f"{rel}: a reference solution")
            if found:
                f.leaks.setdefault(entry, []).extend(found)
            if seed is not None:
                shown = _visible(text) if rel.endswith("results.json") else text
                if rel.endswith(("report.md", "results.json")) and str(seed) in shown:
                    f.seed_leaks.setdefault(entry, []).append(rel)
                if f"{MARKER}seed={seed}" in text:
                    f.seed_exfil.setdefault(entry, []).append(rel)
            if rel.endswith(".md"):
                snippets = active_markdown(text)
                if snippets:
                    f.markdown.setdefault(entry, []).extend(snippets)


# --------------------------------------------------------------------------- the run

@dataclass
class Options:
    mode: str                          # "gpu" or "host-only"
    out: Path
    work: Path
    only: list[str] = field(default_factory=list)
    jobs: int = os.cpu_count() or 2
    per_gpu: int = 2
    timeout: float = 120.0             # each test program
    max_memory_gib: float = 8.0
    settle: float = 10.0               # seconds to watch the outputs after the grader returned
    grader_timeout: float = 3600.0
    grader_limit_mib: int = 1024
    root: Path = ROOT
    suite: Path = SUITE


def gpu_present() -> bool:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        p = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return p.returncode == 0 and "GPU" in p.stdout


def _env() -> dict[str, str]:
    env = dict(os.environ)
    cuda_bin = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin"
    if cuda_bin.is_dir() and str(cuda_bin) not in env.get("PATH", "").split(os.pathsep):
        env["PATH"] = env.get("PATH", "") + os.pathsep + str(cuda_bin)
    return env


def _armed(key: str, attacks: list[Attack], opts: Options, gout: Path, index: dict) -> str:
    """'' when what the attack needs is there, else why not."""
    if key == "solution-runner":
        slugs = {index[x][1].slug for a in attacks if a.armed == key for x in a.exercises}
        found = [p for s in slugs for p in opts.root.glob(f"build/*/bin/{s}_runner_solution")]
        return "" if found else "no build/*/bin/<slug>_runner_solution in the course (build the solutions first)"
    if key == "nvcc":
        return "" if shutil.which("nvcc", path=_env()["PATH"]) else "no nvcc on the grading machine"
    if key == "relative-include":
        try:
            gout.resolve().relative_to(opts.root.resolve())
            return ""
        except ValueError:
            return "the grader's output folder is outside the course: no ../ reaches solutions/"
    return ""


def _run_logged(cmd: list[str], log: Path, cwd: Path, timeout: float, monitor: Monitor | None = None
                ) -> tuple[int | None, float]:
    """Run cmd in its own session, output to log; (exit code or None when it timed out, seconds)."""
    start = time.monotonic()
    with log.open("ab") as f:
        f.write(("$ " + " ".join(cmd) + "\n").encode())
        f.flush()
        p = subprocess.Popen(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=_env(), start_new_session=True)
        if monitor is not None:
            monitor.grader_pid = p.pid
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            p.wait()
            rc = None
        finally:
            if monitor is not None:
                monitor.tick()
                monitor.grader_pid = None
    return rc, round(time.monotonic() - start, 1)


def run(opts: Options, say=print) -> dict:
    """One run of the suite; the report (also written as redteam.json and redteam.md in opts.out)."""
    attacks = every = load_attacks(opts.suite, opts.root)
    if opts.only:
        unknown = set(opts.only) - {a.name for a in attacks}
        if unknown:
            raise SpecError(f"no attack named {', '.join(sorted(unknown))}")
        attacks = [a for a in attacks if a.name in opts.only]
    if opts.mode == "host-only":
        attacks = [a for a in attacks if a.host_only]
    controls = load_controls(opts.suite, opts.root) if opts.mode == "gpu" else []
    check_beside(every, controls)
    controls = [c for c in controls if c.beside is None or c.beside in {a.name for a in attacks}]
    index = _exercise_index(opts.root)
    order = list(index)
    exercises = sorted({x for a in attacks for x in a.exercises}
                       | {x for c in controls if c.exercises != "targeted" for x in c.exercises},
                       key=order.index)
    names = [a.name for a in attacks]
    opts.out.mkdir(parents=True, exist_ok=True)
    work = opts.work
    for sub in ("submissions", "grader", "merged", "hidden"):
        shutil.rmtree(work / sub, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    log = opts.out / "redteam-grader.log"
    log.write_text("")
    seed = secrets.randbelow(9 * 10 ** 9) + 10 ** 9
    secret = CANARY + "hidden_" + secrets.token_hex(8)
    hidden = work / "hidden"
    hidden.mkdir(parents=True)
    (hidden / "README.txt").write_text("The instructor's hidden tests.\n")
    secret_file = hidden / "secret.txt"
    secret_file.write_text(f"{secret} = instructor_secret;\n")
    listener = Listener() if opts.mode == "gpu" else None
    ctx = Context(opts.root, work / "submissions", secret_file, secret, listener.port if listener else 0)
    gout, mout = work / "grader", work / "merged"
    f = Findings(mode=opts.mode, grader_limit=opts.grader_limit_mib << 20)
    started = time.monotonic()
    monitor = Monitor(names, f.grader_limit)
    report: dict = {}
    try:
        students = build_class(attacks, controls, exercises, ctx, opts.suite)
        say(f"redteam: {len(attacks)} attack(s), {len(controls)} control(s) on {', '.join(exercises)} "
            f"({opts.mode}); grader log: {log}")
        temp_places = [(d, 2) for d in TEMP_DIRS]
        repo_places = [(opts.root / d, 4) for d in ("tools", "solutions", "tests", "chapters")] + [(opts.root, 1)]
        before = marker_files(temp_places + repo_places)
        base = [sys.executable, str(opts.root / "tools" / "grade"), *exercises, "--submissions", str(ctx.subs),
                "--out", str(gout), "--hidden-tests", str(hidden), "--jobs", str(opts.jobs)]
        perf = opts.mode == "gpu" and any(a.expect == "no-perf" for a in attacks)
        base += ["--perf"] if perf else []
        say("redteam: the instructor's build (tools/grade --prepare-only) ...")
        rc, secs = _run_logged(base + ["--prepare-only"], log, opts.root, opts.grader_timeout)
        if rc != 0:
            raise RuntimeError(f"tools/grade --prepare-only exited {rc} after {secs} s; see {log}")
        shared_bin = gout / "shared" / "course" / "build" / "default" / "bin"
        shared_before = hash_tree(shared_bin)
        say(f"redteam: grading {len(students)} submission(s) ...")
        monitor.start()
        cmd = base + ["--shared-build", str(gout / "shared"), "--keep-work", "--seed", str(seed),
                      "--timeout", f"{opts.timeout:g}", "--max-memory", f"{opts.max_memory_gib:g}",
                      "--per-gpu", str(opts.per_gpu)]
        f.grader_rc, grade_secs = _run_logged(cmd, log, opts.root, opts.grader_timeout, monitor)
        if f.grader_rc is None:
            f.grader_killed = f"was stopped after {opts.grader_timeout:g} s (the red-team driver's limit)"
        if monitor.grader_killed:
            f.grader_killed = f"was killed past {opts.grader_limit_mib} MiB of memory (by the red-team driver)"
        outputs_then = output_hashes(gout)
        time.sleep(opts.settle)
        f.output_changes = diff_hashes(outputs_then, output_hashes(gout))
        monitor.stop()
        f.grader_peak, f.peak_count, f.peak_rss = monitor.grader_peak, monitor.peak_count, monitor.peak_rss
        f.processes = kill_marker_processes(names)
        f.shared_changes = diff_hashes(shared_before, hash_tree(shared_bin))
        if any("no-big-files" in a.checks for a in attacks):
            f.big_files = big_files(gout, f.big_limit)
        after = marker_files(temp_places + repo_places + [(gout, 64), (work, 1)],
                             skip=(gout / "work",)) | marker_files([(gout / "work", 1)])
        for p in sorted(after - before):
            f.files.setdefault(attack_of(p.name, names) or "?", []).append(str(p))
        remove_paths(after - before)
        if listener is not None:
            time.sleep(0.5)
            for proto, data in listener.got:
                f.network.setdefault(attack_of(data, names) or "?", []).append(f"{proto}: {data.strip()[:80]}")
        mrc, _ = _run_logged([sys.executable, str(opts.root / "tools" / "grade"), "--merge", str(gout),
                              "--out", str(mout)], log, opts.root, 600)
        book, merged = gout / "gradebook.csv", mout / "gradebook.csv"
        if not book.exists():
            f.merge.append("the grader wrote no gradebook.csv")
        elif mrc != 0 or not merged.exists():
            f.merge.append(f"tools/grade --merge exited {mrc}")
        else:
            f.merge += compare_gradebooks(book.read_text(), merged.read_text())
        for path in (book, merged):
            if path.exists():
                f.formulas += formula_cells(path.read_text(errors="replace"))
        for md in (gout / "summary.md", mout / "summary.md"):
            if md.exists():
                snippets = active_markdown(md.read_text(errors="replace"))
                if snippets:
                    f.markdown.setdefault("summary.md", []).extend(snippets)
        attribute_formulas(f, students)
        records = load_records(gout)
        scan_outputs(records, students, f, secret, seed)
        for key in {a.armed for a in attacks if a.armed}:
            f.armed[key] = _armed(key, attacks, opts, gout, index)
        entry_of = {s.name: e for e, s in students.items() if s.kind == "attack"}
        outcomes = [judge_attack(a, entry_of[a.name], records.get(entry_of[a.name], (None, None))[1], f)
                    for a in attacks]
        control_outcomes = [judge_control(s, records.get(e, (None, None))[1])
                            for e, s in students.items() if s.kind == "control"]
        checks = global_checks(f, seed)
        passed = (all(o.passed for o in outcomes) and all(o.passed for o in control_outcomes)
                  and all(ok for _, ok, _ in checks))
        report = {
            "passed": passed, "mode": opts.mode, "exercises": exercises, "seconds": round(time.monotonic() - started, 1),
            "grader": {"command": " ".join(cmd), "exit": f.grader_rc, "seconds": grade_secs,
                       "peak_rss_mib": f.grader_peak >> 20, "killed": f.grader_killed, "log": str(log),
                       "output": str(gout)},
            "attacks": [dict(dataclasses.asdict(o), tries=a.tries, expect=a.expect, host_only=a.host_only,
                             stopped_by=a.stopped_by, exercises=a.exercises, entry=entry_of[a.name])
                        for a, o in zip(attacks, outcomes)],
            "controls": [dataclasses.asdict(o) for o in control_outcomes],
            "checks": [{"check": c, "passed": ok, "detail": d} for c, ok, d in checks],
        }
    except Exception as e:  # noqa: BLE001 - the run ends with a report, whatever happened
        report = {"passed": False, "mode": opts.mode, "exercises": exercises,
                  "error": f"{type(e).__name__}: {e}",
                  "seconds": round(time.monotonic() - started, 1), "attacks": [], "controls": [], "checks": []}
    finally:
        monitor.stop()
        if listener is not None:
            listener.close()
        left = kill_marker_processes(names)
        if left and not report.get("attacks"):
            say(f"redteam: killed {sum(left.values())} process(es) the attacks left")
    (opts.out / "redteam.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    (opts.out / "redteam.md").write_text(markdown_report(report))
    return report


# --------------------------------------------------------------------------- the report

def md_cell(text: str) -> str:
    """Text safe in a Markdown table cell: no table break, no HTML, no link, no code span."""
    text = " ".join(str(text).split())
    for a, b in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"), ("`", "\\`"), ("[", "\\["),
                 ("]", "\\]"), ("*", "\\*"), ("_", "\\_")):
        text = text.replace(a, b)
    return text


def markdown_report(rep: dict) -> str:
    lines = ["# Red-team suite of the class grader", ""]
    attacks, controls, checks = rep.get("attacks", []), rep.get("controls", []), rep.get("checks", [])
    stopped = sum(1 for a in attacks if a["passed"])
    full = sum(1 for c in controls if c["passed"])
    verdict = "PASSED" if rep.get("passed") else "FAILED"
    lines += [f"**{verdict}**: {stopped} of {len(attacks)} attacks came out as expected, "
              + (f"{full} of {len(controls)} controls got full marks, " if controls else "no controls (they need a GPU), ")
              + f"{sum(1 for c in checks if c['passed'])} of {len(checks)} side-effect checks passed.", "",
              f"- mode: {rep.get('mode')} (exercises {', '.join(rep.get('exercises', []))})",
              f"- time: {rep.get('seconds')} s"]
    g = rep.get("grader")
    if g:
        lines.append(f"- grader: exit {g['exit']}, {g['seconds']} s, own memory peak {g['peak_rss_mib']} MiB"
                     + (f", {g['killed']}" if g.get("killed") else ""))
    if rep.get("error"):
        lines += ["", f"The run did not finish: {md_cell(rep['error'])}"]
    if attacks:
        lines += ["", "## Attacks", "",
                  "| attack | what it tried | expected | got | what stops it | result |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for a in attacks:
            exp = a["expect"] + (" (host)" if a["host_only"] else "")
            result = "pass" if a["passed"] else "FAIL: " + "; ".join(a["problems"])
            if a.get("notes"):
                result += " (" + "; ".join(a["notes"]) + ")"
            lines.append(f"| {md_cell(a['name'])} | {md_cell(a['tries'])} | {md_cell(', '.join(a['exercises']))} "
                         f"{md_cell(exp)} | {md_cell(a['got'])} | {md_cell(a['stopped_by'])} | {md_cell(result)} |")
    if controls:
        lines += ["", "## Controls (reference solutions)", "", "| control | got | result |", "| --- | --- | --- |"]
        for c in controls:
            result = "pass" if c["passed"] else "FAIL: " + "; ".join(c["problems"])
            if c.get("notes"):
                result += " (" + "; ".join(c["notes"]) + ")"
            lines.append(f"| {md_cell(c['name'])} | {md_cell(c['got'])} | {md_cell(result)} |")
    if checks:
        lines += ["", "## Side effects", "", "| check | result | detail |", "| --- | --- | --- |"]
        for c in checks:
            lines.append(f"| {md_cell(c['check'])} | {'pass' if c['passed'] else 'FAIL'} | {md_cell(c['detail'])} |")
    return "\n".join(lines) + "\n"
