"""docs/colab/cudalab.ipynb: a valid nbformat 4 notebook whose install and grade cells
stay in step with README.md's "Setup" and "The two commands" blocks."""
from __future__ import annotations

import json
import re
import shlex
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOK = ROOT / "docs" / "colab" / "cudalab.ipynb"
README = ROOT / "README.md"
GETTING_STARTED = ROOT / "docs" / "guides" / "getting-started.md"

sys.path.insert(0, str(ROOT / "tools"))
from cudalab_grade.manifest import find_exercise, load_all  # noqa: E402

# apt-get options that change how it runs, not what it installs.
APT_QUIET_OPTIONS = {"-y", "-q", "-qq", "--yes", "--quiet", "--no-install-recommends"}


def readme_block(heading: str) -> list[str]:
    """The command lines (comments and blank lines dropped) of the first fenced block
    under README.md's '## <heading>'."""
    text = README.read_text()
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"README.md has no section '## {heading}'"
    block = re.search(r"^```[a-z]*\n(.*?)^```", m.group(1), re.M | re.S)
    assert block, f"README.md's '## {heading}' has no fenced block"
    lines = []
    for line in block.group(1).splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            lines.append(line)
    return lines


def notebook() -> dict:
    return json.loads(NOTEBOOK.read_text())


def source(cell: dict) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def shell_lines(nb: dict) -> list[str]:
    """The notebook's shell commands: its code cells' '!' lines, comments dropped."""
    out = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        for line in source(cell).splitlines():
            line = line.strip()
            if line.startswith("!"):
                out.append(line[1:].split(" #", 1)[0].strip())
    return out


def apt_command(line: str) -> tuple[str, tuple[str, ...]] | None:
    """'sudo apt-get install -y a b' -> ('install', ('a', 'b')); None if not apt-get."""
    words = shlex.split(line)
    if words and words[0] == "sudo":
        words = words[1:]
    if not words or words[0] != "apt-get":
        return None
    words = [w for w in words[1:] if w not in APT_QUIET_OPTIONS]
    return words[0], tuple(words[1:])


class NotebookFormat(unittest.TestCase):
    def test_valid_nbformat_4(self):
        nb = notebook()
        self.assertEqual(nb["nbformat"], 4)
        self.assertIsInstance(nb["nbformat_minor"], int)
        self.assertIsInstance(nb["metadata"], dict)
        self.assertEqual(nb["metadata"].get("accelerator"), "GPU", "Colab should open it on a GPU runtime")
        self.assertTrue(nb["cells"])
        ids = set()
        for cell in nb["cells"]:
            self.assertIn(cell["cell_type"], ("markdown", "code"))
            self.assertIsInstance(cell["metadata"], dict)
            src = cell["source"]
            self.assertTrue(isinstance(src, str) or all(isinstance(s, str) for s in src))
            if nb["nbformat_minor"] >= 5:
                self.assertRegex(cell["id"], r"^[A-Za-z0-9_-]{1,64}$")
                self.assertNotIn(cell["id"], ids)
                ids.add(cell["id"])
            if cell["cell_type"] == "code":
                # Committed clean: no outputs from someone's run.
                self.assertEqual(cell["outputs"], [])
                self.assertIsNone(cell["execution_count"])

    def test_says_what_it_needs(self):
        text = "\n".join(source(c) for c in notebook()["cells"] if c["cell_type"] == "markdown")
        self.assertIn("GPU runtime", text)
        self.assertIn("T4", text)
        self.assertIn("sm_75", text)

    def test_getting_started_links_it(self):
        self.assertIn("docs/colab/cudalab.ipynb", GETTING_STARTED.read_text())


class NotebookInStepWithReadme(unittest.TestCase):
    def test_installs_the_readme_packages(self):
        readme = [a for a in map(apt_command, readme_block("Setup")) if a]
        self.assertTrue(readme, "README.md's Setup block has no apt-get line")
        nb = [a for a in map(apt_command, shell_lines(notebook())) if a]
        self.assertEqual(nb, readme, "the notebook's apt-get lines differ from README.md's Setup")

    def test_puts_the_readme_path_first(self):
        exports = [re.fullmatch(r"export PATH=(\S+):\$PATH", line) for line in readme_block("Setup")]
        dirs = [m.group(1) for m in exports if m]
        self.assertEqual(len(dirs), 1, "README.md's Setup should export one PATH")
        code = "\n".join(source(c) for c in notebook()["cells"] if c["cell_type"] == "code")
        self.assertIn(f'os.environ["PATH"] = "{dirs[0]}:" + os.environ["PATH"]', code)

    def test_grades_with_the_readme_command(self):
        grade = readme_block("The two commands")[0].split()
        self.assertEqual(grade, ["tools/grade"])
        runs = [shlex.split(line) for line in shell_lines(notebook())
                if shlex.split(line)[:1] == grade]
        self.assertEqual(runs, [grade + ["1.1"]], "the notebook grades exercise 1.1 with tools/grade")
        find_exercise(load_all(ROOT), "1.1")  # raises if 1.1 is gone

    def test_readme_block_parser(self):
        self.assertIn("cmake --workflow --preset ci", readme_block("The two commands"))


if __name__ == "__main__":
    unittest.main()
