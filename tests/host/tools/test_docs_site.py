"""The Doxygen site's navigation, as a reader sees it: the main page, the chapters in
order, the guides, one "Measured results" page holding every report under a title
of its own, then the API reference. Builds the site from docs/Doxyfile.in into a
temporary folder (no Graphviz, no search index: a few seconds) and reads the
navigation tree Doxygen writes (navtreedata.js and the files it points to)."""
from __future__ import annotations

import fnmatch
import json
import re
import shutil
import subprocess
import tempfile
import unittest
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOXYFILE_IN = ROOT / "docs" / "Doxyfile.in"
RESULTS = ROOT / "docs" / "results"
DOXYGEN = shutil.which("doxygen")

# What docs/CMakeLists.txt fills in, but for the formulas: the tree does not depend on them.
CONFIGURED = {
    "PROJECT_VERSION": "0",
    "PROJECT_SOURCE_DIR": str(ROOT),
    "CUDALAB_DOXYGEN_INCLUDE_DIRS": " ".join(
        str(p) for p in sorted(ROOT.glob("chapters/*/include"))),
    "CUDALAB_MATHJAX_VERSION": "MathJax_3",
    "CUDALAB_MATHJAX_FORMAT": "chtml",
    "CUDALAB_MATHJAX_RELPATH": "https://cdn.jsdelivr.net/npm/mathjax@3",
    "CUDALAB_MATHJAX_EXTENSIONS": "",
    # docs/CMakeLists.txt's rule: a picture's section is enabled once the picture exists.
    "CUDALAB_DOXYGEN_SECTIONS": "bunny_picture" if (ROOT / "docs/results/07-kdtree-bunny.png").exists() else "",
}
# Appended to the configuration (later keys win): faster, and warnings are the
# business of the docs/doxygen CTest test, not of this one.
OVERRIDES = {
    "HAVE_DOT": "NO",
    "SEARCHENGINE": "NO",
    "WARN_AS_ERROR": "NO",
    "QUIET": "YES",
    "GENERATE_TREEVIEW": "YES",
}
API_ENTRIES = {"Namespaces", "Classes", "Files"}


def doxyfile_value(text: str, key: str) -> str:
    """The value of `key` in a Doxyfile, continuation lines joined."""
    m = re.search(rf"^{key}\s*=(.*?)(?<!\\)$", text, re.M | re.S)
    return m.group(1).replace("\\\n", " ") if m else ""


def report_files() -> list[Path]:
    """docs/results/*.md that Doxygen reads (EXCLUDE_PATTERNS honoured)."""
    excluded = doxyfile_value(DOXYFILE_IN.read_text(), "EXCLUDE_PATTERNS").split()
    return [p for p in sorted(RESULTS.glob("*.md"))
            if not any(fnmatch.fnmatch(str(p), pat) for pat in excluded)]


def first_heading(path: Path) -> str:
    """A Markdown page's title: its first '# ' line, without a {#label}."""
    for line in path.read_text().splitlines():
        if line.startswith("# "):
            return re.sub(r"\s*\{#[\w-]+\}\s*$", "", line[2:]).strip()
    raise AssertionError(f"{path.relative_to(ROOT)} has no '# ' heading")


class Node:
    def __init__(self, title: str, url: str | None, children: list[Node]):
        self.title, self.url, self.children = title, url, children

    def is_page(self) -> bool:
        return bool(self.url) and "#" not in self.url

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()


def js_array(path: Path) -> list:
    """The array of `var NAME = [...];` at the top of a navtree file."""
    text = path.read_text()
    m = re.search(r"=\s*\n?(\[.*?^\]);", text, re.M | re.S)
    assert m, f"no array in {path.name}"
    return json.loads(m.group(1))


def to_node(entry: list, html: Path) -> Node:
    title, url, children = entry[0], entry[1], entry[2]
    if isinstance(children, str):       # children kept in their own file, <name>.js
        children = js_array(html / f"{children}.js")
    return Node(title, url, [to_node(c, html) for c in (children or [])])


class DocsSite(unittest.TestCase):
    root: Node
    tmp: tempfile.TemporaryDirectory

    @classmethod
    def setUpClass(cls):
        if DOXYGEN is None:
            raise unittest.SkipTest("doxygen is not installed: the docs site is not built here")
        cls.tmp = tempfile.TemporaryDirectory(prefix="cudalab-docs-")
        out = Path(cls.tmp.name)
        text = re.sub(r"^#.*\n", "", DOXYFILE_IN.read_text(), flags=re.M)
        for key, value in {**CONFIGURED, "CMAKE_BINARY_DIR": str(out)}.items():
            text = text.replace(f"@{key}@", value)
        left = re.findall(r"@\w+@", text)
        assert not left, f"Doxyfile.in has variables this test does not fill in: {left}"
        text += "".join(f"\n{k} = {v}" for k, v in OVERRIDES.items()) + "\n"
        (out / "Doxyfile").write_text(text)
        run = subprocess.run([DOXYGEN, str(out / "Doxyfile")], cwd=ROOT, capture_output=True,
                             text=True, timeout=120)
        html = out / "html"
        if run.returncode != 0 or not (html / "navtreedata.js").exists():
            raise AssertionError(f"doxygen failed ({run.returncode}):\n{run.stderr[-3000:]}")
        top = js_array(html / "navtreedata.js")
        assert len(top) == 1, "the tree should have one root, the main page"
        cls.root = to_node(top[0], html)

    @classmethod
    def tearDownClass(cls):
        if hasattr(cls, "tmp"):
            cls.tmp.cleanup()

    def titles(self) -> list[str]:
        return [n.title for n in self.root.children]

    def index_of(self, title: str) -> int:
        titles = self.titles()
        self.assertIn(title, titles, f"no top-level entry '{title}' in {titles}")
        return titles.index(title)

    def test_main_page_then_chapters_in_order(self):
        chapters = sorted(p.parent.name for p in ROOT.glob("chapters/*/README.md"))
        self.assertTrue(chapters)
        first = self.root.children[:len(chapters)]
        self.assertEqual(self.root.url, "index.html")
        self.assertEqual([n.title.split(":")[0] for n in first],
                         [f"Chapter {int(c[:2])}" for c in chapters],
                         f"the tree should open with the chapters in order, not {self.titles()}")

    def test_guides_then_results_then_api(self):
        results = self.index_of("Measured results")
        chapter_last = max(i for i, t in enumerate(self.titles()) if t.startswith("Chapter "))
        guides = [self.index_of(first_heading(p)) for p in sorted(ROOT.glob("docs/guides/*.md"))]
        self.assertTrue(guides)
        self.assertTrue(all(chapter_last < g < results for g in guides),
                        f"guides should sit between the chapters and the results: {self.titles()}")
        api = [i for i, t in enumerate(self.titles()) if t in API_ENTRIES]
        self.assertTrue(api, "no API reference in the tree")
        self.assertTrue(all(i > results for i in api),
                        f"the API reference should come after the results: {self.titles()}")
        self.assertEqual(results + 1, min(api),
                         f"nothing should sit between the results and the API: {self.titles()}")

    def test_every_report_sits_under_measured_results(self):
        results = self.root.children[self.index_of("Measured results")]
        under = [n.title for n in results.children if n.is_page()]
        for path in report_files():
            if first_heading(path) == "Measured results":      # the page itself
                continue
            self.assertIn(first_heading(path), under,
                          f"{path.relative_to(ROOT)} is not listed (\\subpage) on the "
                          "'Measured results' page (docs/results/index.md)")
        elsewhere = {n.title for top in self.root.children if top is not results
                     for n in top.walk()}
        for path in report_files():
            self.assertNotIn(first_heading(path), elsewhere - {"Measured results"},
                             f"{path.relative_to(ROOT)} shows outside 'Measured results'")

    def test_report_titles_are_distinct(self):
        titles = Counter(first_heading(p) for p in report_files())
        same = {t: n for t, n in titles.items() if n > 1}
        self.assertFalse(same, f"reports share a title (give each its own first heading; "
                               f"tools/gpu-check and tools/bench-report write generic ones): {same}")

    def test_no_two_pages_share_a_title(self):
        # The API reference's index pages ("All", "Functions", ...) repeat by design.
        pages = Counter(n.title for top in self.root.children if top.title not in API_ENTRIES
                        for n in top.walk() if n.is_page())
        pages[self.root.title] += 1
        same = {t: n for t, n in pages.items() if n > 1}
        self.assertFalse(same, f"pages of the site share a title: {same}")


if __name__ == "__main__":
    unittest.main()
