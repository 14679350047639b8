#!/usr/bin/env python3
"""Keeps the given code of exercise 7.6 in step with the solutions of 7.1 to 7.5.

  given_code.py --check   exit 1 (with the first differing line) when
                          solutions/07-kdtree-large-nodes/build_large_nodes.cu's
                          given block differs from what the solutions generate
  given_code.py --write   rewrite that block (then run tools/make-starter)

Each exercise file must compile on its own (the grader builds a student's
file alone), so 7.6 carries copies of the solutions of 7.1 to 7.5: the text
between `namespace cudalab::kdtree {` and its closing line, with every
BEGIN SOLUTION / STARTER: / END SOLUTION block resolved to the solution,
in a namespace given_<slug>. The block sits between the lines
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


def generate() -> list[str]:
    out: list[str] = []
    for slug in SLUGS:
        lines = (SOLUTIONS / f"{slug}.cu").read_text().split("\n")
        start = lines.index("namespace cudalab::kdtree {") + 1
        end = lines.index("}  // namespace cudalab::kdtree")
        mode, body = None, []
        for line in lines[start:end]:
            marker = line.strip()
            if marker == "// BEGIN SOLUTION":
                mode = "solution"
            elif marker == "// STARTER:":
                mode = "starter"
            elif marker == "// END SOLUTION":
                mode = None
            elif mode != "starter":
                body.append(line)
        while body and body[0] == "":
            body.pop(0)
        while body and body[-1] == "":
            body.pop()
        out += [f"// ---- given: the solution of {slug} ----", f"namespace given_{slug} {{", ""]
        out += body
        out += ["", f"}}  // namespace given_{slug}", ""]
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] not in ("--check", "--write"):
        print(__doc__, file=sys.stderr)
        return 2
    lines = TARGET.read_text().split("\n")
    first, after = lines.index(FIRST), lines.index(AFTER)
    current, wanted = lines[first:after], generate()
    if argv[1] == "--write":
        TARGET.write_text("\n".join(lines[:first] + wanted + lines[after:]))
        return 0
    for i, (a, b) in enumerate(zip(current, wanted)):
        if a != b:
            print(f"given_code: {TARGET}:{first + i + 1} differs from the solutions:\n  has:  {a}\n  want: {b}\n"
                  f"run {Path(__file__).relative_to(ROOT)} --write, then tools/make-starter", file=sys.stderr)
            return 1
    if len(current) != len(wanted):
        print(f"given_code: the given block of {TARGET} has {len(current)} lines, the solutions make {len(wanted)}",
              file=sys.stderr)
        return 1
    print("given_code: the given code of 7.6 matches the solutions of 7.1 to 7.5")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
