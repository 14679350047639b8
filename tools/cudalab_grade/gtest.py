"""Reading a gtest JSON report and the program's output."""
from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

NO_DEVICE = "no CUDA device"
_RUN = re.compile(r"^\[ RUN      \] (\S+)", re.M)
_END = re.compile(r"^\[ +(?:OK|FAILED|SKIPPED) +\] (\S+)", re.M)


@dataclass
class Report:
    total: int = 0
    passed: int = 0
    skipped: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (test name, message)


MAX_REPORT = 64 << 20  # a bigger report is not read (a program that floods its failure messages)
# A failure outside every test (gtest's suite NonTestSuiteFailure, one unnamed test): the test
# program's checks after its last test (tests/common/gtest_main.cu: the device memory the
# exercise's code still holds). It counts as one failed test, under this name.
AFTER_THE_TESTS = "(after the tests)"


def parse_report(path: Path) -> Report | None:
    """The counts and failures of a --gtest_output=json file; None when absent, unreadable or huge."""
    try:
        if path.stat().st_size > MAX_REPORT:
            return None
        data = json.loads(path.read_text(errors="replace"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    rep = Report()
    for suite in data.get("testsuites", []):
        for test in suite.get("testsuite", []):
            result = test.get("result", "COMPLETED")
            if result == "SUPPRESSED" or test.get("status") == "NOTRUN":
                continue
            rep.total += 1
            failures = test.get("failures") or []
            name = f"{suite.get('name', '?')}.{test.get('name', '?')}"
            if suite.get("name") == "NonTestSuiteFailure" and not test.get("name"):
                name = AFTER_THE_TESTS
            if failures:
                rep.failed.append((name, "\n".join(str(f.get("failure", "")) for f in failures)))
            elif result == "SKIPPED":
                rep.skipped += 1
            else:
                rep.passed += 1
    return rep


_SKIP_WHERE = re.compile(r"^\S+:\d+: Skipped$")


def skip_reasons(output: str, most: int = 3, width: int = 300) -> list[str]:
    """'Suite.Test: why' for the first `most` tests the output shows as skipped, from the text
    gtest prints between a test's RUN and SKIPPED lines (its GTEST_SKIP message; gtest's JSON
    report has none before 1.13), each at most `width` characters. One pass over the lines."""
    out: list[str] = []
    name, lines = None, []
    for line in output.splitlines():
        if line.startswith("[ RUN      ] "):
            name, lines = line[13:].strip(), []
        elif name is not None and line.startswith("[  SKIPPED ] ") and line[13:].split(" ")[0] == name:
            why = " ".join(x.strip() for x in lines if x.strip() and not _SKIP_WHERE.match(x.strip()))
            why = why if len(why) <= width else why[:width - 3] + "..."
            out.append(f"{name}: {why}" if why else name)
            name = None
            if len(out) == most:
                break
        elif name is not None and line.startswith("[ "):
            name = None  # the test ended otherwise (OK, FAILED)
        elif name is not None and len(lines) < 20:
            lines.append(line)
    return out


# What the test program prints first when it finds a GPU (tests/common/gtest_main.cu): the
# checker's own word that there is one, which nothing printed later can take back.
_DEVICE_LINE = re.compile(r"^cudalab: device \d+ of \d+: ", re.M)


def skipped_for_no_device(rep: Report, output: str) -> bool:
    """True when the tests that did not pass were skipped (or failed) only for lack of a GPU.
    Never where the test program said it found one: the runner's exception messages reach the
    failures (and the output) as they are, and one that says "no CUDA device" in every failing
    call must not make an exercise "not graded"."""
    if NO_DEVICE not in output or _DEVICE_LINE.search(output):
        return False
    if rep.failed:
        return all(NO_DEVICE in msg for _, msg in rep.failed)
    return rep.skipped > 0


def running_test(output: str) -> str | None:
    """The test that had started but not finished when the output stops (a crash, a hang)."""
    started = _RUN.findall(output)
    if not started:
        return None
    finished = set(_END.findall(output))
    last = started[-1]
    return None if last in finished else last


def trim(text: str, lines: int = 15) -> str:
    rows = text.rstrip().splitlines()
    if len(rows) <= lines:
        return "\n".join(rows)
    return "\n".join(rows[:lines] + [f"... ({len(rows) - lines} more lines)"])


def tail(text: str, lines: int = 15) -> str:
    rows = text.rstrip().splitlines()
    return "\n".join(rows[-lines:])


def list_test_names(exe: Path, test_filter: str, cwd: Path) -> list[str] | None:
    """The full names of the tests the checker has under the filter (--gtest_list_tests), in
    its order; None when it cannot say.

    The checker is the course's trusted program: its list is what a graded run must cover."""
    try:
        p = subprocess.run([str(exe), f"--gtest_filter={test_filter}", "--gtest_list_tests"],
                           capture_output=True, text=True, timeout=60, cwd=cwd,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    return test_names(p.stdout)


def test_names(listing: str) -> list[str]:
    """The full names (Suite.Test, with their parameter parts) that a --gtest_list_tests
    output lists, without the disabled ones (a DISABLED_ suite or test)."""
    names, suite = [], None
    for line in listing.splitlines():
        word = line.split("#", 1)[0].strip()
        if not word:
            continue
        if not line.startswith(" "):
            disabled = word.split("/")[-1].startswith("DISABLED_") or word.startswith("DISABLED_")
            suite = word if word.endswith(".") and not disabled else None  # "Suite." lines only
        elif suite is not None and not word.startswith("DISABLED_"):
            names.append(suite + word)
    return names


def read_tail(path: Path, limit: int = 4096, lines: int = 15) -> str:
    """The last lines of a file the student's code wrote (bounded; '' when absent)."""
    try:
        with path.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - limit))
            data = f.read(limit)
    except OSError:
        return ""
    text = data.decode(errors="replace").replace("\x00", "")
    return tail(text, lines).strip()
