"""A class's submissions: finding them, unpacking archives safely, finding the exercise files.

Each entry of the submissions folder is one student's submission: a folder
laid out like `starter/` (`01-reduce-scan-histogram/sum_atomic.cu`), or a
`.zip`, `.tar.gz`, `.tgz` or `.tar` of one. The student id is the entry's
name without the archive suffix.

Everything a student submits is untrusted. An archive is read member by
member and written by this module, never by `extractall`: a member with an
absolute path or `..`, a link, a device or FIFO, a member over the size
limit, too many members, too many bytes in all, or a compression ratio of an
archive bomb rejects the whole submission, with the reason. Nothing is ever
written outside the destination folder. In a submitted folder, links are
never followed.
"""
from __future__ import annotations

import os
import re
import stat
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .manifest import Exercise

ARCHIVES = (".tar.gz", ".tgz", ".zip", ".tar")
_SAFE_ID = re.compile(r"[^A-Za-z0-9._@+-]")


@dataclass(frozen=True)
class Limits:
    max_archive: int = 64 << 20   # bytes of the archive file itself
    max_member: int = 4 << 20     # bytes of one file once unpacked
    max_total: int = 64 << 20     # bytes of all files once unpacked
    max_members: int = 2000       # files and folders
    max_ratio: float = 100.0      # unpacked / packed size of one member (archive bombs)
    max_source: int = 1 << 20     # bytes of one exercise file


class Rejected(Exception):
    """The whole submission is refused; the message is the reason."""


@dataclass
class Entry:
    student: str      # the entry's name without the archive suffix
    path: Path
    kind: str         # "dir", "zip", "tar", or "bad" (with why)
    why: str = ""

    @property
    def safe_id(self) -> str:
        """The student id as a file name (other characters become '_')."""
        return _SAFE_ID.sub("_", self.student) or "_"


@dataclass
class Submission:
    student: str
    files: dict[str, Path] = field(default_factory=dict)   # exercise id -> the submitted file
    found_at: dict[str, str] = field(default_factory=dict)  # exercise id -> path in the submission
    missing: list[str] = field(default_factory=list)        # exercise ids not submitted
    problems: dict[str, str] = field(default_factory=dict)  # exercise id -> why the file is refused
    ignored: list[str] = field(default_factory=list)        # other paths in the submission
    rejected: str | None = None                             # why the whole submission is refused


def student_id(name: str) -> str:
    for suffix in ARCHIVES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def discover(folder: Path) -> list[Entry]:
    """Every entry of the submissions folder, sorted by name (dot files are skipped)."""
    entries: list[Entry] = []
    seen: dict[str, str] = {}
    for p in sorted(folder.iterdir(), key=lambda q: q.name):
        if p.name.startswith("."):
            continue
        sid = student_id(p.name)
        if p.is_symlink():
            e = Entry(sid, p, "bad", "the entry is a symbolic link (not followed)")
        elif p.is_dir():
            e = Entry(sid, p, "dir")
        elif p.is_file() and p.name.lower().endswith(".zip"):
            e = Entry(sid, p, "zip")
        elif p.is_file() and p.name.lower().endswith((".tar.gz", ".tgz", ".tar")):
            e = Entry(sid, p, "tar")
        else:
            e = Entry(sid, p, "bad", "not a folder nor a .zip, .tar.gz, .tgz or .tar archive")
        if e.safe_id in seen:
            e = Entry(sid + "~" + p.name, p, "bad",
                      f"another entry ({seen[e.safe_id]}) has the same student id")
        seen[e.safe_id] = p.name
        entries.append(e)
    return entries


def _member_path(name: str) -> PurePosixPath:
    """The relative path of an archive member; Rejected when it is absolute or climbs out."""
    clean = name.replace("\\", "/")
    if clean.startswith("/") or re.match(r"^[A-Za-z]:", clean):
        raise Rejected(f"archive member '{name}' has an absolute path")
    parts = [p for p in clean.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise Rejected(f"archive member '{name}' climbs out of the folder ('..')")
    if any("\0" in p for p in parts):
        raise Rejected(f"archive member '{name}' has a NUL in its name")
    return PurePosixPath(*parts) if parts else PurePosixPath(".")


def _write(dest: Path, rel: PurePosixPath, chunks, limit: int, total: list[int],
           limits: Limits, name: str) -> None:
    """Write one member below dest, counting the bytes actually unpacked."""
    target = dest.joinpath(*rel.parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    # the parents were made by us from checked names: no link can be among them
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as f:
        written = 0
        for chunk in chunks:
            written += len(chunk)
            total[0] += len(chunk)
            if written > limit:
                raise Rejected(f"archive member '{name}' is larger than {limits.max_member} bytes")
            if total[0] > limits.max_total:
                raise Rejected(f"the archive unpacks to more than {limits.max_total} bytes")
            f.write(chunk)


def _chunks(f, size: int = 1 << 16):
    while True:
        data = f.read(size)
        if not data:
            return
        yield data


def unpack(entry: Entry, dest: Path, limits: Limits = Limits()) -> None:
    """Unpack an archive entry into dest (created); Rejected with the reason when unsafe."""
    try:
        size = entry.path.stat().st_size
    except OSError as e:
        raise Rejected(f"cannot read the archive: {e}") from None
    if size > limits.max_archive:
        raise Rejected(f"the archive is larger than {limits.max_archive} bytes")
    dest.mkdir(parents=True, exist_ok=True)
    try:
        if entry.kind == "zip":
            _unpack_zip(entry.path, dest, limits)
        elif entry.kind == "tar":
            _unpack_tar(entry.path, dest, limits)
        else:
            raise Rejected(entry.why or "not an archive")
    except Rejected:
        raise
    except FileExistsError as e:
        raise Rejected(f"the archive holds the same path twice ({Path(e.filename).name})") from None
    except (OSError, EOFError, zipfile.BadZipFile, tarfile.TarError, RuntimeError, ValueError) as e:
        raise Rejected(f"cannot read the archive: {type(e).__name__}: {e}") from None


def _unpack_zip(path: Path, dest: Path, limits: Limits) -> None:
    total = [0]
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
        if len(infos) > limits.max_members:
            raise Rejected(f"the archive has more than {limits.max_members} members")
        checked = []
        declared = 0
        for info in infos:
            rel = _member_path(info.filename)
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if kind == stat.S_IFLNK:
                raise Rejected(f"archive member '{info.filename}' is a symbolic link")
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise Rejected(f"archive member '{info.filename}' is not a regular file")
            if info.is_dir() or kind == stat.S_IFDIR:
                continue
            if info.file_size > limits.max_member:
                raise Rejected(f"archive member '{info.filename}' is larger than "
                               f"{limits.max_member} bytes")
            if info.file_size > (1 << 20) and \
                    info.file_size > limits.max_ratio * max(1, info.compress_size):
                raise Rejected(f"archive member '{info.filename}' is compressed "
                               f"{info.file_size // max(1, info.compress_size)}:1 (an archive bomb?)")
            declared += info.file_size
            if declared > limits.max_total:
                raise Rejected(f"the archive unpacks to more than {limits.max_total} bytes")
            checked.append((info, rel))
        for info, rel in checked:
            if rel == PurePosixPath("."):
                continue
            with z.open(info) as f:
                _write(dest, rel, _chunks(f), limits.max_member, total, limits, info.filename)


def _unpack_tar(path: Path, dest: Path, limits: Limits) -> None:
    total = [0]
    declared = 0
    count = 0
    with tarfile.open(path, "r:*") as t:
        for m in t:  # streamed: the headers are checked before any data is written
            count += 1
            if count > limits.max_members:
                raise Rejected(f"the archive has more than {limits.max_members} members")
            rel = _member_path(m.name)
            if m.issym() or m.islnk():
                raise Rejected(f"archive member '{m.name}' is a link")
            if m.isdir():
                continue
            if not m.isfile():
                raise Rejected(f"archive member '{m.name}' is a device, FIFO or other special file")
            if m.size > limits.max_member:
                raise Rejected(f"archive member '{m.name}' is larger than {limits.max_member} bytes")
            declared += m.size
            if declared > limits.max_total:
                raise Rejected(f"the archive unpacks to more than {limits.max_total} bytes")
            if rel == PurePosixPath("."):
                continue
            f = t.extractfile(m)
            if f is None:
                raise Rejected(f"archive member '{m.name}' cannot be read")
            _write(dest, rel, _chunks(f), limits.max_member, total, limits, m.name)


def list_files(folder: Path, limits: Limits = Limits()) -> tuple[list[str], list[str]]:
    """(regular files, ignored entries with why) below folder, as relative posix paths.

    Links are listed as ignored and never followed; past max_members files the
    rest is ignored.
    """
    files: list[str] = []
    ignored: list[str] = []
    for top, dirs, names in os.walk(folder, followlinks=False):
        base = Path(top)
        for d in list(dirs):
            if (base / d).is_symlink():
                ignored.append(f"{(base / d).relative_to(folder).as_posix()} (symbolic link, not followed)")
                dirs.remove(d)
        dirs.sort()
        for n in sorted(names):
            p = base / n
            rel = p.relative_to(folder).as_posix()
            try:
                st = p.lstat()
            except OSError:
                ignored.append(f"{rel} (unreadable)")
                continue
            if stat.S_ISLNK(st.st_mode):
                ignored.append(f"{rel} (symbolic link, not followed)")
            elif not stat.S_ISREG(st.st_mode):
                ignored.append(f"{rel} (not a regular file)")
            elif len(files) >= limits.max_members:
                ignored.append(f"{rel} (past {limits.max_members} files)")
            else:
                files.append(rel)
    return files, ignored


def _prefixes(files: list[str]) -> list[str]:
    """Where the layout of starter/ may begin: the top, starter/, one wrapping folder."""
    prefixes = ["", "starter/"]
    tops = {f.split("/", 1)[0] for f in files if "/" in f and not f.startswith("__MACOSX/")}
    if len(tops) == 1:
        top = tops.pop()
        prefixes += [f"{top}/", f"{top}/starter/"]
    return prefixes


def map_files(folder: Path, exercises: list[Exercise], limits: Limits = Limits(),
              student: str = "") -> Submission:
    """Find each exercise's file in a submission folder laid out like starter/.

    Accepted places, first match wins: `<dir>/<file>` (like starter/),
    `starter/<dir>/<file>`, the same inside one wrapping folder, and `<file>`
    alone at the top (or in the wrapping folder). Every other file is listed as
    ignored.
    """
    sub = Submission(student)
    files, ignored = list_files(folder, limits)
    present = set(files)
    used: set[str] = set()
    for ex in exercises:
        candidates = []
        for pre in _prefixes(files):
            candidates += [f"{pre}{ex.chapter_dir}/{ex.file}", f"{pre}{ex.file}"]
        hit = next((c for c in candidates if c in present), None)
        if hit is None:
            link = next((c for c in candidates if (folder / c).is_symlink()), None)
            if link:
                sub.problems[ex.id] = f"{link} is a symbolic link (refused)"
            else:
                sub.missing.append(ex.id)
            continue
        used.add(hit)
        path = folder / hit
        size = path.lstat().st_size
        if size > limits.max_source:
            sub.problems[ex.id] = f"{hit} is larger than {limits.max_source} bytes (refused)"
            continue
        sub.files[ex.id] = path
        sub.found_at[ex.id] = hit
    sub.ignored = [f for f in files if f not in used] + ignored
    return sub


def read_source(path: Path) -> bytes:
    """The bytes of a submitted file, refusing to follow a link."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        return f.read()
