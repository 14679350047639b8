#!/usr/bin/env python3
"""Draws the first levels of a KD tree built by exercise 7.6 over the Stanford bunny.

  draw_kdtree.py --nodes NODES.csv --ply bun_zipper.ply --out PICTURE.png [--levels 4]

NODES.csv is what the bunny test of 7.6 writes when CUDALAB_KDTREE_NODES_CSV
names a file (tests/07-kdtree-large-nodes/build_large_nodes_test.cu,
write_nodes_csv: the GPU's node array of the T = 32 tree, after the test has
checked it): a header line `id,depth,axis,split,left,right,count,lo_x,lo_y,
lo_z,hi_x,hi_y,hi_z`, then one line per node. The picture has two panels,
the bunny's points seen from the front (x across, y up) and from above
(x across, z up), and in each the split planes of the nodes of depth
0 .. LEVELS-1 whose axis is one of the panel's two axes, drawn as segments
across the node's cell (a plane of the third axis is parallel to the panel
and not drawn there; the other panel shows it when its axis is x).
Deeper levels are drawn thinner and in another colour.

On a GPU machine, from the repository root, with the ci or gpu build:

  CUDALAB_DATA_DIR=/path/to/data CUDALAB_KDTREE_NODES_CSV=/tmp/bunny_nodes.csv \\
    build/gpu/bin/build_large_nodes_test_solution --gtest_filter='*StanfordBunny*'
  python3 chapters/07-kdtree-large-nodes/tools/draw_kdtree.py --nodes /tmp/bunny_nodes.csv \\
    --ply /path/to/data/bun_zipper.ply --out docs/results/07-kdtree-bunny.png

Needs Python 3.11+ and matplotlib (exit 4 with a message when it is
missing); everything else is the standard library. Exit 2 on a malformed
input file, naming the file and the line.
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
from dataclasses import dataclass
from pathlib import Path

FIELDS = ["id", "depth", "axis", "split", "left", "right", "count",
          "lo_x", "lo_y", "lo_z", "hi_x", "hi_y", "hi_z"]
AXIS_NAMES = "xyz"
# The two panels: (title, horizontal axis, vertical axis).
PANELS = [("front (x, y)", 0, 1), ("top (x, z)", 0, 2)]
# One colour per level, then repeated (matplotlib's tab10, darkest first).
COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


class InputError(Exception):
    """A malformed input file: the message names the file and the line."""


@dataclass(frozen=True)
class Node:
    """One node of the CSV: its depth, split axis (-1: not split), split value and cell."""
    id: int
    depth: int
    axis: int
    split: float
    count: int
    lo: tuple[float, float, float]
    hi: tuple[float, float, float]


def read_nodes(path: Path) -> list[Node]:
    """Reads the CSV of write_nodes_csv; raises InputError on a bad line."""
    nodes: list[Node] = []
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from e
    rows = list(csv.reader(text.splitlines()))
    if not rows or rows[0] != FIELDS:
        raise InputError(f"{path}:1: the header must be {','.join(FIELDS)} "
                         "(the file the bunny test writes with CUDALAB_KDTREE_NODES_CSV)")
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(FIELDS):
            raise InputError(f"{path}:{line}: {len(row)} fields, expected {len(FIELDS)}")
        try:
            ints = [int(row[i]) for i in (0, 1, 2, 6)]
            floats = [float(row[i]) for i in (3, 7, 8, 9, 10, 11, 12)]
        except ValueError as e:
            raise InputError(f"{path}:{line}: {e}") from e
        if not all(math.isfinite(v) for v in floats[1:]):
            raise InputError(f"{path}:{line}: a cell bound is not finite")
        if ints[2] not in (-1, 0, 1, 2):
            raise InputError(f"{path}:{line}: axis {ints[2]} is not -1, 0, 1 or 2")
        nodes.append(Node(id=ints[0], depth=ints[1], axis=ints[2], split=floats[0], count=ints[3],
                          lo=tuple(floats[1:4]), hi=tuple(floats[4:7])))
    if not nodes:
        raise InputError(f"{path}: no nodes")
    return nodes


def read_ply_points(path: Path) -> list[tuple[float, float, float]]:
    """The vertices (x, y, z) of an ASCII PLY file (the bunny's format)."""
    try:
        lines = path.read_text(encoding="ascii").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from e
    if not lines or lines[0].strip() != "ply":
        raise InputError(f"{path}:1: not a PLY file")
    count, end = None, None
    for i, line in enumerate(lines):
        words = line.split()
        if words[:2] == ["format", "binary_little_endian"] or words[:2] == ["format", "binary_big_endian"]:
            raise InputError(f"{path}:{i + 1}: binary PLY is not supported (the bunny is ASCII)")
        if words[:2] == ["element", "vertex"] and len(words) == 3:
            count = int(words[2])
        if words == ["end_header"]:
            end = i
            break
    if count is None or end is None:
        raise InputError(f"{path}: no 'element vertex N' or no 'end_header'")
    points = []
    for i in range(end + 1, end + 1 + count):
        if i >= len(lines):
            raise InputError(f"{path}: {count} vertices declared, the file ends at line {len(lines)}")
        words = lines[i].split()
        try:
            points.append((float(words[0]), float(words[1]), float(words[2])))
        except (ValueError, IndexError) as e:
            raise InputError(f"{path}:{i + 1}: not a vertex line: {lines[i]!r}") from e
    return points


def split_segments(nodes: list[Node], levels: int, h: int, v: int):
    """The split planes of depth < levels seen in the panel of axes (h, v).

    Yields (depth, (x0, y0), (x1, y1)): a node split on axis h is a vertical
    segment at x = split across the cell's v range; on axis v a horizontal
    one across its h range. Planes of the third axis are parallel to the
    panel and skipped.
    """
    for n in nodes:
        if n.axis < 0 or n.depth >= levels:
            continue
        if n.axis == h:
            yield n.depth, (n.split, n.lo[v]), (n.split, n.hi[v])
        elif n.axis == v:
            yield n.depth, (n.lo[h], n.split), (n.hi[h], n.split)


def draw(nodes: list[Node], points, levels: int, out: Path) -> None:
    """Writes the two-panel picture to `out` (PNG, or any format matplotlib knows by the suffix)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
    except ImportError:
        print("draw_kdtree.py: matplotlib is not installed (pip install matplotlib, or apt-get install "
              "python3-matplotlib); the CSV was not drawn", file=sys.stderr)
        sys.exit(4)
    root = next((n for n in nodes if n.depth == 0), nodes[0])
    fig, axes = plt.subplots(1, len(PANELS), figsize=(6.2 * len(PANELS), 5.4), constrained_layout=True)
    for ax, (title, h, v) in zip(axes, PANELS):
        ax.scatter([p[h] for p in points], [p[v] for p in points], s=0.15, c="#9a9a9a", linewidths=0,
                   rasterized=True)
        for depth, (x0, y0), (x1, y1) in sorted(split_segments(nodes, levels, h, v), key=lambda s: -s[0]):
            ax.plot([x0, x1], [y0, y1], color=COLOURS[depth % len(COLOURS)],
                    linewidth=max(0.6, 2.4 - 0.5 * depth))
        ax.add_patch(plt.Rectangle((root.lo[h], root.lo[v]), root.hi[h] - root.lo[h], root.hi[v] - root.lo[v],
                                   fill=False, edgecolor="black", linewidth=0.8))
        ax.set_aspect("equal")
        ax.set_xlabel(AXIS_NAMES[h])
        ax.set_ylabel(AXIS_NAMES[v])
        ax.set_title(f"{title}: splits on {AXIS_NAMES[h]} and {AXIS_NAMES[v]}")
    handles = [Line2D([], [], color=COLOURS[d % len(COLOURS)], linewidth=max(0.6, 2.4 - 0.5 * d),
                      label=f"depth {d}") for d in range(levels)]
    fig.legend(handles=handles, loc="outside lower center", ncol=levels, frameon=False)
    fig.suptitle(f"Stanford bunny ({len(points):,} points): split planes of the first {levels} levels "
                 f"of the large-node stage (7.6, T = 32; {len(nodes):,} nodes in all)\n"
                 "Data: Stanford Computer Graphics Laboratory")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=130)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=Path, required=True, help="the CSV the bunny test wrote")
    ap.add_argument("--ply", type=Path, required=True, help="bun_zipper.ply (CUDALAB_DATA_DIR)")
    ap.add_argument("--out", type=Path, required=True, help="the picture to write (.png)")
    ap.add_argument("--levels", type=int, default=4, help="levels of splits to draw (default 4)")
    args = ap.parse_args(argv)
    if not 1 <= args.levels <= 12:
        ap.error("--levels must be in 1..12")
    try:
        nodes = read_nodes(args.nodes)
        points = read_ply_points(args.ply)
    except InputError as e:
        print(f"draw_kdtree.py: {e}", file=sys.stderr)
        return 2
    draw(nodes, points, args.levels, args.out)
    print(f"draw_kdtree.py: wrote {args.out} ({len(nodes)} nodes, {len(points)} points, {args.levels} levels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
