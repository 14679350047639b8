"""tools/gpu-check's portability step: every solution and starter compiled (nvcc -c, the build's
own flags from a configure's compile_commands.json, no GPU needed) for each supported
architecture; any warning fails as an error does."""
from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from .. import proc
from .context import Context, quick, tail

ARCH_FLAG = re.compile(r"^(--generate-code|-gencode|--gpu-architecture|-arch|--gpu-code|-code)(=|$)")
DIAG_WARNING = re.compile(r"\bwarning\b(\s*#\d+(-D)?)?\s*:", re.I)
DIAG_ERROR = re.compile(r"\b(error|fatal)\b(\s*#\d+(-D)?)?\s*:", re.I)


def portability_sources(commands: list[dict], root: Path) -> list[dict]:
    """The compile commands (compile_commands.json entries) of the solutions and starters:
    [{"file": "solutions/02-sorting/x.cu", "directory": ..., "argv": [...]}], sorted by file,
    with the output (-o) and the architecture flags taken out."""
    root = root.resolve()
    out = []
    for c in commands:
        try:
            rel = Path(c["file"]).resolve().relative_to(root)
        except ValueError:
            continue
        if rel.parts[0] not in ("solutions", "starter") or rel.suffix != ".cu":
            continue
        args = c["arguments"] if "arguments" in c else shlex.split(c["command"])
        argv, skip = [], False
        for i, a in enumerate(args):
            if skip:
                skip = False
                continue
            if a == "-o" or (ARCH_FLAG.match(a) and "=" not in a and i > 0):
                skip = True  # the flag's value is the next word
                continue
            if ARCH_FLAG.match(a):
                continue
            argv.append(a)
        out.append({"file": rel.as_posix(), "directory": c.get("directory", str(root)), "argv": argv})
    return sorted(out, key=lambda x: x["file"])


def arch_argv(argv: list[str], arch: str, output: Path) -> list[str]:
    """A portability command: argv for sm_<arch> (its SASS and PTX, as CMake asks for
    CMAKE_CUDA_ARCHITECTURES=<arch>), written to output."""
    return [argv[0], f"--generate-code=arch=compute_{arch},code=[compute_{arch},sm_{arch}]",
            *argv[1:], "-o", str(output)]


def count_diagnostics(text: str) -> tuple[int, int]:
    """(warnings, errors): the diagnostic lines of gcc, nvcc's front end and ptxas."""
    lines = text.splitlines()
    return (sum(1 for ln in lines if DIAG_WARNING.search(ln)),
            sum(1 for ln in lines if DIAG_ERROR.search(ln)))


def nvcc_archs(nvcc: str, env: dict | None = None) -> set[str] | None:
    """The architectures nvcc can compile for ({"75", "90", ...}, from --list-gpu-arch);
    None when it does not say."""
    rc, out = quick([nvcc, "--list-gpu-arch"], env)
    archs = set(re.findall(r"^compute_(\d+)$", out, re.M))
    return archs if rc == 0 and archs else None


TOOLKIT_PROBE = ("#include <cuda_runtime_api.h>\n#include <thrust/version.h>\n"
                 "cudalab_versions CUDART_VERSION THRUST_VERSION\n")


def toolkit_versions(nvcc: str, env: dict | None = None) -> dict:
    """What nvcc compiles with: {"nvcc": its release line, "cudart": "12.9" (CUDART_VERSION
    of the cuda_runtime_api.h it finds), "cccl": "2.8.2" (THRUST_VERSION)}; a value it cannot
    tell is left out."""
    info: dict = {}
    rc, out = quick([nvcc, "--version"], env)
    lines = [ln.strip() for ln in out.splitlines() if "release" in ln]
    if rc == 0 and lines:
        info["nvcc"] = lines[-1]
    try:
        p = subprocess.run([nvcc, "-E", "-x", "cu", "-"], input=TOOLKIT_PROBE, capture_output=True,
                           text=True, timeout=120, env=env)
        text = " ".join(ln for ln in p.stdout.splitlines() if not ln.startswith("#"))
        m = re.search(r"\bcudalab_versions\s+(\d+)\s+(\d+)", text)
    except (OSError, subprocess.TimeoutExpired):
        m = None
    if m:
        rt, cccl = int(m.group(1)), int(m.group(2))
        info["cudart"] = f"{rt // 1000}.{rt % 1000 // 10}"
        info["cccl"] = f"{cccl // 100000}.{cccl // 100 % 1000}.{cccl % 100}"
    return info


def portability_table(per_arch: dict) -> list[str]:
    lines = ["| architecture | files | compiled | warnings | errors |", "| --- | ---: | ---: | ---: | ---: |"]
    for arch, t in per_arch.items():
        lines.append(f"| sm_{arch} | {t['files']} | {t['compiled']} | {t['warnings']} | {t['errors']} |")
    return lines


def step_portability(ctx: Context, rec: dict, progress, env_info: dict) -> None:
    """Every solution and starter compiled for every supported architecture, any warning a failure."""
    logs = ctx.step_logs("portability")
    bdir = ctx.build_dir / "portability"
    # One configure (no tests, no benchmarks: only the exercises' objects) gives each
    # file's exact command; each architecture then gets its own copy of it.
    configure = ["cmake", "-S", str(ctx.root), "-B", str(bdir), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                 "-DCMAKE_CUDA_ARCHITECTURES=90", "-DCUDALAB_WERROR=OFF", "-DCUDALAB_BUILD_TESTS=OFF",
                 "-DCUDALAB_BUILD_BENCHMARKS=OFF", "-DCUDALAB_BUILD_DOCS=OFF",
                 "-DCUDALAB_IMPLEMENTATIONS=" + ("starter" if ctx.starter_only else "solution;starter"),
                 "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"]
    if ctx.nvcc:
        configure.append("-DCMAKE_CUDA_COMPILER=" + ctx.nvcc)
    if ctx.starter_only:
        rec["details"]["starter_only"] = ctx.starter_only
    rc, out, secs = ctx.run(configure, logs / "configure.log")
    rec["details"]["configure"] = {"rc": rc, "seconds": round(secs, 1)}
    if rc != 0:
        rec["messages"].append(f"configure failed (exit {rc}):\n{tail(out)}")
        rec["summary"] = "configure failed"
        return
    try:
        commands = json.loads((bdir / "compile_commands.json").read_text())
    except (OSError, ValueError) as e:
        rec["messages"].append(f"no compile_commands.json in {bdir}: {e}")
        rec["summary"] = "no compile commands"
        return
    sources = [s for s in portability_sources(commands, ctx.root)
               if ctx.in_scope(Path(s["file"]).stem)]
    if ctx.chapters:
        rec["details"]["chapters"] = ctx.chapters
    if not sources:
        rec["messages"].append(f"no solutions/ or starter/ file in {bdir / 'compile_commands.json'}")
        rec["summary"] = "nothing to compile"
        return
    nvcc = sources[0]["argv"][0]  # the compiler CMake chose (--nvcc's, if given)
    toolkit = toolkit_versions(nvcc, ctx.env)
    supported = nvcc_archs(nvcc, ctx.env)
    archs = [a for a in ctx.archs if supported is None or a in supported]
    unsupported = [a for a in ctx.archs if a not in archs]
    rec["details"].update(compiler=nvcc, toolkit=toolkit, unsupported_archs=unsupported)
    if unsupported:
        rec["messages"].append(f"{nvcc} does not compile for " + ", ".join(f"sm_{a}" for a in unsupported)
                               + " (nvcc --list-gpu-arch): left out")
    if not archs:
        rec["summary"] = "no architecture to compile for"
        return
    jobs = [(arch, s) for arch in archs for s in sources]
    print(f"gpu-check: portability: {len(sources)} files x {len(archs)} architectures, "
          f"{ctx.jobs} at once ({nvcc}: {toolkit})", flush=True)

    def compile_one(job: tuple[str, dict]) -> dict:
        arch, s = job
        name = s["file"].replace("/", "__")
        obj = bdir / f"sm_{arch}" / (name + ".o")
        obj.parent.mkdir(parents=True, exist_ok=True)
        argv = arch_argv(s["argv"], arch, obj)
        p = proc.run(argv, ctx.timeout, Path(s["directory"]), env=ctx.env, limit_files=False)
        rc = 124 if p.timed_out or p.returncode is None else p.returncode
        text = p.output.strip()
        warnings, errors = count_diagnostics(text)
        if rc != 0 and errors == 0:
            errors = 1  # failed without an error line (a crash, a timeout)
        if text or rc != 0:
            log = logs / f"sm_{arch}" / (name + ".log")
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(f"$ {shlex.join(argv)}\n{text}\n" + (f"exit {rc}\n" if rc else ""))
        return {"arch": arch, "file": s["file"], "rc": rc, "seconds": round(p.seconds, 1),
                "warnings": warnings, "errors": errors, "output": text}

    per_arch = {a: {"files": 0, "compiled": 0, "warnings": 0, "errors": 0, "seconds": 0.0}
                for a in archs}
    problems = []
    done = 0
    for r in proc.map_parallel(compile_one, jobs, ctx.jobs):
        t = per_arch[r["arch"]]
        t["files"] += 1
        t["compiled"] += r["rc"] == 0
        t["warnings"] += r["warnings"]
        t["errors"] += r["errors"]
        t["seconds"] = round(t["seconds"] + r["seconds"], 1)
        if r["rc"] != 0 or r["warnings"]:
            problems.append({k: r[k] for k in ("arch", "file", "rc", "warnings", "errors")})
            diag = [ln for ln in r["output"].splitlines() if DIAG_WARNING.search(ln) or DIAG_ERROR.search(ln)]
            rec["messages"].append(f"sm_{r['arch']} {r['file']}: "
                                   + (f"exit {r['rc']}" if r["rc"] else f"{r['warnings']} warning(s)") + "\n"
                                   + "\n".join((diag or r["output"].splitlines())[:6]))
        done += 1
        if done % 50 == 0:
            rec["details"]["archs"] = per_arch
            progress()
    rec["details"].update(archs=per_arch, problems=problems, files=len(sources),
                          nvcc=env_info.get("nvcc"))
    warnings = sum(t["warnings"] for t in per_arch.values())
    errors = sum(t["errors"] for t in per_arch.values())
    failed = sum(t["files"] - t["compiled"] for t in per_arch.values())
    bad = [f"sm_{a}" for a, t in per_arch.items() if t["warnings"] or t["errors"] or t["compiled"] < t["files"]]
    rec["summary"] = (f"{len(sources)} files x {len(archs)} architectures: "
                      f"{warnings} warnings, {errors} errors" + (f", {failed} failed" if failed else "")
                      + (f" ({', '.join(bad)})" if bad else "")
                      + (f"; {', '.join(f'sm_{a}' for a in unsupported)} not supported by the compiler"
                         if unsupported else "")
                      + (f"; CUDA {toolkit['cudart']} headers" if toolkit.get("cudart") else "")
                      + ctx.scope_note())
    rec["status"] = "passed" if not bad else "failed"
