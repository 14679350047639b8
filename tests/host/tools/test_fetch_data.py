"""Unit tests of tools/fetch-data: argument handling, the data folder, and
downloads from a local file:// "server" (no network needed): gzipped road
graphs, and the Stanford bunny read out of a synthetic tar.gz archive."""
from __future__ import annotations

import contextlib
import gzip
import io
import tarfile
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


def ply_text(vertices: int, faces: int, header_vertices: int | None = None, body_vertices: int | None = None) -> str:
    """An ASCII PLY laid out like bun_zipper.ply: the same header lines (with
    the given counts), then vertex lines 'x y z confidence intensity' and
    triangle lines. header_vertices / body_vertices make a wrong or short file."""
    hv = vertices if header_vertices is None else header_vertices
    bv = vertices if body_vertices is None else body_vertices
    lines = ["ply", "format ascii 1.0", "comment zipper output", f"element vertex {hv}",
             "property float x", "property float y", "property float z",
             "property float confidence", "property float intensity",
             f"element face {faces}", "property list uchar int vertex_indices", "end_header"]
    lines += [f"{i * 0.001:.6f} {0.1 + i * 1e-6:.6f} -0.02 1 0.5 " for i in range(bv)]
    lines += [f"3 {i % max(vertices, 1)} {(i + 1) % max(vertices, 1)} {(i + 2) % max(vertices, 1)} " for i in range(faces)]
    return "\n".join(lines) + "\n"


def write_tgz(path: Path, members: dict[str, str], links: dict[str, str] | None = None) -> None:
    """A tar.gz holding the folders of the members, then the members (name:
    text) and symbolic links (name: target)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        folders = sorted({str(Path(n).parent) for n in [*members, *(links or {})]} - {"."})
        for folder in folders:
            info = tarfile.TarInfo(folder)
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
        for name, text in members.items():
            data = text.encode("ascii")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tar.addfile(info)


def small_bunny(server: Path) -> "fd.Cloud":
    """The bunny with 3 vertices and 1 face, served from server/bunny.tar.gz."""
    return fd.BUNNY._replace(url=(server / "bunny.tar.gz").as_uri(), vertices=3, faces=1)


class ArgumentsTest(unittest.TestCase):
    def test_default_dest_from_environment(self):
        self.assertEqual(fd.default_dest({"CUDALAB_DATA_DIR": "/x/y"}), Path("/x/y"))
        self.assertEqual(fd.default_dest({"CUDALAB_DATA_DIR": ""}), Path("data"))
        self.assertEqual(fd.default_dest({}), Path("data"))

    def test_names(self):
        self.assertEqual([g.key for g in fd.resolve_names([])], ["NY"])
        self.assertEqual([g.key for g in fd.resolve_names(["fla", "NY", "FLA"])], ["FLA", "NY"])
        self.assertEqual([g.key for g in fd.resolve_names(["USA-road-d.BAY.gr"])], ["BAY"])
        self.assertEqual(fd.resolve_names(["all"]), [*fd.GRAPHS, fd.BUNNY])
        self.assertEqual(fd.resolve_names(["Bunny", "NY", "bunny", "bun_zipper.ply"]), [fd.BUNNY, fd.BY_KEY["NY"]])
        with self.assertRaises(fd.FetchError) as cm:
            fd.resolve_names(["XYZ"])
        self.assertIn("unknown data set 'XYZ'", str(cm.exception))
        self.assertIn("bunny", str(cm.exception))

    def test_bunny_published_counts_and_source(self):
        self.assertEqual((fd.BUNNY.vertices, fd.BUNNY.faces), (35_947, 69_451))
        self.assertEqual(fd.BUNNY.url, "http://graphics.stanford.edu/pub/3Dscanrep/bunny.tar.gz")
        self.assertEqual(fd.BUNNY.member, "bunny/reconstruction/bun_zipper.ply")
        self.assertEqual(fd.BUNNY.filename, "bun_zipper.ply")

    def test_published_counts(self):
        self.assertEqual((fd.BY_KEY["NY"].vertices, fd.BY_KEY["NY"].arcs), (264_346, 733_846))
        self.assertEqual((fd.BY_KEY["USA"].vertices, fd.BY_KEY["USA"].arcs), (23_947_347, 58_333_344))
        self.assertEqual(fd.url_of(fd.BY_KEY["NY"], "gr"),
                         "http://www.diag.uniroma1.it/challenge9/data/USA-road-d/USA-road-d.NY.gr.gz")

    def test_unknown_name_exits_2_without_network(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(fd.main(["nowhere"], environ={}), 2)
        self.assertIn("unknown data set", err.getvalue())

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
            self.assertIn("bun_zipper.ply", text)
            self.assertIn("35,947", text)
            self.assertNotIn("bun_zipper.ply (present)", out.getvalue())
            Path(tmp, "bun_zipper.ply").write_text(ply_text(35_947, 69_451))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                fd.main(["--list", "--dest", tmp], environ={})
            self.assertIn("bun_zipper.ply (present)", out.getvalue())

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


class BunnyTest(unittest.TestCase):
    def test_ply_check(self):
        with tempfile.TemporaryDirectory() as tmp:
            path, small = Path(tmp, "b.ply"), fd.BUNNY._replace(vertices=3, faces=1)
            path.write_text(ply_text(3, 1))
            self.assertIsNone(fd.ply_problem(path, small))
            self.assertIn("expected 35947 and 69451", fd.ply_problem(path, fd.BUNNY))
            path.write_text(ply_text(3, 1).replace("format ascii 1.0", "format binary_little_endian 1.0"))
            self.assertIn("expected 'ascii 1.0'", fd.ply_problem(path, small))
            path.write_text(ply_text(3, 1).replace("end_header\n", ""))
            self.assertIsNotNone(fd.ply_problem(path, small))
            path.write_text(ply_text(3, 1).replace("0.000000 ", "zero ", 1))
            self.assertIn("vertex line 1 is malformed", fd.ply_problem(path, small))
            path.write_text("<html>not found</html>\n")
            self.assertIn("not a PLY file", fd.ply_problem(path, small))
            self.assertIn("cannot read it", fd.ply_problem(Path(tmp, "missing.ply"), small))

    def test_fetch_the_real_sized_bunny_and_skip_when_present(self):
        with tempfile.TemporaryDirectory() as tmp:
            server, dest = Path(tmp, "server"), Path(tmp, "dest")
            text = ply_text(35_947, 69_451)
            write_tgz(server / "bunny.tar.gz", {
                "bunny/README": "Stanford bunny\n",
                "bunny/data/bun000.ply": ply_text(4, 0),
                "bunny/reconstruction/bun_zipper_res2.ply": ply_text(8, 4),
                "bunny/reconstruction/bun_zipper.ply": text,
            })
            bunny = fd.BUNNY._replace(url=(server / "bunny.tar.gz").as_uri())
            logs: list[str] = []
            path = fd.fetch_cloud(bunny, dest, log=logs.append)
            self.assertEqual(path, dest / "bun_zipper.ply")
            self.assertEqual(path.read_text(), text)
            self.assertEqual([p.name for p in dest.iterdir()], ["bun_zipper.ply"])
            logs.clear()
            fd.fetch_cloud(bunny, dest, log=logs.append)
            self.assertIn("already there", logs[0])
            logs.clear()
            fd.fetch_cloud(bunny, dest, force=True, log=logs.append)
            self.assertIn("bunny.tar.gz", logs[0])
            self.assertEqual([p.name for p in dest.iterdir()], ["bun_zipper.ply"])

    def test_main_fetches_nothing_when_the_bunny_is_present(self):
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "bun_zipper.ply").write_text(ply_text(35_947, 69_451))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(fd.main(["BUNNY"], environ={"CUDALAB_DATA_DIR": tmp}), 0)
            self.assertIn("already there", out.getvalue())

    def test_member_with_dot_slash_prefix(self):
        with tempfile.TemporaryDirectory() as tmp:
            server, dest = Path(tmp, "server"), Path(tmp, "dest")
            write_tgz(server / "bunny.tar.gz", {"./bunny/reconstruction/bun_zipper.ply": ply_text(3, 1)})
            fd.fetch_cloud(small_bunny(server), dest, log=lambda s: None)
            self.assertEqual(Path(dest, "bun_zipper.ply").read_text(), ply_text(3, 1))

    def assert_rejected(self, server_setup, message: str) -> None:
        """Fetching the small bunny from what server_setup(server) writes fails
        with message, and leaves nothing in dest."""
        with tempfile.TemporaryDirectory() as tmp:
            server, dest = Path(tmp, "server"), Path(tmp, "dest")
            server.mkdir()
            server_setup(server)
            with self.assertRaises(fd.FetchError) as cm:
                fd.fetch_cloud(small_bunny(server), dest, log=lambda s: None)
            self.assertIn(message, str(cm.exception))
            self.assertEqual(list(dest.iterdir()), [])

    def test_wrong_vertex_count_is_rejected(self):
        self.assert_rejected(
            lambda server: write_tgz(server / "bunny.tar.gz",
                                     {"bunny/reconstruction/bun_zipper.ply": ply_text(2, 1)}),
            "header gives 2 vertices and 1 faces, expected 3 and 1")

    def test_truncated_file_is_rejected(self):
        self.assert_rejected(
            lambda server: write_tgz(server / "bunny.tar.gz",
                                     {"bunny/reconstruction/bun_zipper.ply": ply_text(3, 1, body_vertices=2)}),
            "expected 4 (a truncated file)")

    def test_archive_without_the_member_is_rejected(self):
        self.assert_rejected(
            lambda server: write_tgz(server / "bunny.tar.gz", {"bunny/data/bun000.ply": ply_text(3, 1)}),
            "the archive has no member bunny/reconstruction/bun_zipper.ply")

    def test_link_member_is_rejected(self):
        self.assert_rejected(
            lambda server: write_tgz(server / "bunny.tar.gz", {"bunny/data/bun000.ply": ply_text(3, 1)},
                                     links={"bunny/reconstruction/bun_zipper.ply": "/etc/passwd"}),
            "is not a regular file")

    def test_not_an_archive_is_rejected(self):
        self.assert_rejected(lambda server: Path(server, "bunny.tar.gz").write_text("<html>not found</html>"),
                             "not a valid tar.gz archive")

    def test_truncated_archive_is_rejected(self):
        def setup(server: Path) -> None:
            write_tgz(server / "full.tar.gz", {"bunny/reconstruction/bun_zipper.ply": ply_text(3000, 1000)})
            data = Path(server, "full.tar.gz").read_bytes()
            Path(server, "bunny.tar.gz").write_bytes(data[: len(data) // 2])
        self.assert_rejected(setup, "not a valid tar.gz archive")

    def test_unreachable_server_says_what_to_do_by_hand(self):
        with tempfile.TemporaryDirectory() as tmp:
            bunny = fd.BUNNY._replace(url=Path(tmp, "no-server", "bunny.tar.gz").as_uri())
            with self.assertRaises(fd.FetchError) as cm:
                fd.fetch_cloud(bunny, Path(tmp, "d"), log=lambda s: None)
            self.assertIn("cannot download", str(cm.exception))
            self.assertIn("tar xzf bunny.tar.gz bunny/reconstruction/bun_zipper.ply", str(cm.exception))
            self.assertEqual(list(Path(tmp, "d").iterdir()), [])


if __name__ == "__main__":
    unittest.main()
