// Tests of exercise 5.4, cudalab::heap::dijkstra_warp_heap (suites
// HeapDijkstraWarpHeap*): distances from many sources at once, one warp heap
// per source, against the CPU Dijkstra of cudalab/graph on grids, random
// geometric graphs, small hand-made graphs and the road graphs of New York
// and Luxembourg (CUDALAB_DATA_DIR); and a source whose out-edges are the
// last edges of a graph of 2^32 - 1 edges (HeapDijkstraWarpHeapLargeIndex).
// Run: tools/grade 5.4
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/graph/generators.hpp"
#include "cudalab/graph/io.hpp"
#include "cudalab/graph/road_data.hpp"
#include "cudalab/test/edge_limit_graph.cuh"
#include "heap_test_util.cuh"

namespace {

using namespace cudalab::test::heap;
using cudalab::graph::Csr;
using cudalab::graph::dist64_t;
using cudalab::graph::Edge;
using cudalab::graph::kUnreachable;
using cudalab::graph::vertex_t;
using cudalab::heap::kInvalidVertex;
using cudalab::heap::kOverflow;
constexpr const char* kExercise = "5.4 dijkstra_warp_heap";

/// What one call returned.
struct Result {
  std::vector<dist64_t> distances;  ///< n_sources rows
  std::vector<unsigned> flags;      ///< one per source
};

/// Runs dijkstra_warp_heap on `g` with `heaps` warps of `capacity` nodes;
/// all distances when `targets` is empty.
Result run(const Csr& g, const std::vector<vertex_t>& sources, const std::vector<vertex_t>* targets,
           std::size_t heaps, std::size_t capacity) {
  const cudalab::graph::DeviceCsr dg(g);
  const std::size_t row = targets ? targets->size() : g.num_vertices();
  const auto d_sources = to_device(sources);
  const auto d_targets = to_device(targets ? *targets : std::vector<vertex_t>{});
  auto d_dist = poisoned<dist64_t>(sources.size() * row);
  auto d_flags = poisoned<unsigned>(sources.size());
  cudalab::heap::HeapStorage storage(heaps, capacity);
  cudalab::DeviceBuffer<dist64_t> scratch(targets ? heaps * g.num_vertices() : 0);
  cudalab::heap::dijkstra_warp_heap(dg.view(), d_sources.data(), sources.size(), targets ? d_targets.data() : nullptr,
                                    row, d_dist.data(), d_flags.data(), storage.view(), scratch.data(), nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  return {d_dist.download(), d_flags.download()};
}

/// Compares every row with the CPU Dijkstra; capacity must be large enough
/// (no flag may be set).
void check(const Csr& g, const std::vector<vertex_t>& sources, const std::vector<vertex_t>* targets,
           const Result& r, const std::string& ctx) {
  const std::size_t row = targets ? targets->size() : g.num_vertices();
  for (std::size_t s = 0; s < sources.size(); ++s) {
    ASSERT_EQ(0u, r.flags[s]) << ctx << "source #" << s << " (vertex " << sources[s] << "): flags " << r.flags[s]
                              << ", expected 0 (kOverflow = 1: the heap was full; kInvalidVertex = 8)";
    const auto want = cudalab::graph::dijkstra_reference(g, sources[s]).dist;
    for (std::size_t i = 0; i < row; ++i) {
      const auto v = static_cast<std::size_t>(targets ? (*targets)[i] : static_cast<vertex_t>(i));
      const dist64_t got = r.distances[s * row + i];
      ASSERT_EQ(want[v], got) << ctx << "source #" << s << " (vertex " << sources[s] << "), "
                              << (targets ? "target #" + std::to_string(i) + " = vertex " : "vertex ") << v
                              << ": expected distance " << want[v] << " (" << kUnreachable
                              << " = unreachable), got " << got
                              << ". Check the stale test (skip a popped entry whose key exceeds the current "
                                 "distance, never one that equals it), that every improved vertex is pushed, and "
                                 "that every out-edge (all 32-edge batches) is relaxed.";
    }
  }
}

std::vector<vertex_t> random_vertices(const Random& r, std::size_t count, std::size_t n, std::uint64_t stream) {
  std::vector<vertex_t> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<vertex_t>(r.below(stream * 1'000'000 + i, n));
  return v;
}

/// Nodes enough for a lazy Dijkstra heap on g: every push (at most m + 1) fits.
std::size_t safe_capacity(const Csr& g) {
  return std::min<std::size_t>(cudalab::heap::max_capacity_nodes, (g.num_edges() + 1 + 31) / 32);
}

/// The size a test reports to CUDALAB_SKIP_IF_ABOVE_MAX_N: sources x
/// vertices x 32 lanes, so sanitizer runs (CUDALAB_MAX_N = 2^22) keep the
/// small graphs and skip the long searches.
std::size_t lane_work(const Csr& g, std::size_t sources) { return g.num_vertices() * sources * 32; }

class HeapDijkstraWarpHeap : public cudalab::test::GpuTest {};

// A road-like grid (69 % of the streets kept: some vertices cut off), more
// sources than warps, all distances.
TEST_F(HeapDijkstraWarpHeap, GridAllDistances) {
  const Random r{cudalab::test::seed()};
  const Csr g = cudalab::graph::grid_2d(37, 41, r.seed, 1, 1000, 0.69);
  auto sources = random_vertices(r, 40, g.num_vertices(), 1);
  sources.push_back(0);
  sources.push_back(static_cast<vertex_t>(g.num_vertices() - 1));
  sources.push_back(sources[3]);  // a duplicate source
  CUDALAB_SKIP_IF_ABOVE_MAX_N(lane_work(g, sources.size()));
  const Result res = run(g, sources, nullptr, 8, safe_capacity(g));
  check(g, sources, nullptr, res,
        cudalab::test::context(kExercise, g.num_vertices(), r.seed) + "grid 37 x 41, 43 sources, 8 warps: ");
}

// The full 64 x 64 mesh, one warp per source.
TEST_F(HeapDijkstraWarpHeap, FullMeshOneWarpPerSource) {
  const Random r{cudalab::test::seed()};
  const Csr g = cudalab::graph::grid_2d(64, 64, r.seed, 1, 100);
  const auto sources = random_vertices(r, 100, g.num_vertices(), 2);
  CUDALAB_SKIP_IF_ABOVE_MAX_N(lane_work(g, sources.size()));
  const Result res = run(g, sources, nullptr, sources.size(), safe_capacity(g));
  check(g, sources, nullptr, res,
        cudalab::test::context(kExercise, g.num_vertices(), r.seed) + "mesh 64 x 64, 100 sources: ");
}

// A random geometric graph with a target list (duplicates and the sources
// themselves among the targets).
TEST_F(HeapDijkstraWarpHeap, RandomGeometricTargets) {
  const Random r{cudalab::test::seed()};
  const Csr g = cudalab::graph::random_geometric(3000, 6.0, r.seed);
  const auto sources = random_vertices(r, 33, g.num_vertices(), 3);
  CUDALAB_SKIP_IF_ABOVE_MAX_N(lane_work(g, sources.size()));
  auto targets = random_vertices(r, 200, g.num_vertices(), 4);
  targets.insert(targets.end(), sources.begin(), sources.begin() + 5);
  targets.push_back(targets[0]);
  const Result res = run(g, sources, &targets, 16, safe_capacity(g));
  check(g, sources, &targets, res,
        cudalab::test::context(kExercise, g.num_vertices(), r.seed) + "random geometric, 205 targets: ");
}

// Hand-made: a hub of degree 100 (four 32-edge batches) with parallel edges
// to one vertex in the same batch, zero weights, a self loop, a second
// component, an isolated vertex.
TEST_F(HeapDijkstraWarpHeap, SmallGraphsEdgeCases) {
  std::vector<Edge> edges;
  for (int i = 1; i <= 100; ++i) edges.push_back({0, i, 1000 - i});
  edges.push_back({0, 5, 3});  // parallel, shorter, in a later batch
  edges.push_back({0, 5, 2});
  edges.push_back({7, 7, 0});  // self loop
  for (int i = 1; i < 100; ++i) edges.push_back({i, i + 1, i % 3 == 0 ? 0 : 1});
  edges.push_back({102, 103, 4});  // another component: 102 -> 103
  edges.push_back({103, 102, 4});
  const Csr g = cudalab::graph::csr_from_edges(105, edges);  // 101 and 104 isolated
  const std::vector<vertex_t> sources = {0, 50, 100, 101, 102, 104, 0};
  const Result res = run(g, sources, nullptr, 3, safe_capacity(g));
  check(g, sources, nullptr, res, cudalab::test::context(kExercise, g.num_vertices(), 0) + "small graph: ");
  const Csr one = cudalab::graph::csr_from_edges(1, {});
  const std::vector<vertex_t> zero = {0};
  check(one, zero, nullptr, run(one, zero, nullptr, 1, 1),
        cudalab::test::context(kExercise, 1, 0) + "one vertex: ");
}

// Parallel edges given in both orders (the shorter first, the longer first;
// within one 32-edge batch and across three), zero-weight 2- and 3-cycles and
// a zero-weight path back to the source; then random multigraphs with
// weights 0 and 1, where ties, parallel edges, self loops and zero-weight
// cycles are everywhere. A relaxation that keeps the first or the last
// parallel edge, or a stale test that skips an entry whose key equals the
// distance, fails here.
TEST_F(HeapDijkstraWarpHeap, ZeroCyclesAndParallelEdges) {
  std::vector<Edge> edges = {{0, 1, 2}, {0, 1, 5},              // parallel: the shorter first
                             {0, 2, 5}, {0, 2, 2},              // parallel: the shorter last
                             {1, 2, 0}, {2, 1, 0},              // a zero-weight 2-cycle
                             {2, 3, 0}, {3, 4, 0}, {4, 2, 0},   // a zero-weight 3-cycle
                             {4, 5, 7}, {5, 4, 7}, {4, 5, 1}, {5, 4, 0}};  // both directions, both orders
  // 80 parallel edges 5 -> 6 over three 32-edge batches: descending weights
  // (100 down to 61), then ascending (60 up to 99); the shortest ends batch 2
  for (int i = 0; i < 80; ++i) edges.push_back({5, 6, i < 40 ? 100 - i : 20 + i});
  edges.push_back({6, 0, 0});  // a zero-weight edge back to the source
  const Csr g = cudalab::graph::csr_from_edges(8, edges);  // vertex 7 isolated
  const std::vector<vertex_t> sources = {0, 1, 3, 5, 6, 7, 4};
  check(g, sources, nullptr, run(g, sources, nullptr, 3, safe_capacity(g)),
        cudalab::test::context(kExercise, g.num_vertices(), 0) +
            "parallel edges in both orders, zero-weight cycles: ");
  if (HasFatalFailure()) return;
  const Random r{cudalab::test::seed()};
  using Size2 = std::pair<std::size_t, std::size_t>;
  for (const auto& [n, m] : {Size2{50, 2000}, Size2{400, 3000}}) {
    std::vector<Edge> multi(m);
    for (std::size_t e = 0; e < m; ++e)
      multi[e] = {static_cast<vertex_t>(r.below(10'000'000 + 3 * e, n)),
                  static_cast<vertex_t>(r.below(10'000'000 + 3 * e + 1, n)),
                  static_cast<cudalab::graph::weight_t>(r.below(10'000'000 + 3 * e + 2, 2))};
    const Csr mg = cudalab::graph::csr_from_edges(n, multi);
    const auto srcs = random_vertices(r, 12, n, 5 + n);
    CUDALAB_SKIP_IF_ABOVE_MAX_N(lane_work(mg, srcs.size()));
    check(mg, srcs, nullptr, run(mg, srcs, nullptr, 4, safe_capacity(mg)),
          cudalab::test::context(kExercise, n, r.seed) + "random multigraph of " + std::to_string(n) +
              " vertices and " + std::to_string(m) + " edges, weights 0 and 1 (zero-weight cycles, ties): ");
    if (HasFatalFailure()) return;
  }
}

// A heap of one node (32 entries) cannot hold the frontier of a large mesh:
// the overflow is flagged, nothing is written out of bounds.
TEST_F(HeapDijkstraWarpHeap, HeapOverflowIsFlagged) {
  const Csr g = cudalab::graph::grid_2d(100, 100, 5, 1, 1000);
  const std::vector<vertex_t> sources = {5050, 0};
  const Result res = run(g, sources, nullptr, 2, 1);
  for (std::size_t s = 0; s < sources.size(); ++s)
    EXPECT_EQ(kOverflow, res.flags[s] & kOverflow)
        << cudalab::test::context(kExercise, g.num_vertices(), 5) << "source " << sources[s]
        << ": a 32-entry heap overflows on a 100 x 100 mesh; the push must report kOverflow";
}

// The flags are a set of bits: a search whose heap overflowed and whose
// target list holds an invalid vertex reports both. (HeapOverflowIsFlagged
// has no target list, InvalidVerticesAreFlagged no overflow, so a warp that
// assigns kInvalidVertex instead of adding it passed both.)
TEST_F(HeapDijkstraWarpHeap, OverflowAndInvalidTargetBothFlagged) {
  const Csr g = cudalab::graph::grid_2d(100, 100, 5, 1, 1000);
  const std::vector<vertex_t> targets = {0, -1, 9999};
  const Result res = run(g, {5050}, &targets, 1, 1);
  EXPECT_EQ(kOverflow | kInvalidVertex, res.flags[0])
      << cudalab::test::context(kExercise, g.num_vertices(), 5)
      << "source 5050 of a 100 x 100 mesh with a 32-entry heap (it overflows) and targets {0, -1, 9999}: expected "
         "flags kOverflow | kInvalidVertex = 9, got "
      << res.flags[0] << ". Add each flag to the source's set (f |= kInvalidVertex), never assign it: the "
      << "overflow of the search must survive the check of the targets.";
  EXPECT_EQ(kUnreachable, res.distances[1]) << cudalab::test::context(kExercise, g.num_vertices(), 5)
                                            << "target -1 is outside [0, n): its distance is kUnreachable";
}

// Sources and targets outside [0, n): flagged, distances kUnreachable.
TEST_F(HeapDijkstraWarpHeap, InvalidVerticesAreFlagged) {
  const Csr g = cudalab::graph::grid_2d(10, 10, 9, 1, 10);
  const auto n = static_cast<vertex_t>(g.num_vertices());
  const std::vector<vertex_t> sources = {-1, n, 3};
  const std::string ctx = cudalab::test::context(kExercise, g.num_vertices(), 9);
  const Result all = run(g, sources, nullptr, 2, safe_capacity(g));
  for (std::size_t s = 0; s < 2; ++s) {
    EXPECT_EQ(kInvalidVertex, all.flags[s]) << ctx << "source " << sources[s] << " is outside [0, n)";
    for (std::size_t v = 0; v < g.num_vertices(); ++v)
      ASSERT_EQ(kUnreachable, all.distances[s * g.num_vertices() + v])
          << ctx << "invalid source " << sources[s] << ": every distance must be kUnreachable";
  }
  EXPECT_EQ(0u, all.flags[2]) << ctx;
  const std::vector<vertex_t> targets = {0, -5, n, 99};
  const Result some = run(g, {3}, &targets, 1, safe_capacity(g));
  EXPECT_EQ(kInvalidVertex, some.flags[0]) << ctx << "targets -5 and n are outside [0, n)";
  const auto want = cudalab::graph::dijkstra_reference(g, 3).dist;
  EXPECT_EQ(want[0], some.distances[0]) << ctx;
  EXPECT_EQ(kUnreachable, some.distances[1]) << ctx;
  EXPECT_EQ(kUnreachable, some.distances[2]) << ctx;
  EXPECT_EQ(want[99], some.distances[3]) << ctx;
}

// Distances past 2^24, where float(distance), the heap's key, rounds: floats
// there are 2 apart, so 2^24 + 1 rounds down to 2^24 and 2^24 + 3 up to
// 2^24 + 4 (ties to even); then three edges of weight 2^31 - 1 take the
// distances past 2^32 (float(2^31 - 1) = 2^31, rounded up). Every other
// test's distances stay below 2^24 (weights of at most 1000), where the key
// is the exact distance, so a warp that takes the popped key for u's
// distance, or compares the key with the distance in integers, passed them.
TEST_F(HeapDijkstraWarpHeap, DistancesBeyondFloatPrecision) {
  using cudalab::graph::weight_t;
  constexpr weight_t kBig = weight_t{1} << 24;
  constexpr weight_t kMax = std::numeric_limits<weight_t>::max();
  const std::vector<Edge> edges = {
      {0, 1, kBig + 1},  // d(1) = 2^24 + 1: its key 2^24 is 1 short
      {1, 2, 2},         // d(2) = 2^24 + 3: its key 2^24 + 4 is 1 over
      {2, 3, 1},         // d(3) = 2^24 + 4: reached only through 2
      {0, 4, kBig + 3},  // a longer way to 4 (its key 2^24 + 4) ...
      {1, 4, 1},         // ... than through 1: d(4) = 2^24 + 2
      {4, 5, 7},         // d(5) = 2^24 + 9
      {3, 6, kMax},      // d(6) = 2^24 + 4 + (2^31 - 1)
      {6, 7, kMax},      // d(7) = 2^24 + 4 + 2 (2^31 - 1): past 2^32
      {7, 8, kMax},      // from 3 or 6 the way to 8, past 2^32; ...
      {5, 8, 5},         // ... from 0 or 1 this one: d(8) = 2^24 + 14
      {8, 9, 1}};        // d(9) = d(8) + 1
  const Csr g = cudalab::graph::csr_from_edges(11, edges);  // vertex 10 isolated
  const std::vector<vertex_t> sources = {0, 3, 1, 6, 10};
  const std::string ctx = cudalab::test::context(kExercise, g.num_vertices(), 0) +
                          "distances past 2^24, where float keys round, and past 2^32: ";
  check(g, sources, nullptr, run(g, sources, nullptr, 2, safe_capacity(g)),
        ctx + "the popped key is float(distance), rounded: take u's distance from the 64-bit row, and compare "
              "the key with float(that distance) to tell a stale entry (a rounded key is not stale). ");
  if (HasFatalFailure()) return;
  const std::vector<vertex_t> targets = {9, 2, 8, 3, 10};
  check(g, sources, &targets, run(g, sources, &targets, 2, safe_capacity(g)), ctx + "with a target list: ");
}

// With a target list, warp w searches in its own scratch row w (of
// min(heaps, sources) rows), whatever source it runs; here 7 sources on 2
// warps, and the scratch has 7 rows: a warp that works in row s (the
// source's index, as the distances do without targets) writes rows 2 to 6,
// which the call must leave as they were. (RandomGeometricTargets gives
// exactly 16 rows, so there row s >= 16 is written past the scratch buffer,
// out of bounds, where no check looks at these sizes.)
TEST_F(HeapDijkstraWarpHeap, TargetsUseOnlyTheirWarpsScratchRows) {
  const Csr g = cudalab::graph::grid_2d(10, 10, 3, 1, 10, 0.8);
  const std::size_t n = g.num_vertices();
  const std::vector<vertex_t> sources = {0, 17, 99, 42, 5, 63, 88};
  const std::vector<vertex_t> targets = {99, 0, 50, 7, 50};
  const std::size_t heaps = 2;
  const cudalab::graph::DeviceCsr dg(g);
  const auto d_sources = to_device(sources);
  const auto d_targets = to_device(targets);
  auto d_dist = poisoned<dist64_t>(sources.size() * targets.size());
  auto d_flags = poisoned<unsigned>(sources.size());
  cudalab::heap::HeapStorage storage(heaps, safe_capacity(g));
  auto scratch = poisoned<dist64_t>(sources.size() * n);
  cudalab::heap::dijkstra_warp_heap(dg.view(), d_sources.data(), sources.size(), d_targets.data(), targets.size(),
                                    d_dist.data(), d_flags.data(), storage.view(), scratch.data(), nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const std::string ctx = cudalab::test::context(kExercise, n, 3) + "7 sources, 2 warps, 5 targets: ";
  check(g, sources, &targets, Result{d_dist.download(), d_flags.download()}, ctx);
  if (HasFatalFailure()) return;
  const auto rows = scratch.download();
  dist64_t poison;
  std::memset(&poison, kPoison, sizeof poison);
  for (std::size_t i = heaps * n; i < rows.size(); ++i)
    ASSERT_EQ(poison, rows[i]) << ctx << "scratch element " << i << " (row " << i / n << ") was written, but only "
                               << heaps << " warps run, so only rows 0 and 1 are theirs: warp w searches in "
                               << "scratch + w * n for every source it runs (s = w, w + W, ...), not in "
                               << "scratch + s * n.";
}

// A source outside [0, n) with a target list: its row of the output is
// kUnreachable for every target, and its flag kInvalidVertex. The all-
// distances case (InvalidVerticesAreFlagged) cannot tell a warp that skips
// the target list for such a source: its row is the distances row itself.
TEST_F(HeapDijkstraWarpHeap, InvalidSourceWithTargetsWritesUnreachable) {
  const Csr g = cudalab::graph::grid_2d(10, 10, 9, 1, 10);
  const auto n = static_cast<vertex_t>(g.num_vertices());
  const std::vector<vertex_t> sources = {-1, 3, n, 42};
  const std::vector<vertex_t> targets = {0, 99, 3, 42};
  const std::string ctx = cudalab::test::context(kExercise, g.num_vertices(), 9) + "sources {-1, 3, n, 42}, " +
                          "targets {0, 99, 3, 42}, 2 warps: ";
  const Result got = run(g, sources, &targets, 2, safe_capacity(g));
  for (std::size_t s = 0; s < sources.size(); ++s) {
    const bool bad = sources[s] < 0 || sources[s] >= n;
    EXPECT_EQ(bad ? kInvalidVertex : 0u, got.flags[s]) << ctx << "source " << sources[s];
    const auto want = bad ? std::vector<dist64_t>(g.num_vertices(), kUnreachable)
                          : cudalab::graph::dijkstra_reference(g, sources[s]).dist;
    for (std::size_t t = 0; t < targets.size(); ++t)
      ASSERT_EQ(want[static_cast<std::size_t>(targets[t])], got.distances[s * targets.size() + t])
          << ctx << "source " << sources[s] << ", target " << targets[t] << ": expected "
          << want[static_cast<std::size_t>(targets[t])] << " (" << kUnreachable << " = unreachable)"
          << (bad ? ". A source outside [0, n) searches nothing, but its row of the output must still be written: "
                    "kUnreachable for every target (the poison 0xA5... means it was skipped)."
                  : ".");
  }
}

// The New York road graph of the 9th DIMACS challenge, when it is in
// CUDALAB_DATA_DIR (tools/fetch-data NY).
TEST_F(HeapDijkstraWarpHeap, NewYorkRoadGraph) {
  const std::optional<std::string> path = cudalab::graph::find_data_file("USA-road-d.NY.gr");
  if (!path) GTEST_SKIP() << "USA-road-d.NY.gr is not in CUDALAB_DATA_DIR (run tools/fetch-data NY)";
  CUDALAB_SKIP_IF_ABOVE_MAX_N(std::size_t{264346} * 4 * 32);
  const Csr g = cudalab::graph::load_dimacs_gr(*path);
  const Random r{cudalab::test::seed()};
  const auto sources = random_vertices(r, 4, g.num_vertices(), 5);
  const Result res = run(g, sources, nullptr, 4, cudalab::heap::max_capacity_nodes);
  check(g, sources, nullptr, res, cudalab::test::context(kExercise, g.num_vertices(), r.seed) + "NY: ");
}

// The road network of Luxembourg (luxembourg_osm.mtx in CUDALAB_DATA_DIR,
// road lengths 1..100 by the seeded hash of each vertex pair, as
// cudalab/graph/road_data.hpp documents), from the fixed sources 0, n / 2
// and n - 1, all distances: long searches over vertices of degree 2 to 6.
// The CPU reference agrees with Boost.Graph on these sources (host/graph).
TEST_F(HeapDijkstraWarpHeap, LuxembourgOsmHashedWeights1To100) {
  const std::optional<Csr> g = cudalab::graph::load_luxembourg_osm();
  if (!g)
    GTEST_SKIP() << cudalab::graph::kLuxembourgFile
                 << " is not in CUDALAB_DATA_DIR (SuiteSparse Matrix Collection, DIMACS10/luxembourg_osm)";
  const auto n = static_cast<vertex_t>(g->num_vertices());
  const std::vector<vertex_t> sources = {0, n / 2, n - 1};
  CUDALAB_SKIP_IF_ABOVE_MAX_N(lane_work(*g, sources.size()));
  const Result res = run(*g, sources, nullptr, sources.size(), cudalab::heap::max_capacity_nodes);
  check(*g, sources, nullptr, res,
        cudalab::test::context(kExercise, g->num_vertices(), 0) + cudalab::graph::kLuxembourgName + ": ");
}

TEST_F(HeapDijkstraWarpHeap, NoSources) {
  const Csr g = cudalab::graph::grid_2d(4, 4, 1);
  const cudalab::graph::DeviceCsr dg(g);
  cudalab::heap::HeapStorage storage(1, 1);
  EXPECT_NO_THROW(cudalab::heap::dijkstra_warp_heap(dg.view(), nullptr, 0, nullptr, 0, nullptr, nullptr,
                                                    storage.view(), nullptr));
}

// ----------------------------------------------------------------------------- LargeIndex
// Row offsets are 32-bit, and a graph may have 2^32 - 1 edges: here the
// source's K out-edges are its last ones, and end at the largest offset
// (cudalab/test/edge_limit_graph.cuh: the graph, which edges have memory,
// and why a correct kernel reads only those). The warp's batches,
// base = row_offsets[u], base + 32, ..., with base + lane as the edge index,
// pass 2^32 - 1 in the last batch: in 32 bits, base + lane wraps for the
// lanes past the end to the first edges, which have no memory (a fault),
// and base += 32 wraps below the end, so the loop would start again. A bound
// written base < end + 1 wraps to base < 0 and relaxes nothing.
class HeapDijkstraWarpHeapLargeIndex : public cudalab::test::GpuTestWithParam<std::size_t> {};

TEST_P(HeapDijkstraWarpHeapLargeIndex, SourceEdgesEndAtMaxEdges) {
  using cudalab::test::EdgeLimitGraph;
  if (const std::string why = cudalab::test::edge_limit_graph_unavailable(); !why.empty()) GTEST_SKIP() << why;
  const EdgeLimitGraph g(GetParam());
  const std::size_t n = g.view().num_vertices;
  const std::string ctx = cudalab::test::context(kExercise, n, 0) + g.describe();
  const auto d_sources = to_device(std::vector<vertex_t>{EdgeLimitGraph::kSource});
  auto d_dist = poisoned<dist64_t>(n);
  auto d_flags = poisoned<unsigned>(1);
  cudalab::heap::HeapStorage storage(1, 4);  // 128 entries: the search pushes at most 3
  try {
    cudalab::heap::dijkstra_warp_heap(g.view(), d_sources.data(), 1, nullptr, n, d_dist.data(), d_flags.data(),
                                      storage.view(), nullptr, nullptr);
    CUDALAB_CHECK(cudaDeviceSynchronize());
  } catch (const std::exception& e) {  // a fault in the runner arrives as std::runtime_error
    FAIL() << ctx << g.call_failure(e.what());
  }
  const std::string error = g.distance_error(d_dist.download());
  ASSERT_EQ("", error) << ctx << error;
  EXPECT_EQ(0u, d_flags.download()[0]) << ctx << "flags must be 0 (kOverflow = 1: the heap was full; "
                                       << "kInvalidVertex = 8): the search pushes at most 3 entries";
}

INSTANTIATE_TEST_SUITE_P(Degrees, HeapDijkstraWarpHeapLargeIndex,
                         ::testing::ValuesIn(cudalab::test::kEdgeLimitDegrees),
                         cudalab::test::edge_limit_degree_name);

// Bad input, without a GPU.
TEST(HeapDijkstraWarpHeapArgs, RejectsBadInput) {
  vertex_t src = 0;
  dist64_t dist[4];
  unsigned flags = 0;
  float k = 0;
  int v = 0;
  const cudalab::heap::HeapStorageView storage{&k, &v, 1, 1};
  const cudalab::graph::offset_t offsets[2] = {0, 0};
  cudalab::graph::CsrView negative{1, 0, offsets, nullptr, nullptr, true};
  EXPECT_THROW(cudalab::heap::dijkstra_warp_heap(negative, &src, 1, nullptr, 0, dist, &flags, storage, nullptr),
               std::invalid_argument);
  const cudalab::graph::CsrView g{1, 0, offsets, nullptr, nullptr, false};
  EXPECT_THROW(cudalab::heap::dijkstra_warp_heap(g, nullptr, 1, nullptr, 0, dist, &flags, storage, nullptr),
               std::invalid_argument);
  EXPECT_THROW(cudalab::heap::dijkstra_warp_heap(g, &src, 1, nullptr, 0, nullptr, &flags, storage, nullptr),
               std::invalid_argument);
  EXPECT_THROW(cudalab::heap::dijkstra_warp_heap(g, &src, 1, nullptr, 0, dist, nullptr, storage, nullptr),
               std::invalid_argument);
  EXPECT_THROW(cudalab::heap::dijkstra_warp_heap(g, &src, 1, nullptr, 0, dist, &flags,
                                                 cudalab::heap::HeapStorageView{&k, &v, 0, 1}, nullptr),
               std::invalid_argument);
  EXPECT_THROW(cudalab::heap::dijkstra_warp_heap(g, &src, 1, &src, 1, dist, &flags, storage, nullptr),
               std::invalid_argument);  // a target list needs scratch
}

}  // namespace
