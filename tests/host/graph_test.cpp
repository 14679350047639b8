// Host tests of the graph infrastructure shared by chapters 5 and 6
// (chapters/common/include/cudalab/graph/): CSR building and checks, ELL,
// the DIMACS and Matrix Market loaders on good and malformed files, the
// generators, and the CPU Dijkstra against Boost.Graph's. No GPU needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "cudalab/error.cuh"
#include "cudalab/graph/csr.cuh"
#include "cudalab/graph/csr.hpp"
#include "cudalab/graph/dijkstra_reference.hpp"
#include "cudalab/graph/generators.hpp"
#include "cudalab/graph/io.hpp"
#include "cudalab/graph/road_data.hpp"
#ifdef CUDALAB_HAVE_BOOST_GRAPH
#include "cudalab/graph/boost_dijkstra.hpp"
#endif

namespace {

namespace fs = std::filesystem;
using namespace cudalab::graph;

// A temporary folder for the test's files, removed at the end.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("cudalab-graph-" + std::string(info->test_suite_name()) + "-" + info->name() + "-" +
             std::to_string(::getpid()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

 private:
  fs::path path_;
};

// Expects `load` to throw a ParseError for `path` at `line` whose message contains `words`.
template <class Load>
void expect_parse_error(Load&& load, const std::string& path, long line, const std::string& words) {
  try {
    load(path);
    ADD_FAILURE() << path << ": no ParseError (expected line " << line << ", '" << words << "')";
  } catch (const cudalab::ParseError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(std::string(e.what()).find(path + ":" + std::to_string(line) + ":"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << "message: " << e.what() << "\nwanted: " << words;
  }
}

// ---------------------------------------------------------------- CSR, ELL

TEST(GraphCsr, FromEdgesGroupsByTailKeepingOrderLoopsAndParallelEdges) {
  const Csr g = csr_from_edges(4, {{2, 1, 5}, {0, 3, 1}, {2, 2, 0}, {0, 3, 7}, {2, 0, 2}});
  EXPECT_NO_THROW(g.validate());
  EXPECT_EQ(g.num_vertices(), 4u);
  EXPECT_EQ(g.num_edges(), 5u);
  EXPECT_EQ(g.row_offsets, (std::vector<offset_t>{0, 2, 2, 5, 5}));
  EXPECT_EQ(g.col_indices, (std::vector<vertex_t>{3, 3, 1, 2, 0}));
  EXPECT_EQ(g.weights, (std::vector<weight_t>{1, 7, 5, 0, 2}));
  EXPECT_EQ(g.max_degree(), 3u);
  EXPECT_FALSE(g.has_negative_weights());
  EXPECT_THROW(csr_from_edges(2, {{0, 2, 1}}), std::invalid_argument);
  EXPECT_THROW(csr_from_edges(2, {{-1, 0, 1}}), std::invalid_argument);
  const Csr empty = csr_from_edges(0, {});
  EXPECT_NO_THROW(empty.validate());
  EXPECT_EQ(empty.num_vertices(), 0u);
}

TEST(GraphCsr, ValidateNamesTheBrokenInvariant) {
  Csr g = csr_from_edges(3, {{0, 1, 1}, {1, 2, 1}});
  Csr bad = g;
  bad.col_indices[1] = 3;
  EXPECT_THROW(bad.validate(), std::invalid_argument);
  bad = g;
  bad.weights.pop_back();
  EXPECT_THROW(bad.validate(), std::invalid_argument);
  bad = g;
  bad.row_offsets = {0, 2, 1, 2};
  EXPECT_THROW(bad.validate(), std::invalid_argument);
  bad = g;
  bad.row_offsets.back() = 1;
  EXPECT_THROW(bad.validate(), std::invalid_argument);
  bad.row_offsets.clear();
  EXPECT_THROW(bad.validate(), std::invalid_argument);
}

TEST(GraphCsr, TransposeReversesEveryEdge) {
  const Csr g = csr_from_edges(3, {{0, 1, 4}, {0, 2, 5}, {2, 1, 6}, {1, 1, 7}});
  const Csr t = transpose(g);
  EXPECT_EQ(t.row_offsets, (std::vector<offset_t>{0, 0, 3, 4}));
  EXPECT_EQ(t.col_indices, (std::vector<vertex_t>{0, 1, 2, 0}));
  EXPECT_EQ(t.weights, (std::vector<weight_t>{4, 7, 6, 5}));
}

TEST(GraphEll, ColumnMajorPaddedToTheLargestDegree) {
  const Csr g = csr_from_edges(3, {{0, 1, 4}, {0, 2, 5}, {2, 1, 6}});
  const Ell e = to_ell(g);
  EXPECT_EQ(e.num_rows, 3u);
  EXPECT_EQ(e.width, 2u);
  // entry k of row r at k * 3 + r
  EXPECT_EQ(e.col_indices, (std::vector<vertex_t>{1, Ell::kPadding, 1, 2, Ell::kPadding, Ell::kPadding}));
  EXPECT_EQ(e.weights, (std::vector<weight_t>{4, 0, 6, 5, 0, 0}));
  EXPECT_THROW(to_ell(g, 5), std::invalid_argument);
  const Ell none = to_ell(csr_from_edges(4, {}));
  EXPECT_EQ(none.width, 0u);
  EXPECT_TRUE(none.col_indices.empty());
}

TEST(GraphDeviceCsr, RejectsAnInvalidGraphBeforeAnyCudaCall) {
  Csr bad = csr_from_edges(3, {{0, 1, 1}});
  bad.col_indices[0] = 7;
  EXPECT_THROW(DeviceCsr{bad}, std::invalid_argument);
  const DeviceCsr empty;
  EXPECT_EQ(empty.view().num_vertices, 0u);
  EXPECT_EQ(empty.view().row_offsets, nullptr);
  Ell ragged;
  ragged.num_rows = 2;
  ragged.width = 1;
  EXPECT_THROW(DeviceEll{ragged}, std::invalid_argument);
}

// ------------------------------------------------------------------ DIMACS

TEST(GraphDimacs, LoadsAGoodFile) {
  TempDir dir;
  const std::string path = dir.write("good.gr",
                                     "c a comment\n"
                                     "c\n"
                                     "p sp 4 5\r\n"
                                     "\n"
                                     "a 1 2 10\n"
                                     "a 2 3 0\n"
                                     "a 3 3 7\n"
                                     "a 1 2 4\n"
                                     "c late comment\n"
                                     "a 4 1 -3\n");
  const Csr g = load_dimacs_gr(path);
  EXPECT_EQ(g.num_vertices(), 4u);
  EXPECT_EQ(g.row_offsets, (std::vector<offset_t>{0, 2, 3, 4, 5}));
  EXPECT_EQ(g.col_indices, (std::vector<vertex_t>{1, 1, 2, 2, 0}));
  EXPECT_EQ(g.weights, (std::vector<weight_t>{10, 4, 0, 7, -3}));
  EXPECT_TRUE(g.has_negative_weights());
  EXPECT_EQ(load_graph(path).col_indices, g.col_indices);
}

TEST(GraphDimacs, MalformedFilesNameFileAndLine) {
  TempDir dir;
  struct Case {
    const char* name;
    const char* text;
    long line;
    const char* words;
  };
  const Case cases[] = {
      {"html.gr", "<html>\n", 1, "not a DIMACS"},
      {"nop.gr", "c only comments\n", 0, "no problem line"},
      {"max.gr", "p max 3 1\n", 1, "not 'p sp N M'"},
      {"early.gr", "c x\na 1 2 3\np sp 2 1\n", 2, "before the problem line"},
      {"twop.gr", "p sp 2 0\np sp 2 0\n", 2, "second problem line"},
      {"range.gr", "p sp 2 1\na 1 3 1\n", 2, "head V '3' is outside [1, 2]"},
      {"zero.gr", "p sp 2 1\na 0 1 1\n", 2, "tail U '0' is outside"},
      {"text.gr", "p sp 2 1\na 1 x 1\n", 2, "'x' is not an integer"},
      {"big.gr", "p sp 2 1\na 1 2 4294967296\n", 2, "length W '4294967296' is outside"},
      {"missing.gr", "p sp 2 1\na 1 2\n", 2, "missing length W"},
      {"extra.gr", "p sp 2 1\na 1 2 3 4\n", 2, "unexpected '4'"},
      {"few.gr", "p sp 3 3\na 1 2 3\na 2 3 1\n", 0, "declares 3 arcs (line 1) but has 2"},
      {"many.gr", "p sp 3 1\na 1 2 3\na 2 3 1\n", 3, "more arcs than the 1 declared"},
      {"negn.gr", "p sp -1 0\n", 1, "vertex count N '-1' is outside"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    expect_parse_error([](const std::string& p) { return load_dimacs_gr(p); }, dir.write(c.name, c.text), c.line,
                       c.words);
  }
  expect_parse_error([](const std::string& p) { return load_dimacs_gr(p); }, (fs::temp_directory_path() / "cudalab-no-such-file.gr").string(), 0,
                     "cannot open");
  expect_parse_error([](const std::string& p) { return load_graph(p); }, dir.write("x.txt", "p sp 1 0\n"), 0,
                     "unknown graph format");
}

TEST(GraphDimacs, Coordinates) {
  TempDir dir;
  const auto co = load_dimacs_co(dir.write("g.co", "c c\np aux sp co 3\nv 2 -73530767 41085396\nv 1 0 5\nv 3 1 -2\n"));
  ASSERT_EQ(co.size(), 3u);
  EXPECT_EQ(co[1].x, -73530767);
  EXPECT_EQ(co[1].y, 41085396);
  EXPECT_EQ(co[0].y, 5);
  EXPECT_EQ(co[2].y, -2);
  auto load = [](const std::string& p) { return load_dimacs_co(p); };
  expect_parse_error(load, dir.write("a.co", "p sp 3 2\n"), 1, "not 'p aux sp co N'");
  expect_parse_error(load, dir.write("b.co", "p aux sp co 2\nv 1 0 0\nv 1 0 0\n"), 3, "given twice");
  expect_parse_error(load, dir.write("c.co", "p aux sp co 2\nv 1 0 0\n"), 0, "declares 2 vertices but gives 1");
  expect_parse_error(load, dir.write("d.co", "p aux sp co 2\nv 3 0 0\n"), 2, "vertex ID '3' is outside");
  expect_parse_error(load, dir.write("e.co", "p aux sp co 2\na 1 2 3\n"), 2, "not a DIMACS coordinate file");
}

// ----------------------------------------------------------- Matrix Market

TEST(GraphMatrixMarket, LoadsGeneralSymmetricPatternAndReal) {
  TempDir dir;
  const Csr g = load_matrix_market(dir.write("g.mtx",
                                             "%%MatrixMarket matrix coordinate integer general\n"
                                             "% comment\n"
                                             "3 3 3\n"
                                             "1 2 5\n"
                                             "3 1 -2\n"
                                             "2 2 0\n"));
  EXPECT_EQ(g.row_offsets, (std::vector<offset_t>{0, 1, 2, 3}));
  EXPECT_EQ(g.col_indices, (std::vector<vertex_t>{1, 1, 0}));
  EXPECT_EQ(g.weights, (std::vector<weight_t>{5, 0, -2}));

  const Csr s = load_graph(dir.write("s.mtx",
                                     "%%MatrixMarket matrix coordinate pattern symmetric\n"
                                     "3 3 2\n"
                                     "2 1\n"
                                     "3 3\n"));
  EXPECT_EQ(s.row_offsets, (std::vector<offset_t>{0, 1, 2, 3}));
  EXPECT_EQ(s.col_indices, (std::vector<vertex_t>{1, 0, 2}));
  EXPECT_EQ(s.weights, (std::vector<weight_t>{1, 1, 1}));

  const Csr r = load_matrix_market(dir.write("r.mtx",
                                             "%%MatrixMarket matrix coordinate real general\n"
                                             "2 2 2\n"
                                             "1 2 2.6\n"
                                             "2 1 1e3\n"));
  EXPECT_EQ(r.weights, (std::vector<weight_t>{3, 1000}));
}

TEST(GraphMatrixMarket, MalformedFilesNameFileAndLine) {
  TempDir dir;
  auto load = [](const std::string& p) { return load_matrix_market(p); };
  expect_parse_error(load, dir.write("a.mtx", "3 3 1\n1 2 3\n"), 1, "not a Matrix Market file");
  expect_parse_error(load, dir.write("b.mtx", "%%MatrixMarket matrix array real general\n2 2\n"), 1,
                     "'coordinate' format");
  expect_parse_error(load, dir.write("c.mtx", "%%MatrixMarket matrix coordinate complex general\n"), 1,
                     "field 'complex'");
  expect_parse_error(load, dir.write("d.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n"), 1,
                     "symmetry 'skew-symmetric'");
  expect_parse_error(load, dir.write("e.mtx", "%%MatrixMarket matrix coordinate real general\n2 3 0\n"), 2,
                     "not square");
  expect_parse_error(load, dir.write("f.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 3 1.0\n"),
                     3, "column index '3' is outside");
  expect_parse_error(load, dir.write("g.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1.0\n"), 0,
                     "declares 2 entries (line 2) but has 1");
  expect_parse_error(load, dir.write("h.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 abc\n"), 3,
                     "'abc' is not a finite number");
  expect_parse_error(load, dir.write("i.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 1 9\n"),
                     3, "unexpected '9'");
  expect_parse_error(load, dir.write("j.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1e12\n"),
                     3, "does not fit");
}

// Malformed files: a truncated file, a wrong header, an out-of-range
// index, a count mismatch, a non-numeric field; each a ParseError naming the
// file and line, and the caller's graph unchanged.
TEST(GraphMatrixMarket, BadInputGivesTypedErrorsAndChangesNothing) {
  TempDir dir;
  auto load = [](const std::string& p) { return load_matrix_market(p); };
  const std::string pat = "%%MatrixMarket matrix coordinate pattern symmetric\n";
  struct Case {
    const char* name;
    std::string text;
    long line;
    const char* words;
  };
  const Case cases[] = {
      // truncated: cut after the header, in the size line, in an entry, before the last entries
      {"t1.mtx", pat, 0, "no size line"},
      {"t2.mtx", pat + "% c\n4 4", 3, "missing entry count"},
      {"t3.mtx", pat + "4 4 2\n2 1\n4", 4, "missing column index"},
      {"t4.mtx", pat + "4 4 3\n2 1\n4 3\n", 0, "declares 3 entries (line 2) but has 2"},
      {"t5.mtx", "", 1, "not a Matrix Market file"},
      // wrong header
      {"h1.mtx", "%MatrixMarket matrix coordinate pattern symmetric\n1 1 0\n", 1, "not a Matrix Market file"},
      {"h2.mtx", "%%MatrixMarket vector coordinate pattern general\n", 1, "only 'matrix' objects"},
      {"h3.mtx", "%%MatrixMarket matrix coordinate pattern hermitian\n", 1, "symmetry 'hermitian'"},
      {"h4.mtx", "%%MatrixMarket matrix coordinate pattern\n", 1, "symmetry '' is not supported"},
      {"h5.mtx", "%%MatrixMarket matrix coordinate pattern general extra\n", 1, "unexpected 'extra'"},
      // out-of-range indices
      {"r1.mtx", pat + "3 3 1\n4 1\n", 3, "row index '4' is outside [1, 3]"},
      {"r2.mtx", pat + "3 3 1\n2 0\n", 3, "column index '0' is outside [1, 3]"},
      {"r3.mtx", pat + "3 3 1\n-1 1\n", 3, "row index '-1' is outside"},
      {"r4.mtx", pat + "3 3 1\n1 2\n", 3, "above the diagonal"},
      // count mismatch
      {"c1.mtx", pat + "3 3 1\n2 1\n3 2\n", 4, "more entries than the 1 declared on line 2"},
      {"c2.mtx", pat + "3 3 -1\n", 2, "entry count '-1' is outside"},
      // non-numeric
      {"n1.mtx", pat + "3 3 1\n2 b\n", 3, "column index 'b' is not an integer"},
      {"n2.mtx", pat + "three 3 1\n", 2, "row count 'three' is not an integer"},
      {"n3.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 1.5\n", 3,
       "value '1.5' is not an integer"},
      {"n4.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 nan\n", 3, "'nan' is not a finite number"},
      {"n5.mtx", pat + "3 3 1\n2 1 7\n", 3, "unexpected '7'"},  // a value in a pattern file
  };
  const std::string good = dir.write("good.mtx", pat + "3 3 2\n2 1\n3 2\n");
  const Csr before = load_matrix_market(good);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = dir.write(c.name, c.text);
    expect_parse_error(load, path, c.line, c.words);
    Csr g = before;
    EXPECT_THROW(g = load_graph(path), cudalab::ParseError);
    EXPECT_EQ(g.row_offsets, before.row_offsets);
    EXPECT_EQ(g.col_indices, before.col_indices);
    EXPECT_EQ(g.weights, before.weights);
  }
}

TEST(GraphMatrixMarket, SymmetricSelfLoopsOnceDuplicatesKept) {
  TempDir dir;
  const Csr g = load_matrix_market(dir.write("s.mtx",
                                             "%%MatrixMarket Matrix Coordinate Pattern Symmetric\n"
                                             "%\n"
                                             "\n"
                                             "3 3 4\n"
                                             "2 1\n"
                                             "3 3\n"
                                             "2 1\n"
                                             "3 1\n"));
  // 2-1 twice (both directions each), 3-3 once, 3-1 both directions.
  EXPECT_EQ(g.row_offsets, (std::vector<offset_t>{0, 3, 5, 7}));
  EXPECT_EQ(g.col_indices, (std::vector<vertex_t>{1, 1, 2, 0, 0, 2, 0}));
  EXPECT_EQ(g.weights, std::vector<weight_t>(7, 1));
}

// ----------------------------------------------------- weighting, real data

TEST(GraphPairHashWeights, BothDirectionsAndCopiesAgreeInRangeAndSeeded) {
  const Csr g = csr_from_edges(5, {{0, 1, 1}, {1, 0, 1}, {1, 0, 1}, {3, 4, 1}, {4, 3, 1}, {2, 2, 1}, {4, 0, 1}});
  const Csr w = pair_hash_weights(g, 7, 1, 100);
  EXPECT_EQ(w.row_offsets, g.row_offsets);
  EXPECT_EQ(w.col_indices, g.col_indices);
  for (std::size_t u = 0; u < w.num_vertices(); ++u)
    for (offset_t e = w.row_offsets[u]; e < w.row_offsets[u + 1]; ++e) {
      const vertex_t v = w.col_indices[e];
      EXPECT_EQ(w.weights[e], pair_hash_weight(v, static_cast<vertex_t>(u), 7, 1, 100));
      EXPECT_GE(w.weights[e], 1);
      EXPECT_LE(w.weights[e], 100);
    }
  EXPECT_EQ(w.weights[0], w.weights[1]);  // 0 -> 1 and 1 -> 0
  EXPECT_EQ(w.weights[1], w.weights[2]);  // the parallel copy
  EXPECT_EQ(pair_hash_weights(g, 7, 1, 100).weights, w.weights);
  const Csr big = pair_hash_weights(grid_2d(30, 30, 1, 1, 1), 7, 1, 100);
  EXPECT_NE(pair_hash_weights(big, 8, 1, 100).weights, big.weights);
  const Csr t = transpose(big);
  EXPECT_EQ(t.weights, big.weights) << "a symmetric graph stays symmetric";
  EXPECT_EQ(pair_hash_weights(g, 7, 5, 5).weights, std::vector<weight_t>(7, 5));
  EXPECT_THROW(pair_hash_weights(g, 7, 3, 2), std::invalid_argument);
}

// The Luxembourg road network (CUDALAB_DATA_DIR): the counts of its README,
// symmetric, weighted by the documented rule; and the CPU Dijkstra that the
// GPU tests of chapters 5 and 6 compare with agrees with Boost.Graph's on it.
TEST(GraphRoadData, LuxembourgOsmLoadsWeightedAndSymmetric) {
  const auto g = load_luxembourg_osm();
  if (!g)
    GTEST_SKIP() << kLuxembourgFile
                 << " is not in CUDALAB_DATA_DIR (SuiteSparse Matrix Collection, DIMACS10/luxembourg_osm)";
  EXPECT_NO_THROW(g->validate());
  EXPECT_EQ(g->num_vertices(), kLuxembourgVertices);
  EXPECT_EQ(g->num_edges(), 2u * 119666u) << "119,666 roads, both directions";
  EXPECT_LE(g->max_degree(), 6u);
  EXPECT_FALSE(g->has_negative_weights());
  for (const weight_t w : g->weights) {
    ASSERT_GE(w, kRoadMinWeight);
    ASSERT_LE(w, kRoadMaxWeight);
  }
  const Csr t = transpose(*g);
  EXPECT_EQ(t.row_offsets, g->row_offsets);
  EXPECT_EQ(t.weights.size(), g->weights.size());
  for (std::size_t u = 0; u < g->num_vertices(); ++u)
    for (offset_t e = g->row_offsets[u]; e < g->row_offsets[u + 1]; ++e)
      ASSERT_EQ(g->weights[e], pair_hash_weight(static_cast<vertex_t>(u), g->col_indices[e], kRoadWeightSeed,
                                                kRoadMinWeight, kRoadMaxWeight));
  const ShortestPaths sp = dijkstra_reference(*g, 0);
  for (std::size_t v = 0; v < sp.dist.size(); ++v) ASSERT_NE(sp.dist[v], kUnreachable) << "one component: " << v;
}

// -------------------------------------------------------------- generators

TEST(GraphGenerators, GridHasFourNeighboursAndSymmetricWeights) {
  const std::size_t rows = 7, cols = 9;
  const Csr g = grid_2d(rows, cols, 42, 3, 17);
  EXPECT_NO_THROW(g.validate());
  EXPECT_EQ(g.num_vertices(), rows * cols);
  EXPECT_EQ(g.num_edges(), 2 * (2 * rows * cols - rows - cols));
  const Csr t = transpose(g);
  for (std::size_t u = 0; u < g.num_vertices(); ++u)
    for (offset_t e = g.row_offsets[u]; e < g.row_offsets[u + 1]; ++e) {
      ASSERT_GE(g.weights[e], 3);
      ASSERT_LE(g.weights[e], 17);
    }
  // Symmetric: the transpose is the same graph, edge for edge (neighbours in
  // increasing id order on both sides).
  EXPECT_EQ(t.row_offsets, g.row_offsets);
  EXPECT_EQ(t.col_indices, g.col_indices);
  EXPECT_EQ(t.weights, g.weights);
  EXPECT_EQ(grid_2d(rows, cols, 42, 3, 17).weights, g.weights);
  EXPECT_NE(grid_2d(rows, cols, 43, 3, 17).weights, g.weights);
  const Csr thin = grid_2d(100, 100, 1, 1, 10, 0.69);
  EXPECT_NEAR(static_cast<double>(thin.num_edges()) / 10000.0, 0.69 * 4 * 0.99, 0.15);
  const Csr tt = transpose(thin);
  EXPECT_EQ(tt.col_indices, thin.col_indices);
  EXPECT_THROW(grid_2d(2, 2, 1, 5, 4), std::invalid_argument);
  EXPECT_THROW(grid_2d(2, 2, 1, 1, 4, 1.5), std::invalid_argument);
  EXPECT_EQ(grid_2d(0, 5, 1).num_vertices(), 0u);
  EXPECT_EQ(grid_2d(1, 1, 1).num_edges(), 0u);
}

TEST(GraphGenerators, RandomGeometricIsSymmetricWithTheAskedDegree) {
  const Csr g = random_geometric(20000, 8.0, 5, 1, 100);
  EXPECT_NO_THROW(g.validate());
  const double avg = static_cast<double>(g.num_edges()) / 20000.0;
  EXPECT_GT(avg, 7.0);
  EXPECT_LT(avg, 8.5);
  const Csr t = transpose(g);
  EXPECT_EQ(t.row_offsets, g.row_offsets);
  EXPECT_EQ(t.col_indices, g.col_indices);
  EXPECT_EQ(t.weights, g.weights);
  EXPECT_EQ(random_geometric(2000, 6.0, 9).col_indices, random_geometric(2000, 6.0, 9).col_indices);
  EXPECT_EQ(random_geometric(0, 6.0, 9).num_vertices(), 0u);
}

TEST(GraphGenerators, RmatHasTheAskedSizeAndSkewedDegrees) {
  const Csr g = rmat(12, 16, 3, 1, 50);
  EXPECT_NO_THROW(g.validate());
  EXPECT_EQ(g.num_vertices(), 4096u);
  EXPECT_EQ(g.num_edges(), 16u * 4096u);
  EXPECT_GT(g.max_degree(), 20u * 16u) << "R-MAT's hubs should have far more than the mean degree";
  EXPECT_EQ(rmat(12, 16, 3, 1, 50).col_indices, g.col_indices);
  EXPECT_NE(rmat(12, 16, 4, 1, 50).col_indices, g.col_indices);
  EXPECT_THROW(rmat(4, 2, 1, 1, 2, 0.6, 0.3, 0.3), std::invalid_argument);
}

// -------------------------------------------------------- Dijkstra, trees

TEST(GraphDijkstraReference, SmallGraphByHand) {
  // 0 -> 1 (4), 0 -> 2 (1), 2 -> 1 (2), 1 -> 3 (1), 3 -> 3 (0), 2 -> 1 (9); 4 unreachable
  const Csr g = csr_from_edges(5, {{0, 1, 4}, {0, 2, 1}, {2, 1, 2}, {1, 3, 1}, {3, 3, 0}, {2, 1, 9}});
  const ShortestPaths sp = dijkstra_reference(g, 0);
  EXPECT_EQ(sp.dist, (std::vector<dist64_t>{0, 3, 1, 4, kUnreachable}));
  EXPECT_EQ(sp.parent, (std::vector<vertex_t>{kNoParent, 2, 0, 1, kNoParent}));
  EXPECT_EQ(shortest_path_tree_error(g, 0, sp.dist, sp.parent, kUnreachable), "");
  EXPECT_THROW(dijkstra_reference(g, 5), std::invalid_argument);
  EXPECT_THROW(dijkstra_reference(g, -1), std::invalid_argument);
  EXPECT_THROW(dijkstra_reference(csr_from_edges(2, {{0, 1, -1}}), 0), std::invalid_argument);
  EXPECT_THROW(dijkstra_reference(csr_from_edges(0, {}), 0), std::invalid_argument);
  const ShortestPaths one = dijkstra_reference(csr_from_edges(1, {}), 0);
  EXPECT_EQ(one.dist, (std::vector<dist64_t>{0}));
}

TEST(GraphDijkstraReference, TreeCheckerFindsBadParents) {
  // A zero-weight cycle 1 <-> 2 reached from 0.
  const Csr g = csr_from_edges(4, {{0, 1, 5}, {1, 2, 0}, {2, 1, 0}, {0, 2, 5}});
  const std::vector<dist64_t> d = {0, 5, 5, kUnreachable};
  EXPECT_EQ(shortest_path_tree_error(g, 0, d, {kNoParent, 0, 1, kNoParent}, kUnreachable), "");
  EXPECT_NE(shortest_path_tree_error(g, 0, d, {kNoParent, 2, 1, kNoParent}, kUnreachable).find("cycle"),
            std::string::npos);
  EXPECT_NE(shortest_path_tree_error(g, 0, d, {kNoParent, 0, 1, 0}, kUnreachable).find("unreachable"),
            std::string::npos);
  EXPECT_NE(shortest_path_tree_error(g, 0, d, {kNoParent, 0, 3, kNoParent}, kUnreachable), "");
  EXPECT_NE(shortest_path_tree_error(g, 0, {0, 5, 4, kUnreachable}, {kNoParent, 0, 0, kNoParent}, kUnreachable), "");
  EXPECT_NE(shortest_path_tree_error(g, 0, d, {kNoParent, 0, 7, kNoParent}, kUnreachable), "");
}

#ifdef CUDALAB_HAVE_BOOST_GRAPH

// The reference and Boost agree on distances; the reference's parents form
// a shortest-path tree, and so do Boost's.
void expect_same_as_boost(const Csr& g, vertex_t source, const std::string& what) {
  SCOPED_TRACE(what + ", source " + std::to_string(source));
  const ShortestPaths mine = dijkstra_reference(g, source);
  const ShortestPaths boost = BoostGraph(g).shortest_paths(source);
  ASSERT_EQ(mine.dist.size(), boost.dist.size());
  for (std::size_t v = 0; v < mine.dist.size(); ++v)
    ASSERT_EQ(mine.dist[v], boost.dist[v]) << "first difference at vertex " << v;
  EXPECT_EQ(shortest_path_tree_error(g, source, mine.dist, mine.parent, kUnreachable), "");
  EXPECT_EQ(shortest_path_tree_error(g, source, boost.dist, boost.parent, kUnreachable), "");
}

TEST(GraphDijkstraReference, AgreesWithBoostGraph) {
  expect_same_as_boost(grid_2d(60, 70, 11, 1, 1000), 0, "grid 60 x 70");
  expect_same_as_boost(grid_2d(60, 70, 12, 0, 3, 0.6), 2100, "thinned grid with zero weights");
  expect_same_as_boost(random_geometric(5000, 6.0, 13, 1, 500), 17, "random geometric");
  expect_same_as_boost(rmat(11, 8, 14, 0, 100), 0, "R-MAT scale 11 with zero weights");
  expect_same_as_boost(csr_from_edges(1, {}), 0, "single vertex");
  expect_same_as_boost(csr_from_edges(5, {}), 3, "no edges");
  expect_same_as_boost(csr_from_edges(4, {{0, 0, 3}, {0, 1, 2}, {0, 1, 1}, {1, 1, 0}, {1, 2, 0}, {3, 0, 1}}), 0,
                       "self loops, parallel and zero-weight edges, an unreachable vertex");
  const Csr big = grid_2d(300, 300, 15, 1, 100000);
  expect_same_as_boost(big, 45150, "grid 300 x 300, large weights");
}

// The sources the GPU tests of chapters 5 and 6 use on the Luxembourg road
// network (0, n / 2, n - 1): their reference is Boost.Graph's answer.
TEST(GraphDijkstraReference, AgreesWithBoostGraphOnLuxembourgOsm) {
  const auto g = load_luxembourg_osm();
  if (!g)
    GTEST_SKIP() << kLuxembourgFile
                 << " is not in CUDALAB_DATA_DIR (SuiteSparse Matrix Collection, DIMACS10/luxembourg_osm)";
  const auto n = static_cast<vertex_t>(g->num_vertices());
  for (const vertex_t s : {vertex_t{0}, n / 2, n - 1})
    expect_same_as_boost(*g, s, std::string(kLuxembourgName));
}

TEST(GraphDijkstraReference, BoostRejectsNegativeWeightsToo) {
  const Csr g = csr_from_edges(2, {{0, 1, -1}});
  EXPECT_THROW(BoostGraph(g).distances(0), boost::negative_edge);
}

#else

TEST(GraphDijkstraReference, AgreesWithBoostGraph) {
  GTEST_SKIP() << "Boost.Graph not found at configure time (install libboost-dev)";
}

#endif

}  // namespace
