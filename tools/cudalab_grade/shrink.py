"""The smallest failing case.

When a test of a size battery fails, e.g. `Sizes/ReduceSumVectorized.Int32Random/n1025`,
the grader looks for the smallest size of the same test body that still fails with
the same seed, and adds one detail line with its rerun command:

    smallest failing case: Sizes/ReduceSumVectorized.Int32Random fails already at
    n = 33 (one warp plus one) with seed 801519790
    rerun: CUDALAB_SEED=801519790 build/default/bin/... --gtest_filter='.../n33'

How: every test of a battery has its own seed (derived from its full name, unless
CUDALAB_SEED is set), so the smaller sizes passed in the graded run with other
inputs. The checker is run once more, through Options.run (the same environment,
runner, sandbox and limits as the graded run), on the battery's sizes below the
failing one (as its --gtest_list_tests names them, under the exercise's filter),
with CUDALAB_SEED set to the seed the failure message printed; the smallest size
that fails there is the answer. Within a time budget (Options.shrink_budget
seconds for the exercise, listing included), at most MAX_RERUNS reruns (one per
failing test body shown) of at most MAX_SIZES sizes each.

Nothing is said when the test is not parameterized by size (its name does not end
in /n<digits>), when no smaller size fails, when the seed is unknown, or when the
budget runs out. The verdict and the points never change: only a detail is added,
and any error here is swallowed.
"""
from __future__ import annotations

import re
import shlex
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from . import gtest

if TYPE_CHECKING:  # grading imports this module
    from .grading import Options
    from .manifest import Exercise

BUDGET = 8.0       # seconds for one exercise's search (Options.shrink_budget's default)
MAX_RERUNS = 3     # test bodies searched per exercise (the failures the details show)
MAX_SIZES = 32     # smaller sizes run in one rerun
MIN_LEFT = 1.0     # a rerun needs at least this many seconds of the budget
LIST_LIMIT = 30.0  # seconds for the checker's --gtest_list_tests

_NAME = re.compile(r"^[A-Za-z0-9_./]+$")  # gtest names with no filter syntax (* ? : -)
_SIZE = re.compile(r"^(?P<body>[A-Za-z0-9_./]+)/n(?P<n>\d+)$")
_SEED = re.compile(r"\bseed = (\d+)")
_FAILED = re.compile(r"^\[  FAILED  \] ([A-Za-z0-9_./]+)", re.M)


def split(name: str) -> tuple[str, int] | None:
    """('Sizes/Suite.Body', 1025) for 'Sizes/Suite.Body/n1025'; None when not a size."""
    m = _SIZE.match(name)
    return (m["body"], int(m["n"])) if m else None


def reading(n: int) -> str:
    """A short reading of a size: the boundary it sits on or next to; '' when none."""
    if n == 0:
        return "an empty input"
    if n == 1:
        return "a single element"
    if n < 31:
        return "less than one warp"
    if n in (31, 32, 33):
        return ("one less than a warp", "exactly one warp", "one warp plus one")[n - 31]
    for p, what in ((n, "{}"), (n + 1, "one less than {}"), (n - 1, "one more than {}")):
        if p >= 64 and p & (p - 1) == 0:
            return what.format(_power(p))
    p = 1 << (n.bit_length() - 1)  # the power of two at or below n
    if p >= 1024 and n - p <= 8:
        return f"2^{p.bit_length() - 1} + {n - p}"
    if p >= 512 and 2 * p - n <= 8:
        return f"2^{p.bit_length()} - {2 * p - n}"
    if n % 32 == 0 and n <= 32 * 32:
        return f"{n // 32} warps"
    if _prime(n):
        return "a prime, on no warp, block or tile boundary"
    return ""


def _power(p: int) -> str:
    k = p.bit_length() - 1
    if p == 1024:
        return "1024 = 2^10, the largest block"
    if p <= 16384:
        return f"{p} = 2^{k}, a block or tile size"
    return f"2^{k} = {p}"


def _prime(n: int) -> bool:
    if n < 2 or n > 10**12:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True


def lines(ex: Exercise, opts: Options, failed: list[tuple[str, str]], shown: int = 3) -> list[str]:
    """The detail lines for the failures of the exercise's test program (the first
    `shown` are the ones the details show); [] when there is nothing to add. Never raises."""
    try:
        return _lines(ex, opts, failed, shown)
    except Exception:  # a detail: grading goes on without it
        return []


def _lines(ex: Exercise, opts: Options, failed: list[tuple[str, str]], shown: int) -> list[str]:
    start = time.monotonic()
    budget = opts.shrink_budget
    if opts.deadline is not None:
        budget = min(budget, opts.deadline - start)
    # (name -> message) of the visible program's failures; "(hidden) ..." and
    # "(tests that did not run)" are not tests of the checker whose name can be rerun
    failing: dict[str, dict[int, str]] = {}
    for name, msg in failed:
        got = split(name)
        if got:
            failing.setdefault(got[0], {}).setdefault(got[1], msg)
    bodies: list[str] = []
    shown_at: dict[str, int] = {}
    for name, _ in failed[:shown]:
        got = split(name)
        if got:
            if got[0] not in bodies:
                bodies.append(got[0])
            shown_at[got[0]] = min(shown_at.get(got[0], got[1]), got[1])
    exe = opts.checker(ex.test_target(opts.implementation))
    listed: list[str] | None = None
    out: list[str] = []
    for body in bodies[:MAX_RERUNS]:
        known = failing[body]
        best = min(known)
        seed = opts.seed
        if seed is None:
            m = _SEED.search(known[best])
            seed = int(m[1]) if m else None
        # With --seed every test already ran with that seed: a smaller size that
        # passed passes again. Without a seed in the message there is none to pass on.
        left = budget - (time.monotonic() - start)
        if opts.seed is None and seed is not None and left >= MIN_LEFT:
            if listed is None:
                listed = _list(exe, ex.test_filter, opts, min(left, LIST_LIMIT)) or []
            sizes = sorted({got[1] for got in map(split, listed)
                            if got and got[0] == body and got[1] < best})[:MAX_SIZES]
            left = budget - (time.monotonic() - start)
            if sizes and left >= MIN_LEFT:
                found = _rerun(ex, opts, exe, body, sizes, seed, left)
                if found:
                    best = min(found)
        if best < shown_at[body]:
            out.append(_say(opts, exe, body, best, seed))
    return out


def _say(opts: Options, exe: Path, body: str, n: int, seed: int | None) -> str:
    what = reading(n)
    size = f"n = {n}" + (f" ({what})" if what else "")
    env = f"CUDALAB_SEED={seed} " if seed is not None else ""
    return (f"smallest failing case: {body} fails already at {size}"
            + (f" with seed {seed}" if seed is not None else "") + "\n"
            f"rerun: {env}{shlex.quote(opts.shown(exe))} --gtest_filter='{body}/n{n}'")


def _list(exe: Path, test_filter: str, opts: Options, limit: float) -> list[str] | None:
    """The full test names the checker lists under the filter; None when it cannot say."""
    p = opts.run([str(exe), f"--gtest_filter={test_filter}", "--gtest_list_tests"],
                 opts.env(), limit)
    if p.timed_out or p.returncode != 0:
        return None
    return [name for name in gtest.test_names(p.output) if _NAME.match(name)]


def _rerun(ex: Exercise, opts: Options, exe: Path, body: str, sizes: list[int],
           seed: int, limit: float) -> list[int]:
    """The sizes (of `sizes`) at which the body fails with `seed`, as far as the run got."""
    names = [f"{body}/n{n}" for n in sizes]
    with tempfile.TemporaryDirectory(prefix="cudalab-shrink-") as tmp:
        report_path = Path(tmp) / "report.json"
        cmd = [str(exe), "--gtest_filter=" + ":".join(names), f"--gtest_output=json:{report_path}"]
        env = opts.env() | {"CUDALAB_SEED": str(seed)} | opts.runner_env(ex, Path(tmp) / "runner.log")
        p = opts.run(cmd, env, min(limit, opts.time_limit()))
        rep = gtest.parse_report(report_path)
    if rep is not None and not p.timed_out:
        bad = [name for name, _ in rep.failed]
    else:  # stopped (a crash, the budget): what it finished before, from its output
        bad = _FAILED.findall(p.output)
    wanted = set(names)
    return sorted({split(name)[1] for name in bad if name in wanted})
