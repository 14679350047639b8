"""The class's similarity report (tools/grade --submissions DIR --similarity, similarity.py) on a
generated class of exercise 1.1 (sum_atomic): copies, disguised in four ways, must be flagged;
two solutions written independently, and two untouched starters, must not be; hostile student
ids and code must reach similarity.md and .html as text. Reads files only: no build, no GPU.

The comparisons need copydetect (and numpy, pygments, jinja2, tqdm); without them those tests
skip, naming the missing module, and the test of the setup-problem message still runs."""
from __future__ import annotations

import contextlib
import csv
import io
import re
import stat
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile
from pathlib import Path

from toolload import load_tool

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tools"))
grade_cli = load_tool("grade", "cudalab_grade_cli_similarity")
from cudalab_grade import leaderboard, signing, similarity  # noqa: E402
from cudalab_grade.manifest import find_exercise, load_all  # noqa: E402

EXERCISE = find_exercise(load_all(REPO), "1.1")
STARTER = (REPO / EXERCISE.source("starter")).read_text()
TODO = """  // TODO(1.1): compute this thread's global index i (blockIdx, blockDim,
  // threadIdx; mind that i can exceed 2^31) and, when i < n, add in[i] to
  // *out with cudalab::atomic_add (cudalab/atomics.cuh).
"""
KERNEL_COMMENT = "// One thread per element: thread i adds in[i] to *out.\n"

# Student A's solution: a grid-stride loop, a shared-memory tree, one atomic per block.
TREE_HELPERS = """\
// Sums one value per thread of the block in shared memory; the block's total in shared[0].
template <class Acc>
__device__ Acc tree_reduce(Acc* shared, Acc value) {
  const unsigned tid = threadIdx.x;
  shared[tid] = value;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) shared[tid] += shared[tid + stride];
    __syncthreads();
  }
  return shared[0];
}

// This thread's share of the input, strided by the whole grid.
template <class T, class Acc>
__device__ Acc grid_stride_sum(const T* __restrict__ in, std::size_t n) {
  Acc local = Acc(0);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    local += static_cast<Acc>(in[i]);
  }
  return local;
}

"""
TREE_BODY = """\
  __shared__ Acc partial[kBlock];
  const Acc mine = grid_stride_sum<T, Acc>(in, n);
  const Acc block_total = tree_reduce(partial, mine);
  if (threadIdx.x == 0) atomic_add(out, block_total);
"""

# The same, reformatted: Allman braces, braces around single statements, other spacing.
TREE_HELPERS_REFORMATTED = """\
template<class Acc>
__device__ Acc tree_reduce( Acc *shared, Acc value )
{
    const unsigned tid=threadIdx.x;
    shared[ tid ]=value;
    __syncthreads( );
    for( unsigned stride=blockDim.x/2; stride>0; stride>>=1 )
    {
        if( tid<stride )
        {
            shared[ tid ]+=shared[ tid+stride ];
        }
        __syncthreads( );
    }
    return shared[ 0 ];
}
template<class T,class Acc>
__device__ Acc grid_stride_sum( const T *__restrict__ in,std::size_t n )
{
    Acc local=Acc( 0 );
    const std::size_t stride=static_cast< std::size_t >( gridDim.x )*blockDim.x;
    for( std::size_t i=blockIdx.x*static_cast< std::size_t >( blockDim.x )+threadIdx.x;
         i<n;
         i+=stride )
        local+=static_cast< Acc >( in[ i ] );
    return local;
}
"""
TREE_BODY_REFORMATTED = """\
    __shared__ Acc partial[ kBlock ];
    const Acc mine=grid_stride_sum< T,Acc >( in,n );
    const Acc block_total=tree_reduce( partial,mine );
    if( threadIdx.x==0 )
    {
        atomic_add( out,block_total );
    }
"""

# Student F's solution, written independently: a warp-shuffle sum, one atomic per warp.
SHUFFLE_HELPERS = """\
template <class V>
__device__ __forceinline__ V warp_total(V x) {
#pragma unroll
  for (int d = 16; d >= 1; d /= 2) x += __shfl_down_sync(0xffffffffu, x, d);
  return x;
}

"""
SHUFFLE_BODY = """\
  const std::size_t g = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  Acc x = g < n ? static_cast<Acc>(in[g]) : Acc{};
  x = warp_total(x);
  if ((threadIdx.x & 31u) == 0u) atomic_add(out, x);
"""

RENAMES = {"tree_reduce": "block_sum", "shared": "buf", "value": "v", "tid": "t",
           "stride": "step", "grid_stride_sum": "accumulate_strided", "local": "acc",
           "partial": "scratch", "mine": "my_part", "block_total": "total"}
HOSTILE_ID = '=HYPERLINK("e")<img src=x onerror=alert(1)>|`x`[a](javascript:b)'
HOSTILE_LINE = ('  const char* note = "</pre></td><script>alert(1)</script>``` <!-- | [x](y) '
                '\x1b[31m";\n')


def solution(helpers: str, body: str) -> str:
    """The starter with the helpers before the kernel and body in place of the TODO."""
    assert TODO in STARTER and KERNEL_COMMENT in STARTER
    return STARTER.replace(TODO, body).replace(KERNEL_COMMENT, helpers + KERNEL_COMMENT)


def renamed(text: str) -> str:
    pattern = re.compile(r"\b(" + "|".join(RENAMES) + r")\b")
    return pattern.sub(lambda m: RENAMES[m.group(1)], text)


def reordered(helpers: str) -> str:
    first, second = helpers.split("\n\n// This thread's")
    return "// This thread's" + second.rstrip("\n") + "\n\n" + first + "\n\n"


def make_class(dest: Path) -> dict[str, str]:
    """The class in dest; student -> what the submission is."""
    orig = solution(TREE_HELPERS, TREE_BODY)
    subs = {
        "alice": ("original", orig),
        "bob": ("copy, comments changed", orig.replace("// Sums one value", "// my own sum of")
                .replace("// This thread's share", "// strided loop, written by bob")),
        "carol": ("renamed identifiers", renamed(orig)),
        "dave": ("reformatted", solution(TREE_HELPERS_REFORMATTED, TREE_BODY_REFORMATTED)),
        "erin": ("functions reordered", solution(reordered(TREE_HELPERS), TREE_BODY)),
        "frank": ("independent", solution(SHUFFLE_HELPERS, SHUFFLE_BODY)),
        "gina": ("starter", STARTER),
        "hank": ("starter", STARTER),
        HOSTILE_ID: ("copy with hostile text",
                     solution(TREE_HELPERS, HOSTILE_LINE + TREE_BODY)),
    }
    rel = f"{EXERCISE.chapter_dir}/{EXERCISE.file}"
    for student, (_, text) in subs.items():
        if student == "dave":      # an archive, unpacked as for grading
            with zipfile.ZipFile(dest / "dave.zip", "w") as z:
                z.writestr(f"dave/{rel}", text)
        elif student == "erin":
            data = text.encode()
            with tarfile.open(dest / "erin.tar.gz", "w:gz") as t:
                info = tarfile.TarInfo(f"starter/{rel}")
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
        else:
            f = dest / student / rel
            f.parent.mkdir(parents=True)
            f.write_text(text)
    return {s: what for s, (what, _) in subs.items()}


COPIES = {"alice", "bob", "carol", "dave", "erin", HOSTILE_ID}


def _copydetect_missing() -> str | None:
    try:
        similarity.load_copydetect()
    except similarity.Missing as e:
        return e.module
    return None


MISSING = _copydetect_missing()
SKIP_WHY = (f"the similarity report needs the Python module {MISSING}, not installed here "
            f"(install: {similarity.INSTALL})")


def grade(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = grade_cli.main(list(argv), root=REPO)
    return code, out.getvalue(), err.getvalue()


@unittest.skipIf(MISSING is not None, SKIP_WHY)
class SimilarityClassTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="cudalab-sim-test-"))
        cls.klass = cls.tmp / "class"
        cls.klass.mkdir()
        cls.kinds = make_class(cls.klass)
        cls.out = cls.tmp / "out"
        cls.code, cls.stdout, cls.stderr = grade("1.1", "--submissions", str(cls.klass),
                                                 "--similarity", "--out", str(cls.out), "-q")
        cls.md = (cls.out / "similarity.md").read_text()
        cls.html = (cls.out / "similarity.html").read_text()
        key = signing.load(cls.out).key
        cls.names = leaderboard.pseudonyms(key, list(cls.kinds))
        ex = [EXERCISE]
        cls.results, _, _ = similarity.run(REPO, cls.klass, ex)
        cls.pairs = {frozenset((p.a.student, p.b.student)): p
                     for p in cls.results[0].flagged}

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_cli_writes_the_report(self):
        self.assertEqual(self.code, 0, self.stderr)
        self.assertIn("similarity.md", self.stdout)
        mapping = self.out / "pseudonyms.csv"
        self.assertEqual(stat.S_IMODE(mapping.stat().st_mode), 0o600)
        rows = list(csv.reader(io.StringIO(mapping.read_text())))
        self.assertEqual(rows[0], ["pseudonym", "student"])
        got = {r[1]: r[0] for r in rows[1:]}
        self.assertEqual(got["alice"], self.names["alice"])
        # the hostile id is a text cell in the CSV, not a formula
        self.assertEqual(got["'" + HOSTILE_ID], self.names[HOSTILE_ID])
        self.assertEqual(len(got), len(self.kinds))

    def test_every_copy_flagged(self):
        for a in sorted(COPIES):
            for b in sorted(COPIES):
                if a < b:
                    p = self.pairs.get(frozenset((a, b)))
                    self.assertIsNotNone(p, f"{self.kinds[a]} ({a}) and {self.kinds[b]} ({b}) "
                                            "not flagged")
                    self.assertGreaterEqual(p.score, 0.8, (a, b))
        # and in the reports, by pseudonym: alice with each of the four disguises
        for other in ("bob", "carol", "dave", "erin"):
            pair = re.compile(rf"\| \d+ \| ({self.names['alice']} \| {self.names[other]}|"
                              rf"{self.names[other]} \| {self.names['alice']}) \|")
            self.assertRegex(self.md, pair, self.kinds[other])
            self.assertIn(self.names[other], self.html)

    def test_independent_solutions_and_starters_not_flagged(self):
        for p in self.results[0].flagged:
            for s in (p.a.student, p.b.student):
                self.assertIn(s, COPIES, f"{s} ({self.kinds[s]}) flagged with "
                                         f"{p.a.student}/{p.b.student} at {p.score:.2f}")
        self.assertEqual(len(self.pairs), len(COPIES) * (len(COPIES) - 1) // 2)
        for s in ("frank", "gina", "hank"):
            self.assertNotRegex(self.md, rf"\| \d+ \| [^\n]*{self.names[s]}")

    def test_given_code_stripped(self):
        # an untouched starter keeps nothing of its own: nothing to compare
        given = similarity.starter_lines(REPO, EXERCISE)
        if (REPO / EXERCISE.source("solution")).is_file():
            self.assertFalse(all(given[1]), "the placeholders of the regions are not given code")
        else:   # the student edition: no regions to read, the whole starter counts as given
            self.assertTrue(all(given[1]))
        left = similarity.student_code(STARTER, given)
        self.assertNotIn("launch", left)
        self.assertNotIn("run_sum", left)
        self.assertNotIn("TODO", left)
        self.assertEqual(self.results[0].starter_only, 2)       # gina and hank
        self.assertEqual(self.results[0].compared, len(self.kinds) - 2)
        # the student's own code stays, the given launch code goes, comments go
        mine = similarity.student_code(solution(TREE_HELPERS, TREE_BODY), given)
        self.assertIn("tree_reduce(partial, mine)", mine)
        self.assertIn("__syncthreads();", mine)
        self.assertNotIn("cudaMemsetAsync", mine)
        self.assertNotIn("sum_atomic(const int*", mine)
        self.assertNotIn("Sums one value", mine)
        # without the stripping, two untouched starters are the same file: copydetect says 100 %
        cd = similarity.load_copydetect()
        r = similarity.compare_exercise(cd, EXERCISE, {"gina": STARTER, "hank": STARTER}, "",
                                        similarity.THRESHOLD)
        self.assertEqual(len(r.flagged), 1)
        r = similarity.compare_exercise(
            cd, EXERCISE, {s: similarity.student_code(STARTER, given) for s in ("gina", "hank")},
            similarity.strip_comments(STARTER), similarity.THRESHOLD)
        self.assertEqual((r.flagged, r.starter_only), ([], 2))

    def test_hostile_id_and_code_are_text(self):
        hostile = self.names[HOSTILE_ID]
        self.assertIn(hostile, self.md)
        for text in (self.md, self.html):
            self.assertNotIn(HOSTILE_ID, text)
            self.assertNotIn("<img", text)
            self.assertNotIn("\x1b", text)
        # HTML: the code is escaped, no script can run (and the page's policy forbids it)
        self.assertNotIn("<script", self.html)
        self.assertIn("&lt;/pre&gt;&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;", self.html)
        self.assertIn("default-src 'none'", self.html)
        self.assertEqual(self.html.count("<pre>"), self.html.count("</pre>"))
        self.assertEqual(re.findall(r"<(/?)(\w+)", self.html.replace("<mark>", "")
                                    .replace("</mark>", ""))[:3], [("", "html"), ("", "head"),
                                                                  ("", "meta")])
        # Markdown: the code sits in fenced blocks that no line of it can close
        self.assertNotIn("<script", self.md.replace("</pre></td><script>", ""))
        in_fence, fence = False, ""
        for line in self.md.split("\n"):
            if not in_fence and re.fullmatch(r"`{3,}", line):
                in_fence, fence = True, line
            elif in_fence and line == fence:
                in_fence = False
            elif not in_fence:
                self.assertNotIn("<script", line)
                self.assertNotRegex(line, r"(?<!\\)\[x\]\(y\)")
        self.assertFalse(in_fence)
        self.assertIn("</pre></td><script>alert(1)</script>```", self.md)   # inside a fence

    def test_report_escaping_of_a_hostile_name_and_note(self):
        # escaping does not rely on the pseudonyms: a hostile name given to the writers is text
        p = self.pairs[frozenset(("alice", "bob"))]
        r = similarity.ExerciseResult(EXERCISE, compared=2, pairs=1, flagged=[p],
                                      closest=p.score)
        names = {"alice": HOSTILE_ID, "bob": "bob"}
        md = similarity.markdown([r], names, 0.5, [HOSTILE_ID + ": not read (x)"], "0.5.0")
        page = similarity.html_page([r], names, 0.5, [HOSTILE_ID + ": not read (x)"], "0.5.0")
        self.assertNotRegex(md, r"(?<!\\)<img")
        self.assertNotIn("<img", page)
        self.assertIn("&lt;img src=x onerror=alert(1)&gt;", page)
        self.assertIn("\\<img src=x onerror=alert(1)\\>\\|\\`x\\`\\[a\\]", md)

    def test_threshold_option(self):
        out = self.tmp / "strict"
        code, _, err = grade("1.1", "--submissions", str(self.klass), "--similarity",
                             "--similarity-threshold", "1", "--out", str(out), "-q")
        self.assertEqual(code, 0, err)
        code, _, err = grade("1.1", "--submissions", str(self.klass), "--similarity",
                             "--similarity-threshold", "1.5", "--out", str(out), "-q")
        self.assertEqual(code, 2)
        self.assertIn("--similarity-threshold", err)


class MappingTest(unittest.TestCase):
    def test_one_map_for_the_leaderboard_and_the_similarity_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            key = signing.load_or_create(out).key
            a = leaderboard.pseudonyms(key, ["ann", "=bad"])
            b = leaderboard.pseudonyms(key, ["ann", "cy"])
            leaderboard.write_mapping(out, a)     # e.g. the leaderboard
            leaderboard.write_mapping(out, b)     # then the similarity report of other students
            rows = list(csv.reader(io.StringIO((out / "pseudonyms.csv").read_text())))
            self.assertEqual(stat.S_IMODE((out / "pseudonyms.csv").stat().st_mode), 0o600)
            self.assertEqual(sorted(rows[1:]), sorted([[a["ann"], "ann"], [a["=bad"], "'=bad"],
                                                       [b["cy"], "cy"]]))


class SetupProblemTest(unittest.TestCase):
    def test_missing_copydetect_is_a_setup_problem(self):
        """Without copydetect: exit 4, the module named and the install command; no traceback."""
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "class").mkdir()
            script = ("import sys; sys.modules['copydetect'] = None\n"
                      "from toolload import load_tool\n"
                      "g = load_tool('grade', 'g')\n"
                      f"sys.exit(g.main(['--submissions', {str(Path(tmp) / 'class')!r}, "
                      f"'--similarity', '--out', {str(Path(tmp) / 'out')!r}]))\n")
            p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                               cwd=Path(__file__).parent, timeout=120)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("setup problem: the Python module copydetect is not installed", p.stderr)
        self.assertIn("pip install --no-deps --break-system-packages copydetect==0.5.0", p.stderr)
        self.assertNotIn("Traceback", p.stderr)

    def test_missing_dependency_is_named(self):
        script = ("import sys; sys.modules['numpy'] = None; sys.modules.pop('copydetect', None)\n"
                  "sys.path.insert(0, 'tools')\n"
                  "from cudalab_grade import similarity\n"
                  "try:\n    similarity.load_copydetect()\nexcept similarity.Missing as e:\n"
                  "    print('missing', e.module)\n")
        p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           cwd=REPO, timeout=120)
        self.assertIn("missing numpy" if MISSING in (None, "numpy") else f"missing {MISSING}",
                      p.stdout, p.stderr)

    def test_usage_errors(self):
        code, _, err = grade("--similarity")
        self.assertEqual(code, 2)
        self.assertIn("--submissions", err)


if __name__ == "__main__":
    unittest.main()
