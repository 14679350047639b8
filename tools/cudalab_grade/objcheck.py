"""What the student's compiled object really contains: device instructions and host imports.

- Device code: `cuobjdump -sass` lists the SASS of every function of the
  object's cubins ("Function : <mangled name>", then one line per
  instruction, "/*0050*/  @!P0 SHFL.DOWN PT, R3, R2, 0x10, 0x1f ;").
  `forbidden_sass` finds the first instruction of a forbidden kind (the
  manifest's `forbid_sass`: "SHFL" where shuffles are forbidden, "LDS",
  "STS", "ATOMS" ... where shared memory is) in any function, however the
  source reached it (cooperative groups, a builtin, inline PTX). cuobjdump
  ships with the CUDA toolkit on GPU machines; without it this part is
  skipped with a note.
- Host imports: `nm -u` lists the symbols the object takes from elsewhere.
  An exercise's object needs the CUDA runtime, nvcc's registration code and
  C and C++ basics (strings, exceptions, printing); `bad_import` reports the
  first import outside that allow-list (a process, file, network or
  environment API, a thread, a library the exercise does not link).
- Defined symbols (`nm -C`): template instantiations name the library they
  come from, so `forbidden_host_symbol` finds a host algorithm (std::sort
  leaves std::__introsort_loop<...> in the object) however it was called.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

# Kinds of SASS instruction a manifest can forbid, and what they are (for the student).
SASS_KINDS = {
    "SHFL": "a warp shuffle",
    "REDUX": "a warp-wide reduction",
    "MATCH": "a warp match (__match_any_sync)",
    "VOTE": "a warp vote (__ballot_sync)",
    "BAR.RED": "a block-wide reduction barrier (__syncthreads_count, _and, _or)",
    "LDS": "a shared-memory load",
    "STS": "a shared-memory store",
    "ATOMS": "a shared-memory atomic",
    "LDSM": "a shared-memory matrix load",
    "STSM": "a shared-memory matrix store",
    "LDGSTS": "an asynchronous copy into shared memory",
    "SYNCS": "a shared-memory barrier (mbarrier)",
    "UBLKCP": "a bulk copy into shared memory",
    "UTMALDG": "a tensor-memory-accelerator load into shared memory",
    # Kinds a manifest requires (require_sass) rather than forbids:
    "BAR.SYNC": "a block-wide barrier (__syncthreads)",
    "LDG.E.128": "a 16-byte load from global memory (int4, float4)",
    # Not an opcode: a read of a special register (S2R, S2UR, CS2R), whatever the source wrote.
    "SR_CTAID": "a read of the block index (blockIdx, %ctaid or %clusterid, a cooperative "
                "group's group_index, block_rank or grid-wide thread_rank)",
}
SHARED_MEMORY_SASS = ("LDS", "STS", "ATOMS", "LDSM", "STSM", "LDGSTS", "SYNCS", "UBLKCP", "UTMALDG")

_SPECIAL_READS = ("S2R", "S2UR", "CS2R")
_SPECIAL = re.compile(r"\bSR_[A-Za-z0-9_]+(?:\.[A-Z])?")
_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_ARCH = re.compile(r"^\s*code for (sm_\w+)")
# "/*0050*/  @!P0 SHFL.DOWN PT, R3, ..." -> address, opcode, modifiers (a guard predicate first)
_INSN = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/\s+(?:\{\s*)?(?:@!?U?P(?:T|\d+)\s+)?"
                   r"([A-Z][A-Z0-9_]*)((?:\.[A-Za-z0-9_]+)*)")


@dataclass
class SassFunction:
    name: str                       # mangled, as cuobjdump prints it
    arch: str = ""
    instructions: list[tuple[str, str]] = field(default_factory=list)   # (address, OPCODE.MODS)
    # (address, register) of every special-register read: "S2UR UR4, SR_CTAID.X" -> SR_CTAID.X
    registers: list[tuple[str, str]] = field(default_factory=list)
    # addresses of the compiler's own warp votes, no vote of the source (see _COMPILERS_VOTE)
    implicit: set[str] = field(default_factory=set)


# ptxas's forward-progress check of a loop that may spin (on sm_75, a loop of strong or volatile
# global loads: __ldcg, __ldcv, a volatile read): "VOTE.ANY R4, PT, PT ; YIELD ; VOTEU.ANY UR4,
# UPT, PT ; ..." The vote of the always-true predicate is the warp's active mask, read only to
# yield, and comes directly before the YIELD. A ballot of the source votes a real predicate
# (VOTE.ANY R4, PT, P0), and __activemask() (VOTE.ANY Rn, PT, PT too) is refused by name where
# forbid_sass has VOTE: neither is skipped.
_COMPILERS_VOTE = re.compile(r"\s*R\d+\s*,\s*PT\s*,\s*PT\s*;")


def parse_sass(text: str) -> list[SassFunction]:
    """The functions of `cuobjdump -sass` output, with their instructions."""
    functions: list[SassFunction] = []
    arch = ""
    cur: SassFunction | None = None
    vote = None   # (address, opcode) of the last instruction when it is `VOTE.ANY Rn, PT, PT`
    for line in text.splitlines():
        m = _ARCH.match(line)
        if m:
            arch, cur = m.group(1), None
            continue
        m = _FUNCTION.match(line)
        if m:
            cur, vote = SassFunction(m.group(1), arch), None
            functions.append(cur)
            continue
        if cur is not None:
            m = _INSN.match(line)
            if m:
                op = m.group(2) + m.group(3)
                if op == "YIELD" and cur.instructions and cur.instructions[-1] == vote:
                    cur.implicit.add(vote[0])
                cur.instructions.append((m.group(1), op))
                vote = (m.group(1), op) if op == "VOTE.ANY" and _COMPILERS_VOTE.match(line, m.end()) \
                    else None
                if m.group(2) in _SPECIAL_READS:
                    r = _SPECIAL.search(line, m.end())
                    if r:
                        cur.registers.append((m.group(1), r.group(0)))
    return functions


def sass_matches(entry: str, opcode: str) -> bool:
    """"SHFL" matches SHFL.DOWN, SHFL.IDX; "LDS" matches LDS.U8 and LDS.128 but not LDSM;
    "SR_CTAID" (a special register) matches SR_CTAID.X, .Y and .Z but not SR_CTAID_HI."""
    if entry.startswith("SR_"):
        return opcode == entry or opcode.startswith(entry + ".")
    base = opcode.split(".", 1)[0]
    want = entry.split(".", 1)[0]
    return base == want and (opcode == entry or opcode.startswith(entry + ".") or entry == want)


def source_instructions(fn: SassFunction) -> list[tuple[str, str]]:
    """fn's (address, instruction) pairs less those the compiler adds on its own (a generic
    atomic's shared-memory emulation, the vote before a YIELD): what the source asked for."""
    added = generic_atomic_fallback(fn) | fn.implicit
    return [(addr, op) for addr, op in fn.instructions if addr not in added]


def forbidden_sass(functions: list[SassFunction], forbid: tuple[str, ...] | list[str]
                   ) -> tuple[str, SassFunction, str, str] | None:
    """(entry, function, address, instruction) of the first forbidden instruction, or None.
    An entry "SR_..." is a special register: its instruction is the register read."""
    for fn in functions:
        for addr, opcode in source_instructions(fn):
            for entry in forbid:
                if not entry.startswith("SR_") and sass_matches(entry, opcode):
                    return entry, fn, addr, opcode
        for addr, register in fn.registers:
            for entry in forbid:
                if entry.startswith("SR_") and sass_matches(entry, register):
                    return entry, fn, addr, register
    return None


def missing_sass(functions: list[SassFunction], require: tuple[str, ...] | list[str]) -> str | None:
    """The first required kind (the manifest's require_sass) that no instruction of any
    function has, or None when each is there. The instructions the compiler adds on its own
    (a generic atomic's shared-memory emulation, the vote before a YIELD) do not count: only
    what the source asked for shows that the exercise's technique is there."""
    ops = [op for fn in functions for _, op in source_instructions(fn)]
    return next((entry for entry in require if not any(sass_matches(entry, op) for op in ops)), None)


def generic_atomic_fallback(fn: SassFunction) -> set[str]:
    """Addresses of the shared-memory instructions that the compiler adds itself to an atomic on
    a generic address (cuda::atomic_ref on a pointer it cannot place): after `QSPC.E.S` (is the
    address shared?) up to the path's EXIT or BSYNC, an emulation by LDS and ATOMS.CAST.SPIN. A
    global pointer never takes that path, and the source check refuses any `__shared__` the
    student declares, so these are no finding of forbid_sass."""
    skip, inside = set(), False
    for addr, op in fn.instructions:
        base = op.split(".", 1)[0]
        if op.startswith("QSPC.E.S"):
            inside = True
        elif inside and (base in ("EXIT", "BSYNC") or op.startswith("QSPC")):
            inside = False
        elif inside and base in ("LDS", "STS", "ATOMS"):
            skip.add(addr)
    return skip


def cuobjdump() -> str | None:
    found = shutil.which("cuobjdump")
    if found:
        return found
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    cand = Path(nvcc).resolve().parent / "cuobjdump"
    return str(cand) if cand.exists() else None


def sass_of(obj: Path) -> tuple[str | None, str]:
    """(cuobjdump -sass output, note); None and why when it cannot be had. One run per object
    as it is on disk: the technique check after the tests reads the SASS that the object check
    before them had (the same file, not rewritten since); a failed run is not kept."""
    tool = cuobjdump()
    if tool is None:
        return None, "cuobjdump not found: the device code was not checked"
    try:
        st = obj.stat()
        key = (tool, str(obj), st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    with _sass_lock:
        if key is not None and key in _sass_seen:
            return _sass_seen[key]
    try:
        p = subprocess.run([tool, "-sass", str(obj)], capture_output=True, text=True, timeout=300,
                           errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"cuobjdump failed: {e}"
    if p.returncode != 0:
        if "does not contain device code" in (p.stderr + p.stdout):
            return "", ""
        return None, f"cuobjdump -sass failed: {(p.stderr or p.stdout).strip()[:300]}"
    if key is not None:
        with _sass_lock:
            if len(_sass_seen) >= 16:  # a class: the objects of the last few exercises graded
                _sass_seen.pop(next(iter(_sass_seen)))
            _sass_seen[key] = (p.stdout, "")
    return p.stdout, ""


_sass_seen: dict[tuple, tuple[str | None, str]] = {}   # sass_of's runs, oldest first
_sass_lock = threading.Lock()


def has_device_code(text: str) -> bool:
    """Whether cuobjdump's output shows any compiled device function."""
    return bool(parse_sass(text))


def demangle(names: list[str]) -> list[str]:
    filt = shutil.which("c++filt")
    if not names or not filt:
        return list(names)
    try:
        p = subprocess.run([filt], input="\n".join(names), capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return list(names)
    out = p.stdout.splitlines()
    return out if len(out) == len(names) else list(names)


def nm_lines(obj: Path, *flags: str) -> list[str] | None:
    nm = shutil.which("nm")
    if nm is None:
        return None
    try:
        p = subprocess.run([nm, *flags, str(obj)], capture_output=True, text=True, timeout=120,
                           errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    return p.stdout.splitlines()


def imports(obj: Path) -> list[str] | None:
    """The demangled undefined symbols of obj (nm -u), or None without a usable nm."""
    lines = nm_lines(obj, "-u")
    if lines is None:
        return None
    names = []
    for line in lines:
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("U", "w", "v"):
            names.append(parts[1])
    return demangle(names)


def defined_functions(obj: Path) -> list[str] | None:
    """The demangled names of the functions obj defines (nm -C --defined-only, types T, W, i).
    Data symbols are left out: a header's inline variable (CUB's headers bring
    thrust::...::seq into every object that includes them) is not a use."""
    lines = nm_lines(obj, "-C", "--defined-only")
    if lines is None:
        return None
    out = []
    for line in lines:
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[1] in ("T", "t", "W", "w", "i"):
            out.append(parts[2])
    return out


# ----------------------------------------------------------------------------
# Host imports. Denied first (named by what they do), then the allow-list; anything
# else is reported as unexpected.

_DENY = [
    ("starts or signals a process", r"system|popen|pclose|fork|vfork|clone3?|exec[lv]p?e?|execvpe|fexecve|"
     r"posix_spawnp?|daemon|setsid|setpgid|setpgrp|kill|killpg|tkill|tgkill|ptrace|prctl|_exit|_Exit|"
     r"quick_exit|at_quick_exit|signal|sigaction|sigprocmask|syscall|setrlimit|prlimit(64)?"),
    ("loads code at run time", r"dlopen|dlmopen|dlsym|dlvsym|dlclose|dladdr"),
    ("reads or changes the environment",
     r"getenv|secure_getenv|setenv|putenv|unsetenv|clearenv|environ|__environ"),
    ("opens, reads or changes files",
     r"fopen(64)?|freopen(64)?|fdopen|open(at)?(64)?|__open(at)?(64)?_2|creat(64)?|"
     r"mkstemps?(64)?|mkostemps?(64)?|tmpfile(64)?|tmpnam|tempnam|remove|rename(at2?)?|unlink(at)?|"
     r"mkdir(at)?|rmdir|chdir|fchdir|chroot|f?chmod(at)?|[lf]?chown(at)?|link(at)?|symlink(at)?|"
     r"readlink(at)?|truncate(64)?|ftruncate(64)?|opendir|fdopendir|readdir(64)?(_r)?|scandir(64)?|"
     r"nftw(64)?|ftw(64)?|f?stat(at)?(64)?|lstat(64)?|__(f|l)?xstat(at)?(64)?|statx|access|faccessat|"
     r"euidaccess|realpath|mmap(64)?|munmap|mprotect|memfd_create|shm_open|dup[23]?|pipe2?|read|write|"
     r"pread(64)?|pwrite(64)?|readv|writev|ioctl|fcntl(64)?|sendfile(64)?|splice|inotify_\w+|"
     r"std::basic_filebuf<.*|std::basic_[io]?fstream<.*|std::__basic_file<.*|std::filesystem::.*"),
    ("uses the network", r"socket|socketpair|connect|bind|listen|accept4?|send(to|msg)?|recv(from|msg)?|"
     r"getaddrinfo|gethostbyname2?|shutdown"),
    ("starts threads", r"pthread_create|std::thread::.*|thrd_create"),
    # std::mutex imports pthread_mutex_lock, std::call_once pthread_once and std::__once_call:
    # they start no thread, and no exercise needs them.
    ("uses thread synchronization (std::mutex, std::call_once, a condition variable, pthread_*), "
     "which no exercise needs",
     r"pthread_\w+|std::__once_call(able)?|__once_proxy|std::condition_variable.*|thrd_\w+|mtx_\w+|"
     r"cnd_\w+|call_once"),
    # cudaDeviceRegisterAsyncNotification runs a host callback, as cudaLaunchHostFunc does.
    # cudaGetExportTable hands out the driver's internal tables of functions, its API under no
    # name: the driver's copies past the runner's wrappers, as cudaGetDriverEntryPoint would.
    ("is a CUDA call an exercise must not make (host callbacks, driver entry points, IPC, external "
     "memory, device reset, the profiler, user objects)",
     r"cudaLaunchHostFunc|cudaStreamAddCallback|cudaDevice(Un)?RegisterAsyncNotification|"
     r"cudaGetDriverEntryPoint\w*|cudaGetExportTable|"
     r"cudaIpc\w+|cudaDeviceReset|"
     r"cudaProfilerSt\w+|cudaUserObject\w+|"
     # external memory and semaphores: memory or synchronization of another API (or another
     # process's, by a descriptor it left open) mapped into the exercise's context
     r"cudaImportExternal\w+|cudaExternalMemory\w+|cudaDestroyExternal\w+|"
     r"cuda(?:Signal|Wait)ExternalSemaphores\w*"),
    ("changes a setting of the device for the whole process (cudaDeviceSetLimit: the device stack "
     "size, the printf FIFO, the device heap; cudaSetDeviceFlags), which the grader's runner and "
     "the tests' later calls share",
     r"cudaSetDeviceFlags|cudaDeviceSetLimit"),
    # The runner's host-copy guard (tests/common/remote_runner.cu) counts the copies of the
    # functions it wraps; these reach the data another way. A pool on the host is refused where
    # its handle comes from: cudaMemPoolCreate, cudaMemGetDefaultMemPool, cudaMemGetMemPool (a
    # host or managed location), an imported pool, the driver API, a graph. The runtime's other
    # handles are the device's own (cudaDeviceGetDefaultMemPool; cudaDeviceGetMemPool, whose pool
    # cudaDeviceSetMemPool takes only "local to the device": CUDA 13's cuda_runtime_api.h), so
    # cudaMallocFromPoolAsync, and cudaMallocAsync(ptr, size, pool, stream) that calls it, give
    # device memory, counted by the runner as cudaMallocAsync's (docs/guides/grading.md).
    ("gives the host memory that kernels read and write directly (pinned, mapped or managed memory, "
     "a memory pool on the host), where the host could do the work",
     r"cudaMallocHost|cudaHostAlloc|cudaHostRegister|cudaHostGetDevicePointer|cudaMallocManaged|"
     r"__cudaRegisterManagedVar|cudaMemPoolCreate|cudaMemGetDefaultMemPool|cudaMemGetMemPool|"
     r"cudaMemSetMemPool|cudaMemPoolImport\w*|cudaLibraryGetManaged"),
    ("copies data past the grader's count of copies to the host (through an array, a peer or "
     "batch copy, or a per-thread default stream variant)",
     r"cudaMemcpy(?!(?:2D|3D)?(?:Async)?$|(?:From|To)Symbol(?:Async)?$)\w*|(?:__)?cuda\w+_(?:ptds|ptsz)"),
    ("makes or runs a CUDA graph, whose copies the grader's count of copies to the host does not "
     "see (no exercise needs a graph)",
     r"cudaGraph\w*|cudaStreamBeginCapture\w*|cudaStreamEndCapture"),
    ("loads device code at run time, past the check of the compiled device code",
     r"cudaLibrary\w+"),
    ("calls the grader's wrapper of a CUDA function, or the function behind it, by its link-time name",
     r"__real_\w+|__wrap_\w+"),
]
_DENY_RE = [(why, re.compile(rf"^(?:{pat})(?:\(.*)?$")) for why, pat in _DENY]

_MATH = (r"(?:sqrt|cbrt|exp|exp2|expm1|log|log2|log10|log1p|pow|floor|ceil|round|lround|llround|rint|"
         r"lrint|nearbyint|trunc|fabs|fmin|fmax|fmod|remainder|sin|cos|tan|asin|acos|atan|atan2|sinh|"
         r"cosh|tanh|hypot|ldexp|frexp|modf|nextafter|ilogb|logb|scalbn|copysign|fma|erf|erfc|tgamma|"
         r"lgamma)[fl]?")
_ALLOW = [
    r"cuda[A-Z]\w*", r"__cuda\w*", r"__nv\w*", r"__cxa_\w+", r"__gxx_personality_v0", r"_Unwind_\w+",
    r"_GLOBAL_OFFSET_TABLE_", r"__dso_handle", r"__stack_chk_fail", r"__stack_chk_guard",
    r"__assert_fail", r"__tls_get_addr", r"__errno_location",
    r"atexit|exit|abort",
    r"str(n?len|n?cmp|r?chr|str|n?cpy|n?cat|tol|toul|toll|toull|tod|tof)|mem(cpy|move|set|cmp|chr)|"
    r"__(mem(cpy|move|set)|str(n?cpy|n?cat))_chk|ato[ilf]|atoll",
    r"(v?f?|__v?f?)printf(_chk)?|(v?s?n?|__v?s?n?)printf(_chk)?|puts|putchar|fputs|fputc|putc|fwrite|"
    r"fflush|stdout|stderr",
    r"malloc|calloc|realloc|free|aligned_alloc|posix_memalign",
    # libgcc's bit counts: __builtin_popcount(ll) and std::bitset::count without -mpopcnt
    r"__popcount[sdt]i2",
    # libgcc's 128-bit integer division (unsigned __int128 arithmetic)
    r"__(u?div|u?mod)ti3",
    r"rand|srand|time|clock|clock_gettime|gettimeofday",
    # the course's device limits (cudalab/device.cuh), compiled once outside the exercise
    r"cudalab::(real_)?device_limits\(\)",
    _MATH,
    r"operator (new|delete)(\[\])?\(.*", r"std::nothrow",
    r"std::__throw_\w+\(.*", r"std::terminate\(\)", r"std::__glibcxx_assert_fail\(.*",
    # a stream's virtual bases: constructing a std::ostringstream or std::stringstream refers to
    # its VTT (and the construction vtables of its bases), which libstdc++ exports
    r"(typeinfo|typeinfo name|vtable|VTT|construction vtable) for (std::|__cxxabiv1::).*",
    r"std::(exception|bad_alloc|bad_array_new_length|logic_error|runtime_error|invalid_argument|"
    r"out_of_range|length_error|domain_error|range_error|overflow_error|underflow_error|bad_cast|"
    r"bad_typeid|bad_function_call|system_error)::.*",
    r"std::(__cxx11::)?basic_string<.*", r"std::(__cxx11::)?to_string\(.*",
    r"std::(__cxx11::)?basic_(o|i)?stringstream<.*", r"std::(__cxx11::)?basic_stringbuf<.*",
    r"std::ios_base_library_init\(\)", r"std::ios_base::.*", r"std::(cout|cerr|clog|endl\b.*)",
    r"std::basic_ostream<.*", r"std::ostream::.*", r"std::__ostream_insert<.*", r"std::basic_ios<.*",
    r"std::basic_streambuf<.*", r"std::locale::.*", r"std::ctype<.*", r"std::num_put<.*",
    r"std::chrono::.*", r"std::_Hash_bytes\(.*", r"std::__detail::_Prime_rehash_policy::.*",
    r"std::_Rb_tree_\w+\(.*", r"std::__detail::_List_node_base::.*", r"std::random_device::.*",
]
_ALLOW_RE = re.compile(r"^(?:" + "|".join(f"(?:{p})" for p in _ALLOW) + r")$")


def import_problem(name: str) -> str | None:
    """Why an import is not allowed, or None when it is."""
    for why, rx in _DENY_RE:
        if rx.match(name):
            return why
    if _ALLOW_RE.match(name):
        return None
    return "is not on the grader's list of imports an exercise needs"


def bad_import(names: list[str]) -> tuple[str, str] | None:
    """(import, why) of the first import outside the allow-list, or None."""
    for name in names:
        why = import_problem(name)
        if why:
            return name, why
    return None


# Host algorithms leave instantiations of these in the object even when the call itself
# is inlined (recursive helpers are never inlined away); `entry<` is always tried too.
HOST_INTERNALS = {
    "std::sort": ("std::__sort<", "std::__introsort_loop<", "std::__final_insertion_sort<"),
    "std::stable_sort": ("std::__stable_sort<", "std::__inplace_stable_sort<",
                         "std::__stable_sort_adaptive", "std::__merge_sort_with_buffer<"),
    "std::partial_sort": ("std::__partial_sort<", "std::__heap_select<"),
    "std::nth_element": ("std::__introselect<",),
    "std::make_heap": ("std::__make_heap<", "std::__adjust_heap<"),
    "std::push_heap": ("std::__push_heap<",),
    "std::pop_heap": ("std::__pop_heap<", "std::__adjust_heap<"),
    "std::sort_heap": ("std::__sort_heap<", "std::__adjust_heap<"),
    "std::priority_queue": ("std::priority_queue<", "std::__push_heap<", "std::__adjust_heap<"),
    "std::inplace_merge": ("std::__inplace_merge<", "std::__merge_adaptive<", "std::__merge_without_buffer<"),
    "std::merge": ("std::__merge<",),
    "std::set": ("std::_Rb_tree<",), "std::multiset": ("std::_Rb_tree<",),
    "std::map": ("std::_Rb_tree<",), "std::multimap": ("std::_Rb_tree<",),
    "std::unordered_map": ("std::_Hashtable<",), "std::unordered_set": ("std::_Hashtable<",),
    "std::unordered_multimap": ("std::_Hashtable<",), "std::unordered_multiset": ("std::_Hashtable<",),
    "std::list": ("std::__cxx11::list<",),
}

# Versioned namespaces that a library opens inline or pulls in with a using-directive
# (libcu++'s cuda::std::__4, which its macro _CUDA_VSTD names; cooperative groups' __v1;
# libstdc++'s __cxx11 and _V2; CUB's and Thrust's CUB_300000_SM_900_NS): a name reached
# through one is the name a manifest entry gives without it. One namespace's name; the
# token check (tokencheck.public_chain) drops the same ones from the names it reads.
VERSION_NAMESPACE = r"(?:__v?\d+|__cxx11|_V\d+|(?:CUB|THRUST)_\w*_NS)"
_VERSION_IN_SYMBOL = re.compile(rf"::{VERSION_NAMESPACE}(?=::)")


def public_symbol(sym: str) -> str:
    """A demangled name without its versioned namespaces."""
    return _VERSION_IN_SYMBOL.sub("", sym)


def forbidden_host_symbol(symbols: list[str], forbid_host: tuple[str, ...] | list[str]
                          ) -> tuple[str, str] | None:
    """(entry, symbol) of the first defined symbol that instantiates a forbidden host algorithm."""
    for entry in forbid_host:
        if "::" not in entry:
            continue
        pats = (entry + "<",) + HOST_INTERNALS.get(entry, ())
        for sym in symbols:
            if any(p in sym for p in pats):
                return entry, sym
    return None


# ----------------------------------------------------------------------------
# Definitions that interpose: the student's object is linked into the runner, where a
# definition of the program wins over the shared libraries' (and a strong one over the
# headers' weak instantiations), so a function the runner calls could be the student's.

# Namespaces of the grader's harness (the runner, the checker's protocol, the tests).
HARNESS_NAMESPACES = ("cudalab::remote::", "cudalab::test::", "cudalab::bench::", "testing::")
# Namespaces of the C++ library, whose functions a submission may instantiate (weak) but
# not define itself (strong: an explicit specialization the runner's calls would reach).
LIBRARY_NAMESPACES = ("std::", "__gnu_cxx::", "__cxxabiv1::")
_STRONG = frozenset("TDBRG")
# Code (a function). A global variable at file scope has no mangled name either (an
# honest `int counter;` outside any namespace): it interposes only where it takes a C
# library variable's name or a name reserved to the implementation (a leading _).
_CODE = frozenset("TWi")
C_LIBRARY_DATA = frozenset({"stdin", "stdout", "stderr", "environ", "optarg", "optind", "opterr",
                            "optopt", "timezone", "daylight", "tzname", "signgam",
                            "program_invocation_name", "program_invocation_short_name"})


def parse_definitions(lines: list[str]) -> list[tuple[str, str]]:
    """(type letter, raw name) of each global definition in `nm -g --defined-only` output."""
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) == 3:
            out.append((parts[1], parts[2]))
    return out


def global_definitions(obj: Path) -> list[tuple[str, str]] | None:
    """(type letter, raw name) of the object's global definitions, or None without nm."""
    lines = nm_lines(obj, "-g", "--defined-only")
    return None if lines is None else parse_definitions(lines)


def interposing_definition(defs: list[tuple[str, str]]) -> tuple[str, str] | None:
    """(name, why) of the first definition that could take the place of one the runner
    calls: any name with C linkage (the C library's send or malloc, a CUDA runtime
    function, main), anything in the harness's namespaces, a strong definition in the C++
    library's. None when there is none. The compiler's own (DW.ref.*) are left out."""
    plain = [(k, n) for k, n in defs if not n.startswith("_Z") and "." not in n]
    for kind, name in plain:
        if kind in _CODE:
            return name, "has C linkage (extern \"C\"), so it can take the place of a C library " \
                         "or CUDA runtime function of the same name that the runner calls"
        if name.startswith("_") or name in C_LIBRARY_DATA:
            return name, "is a variable of the C library's (or a reserved name), which the runner's " \
                         "code would then read"
    mangled = [(k, n) for k, n in defs if n.startswith("_Z")]
    for (kind, raw), name in zip(mangled, demangle([n for _, n in mangled])):
        if name.startswith(HARNESS_NAMESPACES):
            return name, "is in a namespace of the grader's harness"
        if kind in _STRONG and name.startswith(LIBRARY_NAMESPACES):
            return name, "is a strong definition in the C++ library's namespace"
    return None


# ----------------------------------------------------------------------------
# The host machine code (objdump): what no import shows.

# Instructions that enter the kernel: a system call made without a C library function, so
# without an import (inline assembly, where an exercise allows it for its PTX).
SYSCALL_INSNS = ("syscall", "sysenter", "int $0x80", "int 0x80")
# nvcc's registration code (the stub it appends to the file) registers the file's device code
# with one call of each; a second registers device code that cuobjdump never saw (a fatbin of
# the student's making, in a data array).
REGISTRATIONS = ("__cudaRegisterFatBinary", "__cudaRegisterLinkedBinary")

_OBJDUMP_FN = re.compile(r"^[0-9a-fA-F]+ <(.+)>:\s*$")
_OBJDUMP_INSN = re.compile(r"^\s*([0-9a-fA-F]+):\s+(.*?)\s*$")
_RELOC = re.compile(r"^[0-9a-fA-F]+\s+\S+\s+(\S+?)(?:[-+]0x[0-9a-fA-F]+)?\s*$")


def objdump() -> str | None:
    return shutil.which("objdump")


def _objdump(obj: Path, *flags: str) -> str | None:
    tool = objdump()
    if tool is None:
        return None
    try:
        p = subprocess.run([tool, *flags, str(obj)], capture_output=True, text=True, timeout=120,
                           errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout if p.returncode == 0 else None


def host_syscalls(obj: Path) -> list[tuple[str, str, str]] | None:
    """(function, address, instruction) of every system-call instruction in the object's host
    code (objdump -d), or None without a usable objdump."""
    text = _objdump(obj, "-d", "--no-show-raw-insn")
    if text is None:
        return None
    return parse_syscalls(text)


def parse_syscalls(text: str) -> list[tuple[str, str, str]]:
    found = []
    fn = ""
    for line in text.splitlines():
        m = _OBJDUMP_FN.match(line)
        if m:
            fn = m.group(1)
            continue
        m = _OBJDUMP_INSN.match(line)
        if m:
            insn = re.sub(r"\s+", " ", m.group(2).split("#", 1)[0]).strip()
            if insn in SYSCALL_INSNS or insn.split(" ", 1)[0] in ("syscall", "sysenter"):
                found.append((fn, m.group(1), insn))
    return found


def relocation_symbols(obj: Path) -> list[str] | None:
    """The symbol of every relocation of the object, in every section (objdump -r), or None
    without a usable objdump."""
    text = _objdump(obj, "-r")
    if text is None:
        return None
    return parse_relocations(text)


def parse_relocations(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        m = _RELOC.match(line)
        if m and not line.startswith("OFFSET"):
            out.append(m.group(1))
    return out


def extra_registration(symbols: list[str]) -> tuple[str, int] | None:
    """(function, references) when the object refers to a registration function of device
    code more than nvcc's own code does (once)."""
    for name in REGISTRATIONS:
        refs = sum(1 for s in symbols if s == name or s.startswith(name + "_"))
        if refs > 1:
            return name, refs
    return None
