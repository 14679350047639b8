"""Trivial Compiler Equivalence (TCE) of mutants (tools/mutate --tce).

Papadakis, Jia, Harman and Le Traon, "Trivial Compiler Equivalence: A Large
Scale Empirical Study of a Simple, Fast and Effective Equivalent Mutant
Detection Technique", ICSE 2015: a mutant whose compiled code is the same as
the original program's is equivalent, whatever its tests: no input can tell
two identical programs apart. Here a mutant is compiled like its solution
(`nvcc -c`, the command of compile_commands.json) and both objects are
compared:

- the device code of every architecture the object holds: the cubin (the ELF
  image of SASS) that ptxas writes for it, kept with `nvcc --keep`, section
  by section: the code (.text.*, whose bytes are the SASS), relocations, the
  constant banks, the initialised globals, the shared-memory sizes and the
  kernels' attributes (.nv.info*); when cuobjdump is found, its `-sass`
  listing of the object is compared too;
- the host code: the host object's sections the same way (code, read-only
  data, relocations, symbols), less the embedded fatbin (the device code,
  compared above).

Left out as not code: debug and line-number sections, notes (the tool's
command line) and the `.comment` section. The PTX the object also embeds is
compared only for the record (`ptx_same`): a GPU that runs one of the
object's SASS never reads it (one of another architecture would JIT-compile
it, and could tell a mutant whose PTX differs apart).

What would make identical code look different is taken out: the mutant is
compiled from a copy with the same file name under a temporary folder, with a
`#line 1 "<the solution's path>"` first line, so that `__FILE__` (the
CUDALAB_CHECK macros) is the solution's path and `__LINE__` unchanged;
`-lineinfo` is dropped (it adds line tables and kernel attributes, not SASS);
`--keep` names the intermediate files after the source, not after a process
id; and the module id nvcc derives from the file's folder (it names the
anonymous namespace: `_GLOBAL__N__<hash>_13_sum_atomic_cu_<hash>`, with
nvcc's process id after it for some files) is replaced by a placeholder of the
same length wherever it occurs. A difference that survives this makes a
mutant look different, never the same: TCE misses an equivalent mutant then,
it does not invent one.
Standard library only.
"""
from __future__ import annotations

import hashlib
import re
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import objcheck

REASON = "same machine code: TCE"
# flags that add line tables and nothing else to the code
LINE_INFO_FLAGS = {"-lineinfo", "--generate-line-info"}
# sections that are not code: debug information, line tables, notes, the compiler's ident
_NOT_CODE = re.compile(r"^(\.nv\.merc)?\.(rela?\.)?(debug|nv_debug|note|comment)"
                       r"|^\.(sym|str|shstr)tab$")

_SHT_SYMTAB, _SHT_RELA, _SHT_NOBITS, _SHT_REL, _SHT_GROUP = 2, 4, 8, 9, 17
_STT_FILE = 4


class ElfError(ValueError):
    pass


@dataclass
class Section:
    index: int
    name: str
    type: int
    flags: int
    size: int
    link: int
    info: int
    align: int
    entsize: int
    data: bytes


def sections(data: bytes) -> list[Section]:
    """The sections of a little-endian ELF64 file (an x86-64 object or a cubin)."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ElfError("not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    raw = []
    for i in range(shnum):
        raw.append(struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize))
    names = raw[shstrndx] if shstrndx < len(raw) else None
    out = []
    for i, (name, typ, flags, _addr, off, size, link, info, align, entsize) in enumerate(raw):
        body = b"" if typ == _SHT_NOBITS else data[off:off + size]
        out.append(Section(i, "", typ, flags, size, link, info, align, entsize, body))
    if names is not None:
        table = out[shstrndx].data
        for s, r in zip(out, raw):
            s.name = _cstr(table, r[0])
    return out


def _cstr(table: bytes, off: int) -> str:
    end = table.find(b"\0", off)
    return table[off:end if end >= 0 else len(table)].decode("utf-8", "replace")


def _symbols(secs: list[Section], symtab: Section) -> list[tuple]:
    """(name, info, other, section name, value, size) of every symbol; a section symbol is
    named by its section, a file symbol (the name of nvcc's intermediate file) by nothing."""
    strtab = secs[symtab.link].data if symtab.link < len(secs) else b""
    out = []
    for off in range(0, len(symtab.data) - 23, 24):
        name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", symtab.data, off)
        sec = secs[shndx].name if 0 < shndx < len(secs) else str(shndx)
        text = _cstr(strtab, name)
        if info & 0xF == 3 and not text:        # STT_SECTION
            text = f"[section {sec}]"
        if info & 0xF == _STT_FILE:
            text = "[file]"
        out.append((text, info, other, sec, value, size))
    return out


def fingerprint_elf(data: bytes, replace: list[tuple[bytes, bytes]], skip: tuple[str, ...] = ()
                    ) -> list[str]:
    """One line per section that is code or data the program runs with, in the file's order:
    its name, type, flags and size, and its content (a digest; symbols and relocations by
    name). `replace` are same-length byte substitutions made first (the module id); sections
    whose name starts with one of `skip` are left out."""
    for old, new in replace:
        data = data.replace(old, new)
    secs = sections(data)
    symtab = next((s for s in secs if s.type == _SHT_SYMTAB), None)
    syms = _symbols(secs, symtab) if symtab else []
    out = []
    for s in secs[1:]:
        if _NOT_CODE.match(s.name) or s.name.startswith(skip) or (
                s.type in (_SHT_RELA, _SHT_REL) and 0 < s.info < len(secs)
                and secs[s.info].name.startswith(skip)):
            continue
        head = f"{s.name} type={s.type} flags={s.flags:#x} size={s.size} align={s.align}"
        if s.type in (_SHT_RELA, _SHT_REL):
            step = 24 if s.type == _SHT_RELA else 16
            rows = []
            for off in range(0, len(s.data) - step + 1, step):
                if s.type == _SHT_RELA:
                    where, info, addend = struct.unpack_from("<QQq", s.data, off)
                else:
                    (where, info), addend = struct.unpack_from("<QQ", s.data, off), 0
                sym = info >> 32
                name = syms[sym][0] if sym < len(syms) else str(sym)
                rows.append(f"{where:#x} {info & 0xFFFFFFFF} {name} {addend}")
            out.append(head + " " + _digest("\n".join(rows)))
        elif s.type == _SHT_GROUP:
            members = [secs[i].name if i < len(secs) else str(i)
                       for i in struct.unpack_from(f"<{len(s.data) // 4}I", s.data)[1:]]
            out.append(head + " " + ",".join(members))
        elif s.type == _SHT_NOBITS:
            out.append(head)
        else:
            out.append(head + " " + _digest(s.data))
    if symtab:
        out.append("symbols " + _digest("\n".join(" ".join(map(str, r)) for r in syms)))
    return out


def _digest(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()[:24]


def _ptx(text: str, replace: list[tuple[bytes, bytes]]) -> str:
    for old, new in replace:
        text = text.replace(old.decode(), new.decode())
    keep = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(
        ("//", ".file", ".loc"))]
    return "\n".join(keep)


def _sass(text: str, replace: list[tuple[bytes, bytes]]) -> str:
    for old, new in replace:
        text = text.replace(old.decode(), new.decode())
    return "\n".join(ln.rstrip() for ln in text.splitlines() if ln.strip())


@dataclass
class Code:
    """What a compile of one file produced, normalised: the host object's sections, the
    cubin of each architecture, the PTX (for the record) and cuobjdump's SASS (when found)."""
    host: list[str]
    device: dict[str, list[str]]
    ptx: dict[str, str] = field(default_factory=dict)
    sass: str | None = None
    module_id: str = ""
    error: str = ""      # the object compiled but could not be read: never the same as another

    def same_as(self, other: "Code") -> tuple[bool, str]:
        """Whether the machine code is the same, and what differs first when it is not."""
        if self.error or other.error:
            return False, self.error or other.error
        if sorted(self.device) != sorted(other.device):
            return False, f"device images {sorted(self.device)} != {sorted(other.device)}"
        for arch in sorted(self.device):
            diff = _first_diff(self.device[arch], other.device[arch])
            if diff:
                return False, f"the device code of {arch}: {diff}"
        diff = _first_diff(self.host, other.host)
        if diff:
            return False, f"the host code: {diff}"
        if self.sass is not None and other.sass is not None and self.sass != other.sass:
            return False, "cuobjdump -sass differs"
        return True, ""

    def ptx_same_as(self, other: "Code") -> bool:
        return self.ptx == other.ptx


def _first_diff(a: list[str], b: list[str]) -> str:
    """The sections that differ (a code section first), shortly; empty when none does."""
    names_a = [x.split(" ", 1)[0] for x in a]
    names_b = [y.split(" ", 1)[0] for y in b]
    if names_a != names_b:
        only = [n for n in names_a if n not in names_b] + [n for n in names_b if n not in names_a]
        return f"sections {', '.join(_short(n) for n in only[:3]) or 'in another order'}"
    differ = [n for n, x, y in zip(names_a, a, b) if x != y]
    if not differ:
        return ""
    differ.sort(key=lambda n: not n.startswith(".text"))
    more = f" and {len(differ) - 1} more" if len(differ) > 1 else ""
    return f"{_short(differ[0])}{more}"


def _short(name: str) -> str:
    return name if len(name) <= 60 else name[:57] + "..."


def tce_command(command: list[str]) -> list[str]:
    """The compile command for the comparison: without line-number flags (they add tables, not
    code; -G, which changes the code, is kept)."""
    return [a for a in command if a not in LINE_INFO_FLAGS]


def line_directive(solution: Path) -> str:
    """The first line of every compiled copy: __FILE__ is the solution's path, __LINE__ the
    line's number in the file (the directive numbers the line after it 1)."""
    quoted = str(solution).replace("\\", "\\\\").replace('"', '\\"')
    return f'#line 1 "{quoted}"\n'


def compile_code(text: str, name: str, solution: Path, command: list[str], include: Path,
                 timeout: float = 300) -> tuple[Code | None, str]:
    """Compile `text` as the file `name` (a copy under a temporary folder, `#line` naming the
    solution's path) with `command` (@SRC@, @OUT@ placeholders) and read its code; (None,
    nvcc's last lines) when it does not compile."""
    with tempfile.TemporaryDirectory(prefix="cudalab-tce-") as tmp:
        t = Path(tmp)
        src, obj, keep = t / name, t / "m.o", t / "keep"
        keep.mkdir()
        src.write_text(line_directive(solution) + text)
        args = [str(src) if a == "@SRC@" else str(obj) if a == "@OUT@" else a
                for a in tce_command(command)]
        args[1:1] = ["-I", str(include)]
        args += ["--keep", "--keep-dir", str(keep)]
        try:
            p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=tmp)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, str(e)
        if p.returncode != 0:
            return None, "\n".join((p.stdout + p.stderr).splitlines()[-8:])
        return read_code(obj, keep, Path(name).stem)


def _label(name: str, stem: str) -> str:
    """sm_90 for <stem>.sm_90.cubin, compute_120 for <stem>.compute_120.cubin (nvcc names the
    SASS of a --generate-code=arch=compute_120,code=[sm_120] so), the same for .ptx."""
    return name[len(stem):].strip(".").rsplit(".", 1)[0]


def cubin_arch(data: bytes) -> str:
    """The SASS architecture a cubin holds (sm_120), from its ELF header's flags (the ABI of
    version 8 keeps it in bits 8 to 15, the older ones in bits 0 to 7); "" when unknown."""
    if len(data) < 0x34 or data[:4] != b"\x7fELF":
        return ""
    flags, = struct.unpack_from("<I", data, 0x30)
    sm = (flags >> 8) & 0xFF if data[8] >= 8 else flags & 0xFF
    return f"sm_{sm}" if sm else ""


def _cubins(keep: Path, stem: str) -> dict[str, bytes]:
    """{architecture: cubin} of the cubins nvcc --keep wrote, named by the architecture of
    their SASS (by the file's name when the header does not say or two say the same)."""
    files = {_label(f.name, stem): f.read_bytes() for f in sorted(keep.glob("*.cubin"))}
    archs = {k: cubin_arch(v) for k, v in files.items()}
    if all(archs.values()) and len(set(archs.values())) == len(archs):
        return {archs[k]: v for k, v in files.items()}
    return files


def read_code(obj: Path, keep: Path, stem: str) -> tuple[Code, str]:
    """The code of a compiled object `obj`, with its intermediate files in `keep` (nvcc --keep
    of the file <stem>.cu)."""
    replace = []
    for f in sorted(keep.glob("*.module_id")):
        mid = f.read_bytes().strip()
        if mid:
            replace.append((mid, b"@" * len(mid)))
    try:
        host = fingerprint_elf(obj.read_bytes(), replace, skip=(".nv_fatbin",))
        device = {arch: fingerprint_elf(data, replace)
                  for arch, data in _cubins(keep, stem).items()}
    except (OSError, ElfError, struct.error) as e:
        return Code([], {}, error=f"could not read the compiled code: {e}"), ""
    ptx = {_label(f.name, stem): _ptx(f.read_text(errors="replace"), replace)
           for f in sorted(keep.glob("*.ptx"))}
    sass = None
    if objcheck.cuobjdump():
        out, _ = objcheck.sass_of(obj)
        sass = _sass(out, replace) if out is not None else None
    module_id = b"".join(r[0] for r in replace).decode("utf-8", "replace")
    return Code(host, device, ptx, sass, module_id), ""

