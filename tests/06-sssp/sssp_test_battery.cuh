// The test battery shared by exercises 6.1 to 6.6: every exercise computes
// the same distances (cudalab/sssp.cuh), so each test file describes its
// exercise in a Spec (how to run it on a host graph, whether it takes
// negative weights, whether it writes parents, the largest graph it is fit
// for) and instantiates the battery with CUDALAB_SSSP_BATTERY.
//
// Distances are compared with the CPU Dijkstra (cudalab/graph/
// dijkstra_reference.hpp, itself checked against Boost.Graph in the host
// test host/graph), or with the CPU Bellman-Ford for negative weights;
// parents (6.4) are checked as a shortest-path tree. Outputs are poisoned
// (0xA5 bytes) and followed by a poisoned guard of 256 elements.
//
// The exercises that read only the edges of the vertices they reach (6.1,
// 6.3, 6.4) also get CUDALAB_SSSP_LARGE_INDEX: a source whose out-edges are
// the last edges of a graph of 2^32 - 1 edges (cudalab/test/edge_limit_graph.cuh).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudalab/device_buffer.cuh"
#include "cudalab/error.cuh"
#include "cudalab/generators.hpp"
#include "cudalab/graph/csr.cuh"
#include "cudalab/graph/csr.hpp"
#include "cudalab/graph/dijkstra_reference.hpp"
#include "cudalab/graph/generators.hpp"
#include "cudalab/graph/io.hpp"
#include "cudalab/graph/road_data.hpp"
#include "cudalab/sssp.cuh"
#include "cudalab/test/edge_limit_graph.cuh"
#include "cudalab/test/harness.hpp"
#include "sssp_reference.hpp"

namespace cudalab::test::sssp {

using cudalab::graph::Csr;
using cudalab::graph::dist64_t;
using cudalab::graph::Edge;
using cudalab::graph::kUnreachable;
using cudalab::graph::vertex_t;
using cudalab::graph::weight_t;
using cudalab::sssp::Stats;

constexpr unsigned char kPoison = 0xA5;
constexpr std::size_t kGuard = 256;

/// What one run of an exercise gave, with distances widened to 64 bits
/// (kInfinity and kSignedInfinity both become kUnreachable).
struct Outcome {
  std::vector<dist64_t> dist;
  std::vector<vertex_t> parent;  // empty unless the exercise writes parents
  Stats stats;
  std::string guard_damage;      // empty when nothing was written past n
};

/// The raw arguments of an argument-check call (no GPU: the pointers are
/// never dereferenced because the call must throw first).
struct RawArgs {
  std::size_t n = 4, m = 2;
  const graph::offset_t* row_offsets = reinterpret_cast<const graph::offset_t*>(0x1000);
  const vertex_t* col_indices = reinterpret_cast<const vertex_t*>(0x2000);
  const weight_t* weights = reinterpret_cast<const weight_t*>(0x3000);
  bool negative = false;
  vertex_t source = 0;
  void* dist = reinterpret_cast<void*>(0x4000);
  vertex_t* parent = reinterpret_cast<vertex_t*>(0x5000);
};

/// An exercise, as the battery sees it.
struct Spec {
  const char* exercise;        ///< e.g. "6.4 delta_stepping"
  bool negative_weights;       ///< a Bellman-Ford exercise: negative weights and cycles
  bool parents;                ///< writes a parent array (6.4)
  std::size_t max_vertices;    ///< larger graphs are skipped (6.1 does O(n^2) work)
  const char* likely_cause;    ///< what a student most likely got wrong when distances differ
  std::function<Outcome(const Csr&, vertex_t)> run;  ///< uploads, poisons, runs, downloads
  std::function<void(const RawArgs&)> call_raw;      ///< calls the exercise with raw arguments
};

/// Downloads `count` elements of a guarded output and checks its guard.
template <class T>
std::vector<T> download_guarded(const DeviceBuffer<T>& buf, std::size_t count, std::string& damage) {
  std::vector<T> all = buf.download();
  T poison;
  std::memset(&poison, kPoison, sizeof poison);
  for (std::size_t i = count; i < all.size(); ++i)
    if (!(all[i] == poison) && damage.empty())
      damage = "the element at index " + std::to_string(i) + ", past the n = " + std::to_string(count) +
               " outputs, was overwritten";
  all.resize(count);
  return all;
}

/// A poisoned, guarded device output of n elements.
template <class T>
DeviceBuffer<T> guarded_output(std::size_t n) {
  DeviceBuffer<T> buf(n + kGuard);
  buf.fill_bytes(kPoison);
  return buf;
}

/// Widens unsigned 32-bit distances (kInfinity: unreachable).
inline std::vector<dist64_t> widen(const std::vector<cudalab::sssp::dist_t>& d) {
  std::vector<dist64_t> out(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) out[i] = d[i] == cudalab::sssp::kInfinity ? kUnreachable : d[i];
  return out;
}

/// Runs `call(dist)` into a guarded signed output of n distances.
template <class Call>
Outcome run_signed(std::size_t n, Call&& call) {
  DeviceBuffer<cudalab::sssp::signed_dist_t> out = guarded_output<cudalab::sssp::signed_dist_t>(n);
  Outcome o;
  o.stats = call(out.data());
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const auto d = download_guarded(out, n, o.guard_damage);
  o.dist.assign(d.begin(), d.end());
  return o;
}

/// The CSR view of raw arguments.
inline graph::CsrView raw_view(const RawArgs& a) {
  return graph::CsrView{a.n, a.m, a.row_offsets, a.col_indices, a.weights, a.negative};
}

/// The ELL view of raw arguments (width m).
inline graph::EllView raw_ell_view(const RawArgs& a) {
  return graph::EllView{a.n, a.m, a.col_indices, a.weights, a.negative};
}

inline std::string show(dist64_t d) { return d == kUnreachable ? std::string("unreachable") : std::to_string(d); }

/// The size a case reports to CUDALAB_SKIP_IF_ABOVE_MAX_N when its run takes
/// many sequential rounds (each one or more launches and a host round trip):
/// vertices x rounds. Sanitizer runs (CUDALAB_MAX_N = 2^22 for memcheck, 2^20
/// for racecheck) pay per launch, so they keep the short cases and skip the
/// long ones (3000 sweeps on a chain, 6.1's n steps of n work); plain runs
/// (no CUDALAB_MAX_N) run everything.
inline std::size_t round_work(std::size_t vertices, std::size_t rounds) { return vertices * rounds; }

/// Runs the exercise on `g` from `source` and compares with the CPU
/// reference (Dijkstra; Bellman-Ford when a weight is negative); checks the
/// parent tree when the exercise writes one. An exercise with a vertex limit
/// (6.1: one vertex settled per step, each step two launches over all n
/// vertices) reports n x n to CUDALAB_SKIP_IF_ABOVE_MAX_N.
inline void check_graph(const Spec& spec, const Csr& g, vertex_t source, std::uint64_t s, const std::string& what) {
  if (spec.max_vertices != std::numeric_limits<std::size_t>::max())
    CUDALAB_SKIP_IF_ABOVE_MAX_N(round_work(g.num_vertices(), g.num_vertices()));
  const std::string ctx = context(spec.exercise, g.num_vertices(), s) + what + " (n = " +
                          std::to_string(g.num_vertices()) + ", m = " + std::to_string(g.num_edges()) +
                          ", source " + std::to_string(source) + "): ";
  std::vector<dist64_t> expected;
  if (g.has_negative_weights()) {
    const auto bf = reference::bellman_ford_reference(g, source);
    ASSERT_FALSE(bf.negative_cycle) << ctx << "test bug: the graph has a negative cycle";
    expected = bf.dist;
  } else {
    expected = graph::dijkstra_reference(g, source).dist;
  }
  const Outcome got = spec.run(g, source);
  ASSERT_EQ(got.guard_damage, "") << ctx << got.guard_damage << ": write only dist[0 .. n)";
  ASSERT_FALSE(got.stats.negative_cycle) << ctx << "a negative cycle was reported but there is none"
                                         << (g.has_negative_weights() ? "" : " (no weight is even negative)");
  ASSERT_EQ(got.dist.size(), expected.size());
  for (std::size_t v = 0; v < expected.size(); ++v) {
    if (got.dist[v] == expected[v]) continue;
    const bool poison = static_cast<std::uint64_t>(got.dist[v]) == 0xA5A5A5A5A5A5A5A5ull ||
                        got.dist[v] == static_cast<dist64_t>(0xA5A5A5A5u);
    FAIL() << ctx << "first wrong distance at vertex " << v << ": expected " << show(expected[v]) << ", got "
           << show(got.dist[v])
           << (poison ? " (the poison 0xA5...: dist[v] was never written; initialise every vertex)"
               : v == static_cast<std::size_t>(source) ? " (the source's distance is 0)"
               : expected[v] == kUnreachable ? " (this vertex is unreachable: its distance must stay infinite)"
               : got.dist[v] == kUnreachable ? " (a reachable vertex was never reached)"
               : got.dist[v] < expected[v] ? " (shorter than the shortest path: a relaxation used a wrong weight or tail)"
                                           : "")
           << "; " << spec.likely_cause;
  }
  if (spec.parents) {
    const std::string err = graph::shortest_path_tree_error(g, source, got.dist, got.parent, kUnreachable);
    ASSERT_EQ(err, "") << ctx << "the parents are not a shortest-path tree: " << err
                       << " (set distance and parent together, on strict improvement only)";
  }
}

/// The first vertex of the largest connected piece of a graph whose arcs
/// come in pairs (u -> v and v -> u, as grid_2d makes them), so that a
/// search from it reaches the most vertices. Work O(n + m).
inline vertex_t source_in_largest_piece(const Csr& g) {
  const std::size_t n = g.num_vertices();
  std::vector<char> seen(n, 0);
  std::vector<vertex_t> stack;
  vertex_t best = 0;
  std::size_t best_size = 0;
  for (std::size_t start = 0; start < n; ++start) {
    if (seen[start]) continue;
    std::size_t size = 0;
    seen[start] = 1;
    stack.assign(1, static_cast<vertex_t>(start));
    while (!stack.empty()) {
      const auto u = static_cast<std::size_t>(stack.back());
      stack.pop_back();
      ++size;
      for (graph::offset_t e = g.row_offsets[u]; e < g.row_offsets[u + 1]; ++e) {
        const auto v = static_cast<std::size_t>(g.col_indices[e]);
        if (!seen[v]) {
          seen[v] = 1;
          stack.push_back(static_cast<vertex_t>(v));
        }
      }
    }
    if (size > best_size) {
      best_size = size;
      best = static_cast<vertex_t>(start);
    }
  }
  return best;
}

/// The sizes of the battery: the edge sizes of docs/guides/contributing.md ("Tests") as vertex
/// counts.
inline const std::vector<std::size_t> kSizes = {1, 31, 32, 33, 1023, 1024, 1025, 4099, (1u << 20) + 7, 1u << 22};

inline std::string size_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return "n" + std::to_string(info.param);
}

/// Skips (with the reason) graphs above the exercise's limit.
#define CUDALAB_SSSP_SKIP_IF_TOO_LARGE(spec, n)                                                                \
  do {                                                                                                         \
    CUDALAB_SKIP_IF_ABOVE_MAX_N(n);                                                                            \
    if ((n) > (spec).max_vertices)                                                                             \
      GTEST_SKIP() << (spec).exercise << " does O(n^2) work: graphs above " << (spec).max_vertices             \
                   << " vertices are left to the faster exercises";                                            \
  } while (0)

/// The cases on special graphs, shared by every exercise.
inline void run_case(const Spec& spec, const std::string& which, std::uint64_t s) {
  using namespace cudalab::graph;
  if (which == "grid") {
    check_graph(spec, grid_2d(100, 100, s, 1, 100), 5050, s, "grid 100 x 100, weights 1..100, source in the middle");
  } else if (which == "thinned_grid") {
    // Source in the largest piece: from vertex 0 most seeds reach only a
    // handful of vertices (a corner is often cut off at 55%).
    const Csr g = grid_2d(150, 120, s, 1, 1000, 0.55);
    check_graph(spec, g, source_in_largest_piece(g), s,
                "grid 150 x 120 with 55% of its edges: many unreachable parts, source in the largest piece");
  } else if (which == "geometric") {
    check_graph(spec, random_geometric(20000, 6.0, s, 1, 1000), 123, s, "random geometric graph, degree 6");
  } else if (which == "rmat") {
    check_graph(spec, rmat(14, 16, s, 0, 100), 0, s, "R-MAT scale 14, 16 edges per vertex, weights 0..100");
  } else if (which == "zero_weights") {
    check_graph(spec, grid_2d(64, 64, s, 0, 0), 100, s, "grid 64 x 64 of zero-weight edges (all distances 0)");
    check_graph(spec, reference::random_multigraph(3000, 12000, s, 0, 1), 7, s,
                "random multigraph, weights 0 and 1: zero-weight cycles");
  } else if (which == "loops_and_parallel_edges") {
    check_graph(spec,
                csr_from_edges(5, {{0, 0, 0}, {0, 0, 3}, {0, 1, 9}, {0, 1, 4}, {0, 1, 6}, {1, 1, 1}, {1, 2, 2},
                                   {1, 2, 2}, {2, 0, 0}, {2, 3, 7}, {3, 3, 0}, {4, 0, 1}}),
                0, s, "self loops, parallel edges, an unreachable vertex 4");
    check_graph(spec, reference::random_multigraph(50, 5000, s, 0, 1000), 3, s,
                "50 vertices and 5000 random edges: many parallel edges and self loops");
  } else if (which == "single_vertex") {
    check_graph(spec, csr_from_edges(1, {}), 0, s, "a single vertex, no edge");
    check_graph(spec, csr_from_edges(1, {{0, 0, 5}, {0, 0, 0}}), 0, s, "a single vertex with self loops");
  } else if (which == "no_edges") {
    check_graph(spec, csr_from_edges(1000, {}), 17, s, "1000 vertices and no edges");
  } else if (which == "chain") {
    CUDALAB_SKIP_IF_ABOVE_MAX_N(round_work(3000, 3000));  // up to 3000 sweeps, products, steps or buckets
    std::vector<Edge> edges;
    const auto w = gen::uniform_int<weight_t>(3000, s, 0, 1000);
    for (vertex_t v = 0; v + 1 < 3000; ++v) edges.push_back(Edge{v, v + 1, w[static_cast<std::size_t>(v)]});
    check_graph(spec, csr_from_edges(3000, edges), 0, s, "a path of 3000 vertices (3000 rounds of Bellman-Ford)");
    check_graph(spec, csr_from_edges(3000, edges), 1500, s, "the same path from its middle: half unreachable");
  } else if (which == "large_weights") {
    check_graph(spec, reference::random_multigraph(500, 2000, s, 1 << 20, 1 << 21), 0, s,
                "weights 2^20..2^21 (distances above 2^24)");
    check_graph(spec, csr_from_edges(3, {{0, 1, std::numeric_limits<weight_t>::max()}, {1, 2, 1}}), 0, s,
                "an edge of weight 2^31 - 1: sums need more than 32 signed bits");
    // Vertex 2 is at 2^32 - 2, the largest finite distance of 6.1 and 6.4
    // (kInfinity - 1); its edge to 3 sums to 2^32 + 8, past every 32-bit
    // distance. Such a sum must lose: 3 is at 100. In 32 bits it wraps to 8
    // and wins. (The other graphs' sums stay below 2^31 + 2^21.)
    check_graph(spec,
                csr_from_edges(4, {{0, 1, std::numeric_limits<weight_t>::max()},
                                   {1, 2, std::numeric_limits<weight_t>::max()},
                                   {2, 3, 10},
                                   {0, 3, 100}}),
                0, s,
                "0 -> 1 -> 2 by two edges of weight 2^31 - 1 (2 at 2^32 - 2), 2 -> 3 (10), 0 -> 3 (100): the sum "
                "2^32 + 8 at 2 exceeds every 32-bit distance; add in 64 bits (du + w as unsigned long long, or "
                "int64), never in dist_t, where it wraps to 8");
  } else {
    FAIL() << "test bug: unknown case " << which;
  }
}

/// The real NY road graph, when CUDALAB_DATA_DIR has it.
inline void run_road(const Spec& spec, std::uint64_t s) {
  const auto path = graph::find_data_file("USA-road-d.NY.gr");
  if (!path) GTEST_SKIP() << "USA-road-d.NY.gr is not in CUDALAB_DATA_DIR (fetch it with tools/fetch-data NY)";
  const Csr g = graph::load_dimacs_gr(*path);
  CUDALAB_SSSP_SKIP_IF_TOO_LARGE(spec, g.num_vertices());
  check_graph(spec, g, 0, s, "DIMACS road graph of New York (USA-road-d.NY.gr)");
  check_graph(spec, g, static_cast<vertex_t>(s % g.num_vertices()), s, "the same, from a seeded source");
}

/// The Luxembourg road network (cudalab/graph/road_data.hpp: luxembourg_osm.mtx
/// from CUDALAB_DATA_DIR, road lengths 1..100 by the seeded hash of each
/// vertex pair), from the fixed sources 0, n / 2 and n - 1: 114,599
/// vertices of degree 2 to 6 and about a thousand edges between far
/// vertices, so a thousand or more Bellman-Ford rounds and delta-stepping
/// buckets. The reference is the CPU Dijkstra, which the host test
/// host/graph checks against Boost.Graph's on these sources. 6.1 (one vertex
/// settled per step, n steps) runs from the first source only; sanitizer
/// runs skip the graph (vertices x rounds above their CUDALAB_MAX_N).
inline void run_luxembourg(const Spec& spec, std::uint64_t s) {
  const std::optional<Csr> g = graph::load_luxembourg_osm();
  if (!g)
    GTEST_SKIP() << graph::kLuxembourgFile
                 << " is not in CUDALAB_DATA_DIR (SuiteSparse Matrix Collection, DIMACS10/luxembourg_osm)";
  const std::size_t n = g->num_vertices();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(round_work(n, 1000));  // about a thousand rounds, buckets or more
  const bool one_source = spec.max_vertices != std::numeric_limits<std::size_t>::max();
  const std::vector<vertex_t> sources = {0, static_cast<vertex_t>(n / 2), static_cast<vertex_t>(n - 1)};
  for (std::size_t i = 0; i < (one_source ? 1 : sources.size()) && !::testing::Test::HasFatalFailure(); ++i)
    check_graph(spec, *g, sources[i], s,
                std::string("the road network of Luxembourg (") + graph::kLuxembourgFile +
                    ", lengths 1..100 hashed per road, both directions alike)");
}

/// A DAG with negative weights (edges from lower to higher ids), so no cycle.
inline Csr negative_dag(std::size_t n, std::size_t m, std::uint64_t s) {
  const Csr r = reference::random_multigraph(n, m, s, -1000, 1000);
  std::vector<Edge> edges;
  for (const Edge& e : graph::edges_of(r))
    if (e.src != e.dst) edges.push_back(Edge{std::min(e.src, e.dst), std::max(e.src, e.dst), e.weight});
  return graph::csr_from_edges(n, edges);
}

/// The largest number of edges that a shortest path from `source` needs:
/// over the reachable vertices, the fewest edges of any shortest path to
/// it (breadth-first over the tight edges, dist[u] + w == dist[v], of the
/// CPU reference's distances). Bellman-Ford settles a vertex whose shortest
/// path has h edges by sweep h, so with no negative cycle it stops after at
/// most this + 1 sweeps. Work O(n + m) after the reference.
inline std::uint64_t max_shortest_path_edges(const Csr& g, vertex_t source) {
  const std::vector<dist64_t> dist = g.has_negative_weights()
                                         ? reference::bellman_ford_reference(g, source).dist
                                         : graph::dijkstra_reference(g, source).dist;
  std::vector<std::uint64_t> hops(g.num_vertices(), std::numeric_limits<std::uint64_t>::max());
  std::vector<vertex_t> queue{source};
  hops[source] = 0;
  std::uint64_t most = 0;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const vertex_t u = queue[head];
    most = std::max(most, hops[u]);
    for (auto e = g.row_offsets[u]; e < g.row_offsets[u + 1]; ++e) {
      const vertex_t v = g.col_indices[e];
      if (hops[v] == std::numeric_limits<std::uint64_t>::max() && dist[u] != kUnreachable &&
          dist[u] + g.weights[e] == dist[v]) {
        hops[v] = hops[u] + 1;
        queue.push_back(v);
      }
    }
  }
  return most;
}

/// The hubs graph: the source 0 reaches `middle` vertices 1..middle by one
/// edge each, and middle vertex i has one edge into hub middle + 1 + i %
/// hubs, so each hub has middle / hubs in-edges. Weights are random in
/// [1, 10^6] from seed s. Every shortest path has at most 2 edges.
inline Csr hubs_graph(vertex_t middle, vertex_t hubs, std::uint64_t s) {
  std::mt19937_64 rng(s);
  std::uniform_int_distribution<weight_t> w(1, 1000000);
  std::vector<Edge> edges;
  edges.reserve(2 * static_cast<std::size_t>(middle));
  for (vertex_t i = 1; i <= middle; ++i) edges.push_back(Edge{0, i, w(rng)});
  for (vertex_t i = 1; i <= middle; ++i) edges.push_back(Edge{i, middle + 1 + i % hubs, w(rng)});
  return graph::csr_from_edges(static_cast<std::size_t>(middle) + 1 + hubs, edges);
}

/// check_rounds_bounded's advice for the (min, +) products of 6.5 and 6.6.
inline constexpr const char* kRowMinimumFix =
    "y[v] is the minimum over the whole row: compare each sum with the best so far "
    "(best = min(best, x[u] + w)), not with x[v], so that a later, larger sum cannot replace a smaller one";

/// Runs a sweeping exercise (6.2, 6.5, 6.6: Stats::iterations counts its
/// sweeps or products, the last one changing nothing) on the hubs graph,
/// checks its distances, then that it needed no more rounds than the
/// longest shortest path's edges + 1. A round that keeps a wrong candidate
/// for a hub (a lost race, a later in-edge instead of the smallest) is
/// corrected by the next one, so the distances come out right and only the
/// count of rounds shows the mistake; `fix` says what to do about it.
inline void check_rounds_bounded(const Spec& spec, vertex_t middle, vertex_t hubs, const std::string& fix) {
  const auto s = seed();
  const Csr g = hubs_graph(middle, hubs, s);
  const std::string what = "hubs: " + std::to_string(middle) + " middle vertices, " + std::to_string(hubs) +
                           " hubs of " + std::to_string(middle / hubs) + " in-edges each";
  check_graph(spec, g, 0, s, what);
  if (::testing::Test::HasFatalFailure()) return;  // wrong distances: the count would say nothing more
  const std::uint64_t bound = max_shortest_path_edges(g, 0) + 1;
  const Outcome got = spec.run(g, 0);
  EXPECT_LE(got.stats.iterations, bound)
      << context(spec.exercise, g.num_vertices(), s) << what << ": every shortest path has at most " << bound - 1
      << " edges, so round " << bound - 1 << " settles every vertex and round " << bound
      << " changes nothing; Stats::iterations reported " << got.stats.iterations
      << " rounds. The distances are right, but some rounds left a hub with a larger distance than its "
         "in-edges offered, for the next round to lower. "
      << fix;
}

/// Checks that a run reports a negative cycle, and does not hang.
inline void expect_negative_cycle(const Spec& spec, const Csr& g, vertex_t source, std::uint64_t s,
                                  const std::string& what) {
  const Outcome got = spec.run(g, source);
  EXPECT_TRUE(got.stats.negative_cycle)
      << context(spec.exercise, g.num_vertices(), s) << what << ": the source reaches a negative cycle, which must "
      << "be reported in Stats::negative_cycle (a change in round n, or a sum clamped at kNegativeFloor)";
  EXPECT_EQ(got.guard_damage, "") << context(spec.exercise, g.num_vertices(), s) << got.guard_damage;
}

/// Expects `call` to throw std::invalid_argument (and nothing else).
template <class F>
void expect_invalid(const Spec& spec, F&& call, const std::string& what) {
  try {
    call();
    ADD_FAILURE() << "[" << spec.exercise << "] " << what << ": no std::invalid_argument was thrown";
  } catch (const std::invalid_argument&) {
  } catch (const std::exception& e) {
    ADD_FAILURE() << "[" << spec.exercise << "] " << what << ": threw " << e.what()
                  << " instead of std::invalid_argument (check arguments before any CUDA call)";
  }
}

/// Runs an exercise on a graph in device memory given by its view (the
/// LargeIndex graph has no host copy): uploads nothing, poisons, runs, downloads.
using ViewRun = std::function<Outcome(const graph::CsrView&, vertex_t)>;

/// The LargeIndex case with a source of `k` out-edges (see
/// cudalab/test/edge_limit_graph.cuh for the graph and why a correct
/// exercise reads only the edges that have memory): distances {unreachable,
/// 0, 3}, and parents {kNoParent, kNoParent, 1} where the exercise writes
/// them. Skips under a sanitizer's size cap and without virtual memory
/// management.
inline void run_edge_limit(const Spec& spec, const ViewRun& run, std::size_t k) {
  if (const std::string why = edge_limit_graph_unavailable(); !why.empty()) GTEST_SKIP() << why;
  const EdgeLimitGraph g(k);
  const std::string ctx = context(spec.exercise, g.view().num_vertices, 0) + g.describe();
  Outcome got;
  try {
    got = run(g.view(), EdgeLimitGraph::kSource);
  } catch (const std::exception& e) {  // a fault in the runner arrives as std::runtime_error
    FAIL() << ctx << g.call_failure(e.what());
  }
  ASSERT_EQ(got.guard_damage, "") << ctx << got.guard_damage << ": write only dist[0 .. n)";
  const std::string error = g.distance_error(got.dist);
  ASSERT_EQ(error, "") << ctx << error;
  EXPECT_FALSE(got.stats.negative_cycle) << ctx << "a negative cycle was reported, but no weight is negative";
  if (spec.parents) {
    const std::vector<vertex_t> want = {cudalab::sssp::kNoParent, cudalab::sssp::kNoParent, EdgeLimitGraph::kSource};
    EXPECT_EQ(want, got.parent) << ctx << "parents: expected {kNoParent, kNoParent, 1} (vertex 2's shortest path is "
                                << "the source's last edge; the source and the unreachable vertex 0 have none)";
  }
}

}  // namespace cudalab::test::sssp

/// Instantiates the LargeIndex suite SUITE##LargeIndex for an exercise that
/// reads only the edges of the vertices it reaches: run_edge_limit for each
/// source degree of kEdgeLimitDegrees. `spec` is the function returning the
/// exercise's Spec, `run_view` a ViewRun.
#define CUDALAB_SSSP_LARGE_INDEX(SUITE, spec, run_view)                                                         \
  class SUITE##LargeIndex : public ::cudalab::test::GpuTestWithParam<std::size_t> {};                           \
  TEST_P(SUITE##LargeIndex, SourceEdgesEndAtMaxEdges) {                                                         \
    ::cudalab::test::sssp::run_edge_limit(spec(), run_view, GetParam());                                        \
  }                                                                                                             \
  INSTANTIATE_TEST_SUITE_P(Degrees, SUITE##LargeIndex, ::testing::ValuesIn(::cudalab::test::kEdgeLimitDegrees), \
                           ::cudalab::test::edge_limit_degree_name);

/// Instantiates the battery for one exercise: suites SUITE (the edge sizes on
/// random multigraphs), SUITE##Graphs (special graphs, the road graphs of New
/// York and Luxembourg, a repeated large run), SUITE##Negative (Bellman-Ford exercises: negative
/// weights and cycles) and SUITE##Args (bad input, no GPU needed). `spec` is
/// a function returning the exercise's Spec.
#define CUDALAB_SSSP_BATTERY(SUITE, spec)                                                                       \
  class SUITE : public ::cudalab::test::GpuTestWithParam<std::size_t> {};                                       \
  TEST_P(SUITE, RandomMultigraph) {                                                                             \
    const std::size_t n = GetParam();                                                                           \
    CUDALAB_SSSP_SKIP_IF_TOO_LARGE(spec(), n);                                                                  \
    const auto s = ::cudalab::test::seed();                                                                     \
    const auto g = ::cudalab::reference::random_multigraph(n, 4 * n, s, 0, 1000);                               \
    ::cudalab::test::sssp::check_graph(spec(), g, static_cast<::cudalab::graph::vertex_t>(s % n), s,           \
                                       "random multigraph, 4n edges, weights 0..1000");                         \
  }                                                                                                             \
  INSTANTIATE_TEST_SUITE_P(Sizes, SUITE, ::testing::ValuesIn(::cudalab::test::sssp::kSizes),                   \
                           ::cudalab::test::sssp::size_name);                                                   \
  class SUITE##Graphs : public ::cudalab::test::GpuTest {};                                                     \
  TEST_F(SUITE##Graphs, Grid) { ::cudalab::test::sssp::run_case(spec(), "grid", ::cudalab::test::seed()); }     \
  TEST_F(SUITE##Graphs, ThinnedGridWithUnreachableParts) {                                                      \
    ::cudalab::test::sssp::run_case(spec(), "thinned_grid", ::cudalab::test::seed());                           \
  }                                                                                                             \
  TEST_F(SUITE##Graphs, RandomGeometric) {                                                                      \
    ::cudalab::test::sssp::run_case(spec(), "geometric", ::cudalab::test::seed());                              \
  }                                                                                                             \
  TEST_F(SUITE##Graphs, Rmat) { ::cudalab::test::sssp::run_case(spec(), "rmat", ::cudalab::test::seed()); }     \
  TEST_F(SUITE##Graphs, ZeroWeights) {                                                                          \
    ::cudalab::test::sssp::run_case(spec(), "zero_weights", ::cudalab::test::seed());                           \
  }                                                                                                             \
  TEST_F(SUITE##Graphs, SelfLoopsAndParallelEdges) {                                                            \
    ::cudalab::test::sssp::run_case(spec(), "loops_and_parallel_edges", ::cudalab::test::seed());               \
  }                                                                                                             \
  TEST_F(SUITE##Graphs, SingleVertex) {                                                                         \
    ::cudalab::test::sssp::run_case(spec(), "single_vertex", ::cudalab::test::seed());                          \
  }                                                                                                             \
  TEST_F(SUITE##Graphs, NoEdges) { ::cudalab::test::sssp::run_case(spec(), "no_edges", ::cudalab::test::seed()); } \
  TEST_F(SUITE##Graphs, Chain) { ::cudalab::test::sssp::run_case(spec(), "chain", ::cudalab::test::seed()); }   \
  TEST_F(SUITE##Graphs, LargeWeights) {                                                                         \
    ::cudalab::test::sssp::run_case(spec(), "large_weights", ::cudalab::test::seed());                          \
  }                                                                                                             \
  TEST_F(SUITE##Graphs, RoadGraphNewYork) { ::cudalab::test::sssp::run_road(spec(), ::cudalab::test::seed()); } \
  TEST_F(SUITE##Graphs, RoadGraphLuxembourgOsmHashedWeights1To100) {                                            \
    ::cudalab::test::sssp::run_luxembourg(spec(), ::cudalab::test::seed());                                     \
  }                                                                                                             \
  TEST_F(SUITE##Graphs, RepeatedLarge) {                                                                        \
    const std::size_t n = std::size_t{1} << 18;                                                                 \
    CUDALAB_SSSP_SKIP_IF_TOO_LARGE(spec(), n);                                                                  \
    const auto s = ::cudalab::test::seed();                                                                     \
    const auto g = ::cudalab::graph::grid_2d(512, 512, s, 0, 50);                                               \
    for (int r = 0; r < 3 && !HasFatalFailure(); ++r)                                                           \
      ::cudalab::test::sssp::check_graph(spec(), g, 0, s, "grid 512 x 512, weights 0..50, run " + std::to_string(r + 1) + " of 3 (races show as rare failures)"); \
  }                                                                                                             \
  class SUITE##Negative : public ::cudalab::test::GpuTest {};                                                   \
  TEST_F(SUITE##Negative, NegativeWeightsWithoutCycle) {                                                        \
    if (!spec().negative_weights) GTEST_SKIP() << "this exercise rejects negative weights (see " #SUITE "Args)"; \
    const auto s = ::cudalab::test::seed();                                                                     \
    ::cudalab::test::sssp::check_graph(spec(), ::cudalab::test::sssp::negative_dag(2000, 10000, s), 0, s,     \
                                       "a DAG with weights -1000..1000");                                       \
    ::cudalab::test::sssp::check_graph(spec(), ::cudalab::graph::csr_from_edges(3, {{0, 1, 5}, {1, 2, -7}, {0, 2, 1}}), 0, s, \
                                       "0 -> 1 (5), 1 -> 2 (-7), 0 -> 2 (1)");                                 \
  }                                                                                                             \
  TEST_F(SUITE##Negative, ReachableNegativeCycleIsReported) {                                                   \
    if (!spec().negative_weights) GTEST_SKIP() << "this exercise rejects negative weights (see " #SUITE "Args)"; \
    const auto s = ::cudalab::test::seed();                                                                     \
    ::cudalab::test::sssp::expect_negative_cycle(                                                               \
        spec(), ::cudalab::graph::csr_from_edges(4, {{0, 1, 1}, {1, 2, 2}, {2, 3, -4}, {3, 1, 1}}), 0, s,       \
        "cycle 1 -> 2 -> 3 -> 1 of weight -1");                                                                 \
    ::cudalab::test::sssp::expect_negative_cycle(spec(), ::cudalab::graph::csr_from_edges(2, {{0, 1, 3}, {1, 1, -1}}), 0, s, \
                                                 "a self loop of weight -1");                                  \
    ::cudalab::test::sssp::expect_negative_cycle(spec(), ::cudalab::graph::csr_from_edges(1, {{0, 0, -2}}), 0, s, \
                                                 "a single vertex with a self loop of weight -2");              \
    /* 3000 rounds until the cycle shows: sanitizer runs stop here */                                         \
    CUDALAB_SKIP_IF_ABOVE_MAX_N(::cudalab::test::sssp::round_work(3000, 3000));                                 \
    auto big = ::cudalab::graph::edges_of(::cudalab::reference::random_multigraph(3000, 12000, s, 1, 1000));    \
    big.push_back({2999, 2998, -1000000});                                                                      \
    big.push_back({2998, 2999, -1000000});                                                                      \
    big.push_back({0, 2999, 1});                                                                                \
    ::cudalab::test::sssp::expect_negative_cycle(spec(), ::cudalab::graph::csr_from_edges(3000, big), 0, s,     \
                                                 "3000 random vertices and a two-edge cycle of weight -2000000"); \
  }                                                                                                             \
  TEST_F(SUITE##Negative, UnreachableNegativeCycleIsIgnored) {                                                  \
    if (!spec().negative_weights) GTEST_SKIP() << "this exercise rejects negative weights (see " #SUITE "Args)"; \
    const auto s = ::cudalab::test::seed();                                                                     \
    ::cudalab::test::sssp::check_graph(                                                                         \
        spec(), ::cudalab::graph::csr_from_edges(5, {{0, 1, 4}, {1, 2, -1}, {3, 4, -5}, {4, 3, 1}, {3, 0, 2}}), 0, s, \
        "a negative cycle 3 <-> 4 that the source does not reach");                                            \
  }                                                                                                             \
  TEST(SUITE##Args, BadInputThrowsBeforeAnyCudaCall) {                                                          \
    using ::cudalab::test::sssp::RawArgs;                                                                       \
    const auto& sp = spec();                                                                                    \
    std::vector<long long> host(4, 42);                                                                         \
    RawArgs ok;                                                                                                 \
    ok.dist = host.data();                                                                                      \
    auto with = [&](auto change) { RawArgs a = ok; change(a); return a; };                                      \
    ::cudalab::test::sssp::expect_invalid(sp, [&] { sp.call_raw(with([](RawArgs& a) { a.n = 0; a.m = 0; })); }, "an empty graph"); \
    ::cudalab::test::sssp::expect_invalid(sp, [&] { sp.call_raw(with([](RawArgs& a) { a.source = -1; })); }, "source -1"); \
    ::cudalab::test::sssp::expect_invalid(sp, [&] { sp.call_raw(with([](RawArgs& a) { a.source = 4; })); }, "source n"); \
    ::cudalab::test::sssp::expect_invalid(sp, [&] { sp.call_raw(with([](RawArgs& a) { a.dist = nullptr; })); }, "a null dist"); \
    ::cudalab::test::sssp::expect_invalid(sp, [&] { sp.call_raw(with([](RawArgs& a) { a.col_indices = nullptr; })); }, "null column indices"); \
    ::cudalab::test::sssp::expect_invalid(sp, [&] { sp.call_raw(with([](RawArgs& a) { a.weights = nullptr; })); }, "null weights"); \
    ::cudalab::test::sssp::expect_invalid(sp, [&] { sp.call_raw(with([](RawArgs& a) { a.m = ::cudalab::graph::kMaxEdges + 1; })); }, \
                                          "2^32 edges (an ELL width of 2^32: over kMaxEllWidth)");              \
    if (!sp.negative_weights)                                                                                   \
      ::cudalab::test::sssp::expect_invalid(sp, [&] { sp.call_raw(with([](RawArgs& a) { a.negative = true; })); }, \
                                            "a negative weight");                                               \
    if (sp.parents)                                                                                             \
      ::cudalab::test::sssp::expect_invalid(sp, [&] { sp.call_raw(with([](RawArgs& a) { a.parent = nullptr; })); }, "a null parent"); \
    EXPECT_EQ(host, std::vector<long long>(4, 42)) << "[" << sp.exercise << "] the caller's dist changed";      \
  }
