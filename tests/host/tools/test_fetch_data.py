"""Unit tests of tools/fetch-data: argument handling, the data folder, and a
download from a local file:// "server" (no network needed)."""
from __future__ import annotations

import contextlib
import gzip
import io
import tempfile
import unittest
from pathlib import Path

from toolload import load_tool

fd = load_tool("fetch-data", "fetch_data")

SMALL = fd.Graph("NY", "New York City", 3, 2)


def write_gz(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="ascii") as f:
        f.write(text)


class ArgumentsTest(unittest.TestCase):
    def test_default_dest_from_environment(self):
        self.assertEqual(fd.default_dest({"CUDALAB_DATA_DIR": "/x/y"}), Path("/x/y"))
        self.assertEqual(fd.default_dest({"CUDALAB_DATA_DIR": ""}), Path("data"))
        self.assertEqual(fd.default_dest({}), Path("data"))

    def test_names(self):
        self.assertEqual([g.key for g in fd.resolve_names([])], ["NY"])
        self.assertEqual([g.key for g in fd.resolve_names(["fla", "NY", "FLA"])], ["FLA", "NY"])
        self.assertEqual([g.key for g in fd.resolve_names(["USA-road-d.BAY.gr"])], ["BAY"])
        self.assertEqual(len(fd.resolve_names(["all"])), len(fd.GRAPHS))
        with self.assertRaises(fd.FetchError) as cm:
            fd.resolve_names(["XYZ"])
        self.assertIn("unknown graph 'XYZ'", str(cm.exception))

    def test_published_counts(self):
        self.assertEqual((fd.BY_KEY["NY"].vertices, fd.BY_KEY["NY"].arcs), (264_346, 733_846))
        self.assertEqual((fd.BY_KEY["USA"].vertices, fd.BY_KEY["USA"].arcs), (23_947_347, 58_333_344))
        self.assertEqual(fd.url_of(fd.BY_KEY["NY"], "gr"),
                         "http://www.diag.uniroma1.it/challenge9/data/USA-road-d/USA-road-d.NY.gr.gz")

    def test_unknown_name_exits_2_without_network(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(fd.main(["nowhere"], environ={}), 2)
        self.assertIn("unknown graph", err.getvalue())

    def test_list_needs_no_network(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(fd.main(["--list"], environ={"CUDALAB_DATA_DIR": tmp}), 0)
            text = out.getvalue()
            self.assertIn(f"data folder: {tmp}", text)
            self.assertIn("USA-road-d.NY.gr", text)
            self.assertIn("264,346", text)
            self.assertNotIn("(present)", text)
            Path(tmp, "USA-road-d.NY.gr").write_text("c x\np sp 264346 733846\n")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                fd.main(["--list", "--dest", tmp], environ={})
            self.assertIn("USA-road-d.NY.gr (present)", out.getvalue())

    def test_bad_option_is_a_usage_error(self):
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as cm:
            fd.main(["--no-such-option"], environ={})
        self.assertEqual(cm.exception.code, 2)


class DownloadTest(unittest.TestCase):
    def test_fetch_from_a_local_server_and_skip_when_present(self):
        with tempfile.TemporaryDirectory() as tmp:
            server, dest = Path(tmp, "server"), Path(tmp, "dest")
            write_gz(server / "USA-road-d.NY.gr.gz", "c test\np sp 3 2\na 1 2 5\na 2 3 1\n")
            write_gz(server / "USA-road-d.NY.co.gz", "p aux sp co 3\nv 1 0 0\nv 2 1 1\nv 3 2 2\n")
            logs: list[str] = []
            for kind in ("gr", "co"):
                path = fd.fetch_one(SMALL, kind, dest, base_url=server.as_uri(), log=logs.append)
                self.assertTrue(path.is_file())
            self.assertIn("a 2 3 1", Path(dest, "USA-road-d.NY.gr").read_text())
            self.assertEqual(sorted(p.name for p in dest.iterdir()), ["USA-road-d.NY.co", "USA-road-d.NY.gr"])
            logs.clear()
            fd.fetch_one(SMALL, "gr", dest, base_url=server.as_uri(), log=logs.append)
            self.assertIn("already there", logs[0])

    def test_wrong_counts_are_rejected_and_nothing_is_left(self):
        with tempfile.TemporaryDirectory() as tmp:
            server, dest = Path(tmp, "server"), Path(tmp, "dest")
            write_gz(server / "USA-road-d.NY.gr.gz", "p sp 3 1\na 1 2 5\n")
            with self.assertRaises(fd.FetchError) as cm:
                fd.fetch_one(SMALL, "gr", dest, base_url=server.as_uri(), log=lambda s: None)
            self.assertIn("expected (3, 2)", str(cm.exception))
            self.assertEqual(list(dest.iterdir()), [])

    def test_unreachable_server_gives_a_clear_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            missing = Path(tmp, "no-server").as_uri()
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = fd.main(["NY", "--dest", str(Path(tmp, "d")), "--base-url", missing], environ={})
            self.assertEqual(code, 2)
            self.assertIn("cannot download", err.getvalue())
            self.assertIn("no network here?", err.getvalue())

    def test_not_gzip(self):
        with tempfile.TemporaryDirectory() as tmp:
            server = Path(tmp, "server")
            server.mkdir()
            Path(server, "USA-road-d.NY.gr.gz").write_text("<html>not found</html>")
            with self.assertRaises(fd.FetchError) as cm:
                fd.fetch_one(SMALL, "gr", Path(tmp, "d"), base_url=server.as_uri(), log=lambda s: None)
            self.assertIn("not a valid gzip file", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
