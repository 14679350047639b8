"""A class's submissions: finding them, unpacking archives safely, finding the exercise files.

Each entry of the submissions folder is one student's submission: a folder
laid out like `starter/` (`01-reduce-scan-histogram/sum_atomic.cu`), or a
`.zip`, `.tar.gz`, `.tgz` or `.tar` of one. The student id is the entry's
name without the archive suffix.

Everything a student submits is untrusted. Before any library reads an
archive, this module reads its headers itself, each of a bounded size: the
512-byte headers of a tar (through a gzip stream decompressed in chunks,
never past a limit), with the GNU long names and pax records checked against
a small limit before they are read; the end record and central directory of
a zip, its entry count and the length of every name, extra field and
comment. Then the archive is read member by member and written by this
module, never by `extractall`: a member with an absolute path or `..`, a
link, a device or FIFO, a member over the size limit, too many members, too
many bytes in all, or a compression ratio of an archive bomb rejects the
whole submission, with the reason. Nothing is ever written outside the
destination folder. In a submitted folder, links are never followed.
"""
from __future__ import annotations

import hashlib
import os
import re
import stat
import struct
import tarfile
import zipfile
import zlib
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
    max_header: int = 64 << 10    # bytes of one tar pax record block or GNU long name
    max_headers: int = 1 << 20    # bytes of all of them in one archive
    max_stream: int = 80 << 20    # bytes of a .tar.gz's tar stream once decompressed
    max_name: int = 1024          # bytes of one zip member's name
    max_extra: int = 4096         # bytes of one zip member's extra field or comment


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
        return safe_name(self.student)


MAX_SAFE_NAME = 200   # characters of a student's folder name (file systems allow 255 bytes)


def safe_name(student: str) -> str:
    """A student id as a file name: characters other than A-Z a-z 0-9 . _ @ + - become '_'.

    A name longer than MAX_SAFE_NAME keeps its start and ends with a hash of the whole id, so
    that students/<name> can be made (an id of two entry names joined, for a duplicate, can
    be 500 characters) and two long ids with the same start stay apart."""
    name = _SAFE_ID.sub("_", student) or "_"
    if len(name) > MAX_SAFE_NAME:
        digest = hashlib.sha256(student.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        name = f"{name[:MAX_SAFE_NAME - 17]}_{digest}"
    return name


@dataclass
class Submission:
    student: str
    files: dict[str, Path] = field(default_factory=dict)   # exercise id -> the submitted file
    found_at: dict[str, str] = field(default_factory=dict)  # exercise id -> path in the submission
    missing: list[str] = field(default_factory=list)        # exercise ids not submitted
    problems: dict[str, str] = field(default_factory=dict)  # exercise id -> why the file is refused
    ignored: list[str] = field(default_factory=list)        # other paths in the submission
    # exercise id (of `missing`) -> files of the submission named like its file, in places the
    # grader does not look (two folders deep, or two copies side by side)
    misplaced: dict[str, list[str]] = field(default_factory=dict)
    rejected: str | None = None                             # why the whole submission is refused


def student_id(name: str) -> str:
    for suffix in ARCHIVES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def case_collisions(entries: list[Entry]) -> list[str]:
    """A warning for each group of student ids whose folder names differ only by case
    (`Bob`, `bob`): graded apart here, their students/ folders would be one folder on a
    case-insensitive file system (macOS, Windows), where one would overwrite the other."""
    groups: dict[str, list[str]] = {}
    for e in entries:
        groups.setdefault(e.safe_id.casefold(), []).append(e.safe_id)
    return [f"student ids {', '.join(sorted(set(ids)))} differ only by case: their folders under "
            "students/ would be one folder on a case-insensitive file system (macOS, Windows); "
            "keep the output on Linux, or rename a submission and grade it again"
            for ids in groups.values() if len(set(ids)) > 1]


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
    dest.mkdir(parents=True, exist_ok=True)
    try:
        if entry.kind not in ("zip", "tar"):
            raise Rejected(entry.why or "not an archive")
        # one open file for the scan and the library: what was checked is what is read
        fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise Rejected("the archive is not a regular file")
            size = os.fstat(f.fileno()).st_size
            if size > limits.max_archive:
                raise Rejected(f"the archive is larger than {limits.max_archive} bytes")
            if entry.kind == "zip":
                _unpack_zip(f, size, dest, limits)
            else:
                _unpack_tar(f, dest, limits)
    except Rejected:
        raise
    except FileExistsError as e:
        raise Rejected(f"the archive holds the same path twice ({Path(e.filename).name})") from None
    except (OSError, EOFError, zipfile.BadZipFile, tarfile.TarError, RuntimeError, ValueError,
            zlib.error, struct.error) as e:
        raise Rejected(f"cannot read the archive: {type(e).__name__}: {e}") from None


# --- reading the headers before any library does ---------------------------------------------

_GZIP_MAGIC = b"\x1f\x8b"
_OTHER_COMPRESSION = {b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd",
                      b"\x5d\x00\x00": "lzma"}
_TAR_REGULAR = (b"0", b"\0", b"7")
_TAR_LONG = (b"L", b"K")          # GNU long name, long link name
_TAR_PAX = (b"x", b"X", b"g")     # pax extended header (x, Solaris X), pax global header
_MAX_CHAIN = 8                    # extension headers in a row before one member


class _Stream:
    """The bytes of a tar, read from the file, through gzip when it is one, never past a limit."""

    def __init__(self, f, gz: bool, limit: int):
        self.f, self.gz, self.limit = f, gz, limit
        self.pos = 0                  # bytes of the tar stream handed out
        self.buf = b""
        self.d = zlib.decompressobj(31) if gz else None
        self.ended = False

    def _fill(self, want: int) -> None:
        while len(self.buf) < want and not self.ended:
            if self.d is None:
                data = self.f.read(1 << 16)
                if not data:
                    self.ended = True
                self.buf += data
            else:
                if self.d.unconsumed_tail:
                    data = self.d.unconsumed_tail
                elif self.d.eof:
                    rest = self.d.unused_data
                    if len(rest) < 2:
                        rest += self.f.read(1 << 16)
                    if rest[:2] != _GZIP_MAGIC:   # the end (gzip's reader would stop or fail here)
                        self.ended = True
                        break
                    self.d = zlib.decompressobj(31)   # a gzip of several members
                    data = rest
                else:
                    data = self.f.read(1 << 16)
                    if not data:
                        self.ended = True
                        break
                try:
                    self.buf += self.d.decompress(data, 1 << 16)
                except zlib.error as e:
                    raise Rejected(f"the archive's gzip stream is corrupt ({e})") from None
            if self.pos + len(self.buf) > self.limit:
                raise Rejected(f"the archive unpacks to more than {self.limit} bytes of tar "
                               "stream (an archive bomb?)")

    def read(self, n: int) -> bytes:
        """Up to n bytes (n is bounded by the caller)."""
        self._fill(n)
        out, self.buf = self.buf[:n], self.buf[n:]
        self.pos += len(out)
        return out

    def skip(self, n: int) -> int:
        """Skip n bytes, in chunks; the number skipped."""
        done = 0
        while done < n:
            got = len(self.read(min(n - done, 1 << 16)))
            if not got:
                break
            done += got
        return done


def _blocks(size: int) -> int:
    return -(-size // 512) * 512


def _pax_records(data: bytes, where: str) -> dict[str, str]:
    """The records of a pax header (already bounded in size); Rejected when malformed."""
    out: dict[str, str] = {}
    pos = 0
    while pos < len(data) and data[pos:pos + 1] not in (b"\0", b""):
        m = re.match(rb"(\d{1,6}) ([^=\n]+)=", data[pos:pos + 4096])
        if not m or int(m.group(1)) < len(m.group(0)) + 1 or pos + int(m.group(1)) > len(data):
            raise Rejected(f"malformed pax header {where}")
        end = pos + int(m.group(1))
        out[m.group(2).decode("utf-8", "replace")] = \
            data[pos + m.end():end - 1].decode("utf-8", "replace")
        pos = end
    return out


def scan_tar(f, limits: Limits) -> bool:
    """Read every header of the tar in f as tarfile will, with every size bounded first.

    True when it is a gzip. Rejected when a header is malformed, a GNU long
    name or a pax header is larger than max_header (or all of them larger than
    max_headers), the stream is compressed otherwise than by gzip, holds a
    link, device, FIFO, sparse or unknown member, too many members, a member
    larger than max_member, more than max_total bytes, or decompresses to more
    than max_stream bytes. f is left at an unknown position.
    """
    head = f.read(6)
    f.seek(0)
    for magic, name in _OTHER_COMPRESSION.items():
        if head.startswith(magic):
            raise Rejected(f"the archive is compressed with {name}: only .tar, .tar.gz and "
                           ".tgz are accepted")
    gz = head.startswith(_GZIP_MAGIC)
    s = _Stream(f, gz, limits.max_stream)
    members = declared = headers = chain = 0
    pax: dict[str, str] = {}
    while True:
        at = s.pos
        block = s.read(512)
        if len(block) < 512 or block.count(0) == 512:
            if chain:
                raise Rejected(f"the archive ends after an extended header (byte {at})")
            if at == 0:
                raise Rejected("not a tar archive (empty or truncated)")
            return gz
        try:
            info = tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
        except tarfile.HeaderError as e:
            what = "not a tar archive" if at == 0 else f"malformed tar header at byte {at}"
            raise Rejected(f"{what} ({e})") from None
        where = f"at byte {at}"
        if info.size < 0:
            raise Rejected(f"malformed tar header {where} (negative size)")
        if info.type in _TAR_LONG or info.type in _TAR_PAX:
            kind = "GNU long name" if info.type in _TAR_LONG else "pax header"
            if info.size > limits.max_header:
                raise Rejected(f"archive {kind} {where} declares {info.size} bytes "
                               f"(more than {limits.max_header})")
            headers += info.size
            if headers > limits.max_headers:
                raise Rejected(f"the archive's long names and pax headers add up to more than "
                               f"{limits.max_headers} bytes")
            chain += 1
            if chain > _MAX_CHAIN:
                raise Rejected(f"more than {_MAX_CHAIN} extended headers in a row {where}")
            data = s.read(_blocks(info.size))
            if len(data) < _blocks(info.size):
                raise Rejected(f"the archive ends inside a header {where}")
            if info.type in _TAR_PAX:
                records = _pax_records(data[:info.size], where)
                if any(k.startswith("GNU.sparse") for k in records):
                    raise Rejected(f"archive member {where} is a sparse file (not accepted)")
                if info.type == b"g":
                    if "size" in records:
                        raise Rejected(f"a global pax header sets the size of every member ({where})")
                else:
                    pax.update(records)
            continue
        chain = 0
        size = info.size
        if "size" in pax:
            try:
                size = int(pax["size"])   # as tarfile reads it
            except ValueError:
                size = 0
            if size < 0:
                raise Rejected(f"malformed pax size {where}")
        pax = {}
        members += 1
        if members > limits.max_members:
            raise Rejected(f"the archive has more than {limits.max_members} members")
        if info.type in (tarfile.LNKTYPE, tarfile.SYMTYPE):
            raise Rejected(f"archive member '{info.name}' is a link")
        if info.isdir():
            if info.size:
                raise Rejected(f"malformed tar header {where} (a folder with a size)")
            continue
        if info.type not in _TAR_REGULAR:
            raise Rejected(f"archive member '{info.name}' is a device, FIFO or other special file "
                           f"(tar type {info.type!r})")
        if size > limits.max_member:
            raise Rejected(f"archive member '{info.name}' is larger than {limits.max_member} bytes")
        declared += size
        if declared > limits.max_total:
            raise Rejected(f"the archive unpacks to more than {limits.max_total} bytes")
        if s.skip(_blocks(size)) < size:
            raise Rejected(f"the archive ends inside member '{info.name}'")


def scan_zip(f, size: int, limits: Limits) -> None:
    """Read a zip's end record and central directory, bounded, before zipfile does.

    Rejected when the entry count is over max_members, the central directory
    larger than those entries can be, or a name, extra field or comment of an
    entry longer than max_name or max_extra.
    """
    tail_len = min(size, 22 + 65535)
    f.seek(size - tail_len)
    tail = f.read(tail_len)
    # as zipfile finds it: an end record without a comment in the last 22 bytes, else the last one
    last = tail[-22:]
    if len(last) == 22 and last[:4] == b"PK\x05\x06" and last[-2:] == b"\0\0":
        pos = len(tail) - 22
    else:
        pos = tail.rfind(b"PK\x05\x06")
    if pos < 0 or pos + 22 > len(tail):
        raise Rejected("not a zip archive (no end of central directory)")
    (_, disk, cd_disk, n_here, n_total, cd_size, cd_offset,
     comment_len) = struct.unpack("<4s4H2LH", tail[pos:pos + 22])
    eocd = size - tail_len + pos
    cd_end = eocd
    loc = b""
    if eocd >= 20:
        f.seek(eocd - 20)
        loc = f.read(20)
    if loc[:4] == b"PK\x06\x07":   # zip64: its end record lies just before the locator, as zipfile reads it
        if eocd < 20 + 56 or struct.unpack("<4sLQL", loc)[2] != eocd - 20 - 56:
            raise Rejected("malformed zip64 end record")
        f.seek(eocd - 20 - 56)
        rec = f.read(56)
        if rec[:4] != b"PK\x06\x06":
            raise Rejected("malformed zip64 end record")
        n_here, n_total, cd_size, cd_offset = struct.unpack("<QQQQ", rec[24:56])
        cd_end = eocd - 20 - 56
    elif n_total == 0xFFFF or cd_size == 0xFFFFFFFF or cd_offset == 0xFFFFFFFF:
        raise Rejected("malformed zip: zip64 sizes without a zip64 end record")
    if disk or cd_disk or n_here != n_total:
        raise Rejected("a zip split over several disks is not accepted")
    if n_total > limits.max_members:
        raise Rejected(f"the archive has more than {limits.max_members} members "
                       f"(its directory says {n_total})")
    most = limits.max_members * (46 + limits.max_name + 2 * limits.max_extra)
    if cd_size > most or cd_size > cd_end:
        raise Rejected(f"the zip's central directory declares {cd_size} bytes (too large)")
    f.seek(cd_end - cd_size)
    cd = f.read(cd_size)
    at = count = 0
    while at < len(cd):
        if cd[at:at + 4] != b"PK\x01\x02" or at + 46 > len(cd):
            raise Rejected("malformed zip central directory")
        name_len, extra_len, comment_len = struct.unpack("<3H", cd[at + 28:at + 34])
        name = cd[at + 46:at + 46 + min(name_len, 200)].decode("utf-8", "replace")
        if name_len > limits.max_name:
            raise Rejected(f"archive member '{name}...' has a name of {name_len} bytes "
                           f"(more than {limits.max_name})")
        if extra_len > limits.max_extra or comment_len > limits.max_extra:
            raise Rejected(f"archive member '{name}' has an extra field or comment over "
                           f"{limits.max_extra} bytes")
        count += 1
        if count > limits.max_members:
            raise Rejected(f"the archive has more than {limits.max_members} members")
        at += 46 + name_len + extra_len + comment_len
    f.seek(0)


def _unpack_zip(f, size: int, dest: Path, limits: Limits) -> None:
    scan_zip(f, size, limits)
    total = [0]
    with zipfile.ZipFile(f) as z:
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
            if info.flag_bits & 0x1:  # general purpose bit 0: the member is encrypted
                raise Rejected(f"archive member '{info.filename}' is encrypted (a zip with a "
                               "password): hand in the archive without a password")
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
            with z.open(info) as mf:
                _write(dest, rel, _chunks(mf), limits.max_member, total, limits, info.filename)


def _unpack_tar(f, dest: Path, limits: Limits) -> None:
    gz = scan_tar(f, limits)
    f.seek(0)
    total = [0]
    declared = 0
    count = 0
    with tarfile.open(fileobj=f, mode="r:gz" if gz else "r:") as t:
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
            mf = t.extractfile(m)
            if mf is None:
                raise Rejected(f"archive member '{m.name}' cannot be read")
            _write(dest, rel, _chunks(mf), limits.max_member, total, limits, m.name)


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
            odd = next(((c, k) for c in candidates if (k := _not_a_file(folder, c))), None)
            if link:
                sub.problems[ex.id] = f"{link} is a symbolic link (refused)"
            elif odd:
                sub.problems[ex.id] = f"{odd[0]} is {odd[1]}, not a file (refused)"
            else:
                sub.missing.append(ex.id)
                named = [f for f in files if f.rsplit("/", 1)[-1] == ex.file
                         and not f.startswith("__MACOSX/")]
                if named:
                    sub.misplaced[ex.id] = named
            continue
        used.add(hit)
        path = folder / hit
        size = path.lstat().st_size
        if size > limits.max_source:
            sub.problems[ex.id] = f"{hit} is larger than {limits.max_source} bytes (refused)"
            continue
        sub.files[ex.id] = path
        sub.found_at[ex.id] = hit
    where = {f: i for i, fs in sub.misplaced.items() for f in fs}
    listed = [f if f not in where else
              f"{f} (the name of {where[f]}'s file, in a place the grader does not look)"
              for f in files if f not in used] + ignored
    # bounded, as --merge reads a results.json back (classreport.validate: 10000 texts of 4096
    # characters at most in cudalab.files): a folder of 12000 files lost its student at merge
    sub.ignored = [x if len(x) <= MAX_LISTED_CHARS else x[:MAX_LISTED_CHARS - 3] + "..."
                   for x in listed[:MAX_LISTED]]
    if len(listed) > MAX_LISTED:
        sub.ignored.append(f"... and {len(listed) - MAX_LISTED} more (not listed)")
    return sub


MAX_LISTED = 1000         # ignored paths listed in a student's report and results.json
MAX_LISTED_CHARS = 1024   # characters of one listed path


def _not_a_file(folder: Path, rel: str) -> str | None:
    """What stands at `rel` below folder when it is neither a regular file, a link nor absent
    ("a folder", "a FIFO, socket or device"); None otherwise, and when a folder on the way is
    a link (never followed)."""
    p = folder
    parts = rel.split("/")
    for i, part in enumerate(parts):
        p = p / part
        try:
            st = p.lstat()
        except OSError:
            return None
        if stat.S_ISLNK(st.st_mode):
            return None
        if i < len(parts) - 1:
            if not stat.S_ISDIR(st.st_mode):
                return None
        elif stat.S_ISDIR(st.st_mode):
            return "a folder"
        elif not stat.S_ISREG(st.st_mode):
            return "a FIFO, socket or device"
    return None


def misplaced_note(ex: Exercise, paths: list[str]) -> str:
    """Why the files named like ex's file (map_files' misplaced) were not taken, for the report."""
    where = f"{ex.chapter_dir}/{ex.file}"
    if len(paths) > 1:
        why = (f"the submission holds {len(paths)} copies, and the grader takes the layout of "
               "starter/ from one place only (the top, starter/, or one wrapping folder)")
    else:
        why = (f"the grader looks for {where} (or {ex.file} alone) at the top of the "
               "submission, under starter/, or inside one wrapping folder, and nowhere else")
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    return (f"a file named {ex.file} is in the submission at {shown}, not where the grader "
            f"looks for it: {why}; hand in one copy, laid out like starter/")

def read_source(path: Path) -> bytes:
    """The bytes of a submitted file, refusing to follow a link."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        return f.read()
