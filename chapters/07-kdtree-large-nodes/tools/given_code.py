#!/usr/bin/env python3
"""Keeps the given code of exercises 7.4 and 7.6 in step with the solutions it copies.

  given_code.py --check   exit 1 (with the first differing line) when a
                          given block differs from what the solutions generate
  given_code.py --write   rewrite the given blocks (then run tools/make-starter)

Each exercise file must compile on its own (the grader builds a student's
file alone), so two exercises carry copies of others' solutions:

- 7.4 (segmented_split.cu) carries the segmented scan of 7.3: the lines of
  classify_and_count.cu between `// ---- the segmented scan (...) ----` and
  `// ---- end of the segmented scan ----`, with every BEGIN SOLUTION /
  STARTER: / END SOLUTION block resolved to the solution, sit in 7.4 between
  `// ---- given: the segmented scan of 7.3 ----` and the same end line.
- 7.6 (build_large_nodes.cu) carries the solutions of 7.1 to 7.5: the text
  between `namespace cudalab::kdtree {` and its closing line, resolved the
  same way and without the `// ---- ` marker lines, in a namespace
  given_<slug>. The block sits between the lines
  `// ---- given: the solution of bounding_box ----` and
  `// ---- given: the kernels and helpers of the stage ----`.
Python 3.11+, standard library only.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SOLUTIONS = ROOT / "solutions" / "07-kdtree-large-nodes"
TARGET = SOLUTIONS / "build_large_nodes.cu"
SLUGS = ["bounding_box", "select_splits", "classify_and_count", "segmented_split", "complete_nodes"]
FIRST = "// ---- given: the solution of bounding_box ----"
AFTER = "// ---- given: the kernels and helpers of the stage ----"


SCAN_FROM = SOLUTIONS / "classify_and_count.cu"
SCAN_TO = SOLUTIONS / "segmented_split.cu"
SCAN_FIRST = "// ---- the segmented scan ("
SCAN_GIVEN = "// ---- given: the segmented scan of 7.3 ----"
SCAN_END = "// ---- end of the segmented scan ----"


def resolve(lines: list[str]) -> list[str]:
    """The lines with every BEGIN SOLUTION / STARTER: / END SOLUTION block resolved to the solution."""
    mode, body = None, []
    for line in lines:
        marker = line.strip()
        if marker == "// BEGIN SOLUTION":
            mode = "solution"
        elif marker == "// STARTER:":
            mode = "starter"
        elif marker == "// END SOLUTION":
            mode = None
        elif mode != "starter":
            body.append(line)
    return body


def generate() -> list[str]:
    out: list[str] = []
    for slug in SLUGS:
        lines = (SOLUTIONS / f"{slug}.cu").read_text().split("\n")
        start = lines.index("namespace cudalab::kdtree {") + 1
        end = lines.index("}  // namespace cudalab::kdtree")
        body = []
        for line in resolve(lines[start:end]):
            if line.startswith("// ---- "):
                continue  # a marker of another copy (7.3's scan); the blank line after it goes too
            if line == "" and body and body[-1] == "":
                continue
            body.append(line)
        while body and body[0] == "":
            body.pop(0)
        while body and body[-1] == "":
            body.pop()
        out += [f"// ---- given: the solution of {slug} ----", f"namespace given_{slug} {{", ""]
        out += body
        out += ["", f"}}  // namespace given_{slug}", ""]
    return out


def generate_scan() -> list[str]:
    """7.3's segmented scan, resolved, between 7.4's given and end lines (both included)."""
    lines = SCAN_FROM.read_text().split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith(SCAN_FIRST))
    end = lines.index(SCAN_END)
    return [SCAN_GIVEN] + resolve(lines[first + 1:end]) + [SCAN_END]


def compare(target: Path, first: int, current: list[str], wanted: list[str], what: str) -> bool:
    for i, (a, b) in enumerate(zip(current, wanted)):
        if a != b:
            print(f"given_code: {target}:{first + i + 1} differs from {what}:\n  has:  {a}\n  want: {b}\n"
                  f"run {Path(__file__).relative_to(ROOT)} --write, then tools/make-starter", file=sys.stderr)
            return False
    if len(current) != len(wanted):
        print(f"given_code: the given block of {target} has {len(current)} lines, {what} make {len(wanted)}",
              file=sys.stderr)
        return False
    return True


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] not in ("--check", "--write"):
        print(__doc__, file=sys.stderr)
        return 2
    scan_lines = SCAN_TO.read_text().split("\n")
    scan_first, scan_end = scan_lines.index(SCAN_GIVEN), scan_lines.index(SCAN_END)
    scan_current, scan_wanted = scan_lines[scan_first:scan_end + 1], generate_scan()
    lines = TARGET.read_text().split("\n")
    first, after = lines.index(FIRST), lines.index(AFTER)
    current, wanted = lines[first:after], generate()
    if argv[1] == "--write":
        SCAN_TO.write_text("\n".join(scan_lines[:scan_first] + scan_wanted + scan_lines[scan_end + 1:]))
        TARGET.write_text("\n".join(lines[:first] + wanted + lines[after:]))
        return 0
    if not compare(SCAN_TO, scan_first, scan_current, scan_wanted, "the segmented scan of 7.3"):
        return 1
    if not compare(TARGET, first, current, wanted, "the solutions of 7.1 to 7.5"):
        return 1
    print("given_code: 7.4's segmented scan matches 7.3's, and the given code of 7.6 the solutions of 7.1 to 7.5")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
