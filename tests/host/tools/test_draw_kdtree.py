"""Host tests of chapters/07-kdtree-large-nodes/tools/draw_kdtree.py: the node CSV
(as the bunny test of 7.6 writes it) and PLY readers, the split segments of
each panel, and the exits on bad input and without matplotlib. Drawing itself
needs matplotlib and is left to the GPU machine, where the picture is made."""
from __future__ import annotations

import builtins
import importlib.util
import io
import sys
import tempfile
import unittest
from contextlib import redirect_stderr
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "chapters" / "07-kdtree-large-nodes" / "tools" / "draw_kdtree.py"
spec = importlib.util.spec_from_file_location("draw_kdtree", SCRIPT)
draw_kdtree = importlib.util.module_from_spec(spec)
sys.modules["draw_kdtree"] = draw_kdtree  # dataclasses look their module up there
spec.loader.exec_module(draw_kdtree)

HEADER = "id,depth,axis,split,left,right,count,lo_x,lo_y,lo_z,hi_x,hi_y,hi_z\n"
# A root split on x at 0.5, its left child on y at 0.25, its right child on z, a leaf.
NODES = HEADER + ("0,0,0,0.5,1,2,10,0,0,0,1,1,1\n"
                  "1,1,1,0.25,3,4,6,0,0,0,0.5,1,1\n"
                  "2,1,2,0.75,5,6,4,0.5,0,0,1,1,1\n"
                  "3,2,-1,0,-1,-1,3,0,0,0,0.5,0.25,1\n")
PLY = ("ply\nformat ascii 1.0\ncomment zipper output\nelement vertex 2\nproperty float x\n"
       "property float y\nproperty float z\nelement face 0\nend_header\n0.1 0.2 0.3 1 2 \n0.4 0.5 0.6 1 2 \n")


class DrawKdtreeTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.tmp = Path(self.dir.name)

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name: str, text: str) -> Path:
        p = self.tmp / name
        p.write_text(text)
        return p

    def test_reads_nodes_and_points(self):
        nodes = draw_kdtree.read_nodes(self.write("n.csv", NODES))
        self.assertEqual(len(nodes), 4)
        self.assertEqual((nodes[1].depth, nodes[1].axis, nodes[1].split), (1, 1, 0.25))
        self.assertEqual(nodes[2].lo, (0.5, 0.0, 0.0))
        pts = draw_kdtree.read_ply_points(self.write("b.ply", PLY))
        self.assertEqual(pts, [(0.1, 0.2, 0.3), (0.4, 0.5, 0.6)])

    def test_segments_per_panel_and_level(self):
        nodes = draw_kdtree.read_nodes(self.write("n.csv", NODES))
        front = list(draw_kdtree.split_segments(nodes, 4, 0, 1))
        self.assertEqual(front, [(0, (0.5, 0.0), (0.5, 1.0)), (1, (0.0, 0.25), (0.5, 0.25))])
        top = list(draw_kdtree.split_segments(nodes, 4, 0, 2))
        self.assertEqual(top, [(0, (0.5, 0.0), (0.5, 1.0)), (1, (0.5, 0.75), (1.0, 0.75))])
        self.assertEqual(list(draw_kdtree.split_segments(nodes, 1, 0, 1)), [(0, (0.5, 0.0), (0.5, 1.0))])

    def test_bad_input_exits_2_naming_file_and_line(self):
        ply = self.write("b.ply", PLY)
        cases = {
            "header.csv": ("id,depth\n0,0\n", ":1:"),
            "fields.csv": (HEADER + "0,0,0\n", ":2: 3 fields"),
            "number.csv": (HEADER + "0,0,0,x,1,2,10,0,0,0,1,1,1\n", ":2:"),
            "axis.csv": (HEADER + "0,0,5,0.5,1,2,10,0,0,0,1,1,1\n", ":2: axis 5"),
            "empty.csv": (HEADER, "no nodes"),
        }
        for name, (text, words) in cases.items():
            with self.subTest(name):
                err = io.StringIO()
                with redirect_stderr(err):
                    rc = draw_kdtree.main(["--nodes", str(self.write(name, text)), "--ply", str(ply),
                                           "--out", str(self.tmp / "x.png")])
                self.assertEqual(rc, 2)
                self.assertIn(words, err.getvalue())
        err = io.StringIO()
        with redirect_stderr(err):
            rc = draw_kdtree.main(["--nodes", str(self.write("n.csv", NODES)), "--ply",
                                   str(self.write("t.ply", PLY.replace("0.4 0.5 0.6 1 2 \n", ""))),
                                   "--out", str(self.tmp / "x.png")])
        self.assertEqual(rc, 2)
        self.assertIn("2 vertices declared", err.getvalue())
        self.assertFalse((self.tmp / "x.png").exists())

    def test_without_matplotlib_exits_4_with_a_message(self):
        real_import = builtins.__import__

        def no_matplotlib(name, *args, **kwargs):
            if name == "matplotlib" or name.startswith("matplotlib."):
                raise ImportError("No module named 'matplotlib'")
            return real_import(name, *args, **kwargs)

        err = io.StringIO()
        with mock.patch("builtins.__import__", no_matplotlib), redirect_stderr(err):
            with self.assertRaises(SystemExit) as cm:
                draw_kdtree.main(["--nodes", str(self.write("n.csv", NODES)), "--ply", str(self.write("b.ply", PLY)),
                                  "--out", str(self.tmp / "x.png")])
        self.assertEqual(cm.exception.code, 4)
        self.assertIn("matplotlib is not installed", err.getvalue())


if __name__ == "__main__":
    unittest.main()
